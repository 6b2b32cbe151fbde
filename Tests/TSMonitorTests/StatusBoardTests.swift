import Foundation
import Testing
import TSStatusPage
import TSModel
import TSTestSupport
import TSMonitor

/// A clock a test moves by hand.
final class TestClock: @unchecked Sendable {
  private let lock = NSLock()
  private var current = Date(timeIntervalSince1970: 1_796_000_000)
  var now: Date { lock.withLock { current } }
  func advance(_ seconds: TimeInterval) { lock.withLock { current = current.addingTimeInterval(seconds) } }
}

/// The status page's state (`StatusBoard`): what each event and check makes of a watch, in the
/// page's words; SOS presses until acknowledged; the offline threshold; status.json and metrics.
@Suite struct StatusBoardTests {
  static let members = [StatusBoard.Member(name: "room-12", labels: ["ward-a"], device: "sim:w12.json"),
                        StatusBoard.Member(name: "room-14", device: "sim:w14.json")]

  static func board(_ clock: TestClock, threshold: Duration = .seconds(60), showSensitive: Bool = false) -> StatusBoard {
    StatusBoard(members: members, offlineThreshold: threshold, showSensitive: showSensitive, now: { clock.now })
  }

  static func event(_ kind: MonitorEvent.Kind, _ clock: TestClock, message: String = "m", _ fields: [String: JSONValue] = [:],
                    id: String? = nil) -> MonitorEvent {
    MonitorEvent(time: clock.now, watch: "sim:/x/w12.json", kind: kind, id: id, message: message, fields: fields)
  }

  struct Case: Sendable, CustomTestStringConvertible {
    var name: String
    /// What happens to room-12, in order.
    var steps: @Sendable (StatusBoard, TestClock) -> Void
    var state: String
    /// A text the first reason holds; `nil`: no reason (it needs no attention).
    var reason: String?
    var testDescription: String { name }
  }

  static func check(_ board: StatusBoard, _ clock: TestClock, _ drift: Int, _ pending: Int) {
    board.checked("room-12", MonitorCheck(time: clock.now, hasRecord: true, drift: drift, pending: pending))
  }

