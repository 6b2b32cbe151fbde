import Foundation
import TSModel
import TSApply
import TSDevice
import TSEngine

/// What a monitor has handled of one watch's events, kept across restarts in
/// `monitor-events.json` (0600) in the watch's state folder (`WatchHome.monitorEventsPath`):
/// the device's id of the last event it handled (`Device.listen(to:after:_:)` resumes after it,
/// so what happened while no monitor listened — killed, stopped, offline — is replayed, and what
/// was handled is not), and the sequence number of the last SOS it numbered.
///
/// SOS events are numbered 1, 2, … per watch in the order the watch reported them, and their id
/// is `sos-EPOCH-SEQUENCE` (`sos-3f9c0d1e2a4b5c6d-0000000007`): EPOCH is random per file, so ids
/// are never reused even if the file is lost, and an SOS replayed after a crash that came before
/// its number was recorded gets the same number and id again (the outbox and receivers drop it
/// as a duplicate).
///
/// It also keeps the newest SOS presses handled (`recentSOS`, at most `keptPresses`): an agent
/// (`agent-events.json`) republishes those it numbered, retained, for a monitor that was not
/// connected when the press was published (docs/fleet.md "Topics"); `monitor --fleet` over MQTT
/// keeps one record per agent's watch (`WATCH-ID.json` under the fleet's `monitor-events/`)
/// holding the presses it handled, so a press heard again (live and republished, or after a
/// restart) is delivered once. Thread-safe.
public final class HandledEvents: @unchecked Sendable {
  /// The file's contents.
  public struct State: Codable, Hashable, Sendable {
    /// Always `tsapply-monitor-events`.
    public var format: String
    /// The format's version (1).
    public var version: Int
    /// The watch's identity, so a file is never used for another watch.
    public var watch: String
    /// Random per file: the middle part of every SOS id.
    public var epoch: String
    /// The device's id of the last event handled; `nil` before the first.
    public var lastEventID: DeviceEventID?
    /// The number of the last SOS numbered (0: none yet).
    public var sequence: Int
    /// The newest SOS presses handled, oldest first, at most `keptPresses`; `nil` in files
    /// written before they were kept.
    public var recentSOS: [Press]?
    /// When a monitor first listened to the watch (ISO 8601): with no event handled yet, a
    /// monitor asks for every event the watch keeps and delivers the presses made since
    /// (`Monitor`, docs/monitor.md "Missed events"); `nil` in files written before it was kept.
    public var listeningSince: String?
    /// The outage a monitor noticed and has not seen end: kept so that a restarted monitor goes
    /// on with it (its offline time, its last seen) instead of starting a new one at its start
    /// (docs/monitor.md "Offline and online"); `nil` while the watch answers, and in files
    /// written before it was kept.
    public var outage: Outage?
    /// When a monitor last read the watch (ISO 8601): written at most once a minute while it
    /// answers (`seenWritten`), and exactly when the monitor stops, so a monitor restarted after
    /// the watch went away still knows when it was last seen; `nil` in files written before.
    public var lastSeen: String?
    /// Whether that read found SOS at risk (the emergency list changed on the watch since the
    /// last apply): what is known of it while it cannot be read; `nil` in files written before.
    public var sosAtRisk: Bool?
    /// The last gap in the watch's events told (`ListenerReport.missed`: the device's ids
    /// around it), so a restarted monitor resuming after the same id, with nothing handled
    /// since, does not raise it again; `nil` when none was, and in files written before.
    public var gapTold: Gap?
    /// The id of the drift event `monitor --fleet` showed last for the watch and has not seen
    /// end, so a restarted monitor ends it (`resolved`) or replaces it (`supersedes`); `nil`
    /// when none is open, and in files written before.
    public var openDrift: String?
    /// The name a fleet file gave the watch when `monitor --fleet` last used this record, so a
    /// press of a watch since taken out of the file is shown under that name by a restarted
    /// monitor too (fresh-eyes fe100 #5: `ward-a/r12`, a name it never had); `nil` otherwise.
    public var fleetName: String?
  }

