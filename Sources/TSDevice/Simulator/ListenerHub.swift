import Foundation
import TSModel

/// The listeners registered for one simulated watch, and delivery of its journal events to them.
///
/// All `SimulatedDevice`s of one state file in a process share one hub (`ListenerHub.shared`),
/// so a watch-side change made through any of them fires at once; a background task polls the
/// file's journal so changes made by another process fire too. Each event is delivered once:
/// the hub remembers the last sequence number it delivered.
final class ListenerHub: @unchecked Sendable {
  typealias ContactsHandler = @Sendable (Result<[Contact], DeviceError>) -> Void
  typealias SOSHandler = @Sendable (DeviceError?) -> Void

  private let lock = NSLock()
  private var contactHandlers: [ContactsHandler] = []
  private var emergencyHandlers: [ContactsHandler] = []
  private var sosHandlers: [SOSHandler] = []
  private var lastDelivered: Int
  private var polling = false

  /// A hub that delivers only events after `lastDelivered`.
  init(lastDelivered: Int) { self.lastDelivered = lastDelivered }

  func addContacts(_ handler: @escaping ContactsHandler) { locked { contactHandlers.append(handler) } }
  func addEmergency(_ handler: @escaping ContactsHandler) { locked { emergencyHandlers.append(handler) } }
  func addSOS(_ handler: @escaping SOSHandler) { locked { sosHandlers.append(handler) } }

  /// Calls the handlers for every event in `journal` newer than the last one delivered.
  func deliver(_ journal: [WatchEvent]) {
    let (events, contacts, emergency, sos) = locked { () -> ([WatchEvent], [ContactsHandler], [ContactsHandler], [SOSHandler]) in
      let fresh = journal.filter { $0.sequence > lastDelivered }
      if let last = fresh.last { lastDelivered = last.sequence }
      return (fresh, contactHandlers, emergencyHandlers, sosHandlers)
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

  /// Starts polling `store` every `interval` for events written by other processes, once per
  /// hub; the task ends when the hub is released.
  func startPolling(_ store: any StateStore, interval: Duration = .milliseconds(100)) {
    let start = locked { () -> Bool in
      defer { polling = true }
      return !polling
    }
    guard start, store.path != nil else { return }
    Task.detached { [weak self] in
      while true {
        try? await Task.sleep(for: interval)
        guard let hub = self else { return }
        if let watch = try? store.read() { hub.deliver(watch.journal) }
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

  /// The hub of the state file at `path`, created (delivering only events after
  /// `lastSequence()`) when no device in this process holds one.
  static func shared(for path: String, lastSequence: () -> Int) -> ListenerHub {
    registryLock.lock()
    defer { registryLock.unlock() }
    if let hub = registry[path]?.hub { return hub }
    let hub = ListenerHub(lastDelivered: lastSequence())
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
