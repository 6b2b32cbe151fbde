import Foundation
import TSModel
import TSPlan

/// What one check of a watch found, for a `StatusBoard` (given by `Monitor` after every check
/// that could read the watch and its manifest; not an event: it is not logged).
public struct MonitorCheck: Sendable, Equatable {
  /// When the watch was read.
  public var time: Date
  /// Whether tsapply has a record of an apply to it (drift can be told only then).
  public var hasRecord: Bool
  /// Resources changed on the watch since the last apply (0 without a record).
  public var drift: Int
  /// Changes the manifest would still make.
  public var pending: Int
  /// Whether the last apply left what the manifest gives (`DriftReport.holdsManifest`).
  public var holdsManifest: Bool
  /// Whether the emergency list (SOS switch, emergency contacts) is among what drifted: SOS at
  /// risk from the moment the check finds it, before any heal of it ends.
  public var sosAtRisk: Bool
  /// Whether the manifest could be used: `false` for a check that read the watch only to compare
  /// it with the last apply, its manifest having errors (`pending` is then not known).
  public var manifestUsable: Bool

  /// A check's findings.
  public init(time: Date, hasRecord: Bool, drift: Int, pending: Int, holdsManifest: Bool = false, sosAtRisk: Bool = false,
              manifestUsable: Bool = true) {
    self.manifestUsable = manifestUsable
    self.time = time
    self.hasRecord = hasRecord
    self.drift = drift
    self.pending = pending
    self.holdsManifest = holdsManifest
    self.sosAtRisk = sosAtRisk
  }
}

/// An agent's last report on a watch (over MQTT), in the words `tsapply status --fleet` uses.
public struct AgentReport: Sendable, Equatable {
  /// `in sync`, `drift`, `pending`, `new revision`, `no desired document`, `refused`, `invalid`, `failed`, `retrying`,
  /// or `no status` (no agent has announced the watch).
  public var state: String
  /// Why it was refused, is invalid, failed or is retried, in words (phone-like text masked by the agent).
  public var note: String?
  /// Resources changed on the watch since the last apply, at the agent's last check (`nil`: not known).
  public var drift: Int?
  /// Changes the manifests would still make (`nil`: not known).
  public var pending: Int?
  /// The revision last applied (or found matching); `nil` before any.
  public var appliedRevision: String?
  /// When the agent last read the watch.
  public var lastSeen: Date?
  /// What `drift` counts, by address (`WatchStatus.driftAddresses`); `nil` when not known.
  public var driftAddresses: [String]?
  /// Whether that drift alters whom an SOS press reaches (`WatchStatus.sosAtRisk`); `nil` when
  /// the agent does not say (then `emergency` among `driftAddresses` says it: `putsSOSAtRisk`).
  public var sosAtRisk: Bool?
  /// The online agents that all announce the watch, when more than one does (each applies its
  /// manifests to it, and its status is whichever spoke last), or, with `no status`, those it
  /// moved to, which have not reported yet (it is served: no `offline` alert); `nil` otherwise.
  public var servedBy: [String]?
  /// With `invalid`: the broker's desired document is older than what the agent handled
  /// (`WatchStatus.staleDesired`), not a manifest that cannot be used.
  public var staleDesired = false
  /// The words of that drift (`WatchStatus.driftSummary`: `contacts (1 added)`); `nil` when
  /// not known — the page then says them from the drift event, or counts them.
  public var driftSummary: String?

  /// Whether the drift it reports puts SOS at risk: as the agent says, or, from an agent that
  /// does not, whether the emergency list drifted; `nil` when no drift is known.
  public var putsSOSAtRisk: Bool? {
    guard let drift, drift > 0, let driftAddresses else { return nil }
    return sosAtRisk ?? ResourceAddress.mayPutSOSAtRisk(driftAddresses)
  }

  /// A report.
  public init(state: String, note: String? = nil, drift: Int?, pending: Int?, appliedRevision: String? = nil, lastSeen: Date? = nil,
              driftAddresses: [String]? = nil) {
    self.state = state
    self.note = note
    self.drift = drift
    self.pending = pending
    self.appliedRevision = appliedRevision
    self.lastSeen = lastSeen
    self.driftAddresses = driftAddresses
  }
}

/// The state behind `tsapply monitor --serve`'s status page (docs/monitor.md "Status page"):
/// every watch's state and why it needs attention, the open SOS presses until someone
/// acknowledges them, and counters for `/metrics`. Built only from what the monitors already
/// report — their events (the same the log and the notifiers get), each check's findings
/// (`MonitorCheck`) and, over MQTT, the agents' statuses (`AgentReport`) — so the page says what
/// the log says. Thread-safe; front ends read `snapshot()` and are told of changes (`observe`).
///
/// Text shown is masked (`PhoneRedaction.redactPhoneLikeSparingOwn`: times, revisions and backup
/// paths stay whole, as where the text comes from) unless `showSensitive`: events are
/// masked by the monitor already, an agent's messages by the agent; this is the page's own guard.
public final class StatusBoard: @unchecked Sendable {
  /// A watch the page lists, in the fleet file's order.
  public struct Member: Sendable, Hashable {
    /// Its name (the fleet file's; for one watch, its device spec or `watch`).
    public var name: String
    /// Its labels, for the page's filter (empty where the fleet file gives none).
    public var labels: [String]
    /// Its device spec, as given.
    public var device: String

    /// A member.
    public init(name: String, labels: [String] = [], device: String) {
      self.name = name
      self.labels = labels
      self.device = device
    }
  }

  /// One watch as the page shows it.
  public struct Row: Sendable, Equatable {
    /// The member.
    public var name: String
    public var labels: [String]
    public var device: String
    /// `checking` (not read yet), `in sync`, `drift`, `pending`, `no record`, `offline` (it
    /// cannot be reached, or its agent is offline), `invalid` (its manifest cannot be used),
    /// `failed` (an apply or heal failed for good), `refused` (refused as unsafe), `retrying`
    /// (its agent retries an apply, or the monitor's heal failed for a reason that can pass and
    /// the next check tries again), `not known` (the monitor cannot reach the broker, so it
    /// cannot see the watch: `Snapshot.monitorProblem`).
    public var state: String
    /// Why it needs attention, in plain words; empty when it does not. An offline watch keeps
    /// the reasons it had besides (a refusal, a drift): being out of reach hides none of them.
    public var reasons: [String]
    /// When it was last read.
    public var lastSeen: Date?
    /// Since when it cannot be reached.
    public var offlineSince: Date?
    /// Resources changed on it since the last apply; `nil` when not known.
    public var drift: Int?
    /// Changes its manifest would still make; `nil` when not known.
    public var pending: Int?
    /// The revision its agent last applied (over MQTT).
    public var appliedRevision: String?
    /// Whether, at its last check, the last apply left what its manifests give
    /// (`MonitorCheck.holdsManifest`); `nil` when not read (or over MQTT: `appliedRevision`).
    public var holdsManifest: Bool? = nil

