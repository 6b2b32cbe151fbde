import Foundation
import TSApply
import TSEngine
import TSModel
import TSMonitor
import TSMQTT
import TSPlan

/// One watch in `tsapply status --fleet`: when it was last applied and last seen, its drift and
/// pending changes, in one word and in numbers.
public struct FleetStatusRow: Sendable {
  /// The watch's name in the fleet.
  public var name: String
  /// Its device spec.
  public var device: String
  /// `in sync`, `drift`, `pending`, `no record`, `new revision`, `applying`, `retrying`,
  /// `refused`, `invalid`, `failed`, `unreachable`, `no status`, `offline`, `no desired
  /// document` (over MQTT: the broker lost the desired document the agent holds the watch to).
  /// Over MQTT a watch whose agent is offline is never `retrying` (nobody is trying): `pending`,
  /// with what of the revision it holds (`WatchStatus.reachedText`) when known.
  public var state: String
  /// When tsapply (or its agent) last applied to it, ISO 8601.
  public var lastApplied: String?
  /// When it was last read, ISO 8601.
  public var lastSeen: String?
  /// Resources changed on the watch since the last apply.
  public var drift: Int?
  /// Changes its manifests would still make.
  public var pending: Int?
  /// Its agent, over MQTT, and whether that is online.
  public var agent: (id: String, online: Bool)?
  /// Why it is unreachable, failed or pending, in words.
  public var note: String?
  /// Whether its drift changes whom an SOS press reaches (`ResourceChange.putsSOSAtRisk`: the SOS
  /// switch or the emergency numbers): said in its note (`shownNote`) and as `sos_at_risk` in
  /// JSON, so a row reading "drift 1" is not taken for a contact added (fresh-eyes finding).
  public var sosAtRisk = false
  /// The note as shown: `note`, after "SOS at risk: …" when `sosAtRisk`.
  public var shownNote: String? {
    guard sosAtRisk else { return note }
    return Alerts.sosAtRisk + (note.map { "; " + $0 } ?? "")
  }
  /// Whether the watch holds what its manifests give now (their revision), as far as known:
  /// directly, its last apply left them (whatever is pending only undoes drift); over MQTT, its
  /// agent reported applying their revision, or an apply of it that failed after all of its
  /// changes reached the watch (`WatchStatus.holdsRevisionWritten`). `nil`: unknown (not read,
  /// no status, an apply not reported on). A staged rollout's summary counts it (`RolloutRecord.observe`).
  public var holdsManifests: Bool? = nil
  /// Whether tsapply holds a record of the watch but never wrote to it (`LastWrite.never`: it
  /// matched already, or, over MQTT, its agent applied with nothing to change and reports no
  /// time): Last applied is `none recorded (matched already)`, `null` in JSON, never a made-up time.
  public var neverApplied = false
  /// "Last applied" as the table shows it: the time, `none recorded (matched already)`, or `-`.
  public var lastAppliedText: String { lastApplied ?? (neverApplied ? LastWrite.neverText : "-") }
  /// Whether the watch is pending with part of its revision on it (its agent stopped part-way
  /// and is offline: the note says how much): a watch left mixed, which `status --fleet`
  /// counts against its exit status.
  public var partlyApplied = false
  /// Over MQTT, for a watch whose agent refused its revision after earlier attempts at it wrote
  /// part of it: what of it the watch holds (`1 of 2 applied`, `WatchStatus.reachedText`);
  /// `nil` when the refusal left the watch as the last apply did. `status --fleet` then never
  /// says that nothing was written to it.
  public var refusedHoldingPart: String? = nil
  /// Over MQTT, whether the watch is pending with its agent offline and nothing says what of the
  /// revision reached it (the agent may have stopped in the middle of an apply): what it holds
  /// is not known, which `status --fleet` counts against its exit status as `apply --fleet` does.
  public var mayHoldPart = false
  /// `invalid` because the broker's desired document is an older publication than its agent
  /// handled (`WatchStatus.staleDesired`: the broker went back to an older save), not because
  /// of the watch or its manifests.
  public var staleDesired = false
  /// Over MQTT, whether no online agent serves the watch although its last status came from an
  /// online one (`FleetStatus.unservedNote`, in `note`): nothing checks it or applies to it, so
  /// its last status says nothing of it now, and publishing changes nothing on it.
  public var servedByNoOne = false
  /// Over MQTT, whether more than one online agent announces the watch (`FleetSiteStatus.servedByMany`,
  /// the note names them): each applies what it is handed and reports on it, so its last status
  /// is whichever spoke last — `no status`, not known, for `status`, `plan` and `drift --fleet`.
  public var servedByMany = false
  /// Over MQTT, whether its agent cannot read the watch (`WatchStatus.unreachable`: its last
  /// read failed, a drift check's or an attempt's at a revision) while the row's state says what
  /// the agent is doing — `retrying` the revision, which it is. Counted out of reach
  /// (`isOutOfReach`), as an `unreachable` watch is (fresh-eyes fe95 #4: exit 0 for a watch
  /// out of reach whose agent was retrying a revision).
  public var outOfReach = false
  /// The words of the drift its agent measured against the revision it applied
  /// (`WatchStatus.driftNote`), when that drift is known and not 0; `drift --fleet` says them
  /// beside a state that is not `drift` (`invalid`).
  public var driftWords: String? = nil

  /// Whether the watch cannot be read now: `unreachable`, or (over MQTT) out of its agent's
  /// reach while the agent retries a revision (`outOfReach`). `status --fleet` exits 1 naming
  /// it out of reach; `plan` and `drift --fleet` call it `unreachable`.
  public var isOutOfReach: Bool { state == "unreachable" || outOfReach }

  /// Whether what the watch holds now is not known, over MQTT: its agent is offline (`offline`),
  /// no agent has announced it (`no status`), or it is pending with its agent offline and may
  /// hold part of the revision (`mayHoldPart`), as `apply --fleet` counts such a watch.
  /// `status --fleet` exits 1 for it ("N of M watches not known").
  public var isNotKnown: Bool {
    state == "offline" && agent?.online == false || state == "no status" || mayHoldPart && !partlyApplied
  }

