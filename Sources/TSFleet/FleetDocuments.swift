import Foundation
import TSManifest
import TSModel
import TSApply
import TSPlan

/// What `tsapply apply --fleet` publishes, retained with QoS 1, on a watch's desired topic
/// (docs/fleet.md "Desired documents"): the merged manifest as canonical JSON, whether an
/// unsafe plan may be applied, a revision token, and (for agents that announce it) the
/// publication it belongs to.
///
/// ```json
/// {"allow_destroy":false,"format_version":"1","manifest":{"contacts":[…],"version":1},
///  "publication":"9c1e0f7a2b4d6e83","revision":"5f0c3a1d9e2b7c44","watch":"room-12","watch_id":"room-12"}
/// ```
///
/// The revision is the start of the SHA-256 of the canonical `{allow_destroy, manifest}` (never
/// the publication): the same manifest gives the same revision, so a broker delivering a document
/// twice changes nothing, and an agent applies each revision once. The publication tells one
/// `apply --fleet` run (or rollout wave) from another: the agent names it in every status that
/// answers the document, so a publisher counts only answers to its own documents.
public struct DesiredDocument: Sendable {
  /// The document format's version.
  public static let formatVersion = "1"

  /// The merged manifest.
  public var manifest: Manifest
  /// Whether the agent may apply a plan the safety gate calls unsafe (`--allow-destroy`);
  /// without it the agent refuses such a plan and reports why.
  public var allowDestroy: Bool
  /// The revision token (opaque to agents: any non-empty text a publisher chooses).
  public var revision: String
  /// The watch's name in the fleet, for people reading the broker.
  public var watch: String?
  /// The watch ID whose desired topic the document is for (`FleetTopics.watchID(forSpec:)`);
  /// an agent refuses a document that names another watch ID than its topic's. Optional: a
  /// document without it is taken on its topic's word.
  public var watchID: String?
  /// The publication the document belongs to: a fresh random token per `apply --fleet` run or
  /// rollout wave (`newPublication()`), which the agent echoes in `WatchStatus.publication`.
  /// `nil` in a document for an agent that does not announce `AgentState.Feature.publication`
  /// (an older agent refuses a document with a key it does not know, docs/fleet.md "Upgrading").
  public var publication: String?

  /// The manifest's canonical JSON, made once (`.null` in a document decoded from a payload,
  /// which an agent never sends on).
  private let manifestJSON: JSONValue

  /// A document for `manifest`, its revision computed (the publication is not part of it).
  public init(manifest: Manifest, allowDestroy: Bool, watch: String?, watchID: String? = nil, publication: String? = nil) {
    let json = ManifestJSON.value(manifest)
    self.init(manifest: manifest, json: json, allowDestroy: allowDestroy, watch: watch, watchID: watchID,
              revision: Self.revision(json, allowDestroy: allowDestroy), publication: publication)
  }

  private init(manifest: Manifest, json: JSONValue, allowDestroy: Bool, watch: String?, watchID: String?, revision: String,
               publication: String?) {
    self.manifest = manifest
    manifestJSON = json
    self.allowDestroy = allowDestroy
    self.watch = watch
    self.watchID = watchID
    self.revision = revision
    self.publication = publication
  }

  /// A fresh publication token: 16 hex digits from the system's random source (64 bits, so two
  /// runs never share one).
  public static func newPublication() -> String { RandomHex.sixteenDigits() }

  /// The revision of `manifest` with `allowDestroy`: 16 hex digits of SHA-256.
  public static func revision(manifest: Manifest, allowDestroy: Bool) -> String {
    revision(ManifestJSON.value(manifest), allowDestroy: allowDestroy)
  }

  /// The revisions `manifest` can be published as (without and with `allow_destroy`): an
  /// agent that applied either holds it.
  public static func revisions(manifest: Manifest) -> [String] {
    [false, true].map { revision(manifest: manifest, allowDestroy: $0) }
  }

  private static func revision(_ manifest: JSONValue, allowDestroy: Bool) -> String {
    let canonical = ManifestJSON.encoded(.object(["allow_destroy": .bool(allowDestroy), "manifest": manifest]))
    return String(SHA256Digest.hex(of: Array(canonical.utf8)).prefix(16))
  }

