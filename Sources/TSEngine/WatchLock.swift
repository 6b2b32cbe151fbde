import Foundation
import TSModel

/// The whole-apply lock of one watch: an exclusive `flock(2)` on the watch folder's `lock`
/// file, held from the read that plans until verification (and for a restore).
///
/// The kernel releases a `flock` when its holder exits, however it exits, so a lock is never
/// stale and there is nothing to force-unlock. (A bridge's lease, held beside it, is not freed
/// that way: it lives until it expires, `LockFailure.leased`.) The holder writes who it is into the file
/// (`LockHolder` as JSON), so a second apply that gives up can say whom it waited for. `plan`
/// takes no lock. The file descriptor is close-on-exec, so programs a holder starts (a monitor's
/// `--on-sos` command) never inherit the lock.
public final class WatchLock: @unchecked Sendable {
  /// Absolute path of the lock file.
  public let path: String
  private let lock = NSLock()
  private var descriptor: Int32

  private init(path: String, descriptor: Int32) {
    self.path = path
    self.descriptor = descriptor
  }

  deinit { release() }

  /// Takes the lock at `path` for `holder`, waiting up to `timeout` (0 = try once, Terraform's
  /// `-lock-timeout` default), checking every `pollInterval`.
  /// - Parameter shouldStop: Asked while waiting; `true` gives up at once (Ctrl-C).
  /// - Throws: `LockFailure.held` naming the holder when the lock stays taken;
  ///   `.unavailable` when the lock file cannot be opened.
  public static func acquire(at path: String, holder: LockHolder, timeout: Duration,
                             pollInterval: Duration = .milliseconds(100),
                             shouldStop: @Sendable () -> Bool = { false }) async throws(LockFailure) -> WatchLock {
    let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else {
      throw .unavailable(path: path, reason: String(cString: strerror(errno)))
    }
    let clock = ContinuousClock()
    let start = clock.now
    while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
      let waited = clock.now - start
      guard errno == EWOULDBLOCK || errno == EINTR, waited < timeout, !shouldStop() else {
        let current = readHolder(descriptor)
        close(descriptor)
        return try { () throws(LockFailure) -> WatchLock in throw .held(by: current, path: path, waited: waited) }()
      }
      try? await Task.sleep(for: min(pollInterval, timeout - waited))
    }
    write(holder, to: descriptor)
    return WatchLock(path: path, descriptor: descriptor)
  }

  /// Whether some process (this one included) holds the lock at `path`; `false` when there is
  /// no lock file. Takes a shared lock for an instant to find out, so a process trying the
  /// lock once (`timeout` 0) at that very instant can find it held.
  public static func isHeld(at path: String) -> Bool {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    guard flock(descriptor, LOCK_SH | LOCK_NB) == 0 else { return errno == EWOULDBLOCK }
    flock(descriptor, LOCK_UN)
    return false
  }

  /// Releases the lock (once; later calls do nothing).
  public func release() {
    lock.lock()
    defer { lock.unlock() }
    guard descriptor >= 0 else { return }
    ftruncate(descriptor, 0)
    flock(descriptor, LOCK_UN)
    close(descriptor)
    descriptor = -1
  }

  /// Whether `holder` is a process of this host (by host name) that is no longer running:
  /// `kill(pid, 0)` finds no such process (ESRCH), or (Linux) it has exited and waits for its
  /// parent to collect it (a zombie, state `Z` in `/proc/PID/stat`). `false` for another host,
  /// a pid that runs (whatever it is now) or cannot be asked about (EPERM), and a pid below 1.
  public static func hasEnded(_ holder: LockHolder) -> Bool {
    guard holder.pid > 0, holder.host == ProcessInfo.processInfo.hostName else { return false }
    guard kill(holder.pid, 0) == 0 else { return errno == ESRCH }
    return isZombie(holder.pid)
  }

  /// Whether process `pid` has exited but not been collected: the state after the command
  /// name, whose closing parenthesis is the last in the first 512 bytes of `/proc/PID/stat`.
  static func isZombie(_ pid: Int32) -> Bool {
    let descriptor = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    var buffer = [UInt8](repeating: 0, count: 512)
    let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
    guard count > 0, let end = buffer[..<count].lastIndex(of: UInt8(ascii: ")")), end + 2 < count else { return false }
    return buffer[end + 2] == UInt8(ascii: "Z")
  }

  /// This process as a lock holder: pid, host name, `command` and the time now, well-formed
  /// (`LockHolder.wellFormed`: a bridge refuses a lease for a holder with control characters).
  public static func currentHolder(command: String, now: Date = Date()) -> LockHolder {
    LockHolder(pid: getpid(), host: ProcessInfo.processInfo.hostName, command: command, since: internetTime(now)).wellFormed
  }

  /// `time` as ISO 8601 in UTC to the second, `2026-12-01T09:30:00Z`, by one formatter made
  /// once (a `monitor --fleet` takes a thousand locks as it starts; making a formatter costs
  /// more than using it), used under a lock.
  static func internetTime(_ time: Date) -> String {
    internetFormatterLock.withLock { internetFormatter.string(from: time) }
  }

  private static let internetFormatterLock = NSLock()
  nonisolated(unsafe) private static let internetFormatter: ISO8601DateFormatter = {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime]
    return formatter
  }()

  private static func write(_ holder: LockHolder, to descriptor: Int32) {
    guard let data = try? JSONEncoder().encode(holder) else { return }
    ftruncate(descriptor, 0)
    _ = data.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
  }

  private static func readHolder(_ descriptor: Int32) -> LockHolder? {
    var buffer = [UInt8](repeating: 0, count: 4096)
    let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
    guard count > 0 else { return nil }
    return try? JSONDecoder().decode(LockHolder.self, from: Data(buffer[0..<count]))
  }
}

