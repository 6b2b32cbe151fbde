import Foundation
import TSEngine
import TSModel
import TSPlan

/// What a fleet operation did to one watch, in the terms of the summary table.
public enum FleetVerdict: Sendable, Equatable {
  /// Planned or applied: nothing to change.
  case noChanges
  /// Planned: these changes would be made.
  case changes(PlanCounts)
  /// Applied and verified.
  case applied(PlanCounts)
  /// `drift`: this many resources changed on the watch since the last apply; `pending`
  /// changes the manifest would still make.
  case drift(count: Int, pending: Int, hasRecord: Bool)
  /// Over MQTT: not applied yet (the agent is offline, or did not report within `--wait`).
  case pending(String)
  /// Over MQTT: when `--wait` ended, the agent was still retrying the revision after a failure
  /// that can pass (`WatchStatus.Result.retrying`). Not applied: it counts against the exit
  /// status, as a failure does, but the agent keeps trying.
  case retrying(String)
  /// Over MQTT, planned: its manifests give a revision its agent has not applied.
  case publish(String)
  /// Failed; the watch's section says why.
  case failed(String)
  /// The watch could not be read (`EngineError.device`: out of reach, or no watch there), so
  /// nothing was planned or written; the section says what its records and its monitor last
  /// knew (`OutOfReach`). Over MQTT: its agent cannot read it. The word `status --fleet` uses;
  /// it counts against the exit status, as a failure does (`isFailure`), but is not called failed.
  case unreachable(String)
  /// Refused by the safety gate (`EngineError.unsafe`): its plan is unsafe for an unattended
  /// apply (`--auto-approve` without `--allow-destroy`, docs/apply.md "The safety gate") and
  /// nothing was written; the reason is the gate's verdict. Not applied: it counts against the
  /// exit status, as a failure does (`isFailure`), but is not called failed.
  case refused(String)
  /// Over MQTT, `drift`: what the watch holds now is not known — its agent is applying another
  /// revision, cannot reach it, is offline, or has not reported — so it is neither counted as
  /// drifted nor as without drift; it counts against the exit status, as a failure does.
  case unknown(String)
  /// Over MQTT, `drift`: its agent answered the desired document `invalid` (the broker's is an
  /// older publication than it handled, or it has errors for this watch), so nothing of it was
  /// applied — the word `status --fleet` uses — while the watch's drift since the revision its
  /// agent applied is known, as the agent measured it (`drift`, resources changed; `pending`,
  /// what the manifests would change on the state it reported). Not a failure: the drift is
  /// what `drift --fleet` reports, and it exits 2 for it (fresh-eyes fe95 #1: "failed", the
  /// drift and SOS at risk hidden). The reason says the drift's words and SOS at risk.
  case invalid(String, drift: Int, pending: Int)

  /// This verdict with its reason (of `pending`, `retrying`, `publish`, `failed`, `refused`,
  /// `unknown`) passed through `change`; the others as they are.
  public func mappingReason(_ change: (String) -> String) -> FleetVerdict {
    switch self {
    case .pending(let reason): .pending(change(reason))
    case .retrying(let reason): .retrying(change(reason))
    case .publish(let reason): .publish(change(reason))
    case .failed(let reason): .failed(change(reason))
    case .unreachable(let reason): .unreachable(change(reason))
    case .refused(let reason): .refused(change(reason))
    case .unknown(let reason): .unknown(change(reason))
    case .invalid(let reason, let drift, let pending): .invalid(change(reason), drift: drift, pending: pending)
    case .noChanges, .changes, .applied, .drift: self
    }
  }

  /// The word in the table's result column.
  public var word: String {
    switch self {
    case .noChanges: "no changes"
    case .changes: "changes"
    case .applied: "applied"
    case .drift(let count, _, let hasRecord): !hasRecord ? "no record" : count == 0 ? "no drift" : "drift"
    case .pending: "pending"
    case .retrying: "retrying"
    case .publish: "to publish"
    case .failed: "failed"
    case .unreachable: "unreachable"
    case .refused: "refused"
    case .unknown: "not known"
    case .invalid: "invalid"
    }
  }