  static let cases: [Case] = [
    Case(name: "nothing heard yet", steps: { _, _ in }, state: "checking", reason: nil),
    Case(name: "online, not checked yet", steps: { board, clock in
      board.record(event(.online, clock, ["has_record": .bool(true)]), for: ["room-12"])
    }, state: "checking", reason: nil),
    Case(name: "checked clean", steps: { board, clock in check(board, clock, 0, 0) }, state: "in sync", reason: nil),
    Case(name: "never applied", steps: { board, clock in
      board.checked("room-12", MonitorCheck(time: clock.now, hasRecord: false, drift: 0, pending: 0))
    }, state: "no record", reason: "Never applied"),
    // As `status --fleet` says it: never applied, with what its manifest would change.
    Case(name: "never applied, its manifest pending", steps: { board, clock in
      board.checked("room-12", MonitorCheck(time: clock.now, hasRecord: false, drift: 0, pending: 4))
    }, state: "no record", reason: "Never applied"),
    Case(name: "drift", steps: { board, clock in
      check(board, clock, 1, 0)
      board.record(event(.drift, clock, message: "contacts (1 added) changed on the watch since the last apply; not healed",
                         ["addresses": .array([.string("contacts")]), "reconcile": .string("off"), "pending": .integer(0)]), for: ["room-12"])
    }, state: "drift", reason: "contacts (1 added) changed"),
    Case(name: "drift resolved", steps: { board, clock in
      board.record(event(.drift, clock, ["addresses": .array([.string("contacts")]), "reconcile": .string("off")]), for: ["room-12"])
      board.record(event(.resolved, clock), for: ["room-12"])
      check(board, clock, 0, 0)
    }, state: "in sync", reason: nil),
    Case(name: "pending", steps: { board, clock in check(board, clock, 0, 2) }, state: "pending", reason: "2 changes in its manifest"),
    Case(name: "heal refused as unsafe", steps: { board, clock in
      check(board, clock, 1, 0)
      board.record(event(.drift, clock, message: "contacts (1 added) changed; not healed: undoing it is unsafe",
                         ["addresses": .array([.string("contacts")]), "reconcile": .string("unsafe")]), for: ["room-12"])
    }, state: "refused", reason: "refused as unsafe"),
    Case(name: "a check finds the emergency list drifted, its heal under way", steps: { board, clock in
      board.checked("room-12", MonitorCheck(time: clock.now, hasRecord: true, drift: 1, pending: 0, sosAtRisk: true))
    }, state: "drift", reason: "SOS at risk: "),
    Case(name: "heal refused as unsafe, the emergency list drifted", steps: { board, clock in
      check(board, clock, 1, 0)
      board.record(event(.drift, clock, message: "emergency (1 added) changed; not healed: undoing it is unsafe",
                         ["addresses": .array([.string("emergency")]), "reconcile": .string("unsafe")]), for: ["room-12"])
    }, state: "refused", reason: "SOS at risk: "),
    Case(name: "heal failed", steps: { board, clock in
      board.record(event(.error, clock, message: "healing the drift failed again: timeout", ["reason": .string("apply")]), for: ["room-12"])
    }, state: "failed", reason: "Healing failed: healing the drift failed again"),
    Case(name: "heal failed for a reason that can pass", steps: { board, clock in
      check(board, clock, 1, 0)
      board.record(event(.drift, clock, message: "contacts (1 added) changed; healing failed for a reason that can pass (attempt 1): timeout",
                         ["addresses": .array([.string("contacts")]), "reconcile": .string("retrying"), "attempt": .integer(1),
                          "error": .string("timeout")]),
                   for: ["room-12"])
    }, state: "retrying",
         reason: "Not healed yet, being retried: healing failed for a reason that can pass: timeout; each check tries again until it heals or fails for good"),
    Case(name: "heal failed for good after a retry", steps: { board, clock in
      board.record(event(.drift, clock, ["addresses": .array([.string("contacts")]), "reconcile": .string("retrying")]), for: ["room-12"])
      board.record(event(.error, clock, message: "healing the drift failed again: 1001",
                         ["reason": .string("apply"), "reconcile": .string("failed")]), for: ["room-12"])
    }, state: "failed", reason: "Healing failed: healing the drift failed again: 1001"),
    Case(name: "heal turned transient after the manifest changed", steps: { board, clock in
      board.record(event(.drift, clock, ["addresses": .array([.string("contacts")]), "reconcile": .string("failed")]), for: ["room-12"])
      board.record(event(.error, clock, message: "healing the drift failed for a reason that can pass (attempt 1): locked",
                         ["reason": .string("apply"), "reconcile": .string("retrying"), "error": .string("locked")]), for: ["room-12"])
    }, state: "retrying", reason: "Not healed yet, being retried: healing failed for a reason that can pass: locked; each check"),
    Case(name: "manifest broken", steps: { board, clock in
      board.record(event(.error, clock, message: "cannot use watch.yaml: 3:1 bad", ["reason": .string("manifest")]), for: ["room-12"])
    }, state: "invalid", reason: "manifest cannot be used"),
    Case(name: "offline, under the threshold", steps: { board, clock in
      board.record(event(.offline, clock, message: "cannot reach the watch: gone"), for: ["room-12"])
      clock.advance(59)
    }, state: "offline", reason: nil),
    Case(name: "offline, over the threshold", steps: { board, clock in
      board.record(event(.offline, clock, message: "cannot reach the watch: gone"), for: ["room-12"])
      clock.advance(61)
    }, state: "offline", reason: "Offline longer than 1 min: the watch cannot be reached"),
    // A restarted monitor going on with an outage its last run found 61 s ago: over the
    // threshold at once (fresh-eyes finding: listed only once the threshold passed again).
    Case(name: "offline, found before a restart, over the threshold", steps: { board, clock in
      board.record(event(.offline, clock, message: "cannot reach the watch: gone",
                         ["since": .string(MonitorEvent.timestamp(clock.now.addingTimeInterval(-61)))]), for: ["room-12"])
    }, state: "offline", reason: "Offline longer than 1 min: the watch cannot be reached"),
    // A restarted monitor that cannot read the watch: what its last read found (fe66).
    Case(name: "offline, SOS at risk when last read", steps: { board, clock in
      board.record(event(.offline, clock, message: "cannot reach the watch: gone", ["sos_at_risk": .bool(true)]), for: ["room-12"])
    }, state: "offline", reason: "SOS at risk when it was last read, before it went out of reach: "),
    // Past the threshold too: SOS at risk is still said first (fresh-eyes finding: "Offline
    // longer than" came first).
    Case(name: "offline over the threshold, SOS at risk when last read", steps: { board, clock in
      board.record(event(.offline, clock, message: "cannot reach the watch: gone", ["sos_at_risk": .bool(true)]), for: ["room-12"])
      clock.advance(61)
    }, state: "offline", reason: "SOS at risk when it was last read, before it went out of reach: "),
    Case(name: "offline then back", steps: { board, clock in
      board.record(event(.offline, clock), for: ["room-12"])
      clock.advance(120)
      board.record(event(.online, clock, ["has_record": .bool(true)]), for: ["room-12"])
      check(board, clock, 0, 0)
    }, state: "in sync", reason: nil),
    // Its emergency list drifted, then no agent serves it (or two do): what its last read found,
    // as the open sos_drift alert says — not dropped with the drift figure (fresh-eyes fe102 #5).
    Case(name: "an agent's SOS-at-risk drift, then no agent serves it", steps: { board, clock in
      var drifted = AgentReport(state: "drift", drift: 1, pending: 0, appliedRevision: "abc", lastSeen: clock.now)
      (drifted.driftAddresses, drifted.sosAtRisk) = (["emergency"], true)
      board.reported("room-12", drifted)
      board.reported("room-12", AgentReport(state: "no status", note: "agent a1 no longer serves the watch w12", drift: nil, pending: nil))
    }, state: "no status", reason: "SOS at risk when it was last read, and what it holds now is not known: "),
    Case(name: "an agent's drift, said once", steps: { board, clock in
      board.record(event(.drift, clock, message: "1 resource changed on the watch since the last apply: contacts (1 added)",
                         ["agent": .string("a1"), "addresses": .array([.string("contacts")])]), for: ["room-12"])
    }, state: "drift", reason: "Changed on the watch since the last apply: contacts (1 added)"),
    Case(name: "agent refused", steps: { board, _ in
      board.reported("room-12", AgentReport(state: "refused", note: "removes emergency contact Mom", drift: 0, pending: 1))
    }, state: "refused", reason: "refused as unsafe: removes emergency contact Mom"),
    Case(name: "agent in sync", steps: { board, clock in
      board.reported("room-12", AgentReport(state: "in sync", drift: 0, pending: 0, appliedRevision: "abc", lastSeen: clock.now))
    }, state: "in sync", reason: nil),
    Case(name: "agent's apply failed", steps: { board, clock in
      board.record(event(.error, clock, message: "getAllContacts failed (simulated fault)", ["agent": .string("a1")]), for: ["room-12"])
    }, state: "failed", reason: "The apply failed: getAllContacts failed"),
    Case(name: "agent's apply failed for a reason that can pass", steps: { board, clock in
      board.record(event(.error, clock, message: "getAllContacts failed (simulated fault)",
                         ["agent": .string("a1"), "reconcile": .string("retrying")]), for: ["room-12"])
    }, state: "retrying", reason: "The apply failed and is being retried: getAllContacts failed"),
    Case(name: "agent's apply failed, then its retry applied", steps: { board, clock in
      board.record(event(.error, clock, message: "getAllContacts failed (simulated fault)", ["agent": .string("a1")]), for: ["room-12"])
      board.reported("room-12", AgentReport(state: "retrying", note: "attempt 2 in 1s", drift: 0, pending: 1))
      board.reported("room-12", AgentReport(state: "in sync", drift: 0, pending: 0, appliedRevision: "abc", lastSeen: clock.now))
    }, state: "in sync", reason: nil),
    Case(name: "agent offline", steps: { board, clock in
      board.reported("room-12", AgentReport(state: "in sync", drift: 0, pending: 0, appliedRevision: "abc"))
      board.record(event(.offline, clock, message: "agent a1 (w12) is offline", ["agent": .string("a1")]), for: ["room-12", "room-14"])
      clock.advance(600)
    }, state: "offline", reason: "Offline longer than 1 min: its agent a1 is offline"),
    // Its agent gone, its presses cannot reach the monitor: needs attention at once, as the
    // `agent_offline` alert is (fresh-eyes finding: 5 minutes before the page said so).
    Case(name: "agent offline, under the threshold", steps: { board, clock in
      board.reported("room-12", AgentReport(state: "in sync", drift: 0, pending: 0, appliedRevision: "abc"))
      board.record(event(.offline, clock, message: "agent a1 (w12) is offline", ["agent": .string("a1")]), for: ["room-12", "room-14"])
      clock.advance(5)
    }, state: "offline", reason: "Its agent a1 is offline: this watch's SOS presses cannot reach this monitor until it is back"),
    // A monitor (re)started over MQTT hears the agent's retained status first (it cannot reach
    // the watch), then the agent's retained presence (online): the agent being up does not
    // make its watch reachable (fe17 defect 1).
    Case(name: "unreachable at its agent, the agent online", steps: { board, clock in
      board.record(event(.offline, clock, message: "agent a1 cannot reach the watch: Device not connected (2003); it keeps trying",
                         ["served_by": .string("a1")]), for: ["room-12"])
      board.reported("room-12", AgentReport(state: "in sync", drift: nil, pending: nil, appliedRevision: "abc"))
      board.record(event(.online, clock, message: "agent a1 (room-12) is online", ["agent": .string("a1")]), for: ["room-12", "room-14"])
      clock.advance(61)
    }, state: "offline", reason: "Offline longer than 1 min: agent a1 cannot reach the watch"),
    Case(name: "its agent offline and back, the watch reachable", steps: { board, clock in
      board.reported("room-12", AgentReport(state: "in sync", drift: 0, pending: 0, appliedRevision: "abc"))
      board.record(event(.offline, clock, message: "agent a1 (w12) is offline", ["agent": .string("a1")]), for: ["room-12", "room-14"])
      clock.advance(600)
      board.record(event(.online, clock, message: "agent a1 (w12) is online", ["agent": .string("a1")]), for: ["room-12", "room-14"])
    }, state: "in sync", reason: nil),
    // Offline does not hide what was wrong before: a refused watch that then cannot be reached
    // stays on the attention list with its refusal.
    Case(name: "refused, then unreachable", steps: { board, clock in
      board.reported("room-12", AgentReport(state: "refused", note: "removes emergency contact Mom", drift: 0, pending: 1))
      board.record(event(.offline, clock, message: "agent a1 cannot reach the watch: gone", ["served_by": .string("a1")]), for: ["room-12"])
    }, state: "offline", reason: "The apply was refused as unsafe: removes emergency contact Mom"),
    // The monitor itself cannot reach the broker: no watch's state is known through it (fe17 defect 2).
    Case(name: "the monitor lost the broker", steps: { board, clock in
      board.reported("room-12", AgentReport(state: "in sync", drift: 0, pending: 0, appliedRevision: "abc", lastSeen: clock.now))
      board.record(event(.offline, clock, message: "this monitor lost its connection to the broker", ["broker": .string("mqtt://127.0.0.1:1883")]),
                   for: [])
    }, state: "not known", reason: "This monitor cannot reach the broker"),
    // An SOS a notifier has not had: said first until it reaches it (fresh-eyes finding: the
    // page said "needs attention: none" while the receiver kept failing).
    Case(name: "an SOS not delivered yet", steps: { board, clock in
      check(board, clock, 0, 0)
      board.record(event(.error, clock, ["reason": .string("delivery"), "event_id": .string("sos-e-1"), "notifier": .string("./page-nurse.sh")]),
                   for: ["room-12"])
    }, state: "in sync", reason: "An SOS press has not reached ./page-nurse.sh yet: delivery has failed since"),
    // Failing since before a restart of the monitor: since then, as the outbox kept it.
    Case(name: "an SOS not delivered since before a restart", steps: { board, clock in
      check(board, clock, 0, 0)
      board.record(event(.error, clock, ["reason": .string("delivery"), "event_id": .string("sos-e-1"), "notifier": .string("./page-nurse.sh"),
                                         "failing_since": .string(MonitorEvent.timestamp(clock.now.addingTimeInterval(-600)))]),
                   for: ["room-12"])
    }, state: "in sync", reason: "delivery has failed since 2026-11-30T00:43:20.000Z;"),
    Case(name: "an SOS delivered after failing", steps: { board, clock in
      check(board, clock, 0, 0)
      board.record(event(.error, clock, ["reason": .string("delivery"), "event_id": .string("sos-e-1"), "notifier": .string("./page-nurse.sh")]),
                   for: ["room-12"])
      clock.advance(40)
      board.record(event(.delivered, clock, ["event_id": .string("sos-e-1"), "notifier": .string("./page-nurse.sh"), "attempt": .integer(5)]),
                   for: ["room-12"])
    }, state: "in sync", reason: nil),
    // Its events held back on the way: said first, until it is reached again or they are heard.
    Case(name: "its events not heard", steps: { board, clock in
      check(board, clock, 0, 0)
      board.record(event(.error, clock, message: "the watch's events are not being heard: the event stream keeps breaking",
                         ["reason": .string("events_down")]), for: ["room-12"])
    }, state: "in sync", reason: "Not hearing this watch's SOS presses: the watch's events are not being heard"),
    Case(name: "its events heard again", steps: { board, clock in
      check(board, clock, 0, 0)
      board.record(event(.error, clock, message: "the watch's events are not being heard", ["reason": .string("events_down")]), for: ["room-12"])
      board.record(event(.online, clock, ["events": .string("resumed")]), for: ["room-12"])
    }, state: "in sync", reason: nil),
    // Heard from a stream that reopened, not holding yet: not "Not hearing" (presses are delivered), nor all clear.
    Case(name: "its events heard from a reopened stream", steps: { board, clock in
      check(board, clock, 0, 0)
      board.record(event(.error, clock, message: "the watch's events are not being heard", ["reason": .string("events_down")]), for: ["room-12"])
      board.record(event(.online, clock, ["events": .string("reopened")]), for: ["room-12"])
    }, state: "in sync", reason: "Hearing this watch's SOS presses again since"),
    Case(name: "a reopened stream broken again", steps: { board, clock in
      check(board, clock, 0, 0)
      board.record(event(.error, clock, message: "the watch's events are not being heard", ["reason": .string("events_down")]), for: ["room-12"])
      board.record(event(.online, clock, ["events": .string("reopened")]), for: ["room-12"])
      board.record(event(.error, clock, message: "the watch's events are not being heard", ["reason": .string("events_down")]), for: ["room-12"])
    }, state: "in sync", reason: "Not hearing this watch's SOS presses: the watch's events are not being heard"),
    Case(name: "a reopened stream that held", steps: { board, clock in
      check(board, clock, 0, 0)
      board.record(event(.error, clock, message: "the watch's events are not being heard", ["reason": .string("events_down")]), for: ["room-12"])
      board.record(event(.online, clock, ["events": .string("reopened")]), for: ["room-12"])
      clock.advance(30)
      board.record(event(.online, clock, ["events": .string("resumed")]), for: ["room-12"])
    }, state: "in sync", reason: nil),
    Case(name: "the monitor's broker back", steps: { board, clock in
      board.reported("room-12", AgentReport(state: "in sync", drift: 0, pending: 0, appliedRevision: "abc", lastSeen: clock.now))
      board.record(event(.offline, clock, ["broker": .string("mqtt://127.0.0.1:1883")]), for: [])
      clock.advance(30)
      board.record(event(.online, clock, ["broker": .string("mqtt://127.0.0.1:1883")]), for: [])
    }, state: "in sync", reason: nil),
  ]

