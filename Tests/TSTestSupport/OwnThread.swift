import Foundation

/// Runs `body` on a thread of its own, never on a pooled one.
///
/// For blocking work in tests — reading a child's pipe until it closes, waiting for a process —
/// which would otherwise hold one of the few threads of `DispatchQueue.global()` (as many as there
/// are cores, on Linux) or of Swift's cooperative pool, for as long as the child lives: with a few
/// long-lived children (a bridge server, a monitor) every other test's queued work would stall.
public func onOwnThread(_ body: @escaping @Sendable () -> Void) {
  let thread = Thread { body() }
  thread.stackSize = 1 << 20
  thread.start()
}

/// Runs blocking `body` (waiting for a child process, reading a socket) on a thread of its own,
/// so the test holds none of the few pooled threads every in-process async test shares.
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
  try await withCheckedThrowingContinuation { continuation in
    onOwnThread { continuation.resume(with: Result { try body() }) }
  }
}