  /// The reason a verdict gives in words (`failed: REASON`, `to publish: REASON`, …); `nil` for
  /// the verdicts that are counts.
  public var reason: String? {
    switch self {
    case .failed(let reason), .unreachable(let reason), .refused(let reason), .retrying(let reason), .pending(let reason),
         .publish(let reason), .unknown(let reason), .invalid(let reason, _, _): reason
    case .noChanges, .changes, .applied, .drift: nil
    }
  }

  /// How the totals line counts watches with this verdict, after the number: `2 applied`,
  /// `1 with changes`, `3 with no drift` — right for any count, unlike the bare result word
  /// (`1 changes`).
  public var tallyWord: String { tallyWord(pendingCounts: false) }

  /// `tallyWord` of a `drift` report that counts pending changes (`drift --pending`) when
  /// `pendingCounts`: a watch with no drift but changes pending is `with pending changes`, not
  /// `with no drift` beside an exit status 2.
  public func tallyWord(pendingCounts: Bool) -> String {
    switch self {
    case .noChanges: "with no changes"
    case .changes: "with changes"
    case .drift(let count, let pending, let hasRecord):
      !hasRecord ? "with no record" : count > 0 ? "drifted" : pendingCounts && pending > 0 ? "with pending changes" : "with no drift"
    case .invalid(_, let count, let pending):
      count > 0 ? "invalid with drift" : pendingCounts && pending > 0 ? "invalid with pending changes" : "invalid"
    case .applied, .pending, .retrying, .publish, .failed, .unreachable, .refused, .unknown: word
    }
  }

  /// Whether the watch failed, was refused (`isRefused`) or could not be read
  /// (`isUnreachable`): it was not done, and counts against the exit status.
  public var isFailure: Bool {
    switch self {
    case .failed, .refused, .unreachable: true
    default: false
    }
  }

  /// Whether the watch could not be read (`unreachable`).
  public var isUnreachable: Bool { if case .unreachable = self { true } else { false } }

  /// Whether the safety gate refused the watch's unsafe plan (`refused`).
  public var isRefused: Bool { if case .refused = self { true } else { false } }

  /// Whether the agent was still retrying the watch when the wait ended.
  public var isRetrying: Bool { if case .retrying = self { true } else { false } }

  /// Whether what the watch holds is not known (`unknown`).
  public var isUnknown: Bool { if case .unknown = self { true } else { false } }

  /// Whether the watch has (or had) changes: planned, applied, drifted or pending.
  public var hasChanges: Bool { hasChanges(pendingCounts: false) }

  /// `hasChanges`, where a `drift` report that counts pending changes (`drift --pending`,
  /// `pendingCounts`) counts a watch with changes pending as one with changes.
  public func hasChanges(pendingCounts: Bool) -> Bool {
    switch self {
    case .changes, .applied, .pending, .retrying, .publish: true
    case .drift(let count, let pending, _), .invalid(_, let count, let pending): count > 0 || pendingCounts && pending > 0
    case .noChanges, .failed, .unreachable, .refused, .unknown: false
    }
  }

  /// The changes column: `+1 ~2 -0` for plans and applies, `3 changed` for drift.
  public var changesText: String {
    switch self {
    case .changes(let counts), .applied(let counts): "+\(counts.add) ~\(counts.change) -\(counts.destroy)"
    case .drift(let count, let pending, let hasRecord):
      (hasRecord ? "\(count) drifted" : "-") + (pending > 0 ? ", \(pending) pending" : "")
    case .invalid(_, let count, let pending): "\(count) drifted" + (pending > 0 ? ", \(pending) pending" : "")
    case .noChanges: "+0 ~0 -0"
    case .pending, .retrying, .failed, .unreachable, .refused, .publish, .unknown: "-"
    }
  }
}