  /// Whether the watch's agent is still at it: applying a desired document it has not
  /// reported on, or retrying one after a failure that can pass. `status --fleet --wait` waits
  /// while a watch is.
  public var isSettling: Bool { state == "applying" || state == "retrying" }

  /// The state of a watch whose desired document the broker no longer holds (over MQTT).
  public static let noDesiredDocument = "no desired document"

  /// Why a watch is `no desired document`: the broker holds none for it, and agent `agent` holds
  /// it to revision `applied`; `current`, the revision the manifests give now when it differs.
  public static func noDesiredNote(agent: String, applied: String, current: String? = nil) -> String {
    // Which of the causes, the broker cannot tell: each is named (fresh-eyes finding: a watch
    // taken out of the fleet file and put back was blamed on a broker with persistence).
    "the broker holds no desired document for the watch (it lost its retained messages: restarted without persistence, "
      + "or from a save older than the watch's publication; "
      + "or the topic was cleared, as when the watch was taken out of the fleet file and published without it); "
      + "agent \(agent) still holds the watch to revision \(applied) as it last applied it"
      + (current.map { ", and the manifests now give revision \($0)" } ?? "") + ". "
      + "Publish the manifests again with 'tsapply apply --fleet'; if the broker lost them, give it persistence (docs/fleet.md \"Sizing the broker\")"
  }

  /// Whether the watch failed: it could not be read (`isOutOfReach`), its manifest or its
  /// records cannot be used (`invalid`, `failed`), its agent refused, found invalid or failed
  /// its revision, or the broker lost the desired document it is held to (`no desired
  /// document`). `status --fleet` exits 1 when one did.
  public var isFailure: Bool { ["unreachable", "invalid", "failed", "refused", "no desired document"].contains(state) || outOfReach }

  /// A row.
  public init(name: String, device: String, state: String, lastApplied: String? = nil, lastSeen: String? = nil,
              drift: Int? = nil, pending: Int? = nil, agent: (id: String, online: Bool)? = nil, note: String? = nil,
              neverApplied: Bool = false) {
    self.name = name
    self.device = device
    self.state = state
    self.lastApplied = lastApplied
    self.lastSeen = lastSeen
    self.drift = drift
    self.pending = pending
    self.agent = agent
    self.note = note
    self.neverApplied = neverApplied
  }
}

/// A site as `status --fleet` found it over MQTT: a row per watch, and the agents that
/// announced themselves and are offline.
public struct FleetSiteStatus: Sendable {
  /// One row per member, in order.
  public var rows: [FleetStatusRow]
  /// The IDs of the offline agents, sorted.
  public var offlineAgents: [String]
  /// The watches' states as their agents last read them, by watch ID (read only when asked:
  /// `FleetStatus.broker(…states: true)`).
  public var reportedStates: [String: ReportedState] = [:]
  /// Watches that more than one online agent announces serving (by name, with their agents'
  /// IDs, sorted): each of those agents applies every revision it is handed and reports on the
  /// watch, so its status is whichever spoke last — a misconfiguration to end, not a state.
  public var servedByMany: [(watch: String, agents: [String])] = []

  /// `2 watches are served by more than one agent at once: room-5 (a1, a4), …` with the
  /// advice; `nil` when none is.
  public var servedByManyWords: String? {
    guard !servedByMany.isEmpty else { return nil }
    let listed = servedByMany.prefix(10).map { "\($0.watch) (\($0.agents.joined(separator: ", ")))" }.joined(separator: ", ")
      + (servedByMany.count > 10 ? ", and \(servedByMany.count - 10) more" : "")
    return counted(servedByMany.count, "watch is", "watches are") + " served by more than one agent at once: " + listed
      + " (" + Self.servedByManyAdvice + ")"
  }

  /// Why a watch `agents` (more than one) serve is not known, and what to do, e.g. `served by
  /// more than one agent at once (a1, a4): each applies what it is handed …`.
  public static func servedByManyNote(_ agents: [String]) -> String {
    "served by more than one agent at once (\(agents.joined(separator: ", "))): " + servedByManyAdvice
  }

  static let servedByManyAdvice = "each applies what it is handed and reports on the watch, so what is said of it is whichever agent spoke last: "
    + "stop all but one of them, or take the watch out of the others' --device; docs/fleet.md \"Agents over MQTT\""

  /// Whether nothing is still going on: no watch applying or retrying, every agent online.
  public var isSettled: Bool { offlineAgents.isEmpty && !rows.contains(where: \.isSettling) }

  /// The rows with the fleet file named where an agent's advice holds its placeholder
  /// (`WatchStatus.fleetFilePlaceholder`: the agent does not know the file; the reader does).
  public mutating func naming(fleetFile: String) {
    for index in rows.indices { rows[index].note = rows[index].note.map { WatchStatus.naming(fleetFile: fleetFile, in: $0) } }
  }

  /// What keeps the site from being settled, in words (`2 watches applying or retrying:
  /// room-12, room-14; agent a01 offline`); `nil` when it is settled.
  public var unsettled: String? {
    let settling = rows.filter(\.isSettling).map(\.name)
    var parts: [String] = []
    if !settling.isEmpty {
      parts.append(counted(settling.count, "watch", "watches") + " applying or retrying: " + settling.joined(separator: ", "))
    }
    if !offlineAgents.isEmpty {
      parts.append("agent\(offlineAgents.count == 1 ? "" : "s") \(offlineAgents.joined(separator: ", ")) offline")
    }
    return parts.isEmpty ? nil : parts.joined(separator: "; ")
  }
}

