import Foundation
import TSModel

extension StatusBoard {
  /// Every state a row can have, in the page's order (and `/metrics`' series, each always present).
  public static let states = ["checking", "in sync", "drift", "pending", "new revision", "no desired document", "no record", "no status", "offline", "not known",
                              "invalid", "failed", "refused", "retrying"]
  /// Results counted in `tsapply_applies_total`.
  public static let applyResults = ["applied", "failed", "refused"]
}

extension StatusBoard.Snapshot {
  /// `GET /status.json` (docs/monitor.md "Status page"): `{format_version: "1", time,
  /// offline_threshold_seconds, open_sos: [{id, watch, time, heard_at?, not_delivered?}], acknowledged_sos: [{id,
  /// watch, time, heard_at?, acknowledged_by, acknowledged_at}], watches: [{name, labels, device, state,
  /// needs_attention, reasons, last_seen, offline_since, drift, pending, applied_revision}],
  /// counts: {watches_by_state, needing_attention, sos_presses, sos_open, deliveries_failed,
  /// applies}, rollout: the fleet's staged rollout as `status --fleet --json` gives it, or null,
  /// monitor: {problem, since} while the monitor cannot see the watches (it lost the broker), or
  /// null, undelivered_of_removed: [the page's words]}`; times ISO 8601 UTC with milliseconds, unknowns `null`. Compact, keys sorted.
  public var json: String {
    func stamp(_ date: Date?) -> JSONValue { date.map { .string(MonitorEvent.timestamp($0)) } ?? .null }
    func press(_ press: StatusBoard.SOSPress) -> JSONValue {
      var object: [String: JSONValue] = ["id": .string(press.id), "watch": .string(press.watch), "time": stamp(press.time)]
      if press.heardAt != nil { object["heard_at"] = stamp(press.heardAt) }
      if let missed = press.missed { object["missed"] = .string(missed) }
      if !press.notDelivered.isEmpty {
        object["not_delivered"] = .array(press.notDelivered.map { .object(["notifier": .string($0.notifier), "since": stamp($0.since)]) })
      }
      if press.acknowledgedAt != nil {
        object["acknowledged_by"] = press.acknowledgedBy.map(JSONValue.string) ?? .null
        object["acknowledged_at"] = stamp(press.acknowledgedAt)
      }
      return .object(object)
    }
    let watches: [JSONValue] = rows.map { row in
      .object([
        "name": .string(row.name), "labels": .array(row.labels.map(JSONValue.string)), "device": .string(row.device),
        "state": .string(row.state), "needs_attention": .bool(row.needsAttention), "reasons": .array(row.reasons.map(JSONValue.string)),
        "last_seen": stamp(row.lastSeen), "offline_since": stamp(row.offlineSince),
        "drift": row.drift.map(JSONValue.integer) ?? .null, "pending": row.pending.map(JSONValue.integer) ?? .null,
        "applied_revision": row.appliedRevision.map(JSONValue.string) ?? .null,
      ])
    }
    let byState = Dictionary(uniqueKeysWithValues: StatusBoard.states.map { ($0, JSONValue.integer(states[$0] ?? 0)) })
    let counts: JSONValue = .object([
      "watches_by_state": .object(byState), "needing_attention": .integer(attention.count), "sos_presses": .integer(sosPresses),
      "sos_open": .integer(openSOS.count), "deliveries_failed": .integer(deliveriesFailed),
      "applies": .object(Dictionary(uniqueKeysWithValues: StatusBoard.applyResults.map { ($0, JSONValue.integer(applies[$0] ?? 0)) })),
    ])
    return MonitorEvent.compact(.object([
      "format_version": .string("1"), "time": stamp(time), "offline_threshold_seconds": .integer(Int(Backoff.seconds(offlineThreshold))),
      "open_sos": .array(openSOS.map(press)), "acknowledged_sos": .array(acknowledged.map(press)), "watches": .array(watches),
      "counts": counts, "rollout": rollout?.json ?? .null,
      "monitor": monitorProblem.map { .object(["problem": .string($0), "since": stamp(monitorProblemSince)]) } ?? .null,
      "undelivered_of_removed": .array(undeliveredOfRemoved.map(JSONValue.string)),
    ])) + "\n"
  }

  /// `GET /metrics`, in the Prometheus text format 0.0.4: `tsapply_watches{state}` (every state,
  /// 0 included), `tsapply_watches_needing_attention`, `tsapply_sos_open`,
  /// `tsapply_sos_presses_total`, `tsapply_deliveries_failed_total`, `tsapply_applies_total{result}`,
  /// `tsapply_events_total{kind}`. Counters count from the monitor's start.
  public var metrics: String {
    var lines: [String] = []
    func family(_ name: String, _ type: String, _ help: String, _ samples: [(labels: String, value: Int)]) {
      lines.append("# HELP \(name) \(help)")
      lines.append("# TYPE \(name) \(type)")
      for sample in samples { lines.append("\(name)\(sample.labels) \(sample.value)") }
    }
    func label(_ name: String, _ value: String) -> String {
      "{\(name)=\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        .replacingOccurrences(of: "\n", with: "\\n") + "\"}"
    }
    let counted = states
    family("tsapply_watches", "gauge", "Watches by state, as the status page shows them.",
           StatusBoard.states.map { (label("state", $0), counted[$0] ?? 0) })
    family("tsapply_watches_needing_attention", "gauge", "Watches listed under needs attention.", [("", attention.count)])
    family("tsapply_sos_open", "gauge", "SOS presses not acknowledged yet.", [("", openSOS.count)])
    family("tsapply_sos_presses_total", "counter", "SOS presses seen since the monitor started.", [("", sosPresses)])
    family("tsapply_deliveries_failed_total", "counter",
           "Deliveries to a notifier that failed (each event and notifier once; they are retried).", [("", deliveriesFailed)])
    family("tsapply_applies_total", "counter", "Applies (heals, agents' applies) by result since the monitor started.",
           StatusBoard.applyResults.map { (label("result", $0), applies[$0] ?? 0) })
    family("tsapply_events_total", "counter", "Monitor events by kind since the monitor started.",
           MonitorEvent.Kind.allCases.map { (label("kind", $0.rawValue), events[$0.rawValue] ?? 0) })
    return lines.joined(separator: "\n") + "\n"
  }
}