/// One row of a fleet report: a watch, its verdict and time, and its details as JSON.
public struct FleetWatchReport: Sendable {
  /// The watch's name in the fleet.
  public var name: String
  /// Its device spec.
  public var device: String
  /// What happened.
  public var verdict: FleetVerdict
  /// How long it took.
  public var elapsed: Duration
  /// Details for `--json`: `plan`, `drift`, `error`, `status`… (merged into the watch's object).
  public var details: [String: JSONValue]
  /// The plan made (or applied) for the watch, when there is one: a review shows its body
  /// (`HumanPlanRenderer.body`) once for every watch with the same one.
  public var plan: Plan?
  /// What a review compares of the watch's own plan, when `plan` is not its own but the plan
  /// with the same body kept for its group (`FleetReviewPlans`, a review in bounded memory);
  /// `nil` when `plan` is the watch's own.
  public var reviewed: FleetReviewedPlan?
  /// The watch's own text for a person (its errors with their source lines, an apply's log, a
  /// drift report), shown by a review when there is no plan to show, or the watch failed.
  public var section: String
  /// Display names of the manifests merged for the watch: its own (if any), then the defaults.
  public var manifests: [String]
  /// Over MQTT, the state its plan was made against: the watch as its agent last read it
  /// (`plan --fleet`, docs/fleet.md "Reported states"); `nil` for a plan made against the watch.
  public var basis: FleetStateBasis? = nil
  /// For an apply that failed after writing, what reached the watch (`2 of 5 applied`, `written, not verified`), shown in the
  /// table's Changes column instead of `-`, as the watch's history says it.
  public var reached: String? = nil
  /// Whether some of the change reached the watch and the rest did not (yet): the watch holds
  /// part of what it was given (`reached` says how much). A pending watch that does counts
  /// against a fleet apply's exit status (docs/fleet.md "Exit status").
  public var partlyApplied = false
  /// Whether the watch is pending (its agent offline or silent) while holding part of the change
  /// (`partlyApplied`): a watch left mixed, which a fleet apply does not report as done.
  public var isPartlyPending: Bool { partlyApplied && { if case .pending = verdict { true } else { false } }() }
  /// Whether the watch may hold part of the change and nothing says how much: its agent went
  /// offline during the wait without reporting on it (killed mid-apply, say). Counted against a
  /// fleet apply's exit status as not known.
  public var mayHoldPart = false
  /// Whether its agent could not tell whether some of the change reached the watch (a write's
  /// answer lost and its list not read back, `WatchStatus.outcomeUnknown`): what it holds of the
  /// revision is not known — a staged rollout counts it so, not "without it".
  public var outcomeUnknown = false

  /// The table's Time column instead of `elapsed`, for a row this run did not make: `earlier
  /// run` for a watch of a staged rollout's earlier wave, its result as the rollout recorded it.
  public var timeNote: String? = nil

  /// The table's Changes column: what reached the watch for an apply that failed part-way;
  /// `not known` for one that may hold part of the change with nothing saying how much (`-`
  /// says nothing was written: fresh-eyes finding, a watch holding 1 of 3 changes showed `-`);
  /// else the verdict's counts.
  public var changesText: String { reached ?? (mayHoldPart || outcomeUnknown ? "not known" : verdict.changesText) }

  /// A row.
  public init(name: String, device: String, verdict: FleetVerdict, elapsed: Duration, details: [String: JSONValue] = [:],
              plan: Plan? = nil, section: String = "", manifests: [String] = []) {
    self.name = name
    self.device = device
    self.verdict = verdict
    self.elapsed = elapsed
    self.details = details
    self.plan = plan
    self.section = section
    self.manifests = manifests
  }

  /// Seconds, to a tenth.
  public var elapsedText: String { timeNote ?? String(format: "%.1fs", elapsed.seconds) }
}

/// Whose reading of a watch a plan over MQTT was made against, and how old it was then
/// (`ReportedState`): a plan shows what publishing would change as of that read.
public struct FleetStateBasis: Sendable, Equatable {
  /// The agent that read the watch.
  public var agent: String
  /// When, as the agent reported it (ISO 8601).
  public var readAt: String
  /// How long before the plan; `nil` when `readAt` is not a time.
  public var age: Duration?
  /// Whether the agent was online at the plan (`nil`: not known).
  public var agentOnline: Bool?