/// What tsapply's records and a monitor's kept record know of a watch that cannot be read now,
/// without opening it: when tsapply last wrote to it (`Engine.lastWrite(ofUnopened:)`), when a
/// monitor (or a later apply) last read it, and whether the monitor's read found SOS at risk
/// (`HandledEvents.kept(of:engine:)`). What
/// every fleet command says of a watch out of reach (`status`, `plan`, `drift`, `apply --fleet`).
public struct OutOfReach: Sendable {
  /// When tsapply last wrote to the watch; `nil` without a record of it.
  public var lastApplied: LastWrite?
  /// When a monitor last read the watch, or an apply that wrote to it after that read; `nil`
  /// when no monitor kept it.
  public var lastSeen: Date?
  /// Whether the monitor's read found SOS at risk (drift that puts it at risk), no apply having
  /// written to the watch since.
  public var sosAtRisk: Bool

  /// What is known of `member`'s watch, from the records under `engine`'s state root.
  public init(_ member: FleetMember, engine: Engine) {
    lastApplied = engine.lastWrite(ofUnopened: member.device)
    let kept = HandledEvents.kept(of: engine.canonicalSpec(member.device), engine: engine, lastWritten: lastApplied?.date)
    lastSeen = kept?.lastSeen
    sosAtRisk = kept?.sosAtRisk ?? false
  }

  /// `as its monitor last read it (TIME), before it went out of reach`, said after "SOS at risk".
  var sosAtRiskText: String {
    "as its monitor last read it" + (lastSeen.map { " (\(timestamp($0)))" } ?? "") + ", before it went out of reach"
  }

  /// The lines a fleet command's section of the watch ends with: `Last applied: TIME`, `Last
  /// seen: TIME (by its monitor)` (or `by the last apply`), and SOS at risk as then — each only
  /// when known.
  public var lines: String {
    var text = ""
    switch lastApplied {
    case .at(let date)?: text += "Last applied: \(timestamp(date))\n"
    case .never?: text += "Last applied: never (tsapply found it matching, and has written nothing to it)\n"
    case nil: break
    }
    if let lastSeen {
      // An apply later than the monitor's read is when it was seen (`HandledEvents.kept(of:engine:)`).
      text += "Last seen: \(timestamp(lastSeen)) (\(lastApplied?.date == lastSeen ? "by the last apply" : "by its monitor"))\n"
    }
    if sosAtRisk { text += "SOS at risk \(sosAtRiskText).\n" }
    return text
  }

  /// `last_applied`, `last_seen` and `sos_at_risk` for a JSON report, each when known.
  public var json: [String: JSONValue] {
    var object: [String: JSONValue] = ["sos_at_risk": .bool(sosAtRisk)]
    if let date = lastApplied?.date { object["last_applied"] = .string(timestamp(date)) }
    if lastApplied?.isNever == true { object["never_applied"] = .bool(true) }
    if let lastSeen { object["last_seen"] = .string(timestamp(lastSeen)) }
    return object
  }
}

/// `tsapply status --fleet`: where every watch of a fleet stands, from tsapply's records and
/// the watches themselves (read-only), or, over MQTT, from the agents' retained statuses.
public enum FleetStatus {
  /// Reads every member's watch (read-only: no lock, nothing written, through `runner`): drift
  /// and pending from the engine, last applied from the watch's record (`last-applied.json`).
  public static func direct(_ members: [FleetMember], runner: FleetRunner,
                            progress: @escaping @Sendable (FleetProgress) -> Void = { _ in }) async -> [FleetStatusRow] {
    let now = runner.engine.now
    let results = await runner.run(members, progress: progress) { _, document, watch throws(EngineError) in
      try await watch.drift(document)
    }
    var rows: [FleetStatusRow] = []
    for result in results {
      var row = row(result, runner: runner, now: now)
      // A manifest with errors hides nothing the watch holds: its drift needs no manifest, nor
      // does SOS at risk; and a watch out of reach is `unreachable`, its manifest's errors beside
      // (fresh-eyes finding: `invalid` alone, a paperwork problem, for a missing watch).
      if case .failure(.input) = result.outcome {
        var known: (drift: [ResourceChange], lastWrite: LastWrite)?
        var reached = true
        do {
          let watch = try await runner.engine.open(result.member.device, mayCreate: false)
          do { known = try await watch.driftSinceRecord() } catch .device { reached = false } catch {}
          await watch.close()
        } catch .device { reached = false } catch {}
        if !reached {
          let outOfReach = OutOfReach(result.member, engine: runner.engine)
          row.state = "unreachable"
          row.lastApplied = outOfReach.lastApplied?.date.map(timestamp)
          seenByMonitor(outOfReach, into: &row)
          row.neverApplied = outOfReach.lastApplied?.isNever == true
          row.note = "the watch cannot be reached (out of reach: its file, phone or bridge); and its manifest has errors: " + (row.note ?? "")
        }
        if let known {
          row.drift = known.drift.count
          row.lastApplied = known.lastWrite.date.map(timestamp)
          row.neverApplied = known.lastWrite.isNever
          row.lastSeen = timestamp(now())
          row.sosAtRisk = known.drift.putSOSAtRisk
          if !known.drift.isEmpty { row.note = (row.note ?? "") + "; and the watch has drifted since the last apply (tsapply drift shows it)" }
        }
      }
      rows.append(row)
    }
    return rows
  }

  /// What is known of a watch out of reach (`OutOfReach`) into its row: when it was last read
  /// ("last seen"), and whether its monitor's read found SOS at risk — said as of then
  /// (fresh-eyes finding: the page said SOS at risk, status nothing).
  static func seenByMonitor(_ known: OutOfReach, into row: inout FleetStatusRow) {
    row.lastSeen = known.lastSeen.map(timestamp)
    if known.sosAtRisk {
      row.sosAtRisk = true
      row.note = known.sosAtRiskText + "; " + (row.note ?? "")
    }
  }

