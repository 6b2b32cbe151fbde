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

  /// The SOS press numbered `sequence` on `watch`, as a listener hears it (untimed).
  static func sos(_ sequence: Int, _ watch: SimulatedWatch) -> ListenerReport {
    .event(DeviceEvent(id: watch.eventID(sequence), kind: .sosRequested))
  }

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
    let w = try watch.snapshot()  // its ids: `EPOCH-SEQUENCE`
    try watch.simulateSOSPress()  // 1: before anyone listened
    let alex = Contact(name: "Alex", phoneNum: "+15550100")
    try watch.simulateContactAdd(alex)  // 2
    let first = Collector<ListenerReport>()
    await watch.listen(to: [.sosRequested, .contactsChanged], after: nil) { first.append($0) }
    try watch.simulateSOSPress()  // 3
    #expect(Self.untimed(first.values) == [.resumePoint(w.eventID(2)), Self.sos(3, w)], "only new events, after where it started")

    // The first listener's process is gone after handling 3; the watch goes on meanwhile.
    try watch.simulateSOSPress()  // 4
    try watch.simulateContactRemove(name: "Alex")  // 5
    _ = try watch.simulateReminderToggle(id: "1")  // 6: no listener hears reminders
    let resumed = Collector<ListenerReport>()
    await (try SimulatedDevice(path: path)).listen(to: [.sosRequested], after: w.eventID(3)) { resumed.append($0) }
    #expect(Self.untimed(resumed.values) == [Self.sos(4, w)], "what it missed, of its kinds, and not 3 again")
    try watch.simulateSOSPress()  // 7
    #expect(Self.untimed(resumed.values) == [Self.sos(4, w), Self.sos(7, w)])

    let everything = Collector<ListenerReport>()
    await (try SimulatedDevice(path: path)).listen(to: Set(DeviceEvent.Kind.allCases), after: w.eventID(0)) { everything.append($0) }
    #expect(Self.untimed(everything.values) == [Self.sos(1, w), .event(DeviceEvent(id: w.eventID(2), kind: .contactsChanged, contacts: [alex])),
                                  Self.sos(3, w), Self.sos(4, w), .event(DeviceEvent(id: w.eventID(5), kind: .contactsChanged, contacts: [])),
                                  Self.sos(7, w)])
  }

  /// A `default` watch at `path` (a new folder) with one SOS press, and a copy of its file
  /// then (`PATH.copy`).
  static func watchWithACopy() throws -> (path: String, watch: SimulatedDevice) {
    let path = try temporaryDirectory() + "/watch.json"
    let watch = try SimulatedDevice.create(path: path, profile: .default, force: false)
    try watch.simulateSOSPress()
    try FileManager.default.copyItem(atPath: path, toPath: path + ".copy")
    return (path, watch)
  }

  /// Replaces the watch at `path`: reset (`device init --force`), or its older copy put back.
  static func replace(_ path: String, reset: Bool) throws {
    if reset {
      _ = try SimulatedDevice.create(path: path, profile: .default, force: true)
    } else {
      try FileManager.default.removeItem(atPath: path)
      try FileManager.default.copyItem(atPath: path + ".copy", toPath: path)
    }
  }

  /// A listening watch whose state is replaced — reset (`device init --force`) or an older copy
  /// of its file put back — numbers its events from further back: a listener still hears what
  /// happens next, and nothing it heard before (fresh-eyes finding: a running monitor heard no
  /// press until the numbering passed where it had been, and forwarded none). A reset is told
  /// first, as the gap it is (what came after the last event heard went with the old journal),
  /// so the listener's owner reads the watch at once: a monitor or agent said "in sync" for a
  /// reset watch until its next check.
  @Test(arguments: [true, false])
  func aListenerHearsWhatAReplacedWatchReportsNext(reset: Bool) async throws {
    let (path, watch) = try Self.watchWithACopy()  // 1 pressed, then copied
    let w = try watch.snapshot()
    let heard = Collector<ListenerReport>()
    let listening = try SimulatedDevice(path: path)
    await listening.listen(to: [.sosRequested], after: w.eventID(1)) { heard.append($0) }
    try watch.simulateSOSPress()  // 2
    try watch.simulateSOSPress()  // 3
    usleep(5_000)  // the copy's events and the reset are older than what follows
    try Self.replace(path, reset: reset)
    try (try SimulatedDevice(path: path)).simulateSOSPress()  // 1 after a reset, 2 on the copy
    let deadline = Date().addingTimeInterval(30)
    while heard.values.count < (reset ? 4 : 3), Date() < deadline { usleep(20_000) }
    let now = try SimulatedDevice(path: path).snapshot()
    let gap = reset ? [ListenerReport.missed(after: w.eventID(3), before: now.eventID(1))] : []
    #expect(Self.untimed(heard.values) == [Self.sos(2, w), Self.sos(3, w)] + gap + [Self.sos(reset ? 1 : 2, now)], "\(heard.values)")
    withExtendedLifetime(listening) {}
  }

  /// A listener that stopped (a monitor or agent not running) while its watch was reset
  /// (`device init --force`) resumes after an id of the old numbering: it is given every event
  /// the new journal keeps, however far the new numbering has come (fresh-eyes finding: a
  /// monitor stopped across a reset skipped the presses numbered up to its saved id — an SOS
  /// lost with no trace). On an older copy of the file put back it is given the copy's journal
  /// whole (an event again, never one lost).
  @Test(arguments: [true, false])
  func aListenerResumingAcrossAReplacedWatchMissesNoEvent(reset: Bool) async throws {
    let (path, watch) = try Self.watchWithACopy()  // 1 pressed, then copied
    for _ in 0..<4 { try watch.simulateSOSPress() }  // 2…5
    let saved = try watch.snapshot().eventID(5)  // what the stopped listener had handled
    try Self.replace(path, reset: reset)
    let replaced = try SimulatedDevice(path: path)
    for _ in 0..<(reset ? 6 : 2) { try replaced.simulateSOSPress() }  // 1…6 after a reset, 2…3 on the copy
    let heard = Collector<ListenerReport>()
    await (try SimulatedDevice(path: path)).listen(to: [.sosRequested], after: saved) { heard.append($0) }
    let now = try replaced.snapshot()
    // After a reset, first the gap: what came after `saved` went with the old journal.
    let expected = (reset ? [ListenerReport.missed(after: saved, before: now.eventID(1))] : [])
      + (reset ? Array(1...6) : Array(1...3)).map { ListenerReport.event(DeviceEvent(id: now.eventID($0), kind: .sosRequested)) }
    #expect(Self.untimed(heard.values) == expected)
  }

  /// EPOCH stands for the watch's own epoch. An id of another journal (a bare number where the
  /// watch has an epoch, another epoch: the watch was reset since) is told as a gap first —
  /// what came after it went with the old journal, whether anything did or not — then every
  /// entry held; one beyond this journal's newest (an older copy put back), one of no journal
  /// (`everything`) or no number is only replayed.
  @Test(arguments: [("1", true), ("99", true), ("not-a-number", true), ("-1", true), ("0123abcd-1", true), ("EPOCH-99", false),
                    ("EPOCH--1", false), ("EPOCH-x", false), ("EPOCH", true), ("everything", false)])
  func anIdTheJournalCannotHaveReplaysEverythingItHolds(_ id: String, gap: Bool) async throws {
    let path = try temporaryDirectory() + "/watch.json"
    let watch = try SimulatedDevice.create(path: path, profile: try PlatformProfile.named("fw"), force: false)
    try watch.simulateSOSPress()
    try watch.simulateSOSPress()
    let w = try watch.snapshot()
    let heard = Collector<ListenerReport>()
    let after = DeviceEventID(id.replacingOccurrences(of: "EPOCH", with: w.journalEpoch ?? ""))
    await watch.listen(to: [.sosRequested], after: after) { heard.append($0) }
    let missed = gap ? [ListenerReport.missed(after: after, before: w.eventID(1))] : []
    #expect(Self.untimed(heard.values) == missed + [Self.sos(1, w), Self.sos(2, w)])
  }

  /// A listener resuming after an event the journal no longer keeps (more than its newest 200
  /// made since) is told the gap before what it is given (fresh-eyes finding: 5 presses
  /// silently never reported, where a bridge raises `events_missed`).
  @Test func aListenerResumingPastTheJournalsLimitIsToldTheGap() async throws {
    let path = try temporaryDirectory() + "/watch.json"
    let watch = try SimulatedDevice.create(path: path, profile: try PlatformProfile.named("fw"), force: false)
    try watch.simulateSOSPress()
    let w = try watch.snapshot()
    for _ in 0..<(SimulatedWatch.journalLimit + 5) { try watch.simulateSOSPress() }
    let heard = Collector<ListenerReport>()
    await watch.listen(to: [.sosRequested], after: w.eventID(1)) { heard.append($0) }
    let oldest = SimulatedWatch.journalLimit + 6 - SimulatedWatch.journalLimit + 1
    #expect(heard.values.first == .missed(after: w.eventID(1), before: w.eventID(oldest)), "\(heard.values.prefix(2))")
    #expect(heard.values.count == 1 + SimulatedWatch.journalLimit)
  }

  @Test func aKindThePlatformNeverReportsIsRefusedAsTheSDKRefusesIt() async throws {
    let device = try watch("npk")
    let first = await firstValue { handler in await device.listen(to: [.sosRequested], after: DeviceEventID("0"), handler) }
    #expect(first == .failed(.sosRequested, DeviceError(.setting, .notSupport, "registerSOSRequestBlock is not supported on this platform")))
  }
}