  /// A gap in the watch's events: what came after `after` and before `before` cannot be had.
  public struct Gap: Codable, Hashable, Sendable {
    /// The last event heard before it.
    public var after: String
    /// The first event that can be had after it.
    public var before: String
    /// When it was told (ISO 8601); `nil` in records written before it was kept.
    public var time: String?
  }

  /// An outage a monitor noticed: when (`since`, ISO 8601), and when it last read the watch
  /// before it (`lastSeen`; `nil` when it never did).
  public struct Outage: Codable, Hashable, Sendable {
    /// When the monitor found the watch out of reach.
    public var since: String
    /// When it last read the watch before that.
    public var lastSeen: String?
  }

  /// One SOS press handled: its id (`sos-EPOCH-SEQUENCE`), its number on the watch, and when
  /// it was pressed (ISO 8601, as the event gives it).
  public struct Press: Codable, Hashable, Sendable {
    /// The press's id.
    public var id: String
    /// Its number on the watch (1, 2, …).
    public var sequence: Int
    /// When it was pressed.
    public var time: String
    /// The device's id of the press (`DeviceEvent.id`), where the device numbers its events:
    /// the press replayed (heard before its event was recorded as handled) is told by it;
    /// `nil` in records written before it was kept.
    public var deviceEvent: String?

    /// A press from its parts.
    public init(id: String, sequence: Int, time: String, deviceEvent: String? = nil) {
      self.id = id
      self.sequence = sequence
      self.time = time
      self.deviceEvent = deviceEvent
    }
  }

  /// How many presses a record keeps (`recentSOS`): more than an agent republishes
  /// (`RecentSOS.limit` in Sources/TSFleet/FleetDocuments.swift), so a monitor still knows every
  /// press it handled that an agent republishes.
  public static let keptPresses = 32

  /// The `format` of the file.
  public static let formatName = "tsapply-monitor-events"
  /// The largest file read (it holds a few short fields).
  static let maxBytes = 64 * 1024

  /// Absolute path of the file.
  public let path: String
  private let lock = NSLock()
  private var state: State
  /// Whether the file holds `state` (read from it, or written since): a record that changes
  /// nothing is not written again (a restarted monitor's resume point is the one it read).
  private var onDisk = false

  /// The record at `path` for `watch`; a fresh one (no event handled, a new epoch) when the file
  /// is missing. `problem` says why a file that exists could not be used (it is then replaced at
  /// the first save, and nothing is replayed this time).
  public init(path: String, watch: String) {
    self.path = path
    let fresh = State(format: Self.formatName, version: 1, watch: watch,
                      epoch: RandomHex.sixteenDigits(), lastEventID: nil, sequence: 0,
                      recentSOS: nil, listeningSince: nil, outage: nil, lastSeen: nil, sosAtRisk: nil, gapTold: nil)
    switch Self.read(path) {
    case .missing:
      state = fresh
      problem = nil
    case .stored(let stored) where stored.watch == watch && stored.format == Self.formatName && stored.version == 1
      && stored.sequence >= 0 && Outbox.isSafeID(stored.epoch):
      state = stored
      problem = nil
      onDisk = true
    case .stored:
      state = fresh
      problem = "it is not a record of events handled for \(watch)"
    case .unusable(let reason):
      state = fresh
      problem = reason
    }
  }

  /// Why the file that was there could not be used, or `nil`.
  public let problem: String?

  /// The device's id of the last event handled.
  public var lastEventID: DeviceEventID? { lock.withLock { state.lastEventID } }

  /// Everything recorded.
  public var current: State { lock.withLock { state } }

  /// The newest SOS presses handled, oldest first (`State.recentSOS`).
  public var recentPresses: [Press] { lock.withLock { state.recentSOS ?? [] } }

  /// The newest press handled that the device numbered `deviceEvent` (`Press.deviceEvent`):
  /// that press heard again, to be told under the number and id it has.
  public func press(deviceEvent: String) -> Press? {
    lock.withLock { state.recentSOS?.last { $0.deviceEvent == deviceEvent } }
  }

