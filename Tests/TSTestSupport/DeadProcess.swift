import Foundation

/// A process ID no process has now, for tests of what tsapply does with files a killed writer
/// left (`SecureFile.removeOrphans(in:)`).
public enum DeadProcess {
  /// The PID of a `/bin/true` that has exited and been reaped. Nothing runs under it until
  /// the kernel hands the number out again, which takes a whole wrap of the PID space.
  public static func pid() throws -> pid_t {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/true")
    try process.run()
    process.waitUntilExit()
    return process.processIdentifier
  }
}
