import Foundation

/// The body of a streaming response: the handler (or a task it starts) writes chunks, the
/// server sends each as soon as it can. Thread-safe; writes after `finish()` or after the client
/// left are dropped (check `isClosed` to stop producing).
///
/// While nothing is written for `keepAliveInterval`, the server sends `keepAlive` (for
/// Server-Sent Events, a comment line). While it waits, the server also watches the connection,
/// so a client that goes away closes the stream at once, not at the next keep-alive.
public final class HTTPStream: @unchecked Sendable {
  private let condition = NSCondition()
  /// A pipe whose read end wakes the sender's `poll` when something is written or the stream
  /// ends (both -1 when the system gave none: the sender then looks every 0.25 s).
  private let wake: (read: Int32, write: Int32)
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
    var fds: [Int32] = [-1, -1]
    if pipe(&fds) == 0 {
      for fd in fds {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
      }
      wake = (fds[0], fds[1])
    } else {
      wake = (-1, -1)
    }
  }

  deinit {
    if wake.read >= 0 {
      Foundation.close(wake.read)
      Foundation.close(wake.write)
    }
  }

  /// Wakes the sender (called with the lock held).
  private func signal() {
    condition.broadcast()
    if wake.write >= 0 {
      var byte: UInt8 = 1
      _ = Foundation.write(wake.write, &byte, 1)
    }
  }

  /// Queues `bytes` for sending; returns `false` (and drops them) once the stream is closed or finished.
  @discardableResult
  public func write(_ bytes: [UInt8]) -> Bool {
    condition.lock()
    defer { condition.unlock() }
    guard !closed, !finished else { return false }
    pending += bytes
    signal()
    return true
  }

  /// Ends the body once what was written is sent.
  public func finish() {
    condition.lock()
    finished = true
    signal()
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
    signal()
    condition.unlock()
    handlers.forEach { $0() }
  }

  /// What the server sends next: up to `max` bytes, waiting while there is nothing; `nil` at
  /// the end (finished and drained, or closed). While it waits it watches `socket` (the
  /// connection's; -1: none): when the client closes it, the stream closes and this is `nil`.
  func next(max: Int, watching socket: Int32 = -1) -> [UInt8]? {
    var keepAliveDue = DispatchTime.now().uptimeNanoseconds + UInt64(keepAliveInterval * 1e9)
    var watchSocket = socket >= 0
    while true {
      condition.lock()
      if closed || (pending.isEmpty && finished) {
        condition.unlock()
        return nil
      }
      if !pending.isEmpty {
        let count = min(max, pending.count)
        let chunk = Array(pending[..<count])
        pending.removeFirst(count)
        condition.unlock()
        return chunk
      }
      let now = DispatchTime.now().uptimeNanoseconds
      if now >= keepAliveDue {
        keepAliveDue = now + UInt64(keepAliveInterval * 1e9)
        if !keepAlive.isEmpty { pending = keepAlive }
        condition.unlock()
        continue
      }
      condition.unlock()
      let wait = Int32(clamping: (keepAliveDue - now) / 1_000_000 + 1)
      if wake.read < 0 {
        condition.lock()
        if pending.isEmpty && !finished && !closed { _ = condition.wait(until: Date(timeIntervalSinceNow: min(0.25, Double(wait) / 1000))) }
        condition.unlock()
      } else {
        var fds = [pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
        #if os(Linux)
        let hangUp: Int16 = 0x2000  // POLLRDHUP: the peer closed its end
        #else
        let hangUp = Int16(POLLIN)
        #endif
        if watchSocket { fds.append(pollfd(fd: socket, events: hangUp, revents: 0)) }
        guard poll(&fds, nfds_t(fds.count), wait) > 0 else { continue }
        if fds[0].revents != 0 {
          var drain = [UInt8](repeating: 0, count: 64)
          while Foundation.read(wake.read, &drain, drain.count) > 0 {}
        }
        if watchSocket, fds[1].revents != 0 {
          // Gone: hung up, failed, or (where poll cannot say so) readable with nothing to read.
          var byte: UInt8 = 0
          let gone = fds[1].revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 || fds[1].revents & hangUp != 0
            && recv(socket, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) <= 0
          if gone {
            close()
            return nil
          }
          watchSocket = false  // the client sent bytes a stream does not read: stop watching
        }
      }
    }
  }
}
