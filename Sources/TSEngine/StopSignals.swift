import Foundation

/// A request to stop an apply between two device calls, asked by the engine before every step.
///
/// The engine calls `begin()` just before its first write (after the plan was approved) and
/// `end()` when the writes are over, so a front-end can catch signals only while stopping
/// cleanly matters (Ctrl-C at a confirmation prompt still quits at once).
public protocol StopRequest: Sendable {
  /// Starts watching for a stop (e.g. installs signal handlers).
  func begin()
  /// Whether the apply should stop before its next step.
  var isRequested: Bool { get }
  /// Stops watching.
  func end()
}

/// Never asks to stop.
public struct NoStopRequest: StopRequest {
  /// Never stops.
  public init() {}
  /// Nothing to start.
  public func begin() {}
  /// Always `false`.
  public var isRequested: Bool { false }
  /// Nothing to stop.
  public func end() {}
}

/// SIGINT (Ctrl-C), SIGTERM (`timeout`, systemd, `docker stop`, CI cancellation) and SIGHUP
/// (a closed terminal), handled the way Terraform handles Ctrl-C: the first signal lets the
/// current device call finish and stops before the next step, so the summary of what was and
/// was not applied is exact; a second signal exits at once with 128 + its number — if it comes at
/// least `repeatInterval` after the first. Signals closer together count as one: `timeout` and
/// a terminal's Ctrl-C send the signal to the process and to its process group, so one request
/// can arrive twice within microseconds, and it must not skip the summary.
public final class StopSignals: StopRequest, @unchecked Sendable {
  /// The signals caught.
  public static let caught: [Int32] = [SIGINT, SIGTERM, SIGHUP]

  /// How long after the first signal a second one means "quit at once" (0.1 s): a person
  /// pressing Ctrl-C again takes longer; one request delivered twice (to the process and to its
  /// group) arrives within microseconds.
  public static let repeatInterval: UInt64 = 100_000_000

  private let lock = NSLock()
  private var count = 0
  private var first: UInt64?
  private var sources: [any DispatchSourceSignal] = []
  private var active = false
  private let notice: @Sendable (Int32) -> Void
  private let quitting: (@Sendable (Int32) -> Void)?

  /// A watcher that calls `notice` (e.g. "Interrupt received…") on the first signal, and
  /// `quitting` (what quitting at once leaves, how to get back) on the second, just before
  /// the process exits.
  public init(notice: @escaping @Sendable (Int32) -> Void, quitting: (@Sendable (Int32) -> Void)? = nil) {
    self.notice = notice
    self.quitting = quitting
  }

  /// The usual name of `signal` (`SIGTERM`), for notices.
  public static func name(_ signal: Int32) -> String {
    switch signal {
    case SIGINT: "SIGINT"
    case SIGTERM: "SIGTERM"
    case SIGHUP: "SIGHUP"
    default: "signal \(signal)"
    }
  }

  /// Starts catching the signals (their default action is suspended until `end()`). The
  /// sources are made once and kept: libdispatch installs its handler for a signal only once
  /// per process, so sources cancelled and made again would leave the signal ignored (an
  /// interactive `apply --fleet` ends catching for the question and begins again after 'yes').
  public func begin() {
    lock.lock()
    defer { lock.unlock() }
    active = true
    guard sources.isEmpty else { return }
    for number in Self.caught {
      signal(number, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
      source.setEventHandler { [weak self] in self?.received(number) }
      source.resume()
      sources.append(source)
    }
  }

  private func received(_ number: Int32) {
    let now = DispatchTime.now().uptimeNanoseconds
    lock.lock()
    guard active else {
      // Between `end()` and the next `begin()` a signal has its default action: ended by it.
      lock.unlock()
      signal(number, SIG_DFL)
      kill(getpid(), number)
      return
    }
    let since = first.map { now - $0 }
    if first == nil { first = now }
    count += 1
    lock.unlock()
    switch since {
    case nil: notice(number)
    case let elapsed? where elapsed >= Self.repeatInterval:
      quitting?(number)
      exit(128 + number)
    default: break  // the same request delivered twice (process and process group)
    }
  }

  /// Whether a signal arrived.
  public var isRequested: Bool {
    lock.lock()
    defer { lock.unlock() }
    return count > 0
  }

  /// Stops catching the signals: from now on each has its default action (the process ends).
  public func end() {
    lock.lock()
    defer { lock.unlock() }
    active = false
  }
}