  /// The revision its content gives (`revision(manifest:allowDestroy:)`), whatever `revision`
  /// the publisher chose: an agent compares it to tell a changed document that kept its
  /// revision from one delivered again.
  public var contentRevision: String { Self.revision(manifest: manifest, allowDestroy: allowDestroy) }

  /// The document as canonical JSON (keys sorted, compact).
  public func encoded() -> [UInt8] {
    var object: [String: JSONValue] = [
      "format_version": .string(Self.formatVersion),
      "revision": .string(revision),
      "allow_destroy": .bool(allowDestroy),
      "manifest": manifestJSON == .null ? ManifestJSON.value(manifest) : manifestJSON,
    ]
    if let watch { object["watch"] = .string(watch) }
    if let watchID { object["watch_id"] = .string(watchID) }
    if let publication { object["publication"] = .string(publication) }
    return Array(ManifestJSON.encoded(.object(object)).utf8)
  }

  static let keys = ["format_version", "revision", "allow_destroy", "manifest", "watch", "watch_id", "publication"]

  /// The rule for `revision` and `publication`: one line of 1 to 128 characters.
  static func isToken(_ text: String) -> Bool { !text.isEmpty && text.count <= 128 && !text.contains(where: { $0.isNewline }) }

  /// Reads a desired document received on `topic` (named so in positions): strict JSON, read
  /// with the YAML reader into the manifest decoder, so every manifest rule applies and every
  /// problem, a syntax error too, has a line and column in the document. A `watch_id` that is
  /// not the topic's is an error (a misrouted document never reaches another watch).
  /// Nothing here touches a watch.
  public static func decode(_ payload: [UInt8], topic: String) -> Result<DesiredDocument, FleetInputProblem> {
    func failed(_ diagnostics: [Diagnostic]) -> Result<DesiredDocument, FleetInputProblem> {
      .failure(FleetInputProblem(diagnostics: diagnostics, subject: "the desired document on \(topic)"))
    }
    // JSON is YAML: the YAML reader finds syntax errors with their positions; what it reads
    // that is not JSON (block style, comments, a list) is refused after.
    let read = YAMLReader.read(bytes: payload, file: topic)
    if !read.diagnostics.isEmpty { return failed(read.diagnostics) }
    guard (try? JSONSerialization.jsonObject(with: Data(payload))) is [String: Any], let root = read.root else {
      return failed([.error(at: nil, field: "", "the desired document is not a JSON object")])
    }
    var context = DecodingContext(file: topic)
    guard let fields = context.mapping(root, path: "", keys: keys) else { return failed(context.diagnostics) }
    if let node = fields["format_version"], context.text(node, path: "format_version") != formatVersion {
      context.error(node.position, "format_version", "this agent reads desired documents of format \(formatVersion)")
    }
    var revision = ""
    if let node = fields["revision"], let text = context.text(node, path: "revision") {
      if !isToken(text) { context.error(node.position, "revision", "a revision is one line of 1 to 128 characters") }
      revision = text
    } else if fields["revision"] == nil {
      context.error(root.position, "revision", "the desired document has no revision")
    }
    var allowDestroy = false
    if let node = fields["allow_destroy"] {
      if let scalar = node.scalar, scalar.isPlain, scalar.value == "true" || scalar.value == "false" {
        allowDestroy = scalar.value == "true"
      } else {
        context.error(node.position, "allow_destroy", "expected true or false")
      }
    }
    let watch = fields["watch"].flatMap { context.text($0, path: "watch") }
    let publication = fields["publication"].flatMap { context.text($0, path: "publication") }
    if let publication, !isToken(publication), let node = fields["publication"] {
      context.error(node.position, "publication", "a publication is one line of 1 to 128 characters")
    }
    let watchID = fields["watch_id"].flatMap { context.text($0, path: "watch_id") }
    if let watchID, let node = fields["watch_id"], let (_, topicWatch, _) = FleetTopics.parseWatch(topic), watchID != topicWatch {
      context.error(node.position, "watch_id",
                    "this document is for the watch ID \(ControlCharacters.escaped(watchID)), but it was published on the topic of \(topicWatch)")
    }
    guard let node = fields["manifest"] else {
      context.error(root.position, "manifest", "the desired document has no manifest")
      return failed(context.diagnostics)
    }
    let loaded = ManifestLoader.load(node: node, file: topic)
    let diagnostics = context.diagnostics + loaded.diagnostics
    guard let manifest = loaded.manifest, !diagnostics.hasErrors else { return failed(diagnostics) }
    return .success(DesiredDocument(manifest: manifest, json: .null, allowDestroy: allowDestroy, watch: watch, watchID: watchID,
                                     revision: revision, publication: publication))
  }
}

