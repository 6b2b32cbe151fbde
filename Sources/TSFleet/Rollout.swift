import Foundation
import TSEngine
import TSManifest
import TSModel
import TSPlan

/// The record of one staged rollout of a fleet (docs/fleet.md "Staged rollouts"), kept in the
/// fleet's records folder (`RolloutStore`) and rewritten atomically and durably
/// (`SecureFile`, 0600) whenever a wave starts or ends, so `apply --fleet --continue` and
/// `--abort` (a later process) and `status --fleet` see where it stands, however the process
/// that ran it ended.
///
/// ```json
/// {"format_version": 1, "fleet": "fleet.yaml", "revision": "…", "policy": "canary 2, batch 25%, …",
///  "pause": "manual", "max_failures": "0", "waves": [["w0001","w0002"], …], "next_wave": 1,
///  "phase": "paused", "started": "…", "updated": "…", "started_by": "ana@ward-pc",
///  "watches": {"w0001": {"wave": 1, "result": "applied", "at": "…", "add": 0, "change": 1, "destroy": 0}}}
/// ```
public struct RolloutRecord: Codable, Sendable, Equatable {
  /// Where the rollout stands.
  public enum Phase: String, Codable, Sendable {
    /// A wave is being applied (or the process running it was killed in one: `--continue`
    /// applies that wave again).
    case running
    /// Waiting for `pause` to pass before the next wave (`resume_at`).
    case waiting
    /// Stopped between waves: `pause: manual`, or interrupted; `--continue` goes on.
    case paused
    /// Stopped for good: too many failures, or `--abort`. No later wave starts.
    case aborted
    /// Every wave was applied.
    case completed

    /// Whether `--continue` may go on with it.
    public var isResumable: Bool { self == .running || self == .waiting || self == .paused }
  }

  /// What one watch's wave did to it.
  public struct WatchResult: Codable, Sendable, Equatable {
    /// Its wave, from 1.
    public var wave: Int
    /// `applied`, `no changes`, `failed`, `refused`, `retrying` or `pending` (`FleetVerdict.word`),
    /// or `interrupted` (`RolloutRunner.abort`: its wave's process ended before recording it).
    public var result: String
    /// When its wave ended, ISO 8601.
    public var at: String
    /// Resources added, changed and destroyed (when applied).
    public var add: Int?, change: Int?, destroy: Int?
    /// Why it failed or is pending.
    public var reason: String?
    /// With `failed` (or, over MQTT, `refused` after its agent's earlier attempt wrote part of
    /// the revision): what reached the watch (`FleetWatchReport.reached`, "1 of 2 applied");
    /// absent when nothing did.
    public var reached: String?

    /// A watch's result in wave `wave`, ended at `at`.
    public init(wave: Int, result: String, at: String, add: Int? = nil, change: Int? = nil, destroy: Int? = nil, reason: String? = nil,
                reached: String? = nil) {
      self.wave = wave
      self.result = result
      self.at = at
      self.add = add
      self.change = change
      self.destroy = destroy
      self.reason = reason
      self.reached = reached
    }

    /// Whether the watch holds the rollout's revision: applied, or had nothing to change.
    public var hasRevision: Bool { result == "applied" || result == "no changes" }
    /// Whether its wave may have written it without the record saying it holds the revision:
    /// its wave was interrupted (or is being applied) before its result was recorded, or its
    /// apply failed (or is being retried) after part of it reached the watch, or may have (a
    /// write whose outcome its agent could not tell). Only reading it tells.
    public var mayHaveWritten: Bool {
      result == Self.interrupted || result == Self.applying || (["failed", "refused", "retrying", "pending"].contains(result) && reached != nil)
    }

    /// `reached` of a watch left pending whose agent went offline during its wave without
    /// reporting on it (killed mid-apply, `FleetWatchReport.mayHoldPart`): how much of the
    /// revision it holds is not known.
    public static let reachNotKnown = "not known how much"

    /// The result of a watch whose wave was interrupted (the process running it ended) before
    /// its result was recorded (`RolloutRunner.abort`).
    public static let interrupted = "interrupted"
    /// The result of a watch whose wave is being applied (not stored).
    static let applying = "applying"
    /// Whether it counts as failed against `max_failures` (`RolloutRecord.countsAsFailure`).
    public var isFailure: Bool { RolloutRecord.failureWords.contains(result) }
  }