    /// Whether it is listed under "needs attention".
    public var needsAttention: Bool { !reasons.isEmpty }
  }

  /// An SOS press.
  public struct SOSPress: Sendable, Equatable, Codable {
    /// The event's id (`sos-EPOCH-SEQUENCE`).
    public var id: String
    /// The member's name.
    public var watch: String
    /// When it was pressed (the event's time: the watch's, for a press replayed after an outage).
    public var time: Date
    /// When the monitor heard it, where that was more than a moment after `time` (the event's
    /// `heard_at`: a replayed press); `nil` when heard as it was pressed.
    public var heardAt: Date?
    /// Who acknowledged it on the page (the name they gave), and when; `nil` while open.
    public var acknowledgedBy: String?
    public var acknowledgedAt: Date?
    /// Not a press heard but a gap in the watch's events in which one may have been made
    /// (`error`, `reason: events_missed`): the event's words; open until someone has asked the
    /// wearer and acknowledges it (fresh-eyes finding: the page said all was well after a press
    /// was lost with a bridge's restart). `time` is when the gap was found.
    public var missed: String?
    /// The notifiers that have not had the press yet and since when delivering it to them fails
    /// (filled in each snapshot, never kept): said on its card too, so a press whose watch left
    /// the fleet file still says so.
    public var notDelivered: [(notifier: String, since: Date)] = []

    public static func == (a: SOSPress, b: SOSPress) -> Bool {
      a.id == b.id && a.watch == b.watch && a.time == b.time && a.heardAt == b.heardAt && a.acknowledgedBy == b.acknowledgedBy
        && a.acknowledgedAt == b.acknowledgedAt && a.missed == b.missed
        && a.notDelivered.map(\.notifier) == b.notDelivered.map(\.notifier) && a.notDelivered.map(\.since) == b.notDelivered.map(\.since)
    }

    private enum CodingKeys: String, CodingKey { case id, watch, time, heardAt, acknowledgedBy, acknowledgedAt, missed }

    /// The `acknowledged` event its acknowledgement on the page is logged as (`sos_id`,
    /// `sos_watch`, `sos_time`, `by`, and `missed: true` for a gap), worded for what it is: an SOS
    /// press, or a gap in which one may have been missed.
    public var acknowledgement: MonitorEvent {
      var fields: [String: JSONValue] = ["sos_id": .string(id), "sos_watch": .string(watch),
                                         "sos_time": .string(MonitorEvent.timestamp(time)), "by": .string(acknowledgedBy ?? "")]
      if missed != nil { fields["missed"] = .bool(true) }
      return MonitorEvent(time: acknowledgedAt ?? Date(), watch: watch, kind: .acknowledged,
                          message: (missed == nil ? "SOS \(id)" : "the gap in the watch's events \(id) (an SOS press may have been missed)")
                            + " on \(watch) acknowledged by \(acknowledgedBy ?? "?") on the status page",
                          fields: fields)
    }
  }

  /// What the page shows at one moment.
  public struct Snapshot: Sendable {
    /// When it was taken.
    public var time: Date
    /// Open SOS presses, newest first.
    public var openSOS: [SOSPress]
    /// The last acknowledged presses (at most `StatusBoard.keptAcknowledged`), newest acknowledgement first.
    public var acknowledged: [SOSPress]
    /// Every watch, in the fleet's order.
    public var rows: [Row]
    /// SOS presses seen since the monitor started.
    public var sosPresses: Int
    /// Deliveries to a notifier that failed (each event and notifier counted once; they are retried).
    public var deliveriesFailed: Int
    /// Applies (heals, agents' applies) by result: `applied`, `failed`, `refused`.
    public var applies: [String: Int]
    /// Events by kind since the monitor started.
    public var events: [String: Int]
    /// How long a watch may be offline before it needs attention.
    public var offlineThreshold: Duration
    /// Bumped on every change of the SOS list, of the watches needing attention, of the grid.
    public var versions: Versions
    /// The fleet's staged rollout, when it has had one (`StatusBoard.rollout(_:)`).
    public var rollout: Rollout?
    /// Why the monitor cannot see the watches now, in plain words (it lost the broker: an
    /// `offline` event with `broker`, the `monitor_offline` alert); `nil` while it can.
    public var monitorProblem: String?
    /// Since when it cannot (with `monitorProblem`).
    public var monitorProblemSince: Date?
    /// SOS presses of watches no longer in the fleet file that a notifier has not had yet, in
    /// plain words, oldest failure first: their rows are gone, so the page says them on their own.
    public var undeliveredOfRemoved: [String] = []

    /// Rows that need attention, in the fleet's order.
    public var attention: [Row] { rows.filter(\.needsAttention) }

    /// Watches by state.
    public var states: [String: Int] { rows.reduce(into: [:]) { $0[$1.state, default: 0] += 1 } }
  }

  /// Where a fleet's staged rollout stands (docs/fleet.md "Staged rollouts"), as the page shows
  /// it: the record is kept by `apply --fleet` in another process and read by the front end.
  public struct Rollout: Sendable, Equatable {
    /// `running`, `waiting`, `paused`, `interrupted` (its process ended while it ran), `aborted`,
    /// `completed`, or `unknown` when the record cannot be read.
    public var phase: String
    /// What `status --fleet` prints about it, one line each: the first says where it stands.
    public var lines: [String]
    /// The record as `status --fleet --json` gives it.
    public var json: JSONValue

    /// Whether a person has to act: paused or interrupted (`--continue` or `--abort`), aborted,
    /// or unreadable.
    public var needsAttention: Bool { ["paused", "interrupted", "aborted", "unknown"].contains(phase) }

    public init(phase: String, lines: [String], json: JSONValue) {
      self.phase = phase
      self.lines = lines
      self.json = json
    }
  }

  /// Change counters per part of the page, so a front end sends only what changed.
  public struct Versions: Sendable, Equatable {
    /// The open and acknowledged SOS presses.
    public var sos = 0
    /// The watches needing attention and their reasons.
    public var attention = 0
    /// Any row of the grid (last seen included).
    public var grid = 0
    /// A row of the grid other than in when it was last seen (a state, a count, a revision).
    public var gridState = 0
  }

  /// Acknowledged presses kept for the page.
  public static let keptAcknowledged = 20
  /// The longest name an acknowledgement keeps, in characters.
  public static let maxAcknowledgerLength = 60

