import Foundation
import TSModel

/// The listeners registered for one simulated watch, and delivery of its journal events to them.
///
/// All `SimulatedDevice`s of one state file in a process share one hub (`ListenerHub.shared`),
/// so a watch-side change made through any of them fires at once; changes made by another
/// process fire when the state file changes (`FileChanges`: one inotify descriptor and thread for
/// every hub of the process; where files cannot be watched, a task polls the file's journal every
/// 100 ms instead). Each event is delivered once: the hub remembers the last sequence number it
/// delivered. A journal whose numbering went back — the watch's state replaced: reset (`device
/// init --force`) or an older copy of its file put back — is followed from there (`Position`).
final class ListenerHub: @unchecked Sendable {
  typealias ContactsHandler = @Sendable (Result<[Contact], DeviceError>) -> Void
  typealias SOSHandler = @Sendable (DeviceError?) -> Void

  private let lock = NSLock()
  private var contactHandlers: [ContactsHandler] = []
  private var emergencyHandlers: [ContactsHandler] = []
  private var sosHandlers: [SOSHandler] = []
  private var resumables: [Resumable] = []
  private var lastDelivered: Position
  private var watching = false
  private var registration: FileChanges.Registration?

  /// A hub that delivers only events after `lastDelivered`.
  init(lastDelivered: Position) { self.lastDelivered = lastDelivered }

  /// How far a listener (or the hub's SDK-style handlers) has heard a journal: up to `sequence`,
  /// the last of which was made at `time`.
  struct Position {
    var sequence: Int
    var time: Date?

    init(sequence: Int, time: Date?) {
      self.sequence = sequence
      self.time = time
    }

    /// Having heard `journal` up to `sequence` (and the time of that event, when it holds it).
    init(after sequence: Int, in journal: [WatchEvent]) {
      self.sequence = sequence
      time = journal.last { $0.sequence <= sequence }?.date
    }

    /// The events of `journal` not heard yet, and the position after them: those numbered after
    /// `sequence`, and those made after `time` — a journal whose state was replaced numbers its
    /// events anew, so what was made after the last event heard is new however it is numbered
    /// (a reset watch's presses, an older copy's made since it was put back; not the copy's
    /// older ones). Without a time, a journal numbered below `sequence` is another one, all new.
    /// It is followed from its own numbering on (fresh-eyes finding: a running monitor heard no
    /// press until the numbering passed where it had been).
    func fresh(in journal: [WatchEvent]) -> (events: ArraySlice<WatchEvent>, next: Position) {
      let newest = journal.last?.sequence ?? 0
      let start = journal.firstIndex { event in
        if event.sequence > sequence { return true }
        if let time, let made = event.date { return made > time }
        return newest < sequence
      } ?? journal.endIndex
      let events = journal[start...]
      // Nothing new: where it was. A snapshot read before the last change and delivered after
      // it (the file watcher's read, then the writer's own delivery) took the position back to
      // its older numbering, and the next delivery gave that change again (one SOS press, two
      // deliveries); a journal numbered anew is heard by time, or as another one, all the same.
      guard !events.isEmpty else { return (events, self) }
      return (events, Position(sequence: newest, time: events.last?.date ?? time))
    }
  }

  func addContacts(_ handler: @escaping ContactsHandler) { locked { contactHandlers.append(handler) } }
  func addEmergency(_ handler: @escaping ContactsHandler) { locked { emergencyHandlers.append(handler) } }
  func addSOS(_ handler: @escaping SOSHandler) { locked { sosHandlers.append(handler) } }

  /// A listener of `Device.listen(to:after:_:)`: it has heard every event up to `after`, its own
  /// resume point, whatever the hub delivered to the others, of the journal of `epoch`
  /// (`SimulatedWatch.journalEpoch`).
  private struct Resumable {
    var kinds: Set<DeviceEvent.Kind>
    var handler: @Sendable (ListenerReport) -> Void
    var after: Position
    var epoch: String?
  }

  /// Adds a listener for `kinds` that has heard every event up to sequence `after` of the
  /// journal of `epoch`; the next `deliver` gives it every later event of the journal it is
  /// given — after a reset (another epoch), the gap first, then every event the new journal holds.
  func addResumable(kinds: Set<DeviceEvent.Kind>, after: Position, epoch: String?, _ handler: @escaping @Sendable (ListenerReport) -> Void) {
    locked { resumables.append(Resumable(kinds: kinds, handler: handler, after: after, epoch: epoch)) }
  }

  /// Held while one `deliver` takes its events and calls the handlers: deliveries from this
  /// process's change and from the file watcher's thread never interleave (each listener hears
  /// the events in order), and once a change's `deliver` returns its events have been heard.
  /// Recursive: a handler may itself make a watch-side change.
  private let delivering = NSRecursiveLock()