  /// `1`.
  public var formatVersion = 1
  /// The fleet file as named when the rollout started.
  public var fleet: String
  /// The manifests' revision (`revision(of:)`): `--continue` refuses when they changed.
  public var revision: String
  /// The policy in one line (`RolloutPolicy.summary`).
  public var policy: String
  /// The pause between waves, as written (`10m`, `manual`).
  public var pause: String
  /// `max_failures`, as written (`0`, `10%`).
  public var maxFailures: String
  /// The waves' watch names, in order.
  public var waves: [[String]]
  /// The index (from 0) of the next wave to start; `waves.count` when all were applied.
  public var nextWave: Int
  /// Where it stands.
  public var phase: Phase
  /// With `waiting`: when the next wave starts, ISO 8601.
  public var resumeAt: String?
  /// Why it was aborted or paused, in words.
  public var reason: String?
  /// When it started, ISO 8601.
  public var started: String
  /// When this record was last written, ISO 8601.
  public var updated: String
  /// `user@host` that started it.
  public var startedBy: String
  /// What each watch's wave did, by name.
  public var watches: [String: WatchResult]

  /// What a watch of the rollout holds, as read from it (`observe(_:members:)`).
  public enum Holding: Sendable, Equatable {
    /// The rollout's revision.
    case revision
    /// Something else: an earlier revision, or nothing tsapply applied.
    case other
    /// Not known: its state (`FleetStatusRow.state`: unreachable, no status, applying, …).
    case unknown(String)
  }

  /// What the watches held when the record was read for a report (`observe(_:members:)`),
  /// by name; `nil`: not read, the waves' results stand for them. Not stored.
  public var observed: [String: Holding]? = nil
  /// The watches' states as read then (`FleetStatusRow.state`), by name. Not stored.
  public var observedStates: [String: String] = [:]
  /// Why the watches were not compared with the rollout's revision (its manifests changed
  /// since it started). Not stored.
  public var observedNote: String? = nil
  /// Whether the manifests changed since it started (`observe`): `--continue` is then refused,
  /// and only `--abort` (then a new apply) is advice. Not stored.
  public var manifestsChanged = false
  /// The rollout's watches that were read (`status --fleet --watch`, `observe(_:members:read:)`)
  /// when they are not all of them: the summary, its counts and its lists are of these only,
  /// and say so; `nil`: every watch of the rollout. Not stored.
  public var selected: [String]? = nil
  /// Whether the record says `running` or `waiting` but no process holds the rollout's lock
  /// (`RolloutStore.lockPath`): the process running it ended (killed, or its machine stopped)
  /// and it needs `--continue` or `--abort`. Set by `RolloutStore.load`; not stored.
  public var isInterrupted = false

  /// The phase's word in reports: the phase, or `interrupted` (`isInterrupted`).
  public var phaseWord: String { isInterrupted ? "interrupted" : phase.rawValue }

  /// Whether a live process is running it now (`running`, or `waiting` between waves, and not
  /// `isInterrupted`): `--continue` and `--abort` are for a rollout paused or left by a process
  /// that ended.
  public var isHeldElsewhere: Bool { (phase == .running || phase == .waiting) && !isInterrupted }

  enum CodingKeys: String, CodingKey {
    case formatVersion = "format_version", fleet, revision, policy, pause, maxFailures = "max_failures", waves
    case nextWave = "next_wave", phase, resumeAt = "resume_at", reason, started, updated, startedBy = "started_by", watches
  }

  /// A rollout of `members` (in fleet order) under `policy`, not started.
  public init(fleet: String, members: [FleetMember], policy: RolloutPolicy, startedBy: String, now: Date) {
    self.fleet = fleet
    revision = Self.revision(of: members)
    self.policy = policy.summary
    pause = policy.pause.description
    maxFailures = policy.maxFailures.description
    waves = policy.waves(of: members.map(\.name))
    nextWave = 0
    phase = .running
    started = timestamp(now)
    updated = started
    self.startedBy = startedBy
    watches = [:]
  }

  /// The revision of what `members` are to hold: 16 hex digits of SHA-256 over each watch's
  /// name and the revision of its merged manifest (`DesiredDocument.revision`), `invalid` for
  /// one whose manifests have errors.
  public static func revision(of members: [FleetMember]) -> String {
    var text = ""
    for member in members {
      let revision = switch member.document {
      case .success(let document): DesiredDocument.revision(manifest: document.manifest, allowDestroy: false)
      case .failure: "invalid"
      }
      text += member.name + "=" + revision + "\n"
    }
    return String(SHA256Digest.hex(of: Array(text.utf8)).prefix(16))
  }

  /// The results (`FleetVerdict.word`) that count against `max_failures`.
  static let failureWords: Set<String> = ["failed", "unreachable", "refused", "retrying", "pending"]

  /// Whether a wave's `verdict` for a watch counts against `max_failures`: failed, out of reach,
  /// refused by the safety gate (nothing written), still retrying, or (over MQTT) pending — its agent offline or silent when the wave's wait ended:
  /// nothing shows that the change works on it, so the next wave is not released on its account.
  public static func countsAsFailure(_ verdict: FleetVerdict) -> Bool { failureWords.contains(verdict.word) }