/// The agent's report on one watch: published retained with QoS 1 on the watch's status
/// topic after each desired document it handles and each drift check (docs/fleet.md
/// "Statuses").
public struct WatchStatus: Codable, Sendable, Equatable {
  /// What an agent's advice writes for the fleet file naming the watch, which it does not know
  /// (`FLEET-FILE`, followed by `, FLEET-FILE the fleet file naming the watch`); a reader that
  /// knows the file names it (`naming(fleetFile:in:)`).
  public static let fleetFilePlaceholder = "FLEET-FILE"

  /// `text` with `fleetFilePlaceholder` replaced by `fleetFile` (shell-quoted) and its
  /// explanation dropped.
  public static func naming(fleetFile: String, in text: String) -> String {
    text.replacingOccurrences(of: "', \(fleetFilePlaceholder) the fleet file naming the watch)", with: "')")
      .replacingOccurrences(of: fleetFilePlaceholder, with: ShellWord.quoted(fleetFile))
  }

  /// How the last desired document ended.
  public enum Result: String, Codable, Sendable {
    /// Applied and verified.
    case applied
    /// The watch already matched.
    case noChanges = "no-changes"
    /// The safety gate refused an unsafe plan (the document did not carry `allow_destroy`).
    case refused
    /// The desired document (or its manifest, on this watch) has errors; the watch was not touched.
    case invalid
    /// Handling it failed for good: trying again gives the same answer (the watch refused a
    /// write for its content, verification showed it stores something else); the agent waits
    /// for a new revision.
    case failed
    /// Handling it failed for a reason that can pass (the watch out of reach or busy, locked by
    /// another tsapply, a lost answer, an interrupted apply: `EngineError.isTransient`); the
    /// agent tries again at `next_retry` (attempt `attempt`; none when the agent was stopping:
    /// it tries again when it starts). Not a final result: a waiting publisher keeps waiting
    /// while the agent is online; with the agent offline the watch is pending.
    case retrying
  }