  /// The row of one watch's result.
  private static func row(_ result: FleetResult<DriftReport>, runner: FleetRunner, now: @Sendable () -> Date) -> FleetStatusRow {
    let member = result.member
    switch result.outcome {
    case .success(let report):
      let drift = report.drift.count, pending = report.unapplied.count
      let state = !report.hasRecord ? "no record" : drift > 0 ? "drift" : pending > 0 ? "pending" : "in sync"
      var row = FleetStatusRow(name: member.name, device: member.device, state: state, lastApplied: report.lastWrite?.date.map(timestamp),
                               lastSeen: timestamp(now()), drift: report.hasRecord ? drift : nil, pending: pending)
      row.neverApplied = report.lastWrite?.isNever == true
      row.holdsManifests = report.holdsManifest
      row.sosAtRisk = report.hasRecord && report.drift.putSOSAtRisk
      return row
    case .failure(let failure):
      let state = switch failure {
      case .input, .engine(.invalid): "invalid"
      case .engine(.device): "unreachable"
      default: "failed"  // its records cannot be used (a broken last-applied record), the state folder
      }
      // Unreachable now, but its records still say when it was last applied, and a monitor's
      // when it last read the watch.
      let known = state == "unreachable" ? OutOfReach(member, engine: runner.engine) : nil
      let applied = known?.lastApplied
      var row = FleetStatusRow(name: member.name, device: member.device, state: state, lastApplied: applied?.date.map(timestamp),
                               note: applied == nil ? failure.description : Engine.outOfReach(failure.description), neverApplied: applied?.isNever == true)
      if let known { seenByMonitor(known, into: &row) }
      return row
    }
  }

  /// When tsapply last wrote to the watch (`Watch.lastWrite`): an apply that found nothing to
  /// change, which refreshes the record, does not move it; `nil` when it never wrote (or has no record).
  static func lastAppliedTime(_ watch: Watch) -> String? {
    watch.lastWrite()?.date.map(timestamp)
  }

  /// Every member's status as its agent last reported it on the broker, compared with the
  /// revision its manifests give now and with the desired document on the broker. With
  /// `settleWithin`, waits (`FleetBrokerView.wait`) until the site settles — no watch
  /// `applying` or `retrying`, every agent that announced itself online — or that time ends;
  /// the site then is as the rows and `offlineAgents` say. With `states`, the watches' states
  /// as their agents last read them too (`reportedStates`, for `plan --fleet`).
  /// - Throws: `MQTTError` when the broker cannot be reached within `timeout`, or the view is
  ///   incomplete (`FleetBrokerView.connect`).
  public static func broker(_ members: [FleetMember], site: String, settings: BrokerSettings, timeout: Duration,
                            settleWithin: Duration? = nil, states: Bool = false) async throws(MQTTError) -> FleetSiteStatus {
    let start = ContinuousClock.now
    let view = try FleetBrokerView(settings: settings, site: site, desired: true, states: states)
    try await view.connect(within: timeout)
    var current = FleetSiteStatus(rows: [], offlineAgents: [])
    // What each member's manifests give, hashed once for every look of the wait.
    let revisions = members.map { member in (try? member.document.get()).map { DesiredDocument.revisions(manifest: $0.manifest) } }
    await view.wait(until: start + (settleWithin ?? .zero)) { _ in
      current = FleetSiteStatus(rows: rows(members, revisions: revisions, view: view),
                                offlineAgents: view.agents.values.filter { !$0.online }.map(\.agent).sorted())
      return current.isSettled
    }
    current.reportedStates = view.reportedStates
    for member in members {
      let agents = view.servers(of: member.watch.watchID)
      if agents.count > 1 { current.servedByMany.append((member.name, agents)) }
    }
    await view.close()
    return current
  }