  /// Every watch of the rollout, in wave order.
  public var names: [String] { waves.flatMap { $0 } }
  /// The watches the summary counts, in wave order: `selected`, else every watch.
  public var counted: [String] { selected ?? names }
  /// Counted watches that hold the revision, in wave order: as read from them (`observed`),
  /// else as their wave left them (applied, or nothing to change).
  public var withRevision: [String] { counted.filter { holding($0) == .revision } }
  /// Counted watches that do not (failed, retrying, pending, or not reached), in wave order.
  public var withoutRevision: [String] { counted.filter { holding($0) == .other } }
  /// Counted watches whose state is not known, in wave order: read but not readable, or (not
  /// read) written by their wave without a result saying so (`WatchResult.mayHaveWritten`).
  public var unknownRevision: [String] { counted.filter { if case .unknown = holding($0) { true } else { false } } }

  /// What `name` holds: as read, else as its wave left it — not known when its wave may have
  /// written it without saying so (interrupted, or failed after part of it reached the watch).
  public func holding(_ name: String) -> Holding {
    if let held = observed?[name] { return held }
    guard let result = recorded(name) else { return .other }
    if result.hasRevision { return .revision }
    guard result.mayHaveWritten else { return .other }
    switch result.result {
    case WatchResult.interrupted: return .unknown("interrupted in wave \(result.wave)")
    case WatchResult.applying: return .unknown("being applied in wave \(result.wave)")
    default: return .unknown("\(result.result) in wave \(result.wave) with \(result.reached ?? "part of it applied")")
    }
  }

  /// What the record knows of `name`: its wave's result; for a watch of the wave a process is
  /// running (or was running when it ended: interrupted) with no result yet, `applying` (or
  /// `interrupted`); `nil` when no wave started it.
  public func recorded(_ name: String) -> WatchResult? {
    if let result = watches[name] { return result }
    guard phase == .running, nextWave < waves.count, waves[nextWave].contains(name) else { return nil }
    return WatchResult(wave: nextWave + 1, result: isInterrupted ? WatchResult.interrupted : WatchResult.applying, at: updated)
  }