  /// A watch out of sight (its agent offline, or itself unreachable) has no drift or pending
  /// number in status.json — `null`, as `status --fleet` shows `-` — not its last reading
  /// (fresh-eyes finding: `drift: 0` for watches nobody could see).
  @Test(arguments: [true, false])
  func aWatchOutOfSightHasNoNumbers(agentOffline: Bool) throws {
    let clock = TestClock()
    let board = Self.board(clock)
    if agentOffline {
      board.reported("room-12", AgentReport(state: "in sync", drift: 0, pending: 0, appliedRevision: "abc", lastSeen: clock.now))
      board.record(Self.event(.offline, clock, ["agent": .string("a2"), "watches": .array([.string("room-12")])]), for: ["room-12"])
    } else {
      Self.check(board, clock, 0, 0)
      board.record(Self.event(.offline, clock, ["error": .string("2003")]), for: ["room-12"])
    }
    let row = try #require(board.snapshot().rows.first)
    #expect(row.state == "offline" && row.drift == nil && row.pending == nil, "\(row)")
  }

  /// An SOS a notifier has not had yet is said on the press's card, also once its watch left
  /// the fleet file (fresh-eyes finding: "has not reached … yet" vanished with the watch's row
  /// while the monitor kept retrying), until it is delivered.
  @Test func anUndeliveredPressSaysSoOnItsCardAlsoOnceItsWatchLeft() throws {
    let clock = TestClock()
    let board = Self.board(clock)
    Self.check(board, clock, 0, 0)
    let sos = Self.event(.sos, clock)
    board.record(sos, for: ["room-12"])
    board.record(Self.event(.error, clock, ["reason": .string("delivery"), "event_id": .string(sos.id), "notifier": .string("./page-nurse.sh")]),
                 for: ["room-12"])
    board.remove(["room-12"])
    let card = try #require(board.snapshot().openSOS.first)
    #expect(card.notDelivered.map(\.notifier) == ["./page-nurse.sh"] && card.notDelivered.first?.since == clock.now, "\(card)")
    #expect(board.snapshot().json.contains("\"not_delivered\":[{\"notifier\":\"./page-nurse.sh\""), "\(board.snapshot().json)")
    #expect(board.snapshot().undeliveredOfRemoved.first?.hasPrefix("An SOS press of room-12 has not reached ./page-nurse.sh: delivering it has failed since ") == true
              && board.snapshot().undeliveredOfRemoved.first?.hasSuffix("its monitor keeps trying until this monitor stops, and again when it starts") == true,
            "\(board.snapshot().undeliveredOfRemoved)")
    board.record(Self.event(.delivered, clock, ["event_id": .string(sos.id), "notifier": .string("./page-nurse.sh"), "attempt": .integer(4)]),
                 for: ["room-12"])
    #expect(board.snapshot().openSOS.first?.notDelivered.isEmpty == true && board.snapshot().undeliveredOfRemoved.isEmpty)
  }

  /// A press a notifier has not had, its watch then removed, the monitor restarted: the
  /// restarted board still says so — that no monitor retries it now — on the card and on its
  /// own, acknowledged or not (fresh-eyes findings: the line was gone after the restart, and an
  /// acknowledged press's with its watch's row).
  @Test(arguments: [false, true])
  func anUndeliveredPressOfARemovedWatchIsSaidAfterARestart(acknowledged: Bool) throws {
    let path = try temporaryDirectory() + "/board.json"
    let clock = TestClock()
    var board = StatusBoard(members: Self.members, offlineThreshold: .seconds(60), storePath: path, now: { clock.now })
    let sos = Self.event(.sos, clock)
    board.record(sos, for: ["room-12"])
    board.record(Self.event(.error, clock, ["reason": .string("delivery"), "event_id": .string(sos.id), "notifier": .string("webhook"),
                                            "failing_since": .string(MonitorEvent.timestamp(clock.now))]), for: ["room-12"])
    if acknowledged { _ = board.acknowledge(sos.id, by: "Ana") }
    board.remove(["room-12"])
    clock.advance(60)
    board = StatusBoard(members: Array(Self.members.dropFirst()), offlineThreshold: .seconds(60), storePath: path, now: { clock.now })
    let lines = board.snapshot().undeliveredOfRemoved
    #expect(lines == ["An SOS press of room-12 has not reached webhook: delivering it has failed since \(MonitorEvent.timestamp(clock.now.addingTimeInterval(-60))), "
                      + "and room-12 is no longer in the fleet file, so no monitor retries it: it waits in the watch's outbox until the watch is put back in the fleet file"],
            "\(lines)")
    #expect(board.snapshot().json.contains("\"undelivered_of_removed\":[\"An SOS press of room-12 "))
  }

  /// A watch read while its manifest cannot be used (the monitor compares it with the last
  /// apply meanwhile): seen now, and still `invalid` (fresh-eyes finding: "last seen" stood
  /// still, ageing on the page, while the watch answered every check).
  @Test func aWatchReadWhileItsManifestCannotBeUsedIsSeenAndStaysInvalid() throws {
    let clock = TestClock()
    let board = Self.board(clock)
    Self.check(board, clock, 0, 0)
    board.record(Self.event(.error, clock, message: "cannot use watch.yaml: 3:1 bad", ["reason": .string("manifest")]), for: ["room-12"])
    clock.advance(30)
    board.checked("room-12", MonitorCheck(time: clock.now, hasRecord: true, drift: 0, pending: 0, manifestUsable: false))
    let row = try #require(board.snapshot().rows.first)
    #expect(row.state == "invalid" && row.lastSeen == clock.now && row.pending == nil && row.drift == 0, "\(row)")
    #expect(row.reasons.first?.contains("manifest cannot be used") == true, "\(row.reasons)")
  }

  /// A heal being retried: why it failed, then what changed — never the first attempt's number
  /// and next time, which later attempts (no event each) would leave standing.
  @Test func aRetriedHealSaysWhyAndWhatChangedWithoutItsFirstAttempt() throws {
    let clock = TestClock()
    let board = Self.board(clock)
    Self.check(board, clock, 1, 0)
    board.record(Self.event(.drift, clock, message: "contacts (1 added) changed on the watch since the last apply; healing failed for a reason "
                              + "that can pass (attempt 1): timeout; retrying at the next check, by 2026-12-05T11:17:33.735Z",
                            ["addresses": .array([.string("contacts")]), "reconcile": .string("retrying"), "attempt": .integer(1),
                             "error": .string("timeout")]), for: ["room-12"])
    let reasons = try #require(board.snapshot().rows.first?.reasons)
    #expect(reasons == ["Not healed yet, being retried: healing failed for a reason that can pass: timeout; each check tries again until it heals or fails for good",
                        "Changed on the watch since the last apply: contacts (1 added)"], "\(reasons)")
  }

  @Test(arguments: cases)
  func eachSituationReadsAsTheLogSaysIt(_ example: Case) throws {
    let clock = TestClock()
    let board = Self.board(clock)
    example.steps(board, clock)
    board.tick()
    let row = try #require(board.snapshot().rows.first)
    #expect(row.state == example.state)
    if let reason = example.reason {
      #expect(row.reasons.first?.contains(reason) == true, "\(row.reasons)")
    } else {
      #expect(row.reasons.isEmpty, "\(row.reasons)")
    }
    #expect(board.snapshot().rows[1].name == "room-14")
  }

  /// A heal that wrote and verified, then the watch out of reach before the recheck that says
  /// `resolved`: the watch held the manifest when last read, so the drift's words ("… healing
  /// it") are gone and it is not counted drifted (fresh-eyes finding: the page kept "healing it"
  /// for a healed watch). What the heal did not heal stays.
  @Test(arguments: [[String](), ["contacts"]])
  func aVerifiedHealEndsTheDriftOnThePageBeforeTheRecheck(_ notHealed: [String]) throws {
    let clock = TestClock()
    let board = Self.board(clock)
    Self.check(board, clock, 2, 0)
    let message = notHealed.isEmpty ? "emergency (1 removed), contacts (1 added) changed on the watch since the last apply; healing it"
      : "emergency (1 removed), contacts (1 added) changed on the watch since the last apply; not healed: watch.yaml does not set contacts"
    board.record(Self.event(.drift, clock, message: message, ["addresses": .array([.string("emergency"), .string("contacts")]),
                                                             "reconcile": .string("applied"), "pending": .integer(0)], id: "drift-1"),
                 for: ["room-12"])
    var applied: [String: JSONValue] = ["drift_id": .string("drift-1")]
    if !notHealed.isEmpty { applied["not_healed"] = .array(notHealed.map(JSONValue.string)) }
    board.record(Self.event(.applied, clock, message: "healed: 1 changed", applied), for: ["room-12"])
    board.record(Self.event(.offline, clock, message: "cannot reach the watch: gone"), for: ["room-12"])
    clock.advance(61)
    board.tick()
    let row = try #require(board.snapshot().rows.first)
    #expect(row.state == "offline")
    #expect(row.reasons.first?.contains("Offline longer than 1 min") == true, "\(row.reasons)")
    if notHealed.isEmpty {
      #expect(!row.reasons.contains { $0.contains("healing it") || $0.contains("changed on the watch") }, "\(row.reasons)")
      #expect(row.drift == nil || row.drift == 0)
    } else {
      #expect(row.reasons.contains { $0.contains("not healed") }, "\(row.reasons)")
    }
  }

  /// A watch given another device keeps its place on the page and in `/status.json`, its row
  /// afresh (nothing of the device before), and its SOS presses stay (fresh-eyes finding: it
  /// moved to the end).
  @Test func aWatchGivenAnotherDeviceKeepsItsPlace() throws {
    let clock = TestClock()
    let board = Self.board(clock)
    board.record(Self.event(.drift, clock, message: "1 resource changed on the watch since the last apply: contacts (1 added)",
                            ["addresses": .array([.string("contacts")])]), for: ["room-12"])
    board.record(Self.event(.sos, clock, message: "SOS", id: "e1"), for: ["room-12"])
    board.replace([StatusBoard.Member(name: "room-12", labels: ["ward-a"], device: "sim:w12-new.json")])
    let snapshot = board.snapshot()
    #expect(snapshot.rows.map(\.name) == ["room-12", "room-14"])
    #expect(snapshot.rows[0].device == "sim:w12-new.json" && snapshot.rows[0].drift == nil && snapshot.rows[0].reasons.isEmpty, "\(snapshot.rows[0])")
    #expect(snapshot.openSOS.count == 1, "\(snapshot.openSOS)")
  }

  /// Labels the fleet file gives a watch while the monitor runs reach its row (and the page's
  /// filter) at once; the rest of the row stays (fresh-eyes finding: only after a restart).
  @Test func newLabelsReachTheRowAndKeepItsState() throws {
    let clock = TestClock()
    let board = Self.board(clock)
    board.record(Self.event(.drift, clock, message: "1 resource changed on the watch since the last apply: contacts (1 added)",
                            ["addresses": .array([.string("contacts")])]), for: ["room-14"])
    let before = board.versions.grid
    board.relabel([StatusBoard.Member(name: "room-14", labels: ["floor=2", "wing=east"], device: "sim:w14.json")])
    let row = try #require(board.snapshot().rows.last)
    #expect(row.labels == ["floor=2", "wing=east"] && row.drift == 1, "\(row)")
    #expect(board.versions.grid > before)
    board.relabel(Self.members)
    #expect(board.snapshot().rows.map(\.labels) == [["ward-a"], []])
  }

  /// A restarted monitor going on with an outage already over the threshold lists the watch at
  /// once, not at the next `tick()` (fresh-eyes finding: offline without "needs attention" for
  /// about a second after a restart).
  @Test func anOutageOverTheThresholdNeedsAttentionWithoutWaitingForATick() throws {
    let clock = TestClock()
    let board = Self.board(clock)
    board.record(Self.event(.offline, clock, message: "cannot reach the watch: gone",
                            ["since": .string(MonitorEvent.timestamp(clock.now.addingTimeInterval(-61)))]), for: ["room-12"])
    let snapshot = board.snapshot()
    #expect(snapshot.attention.map(\.name) == ["room-12"], "\(snapshot.rows)")
    #expect(snapshot.rows.first?.reasons.first?.hasPrefix("Offline longer than 1 min: ") == true, "\(snapshot.rows)")
  }

  /// A drift the agent measured beside another state (a refusal, manifests edited and not
  /// published) is a reason too, after that state's: the wearer's change is not hidden.
  @Test(arguments: [("refused", "The apply was refused as unsafe"), ("new revision", "Its manifests give a revision the broker does not hand its agent (edited and not published yet, or another publisher's revision is on the broker)")])
  func aDriftBesideAnotherStateIsAReasonToo(state: String, first: String) throws {
    let clock = TestClock()
    let board = Self.board(clock)
    board.record(Self.event(.drift, clock, message: "1 resource changed on the watch since the last apply: emergency (1 removed, SOS switched off)",
                            ["agent": .string("a1"), "addresses": .array([.string("emergency")])]), for: ["room-12"])
    board.reported("room-12", AgentReport(state: state, note: "why", drift: 1, pending: nil))
    board.tick()
    let row = try #require(board.snapshot().rows.first)
    #expect(row.state == state)
    // The emergency list among what drifted: SOS at risk, said first.
    #expect(row.reasons.count == 3 && row.reasons.first?.hasPrefix("SOS at risk: ") == true && row.reasons[1].hasPrefix(first), "\(row.reasons)")
    #expect(row.reasons.last == "Changed on the watch since the last apply: emergency (1 removed, SOS switched off)", "\(row.reasons)")
  }

  /// A gap in the watch's events (`events_missed`: a bridge restarted, and what was pressed
  /// meanwhile is in no log) is an open card beside the SOS presses, until someone has asked the
  /// wearer and acknowledges it (fresh-eyes finding: the page said "Needs attention: none" after
  /// a press was lost so); the same event heard twice is one card.
  @Test func aGapInTheWatchsEventsIsOpenUntilAcknowledged() throws {
    let clock = TestClock()
    let board = Self.board(clock)
    let gap = Self.event(.error, clock, message: "the watch's events after boot-1-7 and before boot-2-1 never reached this monitor",
                         ["reason": .string("events_missed")], id: "gap-1")
    board.record(gap, for: ["room-12"])
    board.record(gap, for: ["room-12"])
    let open = board.snapshot().openSOS
    #expect(open.count == 1 && open.first?.missed?.hasPrefix("the watch's events after boot-1-7") == true, "\(open)")
    let html = StatusPageHTML.part(.sos, board.snapshot(), canAcknowledge: true)
    #expect(html.contains("SOS?") && html.contains("A press may have been missed") && html.contains("Ask the wearer, then acknowledge."), "\(html)")
    #expect(html.contains("Acknowledge possible missed SOS on room-12"), "\(html)")
    #expect(html.contains("Event gap-1 in the alerts and the log."), "\(html)")
    let acknowledged = try #require(board.acknowledge("gap-1", by: "Nurse Ada"))
    #expect(board.snapshot().openSOS.isEmpty)
    // Logged as a gap acknowledged, not as an SOS press (fresh-eyes fe91).
    let logged = acknowledged.acknowledgement
    #expect(logged.message == "the gap in the watch's events gap-1 (an SOS press may have been missed) on room-12 acknowledged by Nurse Ada on the status page",
            "\(logged.message)")
    #expect(logged.fields["missed"] == .bool(true) && logged.fields["sos_id"] == .string("gap-1"))
  }

  /// A gap's card outlives a restart of the monitor as an SOS press's does (fresh-eyes finding:
  /// "SOS?" cards vanished at a restart, nobody having acknowledged them).
  @Test func aGapsCardOutlivesARestartOfTheMonitor() throws {
    let path = try TSApplyBinary.temporaryDirectory().path + "/status-page.json"
    let clock = TestClock()
    var board = StatusBoard(members: Self.members, offlineThreshold: .seconds(60), storePath: path, now: { clock.now })
    board.record(Self.event(.error, clock, message: "the watch's events after 8ac586f6-7 and before 23c347b-1 never reached this monitor",
                            ["reason": .string("events_missed")], id: "gap-1"), for: ["room-12"])
    board = StatusBoard(members: Self.members, offlineThreshold: .seconds(60), storePath: path, now: { clock.now })
    let open = board.snapshot().openSOS
    #expect(open.map(\.id) == ["gap-1"] && open.first?.missed?.contains("after 8ac586f6-7 and before 23c347b-1") == true, "\(open)")
  }

  /// A drift heard as an event, then an agent status in sync, then the watch served by no agent
  /// (its status says nothing of what it holds): no drift figure from the old event (fresh-eyes
  /// finding: the page showed drift 1 for a watch no agent served, last in sync).
  @Test func aWatchNoAgentServesShowsNoDriftFromAnOldEvent() throws {
    let clock = TestClock()
    let board = Self.board(clock)
    board.record(Self.event(.drift, clock, message: "1 resource changed on the watch since the last apply: contacts (1 added)",
                            ["addresses": .array([.string("contacts")])]), for: ["room-12"])
    board.reported("room-12", AgentReport(state: "in sync", drift: 0, pending: 0, lastSeen: clock.now))
    board.tick()
    #expect(board.snapshot().rows.first?.drift == 0, "\(String(describing: board.snapshot().rows.first))")
    board.reported("room-12", AgentReport(state: "no status", note: "agent station no longer serves the watch room-12", drift: nil, pending: nil))
    board.tick()
    let row = try #require(board.snapshot().rows.first)
    #expect(row.state == "no status" && row.drift == nil, "\(row)")
  }

  /// A monitor that did not hear the agent's drift event (started or restarted after it) says
  /// the drift's words from the agent's status (`drift_summary`), not "1 change"; and they are
  /// the status's, newer than an event heard before (fresh-eyes finding).
  @Test func aDriftWhoseEventWasNotHeardIsSaidInTheStatussWords() throws {
    let clock = TestClock()
    let board = Self.board(clock)
    var report = AgentReport(state: "drift", drift: 1, pending: 0, driftAddresses: ["contacts"])
    report.driftSummary = "contacts (1 added)"
    board.reported("room-12", report)
    board.tick()
    #expect(board.snapshot().rows.first?.reasons == ["Changed on the watch since the last apply: contacts (1 added)"],
            "\(board.snapshot().rows.first?.reasons ?? [])")
    report.driftSummary = "contacts (1 removed)"
    board.reported("room-12", report)
    board.tick()
    #expect(board.snapshot().rows.first?.reasons == ["Changed on the watch since the last apply: contacts (1 removed)"],
            "\(board.snapshot().rows.first?.reasons ?? [])")
  }

  /// A manifest that cannot be used does not hide SOS switched off on the watch: the drift the
  /// monitor reports meanwhile (`reconcile: invalid`) puts "SOS at risk" first (fresh-eyes
  /// finding: the page said only "Its manifest cannot be used").
  @Test func sosAtRiskIsSaidFirstBesideABrokenManifest() throws {
    let clock = TestClock()
    let board = Self.board(clock)
    board.record(Self.event(.error, clock, message: "cannot use a.yaml: 3:1 bad", ["reason": .string("manifest")]), for: ["room-12"])
    board.record(Self.event(.drift, clock, message: "emergency (1 removed, SOS switched off) changed on the watch since the last apply; not healed",
                            ["addresses": .array([.string("emergency")]), "reconcile": .string("invalid"), "pending": .null]), for: ["room-12"])
    let row = try #require(board.snapshot().rows.first)
    #expect(row.state == "invalid" && row.drift == 1 && row.pending == nil, "\(row)")
    #expect(row.reasons.first?.hasPrefix("SOS at risk: ") == true && row.reasons.contains { $0.hasPrefix("Its manifest cannot be used") }, "\(row.reasons)")
    board.record(Self.event(.resolved, clock), for: ["room-12"])
    #expect(try #require(board.snapshot().rows.first).reasons.allSatisfy { !$0.hasPrefix("SOS at risk") })
  }

  /// A watch whose manifests give a revision not published — or whose desired document the
  /// broker lost, which the advice says to publish again (fresh-eyes fe100 #6) — names the
  /// staged rollout only while one is paused or interrupted (fresh-eyes finding: "while the
  /// fleet's staged rollout is paused …" beside every such watch, with no rollout, or one
  /// completed or aborted).
  @Test(arguments: [(nil, false), ("running", false), ("completed", false), ("aborted", false), ("paused", true), ("interrupted", true)]
        as [(String?, Bool)], ["new revision", "no desired document"])
  func aNewRevisionNamesTheRolloutOnlyWhileOneIsPaused(_ row: (phase: String?, named: Bool), state: String) throws {
    let (phase, named) = row
    let clock = TestClock()
    let board = Self.board(clock)
    board.rollout(phase.map { StatusBoard.Rollout(phase: $0, lines: [], json: .null) })
    let note = state == "new revision" ? "the manifests give revision cccc; the agent last applied bbbb"
      : "the broker holds no desired document for the watch; agent a01 still holds the watch to revision bbbb as it last applied it. "
        + "Publish the manifests again with 'tsapply apply --fleet'"
    board.reported("room-12", AgentReport(state: state, note: note, drift: 0, pending: nil))
    let row = try #require(board.snapshot().rows.first)
    let first = state == "new revision" ? "Its manifests give a revision the broker does not hand its agent (edited and not published yet, or another publisher's revision is on the broker)" : "The broker holds no desired document"
    let reason = try #require(row.reasons.first { $0.hasPrefix(first) }, "\(row.reasons)")
    #expect(reason.contains("staged rollout") == named, "\(reason)")
    if let phase, named { #expect(reason.contains("the fleet's staged rollout is \(phase): continue it with"), "\(reason)") }
  }

  /// A watch whose desired document the broker lost (its agent found none when it connected)
  /// needs attention and says why — not "in sync" (fresh-eyes fe83, fe87, fe90 #4) — with a drift
  /// its agent measured beside it.
  @Test func aWatchWithNoDesiredDocumentOnTheBrokerNeedsAttention() throws {
    let clock = TestClock()
    let board = Self.board(clock)
    board.reported("room-12", AgentReport(state: "no desired document", note: "the broker holds no desired document for the watch (…)",
                                          drift: 1, pending: nil, driftAddresses: ["contacts"]))
    let row = try #require(board.snapshot().rows.first)
    #expect(row.state == "no desired document" && row.needsAttention, "\(row)")
    #expect(row.reasons.first == "The broker holds no desired document for the watch (…)", "\(row.reasons)")
    #expect(row.reasons.contains { $0.hasPrefix("Changed on the watch since the last apply") }, "\(row.reasons)")
  }

  /// A revision its agent has not reported on while the agent is offline: it may have been
  /// published meanwhile, so the page does not say "not published yet" (fresh-eyes finding).
  @Test func aNewRevisionBehindAnOfflineAgentIsNotSaidUnpublished() throws {
    let clock = TestClock()
    let board = Self.board(clock)
    board.reported("room-12", AgentReport(state: "new revision", note: "why", drift: nil, pending: nil))
    board.record(Self.event(.offline, clock, message: "agent a1 is offline", ["agent": .string("a1")]), for: ["room-12"])
    board.tick()
    let row = try #require(board.snapshot().rows.first)
    #expect(row.reasons.contains { $0.hasPrefix("Its manifests give a revision its agent, offline, has not reported on: not published yet, or published while")
      && $0.contains("the watch may hold part of it") },
            "\(row.reasons)")
    #expect(!row.reasons.contains { $0.hasPrefix("Its manifests give a revision the broker does not hand its agent (edited and not published yet, or another publisher's revision is on the broker)") }, "\(row.reasons)")
  }

  @Test func anSOSStaysOpenUntilAcknowledgedOnceAndIsCountedOnce() throws {
    let clock = TestClock()
    let board = Self.board(clock)
    let sos = Self.event(.sos, clock, id: "sos-1-1")
    board.record(sos, for: ["room-12"])
    board.record(sos, for: ["room-12"])  // a replay of the same press
    var snapshot = board.snapshot()
    #expect(snapshot.openSOS.map(\.id) == ["sos-1-1"])
    #expect(snapshot.sosPresses == 1)
    #expect(board.acknowledge("sos-1-1", by: "  \n ") == nil, "a name is needed")
    clock.advance(30)
    let press = try #require(board.acknowledge("sos-1-1", by: "  Nurse\u{7}  Ada "))
    #expect(press.acknowledgedBy == "Nurse  Ada" && press.acknowledgedAt == clock.now)
    #expect(board.acknowledge("sos-1-1", by: "Ben") == nil, "acknowledged once")
    snapshot = board.snapshot()
    #expect(snapshot.openSOS.isEmpty && snapshot.acknowledged.map(\.acknowledgedBy) == ["Nurse  Ada"])
  }

  /// A phone number typed into the acknowledging name is masked as the monitor's other text is
  /// (in the `acknowledged` event, status.json and the page), unless `--show-sensitive`
  /// (fresh-eyes fe104 #1: kept whole in the log and on the page).
  @Test(arguments: [false, true])
  func aPhoneNumberInTheAcknowledgingNameIsMaskedUnlessSensitiveIsShown(showSensitive: Bool) throws {
    let clock = TestClock()
    let board = StatusBoard(members: Self.members, offlineThreshold: .seconds(60), showSensitive: showSensitive, now: { clock.now })
    board.record(Self.event(.sos, clock, id: "sos-1-1"), for: ["room-12"])
    #expect(board.acknowledger("Kim, rang +1 (555) 010-0199").contains("010-0199") == showSensitive)
    let press = try #require(board.acknowledge("sos-1-1", by: "Kim, rang +1 (555) 010-0199"))
    let by = press.acknowledgedBy ?? ""
    #expect(by.hasPrefix("Kim, rang ") && by.contains("010-0199") == showSensitive, "\(by)")
    #expect(press.acknowledgement.message.contains("010-0199") == showSensitive, "\(press.acknowledgement.message)")
    #expect(board.snapshot().acknowledged.first?.acknowledgedBy == by)
  }

  @Test func openPressesOutliveARestartOfTheMonitor() throws {
    let path = try TSApplyBinary.temporaryDirectory().path + "/status-page.json"
    let clock = TestClock()
    var board = StatusBoard(members: Self.members, offlineThreshold: .seconds(60), storePath: path, now: { clock.now })
    board.record(Self.event(.sos, clock, id: "sos-2-1"), for: ["room-12"])
    clock.advance(0.375)
    board.record(Self.event(.sos, clock, id: "sos-2-2"), for: ["room-14"])
    let pressed = try #require(board.snapshot().openSOS.first { $0.id == "sos-2-2" }?.time)
    _ = board.acknowledge("sos-2-1", by: "Ada")
    board = StatusBoard(members: Self.members, offlineThreshold: .seconds(60), storePath: path, now: { clock.now })
    #expect(board.snapshot().openSOS.map(\.id) == ["sos-2-2"])
    #expect(abs((board.snapshot().openSOS.first?.time ?? .distantPast).timeIntervalSince(pressed)) < 0.001, "milliseconds kept")
    #expect(board.snapshot().acknowledged.map(\.acknowledgedBy) == ["Ada"])
    board.record(Self.event(.sos, clock, id: "sos-2-2"), for: ["room-14"])  // replayed: not a second press
    #expect(board.snapshot().openSOS.count == 1)
    var info = stat()
    #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
  }

  /// A watch added to the fleet file while the monitor runs joins the table (after the others,
  /// once however often it is added), and its events and SOS presses show on it.
  @Test func aWatchAddedWhileRunningJoinsTheTable() {
    let clock = TestClock()
    let board = Self.board(clock)
    let before = board.snapshot().versions
    board.add([StatusBoard.Member(name: "room-14", device: "sim:w14.json"), StatusBoard.Member(name: "room-31", device: "sim:w31.json")])
    board.add([StatusBoard.Member(name: "room-31", device: "sim:w31.json")])
    #expect(board.snapshot().rows.map(\.name) == ["room-12", "room-14", "room-31"])
    #expect(board.snapshot().versions.grid == before.grid + 1)
    board.record(Self.event(.sos, clock, id: "sos-31-1"), for: ["room-31"])
    #expect(board.snapshot().openSOS.map(\.watch) == ["room-31"])
  }

  /// A watch removed from the fleet file while the monitor runs leaves the table (the others
  /// keep their state and events) but not its open SOS press, which waits for someone to
  /// acknowledge it; added again, it comes back as not read yet.
  @Test func aWatchRemovedWhileRunningLeavesTheTableButNotItsSOS() {
    let clock = TestClock()
    let board = Self.board(clock)
    board.record(Self.event(.sos, clock, id: "sos-14-1"), for: ["room-14"])
    board.checked("room-14", MonitorCheck(time: clock.now, hasRecord: true, drift: 1, pending: 0))
    Self.check(board, clock, 0, 2)
    let before = board.snapshot().versions
    board.remove(["room-14", "room-99"])
    board.remove(["room-14"])
    #expect(board.snapshot().rows.map(\.name) == ["room-12"])
    #expect(board.snapshot().versions.grid == before.grid + 1)
    #expect(board.snapshot().openSOS.map(\.id) == ["sos-14-1"])
    board.record(Self.event(.drift, clock, ["addresses": .array([.string("contacts")])]), for: ["room-14"])  // late: ignored
    board.record(Self.event(.offline, clock), for: ["room-12"])
    #expect(board.snapshot().rows.map(\.state) == ["offline"])
    board.add([StatusBoard.Member(name: "room-14", device: "sim:w14.json")])
    #expect(board.snapshot().rows.map(\.name) == ["room-12", "room-14"] && board.snapshot().rows.last?.state == "checking")
    #expect(board.acknowledge("sos-14-1", by: "Ada")?.watch == "room-14")
  }

  @Test func versionsMoveOnlyForThePartsThatChanged() {
    let clock = TestClock()
    let board = Self.board(clock)
    Self.check(board, clock, 0, 0)
    let before = board.versions
    clock.advance(1)
    Self.check(board, clock, 0, 0)  // last seen only
    #expect(board.versions.grid == before.grid + 1 && board.versions.gridState == before.gridState)
    #expect(board.versions.attention == before.attention && board.versions.sos == before.sos)
    Self.check(board, clock, 0, 0)  // nothing
    #expect(board.versions.grid == before.grid + 1)
    board.record(Self.event(.offline, clock), for: ["room-12"])
    #expect(board.versions.attention == before.attention, "not yet over the threshold")
    clock.advance(61)
    board.tick()
    #expect(board.versions.attention == before.attention + 1, "the threshold passed")
    let grid = board.versions.grid
    board.record(Self.event(.sos, clock, id: "sos-1-2"), for: ["room-14"])
    #expect(board.versions.sos == before.sos + 1 && board.versions.grid == grid, "an SOS changes no row")
  }

  @Test func aRolloutChangesTheAttentionPartOnlyWhenItChanges() throws {
    let clock = TestClock()
    let board = Self.board(clock)
    let before = board.versions
    let paused = StatusBoard.Rollout(phase: "paused", lines: ["Rollout (canary 1): paused after wave 1 of 2.", "  Continue with …"],
                                     json: .object(["phase": .string("paused")]))
    board.rollout(paused)
    board.rollout(paused)
    #expect(board.versions.attention == before.attention + 1 && board.versions.grid == before.grid)
    #expect(board.snapshot().rollout?.needsAttention == true)
    let object = try #require(try JSONSerialization.jsonObject(with: Data(board.snapshot().json.utf8)) as? [String: Any])
    #expect((object["rollout"] as? [String: Any])?["phase"] as? String == "paused")
    board.rollout(StatusBoard.Rollout(phase: "completed", lines: ["Rollout: completed."], json: .object(["phase": .string("completed")])))
    #expect(board.versions.attention == before.attention + 2 && board.snapshot().rollout?.needsAttention == false)
  }

  /// (phase, a person has to act)
  static let attentionCases: [(String, Bool)] = [
    ("running", false), ("waiting", false), ("completed", false),
    ("paused", true), ("interrupted", true), ("aborted", true), ("unknown", true),
  ]

  @Test(arguments: 0..<attentionCases.count) func aRolloutNeedsAttentionWhenAPersonHasToAct(_ index: Int) {
    let (phase, attention) = Self.attentionCases[index]
    #expect(StatusBoard.Rollout(phase: phase, lines: [], json: .null).needsAttention == attention, "\(phase)")
  }

  /// While the monitor cannot reach the broker every row is `not known`, and the snapshot says
  /// why and since when (the page's banner, `status.json`'s `monitor`); it clears when it is back.
  @Test func aMonitorWithoutItsBrokerSaysNoWatchIsKnown() throws {
    let clock = TestClock()
    let board = Self.board(clock)
    let before = board.versions
    board.record(Self.event(.offline, clock, message: "this monitor lost its connection to the broker mqtt://127.0.0.1:1883: gone",
                            ["broker": .string("mqtt://127.0.0.1:1883")]), for: [])
    let blind = board.snapshot()
    #expect(blind.rows.allSatisfy { $0.state == "not known" && $0.needsAttention }, "\(blind.rows.map(\.state))")
    #expect(blind.monitorProblem?.contains("cannot reach the broker mqtt://127.0.0.1:1883") == true, "\(blind.monitorProblem ?? "-")")
    #expect(blind.monitorProblem?.contains("SOS presses") == true)
    #expect(blind.versions.attention > before.attention && blind.versions.gridState > before.gridState)
    #expect(blind.json.contains(#""monitor":{"#), "\(blind.json)")
    clock.advance(5)
    board.record(Self.event(.online, clock, ["broker": .string("mqtt://127.0.0.1:1883")]), for: [])
    #expect(board.snapshot().monitorProblem == nil)
    #expect(board.snapshot().rows.allSatisfy { $0.state == "checking" }, "\(board.snapshot().rows.map(\.state))")
  }

  /// An SOS from a watch the board does not list (removed from the fleet file, its presses still
  /// delivered) is an open press under the name it is given (fe17 defect 3).
  @Test func anSOSFromAWatchNotListedIsOpenToo() throws {
    let clock = TestClock()
    let board = Self.board(clock)
    board.record(Self.event(.sos, clock, id: "sos-1-1"), for: ["room-15"])
    #expect(board.snapshot().openSOS.map(\.watch) == ["room-15"])
  }

  /// A reason quoting an agent's message keeps the times and the backup path it names (they are
  /// no phone numbers, and restoring needs the path whole); a phone number beside them is
  /// still masked (fe17 defect 10).
  @Test func timesAndBackupPathsInAReasonAreNotMasked() throws {
    let clock = TestClock()
    let board = Self.board(clock)
    let path = "/srv/state/watches/b0df3a9c1e2f4d5a/backups/20261205T111705.469Z.json"
    board.reported("room-12", AgentReport(state: "failed", note: "stored +44 7700 900456 as 0. Backup of the previous state: \(path)",
                                          drift: 0, pending: 0))
    board.reported("room-14", AgentReport(state: "retrying", note: "timeout; retrying at the next check, by 2026-12-05T11:17:33.735Z",
                                          drift: 0, pending: 1))
    let rows = board.snapshot().rows
    let failed = try #require(rows.first?.reasons.first), retrying = try #require(rows.last?.reasons.first)
    #expect(failed.hasSuffix(path) && !failed.contains("900456"), "\(failed)")
    #expect(retrying.hasSuffix("by 2026-12-05T11:17:33.735Z"), "\(retrying)")
  }

  @Test func phoneNumbersAreMaskedUnlessShowSensitive() throws {
    for show in [false, true] {
      let clock = TestClock()
      let board = Self.board(clock, showSensitive: show)
      board.reported("room-12", AgentReport(state: "failed", note: "the watch stored +44 7700 900456 as 0", drift: 0, pending: 0))
      let reason = try #require(board.snapshot().rows.first?.reasons.first)
      #expect(reason.contains("+44 7700 900456") == show, "\(reason)")
      #expect(board.snapshot().json.contains("900456") == show)
    }
  }

  @Test func statusJSONHoldsTheDocumentedKeys() throws {
    let clock = TestClock()
    let board = Self.board(clock)
    Self.check(board, clock, 0, 1)
    board.record(Self.event(.sos, clock, id: "sos-1-3"), for: ["room-12"])
    let object = try #require(try JSONSerialization.jsonObject(with: Data(board.snapshot().json.utf8)) as? [String: Any])
    #expect(Set(object.keys) == ["format_version", "time", "offline_threshold_seconds", "open_sos", "acknowledged_sos", "watches", "counts", "rollout",
                                  "monitor", "undelivered_of_removed"])
    #expect(object["rollout"] is NSNull, "no rollout: null")
    #expect(object["monitor"] is NSNull, "the monitor sees the watches: null")
    let watch = try #require((object["watches"] as? [[String: Any]])?.first)
    #expect(Set(watch.keys) == ["name", "labels", "device", "state", "needs_attention", "reasons", "last_seen", "offline_since",
                                "drift", "pending", "applied_revision"])
    #expect(watch["state"] as? String == "pending" && watch["needs_attention"] as? Bool == true)
    #expect((object["open_sos"] as? [[String: Any]])?.first?["watch"] as? String == "room-12")
    let counts = try #require(object["counts"] as? [String: Any])
    #expect((counts["watches_by_state"] as? [String: Int])?["pending"] == 1 && counts["sos_open"] as? Int == 1)
  }

  /// Every state a row can be in is counted (fresh-eyes finding: `no status`, the state of
  /// every watch nothing was published to yet, was in no count, so `/metrics` added up to 3 of
  /// 300 watches). (the agent's report's state, the row's state)
  @Test(arguments: ["in sync", "drift", "pending", "new revision", "no status", "refused", "failed", "invalid", "retrying"])
  func everyStateOfARowIsCounted(_ state: String) throws {
    let clock = TestClock()
    let board = Self.board(clock)
    board.reported("room-12", AgentReport(state: state, note: "why", drift: state == "drift" ? 1 : 0, pending: state == "pending" ? 1 : 0))
    let snapshot = board.snapshot()
    let object = try #require(try JSONSerialization.jsonObject(with: Data(snapshot.json.utf8)) as? [String: Any])
    let counted = try #require((object["counts"] as? [String: Any])?["watches_by_state"] as? [String: Int])
    #expect(counted.values.reduce(0, +) == snapshot.rows.count && counted[snapshot.rows.first?.state ?? ""] == 1, "\(counted)")
    #expect(StatusBoard.states.contains(snapshot.rows.first?.state ?? ""), "\(snapshot.rows.first?.state ?? "")")
  }

  @Test func metricsAreInThePrometheusTextFormat() {
    let clock = TestClock()
    let board = Self.board(clock)
    Self.check(board, clock, 0, 0)
    board.record(Self.event(.sos, clock, id: "sos-1-4"), for: ["room-12"])
    board.record(Self.event(.error, clock, ["reason": .string("delivery")]), for: ["room-12"])
    board.record(Self.event(.applied, clock), for: ["room-12"])
    let text = board.snapshot().metrics
    for line in ["tsapply_watches{state=\"in sync\"} 1", "tsapply_watches{state=\"checking\"} 1", "tsapply_watches{state=\"offline\"} 0",
                 "tsapply_sos_presses_total 1", "tsapply_sos_open 1", "tsapply_deliveries_failed_total 1",
                 "tsapply_applies_total{result=\"applied\"} 1", "tsapply_applies_total{result=\"refused\"} 0",
                 "# TYPE tsapply_sos_presses_total counter", "# TYPE tsapply_watches gauge"] {
      #expect(text.split(separator: "\n").contains(Substring(line)), "\(line)")
    }
    // Every sample line is NAME{LABELS} VALUE or NAME VALUE; every family is typed before its samples.
    var typed: Set<String> = []
    for line in text.split(separator: "\n") {
      if line.hasPrefix("# TYPE ") { typed.insert(String(line.split(separator: " ")[2])) }
      if line.hasPrefix("#") { continue }
      let name = String(line.prefix { $0 != "{" && $0 != " " })
      #expect(typed.contains(name), "\(line)")
      #expect(Int(line.split(separator: " ").last ?? "") != nil, "\(line)")
    }
  }
}
