import Foundation

/// Who is running tsapply, as its records name them (a rollout's `started_by`, an apply
/// history entry's `user` and `host`). Each is read once per process (a fleet applies many
/// watches at once; `getpwuid` is not safe to call from several threads).
public enum Operator {
  /// The login name of this process's user (from the password database, not `$USER`, which a
  /// caller sets at will); the numeric uid when it has none.
  public static let user: String = {
    var entry = passwd()
    var result: UnsafeMutablePointer<passwd>?
    var buffer = [CChar](repeating: 0, count: 4096)
    if getpwuid_r(getuid(), &entry, &buffer, buffer.count, &result) == 0, result != nil, let name = entry.pw_name {
      return String(cString: name)
    }
    return String(getuid())
  }()

  /// This machine's host name.
  public static let host: String = ProcessInfo.processInfo.hostName

  /// `user@host`.
  public static var current: String { "\(user)@\(host)" }
}
