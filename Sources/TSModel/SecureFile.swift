import Foundation

/// Writes files that may hold personal data (contacts' names and phone numbers).
///
/// Files are created with mode 0600 from the start (never chmod-ed afterwards) and replaced
/// atomically: the bytes go to a temporary file in the same directory, are flushed with fsync,
/// and the temporary file is renamed over the destination (the directory fsynced too), so a crash
/// never leaves a half-written backup, record or saved plan. A temporary file left by a writer
/// that was killed is removed by the next write into its folder, whatever file that writes
/// (`removeOrphans(in:)`).
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
    removeOrphans(in: directory)
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

  /// Removes the temporary files that writers killed mid-write left in `directory`: every
  /// `.NAME.PID.RAND.tmp` this helper names (and the simulator's older `.NAME.tmp-PID-RAND`), of
  /// any NAME, that is a regular file of this user and whose process no longer runs (`kill(PID,
  /// 0)` fails with `ESRCH`). They may hold contacts, and no temporary file is to outlive its
  /// writer: a file of a name never written again (a backup's) is removed too. A running writer's
  /// file, this process's included, is never touched. Called by every `write` for its folder;
  /// opening a file a killed writer may have left such a file beside goes through
  /// `removeOrphansOnce(in:)`. An unreadable folder is left as it is.
  static func removeOrphans(in directory: String) {
    let folder = directory.isEmpty ? "." : directory
    // `readdir` rather than `contentsOfDirectory`: only hidden names become Strings, so a pass
    // over a folder of a thousand watches (and their lock files) allocates next to nothing.
    // The name is read in place, up to its NUL: a `dirent` is only as long as its name, so
    // copying the whole `d_name` field could read past the end of the record.
    guard let offset = MemoryLayout<dirent>.offset(of: \dirent.d_name), let stream = opendir(folder) else { return }
    var entries: [String] = []
    while let entry = readdir(stream) {
      let name = UnsafeRawPointer(entry).advanced(by: offset).assumingMemoryBound(to: CChar.self)
      if name.pointee == CChar(UInt8(ascii: ".")) { entries.append(String(cString: name)) }
    }
    closedir(stream)
    let user = geteuid()
    for entry in entries {
      guard let pid = writerPID(ofTemporary: entry), pid != getpid() else { continue }
      let path = folder + "/" + entry
      var info = stat()
      guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == user else { continue }
      if kill(pid, 0) != 0 && errno == ESRCH { unlink(path) }
    }
  }

  /// As `removeOrphans(in:)`, the first time this process asks for `directory` only: what
  /// opening a file asks (the simulator's state file), so a fleet of a thousand watches in one
  /// folder costs one pass over it, not a thousand (each a pass over two thousand names). Writes
  /// sweep their folder every time (`write`).
  public static func removeOrphansOnce(in directory: String) {
    guard swept.update({ $0.insert(directory).inserted }) else { return }
    removeOrphans(in: directory)
  }

  /// The folders `removeOrphansOnce(in:)` swept in this process.
  private static let swept = Locked<Set<String>>([])

  /// The PID in `name` when it is a temporary file's name this helper gives
  /// (`.NAME.PID.RAND.tmp`) or the simulator gave (`.NAME.tmp-PID-RAND`), NAME not empty;
  /// otherwise `nil`.
  static func writerPID(ofTemporary name: String) -> pid_t? {
    guard name.hasPrefix(".") else { return nil }
    let fields: [Substring]
    let rest: Substring
    if name.hasSuffix(".tmp") {
      let parts = name.dropLast(4).split(separator: ".", omittingEmptySubsequences: false)
      guard parts.count >= 4 else { return nil }
      fields = Array(parts.suffix(2))
      rest = name.dropFirst().dropLast(4 + fields[0].count + fields[1].count + 2)
    } else if let marker = name.range(of: ".tmp-", options: .backwards) {
      fields = name[marker.upperBound...].split(separator: "-", omittingEmptySubsequences: false)
      rest = name[name.index(after: name.startIndex)..<marker.lowerBound]
    } else {
      return nil
    }
    guard !rest.isEmpty, fields.count == 2, fields.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
          let pid = pid_t(fields[0]), pid > 0, UInt32(fields[1]) != nil else { return nil }
    return pid
  }

  /// Creates `path` and missing parents with mode 0700; an existing directory is fine.
  /// - Throws: `SecureFileError` naming `path`; when it or a parent is a file, the reason says
  ///   so (`FilePaths.notADirectory`) rather than passing on Foundation's error.
  public static func createDirectory(_ path: String) throws(SecureFileError) {
    guard !path.isEmpty else { return }
    // One `stat` when it is there already (every write asks for its folder).
    var info = stat()
    if stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR { return }
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

  /// The bytes of a file that holds a key (a bridge's pairing, `tsapply bridge serve`'s
  /// identity), read only when no one else could have read or replaced it: a regular file of at
  /// most `maxBytes`, owned by this user, with no permission bits for group or others (0600 or
  /// stricter), in a folder no one else may write to (who could write there could put a pairing
  /// there that leads to a bridge of their own). `nil` when nothing is at `path`. As ssh does with
  /// a private key, a file that fails is refused, not used with a warning: tsapply writes these
  /// files 0600 in 0700 folders, so a looser one was copied or changed by someone.
  /// - Throws: `SecureFileError` saying what is wrong and the command that fixes it.
  public static func readKey(_ path: String, maxBytes: Int = 64 << 10) throws(SecureFileError) -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
    guard fd >= 0 else {
      if errno == ENOENT { return nil }
      throw SecureFileError(path: path, operation: "use", reason: "cannot read it: \(systemReason())")
    }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
      throw SecureFileError(path: path, operation: "use", reason: "it is not a regular file")
    }
    guard info.st_uid == geteuid() else {
      throw SecureFileError(path: path, operation: "use", reason: "it belongs to another user; the key in it must be yours alone: remove it and pair again")
    }
    guard (info.st_mode & 0o077) == 0 else {
      throw SecureFileError(path: path, operation: "use", reason: "its mode is \(mode(info.st_mode)): others may read or change the key in it, which opens the watch; "
                              + "run 'chmod 600 \(ShellWord.quoted(path))', and pair again if someone may have read it")
    }
    let folder = (path as NSString).deletingLastPathComponent
    var folderInfo = stat()
    if stat(folder.isEmpty ? "." : folder, &folderInfo) == 0, (folderInfo.st_mode & 0o022) != 0 {
      throw SecureFileError(path: path, operation: "use", reason: "its folder's mode is \(mode(folderInfo.st_mode)): others may put a file there in its place; "
                              + "run 'chmod 700 \(ShellWord.quoted(folder))'")
    }
    // Read bounded from the descriptor checked above (the one reader every input goes through).
    switch ManifestSource.descriptor(fd, displayName: path).read(maxBytes: maxBytes, noun: "key file") {
    case .success(let bytes): return bytes
    case .failure(let error): throw SecureFileError(path: path, operation: "use", reason: "\(error)")
    }
  }

  /// Permission bits as `ls -l` and chmod's octal give them: `0644`.
  private static func mode(_ mode: mode_t) -> String {
    let octal = String(mode & 0o7777, radix: 8)
    return String(repeating: "0", count: max(0, 4 - octal.count)) + octal
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
  /// What could not be done: `write`, or `use` (a key file `readKey` refused).
  public var operation = "write"
  /// A failure to write `path` (or, with `operation`, to use it) because of `reason`.
  public init(path: String, operation: String = "write", reason: String) {
    self.path = path
    self.reason = reason
    self.operation = operation
  }
  /// The refusal to replace the existing file `path`.
  public static func alreadyExists(_ path: String) -> SecureFileError {
    var error = SecureFileError(path: path, reason: "the file already exists")
    error.alreadyExists = true
    return error
  }
  public var description: String { "cannot \(operation) \(path): \(reason)" }
}
