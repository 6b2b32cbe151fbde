import Foundation
import TSDevice
import TSModel

/// `tsapply-bench device [ITERATIONS]`: cost of simulated-watch calls in memory and on file
/// (lock + read + atomic write with fsync), and the estimated link traffic of one typical
/// configuration write per profile.
enum DeviceBenchmark {
  static func run(_ arguments: [String]) async throws -> Int32 {
    let iterations = arguments.first.flatMap(Int.init) ?? 200
    let memory = SimulatedDevice(profile: .npk)
    let memoryTimes = try await BenchmarkClock.measureAsync(iterations: iterations) {
      try await memory.setReminder(sampleCustom(id: "32"))
    }
    print("npk setReminder, in memory: \(BenchmarkClock.summary(memoryTimes))")
    let directory = NSTemporaryDirectory() + "tsapply-bench-\(UUID().uuidString)"
    let file = try SimulatedDevice.create(path: directory + "/device.json", profile: .npk, force: false)
    var count = 0
    let fileTimes = try await BenchmarkClock.measureAsync(iterations: iterations) {
      count += 1
      var reminder = sampleCustom(id: "32")
      reminder.reminderName = "Walk \(count)"
      try await file.setReminder(reminder)
    }
    print("npk setReminder, file-backed: \(BenchmarkClock.summary(fileTimes))")
    let readTimes = try await BenchmarkClock.measureAsync(iterations: iterations) { _ = try await file.fetchAllReminders() }
    print("npk fetchAllReminders, file-backed: \(BenchmarkClock.summary(readTimes))")
    try? FileManager.default.removeItem(atPath: directory)
    for profile in PlatformProfile.all { print(try await traffic(profile)) }
    print("peak RSS: \(BenchmarkClock.peakResidentKiB()) KiB")
    return 0
  }

  static func sampleCustom(id: String) -> Reminder {
    Reminder(reminderId: id, reminderName: "Evening walk", isEnabled: true, reminderType: .custom, repeatDays: .weekend,
             timeType: .point, timePoints: [1170], notes: "Take the dog")
  }

  /// Reads the watch, enables every built-in (one replace-all where the platform has it), adds up
  /// to 2 custom reminders (template + set each), writes 10 contacts
  /// and 1 emergency contact, in the platform's calls.
  static func traffic(_ profile: PlatformProfile) async throws -> String {
    let device = SimulatedDevice(profile: profile)
    let caps = profile.capabilities
    var state = try await device.readState(capabilities: caps)
    for index in state.reminders.indices { state.reminders[index].isEnabled = true }
    if caps.reminders.operations.contains(.replaceAll) {
      try await device.replaceAllReminders(state.reminders)
    } else {
      for reminder in state.reminders { try await device.setReminder(reminder) }
    }
    for _ in 0..<min(2, caps.reminders.maxCustomReminders) {
      var reminder = try await device.createCustomReminderTemplate()
      reminder.reminderName = "Walk"
      try await device.setReminder(reminder)
    }
    let contacts = (0..<min(10, caps.contacts.maxContacts)).map { Contact(name: "Contact \($0)", phoneNum: "+1555010\($0)") }
    if caps.contacts.maxContacts > 0 { try await device.setAllContacts(contacts) }
    try await device.setEmergencyContacts([Contact(name: "Sam Roe", phoneNum: "+15550101")], sosOn: true)
    let stats = await device.statistics()
    return "\(profile.name): \(stats.totalCalls) calls, \(stats.bytesSent) bytes sent / \(stats.bytesReceived) received, "
      + "\(stats.packetsSent + stats.packetsReceived) packets"
  }
}