  /// The reading `report` describes, `age` old (`now` minus its `read_at`; a time ahead of `now`,
  /// a clock out of step, is 0 old), its agent online or not (`agentOnline`). `confirmedAt`: a
  /// later time the agent read the watch again (its status's `last_seen`): an agent publishes a
  /// state only when it changed, so the same state still held then, and the reading is that recent.
  public init(_ report: ReportedState, now: Date, agentOnline: Bool? = nil, confirmedAt: Date? = nil) {
    agent = report.agent
    let read = [report.readTime, confirmedAt].compactMap { $0 }.max()
    readAt = read.flatMap { time in confirmedAt == time && report.readTime != time ? InternetTime.text(time) : nil } ?? report.readAt
    age = read.map { .seconds(max(0, Int64(now.timeIntervalSince($0)))) }
    self.agentOnline = agentOnline
  }

  /// `2026-12-05 01:20:03Z (12m4s ago; the agent is offline)`.
  var when: String {
    let notes = [age.map { "\(DurationText.text($0)) ago" }, agentOnline == false ? "the agent is offline" : nil].compactMap { $0 }
    return readAt.replacingOccurrences(of: "T", with: " ") + (notes.isEmpty ? "" : " (" + notes.joined(separator: "; ") + ")")
  }

  /// `as agent a01 read it at 2026-12-05 01:20:03Z (12m4s ago)`.
  public var text: String { "as agent \(ControlCharacters.escaped(agent)) read it at \(when)" }

  /// `{agent, read_at, age_seconds, agent_online}` for `--json` (`reported_state`).
  public var json: JSONValue {
    .object(["agent": .string(agent), "read_at": .string(readAt), "age_seconds": age.map { .integer(Int($0.components.seconds)) } ?? .null,
             "agent_online": agentOnline.map(JSONValue.bool) ?? .null])
  }

  /// What a group of watches' plans were made against, by its oldest reading: `as their agents
  /// last read them, the oldest at 2026-12-05 01:18:00Z (14m ago) by agent a01`; `nil` when none has a basis.
  static func text(_ rows: [FleetWatchReport]) -> String? {
    let bases = rows.compactMap(\.basis)
    guard let oldest = bases.max(by: { ($0.age ?? .zero) < ($1.age ?? .zero) }) else { return nil }
    if rows.count == 1 { return oldest.text }
    return "as their agents last read them, the oldest at \(oldest.when) by agent \(ControlCharacters.escaped(oldest.agent))"
  }

  /// `headline` with the basis of `rows` after it (`FleetStateBasis.text(_:)`), as one line:
  /// `No changes. As agent a01 read it at …`, `~ contacts { … }; as agent a01 read it at …`;
  /// `headline` alone when none has a basis.
  static func line(_ headline: String, _ rows: [FleetWatchReport]) -> String {
    guard let basis = text(rows) else { return headline }
    return headline.hasSuffix(".") ? headline + " " + basis.prefix(1).uppercased() + basis.dropFirst() + "." : headline + "; " + basis
  }

  /// The caveat a review over MQTT ends with, ending with a newline.
  static let caveat = "Planned against each watch as its agent last read it (its age beside it): what publishing would change "
    + "as of that read. A change on the watch since is not in it, nor is drift since the agent's last apply "
    + "('tsapply drift --fleet' reports its agents' counts).\n"
}

/// The end of a fleet run: the summary table (watch, result, changes, time), the totals line,
/// the JSON report, and the aggregated exit status.
public struct FleetReport: Sendable {
  /// `plan`, `apply`, `drift` or `status`.
  public var operation: String
  /// The fleet file as named.
  public var fleetFile: String
  /// One row per watch, in fleet order.
  public var watches: [FleetWatchReport]
  /// For a staged rollout, where it stands (`RolloutRecord.json`), under `rollout` in the JSON.
  public var rollout: JSONValue? = nil
  /// For `drift --pending`: pending changes count as changes in the totals and the JSON
  /// summary's `with_changes`, as they do in the exit status.
  public var pendingCounts = false

  /// A report of `operation` over `watches`.
  public init(operation: String, fleetFile: String, watches: [FleetWatchReport], pendingCounts: Bool = false) {
    self.operation = operation
    self.fleetFile = fleetFile
    self.watches = watches
    self.pendingCounts = pendingCounts
  }