  /// Whether the SOS press `id` is among the newest handled (`recentPresses`).
  public func hasHandled(press id: String) -> Bool { lock.withLock { state.recentSOS?.contains { $0.id == id } ?? false } }

  /// Whether a press made at `time` (as the watch timed it, ISO 8601) and numbered `id` by
  /// another numbering than the handled one timed alike is among the newest handled: the same
  /// press published by another agent (a watch moved between agents: each numbers the presses
  /// it hears, `sos-EPOCH-N`, so the ids differ; fresh-eyes finding, one press shown and
  /// delivered twice). Presses of one numbering are never taken for each other, however close
  /// in time (a watch may time them to the second).
  public func hasHandled(pressedAt time: String, id: String) -> Bool {
    let numbering = { (id: String) in Self.pressNumber(of: id)?.numbering ?? id }
    return lock.withLock { state.recentSOS?.contains { $0.time == time && numbering($0.id) != numbering(id) } ?? false }
  }

  /// The parts of an SOS id as `nextSOS` makes it (`sos-EPOCH-SEQUENCE`): its numbering
  /// (`sos-EPOCH`, one per record) and its number; `nil` for an id of another form.
  public static func pressNumber(of id: String) -> (numbering: String, number: Int)? {
    let parts = id.split(separator: "-")
    guard parts.count >= 2, let number = Int(parts[parts.count - 1]) else { return nil }
    return (parts.dropLast().joined(separator: "-"), number)
  }

  /// The number and id the next SOS gets (not recorded until `handled(_:sequence:)`): the next
  /// after the last recorded whose id is not `taken` — an id a press already holds though its
  /// number was not recorded (stored in the outbox by a run killed before it recorded it), so
  /// no two presses ever share an id.
  public func nextSOS(skipping taken: (String) -> Bool = { _ in false }) -> (sequence: Int, id: String) {
    var (sequence, epoch) = lock.withLock { (state.sequence, state.epoch) }
    while true {
      sequence += 1
      let id = "sos-\(epoch)-" + String(format: "%010d", sequence)
      if !taken(id) { return (sequence, id) }
    }
  }

  /// Records that the event `id` (when the device numbers its events) was handled and, for an
  /// SOS, that `sequence` was used and `press` handled (kept in `recentSOS`, the oldest dropped
  /// beyond `keptPresses`); on disk and fsynced before it returns, so it outlives a power cut.
  /// What need not outlive a crash is `resumeAfter(_:)`'s.
  /// - Throws: `SecureFileError` when the file cannot be written (the record in memory is kept).
  public func handled(_ id: DeviceEventID?, sequence: Int? = nil, press: Press? = nil) throws(SecureFileError) {
    try update(durable: true) { state in
      if let id { state.lastEventID = id }
      if let sequence { state.sequence = max(state.sequence, sequence) }
      if let press, state.recentSOS?.contains(where: { $0.id == press.id }) != true {
        state.recentSOS = Array(((state.recentSOS ?? []) + [press]).suffix(Self.keptPresses))
      }
    }
  }

  /// Records `id` as the last event handled where losing it costs nothing — the listener's
  /// resume point (reported as it starts), a contact change (it asks for a check), a press made
  /// before anyone listened (only recorded) — in memory, on disk with the next write (`seen`, an
  /// SOS handled), not with one of its own: at a thousand watches' first start those writes
  /// were half the files made, each a new inode. A monitor killed before that write resumes
  /// from the point before and hears these again: a change is checked once more, an old press
  /// recorded again; every SOS told is on disk (fsynced, `handled`) with its id before it is.
  public func resumeAfter(_ id: DeviceEventID?) {
    guard let id else { return }
    lock.withLock {
      guard state.lastEventID != id else { return }
      state.lastEventID = id
      onDisk = false
    }
  }

