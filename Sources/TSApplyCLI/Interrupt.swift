import Foundation

/// Ctrl-C during an apply, handled the way Terraform does: the first interrupt lets the current
/// device call finish and stops before the next step (so the summary of what was and was not
/// applied is exact); a second one exits at once with status 130.
final class InterruptWatch: @unchecked Sendable {
  private let lock = NSLock()
  private var count = 0
  private var source: (any DispatchSourceSignal)?

  /// Starts catching SIGINT; `notice` is printed on the first interrupt.
  func start(notice: @escaping @Sendable () -> Void) {
    signal(SIGINT, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
    source.setEventHandler { [weak self] in
      guard let self else { return }
      self.lock.lock()
      self.count += 1
      let count = self.count
      self.lock.unlock()
      if count == 1 { notice() } else { exit(130) }
    }
    source.resume()
    self.source = source
  }

  /// Whether an interrupt arrived.
  var interrupted: Bool {
    lock.lock()
    defer { lock.unlock() }
    return count > 0
  }

  /// Stops catching SIGINT and restores the default action.
  func stop() {
    source?.cancel()
    source = nil
    signal(SIGINT, SIG_DFL)
  }
}