  private struct WatchState {
    var member: Member
    /// Whether the watch itself can be reached (by the monitor, or by its agent as the agent
    /// reports it), since when not, and why.
    var connected: Bool?
    var offlineSince: Date?
    var offlineReason: String?
    /// Its agent offline (over MQTT), since when and in what words: apart from the watch's own
    /// reachability, so the agent coming back does not make an unreachable watch reachable.
    var agentOffline: (since: Date, reason: String)?
    /// Whether it has been offline (either way) longer than the threshold, as `tick()` last saw.
    var offlineNoted = false
    var lastSeen: Date?
    var hasRecord: Bool?
    var drift: Int?
    var driftMessage: String?
    /// Whether the drift reported last names the emergency list (the SOS switch, the emergency
    /// contacts): said first among its reasons, whatever else is wrong with the watch.
    var sosAtRisk = false
    var pending: Int?
    var holdsManifest: Bool?
    /// What went wrong healing it (the monitor's own heal) or applying it (its agent's apply,
    /// `agent` true: its next status replaces it).
    var healProblem: (state: String, message: String, agent: Bool)?
    var manifestProblem: String?
    var agent: AgentReport?
    /// Its events not being heard (the bridge's event stream keeps breaking, `reason:
    /// events_down`): the words, until the next `online`.
    var eventsDown: String?
    /// Its events heard again after that, from this time, but the stream not holding long enough
    /// yet to count as back (`online`, `events: reopened`); `nil` once it does (`resumed`).
    var eventsReopened: Date?
  }

  private let lock = NSLock()
  private var watches: [WatchState]
  private var index: [String: Int]
  private var open: [SOSPress] = []
  private var acknowledgedPresses: [SOSPress] = []
  private var seenSOS: Set<String> = []
  private var sosPresses = 0
  private var deliveriesFailed = 0
  /// SOS presses a notifier has not had yet, by "EVENT-ID NUL NOTIFIER": the watch, since when it
  /// failed (an `error`, `reason: delivery`; its `failing_since`, which may be before this
  /// monitor started), until its `delivered`. Kept by the board, not the watch's row, so a press
  /// whose watch left the fleet file still says it has not reached them (fresh-eyes finding).
  /// `restored`: read back from `storePath` at start, not failed again in this run (a watch no
  /// longer in the fleet file then has no monitor retrying it).
  private var undelivered: [String: (watch: String, since: Date, notifier: String, restored: Bool)] = [:]
  private var applies: [String: Int] = [:]
  private var events: [String: Int] = [:]
  private var counters = Versions()
  private var rolloutState: Rollout?
  /// The monitor without its broker: since when, and the page's words.
  private var monitorLost: (since: Date, problem: String)?
  private var observers: [@Sendable () -> Void] = []
  /// How long a watch may be unreachable before it needs attention.
  public let offlineThreshold: Duration
  /// Whether phone numbers are shown.
  public let showSensitive: Bool
  private let now: @Sendable () -> Date