  /// Takes what the watches hold now into account (`observed`): `rows` are `status --fleet`'s
  /// (`FleetStatusRow.holdsManifests`: directly, compared with the manifests; over MQTT, the
  /// agents' applied revision), `members` every watch of the fleet (`LoadedFleet.everyMember`,
  /// whatever `--watch` selected: the revision is over all of the rollout's watches). `read`:
  /// the watches the rows were read for (`--watch`), `nil` for every watch of the rollout; when
  /// they are not all of its watches, the summary is of those only (`selected`): a watch not
  /// read is not counted from what its wave recorded (a failed apply may have landed, a killed
  /// wave recorded nothing). The manifests are the rollout's revision only while they are
  /// unchanged: when they changed since it started, the waves' results stand and
  /// `observedNote` says why.
  public mutating func observe(_ rows: [FleetStatusRow], members: [FleetMember], read: Set<String>? = nil) {
    let every = names
    let chosen = read.map { read in every.filter(read.contains) }
    selected = chosen.flatMap { $0.count < every.count ? $0 : nil }
    let inRollout = Set(every)
    // Watches of the rollout the fleet file no longer names: its revision (over all of its
    // watches) cannot be told from the others, and those are not read — said as such, not as
    // manifests that changed.
    let named = Set(members.map(\.name))
    let gone = every.filter { !named.contains($0) }
    if !gone.isEmpty {
      observed = nil
      observedNote = "\(gone.count == 1 ? "its watch \(gone[0]) is" : "its watches \(gone.joined(separator: ", ")) are") no longer in \(fleet), "
        + "so what the watches hold cannot be compared with its revision; what it recorded of each watch is shown"
      return
    }
    guard Self.revision(of: members.filter { inRollout.contains($0.name) }) == revision else {
      observed = nil
      manifestsChanged = true
      observedNote = "the manifests changed since it started, so what the watches hold says nothing of its revision; what it recorded of each watch is shown"
      return
    }
    var held: [String: Holding] = [:]
    let byName = Dictionary(rows.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    for name in chosen ?? every {
      let row = byName[name]
      held[name] = switch row?.holdsManifests {
      case true?: .revision
      case false?: .other
      // Its manifests cannot be used: there is no revision of them for it to hold.
      case nil where row?.state == "invalid": .other
      case nil: .unknown(row?.state ?? "not read")
      }
    }
    observed = held
    observedStates = byName.mapValues(\.state)
    observedNote = nil
  }

  /// Watches counted as failed (`WatchResult.isFailure`).
  public var failed: [String] { names.filter { watches[$0]?.isFailure == true } }
  /// Watches a wave was run for.
  public var attempted: Int { watches.count }

  /// The policy's `max_failures` as a size (as written in the record).
  var maxFailuresSize: RolloutPolicy.Size { (try? RolloutPolicy.Size.parse(maxFailures, zero: true).get()) ?? .count(0) }
  /// The policy's pause (as written in the record).
  var pauseValue: RolloutPolicy.Pause { (try? RolloutPolicy.Pause.parse(pause).get()) ?? .manual }

  /// Records `rows` (one wave's results) for wave `index` (from 0) at `now`.
  mutating func record(_ rows: [FleetWatchReport], wave index: Int, now: Date) {
    for row in rows {
      var result = WatchResult(wave: index + 1, result: row.verdict.word, at: timestamp(now))
      switch row.verdict {
      case .applied(let counts), .changes(let counts):
        (result.add, result.change, result.destroy) = (counts.add, counts.change, counts.destroy)
      case .failed(let reason), .unreachable(let reason), .refused(let reason), .pending(let reason), .retrying(let reason):
        result.reason = reason
      default:
        break
      }
      // Part of it on the watch: directly, the apply's count; over MQTT, what its agent reported.
      if case .object(let reached)? = row.details["reached"], let applied = reached["applied"], applied != .integer(0) {
        result.reached = row.reached
      } else if row.partlyApplied || row.outcomeUnknown {
        result.reached = row.reached
      }
      // Its agent went offline during the wave without a word on it: it may hold part of it
      // (fresh-eyes finding: recorded as untouched, "pending" with "-" for changes).
      if row.mayHoldPart, result.reached == nil { result.reached = WatchResult.reachNotKnown }
      watches[row.name] = result
    }
  }

  /// The report row of `name` as this record has it (`recorded`): its wave's result (`not
  /// known` when its wave was interrupted before recording it), or pending when no wave
  /// reached it (saying why).
  public func row(_ name: String, device: String) -> FleetWatchReport {
    var details: [String: JSONValue] = ["rollout_wave": .integer(waveIndex(of: name) + 1)]
    if observed?[name] == .revision, watches[name]?.hasRevision != true {
      // Read from the watch: it holds the revision although its wave did not record so (a
      // process killed in the wave, an apply of it since): applied, as far as the watch shows —
      // not "no changes", which said the wave had changed nothing there.
      // Not reached by a wave yet: it held the revision already (no wave of this rollout wrote it).
      let index = waveIndex(of: name)
      guard index < nextWave || (phase == .running && index == nextWave) else {
        details["rollout_state"] = .string("has the revision (read from the watch); its wave has not started")
        var row = FleetWatchReport(name: name, device: device, verdict: .noChanges, elapsed: .zero, details: details)
        row.reached = "has it (read)"
        return row
      }
      details["rollout_state"] = .string("has the revision (read from the watch)")
      var row = FleetWatchReport(name: name, device: device, verdict: .applied(.zero), elapsed: .zero, details: details)
      row.reached = "has it (read)"
      return row
    }
    guard let result = recorded(name) else {
      let wave = waveIndex(of: name) + 1
      let why = phase == .aborted ? (wave <= nextWave ? "not applied: the rollout was aborted during wave \(wave) of \(waves.count), before this watch started"
                                                      : "not applied: the rollout was aborted before wave \(wave) of \(waves.count)")
        : "not applied yet: it is in wave \(wave) of \(waves.count)"
      details["rollout_state"] = .string("not started")
      return FleetWatchReport(name: name, device: device, verdict: .pending(why), elapsed: .zero, details: details)
    }
    let counts = PlanCounts(add: result.add ?? 0, change: result.change ?? 0, destroy: result.destroy ?? 0)
    let verdict: FleetVerdict = switch result.result {
    case "applied": .applied(counts)
    case "no changes": .noChanges
    case "retrying": .retrying(result.reason ?? "")
    case "pending": .pending(result.reason ?? "")
    case "refused": .refused(result.reason ?? "")
    case WatchResult.interrupted, WatchResult.applying:
      if case .unknown(let why) = holding(name) { .unknown(why) } else { .unknown(result.result) }
    default: .failed(result.reason ?? result.result)
    }
    details["rollout_state"] = .string(result.result)
    var row = FleetWatchReport(name: name, device: device, verdict: verdict, elapsed: .zero, details: details)
    row.reached = result.reached
    row.mayHoldPart = result.result == "pending" && result.reached == WatchResult.reachNotKnown
    return row
  }

  private func waveIndex(of name: String) -> Int { waves.firstIndex { $0.contains(name) } ?? 0 }
  /// The number (from 1) of the wave `name` is in.
  public func waveNumber(of name: String) -> Int { waveIndex(of: name) + 1 }

  /// Where the rollout stands, for people: the phase with its wave, the counts, then which
  /// watches hold the revision and which do not (at most `listed` names each, then a count).
  /// `fleetFile` names the fleet in the advice (`--continue`, `--abort`).
  public func summary(fleetFile: String, listed: Int = 10) -> String {
    let done = min(nextWave, waves.count)
    var head = "Rollout (\(policy)), started \(started) by \(startedBy): "
    switch phase {
    case .running where isInterrupted:
      head += "interrupted during wave \(min(nextWave + 1, waves.count)) of \(waves.count): the process running it ended"
    case .waiting where isInterrupted:
      head += "interrupted while pausing after wave \(done) of \(waves.count): the process running it ended"
    case .completed: head += "completed: \(waves.count) wave\(waves.count == 1 ? "" : "s") applied"
    case .aborted: head += "aborted after wave \(done) of \(waves.count)" + (reason.map { ": \($0)" } ?? "")
    case .paused: head += "paused after wave \(done) of \(waves.count)" + (reason.map { " (\($0))" } ?? "")
    case .waiting: head += "waiting after wave \(done) of \(waves.count); wave \(done + 1) starts at \(resumeAt ?? "?")"
    case .running: head += "running wave \(nextWave + 1) of \(waves.count)"
    }
    var text = head + ".\n"
    let status = "'tsapply status --fleet \(fleetFile)'"
    if let selected, selected.isEmpty {
      text += "  None of the watches selected (--watch) is in this rollout; \(status) reads its \(names.count) watch\(names.count == 1 ? "" : "es").\n"
    } else {
      text += counts(listed)
    }
    if let selected, !selected.isEmpty {
      let others = names.count - selected.count
      text += "  Not counted: the rollout's other \(others) watch\(others == 1 ? "" : "es"), not selected (--watch); \(status) reads them all.\n"
    }
    if let observedNote { text += "  Not read from the watches: \(observedNote).\n" }
    if isHeldElsewhere {
      // `--continue` and `--abort` wait for the lock that process holds: not advice for now.
      text += "  Another process is running it (started by \(startedBy)); 'tsapply status --fleet \(fleetFile)' follows it, and Ctrl-C in that process pauses it.\n"
    } else if phase.isResumable && manifestsChanged {
      text += "  Its manifests changed since it started, so '--continue' is refused: stop it with 'tsapply apply --fleet \(fleetFile) --abort', "
        + "then apply the manifests (a new rollout starts with its canary).\n"
    } else if phase.isResumable {
      text += "  Continue with 'tsapply apply --fleet \(fleetFile) --continue', or stop it with 'tsapply apply --fleet \(fleetFile) --abort'.\n"
    }
    return text
  }

  /// The summary's counts and lists of the counted watches (`counted`): with it, without it
  /// (of which failed in their wave, and not started), not known — disjoint, adding up.
  private func counts(_ listed: Int) -> String {
    let have = withRevision, lacking = withoutRevision, unknown = unknownRevision, total = counted.count
    // Failed: what their wave recorded as a failure — but a watch left pending (its agent
    // offline or silent when the wave's wait ended) is said as such: it counts against
    // `max_failures`, yet nothing failed on it (fresh-eyes finding: "4 failed" for four watches
    // whose agent was away).
    let failedNames = lacking.filter { watches[$0]?.isFailure == true && watches[$0]?.result != "pending" }
    let notStarted = lacking.filter { recorded($0) == nil }
    // The rest, by what their wave recorded (pending, interrupted, or applied and changed since),
    // so the parts add up to the count.
    var others: [(String, Int)] = []
    for name in lacking where !failedNames.contains(name) {
      guard let result = recorded(name)?.result else { continue }
      let word = result == "interrupted" ? "interrupted" : "\(result) in its wave"
      if let index = others.firstIndex(where: { $0.0 == word }) { others[index].1 += 1 } else { others.append((word, 1)) }
    }
    let of = selected == nil ? "\(total) watch\(total == 1 ? "" : "es")" : "the \(total) watch\(total == 1 ? "" : "es") selected (--watch)"
    var text = "  \(have.count) of \(of) have the new revision \(revision)"
      + (observed == nil ? "" : " (as read from the watches now)")
      + ", \(lacking.count) do not (\(failedNames.count) failed, \(notStarted.count) not started"
      + others.map { ", \($0.1) \($0.0)" }.joined() + ")"
      + (unknown.isEmpty ? "" : ", \(unknown.count) not known") + ".\n"
    text += "  With the new revision: " + Self.list(have, listed) + "\n"
    text += "  Without it: " + Self.list(lacking.map { name in
      if case .other? = observed?[name], let state = observedStates[name], state == "invalid" { return "\(name) (invalid manifest)" }
      guard let result = recorded(name) else { return name }
      // A watch its wave wrote part of (failed or refused after an earlier attempt wrote) says so.
      return "\(name) (\(result.result)" + (result.reached.map { ", holds part of it: \($0)" } ?? "") + ")"
    }, listed) + "\n"
    if !unknown.isEmpty {
      text += "  Not known: " + Self.list(unknown.map { name in
        if case .unknown(let state) = holding(name) { return "\(name) (\(state))" }
        return name
      }, listed) + "\n"
    }
    return text
  }

  /// The record as JSON for reports: `{phase, policy, revision, waves_done, waves, with_revision,
  /// without_revision, unknown_revision, observed, selected, failed, reason, …}`, every name listed;
  /// `phase` is `phaseWord` (`interrupted` too), `observed` whether the watches were read;
  /// `selected` the watches counted when `--watch` chose some (`null`: every watch), the three
  /// lists being of those only.
  public var json: JSONValue {
    .object([
      "phase": .string(phaseWord), "policy": .string(policy), "revision": .string(revision),
      "unknown_revision": .array(unknownRevision.map(JSONValue.string)), "observed": .bool(observed != nil),
      "waves_done": .integer(min(nextWave, waves.count)), "waves": .integer(waves.count),
      "with_revision": .array(withRevision.map(JSONValue.string)), "without_revision": .array(withoutRevision.map(JSONValue.string)),
      "failed": .array(failed.map(JSONValue.string)), "reason": reason.map(JSONValue.string) ?? .null,
      "started": .string(started), "started_by": .string(startedBy), "resume_at": resumeAt.map(JSONValue.string) ?? .null,
      "selected": selected.map { .array($0.map(JSONValue.string)) } ?? .null,
    ])
  }

  private static func list(_ names: [String], _ listed: Int) -> String { FleetText.names(names, listed: listed) }
}

/// Where a fleet's rollout record is kept: `<state root>/fleets/<16 hex digits>/rollout.json`,
/// the digits those of the fleet file's absolute path (`WatchHome.folderName`), beside
/// `rollout.lock`, held by the process running (or acting on) the rollout (docs/fleet.md
/// "Staged rollouts").
public struct RolloutStore: Sendable {
  /// The fleet's records folder.
  public var directory: String
  /// `rollout.json`.
  public var path: String { directory + "/rollout.json" }
  /// `rollout.lock`.
  public var lockPath: String { directory + "/rollout.lock" }