  /// The format's version.
  public var formatVersion = "1"
  /// The agent that serves the watch.
  public var agent: String
  /// The watch's ID in the topics.
  public var watch: String
  /// The watch's identity (`Device.identity`).
  public var device: String
  /// The revision of the last desired document handled.
  public var revision: String
  /// The revision last applied (or found already matching); `nil` before any.
  public var appliedRevision: String?
  /// How handling `revision` ended.
  public var result: Result
  /// Why it failed or was refused (phone-like text masked).
  public var message: String?
  /// What the apply changed.
  public var changes: PlanCounts?
  /// Resources changed on the watch since the last apply, at the last check (0 also when no
  /// check could count any: `measuresDrift`).
  public var drift: Int
  /// Changes the applied manifest would still make, at the last check.
  public var pending: Int
  /// The addresses of the resources `drift` counts (`contacts`, `emergency`, …, masked), so a
  /// reader that missed the drift event (a monitor started later, a broker restarted) still
  /// knows what drifted — SOS at risk when `emergency` is among them; `nil` without drift, or
  /// from an earlier agent.
  public var driftAddresses: [String]?
  /// Whether that drift alters whom an SOS press reaches (`ResourceChange.putsSOSAtRisk`: the
  /// SOS switch or the emergency numbers; a short name alone does not); `nil` without drift, or
  /// from an earlier agent (then `emergency` among `driftAddresses` says it).
  public var sosAtRisk: Bool?
  /// When tsapply last wrote to the watch (`Watch.lastWrite`, the watch's last-applied
  /// record), ISO 8601: a revision the watch already matched does not move it; `nil` when
  /// tsapply never wrote to it (`LastWrite.never`).
  public var lastApplied: String?
  /// When the agent last read the watch, ISO 8601.
  public var lastSeen: String?
  /// Only in the agent's own copy of the status (`agent-status.json`), never published: the
  /// `sequence` of the watch's last history entry when the status was kept. An apply of the
  /// agent's whose entries come after it was not accounted for by the status (its process was
  /// killed before it said what it did: `FleetAgent`, docs/fleet.md "What an agent does").
  /// `nil` in a status kept by an earlier agent.
  public var historyCounted: Int?
  /// With `retrying`: how many attempts at `revision` failed so far (1 after the first).
  public var attempt: Int?
  /// With `retrying`: when the agent tries again, ISO 8601.
  public var nextRetry: String?
  /// With `retrying` and `failed`: of the revision's changes (`planned`), those its attempts so
  /// far got onto the watch (a part-way apply, interrupted or failed), over every attempt;
  /// `nil` when none got past its backup (nothing was written). Shown as `K of M applied`.
  public var reached: PlanCounts?
  /// With `reached`: the revision's changes, as its attempts planned them (what earlier ones
  /// reached plus what the last one planned).
  public var planned: PlanCounts?
  /// With `applied` and `no-changes`: the applied document's `DesiredDocument.contentRevision`,
  /// so an agent that starts again knows the retained document it is handed is the one it
  /// applied (whatever `revision` the publisher chose).
  public var contentRevision: String?
  /// The `DesiredDocument.publication` of the document this status answers (every result, and
  /// the drift checks after it); `nil` when that document had none, or from an agent that does
  /// not announce `AgentState.Feature.publication`.
  public var publication: String?
  /// Why the agent's last read of the watch failed (masked), when its last drift check, or its
  /// last attempt at a revision (`retrying` it then), could not read it (out of reach, switched
  /// off); `nil` once a read succeeds. Every reader counts the watch out of reach by it
  /// (`FleetStatusRow.isOutOfReach`), never by the words of `message`. `drift` and
  /// `pending` are then as of `last_seen`, not now.
  public var unreachable: String?
  /// Since when the agent's reads of the watch fail, ISO 8601 (with `unreachable`).
  public var unreachableSince: String?
  /// With `retrying` and `failed`: how many of the revision's changes the last attempt could
  /// not tell the outcome of (a write whose answer was lost, its list not read back): the watch
  /// may hold them. `nil` when every outcome is known (and from older agents).
  public var unknown: Int?
  /// With `invalid`: `true` when the broker's desired document is a publication older than the
  /// newest this agent handled (the broker restored from an older save): not applied, the
  /// watch keeps the newer one; published again, it is answered as ever. `nil` otherwise (and
  /// from older agents).
  public var staleDesired: Bool?
  /// `true` when the agent found no desired document for the watch on the broker when it last
  /// connected (every retained document arrives at each connection, ahead of the agent's own
  /// presence: `FleetAgent`), while it holds the watch to a revision it applied: the broker lost
  /// it (restarted without persistence) or the topic was cleared. A reader that cannot read
  /// desired documents (the monitor's broker user) says "no desired document" from it. `nil`
  /// otherwise, once a document arrives, and from older agents.
  public var desiredMissing: Bool?
  /// The words of that drift, as the agent's drift event said them (`Reconcile.driftSummary`:
  /// `contacts (1 added), emergency (SOS switched off)` — counts, switches and keys, never a
  /// contact's name or number; masked under the agent's `--redact`), so a reader that missed the
  /// event (a monitor restarted) says what changed, and an agent restarted tells a drift anew
  /// when the words changed while it was down — also at the same count and addresses
  /// (fresh-eyes findings: the page said "1 change"; no event for a further change). `nil`
  /// without drift, or from an earlier agent.
  public var driftSummary: String?

  /// What `status --fleet`, the status page and a drift alert say of a watch this status finds
  /// drifted: the count and the drift's words (`driftSummary`), not `message`, which tells of
  /// the apply before the drift (fresh-eyes finding: an alert for SOS switched off said "undid
  /// … contacts (1 added)"). `nil` without drift.
  public var driftNote: String? {
    guard drift > 0 else { return nil }
    return "\(drift) resource\(drift == 1 ? "" : "s") changed on the watch since the last apply" + (driftSummary.map { ": " + $0 } ?? "")
  }

  /// How an agent's `applied` message begins the part that says its apply wrote over drift
  /// (`undid what was changed on the watch since the last apply: contacts (1 added)`): what
  /// `monitor --fleet` tells an apply that ended a drift by (`overwritten_by`).
  public static let undidDrift = "undid what was changed on the watch since the last apply: "

  /// Whether this status answers the broker's document `invalid` as older than what the agent
  /// handled (`staleDesired`).
  public var answersStaleDocument: Bool { staleDesired == true && result == .invalid }