  /// A board listing `members`; a watch offline longer than `offlineThreshold` needs attention.
  /// With `storePath`, the open and acknowledged SOS presses are kept in that file (0600) and
  /// read back when a board starts there, so a restarted monitor still shows a press nobody
  /// acknowledged; an unreadable file starts the list empty.
  public init(members: [Member], offlineThreshold: Duration, showSensitive: Bool = false, storePath: String? = nil,
              now: @escaping @Sendable () -> Date = { Date() }) {
    watches = members.map { WatchState(member: $0) }
    index = Dictionary(members.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
    self.offlineThreshold = offlineThreshold
    self.showSensitive = showSensitive
    self.storePath = storePath
    self.now = now
    if let storePath, let data = FileManager.default.contents(atPath: storePath), data.count <= 4 << 20,
       let kept = try? Self.decoder.decode(Kept.self, from: data), kept.format == Kept.formatName {
      open = kept.open
      acknowledgedPresses = kept.acknowledged
      seenSOS = Set(kept.open.map(\.id) + kept.acknowledged.map(\.id))
      for press in kept.undelivered ?? [] {
        undelivered[press.id + "\u{0}" + press.notifier] = (press.watch, press.since, press.notifier, true)
      }
    }
  }

  /// The SOS presses as kept in `storePath`.
  private struct Kept: Codable {
    static let formatName = "tsapply-status-page"
    var format = Kept.formatName
    var version = 1
    var open: [SOSPress]
    var acknowledged: [SOSPress]
    /// Presses a notifier has not had yet (`nil` in files written before they were kept), so a
    /// restarted monitor still says so of a press whose watch left the fleet file.
    var undelivered: [Undelivered]?
  }

  /// A press a notifier has not had yet, as kept.
  private struct Undelivered: Codable {
    var id: String
    var watch: String
    var notifier: String
    var since: Date
  }

  private let storePath: String?
  private let storeLock = NSLock()
  private static var decoder: JSONDecoder {
    let decoder = JSONDecoder()
    // Milliseconds kept (`InternetTime`); a file written to the second by an older build reads too.
    decoder.dateDecodingStrategy = .custom { decoder in
      let text = try decoder.singleValueContainer().decode(String.self)
      guard let date = InternetTime.date(text) else {
        throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a time: \(text)"))
      }
      return date
    }
    return decoder
  }

  /// Writes the presses to `storePath` (one writer at a time, each writing them as they are then).
  private func keep() {
    guard let storePath else { return }
    storeLock.withLock {
      let kept = lock.withLock {
        Kept(open: open, acknowledged: acknowledgedPresses,
             undelivered: undelivered.map { Undelivered(id: String($0.key.prefix { $0 != "\u{0}" }), watch: $0.value.watch,
                                                        notifier: $0.value.notifier, since: $0.value.since) }.sorted { $0.since < $1.since })
      }
      let encoder = JSONEncoder()
      encoder.dateEncodingStrategy = .custom { date, encoder in
        var container = encoder.singleValueContainer()
        try container.encode(InternetTime.text(date))
      }
      guard let data = try? encoder.encode(kept) else { return }
      try? SecureFile.write(Array(data), to: storePath)
    }
  }

  /// Lists `members` that are not listed yet, after the others: watches added to the fleet file
  /// while `monitor --fleet` runs (docs/fleet.md "Monitoring a fleet").
  public func add(_ members: [Member]) {
    changeWatches { () -> Bool in
      let new = members.filter { index[$0.name] == nil }
      for member in new {
        index[member.name] = watches.count
        watches.append(WatchState(member: member))
      }
      return !new.isEmpty
    }
  }

  /// Lists each of `members` already listed by its name afresh, in its place: a watch the fleet
  /// file now gives another device (its monitor moved to it), whose row says nothing of the
  /// device before (fresh-eyes finding: remove and add moved it to the end of the page and of
  /// `/status.json`). Its SOS presses stay, as for `remove(_:)`.
  public func replace(_ members: [Member]) {
    changeWatches { () -> Bool in
      let listed = members.compactMap { member in index[member.name].map { (member, $0) } }
      for (member, position) in listed { watches[position] = WatchState(member: member) }
      return !listed.isEmpty
    }
  }

  /// Gives each of `members` listed by its name the labels it has now (the fleet file edited
  /// while `monitor --fleet` runs), keeping everything else of its row (fresh-eyes finding: new
  /// labels reached the page's filter only after a restart).
  public func relabel(_ members: [Member]) {
    change { () -> Bool in
      var changed = false
      for member in members {
        guard let position = index[member.name], watches[position].member.labels != member.labels else { continue }
        watches[position].member.labels = member.labels
        changed = true
      }
      return changed
    }
  }

  /// Stops listing the watches `names` (those listed): watches removed from the fleet file
  /// while `monitor --fleet` runs (docs/monitor.md "Status page"). Their open and acknowledged
  /// SOS presses stay until someone acknowledges them: a press is not forgotten because its
  /// watch left the fleet.
  public func remove(_ names: [String]) {
    changeWatches { () -> Bool in
      let leaving = Set(names.filter { index[$0] != nil })
      guard !leaving.isEmpty else { return false }
      watches.removeAll { leaving.contains($0.member.name) }
      index = Dictionary(watches.enumerated().map { ($1.member.name, $0) }, uniquingKeysWith: { first, _ in first })
      return true
    }
  }

  /// Runs `body` under the lock; when it changed which watches are listed or their rows as a
  /// whole (it returns true), every version moves — the grid, its state, the attention list —
  /// and the observers are told.
  private func changeWatches(_ body: () -> Bool) {
    let observers: [@Sendable () -> Void]? = lock.withLock {
      guard body() else { return nil }
      counters.grid += 1
      counters.gridState += 1
      counters.attention += 1
      return self.observers
    }
    observers?.forEach { $0() }
  }

  /// Calls `observer` after every change (on the thread that made it, without the board's lock).
  public func observe(_ observer: @escaping @Sendable () -> Void) {
    lock.withLock { observers.append(observer) }
  }

  // MARK: Input

  /// Takes `event` into account for the watches named `names` (one for a monitor's own event;
  /// an agent's offline event names every watch it serves). Unknown names are ignored.
  /// An event with a `broker` field is the monitor's own connection to the broker (lost:
  /// `offline`, back: `online`): it concerns every watch, whatever `names` says.
  public func record(_ event: MonitorEvent, for names: [String]) {
    defer {
      if event.kind == .sos || event.kind == .delivered || event.fields["reason"] == .string("delivery")
        || event.fields["reason"] == .string("events_missed") { keep() }
    }
    let broker = event.fields["broker"].flatMap { if case .string(let text) = $0 { text } else { nil } }
    change(touching: broker == nil ? names : nil) { () -> Bool in
      events[event.kind.rawValue, default: 0] += 1
      var changed = false
      switch event.kind {
      case .offline where broker != nil:
        guard monitorLost == nil else { return false }
        monitorLost = (event.time, "This monitor cannot reach the broker \(broker ?? "")"
          + ": what the watches hold is not known, and their SOS presses cannot be heard through it until it is back (it keeps trying).")
        counters.attention += 1
        return true
      case .online where broker != nil:
        guard monitorLost != nil else { return false }
        monitorLost = nil
        counters.attention += 1
        return true
      case .sos:
        guard let name = names.first, seenSOS.insert(event.id).inserted else { return false }
        sosPresses += 1
        let heardAt = event.fields["heard_at"].flatMap { if case .string(let text) = $0 { InternetTime.date(text) } else { nil } }
        open.insert(SOSPress(id: event.id, watch: name, time: event.time, heardAt: heardAt), at: 0)
        open.sort { $0.time > $1.time }
        counters.sos += 1
        return true
      case .error where event.fields["reason"] == .string("delivery"):
        deliveriesFailed += 1
        if let name = names.first, case .string(let id)? = event.fields["event_id"], case .string(let notifier)? = event.fields["notifier"] {
          let since = event.fields["failing_since"].flatMap { if case .string(let text) = $0 { InternetTime.date(text) } else { nil } }
          undelivered[id + "\u{0}" + notifier] = (name, min(since ?? event.time, event.time), notifier, false)
          counters.sos += 1
        }
        changed = true
      case .delivered:
        guard case .string(let id)? = event.fields["event_id"], case .string(let notifier)? = event.fields["notifier"],
              undelivered.removeValue(forKey: id + "\u{0}" + notifier) != nil else { return false }
        counters.sos += 1
        changed = true
      case .error where event.fields["reason"] == .string("events_missed"):
        // A press may have been made in the gap: open as an SOS is, until someone acknowledges it.
        guard let name = names.first, seenSOS.insert(event.id).inserted else { return false }
        open.insert(SOSPress(id: event.id, watch: name, time: event.time, missed: shown(event.message)), at: 0)
        open.sort { $0.time > $1.time }
        counters.sos += 1
        return true
      case .applied:
        applies["applied", default: 0] += 1
        changed = true
      default:
        break
      }
      for name in names {
        guard let position = index[name] else { continue }
        changed = apply(event, to: &watches[position]) || changed
      }
      return changed
    }
  }

  /// Takes a check of the watch `name` into account.
  public func checked(_ name: String, _ check: MonitorCheck) {
    change(touching: [name]) { () -> Bool in
      guard let position = index[name] else { return false }
      var watch = watches[position]
      watch.connected = true
      watch.offlineSince = nil
      watch.offlineNoted = false
      watch.lastSeen = check.time
      watch.hasRecord = check.hasRecord
      watch.drift = check.hasRecord ? check.drift : nil
      // Read with a manifest that has errors: seen, and what the manifest asks is still not known.
      watch.pending = check.manifestUsable ? check.pending : nil
      watch.holdsManifest = check.holdsManifest
      if check.manifestUsable { watch.manifestProblem = nil }
      if check.drift == 0 {
        watch.driftMessage = nil
        watch.healProblem = nil
      }
      watch.sosAtRisk = check.drift > 0 && check.sosAtRisk
      watches[position] = watch
      return true
    }
  }

  /// Takes an agent's status of the watch `name` into account.
  public func reported(_ name: String, _ report: AgentReport) {
    change(touching: [name]) { () -> Bool in
      guard let position = index[name] else { return false }
      let before = watches[position].agent
      if before?.state != report.state, ["refused", "failed"].contains(report.state) { applies[report.state, default: 0] += 1 }
      if before?.appliedRevision != report.appliedRevision, report.appliedRevision != nil, before != nil { applies["applied", default: 0] += 1 }
      var report = report
      report.note = report.note.map(shown)
      report.driftSummary = report.driftSummary.map(shown)
      watches[position].agent = report
      // The agent's status is newer than its error event: it says whether the apply still fails.
      if watches[position].healProblem?.agent == true { watches[position].healProblem = nil }
      watches[position].lastSeen = report.lastSeen ?? watches[position].lastSeen
      if report.drift == 0 { watches[position].driftMessage = nil }
      if report.drift == 0 { watches[position].sosAtRisk = false }
      // The agent measured the drift (or, serving the watch no more, says nothing of it): a
      // drift event heard before gives no figure beside it (fresh-eyes finding: drift 1 shown
      // for a watch no agent served, last in sync).
      if report.drift == 0 || report.state == "no status" { watches[position].drift = report.drift }
      if let atRisk = report.putsSOSAtRisk { watches[position].sosAtRisk = atRisk }
      return true
    }
  }

  /// Takes where the fleet's staged rollout stands into account (`nil`: it has had none); the
  /// attention part changes when it does. Call it whenever the record may have changed.
  public func rollout(_ rollout: Rollout?) {
    let observers: [@Sendable () -> Void]? = lock.withLock {
      guard rolloutState != rollout else { return nil }
      rolloutState = rollout
      counters.attention += 1
      return self.observers
    }
    observers?.forEach { $0() }
  }

  /// The open SOS press `id`, if it is open.
  public func openPress(_ id: String) -> SOSPress? { lock.withLock { open.first { $0.id == id } } }

  /// Records that the open SOS press `id` was acknowledged by `person` (trimmed, control
  /// characters removed, at most `maxAcknowledgerLength` characters, phone-like text masked:
  /// `acknowledger`) at `time` (default now);
  /// the front end writes the `acknowledged` event first. `nil` when there is no such open press
  /// (acknowledged already, or unknown) or `person` is empty.
  public func acknowledge(_ id: String, by person: String, at time: Date? = nil) -> SOSPress? {
    let cleaned = acknowledger(person)
    guard !cleaned.isEmpty else { return nil }
    var result: SOSPress?
    change(touching: []) { () -> Bool in
      guard let position = open.firstIndex(where: { $0.id == id }) else { return false }
      var press = open.remove(at: position)
      press.acknowledgedBy = cleaned
      press.acknowledgedAt = time ?? now()
      acknowledgedPresses.insert(press, at: 0)
      if acknowledgedPresses.count > Self.keptAcknowledged { acknowledgedPresses.removeLast() }
      counters.sos += 1
      result = press
      return true
    }
    if result != nil { keep() }
    return result
  }

  /// `person` as this board keeps and shows an acknowledger (`cleanName`), phone-like text masked
  /// unless `showSensitive`, as the monitor's other text is (a number typed beside a name, fe104 #1).
  public func acknowledger(_ person: String) -> String { shown(Self.cleanName(person)) }

  /// `person` as an acknowledgement keeps it: one line, trimmed, at most `maxAcknowledgerLength`.
  public static func cleanName(_ person: String) -> String {
    let line = String(person.unicodeScalars.filter { !CharacterSet.controlCharacters.contains($0) }.map(Character.init))
    return String(line.trimmingCharacters(in: .whitespaces).prefix(maxAcknowledgerLength))
  }

  /// Re-evaluates what depends on the clock (a watch offline longer than the threshold); call
  /// it every second or so (the page's server does). Observers are told when something crossed.
  public func tick() {
    change { () -> Bool in
      let time = now()
      var changed = false
      for position in watches.indices {
        guard let since = Self.offline(watches[position])?.since, !watches[position].offlineNoted,
              time.timeIntervalSince(since) >= Backoff.seconds(offlineThreshold) else { continue }
        watches[position].offlineNoted = true
        changed = true
      }
      return changed
    }
  }

  // MARK: Output

  /// The page's data now.
  public func snapshot() -> Snapshot {
    lock.withLock {
      let time = now()
      let openSOS = open.map { press in
        var press = press
        press.notDelivered = undelivered.filter { $0.key.hasPrefix(press.id + "\u{0}") }.values.map { ($0.notifier, $0.since) }
          .sorted { $0.notifier < $1.notifier }
        return press
      }
      var snapshot = Snapshot(time: time, openSOS: openSOS, acknowledged: acknowledgedPresses, rows: watches.map { row($0, at: time) },
                              sosPresses: sosPresses, deliveriesFailed: deliveriesFailed, applies: applies, events: events,
                              offlineThreshold: offlineThreshold, versions: counters, rollout: rolloutState,
                              monitorProblem: monitorLost?.problem, monitorProblemSince: monitorLost?.since)
      // Presses of watches that left the fleet file: no row says them any more (fresh-eyes
      // findings: gone from the page once the watch was removed, or after a restart, while the
      // press waited undelivered in the watch's outbox).
      snapshot.undeliveredOfRemoved = undelivered.values.filter { index[$0.watch] == nil }.sorted { $0.since < $1.since }.map { press in
        "An SOS press of \(press.watch) has not reached \(press.notifier): delivering it has failed since \(MonitorEvent.timestamp(press.since)), and "
          + (press.restored
             ? "\(press.watch) is no longer in the fleet file, so no monitor retries it: it waits in the watch's outbox until the watch is put back in the fleet file"
             : "\(press.watch) left the fleet file; its monitor keeps trying until this monitor stops, and again when it starts")
      }
      return snapshot
    }
  }

  /// The change counters now (cheap: no rows are built).
  public var versions: Versions { lock.withLock { counters } }

  // MARK: Internals

  /// Runs `body` under the lock; when it reports a change, bumps the versions of what changed
  /// for the watches in `touching` (names; `nil`: every watch) — the attention list when their
  /// reasons changed, the grid's state when a row changed other than in when it was last seen,
  /// the grid when a row changed at all — and tells the observers.
  private func change(touching names: [String]? = nil, _ body: () -> Bool) {
    let observers: [@Sendable () -> Void]? = lock.withLock {
      let positions = names.map { $0.compactMap { index[$0] } } ?? Array(watches.indices)
      let time = now()
      let before = positions.map { row(watches[$0], at: time) }
      guard body() else { return nil }
      let after = positions.map { row(watches[$0], at: time) }
      if after != before { counters.grid += 1 }
      func unseen(_ rows: [Row]) -> [Row] { rows.map { var row = $0; row.lastSeen = nil; return row } }
      if unseen(after) != unseen(before) { counters.gridState += 1 }
      if after.map(\.reasons) != before.map(\.reasons) { counters.attention += 1 }
      return self.observers
    }
    observers?.forEach { $0() }
  }

  private func shown(_ text: String) -> String { showSensitive ? text : PhoneRedaction.redactPhoneLikeSparingOwn(text) }

  private func apply(_ event: MonitorEvent, to watch: inout WatchState) -> Bool {
    let reason = event.fields["reason"].flatMap { if case .string(let text) = $0 { text } else { nil } }
    switch event.kind {
    case .online:
      // Its agent back says nothing of the watch: one its agent cannot reach stays offline
      // until the agent says it reaches it again (a `served_by` event).
      watch.offlineNoted = false
      // Reached again, or its events heard again: they are being heard — from a stream that
      // reopened (`events: reopened`), not yet long enough to count as holding.
      watch.eventsDown = nil
      watch.eventsReopened = event.fields["events"] == .string("reopened") ? event.time : nil
      if event.fields["agent"] != nil {
        watch.agentOffline = nil
        return true
      }
      watch.connected = true
      watch.offlineSince = nil
      watch.offlineReason = nil
      watch.lastSeen = event.time
      if case .bool(let record)? = event.fields["has_record"] { watch.hasRecord = record }
    case .offline:
      // Plain words; the device's own error (paths, codes) is in the log.
      if case .string(let agent)? = event.fields["agent"] {
        if watch.agentOffline == nil { watch.agentOffline = (event.time, shown("its agent \(agent) is offline")) }
        return true
      }
      watch.connected = false
      if watch.offlineSince == nil { watch.offlineSince = event.offlineSince }
      // What its last read found, from before a restart of the monitor too (`sos_at_risk`).
      if event.fields["sos_at_risk"] == .bool(true) { watch.sosAtRisk = true }
      if watch.lastSeen == nil, case .string(let seen)? = event.fields["last_seen"] { watch.lastSeen = InternetTime.date(seen) }
      if event.fields["served_by"] != nil {
        // Over MQTT: the agent, online, cannot reach its watch; its words say why.
        watch.offlineReason = shown(event.message)
      } else {
        watch.offlineReason = "the watch cannot be reached (out of range, or what connects it is off); the monitor keeps trying"
      }
      // Out of reach longer than the threshold already (a restarted monitor going on with an
      // outage it kept): listed now, not at the next `tick()` (fresh-eyes finding: offline
      // without "needs attention" for about a second after a restart).
      if let since = Self.offline(watch)?.since, now().timeIntervalSince(since) >= Backoff.seconds(offlineThreshold) {
        watch.offlineNoted = true
      }
    case .drift:
      if case .array(let addresses)? = event.fields["addresses"] {
        watch.drift = addresses.count
        watch.sosAtRisk = event.putsSOSAtRisk
      }
      if case .integer(let pending)? = event.fields["pending"] { watch.pending = pending }
      watch.driftMessage = shown(event.message)
      watch.lastSeen = event.time
      switch event.fields["reconcile"] {
      case .string("unsafe")?:
        applies["refused", default: 0] += 1
        watch.healProblem = ("refused", shown(event.message), false)
      case .string("failed")?:
        applies["failed", default: 0] += 1
        watch.healProblem = ("failed", shown(event.message), false)
      case .string("retrying")?:
        // Not a failed apply yet: the next check tries again (as an agent's `retrying` status).
        watch.healProblem = ("retrying", Self.retrying(event, shown), false)
      case .string("applied")?, .string("nothing")?:
        // Healed, or nothing to heal: a refusal or failure said before no longer stands.
        watch.healProblem = nil
      default: break
      }
    case .resolved:
      watch.drift = 0
      watch.driftMessage = nil
      watch.sosAtRisk = false
      watch.healProblem = nil
    case .applied:
      watch.healProblem = nil
      // A heal that wrote and verified: what it healed matched the manifest when it was read
      // back, so the drift left is what it did not heal — and SOS is at risk only by that. Its
      // `resolved` follows the next read; a watch out of reach by then does not keep the drift's
      // words ("… healing it") or SOS at risk (fresh-eyes findings, docs/monitor.md "Offline and online").
      if event.fields["drift_id"] != nil {
        let notHealed = event.names("not_healed")
        if !ResourceAddress.mayPutSOSAtRisk(notHealed) { watch.sosAtRisk = false }
        if notHealed.isEmpty {
          watch.drift = 0
          watch.driftMessage = nil
        } else if watch.drift != nil {
          watch.drift = notHealed.count
        }
      }
    case .error:
      switch reason {
      case "events_down":
        watch.eventsDown = shown(event.message)
        watch.eventsReopened = nil
      case "delivery":
        return true  // kept by the board (`undelivered`), the watch's reasons say it
      case "manifest":
        watch.manifestProblem = shown(event.message)
        // What the manifest asks of the watch is not known while it cannot be used; drift
        // still is (the monitor compares the watch with the last apply meanwhile, and its drift
        // events, `reconcile: invalid`, say when that changes).
        watch.pending = nil
      case "apply" where event.fields["reconcile"] == .string("retrying"):
        watch.healProblem = ("retrying", event.fields["agent"] != nil ? shown(event.message) : Self.retrying(event, shown),
                             event.fields["agent"] != nil)
      case "apply", "keeps_drifting_back":
        if reason == "apply" { applies["failed", default: 0] += 1 }
        watch.healProblem = ("failed", shown(event.message), event.fields["agent"] != nil)
      case nil where event.fields["agent"] != nil:
        // An agent's error event: handling a desired document failed or was refused, or fails
        // for now and is retried (`reconcile: retrying`); its status (`reported`) says which
        // and replaces it.
        watch.healProblem = (event.fields["reconcile"] == .string("retrying") ? "retrying" : "failed", shown(event.message), true)
      default: return false
      }
    case .removed where event.fields["agent"] != nil:
      // Its agent retired: not offline any more; whether another agent serves the watch is its
      // report's to say.
      guard watch.agentOffline != nil else { return false }
      watch.agentOffline = nil
    case .sos, .acknowledged, .alert, .removed, .delivered:
      // A removed watch's row goes with `remove(_:)`.
      return false
    }
    return true
  }

  /// The page's words for the monitor's heal being retried (`event`: its drift or error event,
  /// `reconcile: retrying`): why it failed, and that each check tries again — not the event's
  /// attempt number and next time, which the page would keep after later attempts (no event is
  /// sent for each; fresh-eyes finding: "attempt 1" shown for an hour). With `written: true`
  /// (every write made, only the read verifying them failed): that it wrote its changes, not
  /// verified, and the next check reads the watch again.
  static func retrying(_ event: MonitorEvent, _ shown: (String) -> String) -> String {
    let error = if case .string(let text)? = event.fields["error"] { text } else { "" }
    if event.fields["written"] == .bool(true) {
      return shown("healing wrote its changes, not verified" + (error.isEmpty ? "" : ": \(error)")
        + "; the next check reads the watch again")
    }
    return shown("healing failed for a reason that can pass" + (error.isEmpty ? "" : ": \(error)")
      + "; each check tries again until it heals or fails for good")
  }

  private func row(_ watch: WatchState, at time: Date) -> Row {
    var reasons: [String] = []
    var state: String
    let drift = watch.agent?.drift ?? watch.drift
    let pending = watch.agent?.pending ?? watch.pending
    // The drift event's message says it already ("1 resource changed on the watch since the
    // last apply: contacts (1 added)"): its what, once.
    // `whatOnly`: without what healing did (the monitor's "…; healing failed …"), when another
    // reason says it.
    func driftReason(_ drift: Int, whatOnly: Bool = false) -> String {
      let what = watch.driftMessage.map { message in
        message.range(of: "changed on the watch since the last apply: ").map { String(message[$0.upperBound...]) }
          ?? (whatOnly ? message.range(of: " changed on the watch since the last apply;").map { String(message[..<$0.lowerBound]) } : nil)
          ?? message
      }
      // The agent's status is its newest word (the event may be from before a restart, or missed).
      return "Changed on the watch since the last apply: " + (watch.agent?.driftSummary ?? what ?? "\(drift) change\(drift == 1 ? "" : "s")")
    }
    // Beside another state (a refusal, a revision not published), a drift the agent measured is
    // said too: the wearer's change is not hidden behind it.
    let alsoDrift = (drift ?? 0) > 0 ? [driftReason(drift ?? 0)] : []
    if let problem = watch.manifestProblem {
      state = "invalid"
      reasons.append("Its manifest cannot be used: \(problem)")
    } else if let agent = watch.agent, ["refused", "failed", "invalid", "retrying"].contains(agent.state) {
      state = agent.state
      let what = switch agent.state {
      case "refused": "The apply was refused as unsafe"
      // Not the manifest (fresh-eyes finding: an admin would look for an edit to fix).
      case "invalid" where agent.staleDesired: "The broker holds an older desired document than its agent applied"
      case "invalid": "Its manifest cannot be used"
      case "retrying": "The apply failed and is being retried"
      default: "The apply failed"
      }
      reasons.append(what + (agent.note.map { ": \($0)" } ?? ""))
      reasons += alsoDrift
    } else if let agent = watch.agent, agent.state == "no status" {
      // Over MQTT: no agent has announced the watch, so nothing is known of it — and its SOS
      // presses reach no one (fresh-eyes finding: shown `checking`, "needs attention: none").
      state = agent.state
      // Served by more than one agent at once: said below, with what to do.
      if (agent.servedBy?.count ?? 0) < 2 { reasons.append(agent.note ?? "No agent has announced this watch") }
    } else if let agent = watch.agent, agent.state == "no desired document" {
      // Over MQTT: the broker lost the watch's desired document; its agent holds the watch to
      // what it last applied, and a restarted agent would be handed nothing.
      state = agent.state
      reasons.append(agent.note.map { $0.prefix(1).uppercased() + $0.dropFirst() } ?? "The broker holds no desired document for it")
      // Publishing again is refused while a staged rollout is paused: said as for a new
      // revision (fresh-eyes fe100 #6: the advice was refused when followed).
      Self.namePausedRollout(rolloutState, in: &reasons)
      reasons += alsoDrift
    } else if let agent = watch.agent, agent.state == "new revision" {
      // Over MQTT: the manifests were edited and not published — or another publisher's revision
      // is on the broker, which the page cannot tell apart (fresh-eyes fe100: "Its manifests
      // changed" for a foreign document); drift and pending were counted against the revision
      // the agent holds.
      state = agent.state
      // Its agent offline, it may have been published meanwhile: the page does not read the
      // broker's desired documents, so it does not say which (fresh-eyes finding: "not
      // published yet" beside a revision published while the agent was down).
      if watch.agentOffline != nil {
        // Published before it went, the agent may have been applying it (killed mid-apply): the
        // watch may hold part of it (fresh-eyes finding: nothing said so while it held half).
        reasons.append("Its manifests give a revision its agent, offline, has not reported on: not published yet, or published while "
          + "the agent is away or just before it went — then the watch may hold part of it; the agent applies it when back "
          + "('tsapply status --fleet' says which)" + (agent.note.map { ": \($0)" } ?? ""))
      } else {
        reasons.append("Its manifests give a revision the broker does not hand its agent (edited and not published yet, or another publisher's revision is on the broker)" + (agent.note.map { ": \($0)" } ?? ""))
      }
      // A staged rollout paused or stopped: whether it can go on with these manifests depends
      // on whether they are the ones it started with, which the page does not know, so both
      // ways are said; with no such rollout, neither (fresh-eyes findings: only `--continue`
      // was said, which refuses manifests edited since; then both said with no rollout at all).
      Self.namePausedRollout(rolloutState, in: &reasons)
      reasons += alsoDrift
    } else if let problem = watch.healProblem {
      state = problem.state
      let what = switch (problem.agent, problem.state) {
      case (true, "retrying"): "The apply failed and is being retried: "
      case (true, _): "The apply failed: "
      case (false, "refused"): "Not healed, refused as unsafe: "
      case (false, "retrying"): "Not healed yet, being retried: "
      case (false, _): "Healing failed: "
      }
      reasons.append(what + problem.message)
      // The retried heal's words say why, not what changed: that is said beside them.
      if problem.state == "retrying" && !problem.agent, let drift, drift > 0 { reasons.append(driftReason(drift, whatOnly: true)) }
    } else if let drift, drift > 0 {
      state = "drift"
      reasons.append(driftReason(drift))
    } else if watch.agent == nil && watch.hasRecord == false {
      // As `status --fleet` says it (FleetStatus): never applied comes before what is pending.
      state = "no record"
      reasons.append("Never applied by tsapply, so changes on it cannot be told")
      if let pending, pending > 0 { reasons.append("\(pending) change\(pending == 1 ? "" : "s") in its manifest not applied yet") }
    } else if let pending, pending > 0 {
      state = "pending"
      reasons.append("\(pending) change\(pending == 1 ? "" : "s") in its manifest not applied yet")
    } else if watch.agent != nil || (watch.connected == true && watch.drift != nil) {
      state = "in sync"
    } else {
      state = "checking"
    }
    // What its manifest would still change, beside drift or a refusal: the shift acts on both
    // (fresh-eyes finding: only the count said it).
    if let pending, pending > 0 {
      let words = "\(pending) change\(pending == 1 ? "" : "s") in its manifest not applied yet"
      if !reasons.contains(words) { reasons.append(words) }
    }
    // Two agents at once: what the page shows of it may be either's, and both write to it.
    if let agents = watch.agent?.servedBy, agents.count > 1 {
      reasons.insert("Served by more than one agent at once (\(agents.joined(separator: ", "))): each applies its manifests to it and "
        + "what is shown here is whichever reported last; stop all but one of them ('tsapply status --fleet' lists them)", at: 0)
    }
    // What may keep an SOS press from anyone, said before everything else (`sosFirst` of them).
    var sosFirst = 0
    // The emergency list drifted: said first, whatever else is wrong with the watch (a
    // manifest with errors, a heal that keeps failing) — a press may reach no one.
    if watch.sosAtRisk, (drift ?? 0) > 0 {
      sosFirst += 1
      reasons.insert("SOS at risk: its SOS switch or emergency contacts changed on the watch, so a press may reach no one or not whom the manifest says", at: 0)
    } else if watch.sosAtRisk, watch.connected == false || watch.agent?.state == "no status" {
      // Out of reach since a read that found it (fresh-eyes finding: gone from the page once a
      // restarted monitor could not read the watch), or served by no agent (or two) since its
      // agent's read found it, its sos_drift alert still open (fresh-eyes fe102 #5).
      sosFirst += 1
      reasons.insert("SOS at risk when it was last read, "
        + (watch.connected == false ? "before it went out of reach" : "and what it holds now is not known")
        + ": its SOS switch or emergency contacts had changed on the watch, so a press may reach no one or not whom the manifest says", at: 0)
    }
    // An SOS a notifier has not had yet (it keeps failing): said first — the press reached no
    // one through it (fresh-eyes finding: "needs attention: none" while the receiver was down).
    let failing = undelivered.values.filter { $0.watch == watch.member.name }
    if let oldest = failing.min(by: { $0.since < $1.since }) {
      let notifiers = Set(failing.map(\.notifier)).sorted().joined(separator: ", ")
      sosFirst += 1
      reasons.insert("An SOS press has not reached \(notifiers) yet: delivery has failed since \(MonitorEvent.timestamp(oldest.since)); "
        + "the monitor keeps trying (check the receiver)", at: 0)
    }
    // Its SOS presses not being heard (held back on the way): said first of all.
    if let down = watch.eventsDown {
      sosFirst += 1
      reasons.insert("Not hearing this watch's SOS presses: " + down, at: 0)
    } else if let since = watch.eventsReopened {
      sosFirst += 1
      reasons.insert("Hearing this watch's SOS presses again since \(MonitorEvent.timestamp(since)), after its event stream kept breaking; "
        + "the events_down alert stays open until the stream has held 30 s", at: 0)
    }
    let offline = Self.offline(watch)
    if let monitorLost {
      // Nothing said of the watch now is known: not what it holds, not whether it is reached.
      state = "not known"
      reasons = ["This monitor cannot reach the broker (since \(MonitorEvent.timestamp(monitorLost.since))), so what this watch holds "
        + "and its SOS presses cannot be seen through it"]
    } else if let offline {
      // Its other reasons stay: being out of reach hides no refusal and no drift.
      state = "offline"
      // Past the threshold once `tick()` saw it so, so the attention list changes with a version.
      // Not "for how long": that would change every second; the page shows `offlineSince`.
      // After what may keep an SOS press from anyone (fresh-eyes finding: "Offline longer than"
      // came before "SOS at risk", which docs/monitor.md says comes first whatever the state).
      if watch.offlineNoted {
        reasons.insert("Offline longer than \(Self.duration(Backoff.seconds(offlineThreshold))): " + offline.reason, at: sosFirst)
      } else if let agent = watch.agentOffline {
        // Its agent gone, none of its SOS presses reaches this monitor: said at once, as the
        // `agent_offline` alert is (fresh-eyes finding: 100 residents' presses unheard for the
        // 5 minutes before the threshold, and "Needs attention" did not say so). A watch out of
        // its agent's reach waits for the threshold: its agent still hears what it can.
        reasons.insert(agent.reason.prefix(1).uppercased() + agent.reason.dropFirst()
          + ": this watch's SOS presses cannot reach this monitor until it is back", at: sosFirst)
      }
    }
    // Out of sight, what the watch holds now is not known: no number for it, as `status --fleet`
    // shows none (the last reading stays in its reasons; fresh-eyes finding: drift 0 for watches
    // nobody could see).
    let unseen = offline != nil || monitorLost != nil
    var row = Row(name: watch.member.name, labels: watch.member.labels, device: watch.member.device, state: state, reasons: reasons,
                  lastSeen: watch.lastSeen, offlineSince: offline?.since, drift: unseen ? nil : drift, pending: unseen ? nil : pending,
                  appliedRevision: watch.agent?.appliedRevision)
    row.holdsManifest = watch.holdsManifest
    return row
  }

  /// Whether `watch` is offline — its agent offline, or the watch out of reach — since when
  /// (the earlier) and why (the agent first: nothing of the watch is heard without it).
  private static func offline(_ watch: WatchState) -> (since: Date, reason: String)? {
    let unreachable = watch.connected == false ? watch.offlineSince.map { ($0, watch.offlineReason ?? "it cannot be reached") } : nil
    guard let first = watch.agentOffline ?? unreachable else { return nil }
    return (min(first.since, unreachable?.0 ?? first.since), first.reason)
  }

  /// With a staged rollout paused or interrupted: the last of `reasons` says how to go on with
  /// it, both ways (whether it can go on with these manifests depends on whether they are the
  /// ones it started with, which the page does not know); nothing otherwise.
  static func namePausedRollout(_ rollout: Rollout?, in reasons: inout [String]) {
    guard let phase = rollout?.phase, ["paused", "interrupted"].contains(phase), let last = reasons.indices.last else { return }
    reasons[last] += " (the fleet's staged rollout is \(phase): continue it with 'tsapply apply --fleet --continue' if these are the "
      + "manifests it started with, else end it with --abort first)"
  }

  /// `45 s`, `12 min`, `3 h 5 min`, `2 d 4 h`: how long, for people.
  public static func duration(_ seconds: TimeInterval) -> String {
    let whole = max(0, Int(seconds))
    if whole < 60 { return "\(whole) s" }
    if whole < 3600 { return "\(whole / 60) min" }
    if whole < 86400 { return "\(whole / 3600) h" + (whole % 3600 / 60 > 0 ? " \(whole % 3600 / 60) min" : "") }
    return "\(whole / 86400) d" + (whole % 86400 / 3600 > 0 ? " \(whole % 86400 / 3600) h" : "")
  }
}
