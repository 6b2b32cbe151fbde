import Foundation
import TSModel
import TSApply

/// A log file of events (`--log FILE`): opened for appending, created 0600 (it can hold contact
/// details with `--show-sensitive`), each line written with one `write(2)` as the event happens,
/// so nothing waits in a buffer and concurrent writers never interleave within a line.
///
/// `O_APPEND` makes rotation by copy-and-truncate (logrotate's `copytruncate`) safe; the file is
/// never reopened. The descriptor is close-on-exec, so `--on-sos` commands do not inherit it.
public final class EventLog: @unchecked Sendable {
  /// Absolute path of the file.
  public let path: String
  private let descriptor: Int32
  private let lock = NSLock()

  /// Opens (creating 0600, and missing folders 0700) the file at `path` for appending.
  /// - Throws: `EventLogError` naming the path and the system's reason.
  public init(path: String) throws(EventLogError) {
    self.path = path
    do { try SecureFile.createDirectory((path as NSString).deletingLastPathComponent) } catch {
      throw EventLogError(path: path, reason: error.reason)
    }
    descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { throw EventLogError(path: path, reason: String(cString: strerror(errno))) }
  }

  deinit { close(descriptor) }

  /// Whether people other than the owner may read the file (it existed with a wider mode).
  public var readableByOthers: Bool {
    var info = stat()
    return fstat(descriptor, &info) == 0 && (info.st_mode & 0o077) != 0
  }

  /// Appends `line` and a newline in one write.
  /// - Throws: `EventLogError` when the write fails (a full disk, a removed mount).
  public func append(_ line: String) throws(EventLogError) {
    lock.lock()
    defer { lock.unlock() }
    let bytes = Array((line + "\n").utf8)
    var offset = 0
    while offset < bytes.count {
      let written = bytes.withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress! + offset, bytes.count - offset) }
      if written < 0 {
        if errno == EINTR { continue }
        throw EventLogError(path: path, reason: String(cString: strerror(errno)))
      }
      offset += written
    }
  }
}

/// The event log cannot be opened or written.
public struct EventLogError: Error, Hashable, Sendable, CustomStringConvertible {
  /// The file.
  public var path: String
  /// Why, in the system's words.
  public var reason: String
  public var description: String { "cannot write the event log \(path): \(reason)" }
}
