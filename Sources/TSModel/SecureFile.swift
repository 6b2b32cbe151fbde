import Foundation

/// Writes files that may hold personal data (contacts' names and phone numbers).
///
/// Files are created with mode 0600 from the start (never chmod-ed afterwards) and replaced
/// atomically: the bytes go to a temporary file in the same directory, are flushed with fsync,
/// and the temporary file is renamed over the destination (the directory fsynced too), so a crash
/// never leaves a half-written backup, record or saved plan. A temporary file left by a writer
/// that was killed is removed by the next write of the same file (`removeOrphans(of:)`).
public enum SecureFile {
  /// Writes `bytes` to `path` (mode 0600), creating parent directories with mode 0700.
  ///
  /// - Parameters:
  ///   - bytes: The file content.
  ///   - path: Absolute destination path.
  ///   - overwrite: When `false`, an existing file is an error (`SecureFileError.alreadyExists`),
  ///     decided atomically: the file is put in place with `link(2)`, which fails when the name
  ///     exists, so two writers racing for one name never replace each other.
  ///   - mode: Permission bits the file is created with (default 0600); `tsapply fmt` passes
  ///     the mode of the file it rewrites.
  ///   - durable: Whether the file and the rename are fsynced, so they outlive a power cut
  ///     (default). `false` only for a file that is rewritten moments later anyway (the
  ///     last-applied record before each write of an apply): still atomic, and still there
  ///     after the process is killed.
  /// - Throws: `SecureFileError` naming the path and the system's reason.
  public static func write(_ bytes: [UInt8], to path: String, overwrite: Bool = true,
                           mode: mode_t = 0o600, durable: Bool = true) throws(SecureFileError) {
    let directory = (path as NSString).deletingLastPathComponent
    try createDirectory(directory)
    if !overwrite && exists(path) { throw .alreadyExists(path) }
    let temporary = directory + "/.\((path as NSString).lastPathComponent).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
    let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
    guard fd >= 0 else { throw SecureFileError(path: temporary, reason: systemReason()) }
    var failure = writeAll(bytes, to: fd, path: temporary)
    if failure == nil && durable && fsync(fd) != 0 { failure = SecureFileError(path: temporary, reason: systemReason()) }
    close(fd)
    if let failure {
      unlink(temporary)
      throw failure
    }
    if overwrite {
      guard rename(temporary, path) == 0 else {
        let error = SecureFileError(path: path, reason: systemReason())
        unlink(temporary)
        throw error
      }
    } else {
      let linked = link(temporary, path)
      let linkErrno = errno
      unlink(temporary)
      guard linked == 0 else {
        if linkErrno == EEXIST { throw .alreadyExists(path) }
        errno = linkErrno
        throw SecureFileError(path: path, reason: systemReason())
      }
    }
    // The rename itself made durable, so a power cut cannot bring the old file back.
    let directoryDescriptor = durable ? open(directory.isEmpty ? "." : directory, O_RDONLY | O_CLOEXEC) : -1
    if directoryDescriptor >= 0 {
      fsync(directoryDescriptor)
      close(directoryDescriptor)
    }
    removeOrphans(of: path)
  }