  /// Calls the handlers for every event in `watch`'s journal newer than the last one delivered
  /// (for a resumable listener, than the last one it heard), with the watch's ids (`eventID`).
  /// A resumable listener following another journal (the watch was reset since, `device init
  /// --force`) is first told the gap (`ListenerReport.missed`): what came after the last event
  /// it heard went with the old journal, and the watch may now hold anything, so its owner
  /// reads it at once rather than at its next check.
  func deliver(_ watch: SimulatedWatch) {
    let journal = watch.journal
    delivering.lock()
    defer { delivering.unlock() }
    let (events, contacts, emergency, sos, resumed) = locked {
      () -> ([WatchEvent], [ContactsHandler], [ContactsHandler], [SOSHandler], [(Resumable, ListenerReport?, ArraySlice<WatchEvent>)]) in
      let fresh: ArraySlice<WatchEvent>
      (fresh, lastDelivered) = lastDelivered.fresh(in: journal)
      var resumed: [(Resumable, ListenerReport?, ArraySlice<WatchEvent>)] = []
      for index in resumables.indices {
        var gap: ListenerReport?
        if let followed = resumables[index].epoch, followed != watch.journalEpoch {
          let oldest = journal.first?.sequence ?? watch.nextSequence
          gap = .missed(after: DeviceEventID("\(followed)-\(resumables[index].after.sequence)"), before: watch.eventID(oldest))
          resumables[index].after = Position(sequence: 0, time: nil)
          resumables[index].epoch = watch.journalEpoch
        }
        let events: ArraySlice<WatchEvent>
        (events, resumables[index].after) = resumables[index].after.fresh(in: journal)
        if gap != nil || !events.isEmpty { resumed.append((resumables[index], gap, events)) }
      }
      return (Array(fresh), contactHandlers, emergencyHandlers, sosHandlers, resumed)
    }
    for (listener, gap, events) in resumed {
      if let gap { listener.handler(gap) }
      for event in events {
        guard let kind = event.listenerKind, listener.kinds.contains(kind) else { continue }
        listener.handler(.event(DeviceEvent(id: watch.eventID(event.sequence), kind: kind, contacts: event.contacts,
                                             time: event.date)))
      }
    }
    for event in events {
      switch event.kind {
      case .contactsChanged: contacts.forEach { $0(.success(event.contacts ?? [])) }
      case .emergencyContactsChanged: emergency.forEach { $0(.success(event.contacts ?? [])) }
      case .sosRequested: sos.forEach { $0(nil) }
      case .reminderToggled: break
      }
    }
  }

  /// Forgets every listener, as the SDK does when the link drops: the SDK-style handlers fall
  /// silent; each `listen(to:after:_:)` listener is told `error` once per kind it heard, so its
  /// caller can register again (and resume after the last event it had).
  func dropListeners(because error: DeviceError) {
    let dropped = locked { () -> [Resumable] in
      defer {
        contactHandlers = []
        emergencyHandlers = []
        sosHandlers = []
        resumables = []
      }
      return resumables
    }
    for listener in dropped {
      for kind in DeviceEvent.Kind.allCases where listener.kinds.contains(kind) { listener.handler(.failed(kind, error)) }
    }
  }

  /// Whether other processes' changes come from watching the file (not from polling it).
  var watchesFile: Bool { locked { registration != nil } }

  /// Starts delivering the events other processes write to `store`'s file, once per hub: when
  /// the file changes (`changes`), else (no file watching here) by polling it every `interval`.
  /// Either ends when the hub is released. In memory there is no other process: nothing starts.
  func startWatching(_ store: any StateStore, changes: FileChanges? = FileChanges.shared,
                     interval: Duration = .milliseconds(100)) {
    let start = locked { () -> Bool in
      defer { watching = true }
      return !watching
    }
    guard start, let path = store.path else { return }
    let deliver: @Sendable () -> Void = { [weak self] in
      guard let hub = self, let watch = try? store.read() else { return }
      hub.deliver(watch)
    }
    if let registration = changes?.watch(path, deliver) {
      locked { self.registration = registration }
      // What changed before the file was watched.
      deliver()
      return
    }
    Task.detached { [weak self] in
      while true {
        try? await Task.sleep(for: interval)
        guard let hub = self else { return }
        if let watch = try? store.read() { hub.deliver(watch) }
      }
    }
  }

  private func locked<T>(_ body: () -> T) -> T {
    lock.lock()
    defer { lock.unlock() }
    return body()
  }

  // MARK: One hub per state file

  private final class WeakHub: @unchecked Sendable {
    weak var hub: ListenerHub?
    init(_ hub: ListenerHub) { self.hub = hub }
  }

  private static let registryLock = NSLock()
  nonisolated(unsafe) private static var registry: [String: WeakHub] = [:]

  /// The hub of the state file at `path`, created (delivering only events after the last one
  /// of `journal()`, the watch's journal now) when no device in this process holds one.
  static func shared(for path: String, journal: () -> [WatchEvent]) -> ListenerHub {
    registryLock.lock()
    defer { registryLock.unlock() }
    if let hub = registry[path]?.hub { return hub }
    let held = journal()
    let hub = ListenerHub(lastDelivered: Position(after: held.last?.sequence ?? 0, in: held))
    registry[path] = WeakHub(hub)
    return hub
  }

  /// The hub of the state file at `path` if a device in this process holds one.
  static func existing(for path: String) -> ListenerHub? {
    registryLock.lock()
    defer { registryLock.unlock() }
    return registry[path]?.hub
  }
}

extension WatchEvent {
  /// The listener that hears this event; `nil` for a reminder toggle (no SDK listener).
  var listenerKind: DeviceEvent.Kind? {
    switch kind {
    case .contactsChanged: .contactsChanged
    case .emergencyContactsChanged: .emergencyContactsChanged
    case .sosRequested: .sosRequested
    case .reminderToggled: nil
    }
  }
}