  /// The store of the fleet file at `fleetPath` (absolute; symbolic links resolved here)
  /// under the state root `root`.
  public init(root: String, fleetPath: String) {
    directory = root + "/fleets/" + WatchHome.folderName("fleet:" + SecureFile.resolvingSymlinks(fleetPath))
  }

  /// The record, `nil` when there is none.
  /// - Throws: `SecureFileError` when it is there but cannot be read or is not a rollout record
  ///   (the message says to remove it).
  public func load() throws(SecureFileError) -> RolloutRecord? {
    guard SecureFile.exists(path) else { return nil }
    let bytes: [UInt8]
    switch ManifestSource.file(path: path, displayName: path).read(maxBytes: ManifestSource.maxRecordBytes, noun: "rollout record") {
    case .success(let read): bytes = read
    case .failure(let problem): throw SecureFileError(path: path, reason: problem.description)
    }
    guard let record = try? JSONDecoder().decode(RolloutRecord.self, from: Data(bytes)), record.formatVersion == 1 else {
      throw SecureFileError(path: path, reason: "it is not a rollout record tsapply can read; remove it to start a new rollout")
    }
    var loaded = record
    if record.phase == .running || record.phase == .waiting { loaded.isInterrupted = !WatchLock.isHeld(at: lockPath) }
    return loaded
  }