  /// Tells the gap between `after` and `before` with `tell`, unless it is the last one told (a
  /// restart resuming after the same id finds the same gap), and records it as told at `time`
  /// (written and fsynced after it was told: one killed between tells it again, never not at
  /// all). Returns whether it told it now.
  /// - Throws: `SecureFileError` when it was told but cannot be recorded (the record in memory is kept).
  @discardableResult
  public func tellOnce(gapAfter after: DeviceEventID, before: DeviceEventID, at time: Date = Date(), _ tell: () -> Void) throws(SecureFileError) -> Bool {
    let gap = Gap(after: after.rawValue, before: before.rawValue, time: InternetTime.text(time))
    guard lock.withLock({ state.gapTold.map { $0.after != gap.after || $0.before != gap.before } ?? true }) else { return false }
    tell()
    try update(durable: true) { $0.gapTold = gap }
    return true
  }

  /// Records the drift event shown last and not over (`State.openDrift`), or that none is open
  /// (`nil`). Not fsynced: a power cut loses at most which drift a restarted monitor ends.
  /// - Throws: `SecureFileError` when the file cannot be written (the record in memory is kept).
  public func openDrift(_ id: String?) throws(SecureFileError) {
    try update { $0.openDrift = id }
  }

  /// Records `name`, the fleet file's name for the watch (`State.fleetName`), when it is not the
  /// one recorded. Not fsynced.
  /// - Throws: `SecureFileError` when the file cannot be written (the record in memory is kept).
  public func named(_ name: String) throws(SecureFileError) {
    guard current.fleetName != name else { return }
    try update { $0.fleetName = name }
  }

  /// The fleet file's name recorded for the watch in the record at `path` (`State.fleetName`),
  /// read without keeping the record.
  public static func fleetName(at path: String, watch: String) -> String? {
    guard case .stored(let stored) = read(path), stored.watch == watch, stored.format == formatName else { return nil }
    return stored.fleetName
  }

  /// How much earlier than the first listening (`listeningSince`) a press may be timed and
  /// still be delivered: the watch's (or its phone's) clock may be that far behind this machine's.
  public static let clockSlack: TimeInterval = 60

  /// When a monitor first listened to the watch (`State.listeningSince`): the time recorded,
  /// or `now`, recorded now (on disk before it returns; not fsynced, as a resume point is not).
  /// - Throws: `SecureFileError` when the file cannot be written (`now` is kept in memory).
  public func listeningSince(now: Date) throws(SecureFileError) -> Date {
    var since = now
    try update { state in
      if let stored = state.listeningSince.flatMap(InternetTime.date) { since = stored } else { state.listeningSince = InternetTime.text(now) }
    }
    return since
  }

  /// Records the outage under way (`since`: when it was found, `lastSeen`: when the watch last
  /// answered before), or that none is (`nil`). Not fsynced: a power cut loses at most when an
  /// outage began.
  /// - Throws: `SecureFileError` when the file cannot be written (the record in memory is kept).
  public func outage(since: Date?, lastSeen: Date?) throws(SecureFileError) {
    try update { state in
      state.outage = since.map { Outage(since: InternetTime.text($0), lastSeen: lastSeen.map(InternetTime.text)) }
    }
  }

  /// How often `seen(_:sosAtRisk:exactly:)` writes while the watch answers.
  public static let seenWritten: TimeInterval = 60

  /// Records that the watch was read at `time`, and whether that read found SOS at risk: when
  /// the time recorded is a minute older or more, SOS at risk changed, or `exactly` (a monitor
  /// stopping). Not fsynced.
  /// - Throws: `SecureFileError` when the file cannot be written.
  public func seen(_ time: Date, sosAtRisk: Bool, exactly: Bool = false) throws(SecureFileError) {
    let (stored, wasAtRisk) = lock.withLock { (state.lastSeen.flatMap(InternetTime.date), state.sosAtRisk ?? false) }
    guard exactly || wasAtRisk != sosAtRisk || stored.map({ time.timeIntervalSince($0) >= Self.seenWritten }) ?? true else { return }
    try update { state in
      state.lastSeen = InternetTime.text(time)
      state.sosAtRisk = sosAtRisk
    }
  }

