/// Who holds a watch's whole-apply lock (or a bridge's lease): shown to a second apply that
/// has to wait or give up, so the user knows whom to ask.
public struct LockHolder: Hashable, Codable, Sendable, CustomStringConvertible {
  /// Process ID of the holder.
  public var pid: Int32
  /// Host name of the machine the holder runs on.
  public var host: String
  /// The holder's command line, e.g. `tsapply apply watch.yaml` (arguments only, never
  /// environment values).
  public var command: String
  /// When the lock was taken, ISO 8601 UTC (`2026-12-01T09:30:00Z`).
  public var since: String

  /// A holder record.
  public init(pid: Int32, host: String, command: String, since: String) {
    self.pid = pid
    self.host = host
    self.command = command
    self.since = since
  }

  /// `pid 4242 on host "lab-1" ('tsapply apply watch.yaml'), since 2026-12-01T09:30:00Z`.
  public var description: String {
    "pid \(pid) on host \(host) ('\(ControlCharacters.escaped(command))'), since \(since)"
  }
}