  /// Why a heal must not carry the manifests' own changes now (`MonitorSettings.holdBack`,
  /// read at every heal, so a rollout run by another process counts): the fleet's rollout is
  /// not completed — running, waiting, paused, interrupted or aborted — so what it has not
  /// released to a watch stays out of that watch's heal. `nil` when there is no rollout or it
  /// completed. A record that cannot be read holds back too. `fleetFile` names the fleet. A
  /// completed rollout of some watches (`apply --fleet --watch`) released the change to those
  /// only: for another `watch` it holds back too (an aborted rollout's hold-back is not ended
  /// by applying to one watch).
  public func holdBackReason(fleetFile: String, watch: String? = nil) -> String? {
    let record: RolloutRecord?
    do { record = try load() } catch { return "the rollout record of \(fleetFile) cannot be read (\(error))" }
    guard let record else { return nil }
    if record.phase == .completed {
      guard let watch, !record.names.contains(watch) else { return nil }
      let count = record.names.count
      return "the last rollout of \(fleetFile) (started \(record.started)) was of \(count) watch\(count == 1 ? "" : "es") chosen with --watch, "
        + "not this one, so it released the change to \(count == 1 ? "that watch" : "those") only; apply it to the fleet with 'tsapply apply --fleet \(fleetFile)'"
    }
    let advice = "continue it with 'tsapply apply --fleet \(fleetFile) --continue' or abort it with 'tsapply apply --fleet \(fleetFile) --abort'"
    switch record.phase {
    case .aborted:
      return "the rollout of \(fleetFile) was aborted; apply the change with 'tsapply apply --fleet \(fleetFile)', or start a new rollout"
    case .paused: return "the rollout of \(fleetFile) is paused; " + advice
    default:
      return record.isInterrupted ? "the rollout of \(fleetFile) was interrupted; " + advice
        : "the rollout of \(fleetFile) is \(record.phase.rawValue) and has not released the change to every watch"
    }
  }