  /// Changes the record with `change`, and writes it (fsynced when `durable`) when that changed
  /// it, or the file does not hold it yet.
  private func update(durable: Bool = false, _ change: (inout State) -> Void) throws(SecureFileError) {
    let bytes = lock.withLock { () -> [UInt8]? in
      let before = state
      change(&state)
      return state == before && onDisk ? nil : Array(canonicalJSON(state).utf8)
    }
    guard let bytes else { return }
    try SecureFile.write(bytes, to: path, durable: durable)
    lock.withLock { onDisk = true }
  }

  /// What the record of the watch `identity` (its `monitor-events.json` under `engine`'s state
  /// folder) says of the watch's reachability, read without taking
  /// the file over: when the outage recorded began (`outage(since:lastSeen:)`), which a
  /// restarted monitor goes on with while it cannot open the watch; when it was last seen (the
  /// outage's, else `State.lastSeen`), and whether that read found SOS at risk. An apply that
  /// wrote to the watch after that read (`Engine.lastWrite(ofUnopened:)`) read it later and
  /// left it as its manifest says: then it was last seen by that apply, not SOS at risk, and an
  /// outage recorded before it is over (fresh-eyes findings: "SOS at risk" stayed after an apply
  /// had turned SOS back on; "offline since" before the apply that read the watch). `nil`
  /// when the file is missing or cannot be used.
  public static func kept(of identity: String, engine: Engine) -> (outageSince: Date?, lastSeen: Date?, sosAtRisk: Bool)? {
    kept(of: identity, engine: engine, lastWritten: engine.lastWrite(ofUnopened: identity)?.date)
  }

  /// `kept(of:engine:)` for a caller that read when tsapply last wrote to the watch already
  /// (`lastWritten`, `Engine.lastWrite(ofUnopened:)`), so its record is read once.
  public static func kept(of identity: String, engine: Engine, lastWritten: Date?) -> (outageSince: Date?, lastSeen: Date?, sosAtRisk: Bool)? {
    guard var kept = kept(at: WatchHome(identity: identity, root: engine.stateRoot).monitorEventsPath, watch: identity) else { return nil }
    if let written = lastWritten, written > kept.lastSeen ?? .distantPast {
      kept.lastSeen = written
      kept.sosAtRisk = false
      // The watch answered that apply: an outage recorded before it ended then.
      if let since = kept.outageSince, written > since { kept.outageSince = nil }
    }
    return kept
  }

  /// What the file at `path` says for `watch` (`kept(of:engine:)` without the records of applies).
  public static func kept(at path: String, watch: String) -> (outageSince: Date?, lastSeen: Date?, sosAtRisk: Bool)? {
    guard case .stored(let stored) = read(path), stored.watch == watch, stored.format == formatName else { return nil }
    return (stored.outage.flatMap { InternetTime.date($0.since) }, (stored.outage?.lastSeen ?? stored.lastSeen).flatMap(InternetTime.date),
            stored.sosAtRisk ?? false)
  }

  /// What the file holds.
  enum Stored {
    /// There is no file.
    case missing
    /// A record (not yet checked against the watch).
    case stored(State)
    /// A file that cannot be used, and why (unreadable, over `maxBytes`, not JSON of this shape).
    case unusable(String)
  }

  /// Reads the file at `path`, at most `maxBytes` of it.
  static func read(_ path: String) -> Stored {
    guard let handle = FileHandle(forReadingAtPath: path) else {
      return FileManager.default.fileExists(atPath: path) ? .unusable("it cannot be read") : .missing
    }
    defer { try? handle.close() }
    guard let data = try? handle.read(upToCount: maxBytes + 1) else { return .unusable("it cannot be read") }
    guard data.count <= maxBytes else { return .unusable("it is larger than \(maxBytes / 1024) KiB") }
    guard let state = try? JSONDecoder().decode(State.self, from: data) else { return .unusable("it does not hold the events a monitor handled") }
    return .stored(state)
  }
}
