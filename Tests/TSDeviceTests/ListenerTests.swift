import Foundation
import Testing
import TSDevice
import TSModel
import TSTestSupport

/// Listeners fire on simulated watch-side changes, and answer 2004 where the platform never
/// reports changes (docs/platforms.md "Contacts", "Listeners").
@Suite struct ListenerTests {
  @Test func listenersOfAnInMemoryWatchFireOnWatchSideChanges() async throws {
    let device = try watch("default")
    let contacts = Collector<Result<[Contact], DeviceError>>()
    let emergency = Collector<Result<[Contact], DeviceError>>()
    let sos = Collector<DeviceError?>()
    await device.registerContactsDidChange { contacts.append($0) }
    await device.registerEmergencyContactsDidChange { emergency.append($0) }
    await device.registerSOSRequest { sos.append($0) }
    let alex = Contact(name: "Alex", phoneNum: "+15550100")
    try device.simulateContactAdd(alex)
    try device.simulateEmergencyChange(contacts: [alex], sosOn: true)
    try device.simulateSOSPress()
    try device.simulateContactRemove(name: "Alex")
    #expect(contacts.values == [.success([alex]), .success([])])
    #expect(emergency.values == [.success([alex])])
    #expect(sos.values.count == 1 && sos.values.first == .some(nil))
    #expect(try await device.getEmergencyContacts() == EmergencyContacts(contacts: [alex], isSosOn: true))
  }

  @Test func aListenerOnOneDeviceHearsAChangeMadeThroughAnotherDeviceOfTheSameFile() async throws {
    let path = try temporaryDirectory() + "/watch.json"
    let listening = try SimulatedDevice.create(path: path, profile: .fw, force: false)
    let other = try SimulatedDevice(path: path)
    try other.simulateContactAdd(Contact(name: "Before", phoneNum: "1"))
    let received = Collector<Result<[Contact], DeviceError>>()
    await listening.registerContactsDidChange { received.append($0) }
    try other.simulateContactAdd(Contact(name: "After", phoneNum: "2", shortName: "A"))
    #expect(received.values == [.success([Contact(name: "Before", phoneNum: "1"), Contact(name: "After", phoneNum: "2", shortName: "A")])])
  }