  enum CodingKeys: String, CodingKey {
    case formatVersion = "format_version", agent, watch, device, revision, appliedRevision = "applied_revision", result,
         message, changes, drift, pending, lastApplied = "last_applied", lastSeen = "last_seen", attempt,
         nextRetry = "next_retry", contentRevision = "content_revision", publication, unreachable,
         unreachableSince = "unreachable_since", reached, planned, driftAddresses = "drift_addresses", unknown,
         staleDesired = "stale_desired", desiredMissing = "desired_missing", sosAtRisk = "sos_at_risk", driftSummary = "drift_summary",
         historyCounted = "history_counted"
  }

  /// Whether the status reports `revision` handled (whatever the result).
  public func handled(_ revision: String) -> Bool { self.revision == revision }

  /// Whether the status answers the document of `revision` in `publication`: the same revision
  /// and, when the document had a publication, the same publication.
  public func answers(_ revision: String, publication: String?) -> Bool {
    handled(revision) && (publication == nil || self.publication == publication)
  }

  /// Whether this status comes from a later read of the watch by the same agent than `other`
  /// (`last_seen` later): `other` is then out of date, such as a retained status a broker
  /// restored from a persistence file saved before this one was published.
  public func isNewer(than other: WatchStatus) -> Bool {
    guard agent == other.agent, let mine = lastSeen.flatMap(InternetTime.date), let theirs = other.lastSeen.flatMap(InternetTime.date) else {
      return false
    }
    return mine > theirs
  }

  /// Whether the watch holds its revision as applied, with no drift and nothing pending.
  public var isSettled: Bool { (result == .applied || result == .noChanges) && drift == 0 && pending == 0 }

  /// Whether the agent applies the same revision again when it is delivered again: the last try
  /// failed, or the watch drifted from it.
  public var wantsAnotherApply: Bool {
    result == .failed || result == .retrying || ((result == .applied || result == .noChanges) && !isSettled)
  }

  /// What of the revision reached the watch when it is not applied (`retrying`, `failed`, or
  /// `refused` after earlier attempts at it wrote part of it): `1 of 2 applied`, as `apply
  /// --fleet` over direct watches says it (`FleetWatchReport.reached`); `nil` when nothing was written.
  public var reachedText: String? {
    guard result == .retrying || result == .failed || result == .refused, let reached, let planned else { return nil }
    return "\(reached.total) of \(planned.total) applied" + (outcomeUnknown ? ", \(unknown ?? 0) not known" : "")
  }

  /// Whether the last attempt could not tell whether some of its writes reached the watch
  /// (`unknown`): what the watch holds of the revision is then not known.
  public var outcomeUnknown: Bool {
    (result == .retrying || result == .failed || result == .refused) && (unknown ?? 0) > 0
  }

  /// Whether the watch holds part of the revision: it is not applied (`reachedText`) and some of
  /// its changes reached the watch.
  public var partlyApplied: Bool { reachedText != nil && (reached?.total ?? 0) > 0 }

  /// Whether the revision's apply failed (or is retried) after every one of its changes reached
  /// the watch (`2 of 2 applied`: the verification found something else, or its read failed):
  /// the watch holds what the revision writes, though it is not reported applied.
  public var holdsRevisionWritten: Bool {
    guard result == .failed || result == .retrying, let reached, let planned else { return false }
    return planned.total > 0 && reached == planned
  }

  /// Whether handling `revision` has ended: applied, matched, refused, invalid or failed for
  /// good. `retrying` has not: the agent is still at it.
  public var isFinal: Bool { result != .retrying }

  /// The status as canonical JSON.
  public func encoded() -> [UInt8] { Array(canonicalJSON(self).utf8) }

  /// A status from its JSON; `nil` for anything else.
  public static func decode(_ payload: [UInt8]) -> WatchStatus? { try? JSONDecoder().decode(Self.self, from: Data(payload)) }

  /// Whether `drift` counts what the agent measured: it checks the watch against a revision it
  /// applied (`appliedRevision`). An agent that never applied one — a fresh state folder, its
  /// first revision refused — knows no drift, not none (fresh-eyes finding: its `drift: 0`
  /// closed "SOS at risk" while the watch still held an unknown emergency number).
  public var measuresDrift: Bool { appliedRevision != nil }