/// Why the whole-apply lock was not taken.
public enum LockFailure: Error, Hashable, Sendable, CustomStringConvertible {
  /// Another tsapply holds it (`nil` when it has not written who it is yet), after waiting `waited`.
  case held(by: LockHolder?, path: String, waited: Duration)
  /// The bridge serving watch `watch` holds a live lease on it for `holder` (`nil` when the
  /// bridge did not say who), which lives `expiresIn` more seconds unless renewed (`nil` when
  /// the bridge did not say: before protocol 1.3), after waiting `waited`. `holderEnded`: the
  /// holder is a process of this host that is no longer running (`WatchLock.hasEnded`, e.g.
  /// killed with -9): nothing renews the lease, and the watch is free when it expires. Unlike
  /// the local lock, a lease is not freed when its holder dies (docs/bridge-protocol.md "Leases").
  case leased(by: LockHolder?, watch: String, waited: Duration, expiresIn: Int?, holderEnded: Bool)
  /// The lock file cannot be opened.
  case unavailable(path: String, reason: String)

  public var description: String {
    switch self {
    case .held(let holder, _, let waited):
      let who = holder.map { "another tsapply holds it: \($0)" } ?? "another tsapply holds it"
      return "the watch is locked: \(who)\(Self.waitedText(waited))"
    case .leased(let holder?, _, let waited, let expiresIn, true):
      let expiry = expiresIn.map { "; the lease expires in \($0)s" } ?? "; the lease expires within \(Self.leaseSeconds)s"
      return "the watch is locked: its lease on the bridge is held by pid \(holder.pid) on this host (\(holder.host)) "
        + "('\(ControlCharacters.escaped(holder.command))', since \(holder.since)), which is no longer running (killed?)"
        + expiry + Self.waitedText(waited)
    case .leased(let holder, _, let waited, let expiresIn, _):
      let who = holder.map { "another tsapply holds its lease on the bridge: \($0)" } ?? "another client holds its lease on the bridge"
      return "the watch is locked: \(who)" + (expiresIn.map { "; the lease lasts \($0)s more unless its holder renews it" } ?? "")
        + Self.waitedText(waited)
    case .unavailable(let path, let reason):
      return "cannot open the lock file \(path): \(reason)"
    }
  }

  /// What to do next, after `description`: wait for the holder, or, for a lease whose holder
  /// has ended, for the lease to expire (with a `-lock-timeout` long enough for it).
  public var advice: String {
    if case .leased(_, _, _, let expiresIn, true) = self {
      return "Its process no longer renews it (only a request of it held back on the network, arriving late, could): run again once it has "
        + "expired, or give -lock-timeout=\((expiresIn ?? Self.leaseSeconds) + 5)s to wait for it."
    }
    return "Wait for it to finish, or give -lock-timeout=DURATION (e.g. -lock-timeout=1m) to wait for it."
  }

  /// The longest a lease tsapply takes lives without renewal (`Watch.leaseTimeToLive`).
  static var leaseSeconds: Int { Watch.leaseTimeToLive }

  /// ` (waited 2.5s)`, or nothing for a wait under 0.05 s.
  static func waitedText(_ waited: Duration) -> String {
    let seconds = Double(waited.components.seconds) + Double(waited.components.attoseconds) / 1e18
    return seconds < 0.05 ? "" : String(format: " (waited %.1fs)", seconds)
  }
}
