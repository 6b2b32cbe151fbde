import Foundation
import Testing
import TSModel
import TSTestSupport
import TSMonitor

/// `Alerts`: one alert when a failure state starts, per watch and kind, across restarts; a
/// `recovered` when it clears; the `--events` filter; delivery through the outbox.
@Suite struct AlertsTests {
  final class Sink: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [MonitorEvent] = []
    func add(_ event: MonitorEvent) { lock.withLock { events.append(event) } }
    var alerts: [MonitorEvent] { lock.withLock { events.filter { $0.kind == .alert } } }
    /// `KIND` or `recovered:KIND`, per watch, in order.
    var summary: [String] {
      alerts.map { event in
        let kind = event.fields["alert"].flatMap { if case .string(let text) = $0 { text } else { nil } } ?? "?"
        let recovers = event.fields["recovers"].flatMap { if case .string(let text) = $0 { ":" + text } else { nil } } ?? ""
        return "\(event.watch) \(kind)\(recovers)"
      }
    }
  }

  /// A notifier that records what it was given (and fails while `down`).
  final class Recorder: Notifier, @unchecked Sendable {
    private let lock = NSLock()
    private var bodies: [String] = []
    var down = false
    var key: String { "recorder" }
    var name: String { "recorder" }
    func deliver(id: String, body: String, attempt: Int) async -> String? {
      lock.withLock {
        if down { return "down" }
        bodies.append(id)
        return nil
      }
    }
    var ids: [String] { lock.withLock { bodies } }
  }

  static func alerts(_ directory: String, clock: TestClock, sink: Sink, notifiers: [any Notifier] = [],
                     filter: String = "all") throws -> Alerts {
    Alerts(directory: directory, notifiers: notifiers, filter: try Alerts.parseFilter(filter), offlineAfter: .seconds(60),
           policy: Backoff.Policy(initial: .milliseconds(10), maximum: .milliseconds(20)),
           emit: { sink.add($0) }, notice: { _ in }, now: { clock.now })
  }

  static func event(_ kind: MonitorEvent.Kind, _ clock: TestClock, _ fields: [String: JSONValue] = [:]) -> MonitorEvent {
    MonitorEvent(time: clock.now, watch: "sim:/x", kind: kind, message: "\(kind.rawValue) happened", fields: fields)
  }

  static func check(_ clock: TestClock, drift: Int) -> MonitorCheck { MonitorCheck(time: clock.now, hasRecord: true, drift: drift, pending: 0) }

  @Test func eachFailureStateAlertsOnceAndRecoversOnce() throws {
    let directory = try TSApplyBinary.temporaryDirectory().path
    let clock = TestClock(), sink = Sink()
    let alerts = try Self.alerts(directory, clock: clock, sink: sink)
    let drift = Self.event(.drift, clock, ["addresses": .array([.string("contacts")]), "reconcile": .string("unsafe")])
    alerts.record(drift, for: ["w1"])
    alerts.record(drift, for: ["w1"])  // the same drift reported again: no new alert
    alerts.checked("w1", Self.check(clock, drift: 1))
    alerts.record(Self.event(.error, clock, ["reason": .string("keeps_drifting_back")]), for: ["w2"])
    alerts.record(Self.event(.error, clock, ["reason": .string("apply")]), for: ["w3"])
    alerts.record(Self.event(.applied, clock), for: ["w3"])
    alerts.record(Self.event(.offline, clock, ["agent": .string("a1")]), for: ["w4", "w5"])
    alerts.record(Self.event(.offline, clock), for: ["w6"])
    clock.advance(59)
    alerts.tick()
    #expect(!sink.summary.contains("w6 offline"), "not before the threshold")
    clock.advance(2)
    alerts.tick()
    alerts.tick()
    alerts.record(Self.event(.resolved, clock), for: ["w1"])
    alerts.record(Self.event(.online, clock, ["agent": .string("a1")]), for: ["w4", "w5"])
    alerts.record(Self.event(.online, clock), for: ["w6"])
    alerts.checked("w2", Self.check(clock, drift: 0))
    #expect(sink.summary == [
      "w1 drift", "w1 refused", "w2 drifting_back", "w3 failed", "w3 recovered:failed", "w3 applied", "agent:a1 agent_offline",
      "w6 offline", "w1 recovered:drift", "w1 recovered:refused", "agent:a1 recovered:agent_offline", "w6 recovered:offline",
      "w2 recovered:drifting_back",
    ])
    #expect(Set(sink.alerts.map(\.id)).count == sink.alerts.count, "ids are unique")
  }

  /// Events a bridge's stream skipped twice (`error`, `reason: events_missed`) are a critical
  /// alert, once per report, with nothing to recover: an SOS among them was not forwarded.
  @Test func eventsMissedOnTheWayAreACriticalAlert() throws {
    let directory = try TSApplyBinary.temporaryDirectory().path
    let clock = TestClock(), sink = Sink()
    let alerts = try Self.alerts(directory, clock: clock, sink: sink, filter: "critical")
    let missed = Self.event(.error, clock, ["reason": .string("events_missed"), "after": .string("b-1"), "before": .string("b-3")])
    alerts.record(missed, for: ["w1"])
    alerts.record(Self.event(.error, clock, ["reason": .string("listener_refused")]), for: ["w1"])
    #expect(sink.summary == ["w1 events_missed"], "\(sink.summary)")
    #expect(sink.alerts.first?.fields["severity"] == .string("critical"))
  }

  /// A watch whose events are not being heard (`error`, `reason: events_down`: its bridge's
  /// stream kept breaking) is a critical condition, raised once however often it is reported,
  /// and recovered by the `online` that says they are heard again (`events: resumed`) or by
  /// the watch reached anew. Before, only the page said it: a webhook with `--events critical`
  /// was never told that no SOS press of the watch could reach it.
  @Test(arguments: [["events": JSONValue.string("resumed")], [:]])
  func eventsNotHeardAreACriticalConditionUntilHeardAgain(_ online: [String: JSONValue]) throws {
    let directory = try TSApplyBinary.temporaryDirectory().path
    let clock = TestClock(), sink = Sink()
    let alerts = try Self.alerts(directory, clock: clock, sink: sink, filter: "critical,recovered")
    let down = Self.event(.error, clock, ["reason": .string("events_down"), "error": .string("the stream was cut")])
    alerts.record(down, for: ["w1"])
    alerts.record(down, for: ["w1"])
    #expect(sink.summary == ["w1 events_down"], "\(sink.summary)")
    #expect(sink.alerts.first?.fields["severity"] == .string("critical"))
    // Heard from a stream that has not held yet: still open (a stream that keeps breaking raises it once).
    alerts.record(Self.event(.online, clock, ["events": .string("reopened")]), for: ["w1"])
    alerts.record(down, for: ["w1"])
    #expect(sink.summary == ["w1 events_down"], "\(sink.summary)")
    alerts.record(Self.event(.online, clock, online), for: ["w1"])
    #expect(sink.summary == ["w1 events_down", "w1 recovered:events_down"], "\(sink.summary)")
  }

  /// A drift of the emergency list (SOS switched off, emergency contacts changed) is critical:
  /// `sos_drift` beside `drift` (fresh-eyes finding: SOS switched off on a watch was an `info`
  /// alert, filtered out by `--events warning,critical`). A later drift report that no longer
  /// names the list ends it; the drift's end ends both.
  @Test func aDriftOfTheEmergencyListIsCritical() throws {
    let directory = try TSApplyBinary.temporaryDirectory().path
    let clock = TestClock(), sink = Sink()
    let alerts = try Self.alerts(directory, clock: clock, sink: sink, filter: "critical")
    let emergency = Self.event(.drift, clock, ["addresses": .array([.string("emergency"), .string("contacts")])])
    alerts.record(emergency, for: ["w1"])
    alerts.record(emergency, for: ["w2"])
    alerts.record(Self.event(.drift, clock, ["addresses": .array([.string("contacts")])]), for: ["w1"])
    alerts.record(Self.event(.resolved, clock), for: ["w2"])
    #expect(sink.summary == ["w1 sos_drift", "w1 drift", "w2 sos_drift", "w2 drift", "w1 recovered:sos_drift", "w2 recovered:drift",
                             "w2 recovered:sos_drift"], "\(sink.summary)")
    let raised = try #require(sink.alerts.first)
    #expect(raised.fields["severity"] == .string("critical"))
    #expect(raised.message.hasPrefix("SOS at risk: the watch's SOS switch or emergency contacts changed on the watch"), "\(raised.message)")
  }

  /// The drift's end ends `sos_drift` beside `drift` however it is told — a `resolved` event,
  /// a check that finds no drift, an agent's status of the watch in sync — so the next time
  /// the same watch's SOS is switched off raises a critical alert again (fresh-eyes finding:
  /// after an `apply --fleet` wrote the emergency list back, `sos_drift` stayed open and the
  /// second SOS-off was an info alert only).
  @Test(arguments: ["resolved", "check", "in sync", "pending", "new revision"])
  func theDriftsEndEndsSOSAtRisk(told: String) throws {
    let directory = try TSApplyBinary.temporaryDirectory().path
    let clock = TestClock(), sink = Sink()
    let alerts = try Self.alerts(directory, clock: clock, sink: sink, filter: "critical")
    let emergency = Self.event(.drift, clock, ["addresses": .array([.string("emergency")])])
    alerts.record(emergency, for: ["w1"])
    switch told {
    case "resolved": alerts.record(Self.event(.resolved, clock), for: ["w1"])
    case "check": alerts.checked("w1", Self.check(clock, drift: 0))
    default: alerts.reported("w1", AgentReport(state: told, drift: 0, pending: 0))
    }
    clock.advance(5)
    alerts.record(emergency, for: ["w1"])
    #expect(sink.summary == ["w1 sos_drift", "w1 drift", "w1 recovered:drift", "w1 recovered:sos_drift", "w1 sos_drift", "w1 drift"],
            "\(sink.summary)")
  }

  /// The check that finds the emergency list drifted raises `sos_drift` at once, before a heal
  /// of it ends and the drift event goes out (a slow link made it 37 s late; a monitor killed
  /// mid-heal never sent it: fresh-eyes finding). The drift event then opens nothing twice.
  @Test func theCheckThatFindsSOSAtRiskRaisesItBeforeTheHeal() throws {
    let directory = try TSApplyBinary.temporaryDirectory().path
    let clock = TestClock(), sink = Sink()
    let alerts = try Self.alerts(directory, clock: clock, sink: sink, filter: "critical")
    alerts.checked("w1", MonitorCheck(time: clock.now, hasRecord: true, drift: 1, pending: 0, sosAtRisk: true))
    #expect(sink.summary == ["w1 sos_drift"], "\(sink.summary)")
    alerts.record(Self.event(.drift, clock, ["addresses": .array([.string("emergency")]), "reconcile": .string("applied")]), for: ["w1"])
    alerts.record(Self.event(.resolved, clock), for: ["w1"])
    #expect(sink.summary == ["w1 sos_drift", "w1 drift", "w1 recovered:drift", "w1 recovered:sos_drift"], "\(sink.summary)")
  }

  /// What an agent read before a condition began cannot end it: a monitor started anew meets,
  /// on a broker restored from an older save, the agent's retained status from before the
  /// `invalid` (or the drift) its predecessor kept open in `alerts.json`. That status raises no
  /// `recovered` (a helper's finding: `invalid` closed for a moment, then raised again); the
  /// agent's status read after the condition began ends it. A status without `last_seen` (an
  /// earlier agent) ends it as before.
  @Test(arguments: ["invalid", "drift"])
  func aStatusReadBeforeAConditionBeganDoesNotEndIt(condition: String) throws {
    let directory = try TSApplyBinary.temporaryDirectory().path
    let clock = TestClock(), sink = Sink()
    let read = clock.now
    clock.advance(10)
    let first = try Self.alerts(directory, clock: clock, sink: sink)
    if condition == "invalid" {
      first.record(Self.event(.error, clock, ["agent": .string("a1"), "result": .string("invalid")]), for: ["w1"])
    } else {
      first.reported("w1", AgentReport(state: "drift", drift: 1, pending: 0, lastSeen: clock.now, driftAddresses: ["contacts"]))
    }
    #expect(sink.summary == ["w1 \(condition)"], "\(sink.summary)")
    clock.advance(5)
    let restarted = Sink()
    let alerts = try Self.alerts(directory, clock: clock, sink: restarted)
    alerts.reported("w1", AgentReport(state: "in sync", drift: 0, pending: 0, lastSeen: read))
    #expect(restarted.summary.isEmpty, "a status read before the \(condition) began: \(restarted.summary)")
    alerts.reported("w1", AgentReport(state: "in sync", drift: 0, pending: 0, lastSeen: clock.now))
    #expect(restarted.summary == ["w1 recovered:\(condition)"], "\(restarted.summary)")
    // Without a time of reading (an earlier agent), the status is believed as before.
    alerts.reported("w2", AgentReport(state: "drift", drift: 1, pending: 0, lastSeen: clock.now, driftAddresses: ["contacts"]))
    alerts.reported("w2", AgentReport(state: "in sync", drift: 0, pending: 0))
    #expect(restarted.summary.suffix(2) == ["w2 drift", "w2 recovered:drift"], "\(restarted.summary)")
  }

  /// Over MQTT the drift event is not kept on the broker: a monitor started after SOS was
  /// switched off (or after the broker restarted) hears only the agent's retained status, whose
  /// drifted addresses raise `sos_drift` all the same (fresh-eyes finding: only an info `drift`).
  @Test func anAgentsStatusNamingTheEmergencyListRaisesSOSAtRisk() throws {
    let directory = try TSApplyBinary.temporaryDirectory().path
    let clock = TestClock(), sink = Sink()
    let alerts = try Self.alerts(directory, clock: clock, sink: sink, filter: "critical")
    alerts.reported("w1", AgentReport(state: "drift", drift: 1, pending: 0, driftAddresses: ["emergency"]))
    alerts.reported("w2", AgentReport(state: "drift", drift: 1, pending: 0, driftAddresses: ["contacts"]))
    alerts.reported("w1", AgentReport(state: "in sync", drift: 0, pending: 0))
    #expect(sink.summary == ["w1 drift", "w1 sos_drift", "w2 drift", "w1 recovered:drift", "w1 recovered:sos_drift"], "\(sink.summary)")
    let raised = try #require(sink.alerts.first { $0.fields["alert"] == .string("sos_drift") })
    #expect(raised.fields["severity"] == .string("critical") && raised.message.hasPrefix("SOS at risk:"), "\(raised.message)")
  }

  /// A drift of the emergency list that leaves whom a press reaches as it was (short names
  /// dropped on the watch: `sos_at_risk: false`, in a monitor's drift event or an agent's
  /// status) is a `drift`, not the critical `sos_drift`; an agent older than the field is
  /// still read by the emergency list among what drifted.
  @Test func anEmergencyDriftThatReachesTheSameNumbersIsNoSOSAtRisk() throws {
    let directory = try TSApplyBinary.temporaryDirectory().path
    let clock = TestClock(), sink = Sink()
    let alerts = try Self.alerts(directory, clock: clock, sink: sink, filter: "all")
    alerts.record(Self.event(.drift, clock, ["addresses": .array([.string("emergency")]), "sos_at_risk": .bool(false)]), for: ["w1"])
    var unchanged = AgentReport(state: "drift", drift: 1, pending: 0, driftAddresses: ["emergency"])
    unchanged.sosAtRisk = false
    alerts.reported("w2", unchanged)
    #expect(sink.summary == ["w1 drift", "w2 drift"], "\(sink.summary)")
    // The same list with a number changed: at risk, as the event or the status says.
    alerts.record(Self.event(.drift, clock, ["addresses": .array([.string("emergency")]), "sos_at_risk": .bool(true)]), for: ["w1"])
    unchanged.sosAtRisk = true
    alerts.reported("w2", unchanged)
    alerts.reported("w3", AgentReport(state: "drift", drift: 1, pending: 0, driftAddresses: ["emergency"]))
    #expect(sink.summary == ["w1 drift", "w2 drift", "w1 sos_drift", "w2 sos_drift", "w3 drift", "w3 sos_drift"], "\(sink.summary)")
  }

  /// A heal or an agent's apply that fails for a reason that can pass (`reconcile: retrying`) is
  /// tried again, so it raises no `failed` alert; when it then fails for good, it does.
  @Test func aRetriedFailureIsNoFailedAlertUntilItFailsForGood() throws {
    let directory = try TSApplyBinary.temporaryDirectory().path
    let clock = TestClock(), sink = Sink()
    let alerts = try Self.alerts(directory, clock: clock, sink: sink)
    alerts.record(Self.event(.drift, clock, ["addresses": .array([.string("contacts")]), "reconcile": .string("retrying")]), for: ["w1"])
    alerts.record(Self.event(.error, clock, ["reason": .string("apply"), "reconcile": .string("retrying")]), for: ["w1"])
    alerts.record(Self.event(.error, clock, ["agent": .string("a1"), "reconcile": .string("retrying")]), for: ["w2"])
    #expect(sink.summary == ["w1 drift"], "\(sink.summary)")
    alerts.record(Self.event(.error, clock, ["reason": .string("apply"), "reconcile": .string("failed")]), for: ["w1"])
    alerts.record(Self.event(.error, clock, ["agent": .string("a1")]), for: ["w2"])
    #expect(sink.summary == ["w1 drift", "w1 failed", "w2 failed"], "\(sink.summary)")
  }

  /// A watch removed from the fleet file closes what it was in (no recovery can be seen any
  /// more), saying why, and is not reported offline later.
  @Test func aRemovedWatchClosesItsConditionsAndIsNotReportedOfflineLater() throws {
    let directory = try TSApplyBinary.temporaryDirectory().path
    let clock = TestClock(), sink = Sink()
    let alerts = try Self.alerts(directory, clock: clock, sink: sink)
    alerts.record(Self.event(.drift, clock, ["addresses": .array([.string("contacts")]), "reconcile": .string("failed")]), for: ["w1"])
    alerts.record(Self.event(.offline, clock), for: ["w1", "w2"])
    alerts.record(Self.event(.removed, clock, ["fleet": .string("fleet.yaml")]), for: ["w1"])
    clock.advance(120)
    alerts.tick()
    #expect(sink.summary == ["w1 drift", "w1 failed", "w1 recovered:drift", "w1 recovered:failed", "w2 offline"], "\(sink.summary)")
    let closed = sink.alerts.filter { $0.fields["recovers"] != nil }
    #expect(closed.map(\.message) == ["closed: drift: the watch is no longer monitored", "closed: failed: the watch is no longer monitored"],
            "\(closed.map(\.message))")
    #expect(closed.allSatisfy { $0.fields["cause_kind"] == .string("removed") })
  }

  /// A manifest or fleet file that cannot be used stops drift checking: an `invalid` alert
  /// (once, however often the monitor reports it), recovered by the next check that reads the
  /// watch with a usable manifest, or an agent's status other than `invalid`. A check that read
  /// the watch while the manifest still cannot be used ends its outage, not the `invalid`.
  @Test func anUnusableManifestIsAnAlertUntilACheckWorksAgain() throws {
    let directory = try TSApplyBinary.temporaryDirectory().path
    let clock = TestClock(), sink = Sink()
    let alerts = try Self.alerts(directory, clock: clock, sink: sink)
    let broken = Self.event(.error, clock, ["reason": .string("manifest")])
    alerts.record(broken, for: ["w1", "w2"])
    alerts.record(broken, for: ["w1", "w2"])
    alerts.checked("w2", MonitorCheck(time: clock.now, hasRecord: true, drift: 0, pending: 0, manifestUsable: false))
    alerts.checked("w1", Self.check(clock, drift: 1))
    alerts.reported("w3", AgentReport(state: "invalid", note: "3:1 bad", drift: 0, pending: 0))
    alerts.reported("w3", AgentReport(state: "failed", note: "timeout", drift: 0, pending: 1))
    #expect(sink.summary == ["w1 invalid", "w2 invalid", "w1 recovered:invalid", "w3 invalid", "w3 failed", "w3 recovered:invalid"],
            "\(sink.summary)")
    #expect(try Alerts.parseFilter("warning").contains(.invalid))
  }

  /// The broker lost the watch's desired document (`no desired document`) while its agent goes
  /// on measuring drift against the revision it applied: the wearer's change is a `drift` alert,
  /// and its end ends it (fresh-eyes fe103 #2: no alert until someone published again).
  @Test func driftBesideALostDesiredDocumentIsAnAlert() throws {
    let directory = try TSApplyBinary.temporaryDirectory().path
    let clock = TestClock(), sink = Sink()
    let alerts = try Self.alerts(directory, clock: clock, sink: sink)
    alerts.reported("r07", AgentReport(state: "no desired document", note: "the broker holds no desired document", drift: 1, pending: 0))
    #expect(sink.summary == ["r07 drift"], "\(sink.summary)")
    alerts.reported("r07", AgentReport(state: "no desired document", note: "the broker holds no desired document", drift: 0, pending: 0))
    #expect(sink.summary == ["r07 drift", "r07 recovered:drift"], "\(sink.summary)")
  }

  /// An agent's refusal is one `refused` alert (its error event says `result: refused`), not
  /// also `failed`; the drift the agent goes on measuring after it is an alert too; and manifests
  /// edited but not published end neither the refusal nor a drift whose count is not known.
  @Test func anAgentsRefusalIsRefusedOnlyAndAnUnpublishedEditEndsNothing() throws {
    let directory = try TSApplyBinary.temporaryDirectory().path
    let clock = TestClock(), sink = Sink()
    let alerts = try Self.alerts(directory, clock: clock, sink: sink)
    alerts.record(Self.event(.error, clock, ["agent": .string("a2"), "result": .string("refused")]), for: ["r20"])
    alerts.reported("r20", AgentReport(state: "refused", note: "removes 1 reminder", drift: 0, pending: nil))
    alerts.reported("r20", AgentReport(state: "refused", note: "removes 1 reminder", drift: 1, pending: nil))
    alerts.reported("r20", AgentReport(state: "new revision", note: "not published", drift: nil, pending: nil))
    alerts.record(Self.event(.error, clock, ["agent": .string("a2"), "result": .string("invalid")]), for: ["r21"])
    #expect(sink.summary == ["r20 refused", "r20 drift", "r21 invalid"], "\(sink.summary)")
    #expect(sink.alerts.first { $0.fields["alert"] == .string("drift") }?.message == "its agent reports 1 resource changed on the watch since the last apply")
    // The count known again and 0 (the wearer undid it): the drift is over; the refusal stands.
    alerts.reported("r20", AgentReport(state: "new revision", note: "not published", drift: 0, pending: nil))
    #expect(sink.summary == ["r20 refused", "r20 drift", "r21 invalid", "r20 recovered:drift"], "\(sink.summary)")
    // Published with allow_destroy and applied, the wearer's drift left as it is: the refusal is
    // over, the drift stands (fresh-eyes finding: `refused` kept open after the revision applied).
    alerts.reported("r20", AgentReport(state: "drift", drift: 1, pending: 0, driftAddresses: ["reminder.custom[\"Lunch\"]"]))
    #expect(sink.summary == ["r20 refused", "r20 drift", "r21 invalid", "r20 recovered:drift", "r20 drift", "r20 recovered:refused"],
            "\(sink.summary)")
  }

  /// A watch no agent serves any more (`no status` from its agent's report): `offline` once that
  /// has lasted the threshold, saying its presses reach no one, and recovered when an agent
  /// serves it again; one taken over within the threshold raises nothing (fresh-eyes finding:
  /// the page said so, the alerts never did).
  @Test func aWatchNoAgentServesIsOfflineOnceThatLastsTheThreshold() throws {
    let directory = try TSApplyBinary.temporaryDirectory().path
    let clock = TestClock(), sink = Sink()
    let alerts = try Self.alerts(directory, clock: clock, sink: sink)
    let unserved = AgentReport(state: "no status", note: "agent a2 no longer serves the watch w05", drift: nil, pending: nil)
    alerts.reported("w04", unserved)
    clock.advance(30)
    alerts.reported("w04", AgentReport(state: "in sync", drift: 0, pending: 0))
    alerts.reported("w05", unserved)
    clock.advance(59)
    alerts.tick()
    #expect(sink.summary.isEmpty, "\(sink.summary)")
    clock.advance(2)
    alerts.tick()
    #expect(sink.summary == ["w05 offline"], "\(sink.summary)")
    let raised = try #require(sink.alerts.first)
    #expect(raised.message.contains("no agent has served the watch for longer than") && raised.message.contains("its SOS presses reach no one")
            && raised.message.contains("agent a2 no longer serves the watch w05"), "\(raised.message)")
    alerts.reported("w05", AgentReport(state: "in sync", drift: 0, pending: 0))
    #expect(sink.summary == ["w05 offline", "w05 recovered:offline"], "\(sink.summary)")
  }

  /// A watch no agent served, taken over by another agent: the takeover's `no status` (moved,
  /// the new agent not reported yet: `servedBy` names it) is served, and the new agent's first
  /// status ends the `offline` alert (fresh-eyes fe102 #7: it stayed open for good).
  @Test func anUnservedWatchTakenOverByAnotherAgentIsRecovered() throws {
    let directory = try TSApplyBinary.temporaryDirectory().path
    let clock = TestClock(), sink = Sink()
    let alerts = try Self.alerts(directory, clock: clock, sink: sink)
    alerts.reported("w05", AgentReport(state: "no status", note: "agent a2 no longer serves the watch w05", drift: nil, pending: nil))
    clock.advance(61)
    alerts.tick()
    #expect(sink.summary == ["w05 offline"], "\(sink.summary)")
    var moved = AgentReport(state: "no status", note: "moved to agent a3, which has not reported on it yet", drift: nil, pending: nil)
    moved.servedBy = ["a3"]
    // Its status still the one agent a2 made before it stopped serving the watch.
    moved.lastSeen = clock.now.addingTimeInterval(-600)
    alerts.reported("w05", moved)
    var reported = AgentReport(state: "in sync", drift: 0, pending: 0)
    reported.lastSeen = clock.now
    alerts.reported("w05", reported)
    #expect(sink.summary == ["w05 offline", "w05 recovered:offline"], "\(sink.summary)")
    clock.advance(120)
    alerts.tick()
    #expect(sink.summary == ["w05 offline", "w05 recovered:offline"], "\(sink.summary)")
  }

  @Test func openConditionsOutliveARestartSoNothingIsRaisedTwice() throws {
    let directory = try TSApplyBinary.temporaryDirectory().path
    let clock = TestClock(), sink = Sink()
    var alerts = try Self.alerts(directory, clock: clock, sink: sink)
    alerts.record(Self.event(.offline, clock), for: ["w1"])
    clock.advance(61)
    alerts.tick()
    let first = try #require(sink.alerts.last?.id)
    // A new process: the watch is still offline, and is reported so again.
    alerts = try Self.alerts(directory, clock: clock, sink: sink)
    alerts.record(Self.event(.offline, clock), for: ["w1"])
    clock.advance(61)
    alerts.tick()
    #expect(sink.summary == ["w1 offline"])
    alerts.record(Self.event(.online, clock), for: ["w1"])
    #expect(sink.summary == ["w1 offline", "w1 recovered:offline"])
    #expect(sink.alerts.last?.fields["opened_id"] == .string(first))
    // It goes offline again: a new alert with a new id.
    alerts.record(Self.event(.offline, clock), for: ["w1"])
    clock.advance(61)
    alerts.tick()
    #expect(sink.alerts.last.map { $0.id != first && $0.id.hasSuffix("-offline-2") } == true)
  }

  /// A monitor killed after queuing an alert and before saving its state: the restarted one
  /// knows the condition is open from the outbox, so the watch's return is a recovery.
  @Test(arguments: ["offline", "refused"])
  func aConditionQueuedButNotSavedBeforeACrashStillRecovers(_ kind: String) async throws {
    let directory = try TSApplyBinary.temporaryDirectory().path
    let clock = TestClock(), sink = Sink(), recorder = Recorder()
    recorder.down = true
    var alerts = try Self.alerts(directory, clock: clock, sink: sink, notifiers: [recorder])
    let before = FileManager.default.contents(atPath: directory + "/alerts.json")
    if kind == "offline" {
      alerts.record(Self.event(.offline, clock), for: ["w1"])
      clock.advance(61)
      alerts.tick()
    } else {
      alerts.record(Self.event(.drift, clock, ["reconcile": .string("unsafe")]), for: ["w1"])
    }
    let opened = try #require(sink.alerts.last?.id)
    #expect(opened.contains("-\(kind)-1"))
    // The crash: the state file as it was before the alert, the outbox entry kept.
    if let before { try before.write(to: URL(fileURLWithPath: directory + "/alerts.json")) } else { unlink(directory + "/alerts.json") }
    alerts = try Self.alerts(directory, clock: clock, sink: sink, notifiers: [recorder])
    if kind == "offline" {
      alerts.record(Self.event(.online, clock), for: ["w1"])
    } else {
      alerts.checked("w1", Self.check(clock, drift: 0))
    }
    #expect(sink.alerts.last?.fields["recovers"] == .string(kind), "\(sink.summary)")
    #expect(sink.alerts.last?.fields["opened_id"] == .string(opened))
    // A third start with the recovery still queued opens nothing again.
    alerts = try Self.alerts(directory, clock: clock, sink: sink, notifiers: [recorder])
    let count = sink.alerts.count
    alerts.record(Self.event(.online, clock), for: ["w1"])
    alerts.checked("w1", Self.check(clock, drift: 0))
    #expect(sink.alerts.count == count, "\(sink.summary)")
  }

  @Test func theFilterChoosesWhatIsDeliveredAndDeliveryOutlastsAnOutage() async throws {
    let directory = try TSApplyBinary.temporaryDirectory().path
    let clock = TestClock(), sink = Sink(), recorder = Recorder()
    recorder.down = true
    let alerts = try Self.alerts(directory, clock: clock, sink: sink, notifiers: [recorder], filter: "warning,recovered")
    await alerts.start()
    alerts.record(Self.event(.drift, clock, ["addresses": .array([.string("contacts")]), "reconcile": .string("off")]), for: ["w1"])
    alerts.record(Self.event(.error, clock, ["reason": .string("apply")]), for: ["w2"])
    alerts.record(Self.event(.resolved, clock), for: ["w1", "w2"])
    try await Task.sleep(for: .milliseconds(100))
    recorder.down = false
    await alerts.idle()
    let failed = try #require(sink.alerts.first { $0.fields["alert"] == .string("failed") })
    let recovered = try #require(sink.alerts.first { $0.fields["recovers"] == .string("failed") })
    // drift is info (not let through), so neither it nor its recovery is delivered.
    #expect(Set(recorder.ids) == [failed.id, recovered.id] && recorder.ids.count == 2, "\(recorder.ids)")
    #expect(((try? FileManager.default.contentsOfDirectory(atPath: directory + "/outbox")) ?? []).filter { $0.hasSuffix(".json") }.isEmpty)
    await alerts.stop(grace: .seconds(1))
  }

  @Test(arguments: [("sos", ["sos", "test"]), ("critical", ["sos", "monitor_offline", "sos_drift", "events_missed", "events_down", "test"]), ("failed, offline", ["failed", "offline", "test"]),
                    ("all", Alerts.Kind.allCases.map(\.rawValue))])
  func eventsNamesKindsAndSeverities(_ text: String, _ kinds: [String]) throws {
    #expect(try Alerts.parseFilter(text).map(\.rawValue).sorted() == kinds.sorted())
  }

  @Test func anUnknownKindIsRefusedNamingWhatIsAccepted() {
    #expect(throws: NotifierError.self) { try Alerts.parseFilter("sos,fire") }
    do { _ = try Alerts.parseFilter("fire") } catch { #expect(error.message.contains("unknown kind 'fire'") && error.message.contains("agent_offline")) }
  }
}