  @Test func reminderToggleChangesTheWatchAndIsJournalled() async throws {
    let device = try watch("npk")
    #expect(try device.simulateReminderToggle(id: "1"))
    #expect(try await device.fetchAllReminders()[1].isEnabled)
    #expect(try device.snapshot().journal.last?.kind == .reminderToggled)
    #expect(throws: DeviceError(.reminder, .dataIsEmpty, "the watch has no reminder with ID 9")) {
      try device.simulateReminderToggle(id: "9")
    }
  }

  enum Listener: String, Sendable, CaseIterable {
    case contacts, emergency, sos

    func firstAnswer(_ device: SimulatedDevice) async -> DeviceError? {
      switch self {
      case .contacts:
        let result = await firstValue { handler in await device.registerContactsDidChange(handler) }
        if case .failure(let error) = result { return error }
        return nil
      case .emergency:
        let result = await firstValue { handler in await device.registerEmergencyContactsDidChange(handler) }
        if case .failure(let error) = result { return error }
        return nil
      case .sos:
        return await firstValue { handler in await device.registerSOSRequest(handler) } ?? nil
      }
    }
  }

  static let refusals: [(String, Listener, DeviceError)] = [
    ("npk", .contacts, DeviceError(.setting, .notSupport, "registerContactsDidChangedBlock is not supported on this platform")),
    ("npk", .emergency, DeviceError(.setting, .notSupport, "registerEmergencyContactsDidChangedBlock is not supported on this platform")),
    ("npk", .sos, DeviceError(.setting, .notSupport, "registerSOSRequestBlock is not supported on this platform")),
    ("fit", .contacts, DeviceError(.contact, .notSupport, "registerContactsDidChangedBlock is not supported on this platform")),
    ("fit", .emergency, DeviceError(.contact, .notSupport, "registerEmergencyContactsDidChangedBlock is not supported on this platform")),
    ("fit-basic", .contacts, DeviceError(.contact, .notSupport, "registerContactsDidChangedBlock is not supported on this platform")),
    ("fw", .emergency, DeviceError(.contact, .notSupport, "registerEmergencyContactsDidChangedBlock is not supported on this platform")),
  ]

  @Test(arguments: refusals)
  func unsupportedListenersAnswerOnceWith2004(profile: String, listener: Listener, error: DeviceError) async throws {
    #expect(await listener.firstAnswer(try watch(profile)) == error)
  }

  static let supportedSOS = ["default", "fit", "fit-basic", "fw"]

  @Test(arguments: supportedSOS)
  func theSOSListenerFiresWhereSupported(profile: String) async throws {
    let device = try watch(profile)
    let answers = Collector<DeviceError?>()
    await device.registerSOSRequest { answers.append($0) }
    try device.simulateSOSPress()
    #expect(answers.values.count == 1 && answers.values.first == .some(nil))
  }

  // MARK: Resuming (Device.listen(to:after:_:))

  static func sos(_ id: Int) -> ListenerReport { .event(DeviceEvent(id: DeviceEventID(String(id)), kind: .sosRequested)) }

  /// What was heard, without the times the journal gave the events (checked on their own,
  /// `aResumedListenerHearsWhenEachEventWasMade`).
  static func untimed(_ reports: [ListenerReport]) -> [ListenerReport] {
    reports.map { report in
      guard case .event(var event) = report else { return report }
      event.time = nil
      return .event(event)
    }
  }

  @Test func aListenerResumesAfterTheLastEventItHandledAndHearsNothingTwice() async throws {
    let path = try temporaryDirectory() + "/watch.json"
    let watch = try SimulatedDevice.create(path: path, profile: try PlatformProfile.named("default"), force: false)
    try watch.simulateSOSPress()  // 1: before anyone listened
    let alex = Contact(name: "Alex", phoneNum: "+15550100")
    try watch.simulateContactAdd(alex)  // 2
    let first = Collector<ListenerReport>()
    await watch.listen(to: [.sosRequested, .contactsChanged], after: nil) { first.append($0) }
    try watch.simulateSOSPress()  // 3
    #expect(Self.untimed(first.values) == [.resumePoint(DeviceEventID("2")), Self.sos(3)], "only new events, after where it started")

    // The first listener's process is gone after handling 3; the watch goes on meanwhile.
    try watch.simulateSOSPress()  // 4
    try watch.simulateContactRemove(name: "Alex")  // 5
    _ = try watch.simulateReminderToggle(id: "1")  // 6: no listener hears reminders
    let resumed = Collector<ListenerReport>()
    await (try SimulatedDevice(path: path)).listen(to: [.sosRequested], after: DeviceEventID("3")) { resumed.append($0) }
    #expect(Self.untimed(resumed.values) == [Self.sos(4)], "what it missed, of its kinds, and not 3 again")
    try watch.simulateSOSPress()  // 7
    #expect(Self.untimed(resumed.values) == [Self.sos(4), Self.sos(7)])

    let everything = Collector<ListenerReport>()
    await (try SimulatedDevice(path: path)).listen(to: Set(DeviceEvent.Kind.allCases), after: DeviceEventID("0")) { everything.append($0) }
    #expect(Self.untimed(everything.values) == [Self.sos(1), .event(DeviceEvent(id: DeviceEventID("2"), kind: .contactsChanged, contacts: [alex])),
                                  Self.sos(3), Self.sos(4), .event(DeviceEvent(id: DeviceEventID("5"), kind: .contactsChanged, contacts: [])),
                                  Self.sos(7)])
  }

  /// A listening watch whose state is replaced — reset (`device init --force`) or an older copy
  /// of its file put back — numbers its events from further back: a listener still hears what
  /// happens next, and nothing it heard before (fresh-eyes finding: a running monitor heard no
  /// press until the numbering passed where it had been, and forwarded none).
  @Test(arguments: [true, false])
  func aListenerHearsWhatAReplacedWatchReportsNext(reset: Bool) async throws {
    let path = try temporaryDirectory() + "/watch.json"
    let profile = try PlatformProfile.named("default")
    let watch = try SimulatedDevice.create(path: path, profile: profile, force: false)
    try watch.simulateSOSPress()  // 1
    try FileManager.default.copyItem(atPath: path, toPath: path + ".copy")
    let heard = Collector<ListenerReport>()
    let listening = try SimulatedDevice(path: path)
    await listening.listen(to: [.sosRequested], after: DeviceEventID("1")) { heard.append($0) }
    try watch.simulateSOSPress()  // 2
    try watch.simulateSOSPress()  // 3
    usleep(5_000)  // the copy's events and the reset are older than what follows
    if reset {
      _ = try SimulatedDevice.create(path: path, profile: profile, force: true)
    } else {
      try FileManager.default.removeItem(atPath: path)
      try FileManager.default.copyItem(atPath: path + ".copy", toPath: path)
    }
    try (try SimulatedDevice(path: path)).simulateSOSPress()  // 1 after a reset, 2 on the copy
    let deadline = Date().addingTimeInterval(30)
    while heard.values.count < 3, Date() < deadline { usleep(20_000) }
    #expect(Self.untimed(heard.values) == [Self.sos(2), Self.sos(3), Self.sos(reset ? 1 : 2)], "\(heard.values)")
    withExtendedLifetime(listening) {}
  }

  @Test(arguments: ["99", "not-a-number", "-1"])
  func anIdTheJournalCannotHaveReplaysEverythingItHolds(_ id: String) async throws {
    let path = try temporaryDirectory() + "/watch.json"
    let watch = try SimulatedDevice.create(path: path, profile: try PlatformProfile.named("fw"), force: false)
    try watch.simulateSOSPress()
    try watch.simulateSOSPress()
    let heard = Collector<ListenerReport>()
    // An id from before the watch was reset (or from another watch): nothing held is skipped.
    await watch.listen(to: [.sosRequested], after: DeviceEventID(id)) { heard.append($0) }
    #expect(Self.untimed(heard.values) == [Self.sos(1), Self.sos(2)])
  }

  @Test func aKindThePlatformNeverReportsIsRefusedAsTheSDKRefusesIt() async throws {
    let device = try watch("npk")
    let first = await firstValue { handler in await device.listen(to: [.sosRequested], after: DeviceEventID("0"), handler) }
    #expect(first == .failed(.sosRequested, DeviceError(.setting, .notSupport, "registerSOSRequestBlock is not supported on this platform")))
  }
}