  /// Appends `bytes` to `path` (created 0600, parent directories 0700) with one `write(2)` on a
  /// descriptor opened `O_APPEND`, then fsyncs it, so an appended record is whole and durable
  /// when this returns; nothing already in the file is rewritten (the apply history). A short
  /// write is retried for the rest.
  /// - Throws: `SecureFileError` naming the path and the system's reason.
  public static func append(_ bytes: [UInt8], to path: String) throws(SecureFileError) {
    try createDirectory((path as NSString).deletingLastPathComponent)
    let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0o600)
    guard fd >= 0 else { throw SecureFileError(path: path, reason: systemReason()) }
    defer { close(fd) }
    if let failure = writeAll(bytes, to: fd, path: path) { throw failure }
    if fsync(fd) != 0 { throw SecureFileError(path: path, reason: systemReason()) }
  }

  /// Removes temporary files that writers of `path` killed mid-write left beside it (`.NAME.PID.RAND.tmp`,
  /// and the simulator's older `.NAME.tmp-PID-RAND`), when their process no longer runs: they
  /// may hold contacts, and no temporary file is to outlive its writer.
  static func removeOrphans(of path: String) {
    let directory = (path as NSString).deletingLastPathComponent
    let name = (path as NSString).lastPathComponent
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: directory.isEmpty ? "." : directory) else { return }
    for entry in entries where entry.hasPrefix(".\(name).") {
      let rest = entry.dropFirst(name.count + 2)
      let fields: [Substring]
      if rest.hasSuffix(".tmp") {
        fields = rest.dropLast(4).split(separator: ".")
      } else if rest.hasPrefix("tmp-") {
        fields = rest.dropFirst(4).split(separator: "-")
      } else {
        continue
      }
      guard fields.count == 2, let pid = pid_t(fields[0]), UInt32(fields[1]) != nil, pid > 0, pid != getpid() else { continue }
      if kill(pid, 0) != 0 && errno == ESRCH { unlink(directory + "/" + entry) }
    }
  }

  /// Creates `path` and missing parents with mode 0700; an existing directory is fine.
  /// - Throws: `SecureFileError` naming `path`; when it or a parent is a file, the reason says
  ///   so (`FilePaths.notADirectory`) rather than passing on Foundation's error.
  public static func createDirectory(_ path: String) throws(SecureFileError) {
    guard !path.isEmpty else { return }
    if let blocker = FilePaths.nonDirectory(in: path) {
      throw SecureFileError(path: path, reason: FilePaths.notADirectory(path, blocker: blocker))
    }
    do {
      try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                              attributes: [.posixPermissions: 0o700])
    } catch {
      throw SecureFileError(path: path, reason: "cannot create the directory: \(FilePaths.systemReason(of: error))")
    }
  }

  /// Whether anything is at `path`, a dangling symbolic link included (`lstat`, which does not
  /// follow the link).
  public static func exists(_ path: String) -> Bool {
    var info = stat()
    return lstat(path, &info) == 0
  }

  /// The absolute `path` with every symbolic link resolved (`FilePaths.resolved`: `realpath`
  /// for an existing file; a dangling link resolves to its target), so an atomic replace writes
  /// the link's target instead of replacing the link with a regular file.
  public static func resolvingSymlinks(_ path: String) -> String {
    FilePaths.resolved(path)
  }

  /// Writes all of `bytes` to `fd` (retrying short writes and EINTR); the error names `path`.
  private static func writeAll(_ bytes: [UInt8], to fd: Int32, path: String) -> SecureFileError? {
    var failure: SecureFileError?
    bytes.withUnsafeBytes { buffer in
      guard let base = buffer.baseAddress else { return }
      var offset = 0
      while offset < buffer.count {
        let written = Foundation.write(fd, base + offset, buffer.count - offset)
        if written < 0 {
          if errno == EINTR { continue }
          failure = SecureFileError(path: path, reason: systemReason())
          return
        }
        offset += written
      }
    }
    return failure
  }

  private static func systemReason() -> String { String(cString: strerror(errno)) }
}

/// A file that could not be written, with the path and the reason.
public struct SecureFileError: Error, Hashable, Sendable, CustomStringConvertible {
  /// The path that could not be written.
  public var path: String
  /// Why, in plain words (usually the system's `strerror` text).
  public var reason: String
  /// True when the write was refused only because `path` already exists (`overwrite: false`).
  public var alreadyExists: Bool = false
  /// A failure to write `path` because of `reason`.
  public init(path: String, reason: String) {
    self.path = path
    self.reason = reason
  }
  /// The refusal to replace the existing file `path`.
  public static func alreadyExists(_ path: String) -> SecureFileError {
    var error = SecureFileError(path: path, reason: "the file already exists")
    error.alreadyExists = true
    return error
  }
  public var description: String { "cannot write \(path): \(reason)" }
}
