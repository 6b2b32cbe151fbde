import Foundation

/// Why the watch loop wakes up. Wake-ups that arrive while the loop is busy are merged, so a
/// burst of listener events or timer ticks costs one check.
enum Wake: Hashable, Sendable {
  /// The interval passed: read the watch.
  case poll
  /// A listener reported a change: read the watch now.
  case changed
  /// Read again now (after an apply, after connecting).
  case recheck
  /// The watch's last-applied record was written (an apply, perhaps by another process): read
  /// the watch now, so what is shown does not wait for the interval.
  case recorded
  /// Time to try reconnecting.
  case retry
  /// The connection of `generation` broke (a listener answered with an error): why.
  case lost(generation: Int, reason: String)
  /// Stop.
  case stop
}

/// A mailbox of wake-ups for one waiting loop: `post` from anywhere (listener handlers, timer
/// tasks, `Monitor.stop()`), `next()` suspends until at least one is there and returns them all.
final class Mailbox: @unchecked Sendable {
  private let lock = NSLock()
  private var pending: Set<Wake> = []
  private var waiter: CheckedContinuation<Set<Wake>, Never>?

  /// Adds `wake`, resuming the loop if it waits.
  func post(_ wake: Wake) {
    lock.lock()
    pending.insert(wake)
    guard let waiter else { return lock.unlock() }
    self.waiter = nil
    let taken = pending
    pending = []
    lock.unlock()
    waiter.resume(returning: taken)
  }

  /// Every wake-up posted since the last call, waiting for one when there is none.
  func next() async -> Set<Wake> {
    await withCheckedContinuation { continuation in
      lock.lock()
      if pending.isEmpty {
        waiter = continuation
        lock.unlock()
      } else {
        let taken = pending
        pending = []
        lock.unlock()
        continuation.resume(returning: taken)
      }
    }
  }

  /// Posts `wake` after `delay`, unless the returned task is cancelled first.
  @discardableResult
  func post(_ wake: Wake, after delay: Duration) -> Task<Void, Never> {
    Task { [weak self] in
      try? await Task.sleep(for: delay)
      if !Task.isCancelled { self?.post(wake) }
    }
  }
}