  /// Writes `record` (0600, atomically, durably).
  public func save(_ record: RolloutRecord) throws(SecureFileError) {
    try SecureFile.write(Array(canonicalJSON(record).utf8), to: path)
  }

  /// Takes `rollout.lock` for `command`, trying once.
  /// - Throws: `SecureFileError` saying another tsapply runs this fleet's rollout (and who).
  public func lock(command: String) async throws(SecureFileError) -> WatchLock {
    try SecureFile.createDirectory(directory)
    do throws(LockFailure) {
      return try await WatchLock.acquire(at: lockPath, holder: WatchLock.currentHolder(command: command), timeout: .zero)
    } catch {
      let who: String
      if case .held(let holder?, _, _) = error { who = ": \(holder)" } else { who = "" }
      throw SecureFileError(path: lockPath, reason: "another tsapply is running this fleet's rollout\(who); wait for it, or stop it (Ctrl-C) first")
    }
  }
}

/// What a rollout run tells its front end as it goes.
public enum RolloutEvent: Sendable {
  /// Wave `index` (from 0) of `total` starts with these watches.
  case waveStarting(index: Int, total: Int, names: [String])
  /// Waiting `pause` before the next wave.
  case waiting(Duration)
}

/// One wave's failures as its watches finish, and the stop its front end gives the fleet runner:
/// requested when the run's own stop is (Ctrl-C), or when `max_failures` is a count and the
/// failures so far (earlier waves' and this one's) are more than it — then no other watch of the
/// wave starts, so a wave of 250 stops after the count is passed plus those already running (at
/// most `-parallelism`). A percentage is judged when the wave ends (a first failure would be 100%).
public final class RolloutTally: StopRequest, @unchecked Sendable {
  private let inner: any StopRequest
  private let limit: RolloutPolicy.Size
  private let lock = NSLock()
  private var failures: Int

  /// A tally over `inner` for `limit`, `failedBefore` failures already counted.
  public init(stop inner: any StopRequest, maxFailures limit: RolloutPolicy.Size, failedBefore: Int) {
    self.inner = inner
    self.limit = limit
    failures = failedBefore
  }

  /// Counts a watch's row as it finishes.
  public func finished(_ row: FleetWatchReport) {
    guard RolloutRecord.countsAsFailure(row.verdict) else { return }
    lock.withLock { failures += 1 }
  }

  /// Whether a count `max_failures` is passed.
  public var isExceeded: Bool {
    guard case .count(let count) = limit else { return false }
    return lock.withLock { failures > count }
  }

  public func begin() { inner.begin() }
  public var isRequested: Bool { inner.isRequested || isExceeded }
  public func end() { inner.end() }
}

/// Runs the waves of a rollout (`RolloutRecord`) through `wave`, which applies (direct) or
/// publishes (over MQTT) one wave's watches and returns their rows: after each wave the record
/// is written, `max_failures` is checked (more failed: aborted, no later wave starts), and the
/// pause is kept (`manual`: the run ends paused; a duration: waited, Ctrl-C ending the run
/// paused). Policy lives here so every front end stops the same way.
public struct RolloutRunner: Sendable {
  /// Where the record is written.
  public var store: RolloutStore
  /// Asked between waves and while pausing: a stop ends the run paused.
  public var stop: any StopRequest
  /// The time now.
  public var now: @Sendable () -> Date

  /// A runner writing to `store`.
  public init(store: RolloutStore, stop: any StopRequest = NoStopRequest(), now: @escaping @Sendable () -> Date = { Date() }) {
    self.store = store
    self.stop = stop
    self.now = now
  }