  /// Whether any watch failed or was refused.
  public var hasFailures: Bool { watches.contains { $0.verdict.isFailure } }
  /// Whether any watch has changes (planned, applied, pending or drifted).
  public var hasChanges: Bool { watches.contains { $0.verdict.hasChanges(pendingCounts: pendingCounts) } }

  /// The summary table and totals, ending with a newline.
  public func table() -> String {
    rows() + "\n" + totals
  }

  /// The table's rows under their header (watch, result, changes, time), ending with a newline.
  func rows() -> String {
    let rows = watches.map { [ControlCharacters.escaped($0.name), $0.verdict.word, $0.changesText, $0.elapsedText] }
    return FleetText.columns(["Watch", "Result", "Changes", "Time"], rows)
  }

  /// The totals line, ending with a newline: `3 watches: 2 applied, 1 failed.`
  public var totals: String {
    var counts: [(String, Int)] = []
    for row in watches {
      let tally = row.verdict.tallyWord(pendingCounts: pendingCounts)
      if let index = counts.firstIndex(where: { $0.0 == tally }) { counts[index].1 += 1 } else { counts.append((tally, 1)) }
    }
    return counted(watches.count, "watch", "watches") + ": " + counts.map { "\($0.1) \($0.0)" }.joined(separator: ", ") + ".\n"
  }

  /// The JSON report: `{format_version, operation, fleet, watches: [{name, device, result,
  /// changes, elapsed_seconds, manifests, …details}], summary: {total, failed, refused, unreachable, with_changes, by_result}}`
  /// (`failed`, `refused` and `unreachable` each count their own result; all count against the exit status),
  /// keys sorted, ending with a newline.
  public func json() -> String {
    let rows: [JSONValue] = watches.map { row in
      var object = row.details
      object["name"] = .string(row.name)
      object["device"] = .string(row.device)
      object["result"] = .string(row.verdict.word)
      object["elapsed_seconds"] = .number((row.elapsed.seconds * 1000).rounded() / 1000)
      if !row.manifests.isEmpty { object["manifests"] = .array(row.manifests.map(JSONValue.string)) }
      switch row.verdict {
      case .changes(let counts), .applied(let counts):
        object["changes"] = .object(["add": .integer(counts.add), "change": .integer(counts.change), "destroy": .integer(counts.destroy)])
      case .drift(let count, let pending, let hasRecord):
        object["counts"] = .object(["drift": .integer(count), "pending": .integer(pending)])
        object["has_record"] = .bool(hasRecord)
      case .invalid(let reason, let count, let pending):
        object["reason"] = .string(reason)
        object["counts"] = .object(["drift": .integer(count), "pending": .integer(pending)])
      case .pending(let reason), .retrying(let reason), .failed(let reason), .unreachable(let reason), .refused(let reason), .publish(let reason),
           .unknown(let reason):
        object["reason"] = .string(reason)
      case .noChanges:
        object["changes"] = .object(["add": .integer(0), "change": .integer(0), "destroy": .integer(0)])
      }
      return .object(object)
    }
    var byResult: [String: JSONValue] = [:]
    for row in watches {
      if case .integer(let count) = byResult[row.verdict.word] { byResult[row.verdict.word] = .integer(count + 1) } else { byResult[row.verdict.word] = .integer(1) }
    }
    var root: [String: JSONValue] = [
      "format_version": .string("1"),
      "operation": .string(operation),
      "fleet": .string(fleetFile),
      "watches": .array(rows),
      "summary": .object([
        "total": .integer(watches.count),
        "failed": .integer(watches.filter { $0.verdict.isFailure && !$0.verdict.isRefused && !$0.verdict.isUnreachable }.count),
        "refused": .integer(watches.filter(\.verdict.isRefused).count),
        "unreachable": .integer(watches.filter(\.verdict.isUnreachable).count),
        "with_changes": .integer(watches.filter { $0.verdict.hasChanges(pendingCounts: pendingCounts) }.count),
        "by_result": .object(byResult),
      ]),
    ]
    if let rollout { root["rollout"] = rollout }
    return FleetText.json(.object(root))
  }
}

extension Duration {
  /// The duration in seconds.
  public var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