  /// The rows of `members` as `view` shows them now; `revisions[i]`: what member i's manifests
  /// give (`DesiredDocument.revisions`; `nil` when they cannot be used).
  static func rows(_ members: [FleetMember], revisions: [[String]?], view: FleetBrokerView) -> [FleetStatusRow] {
    let statuses = view.statuses, desired = view.desiredRevisions
    return zip(members, revisions).map { member, current in
      let id = member.watch.watchID
      let agent = view.agent(serving: id).map { (id: $0.agent, online: $0.online) }
      // Its manifests have errors here: what its agent last said of the watch still stands —
      // when it last wrote and read it, and SOS at risk as then (fresh-eyes fe100: both blank).
      guard let current else {
        let status = statuses[id]?.status
        var row = FleetStatusRow(name: member.name, device: member.device, state: "invalid", lastApplied: status?.lastApplied,
                                 lastSeen: status?.lastSeen, agent: agent,
                                 note: (status?.sosAtRiskWhenRead.map { $0 + "; " } ?? "") + "its manifest has errors")
        row.neverApplied = status.map { $0.lastApplied == nil && $0.appliedRevision != nil } ?? false
        return row
      }
      // A desired document on the broker that the agent has not reported on yet: applying it,
      // when the agent is online; when it is not, published and waiting (the watch may already
      // hold part of it: an agent can go down in the middle of an apply).
      let unreported = desired[id].flatMap { revision in statuses[id]?.status.revision != revision ? revision : nil }
      let applying = agent?.online == true ? unreported : nil
      // Published for a watch no agent has ever announced: nobody is applying it, and nothing
      // says what the watch holds (fresh-eyes finding: "agent ? is offline … may hold part of it").
      if agent == nil, statuses[id] == nil, let unreported {
        return FleetStatusRow(name: member.name, device: member.device, state: "no status", agent: nil,
                              note: "revision \(unreported) is published, but no agent has announced the watch \(id): nothing applies it, "
                                + "and what it holds is not known")
      }
      if agent?.online != true, let unreported, current.contains(unreported) {
        let status = statuses[id]?.status
        var row = FleetStatusRow(name: member.name, device: member.device, state: "pending", lastApplied: status?.lastApplied,
                                 lastSeen: status?.lastSeen, agent: agent,
                                 note: "revision \(unreported) is published; agent \(agent?.id ?? "?") is offline and has not reported on it "
                                   + "(the watch may hold part of it until the agent is back)")
        row.mayHoldPart = true
        return row
      }
      guard let status = statuses[id]?.status else {
        if let applying {
          return FleetStatusRow(name: member.name, device: member.device, state: "applying", agent: agent,
                                note: "agent \(agent?.id ?? "?") has not reported on revision \(applying) yet")
        }
        return FleetStatusRow(name: member.name, device: member.device, state: agent?.online == false ? "offline" : "no status",
                              agent: agent, note: agent == nil ? "no agent has announced the watch \(id)" : nil)
      }
      // Served by no agent, or by two, whatever its last status said: `no status`, not known,
      // with what that status's read found of SOS (fresh-eyes fe102 #5: dropped while the
      // monitor's sos_drift alert stayed open).
      func notKnown(_ status: WatchStatus, note: String, agent: (id: String, online: Bool)?) -> FleetStatusRow {
        FleetStatusRow(name: member.name, device: member.device, state: "no status", lastApplied: status.lastApplied,
                       lastSeen: status.lastSeen, agent: agent, note: (status.sosAtRiskWhenRead.map { $0 + "; " } ?? "") + note)
      }
      // Moved to another agent that has not reported yet: not what the agent it left said.
      if let (note, servers) = view.movedNote(id) {
        return notKnown(status, note: note, agent: (id: servers[0], online: true))
      }
      // Two online agents announcing it: its status is whichever of them spoke last, about
      // whichever watch it reads (fresh-eyes fe102 #9: "in sync", and `plan` and `drift --fleet`
      // exited 0, beside the problem listed under the table).
      let servers = view.servers(of: id)
      if servers.count > 1 {
        var row = notKnown(status, note: FleetSiteStatus.servedByManyNote(servers) + "; what it holds is not known", agent: agent)
        row.servedByMany = true
        return row
      }
      // Its agent online and no longer naming it, and no other online agent naming it: served
      // by no one, whatever its last status said.
      if agent?.online == true, let note = view.unservedNote(id) {
        var row = notKnown(status, note: note, agent: agent)
        row.servedByNoOne = true
        return row
      }
      // Its agent has no presence on the broker (retired: its presence deleted; or a broker that
      // lost it) and no agent announces the watch: nothing says anyone serves it, whatever its
      // last status said (fresh-eyes fe102 #4: "in sync", exit 0, for a retired agent's watch
      // whose SOS was switched off since).
      if agent == nil {
        var row = notKnown(status, note: noPresenceNote(id, status: status), agent: nil)
        row.servedByNoOne = true
        return row
      }
      // Retrying with its agent offline: no agent is trying, and what the status said of the
      // next try is not so while it is away. Published and not applied, as above; what is on
      // the watch is not known beyond what the agent said it reached.
      if status.result == .retrying, agent?.online == false {
        var row = FleetStatusRow(name: member.name, device: member.device, state: "pending", lastApplied: status.lastApplied,
                                 lastSeen: status.lastSeen, agent: agent,
                                 note: "revision \(status.revision) is not applied: agent \(status.agent) is offline (its attempt "
                                   + "\(status.attempt ?? 1) failed: \(status.message ?? "no reason given")); the watch "
                                   + (status.reachedText.map { "holds part of it (\($0))" } ?? "may hold part of it")
                                   + " until the agent is back and tries again")
        row.neverApplied = status.lastApplied == nil && status.appliedRevision != nil
        row.holdsManifests = status.appliedRevision.map(current.contains)
        row.partlyApplied = status.partlyApplied
        row.mayHoldPart = status.reachedText == nil
        return row
      }
      var state: String
      var note = status.message
      switch status.result {
      case .refused, .invalid:
        state = status.result.rawValue
        if status.result == .refused, status.partlyApplied, let reached = status.reachedText {
          note = "\(reached) by earlier attempts: \(status.message ?? "")"
        }
      case .failed:
        state = "failed"
        if let reached = status.reachedText { note = "\(reached): \(status.message ?? "")" }
      case .retrying:
        state = "retrying"
        note = "attempt \(status.attempt ?? 1) failed" + (status.nextRetry.map { ", next at \($0)" } ?? "")
          + (status.reachedText.map { " (\($0))" } ?? "") + ": \(status.message ?? "")"
        // Out of its agent's reach: said as such, and counted so (`outOfReach`).
        if status.unreachable != nil {
          note = "agent \(status.agent) cannot read the watch since \(status.unreachableSince ?? "?"), and retries revision \(status.revision): "
            + (note ?? "")
        }
      case .applied, .noChanges:
        state = status.drift > 0 ? "drift" : status.pending > 0 ? "pending" : "in sync"
        if let drift = status.driftNote { note = drift }
      }
      // The manifests give a revision the agent has not handled yet. One it handled and refused
      // (or found invalid) stays so: publishing it again changes nothing.
      let newRevision = newRevisionNote(status, current: current)
      // The broker's document is older than what the agent handled (restored from an older
      // save): answered `invalid`, the watch keeping the newer one, until published again — not
      // "new revision", which would say the manifests changed (fresh-eyes finding).
      if status.answersStaleDocument, desired[id] == status.revision {
        state = "invalid"
      } else if let applying, newRevision == nil || current.contains(applying) {
        state = "applying"
        note = "agent \(status.agent) has not reported on revision \(applying) yet (it last handled \(status.revision), \(status.result.rawValue))"
      } else if let newRevision {
        state = "new revision"
        note = newRevision
      }
      // Its agent offline, what the watch holds now is not known, whatever it last reported
      // (in sync, drift, a revision not published): said as such, with what it last found.
      if agent?.online == false, ["in sync", "drift", "pending", "new revision"].contains(state) {
        note = "agent \(status.agent) is offline\(view.presenceNote(status.agent).map { " (\($0))" } ?? ""): what the watch holds now is not known (when last read, at \(status.lastSeen ?? "?"): "
          + (state == "new revision" ? "\(status.drift) drifted; the manifests give a revision the broker does not hold: not published yet, or lost by the broker" : "\(state)") + ")"
        state = "offline"
      }
      // Refused, invalid or failed stays what its agent did with the revision; what the watch
      // holds now is not known while the agent is away (fresh-eyes fe103 #5: nothing said so).
      if agent?.online == false, ["refused", "invalid", "failed"].contains(state) {
        note = (note.map { $0 + "; " } ?? "") + "agent \(status.agent) is offline: what the watch holds now is not known"
      }
      // The agent cannot read the watch: it is not known to hold what the status last said.
      if let reason = status.unreachable, ["in sync", "drift", "pending", "new revision"].contains(state) {
        note = "agent \(status.agent) cannot read the watch since \(status.unreachableSince ?? "?"): \(reason); "
          + "what it holds now is not known (drift and pending were read at \(status.lastSeen ?? "?"))"
          + (state == "new revision" ? "; the manifests give a revision the broker does not hold: not published yet, or lost by the broker" : "")
        state = "unreachable"
      }
      // The agent holds the watch to a revision the broker no longer has (a broker restarted
      // without persistence, a topic cleared): nothing says that revision is still what the
      // manifests want, and a restarted agent would not be handed it. Not in sync, whatever
      // the agent last found — and whatever the manifests give now (a revision the agent has not
      // applied is not published either: the broker holds none for the watch).
      let wasNewRevision = state == "new revision"
      if view.readsDesired, desired[id] == nil, let applied = status.appliedRevision,
         ["in sync", "drift", "pending", "offline", "new revision"].contains(state) {
        state = "no desired document"
        // Which of the causes, the broker cannot tell: each is named (fresh-eyes finding: a watch
        // taken out of the fleet file and put back was blamed on a broker with persistence).
        note = FleetStatusRow.noDesiredNote(agent: status.agent, applied: applied, current: wasNewRevision ? current.first ?? "?" : nil)
      }
      // Drift and pending were counted against the revision applied; while another is being
      // applied, was refused or failed, they say nothing of the watch now: shown as unknown.
      // With a new revision not published, what changed on the watch since the last apply is
      // still known (the agent checks against what it applied); what is pending is not.
      // Its agent offline, what the watch holds now is not known either (`drift --fleet` says
      // `not known`); Last seen says when it was last read.
      // After a refusal (or an invalid revision) nothing was written and the agent goes on
      // checking the watch against the revision it last applied: its drift is known.
      // What is pending was counted against the revision applied, not the one the manifests give.
      let measured = ["in sync", "drift", "pending", "no desired document"].contains(state) && !wasNewRevision
      let driftKnown = status.measuresDrift && (measured || ((["new revision", "refused", "invalid"].contains(state) || wasNewRevision)
                                                              && agent?.online != false && [.applied, .noChanges, .refused, .invalid].contains(status.result)))
      var row = FleetStatusRow(name: member.name, device: member.device, state: state, lastApplied: status.lastApplied,
                               lastSeen: status.lastSeen, drift: driftKnown ? status.drift : nil, pending: measured ? status.pending : nil,
                               agent: agent, note: note)
      // Its agent applied (a revision it found matching) without ever writing: no time to show.
      row.neverApplied = status.lastApplied == nil && status.appliedRevision != nil
      row.holdsManifests = status.appliedRevision.map(current.contains)
      // Its apply failed after every change of the revision reached the watch (the verification
      // found something else changed meanwhile, `2 of 2 applied`): the watch holds the revision,
      // as a direct watch whose apply failed after its writes landed does (docs/fleet.md "Staged rollouts").
      if status.holdsRevisionWritten, current.contains(status.revision) { row.holdsManifests = true }
      // A write whose outcome the agent could not tell: the watch may hold the revision — not
      // known, not "without it" (fresh-eyes finding: a canary holding it was listed without it).
      else if status.outcomeUnknown, current.contains(status.revision) { row.holdsManifests = nil }
      // Never applied anything, and the revision the manifests give was refused or invalid:
      // nothing was written, so the watch is without it — not "not known" (fresh-eyes finding:
      // a watch holding only the wearer's emergency contact was "not known" to the rollout).
      else if status.appliedRevision == nil, current.contains(status.revision), [.refused, .invalid].contains(status.result),
              !status.partlyApplied { row.holdsManifests = false }
      // Its agent offline or unable to read it: what it holds now is not known (the page says
      // "not known" too; fresh-eyes finding: 100 watches of an offline agent counted as holding
      // the revision "as read from the watches now").
      if state == "offline" || state == "unreachable" { row.holdsManifests = nil }
      if state == "refused", status.partlyApplied || status.outcomeUnknown { row.refusedHoldingPart = status.reachedText }
      row.staleDesired = state == "invalid" && status.answersStaleDocument
      row.outOfReach = state == "retrying" && status.unreachable != nil
      if driftKnown { row.driftWords = status.driftNote }
      // Invalid, the drift its agent measured is said beside why (fresh-eyes fe95 #1).
      if state == "invalid", let words = row.driftWords { row.note = (row.note.map { $0 + "; " } ?? "") + words }
      // As the agent says, or, from one older than `sos_at_risk`, by the emergency list among what drifted.
      if driftKnown, status.drift > 0 {
        row.sosAtRisk = status.sosAtRisk ?? ResourceAddress.mayPutSOSAtRisk(status.driftAddresses ?? [])
      }
      return row
    }
  }