  /// Runs `record`'s waves from `nextWave` until it completes, aborts or pauses; returns the
  /// record as it ended (written) and the rows `wave` returned, by name. `wave` gets each wave's
  /// names and its `RolloutTally`, to tell as each watch finishes and to stop starting watches
  /// once it says so; it returns rows only for the watches it started (a watch not started has
  /// no result: a later `--continue` or a new rollout reaches it).
  /// - Throws: `SecureFileError` when the record cannot be written (the wave being run is
  ///   finished first; no later wave starts).
  public func run(_ record: RolloutRecord, events: @escaping @Sendable (RolloutEvent) -> Void = { _ in },
                  wave: @escaping @Sendable ([String], RolloutTally) async -> [FleetWatchReport]) async throws(SecureFileError)
    -> (record: RolloutRecord, rows: [String: FleetWatchReport]) {
    var record = record
    var rows: [String: FleetWatchReport] = [:]
    let limit = RolloutPolicy(maxFailures: record.maxFailuresSize)
    record.reason = nil
    record.resumeAt = nil
    while record.nextWave < record.waves.count {
      if stop.isRequested { return (try pause(&record, reason: "interrupted"), rows) }
      let index = record.nextWave
      record.phase = .running
      try save(&record)
      events(.waveStarting(index: index, total: record.waves.count, names: record.waves[index]))
      let tally = RolloutTally(stop: stop, maxFailures: limit.maxFailures, failedBefore: record.failed.count)
      let done = await wave(record.waves[index], tally)
      for row in done { rows[row.name] = row }
      record.record(done, wave: index, now: now())
      if stop.isRequested {
        // Some watches of the wave may not have started: `--continue` runs the wave again (a
        // watch that has the revision has nothing to change).
        return (try pause(&record, reason: "interrupted during wave \(index + 1)"), rows)
      }
      record.nextWave = index + 1
      let failed = record.failed.count
      if limit.isExceeded(failed: failed, attempted: record.attempted) {
        record.phase = .aborted
        let pending = record.failed.filter { record.watches[$0]?.result == "pending" }.count
        let mayHold = record.failed.filter { record.watches[$0]?.result == "pending" && record.watches[$0]?.reached != nil }.count
        // A watch left pending (its agent away or silent) counts, but did not fail: said apart
        // (fresh-eyes finding: "2 of 2 watches failed or did not report (2)" when neither failed).
        let of = "of \(record.attempted) watch\(record.attempted == 1 ? "" : "es")"
        record.reason = (pending == failed ? "\(failed) \(of) did not report"
          : pending > 0 ? "\(failed - pending) \(of) failed and \(pending) did not report" : "\(failed) \(of) failed")
          + (mayHold > 0 ? " (\(mayHold == pending ? "each" : "\(mayHold) of them") lost its agent during the wave and may hold part of the revision)" : "")
          + ", more than max_failures \(record.maxFailures) allows"
        try save(&record)
        return (record, rows)
      }
      if record.nextWave == record.waves.count { break }
      switch record.pauseValue {
      case .manual:
        return (try pause(&record, reason: "pause: manual"), rows)
      case .duration(let duration) where duration > .zero:
        record.phase = .waiting
        record.resumeAt = timestamp(now().addingTimeInterval(duration.seconds))
        try save(&record)
        events(.waiting(duration))
        if !(await sleep(duration)) { return (try pause(&record, reason: "interrupted while pausing"), rows) }
        record.resumeAt = nil
      case .duration:
        break
      }
    }
    record.phase = .completed
    try save(&record)
    return (record, rows)
  }

  /// Marks `record` aborted by `who` (`--abort`) and writes it. A record left `running` by a
  /// process that ended during a wave (killed) had begun that wave — its watches may have been
  /// written, their results not recorded — so the wave counts as done ("aborted after wave 2"),
  /// the reason says it was interrupted, and each of its watches without a result is recorded
  /// `interrupted` (written or not: only reading it tells; never "not started").
  public func abort(_ record: RolloutRecord, by who: String) throws(SecureFileError) -> RolloutRecord {
    var record = record
    var interrupted = ""
    if record.phase == .running, record.nextWave < record.waves.count {
      let at = timestamp(now())
      for name in record.waves[record.nextWave] where record.watches[name] == nil {
        record.watches[name] = RolloutRecord.WatchResult(wave: record.nextWave + 1, result: RolloutRecord.WatchResult.interrupted, at: at,
                                                         reason: "its wave was interrupted (the process running it ended) before its result was recorded")
      }
      record.nextWave += 1
      interrupted = "; wave \(record.nextWave) was interrupted (the process running it ended) and its results not recorded"
    }
    record.phase = .aborted
    record.resumeAt = nil
    record.reason = "aborted by \(who)" + interrupted
    try save(&record)
    return record
  }

  private func pause(_ record: inout RolloutRecord, reason: String) throws(SecureFileError) -> RolloutRecord {
    record.phase = .paused
    record.reason = reason
    record.resumeAt = nil
    try save(&record)
    return record
  }

  private func save(_ record: inout RolloutRecord) throws(SecureFileError) {
    record.updated = timestamp(now())
    try store.save(record)
  }

  /// Sleeps `duration` in slices, `false` as soon as a stop is requested.
  private func sleep(_ duration: Duration) async -> Bool {
    let end = ContinuousClock.now + duration
    while ContinuousClock.now < end {
      if stop.isRequested { return false }
      try? await Task.sleep(for: min(.milliseconds(100), end - ContinuousClock.now))
    }
    return !stop.isRequested
  }
}