  /// `SOS at risk when its agent last read it (TIME): …` when that read found the SOS switch or
  /// the emergency list drifted (`sosAtRisk`, or, from an agent that does not say, `emergency`
  /// among `driftAddresses`); `nil` otherwise. Said of a watch whose status no longer tells what
  /// it holds (served by no agent, or by two), as the status page says it.
  public var sosAtRiskWhenRead: String? {
    guard measuresDrift, drift > 0, sosAtRisk ?? ResourceAddress.mayPutSOSAtRisk(driftAddresses ?? []) else { return nil }
    return "SOS at risk when its agent last read it" + (lastSeen.map { " (\($0))" } ?? "")
      + ": its SOS switch or emergency contacts had changed on the watch, so a press may reach no one or not whom the manifest says"
  }

  /// Whether `drift` says what the watch holds now against the revision applied: one was
  /// applied, the last read succeeded, and the last result leaves the watch checked against it
  /// (`applied`, `no-changes`, and `refused` or `invalid`, which wrote nothing — not `failed` or
  /// `retrying`, whose attempts may have written part of another).
  public var driftMeasured: Bool {
    measuresDrift && unreachable == nil && [.applied, .noChanges, .refused, .invalid].contains(result)
  }
}

/// An agent's presence, retained on its agent topic: published when it connects (`online`)
/// and when it stops; its Last Will says `online: false` when it vanishes.
public struct AgentState: Codable, Sendable, Equatable {
  /// The format's version.
  public var formatVersion = "1"
  /// The agent's ID.
  public var agent: String
  /// Whether it is connected.
  public var online: Bool
  /// The IDs of the watches it serves.
  public var watches: [String]
  /// When it connected or went away (absent in the will, which is written in advance).
  public var since: String?
  /// What the agent understands beyond format 1 (`Feature` raw values; unknown ones are kept
  /// and ignored), so a publisher sends it only what it reads. `nil` from an older agent.
  public var features: [String]?

  /// Something an agent announces it understands.
  public enum Feature: String, Sendable, CaseIterable {
    /// It reads `publication` in desired documents and echoes it in its statuses
    /// (`DesiredDocument.publication`, `WatchStatus.publication`).
    case publication
  }

  /// Whether the agent announces `feature`.
  public func announces(_ feature: Feature) -> Bool { features?.contains(feature.rawValue) ?? false }

  enum CodingKeys: String, CodingKey {
    case formatVersion = "format_version", agent, online, watches, since, features
  }

  /// The state as canonical JSON.
  public func encoded() -> [UInt8] { Array(canonicalJSON(self).utf8) }

  /// A state from its JSON; `nil` for anything else.
  public static func decode(_ payload: [UInt8]) -> AgentState? { try? JSONDecoder().decode(Self.self, from: Data(payload)) }
}

/// Something an agent saw happen to a watch, published with QoS 1 (not retained) on the
/// watch's events topic.
public struct FleetEvent: Codable, Sendable, Equatable {
  /// What happened.
  public enum Kind: String, Codable, Sendable {
    /// The watch changed since the last apply (on the watch itself, or by another tool).
    case drift
    /// The wearer pressed SOS.
    case sos
    /// Handling a desired document failed or was refused; or, with `reason: events_missed`,
    /// the watch's events in a gap cannot be had (`after`, `before`): an SOS pressed then was
    /// not published.
    case error
  }

