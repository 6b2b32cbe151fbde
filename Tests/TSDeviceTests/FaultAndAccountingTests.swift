import Foundation
import Testing
import TSDevice
import TSModel

/// Fault injection (fail or disconnect at call N, no effect), the environment variables that
/// choose it, and the link accounting (docs/device.md "Accounting").
@Suite struct FaultAndAccountingTests {
  @Test(arguments: [1, 2, 3])
  func aFailedCallHasNoEffectAndLaterCallsWork(failing: Int) async throws {
    let options = SimulationOptions(faults: [.init(.fail(.timeout), atCall: failing)])
    let device = try watch("default", options: options)
    var failures: [DeviceError] = []
    for n in 1...3 {
      do {
        try await device.setAllContacts([Contact(name: "C\(n)", phoneNum: "\(n)")])
      } catch {
        failures.append(error)
      }
    }
    #expect(failures == [DeviceError(.contact, .timeout, "setAllContacts failed (simulated fault at call \(failing))")])
    let expected = failing == 3 ? "C2" : "C3"
    #expect(try await device.getAllContacts().map(\.name) == [expected])
  }

  @Test func aDisconnectFailsThatCallWith9310AndLaterOnesWith2003() async throws {
    let device = try watch("npk", options: SimulationOptions(faults: [.init(.disconnect, atCall: 2)]))
    let before = try await device.fetchAllReminders()
    await #expect(throws: DeviceError(.bleConnect, .requestCancelledByDisconnect, "Connection lost, request cancelled (simulated disconnect at call 2)")) {
      try await device.setReminder(customReminder("32"))
    }
    await #expect(throws: DeviceError(.bleConnect, .unConnected, "Device not connected")) {
      _ = try await device.fetchAllReminders()
    }
    #expect(try device.snapshot().reminders == before)
    #expect(await device.statistics().totalCalls == 3)
  }

  /// The link drops and comes back: that call fails with 9310 and has no effect, later calls
  /// work, and the listeners registered before are gone (the SDK-style ones silently, the
  /// resumable ones with 9309 once per kind) until registered again.
  @Test func aReconnectFailsThatCallAndDropsTheListeners() async throws {
    let device = try watch("default", options: SimulationOptions(faults: [.init(.reconnect, atCall: 2)]))
    let heard = Recorder<String>()
    await device.registerSOSRequest { _ in heard.add("sos handler") }
    await device.listen(to: [.sosRequested, .contactsChanged], after: nil) { report in
      switch report {
      case .failed(let kind, let error): heard.add("listener failed \(kind.rawValue) \(error.code.rawValue)")
      case .event(let event): heard.add("listener \(event.kind.rawValue)")
      case .resumePoint: break
      case .missed, .interrupted, .reopened, .resumed: heard.add("listener \(report)")
      }
    }
    try await device.setAllContacts([Contact(name: "Ann", phoneNum: "1")])
    await #expect(throws: DeviceError(.bleConnect, .requestCancelledByDisconnect, "Connection lost, request cancelled (simulated reconnect at call 2)")) {
      try await device.setAllContacts([Contact(name: "Bob", phoneNum: "2")])
    }
    #expect(try await device.getAllContacts().map(\.name) == ["Ann"], "the failed call had no effect and the link is back")
    try device.simulateSOSPress()
    try await Task.sleep(for: .milliseconds(100))
    #expect(heard.all == ["listener failed contactsChanged 9309", "listener failed sosRequested 9309"],
            "nothing heard the press: every listener was dropped")
    await device.registerSOSRequest { _ in heard.add("sos handler again") }
    try device.simulateSOSPress()
    try await Task.sleep(for: .milliseconds(100))
    #expect(heard.all.last == "sos handler again")
  }

  /// `isSupportEmergencyContacts == NO` on a platform that has them: no emergency list in the
  /// capabilities or the state read, its calls and listener answer 2004, the rest works.
  @Test(arguments: ["default", "fit", "fw"])
  func aWatchWithoutEmergencyContactsAnswers2004ForThem(profile: String) async throws {
    let device = try watch(profile, options: SimulationOptions(supportsEmergencyContacts: false))
    let capabilities = try await device.capabilities()
    #expect(!capabilities.contacts.supportsEmergencyContacts && capabilities.contacts.maxEmergencyContacts == 0)
    #expect(!capabilities.contacts.emergencyContactsChangedListener)
    await #expect(throws: DeviceError.self) { _ = try await device.getEmergencyContacts() }
    do { try await device.setEmergencyContacts([Contact(name: "Mom", phoneNum: "1")], sosOn: true) } catch {
      #expect(error.code == .notSupport)
    }
    #expect(try await device.readState(capabilities: capabilities).emergency == nil)
    try await device.setAllContacts([Contact(name: "Ann", phoneNum: "1")])
    #expect(try await device.getAllContacts().map(\.name) == ["Ann"])
    let refused = Recorder<TSErrorCode>()
    await device.registerEmergencyContactsDidChange { result in if case .failure(let error) = result { refused.add(error.code) } }
    try await Task.sleep(for: .milliseconds(100))
    #expect(refused.all == [.notSupport])
  }

  static let environments: [([String: String], SimulationOptions)] = [
    ([:], SimulationOptions()),
    (["TSAPPLY_SIM_LATENCY": "40,8"], SimulationOptions(latency: .init(perCallMilliseconds: 40, perPacketMilliseconds: 8))),
    (["TSAPPLY_SIM_FAULT": "fail@3"], SimulationOptions(faults: [.init(.fail(.timeout), atCall: 3)])),
    (["TSAPPLY_SIM_FAULT": "fail@2:4002, disconnect@5"],
     SimulationOptions(faults: [.init(.fail(.dataSetFailed), atCall: 2), .init(.disconnect, atCall: 5)])),
    (["TSAPPLY_SIM_NO_EMERGENCY_CONTACTS": "1"], SimulationOptions(supportsEmergencyContacts: false)),
    (["TSAPPLY_SIM_NO_EMERGENCY_CONTACTS": "0"], SimulationOptions()),
    (["TSAPPLY_SIM_FAULT": "reconnect@2,lands-then-fails@4"],
     SimulationOptions(faults: [.init(.reconnect, atCall: 2), .init(.landsThenFails(.timeout), atCall: 4)])),
  ]

  @Test(arguments: environments)
  func optionsAreReadFromTheEnvironment(environment: [String: String], expected: SimulationOptions) throws {
    #expect(try SimulationOptions(environment: environment) == expected)
  }

  @Test(arguments: [
    ["TSAPPLY_SIM_LATENCY": "40"], ["TSAPPLY_SIM_LATENCY": "a,b"], ["TSAPPLY_SIM_LATENCY": "-1,2"],
    ["TSAPPLY_SIM_FAULT": "fail"], ["TSAPPLY_SIM_FAULT": "fail@0"], ["TSAPPLY_SIM_FAULT": "explode@2"],
    ["TSAPPLY_SIM_FAULT": "disconnect@2:9"], ["TSAPPLY_SIM_FAULT": "reconnect@2:9309"],
    ["TSAPPLY_SIM_NO_EMERGENCY_CONTACTS": "yes"],
  ])
  func malformedOptionsAreRefused(environment: [String: String]) {
    #expect(throws: DeviceError.self) { try SimulationOptions(environment: environment) }
  }

  @Test func latencyIsPerCallPlusPerPacket() {
    #expect(SimulationOptions.Latency(perCallMilliseconds: 40, perPacketMilliseconds: 8).nanoseconds(packets: 3) == 64_000_000)
  }

  @Test func aFetchIsCountedWithItsFrameAndPackets() async throws {
    // One custom reminder: id 32 (2 bytes), mode period (2), start 480 (3), end 1200 (3),
    // interval 60 (2), repeat 127 (2) = 14; list entry 16; frame 16 + 6 = 22 bytes, 2 packets.
    let reminder = Reminder(reminderId: "32", reminderType: .custom, repeatDays: .everyday, startTime: 480, endTime: 1200, interval: 60)
    let device = try watch("default", state: DeviceState(reminders: [reminder]))
    _ = try await device.fetchAllReminders()
    #expect(await device.statistics() == DeviceStatistics(calls: ["fetchAllReminders": 1], bytesSent: 6, bytesReceived: 22,
                                                         packetsSent: 1, packetsReceived: 2))
  }

  @Test func npkSetReminderMovesTheWholeListFitOnlyTheItem() async throws {
    let npk = try watch("npk"), fit = try watch("fit")
    try await npk.setReminder(customReminder("32"))
    try await fit.setReminder(customReminder("32"))
    let npkStats = await npk.statistics(), fitStats = await fit.statistics()
    #expect(npkStats.calls == ["setReminder": 1] && fitStats.calls == ["setReminder": 1])
    #expect(npkStats.bytesReceived > fitStats.bytesReceived)
    #expect(npkStats.bytesSent > fitStats.bytesSent)
  }

  @Test func localCallsAndRefusedCallsMoveNoBytes() async throws {
    let device = try watch("fit")
    _ = try await device.capabilities()
    await #expect(throws: DeviceError.self) { try await device.replaceAllReminders([]) }
    #expect(await device.statistics() == DeviceStatistics(calls: ["replaceAllReminders": 1]))
  }
}

