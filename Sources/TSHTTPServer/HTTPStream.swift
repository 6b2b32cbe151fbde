import Foundation

/// The body of a streaming response: the handler (or a task it starts) writes chunks, the
/// server sends each as soon as it can. Thread-safe; writes after `finish()` or after the client
/// left are dropped (check `isClosed` to stop producing).
///
/// While nothing is written for `keepAliveInterval`, the server sends `keepAlive` (for
/// Server-Sent Events, a comment line), which also notices a client that went away.
public final class HTTPStream: @unchecked Sendable {
  private let condition = NSCondition()
  private var pending: [UInt8] = []
  private var finished = false
  private var closed = false
  private var closeHandlers: [@Sendable () -> Void] = []
  /// Bytes sent when nothing was written for `keepAliveInterval`; empty sends nothing.
  public let keepAlive: [UInt8]
  /// Seconds of silence before `keepAlive` is sent.
  public let keepAliveInterval: Double

  /// A stream sending `keepAlive` after `keepAliveInterval` seconds of silence (default: an
  /// SSE comment every 15 s).
  public init(keepAlive: [UInt8] = Array(": keep-alive\n\n".utf8), keepAliveInterval: Double = 15) {
    self.keepAlive = keepAlive
    self.keepAliveInterval = keepAliveInterval
  }

  /// Queues `bytes` for sending; returns `false` (and drops them) once the stream is closed or finished.
  @discardableResult
  public func write(_ bytes: [UInt8]) -> Bool {
    condition.lock()
    defer { condition.unlock() }
    guard !closed, !finished else { return false }
    pending += bytes
    condition.signal()
    return true
  }

  /// Ends the body once what was written is sent.
  public func finish() {
    condition.lock()
    finished = true
    condition.broadcast()
    condition.unlock()
  }

  /// Whether the client went away or the server stopped (nothing written is sent any more).
  public var isClosed: Bool {
    condition.lock()
    defer { condition.unlock() }
    return closed
  }

  /// Calls `handler` once when the stream closes (at once if it already has).
  public func onClose(_ handler: @escaping @Sendable () -> Void) {
    condition.lock()
    if closed {
      condition.unlock()
      handler()
      return
    }
    closeHandlers.append(handler)
    condition.unlock()
  }

  /// Marks the stream closed (the client left, or the server is stopping) and wakes the sender.
  func close() {
    condition.lock()
    guard !closed else {
      condition.unlock()
      return
    }
    closed = true
    let handlers = closeHandlers
    closeHandlers = []
    condition.broadcast()
    condition.unlock()
    handlers.forEach { $0() }
  }

  /// What the server sends next: up to `max` bytes, waiting while there is nothing; `nil` at
  /// the end (finished and drained, or closed).
  func next(max: Int) -> [UInt8]? {
    condition.lock()
    defer { condition.unlock() }
    while pending.isEmpty && !finished && !closed {
      if !condition.wait(until: Date(timeIntervalSinceNow: keepAliveInterval)), pending.isEmpty, !finished, !closed,
         !keepAlive.isEmpty {
        pending = keepAlive
      }
    }
    if closed || pending.isEmpty { return nil }
    let count = min(max, pending.count)
    let chunk = Array(pending[..<count])
    pending.removeFirst(count)
    return chunk
  }
}