  /// The format's version.
  public var formatVersion = "1"
  /// The agent.
  public var agent: String
  /// The watch's ID.
  public var watch: String
  /// What happened.
  public var kind: Kind
  /// When, ISO 8601 UTC with milliseconds (an SOS press: when the watch recorded it).
  public var time: String
  /// What it was, in words (phone-like text masked).
  public var message: String
  /// The revision concerned, if any.
  public var revision: String?
  /// For `sos`: the press's stable id (`sos-EPOCH-SEQUENCE`), the same however often the event
  /// is sent again (after an agent's restart it replays presses it may have sent), so
  /// receivers deduplicate by it. For a gap (`reason: events_missed`): `gap-AFTER-BEFORE`,
  /// the same live and in the retained list (`RecentSOS.gap`).
  public var id: String?
  /// For `sos`: the press's number on this watch (1, 2, …), for ordering.
  public var sequence: Int?
  /// For `sos`: the watch's platform profile (`fit`, …), as a direct monitor's `sos` event
  /// carries it (docs/monitor.md); `nil` from agents older than this field.
  public var profile: String?
  /// For `error`: the status's result the agent published with it (`WatchStatus.Result`:
  /// `retrying` — it tries again —, `failed`, `refused` or `invalid`), so a receiver tells a
  /// failure that is retried from one that is final without the status; `nil` from agents
  /// older than this field.
  public var result: String?
  /// For `drift`: the resources that drifted (`ResourceAddress` text, phone-like text masked),
  /// so a receiver tells a drift of the emergency list (`emergency`: SOS at risk) from others;
  /// `nil` from agents older than this field.
  public var addresses: [String]?
  /// For `drift`: whether it alters whom an SOS press reaches (`WatchStatus.sosAtRisk`); `nil`
  /// from agents older than this field (then `emergency` among `addresses` says it).
  public var sosAtRisk: Bool?
  /// For `error`: `events_missed` when the watch's events after `after` and before `before`
  /// (the device's event ids) never reached the agent and cannot be had again — the watch was
  /// reset, its bridge restarted, or they were dropped on the way — as a monitor's own
  /// `events_missed` (docs/monitor.md "Alerts"); `nil` for an error of a desired document.
  public var reason: String?
  /// For `reason: events_missed`: the last event heard before the gap.
  public var after: String?
  /// For `reason: events_missed`: the first event that can be had after it.
  public var before: String?

  enum CodingKeys: String, CodingKey {
    case formatVersion = "format_version", agent, watch, kind, time, message, revision, id, sequence, profile, result, addresses,
         sosAtRisk = "sos_at_risk", reason, after, before
  }

  /// The event as canonical JSON.
  public func encoded() -> [UInt8] { Array(canonicalJSON(self).utf8) }

  /// An event from its JSON; `nil` for anything else.
  public static func decode(_ payload: [UInt8]) -> FleetEvent? { try? JSONDecoder().decode(Self.self, from: Data(payload)) }
}

/// A watch's newest SOS presses, retained by its agent on `tsapply/v1/SITE/WATCH-ID/sos`
/// (`FleetTopics.Kind.sos`): the presses its `agent-events.json` keeps (`HandledEvents`), those
/// made within `maxAge`, at most `limit`, oldest first, each the `sos` event the agent published
/// (same id, sequence and time). Published after each press and at every connection (a broker
/// restarted without persistence loses its retained messages), so `monitor --fleet` delivers a
/// press published while it was not connected when it connects (docs/fleet.md "Topics").
public struct RecentSOS: Codable, Sendable, Equatable {
  /// The most presses published per watch.
  public static let limit = 16
  /// The age (from the press) beyond which a press is neither published nor delivered from here:
  /// 24 hours.
  public static let maxAge: TimeInterval = 24 * 3600

  /// The format's version.
  public var formatVersion = "1"
  /// The agent.
  public var agent: String
  /// The watch's ID.
  public var watch: String
  /// The presses, oldest first (`FleetEvent` of kind `sos`, each with its `id`).
  public var presses: [FleetEvent]
  /// The last gap in the watch's events the agent told (its `error` event, `reason:
  /// events_missed`, with its `id`), made within `maxAge`: a monitor not connected when it was
  /// published raises it when it connects, once; `nil` when there is none (and from older agents).
  public var gap: FleetEvent?

  enum CodingKeys: String, CodingKey {
    case formatVersion = "format_version", agent, watch, presses, gap
  }

  /// The list of `agent`'s watch `watch`.
  public init(agent: String, watch: String, presses: [FleetEvent]) {
    self.agent = agent
    self.watch = watch
    self.presses = presses
  }

  /// Whether a press made at `time` (ISO 8601) is recent enough at `now` (within `maxAge`; a
  /// time that cannot be read counts as recent).
  public static func isRecent(_ time: String, now: Date) -> Bool {
    guard let date = InternetTime.date(time) else { return true }
    return now.timeIntervalSince(date) <= maxAge
  }

  /// The list as canonical JSON.
  public func encoded() -> [UInt8] { Array(canonicalJSON(self).utf8) }

  /// A list from its JSON; `nil` for anything else.
  public static func decode(_ payload: [UInt8]) -> RecentSOS? { try? JSONDecoder().decode(Self.self, from: Data(payload)) }
}

/// ISO 8601 UTC with seconds, for the documents.
func timestamp(_ date: Date) -> String {
  let formatter = ISO8601DateFormatter()
  formatter.formatOptions = [.withInternetDateTime]
  return formatter.string(from: date)
}