  /// What to say of watch `id` when its last status came from an agent that no longer serves it
  /// — offline (`statusAgentOnline` not true), or online and no longer announcing it
  /// (`announced`) — while other online agents (`servers`, those announcing it) do: the watch
  /// moved, and what it holds is not known until one of them reports; `nil` otherwise (its agent
  /// still serves it, alone or beside another). `status --fleet` and the page say the same
  /// (fresh-eyes fe100 #2, #3: "in sync" from an agent that had let the watch go, while it had
  /// drifted; "offline" from the agent it left, while the page said another served it).
  public static func movedNote(_ id: String, status: WatchStatus, statusAgentOnline: Bool?, announced: [String]?, servers: [String]) -> String? {
    let others = servers.filter { $0 != status.agent }
    guard !others.isEmpty, statusAgentOnline != true || announced.map({ !$0.contains(id) }) == true else { return nil }
    return "its last status came from agent \(status.agent), which no longer serves it (\(status.result.rawValue)"
      + (status.lastSeen.map { ", read at \($0)" } ?? "") + "): what the watch holds now is not known until agent\(others.count == 1 ? "" : "s") "
      + "\(others.joined(separator: ", ")), serving it now, report\(others.count == 1 ? "s" : "") on it"
  }

  /// What to say of watch `id` whose last status came from agent `status.agent`, online and
  /// announcing `announced` (its presence's watches), when no online agent announces the watch
  /// (`servers` empty): the agent no longer serves it (restarted with another device list), so
  /// nothing checks it, applies to it or hears its SOS presses, whatever its last status said
  /// (fresh-eyes finding: shown in sync, with SOS off and a press heard by no one). `nil` when
  /// it is served. `status --fleet` and the status page over MQTT say the same.
  public static func unservedNote(_ id: String, status: WatchStatus, announced: [String]?, servers: [String]) -> String? {
    guard let announced, !announced.contains(id), servers.isEmpty else { return nil }
    return "agent \(status.agent) no longer serves the watch \(id) (it is online and does not announce it), and no other agent does: " + unserved(status)
  }

