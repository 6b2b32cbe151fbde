import Foundation
import Testing
import TSApply
import TSDevice
import TSManifest
import TSModel
import TSPlan
import TSTestSupport

/// A failure at each device call of an apply leaves the watch unchanged or partly changed exactly
/// as reported; the backup restores it; and a rerun converges.
@Suite struct FaultInjectionTests {
  /// A watch with one custom reminder and one contact, and a manifest that changes everything.
  static func scenario(_ profile: PlatformProfile) -> (DeviceState, Manifest) {
    var state = profile.factoryState
    let caps = profile.capabilities
    if caps.reminders.custom != nil {
      state.reminders.append(Reminder(reminderId: "32", reminderName: "Old", isEnabled: true, reminderType: .custom,
                                      repeatDays: .weekend, timeType: .point, timePoints: [600]))
    }
    if caps.contacts.maxContacts > 0 {
      state.contacts = [Contact(name: "Ann", phoneNum: "+15550100", shortName: caps.contacts.storesShortName ? "A" : nil)]
    }
    let sedentary = Build.reminder(.sedentary, line: 3, enabled: true, schedule: Build.period("09:00", "18:00", every: 60))
    let drinking = Build.reminder(.drinking, line: 11, enabled: false)
    let custom: [ManifestReminder]? = caps.reminders.custom == nil ? nil
      : [Build.custom(0, "Walk", line: 31, repeatDays: .workday, schedule: Build.points(["19:30"]))]
    var manifest = Build.manifest(reminders: Build.reminders(sedentary: sedentary, drinking: drinking, custom: custom))
    if caps.contacts.maxContacts > 0 { manifest.contacts = Build.contacts([("Ann", "+15550100"), ("Bob", "+15550111")]) }
    if caps.contacts.supportsEmergencyContacts { manifest.emergency = Build.emergency(sos: true, contacts: [("Sam", "+15550101")]) }
    return (state, manifest)
  }

  @Test(arguments: ["default", "npk", "fit"])
  func everyCallIndex(_ name: String) async throws {
    let profile = try PlatformProfile.named(name)
    let (initial, manifest) = Self.scenario(profile)
    let clean = watch(profile, state: initial)
    try await planAndApply(manifest, on: clean, backups: try backupDirectory())
    let calls = await clean.statistics().totalCalls
    #expect(calls > 4)
    let before = try await watch(profile, state: initial).readState(capabilities: profile.capabilities)
    for call in 1...calls {
      let device = watch(profile, state: initial, faults: [.init(.fail(.timeout), atCall: call)])
      let backups = try backupDirectory()
      var failure: Error?
      do { try await planAndApply(manifest, on: device, backups: backups) } catch { failure = error }
      let after = try device.snapshot().deviceState
      let survivor = watch(profile, state: after)
      let remaining = try #require(try await currentPlan(manifest, on: survivor).plan).resourceChanges.map(\.address)
      switch failure {
      case ApplyError.partial(let partial, _)?:
        #expect(Set(remaining).isSubset(of: Set(partial.failed + partial.notApplied)), "call \(call): \(remaining) vs \(partial)")
        #expect(Set(partial.applied).isDisjoint(with: Set(remaining)), "call \(call)")
        #expect(!partial.failed.isEmpty, "call \(call)")
      case ApplyError.readBackFailed?:
        // The verification read failed after every write: everything was applied.
        #expect(remaining.isEmpty, "call \(call): \(remaining)")
      case let error?:
        // Failed while reading for the plan: nothing was written.
        #expect(error is DeviceError, "call \(call): \(error)")
        #expect(try await survivor.readState(capabilities: profile.capabilities) == before, "call \(call)")
      case nil:
        Issue.record("call \(call) of \(calls) failed but the apply succeeded")
      }
      try await restoreAndRerun(profile, survivor: after, backups: backups, before: before, manifest: manifest, call: call)
    }
  }

  /// Restores the newest backup (if one was written) and checks the watch equals `before`; then
  /// applies the manifest again from the failed state and checks it converges.
  private func restoreAndRerun(_ profile: PlatformProfile, survivor: DeviceState, backups: String, before: DeviceState,
                               manifest: Manifest, call: Int) async throws {
    let files = (try? FileManager.default.contentsOfDirectory(atPath: backups)) ?? []
    if let file = files.sorted().last {
      let backup = try Backup.read(path: backups + "/" + file)
      #expect(backup.state == before, "call \(call): the backup is not the state before the apply")
      let restored = watch(profile, state: survivor)
      let (restore, problems) = StateManifest.manifest(for: backup.state, capabilities: profile.capabilities, file: file)
      #expect(problems.isEmpty)
      try await planAndApply(restore, on: restored, backups: try backupDirectory())
      let state = try await restored.readState(capabilities: profile.capabilities)
      #expect(comparable(state) == comparable(before), "call \(call): restore did not give the previous state back")
    }
    let rerun = watch(profile, state: survivor)
    try await planAndApply(manifest, on: rerun, backups: try backupDirectory())
    #expect(try await currentPlan(manifest, on: rerun).plan?.isEmpty == true, "call \(call): rerun did not converge")
  }

  /// The state with custom reminders keyed by name rather than device-assigned ID, lunch-break
  /// times of a switched-off lunch break zeroed, and lists in a fixed order: what "exactly as it
  /// was" can mean when a deleted reminder is re-created from the platform's template.
  private func comparable(_ state: DeviceState) -> DeviceState {
    var copy = state
    copy.reminders = state.reminders.map { reminder in
      var r = reminder
      if r.reminderType == .custom { r.reminderId = "custom:" + r.reminderName }
      if !r.isLunchBreakDNDEnabled { (r.lunchBreakDNDStartTime, r.lunchBreakDNDEndTime) = (0, 0) }
      return r
    }.sorted { ($0.reminderId) < ($1.reminderId) }
    copy.contacts = state.contacts.sorted { ($0.name, $0.phoneNum) < ($1.name, $1.phoneNum) }
    return copy
  }
}
