import Foundation

/// One watch's events (contacts changed, emergency contacts changed, SOS, connection state),
/// numbered for `Last-Event-ID` replay: ids are `BOOT-SEQUENCE`, where BOOT is random per bridge
/// start and SEQUENCE counts from 1. The newest `capacity` events are kept; a subscriber
/// resuming after an id it still holds gets every later event, one resuming after an id it no
/// longer holds (or from another start) gets every event kept. Thread-safe.
public final class EventLog: @unchecked Sendable {
  /// An event with its id.
  public struct Entry: Sendable, Hashable {
    /// `BOOT-SEQUENCE`, or `nil` for a notice not kept in the log (a listener refusal).
    public var id: String?
    /// The event.
    public var event: BridgeEvent
  }

  /// Events kept for replay.
  public let capacity: Int
  /// Random per log: the first part of every id.
  public let boot: String
  private let lock = NSLock()
  private var sequence = 0
  private var entries: [(sequence: Int, entry: Entry)] = []
  private var refusals: [ListenerRefusal] = []
  private var subscribers: [UUID: AsyncStream<Entry>.Continuation] = [:]

  /// An empty log keeping `capacity` events.
  public init(capacity: Int = 200) {
    self.capacity = capacity
    boot = String(UInt32.random(in: 0...UInt32.max), radix: 16)
  }

  /// Appends `event` with the next id and sends it to every subscriber (under the lock, so a
  /// heartbeat naming it never goes out before it).
  public func append(_ event: BridgeEvent) {
    lock.withLock {
      sequence += 1
      let entry = Entry(id: "\(boot)-\(sequence)", event: event)
      entries.append((sequence, entry))
      if entries.count > capacity { entries.removeFirst(entries.count - capacity) }
      subscribers.values.forEach { $0.yield(entry) }
    }
  }

  /// Records that a listener was refused (2004 where the platform never reports the event):
  /// sent, without an id, at the start of every stream and to the streams open now.
  public func refuse(_ refusal: ListenerRefusal) {
    let targets = lock.withLock { () -> [AsyncStream<Entry>.Continuation] in
      refusals.append(refusal)
      return Array(subscribers.values)
    }
    targets.forEach { $0.yield(Self.notice(refusal)) }
  }

  private static func notice(_ refusal: ListenerRefusal) -> Entry {
    Entry(id: nil, event: BridgeEvent(type: .listenerRefused, refusal: refusal))
  }

  /// The refusals, then a `replayFrom` (the event before the first sent) and the events after
  /// `lastEventID` (see the type's rule) — or, without one, a `resumePoint` whose id is the
  /// newest event now (`BOOT-0` when none) — then every new event as it is appended, and every
  /// `heartbeat` seconds a `heartbeat` naming the newest (1.5), until the stream is cancelled.
  public func subscribe(after lastEventID: String?, heartbeat: Double? = nil) -> AsyncStream<Entry> {
    let (stream, continuation) = AsyncStream<Entry>.makeStream()
    let key = UUID()
    lock.withLock {
      refusals.forEach { continuation.yield(Self.notice($0)) }
      if lastEventID == nil {
        continuation.yield(Entry(id: "\(boot)-\(sequence)", event: BridgeEvent(type: .resumePoint)))
      }
      let replayed = replay(after: lastEventID)
      if lastEventID != nil {
        // Where the replay starts: the event before its first (1.4).
        let start = replayed.first.flatMap { $0.id?.split(separator: "-").last.flatMap { Int($0) } }.map { $0 - 1 } ?? sequence
        continuation.yield(Entry(id: "\(boot)-\(start)", event: BridgeEvent(type: .replayFrom)))
      }
      replayed.forEach { continuation.yield($0) }
      subscribers[key] = continuation
    }
    let beating = heartbeat.map { every in
      Task { [weak self] in
        while (try? await Task.sleep(for: .seconds(every))) != nil, let self {
          // Under the lock: every event up to the one named is already on this stream.
          self.lock.withLock {
            _ = continuation.yield(Entry(id: nil, event: BridgeEvent(type: .heartbeat, newest: "\(self.boot)-\(self.sequence)", every: every)))
          }
        }
      }
    }
    continuation.onTermination = { [weak self] _ in
      let log = self
      // Not on the terminating thread: it may hold the cancelled task's status lock while
      // `append`, under this log's lock, resumes that task — each waiting for the other (a
      // deadlock a CI run hung on). A yield to a finished stream meanwhile does nothing.
      DispatchQueue.global().async {
        beating?.cancel()
        _ = log?.lock.withLock { log?.subscribers.removeValue(forKey: key) }
      }
    }
    return stream
  }

  /// Kept events after `lastEventID` (all of them when it is absent, foreign or too old).
  private func replay(after lastEventID: String?) -> [Entry] {
    guard let lastEventID else { return [] }
    let parts = lastEventID.split(separator: "-", maxSplits: 1)
    guard parts.count == 2, parts[0] == boot, let last = Int(parts[1]), last <= sequence,
          let oldest = entries.first?.sequence, last >= oldest - 1 else {
      return entries.map(\.entry)
    }
    return entries.filter { $0.sequence > last }.map(\.entry)
  }
}

/// A listener the watch's platform refused (the SDK answered its registration with an error).
public struct ListenerRefusal: Codable, Hashable, Sendable {
  /// Which listener.
  public enum Listener: String, Codable, Hashable, Sendable {
    /// `registerContactsDidChangedBlock:`.
    case contacts
    /// `registerEmergencyContactsDidChangedBlock:`.
    case emergencyContacts
    /// `registerSOSRequestBlock:`.
    case sos
  }
  /// Which listener.
  public var listener: Listener
  /// The SDK's error, passed through.
  public var error: WireError

  /// A refusal of `listener` with `error`.
  public init(listener: Listener, error: WireError) {
    self.listener = listener
    self.error = error
  }
}