  /// What to say of watch `id` whose last status came from an agent retired since (its presence
  /// deleted from the broker) when no online agent serves it.
  public static func retiredNote(_ id: String, status: WatchStatus) -> String {
    "agent \(status.agent) was retired (its presence was deleted from the broker), and no other agent serves the watch \(id): " + unserved(status)
  }

  /// What to say of watch `id` whose last status came from agent `status.agent` when that agent
  /// has no presence on the broker (retired by deleting it, or lost by a broker without
  /// persistence) and no online agent announces the watch: nothing says anyone serves it.
  /// `status --fleet` and the status page over MQTT say the same.
  public static func noPresenceNote(_ id: String, status: WatchStatus) -> String {
    "agent \(status.agent), which last reported on the watch, has no presence on the broker (retired, or the broker lost it) and no agent "
      + "announces the watch \(id): what it holds is not known; " + unserved(status)
  }

  private static func unserved(_ status: WatchStatus) -> String {
    // With the drift it measured then (fresh-eyes fe105 #5: "no-changes" alone, beside SOS switched off).
    "nothing checks the watch or applies its manifests, and its SOS presses reach no one (it last reported \(status.result.rawValue)"
      + (status.measuresDrift && status.drift > 0 ? ", \(status.drift) changed on the watch since its last apply" : "")
      + (status.lastSeen.map { ", read at \($0)" } ?? "") + "); give it to an agent ('tsapply agent … --device')"
  }

  /// When the manifests give a revision (`current`: its forms without and with `allow_destroy`)
  /// the agent has not handled yet, what to say of it: `the manifests give revision …; the
  /// agent last applied …`; `nil` when it handled it. One it handled and refused (or found
  /// invalid) stays so — publishing it again changes nothing — and one that failed or is retried
  /// is shown as such. `status --fleet` and the status page over MQTT say the same.
  public static func newRevisionNote(_ status: WatchStatus, current: [String]) -> String? {
    guard let first = current.first, !current.contains(status.revision), status.result != .failed, status.result != .retrying else { return nil }
    if let applied = status.appliedRevision, current.contains(applied) {
      // A change refused (or invalid) and taken back in the manifests: the watch holds what they
      // give, but the broker still holds the other revision.
      return "the manifests give revision \(applied) again, which the agent applied; it last handled revision \(status.revision) "
        + "(\(status.result.rawValue)), which the broker still holds"
    }
    return "the manifests give revision \(first); the agent last "
      + (status.appliedRevision.map { "applied \($0)" } ?? "handled \(status.revision) (\(status.result.rawValue))")
  }

  /// What `drift --fleet` over MQTT rests on, said under its table: each agent's last reading,
  /// which for a reminder may be a drift interval old (fresh-eyes fe103 #4: "no drift" for a
  /// reminder switched off on the watch 15 s before, with nothing saying how old it was).
  public static let brokerDriftCaveat = "Drift as each watch's agent last read it (Last seen): a change to its contacts or emergency "
    + "list is read as the watch announces it, one to a reminder at the agent's next drift check (every 5m, or its --drift-interval).\n"

  /// The status table, ending with a newline.
  public static func table(_ rows: [FleetStatusRow], withAgents: Bool) -> String {
    var header = ["Watch", "State", "Last applied", "Last seen", "Drift", "Pending"]
    if withAgents { header.append("Agent") }
    let cells = rows.map { row -> [String] in
      var cells = [ControlCharacters.escaped(row.name), row.state, row.lastAppliedText, row.lastSeen ?? "-",
                   row.drift.map(String.init) ?? "-", row.pending.map(String.init) ?? "-"]
      if withAgents { cells.append(row.agent.map { "\(ControlCharacters.escaped($0.id)) (\($0.online ? "online" : "offline"))" } ?? "-") }
      return cells
    }
    var text = FleetText.columns(header, cells)
    let notes = rows.filter { $0.shownNote != nil }
    if !notes.isEmpty {
      text += "\n" + notes.map { "\(ControlCharacters.escaped($0.name)): \(ControlCharacters.escaped($0.shownNote ?? ""))" }.joined(separator: "\n") + "\n"
    }
    return text
  }

  /// The status as JSON: `{format_version, fleet, watches: [{name, device, state, last_applied,
  /// last_seen, drift, pending, agent, agent_online, note, sos_at_risk}], rollout}`, keys sorted, ending with
  /// a newline; `rollout` (`RolloutRecord.json`) only when the fleet has a rollout record.
  public static func json(_ rows: [FleetStatusRow], fleetFile: String, rollout: JSONValue? = nil) -> String {
    let watches: [JSONValue] = rows.map { row in
      var object: [String: JSONValue] = ["name": .string(row.name), "device": .string(row.device), "state": .string(row.state)]
      object["last_applied"] = row.lastApplied.map(JSONValue.string) ?? .null
      object["last_seen"] = row.lastSeen.map(JSONValue.string) ?? .null
      object["drift"] = row.drift.map(JSONValue.integer) ?? .null
      object["pending"] = row.pending.map(JSONValue.integer) ?? .null
      if let agent = row.agent {
        object["agent"] = .string(agent.id)
        object["agent_online"] = .bool(agent.online)
      }
      if let note = row.shownNote { object["note"] = .string(note) }
      if row.sosAtRisk { object["sos_at_risk"] = .bool(true) }
      return .object(object)
    }
    var root: [String: JSONValue] = ["format_version": .string("1"), "fleet": .string(fleetFile), "watches": .array(watches)]
    if let rollout { root["rollout"] = rollout }
    return FleetText.json(.object(root))
  }
}

