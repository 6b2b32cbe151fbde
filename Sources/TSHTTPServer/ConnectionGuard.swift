import Foundation

/// Keeps peers that never finish a request from holding the server's connections, so that
/// nobody can lock the other clients out by opening connections and sending nothing (or one
/// byte now and then).
///
/// A connection is **waiting** from when it opens (or from when its previous response ended)
/// until its request has arrived whole, header fields and body. Waiting connections are the
/// only ones a peer can hold without a request the handler accepted, so they are the ones
/// bounded:
/// - each must send its whole request within `deadline` seconds, or it is closed;
/// - at most `perAddress` wait per client address and `total` over all: a new connection beyond
///   either closes the **oldest** waiting one (of that address, or of all). A peer holding many
///   idle connections thus loses them to a client that opens a new one and sends its request
///   at once, even from the same address (loopback, one NAT), instead of that client being
///   refused.
/// Connections whose request is being answered (a handler running, a stream open) are never
/// closed here; one whose request was refused counts as waiting again (`refused`). Closing is `shutdown(2)` on the socket: libmicrohttpd then ends the connection
/// on its own thread. Thread-safe.
final class ConnectionGuard: @unchecked Sendable {
  private struct Entry {
    var socket: Int32
    var address: UInt32
    /// Uptime (ns) when it started waiting; `nil` while a request is being answered.
    var waitingSince: UInt64?
    /// Shut down here, not yet closed by libmicrohttpd.
    var evicted = false
  }

  let deadline: UInt64
  let perAddress: Int
  let total: Int
  private let condition = NSCondition()
  private var entries: [UInt: Entry] = [:]
  private var stopped = false
  private var closedCount = 0

  /// A guard closing waiting connections after `deadline` seconds, keeping at most
  /// `perAddress` per address and `total` in all.
  init(deadline: Double, perAddress: Int, total: Int) {
    self.deadline = UInt64(max(0.001, deadline) * 1e9)
    self.perAddress = max(1, perAddress)
    self.total = max(1, total)
    let thread = Thread { [weak self] in self?.watch() }
    thread.name = "tshttp-deadlines"
    thread.start()
  }

  /// A connection opened (libmicrohttpd's accepting thread): it waits for its request.
  func opened(_ connection: UInt, socket: Int32, address: UInt32) {
    condition.lock()
    defer { condition.unlock() }
    let now = Self.now()
    entries[connection] = Entry(socket: socket, address: address, waitingSince: now)
    let waiting = entries.filter { $0.value.waitingSince != nil && !$0.value.evicted }
    let fromAddress = waiting.filter { $0.value.address == address }
    if fromAddress.count > perAddress { evictOldest(of: fromAddress) }
    if waiting.count > total { evictOldest(of: entries.filter { $0.value.waitingSince != nil && !$0.value.evicted }) }
    condition.signal()
  }

  /// The connection's request arrived whole: it is being answered.
  func answering(_ connection: UInt) {
    condition.lock()
    entries[connection]?.waitingSince = nil
    condition.unlock()
  }

  /// The connection's request was refused (an answer of 400 or more, its connection closed
  /// after it): until that answer is out it counts as waiting, deadline and eviction included,
  /// so a peer that never reads its refusals holds no slot longer than one that sends nothing.
  func refused(_ connection: UInt) {
    condition.lock()
    if entries[connection] != nil { entries[connection]?.waitingSince = Self.now() }
    condition.signal()
    condition.unlock()
  }

  /// The connection's response ended; it waits for another request (keep-alive).
  func answered(_ connection: UInt) {
    condition.lock()
    if entries[connection] != nil { entries[connection]?.waitingSince = Self.now() }
    condition.signal()
    condition.unlock()
  }

  /// The connection closed (libmicrohttpd calls this before it closes the socket).
  func closed(_ connection: UInt) {
    condition.lock()
    entries[connection] = nil
    condition.unlock()
  }

  /// Ends the deadline thread.
  func stop() {
    condition.lock()
    stopped = true
    condition.signal()
    condition.unlock()
  }

  /// Connections closed here so far (missed deadlines, evictions).
  var closedConnections: Int {
    condition.lock()
    defer { condition.unlock() }
    return closedCount
  }

  private func evictOldest(of candidates: [UInt: Entry]) {
    guard let oldest = candidates.min(by: { ($0.value.waitingSince ?? 0) < ($1.value.waitingSince ?? 0) }) else { return }
    shut(oldest.key)
  }

  /// Shuts the connection's socket down (under the lock: libmicrohttpd reports the close, and
  /// only then closes the descriptor, so it cannot be another connection's yet).
  private func shut(_ connection: UInt) {
    guard let entry = entries[connection], !entry.evicted else { return }
    entries[connection]?.evicted = true
    closedCount += 1
    _ = shutdown(entry.socket, Int32(SHUT_RDWR))
  }

  /// Closes waiting connections past their deadline, sleeping until the next one is due.
  private func watch() {
    condition.lock()
    defer { condition.unlock() }
    while !stopped {
      let now = Self.now()
      var next: UInt64?
      for (connection, entry) in entries where !entry.evicted {
        guard let since = entry.waitingSince else { continue }
        if now >= since + deadline {
          shut(connection)
        } else {
          next = min(next ?? .max, since + deadline)
        }
      }
      if let next {
        _ = condition.wait(until: Date(timeIntervalSinceNow: Double(next - now) / 1e9 + 0.001))
      } else {
        condition.wait()
      }
    }
  }

  private static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
}
