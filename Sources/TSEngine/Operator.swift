import Foundation

/// Who is running tsapply, as its records name them (a rollout's `started_by`, an apply
/// history entry's `user` and `host`).
public enum Operator {
  /// The login name of this process's user (from the password database, not `$USER`, which a
  /// caller sets at will); the numeric uid when it has none.
  public static var user: String {
    if let entry = getpwuid(getuid()), let name = entry.pointee.pw_name { return String(cString: name) }
    return String(getuid())
  }

  /// This machine's host name.
  public static var host: String { ProcessInfo.processInfo.hostName }

  /// `user@host`.
  public static var current: String { "\(user)@\(host)" }
}