/// The one reading of a watch's row over MQTT that `plan` and `drift --fleet` give as their
/// verdicts, beside `status --fleet`'s state (docs/fleet.md "Agents over MQTT").
extension FleetStatusRow {
  /// The states whose agent does not hold the revision the manifests give: new, being applied,
  /// retried, refused, failed, invalid (the broker's document older than the one applied, or
  /// with errors for the watch), no status, and no desired document (the broker lost it; the
  /// agent holds the revision it last applied, which the manifests may no longer give).
  /// `drift --fleet` counts their pending changes on the state the agent reported.
  public static let notHoldingManifests: Set<String> = ["new revision", "applying", "retrying", "refused", "failed", "invalid",
                                                        "no status", "no desired document"]

  /// Whether the row has a record of an apply: a time, or an apply that wrote nothing.
  var hasRecord: Bool { lastApplied != nil || neverApplied }

  /// The verdict of `plan --fleet` over MQTT for a watch planned from its status alone; one
  /// served by no agent fails, saying so (`servedByNoOne`), and is not planned against what its
  /// agent last read (fresh-eyes finding: "No changes" for a watch nothing checks, applies to or
  /// hears); one out of its agent's reach is `unreachable`, also while its agent retries a
  /// revision (`isOutOfReach`).
  public var planVerdict: FleetVerdict {
    // Not on the watch yet: not handled, or handled and refused or failed (the note says why).
    // The broker lost the desired document: publishing it again is the change.
    let unapplied = ["new revision", "no status", "applying", "refused", "failed", FleetStatusRow.noDesiredDocument].contains(state)
      || (state == "offline" && lastApplied == nil && !neverApplied)
    // Published, its agent offline before reporting on it (`FleetStatus.rows`): waiting, not to publish.
    let published = state == "pending" && drift == nil
    // Applied, but the watch no longer holds it (changed on the watch, or the manifests'
    // changes not all made), as its agent last checked: publishing again converges it.
    let differs = (drift ?? 0) > 0 || (pending ?? 0) > 0
    return servedByNoOne ? .failed(note ?? "no agent serves the watch")
      : servedByMany ? .unknown(note ?? "served by more than one agent at once")
      // The broker went back to an older document than its agent applied: publishing the
      // manifests again is the change (fresh-eyes fe97 #3: "failed" for every such watch).
      : state == "invalid" && staleDesired ? .publish((note.map { $0 + "; " } ?? "")
                                                      + "'tsapply apply --fleet' publishes the manifests again")
      : state == "invalid" ? .failed(note ?? "its manifest has errors")
      // What it holds now is not known: as a direct plan of a watch it cannot read, a failure.
      : isOutOfReach ? .unreachable(note ?? "its agent cannot read the watch")
      : state == "applying" ? .pending(note ?? "published; its agent is applying it")
      : published ? .pending(note ?? "published; its agent has not reported on it")
      : state == "retrying" ? .retrying(note ?? "its agent is still trying")
      : unapplied ? .publish(note ?? "its agent has not applied these manifests")
      : differs ? .publish("the watch differs from its applied manifests (\(drift ?? 0) changed on the watch, \(pending ?? 0) pending, "
                           + "at its agent's last check); 'tsapply apply --fleet' publishes them again")
      : .noChanges
  }

  /// The verdict of `drift --fleet` over MQTT: drift and pending as its agent last reported
  /// them. A watch its agent cannot read is `unreachable` (`isOutOfReach`), as `status --fleet`
  /// counts it; one whose drift its agent does not know now (applying another revision,
  /// offline, no status) is neither drifted nor without drift (`unknown`); an `invalid` one
  /// keeps the drift its agent measured against the revision it applied (`FleetVerdict.invalid`,
  /// its reason with SOS at risk and the drift's words). For a watch whose agent does not hold
  /// its manifests' revision (`notHoldingManifests`), pending is what `document` (its merged
  /// manifests) would change on `reported`, the state its agent last read (undoing drift is in
  /// it: the agent's record is not here to tell it apart), never the agent's own count, which is
  /// of the revision it holds; without a reported state it is not known.
  public func driftVerdict(reported: ReportedState?, document: ManifestDocument?) -> FleetVerdict {
    if isOutOfReach { return .unreachable(note ?? "its agent cannot read the watch") }
    // Its manifests have errors here, or its agent measures no drift (offline, never applied).
    if state == "invalid", drift == nil { return .failed(note ?? "its manifest has errors") }
    // Planned only for the watches that need it (a fleet of 1,000 is read at once).
    func counted() -> Plan? { reported.flatMap { reported in document.flatMap { try? reported.plan($0) } } }
    if state == "invalid" {
      let counted = counted()
      return .invalid((sosAtRisk ? Alerts.sosAtRisk + "; " : "") + (note ?? "its agent found the desired document invalid")
                        + (counted == nil ? "; what its manifests would change is not known (its agent reported no state)" : ""),
                      drift: drift ?? 0, pending: counted?.resourceChanges.count ?? 0)
    }
    if drift == nil && hasRecord || ["offline", "no status"].contains(state) { return .unknown(state + (note.map { ": " + $0 } ?? "")) }
    guard Self.notHoldingManifests.contains(state) else { return .drift(count: drift ?? 0, pending: pending ?? 0, hasRecord: hasRecord) }
    guard let plan = counted() else {
      return .unknown(state + ": its agent does not hold these manifests, and reported no state to count their changes on"
                      + (note.map { " (" + $0 + ")" } ?? ""))
    }
    return .drift(count: drift ?? 0, pending: plan.resourceChanges.count, hasRecord: hasRecord)
  }
}
