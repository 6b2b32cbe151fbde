import Foundation

/// Where a manifest's bytes come from, and the one way tsapply reads them: every command (and
/// any other front-end, such as a runner reading many manifests) reads its input through
/// `read(maxBytes:)`, so every input is bounded before it is read and every problem has the
/// same message. Every other file tsapply reads (records, backups, saved plans, a simulated
/// watch's state file) goes through it as well, with its own bound and noun, which is why it
/// lives in TSModel, beside `SecureFile`, its writing counterpart.
///
/// Reading never takes more than `maxBytes + 1` bytes from anywhere: a regular file larger than
/// the bound is refused from its size without reading it, and a stream (standard input, a pipe,
/// `/dev/zero`) is refused as soon as it holds one byte more. What cannot be a manifest is named
/// for what it is: a directory, a device file, a socket, a named pipe (FIFO) with no writer, a
/// symbolic link loop or a dangling link, a file this user may not read.
///
/// A named pipe given by path is opened without waiting for a writer: one that has no writer
/// (and holds nothing) is refused at once instead of blocking, while one with a writer (`<(cmd)`
/// process substitution, a writer already waiting) is read to its end like any stream.
/// Standard input is read as it is, blocking until its end, whatever it is (a terminal, a pipe,
/// a file), within the same bound.
public enum ManifestSource: Sendable, Hashable {
  /// The file at `path` (absolute, or relative to the process's working directory), named
  /// `displayName` (the path as the user wrote it) in messages and positions.
  case file(path: String, displayName: String)
  /// An open file descriptor, read from its current offset and never closed by the reader.
  case descriptor(Int32, displayName: String)
  /// Bytes already in memory (tests, or a front-end that received them), held to the same bound.
  case bytes([UInt8], displayName: String)

  /// Standard input, named `-` (the file name that means it on the command line).
  public static let standardInput = ManifestSource.descriptor(STDIN_FILENO, displayName: "-")

  /// The most bytes a manifest may have (1 MiB; `YAMLLimits.default.maxBytes` is this bound).
  public static let maxBytes = 1 << 20

  /// The name positions and messages carry.
  public var displayName: String {
    switch self {
    case .file(_, let name), .descriptor(_, let name), .bytes(_, let name): name
    }
  }

  /// Whether reading again gives the same bytes: a regular file (after following symbolic links)
  /// or bytes in memory, not a stream such as a pipe, whose bytes a read consumes.
  public var isRereadable: Bool {
    switch self {
    case .bytes: return true
    case .descriptor: return false
    case .file(let path, _):
      var info = stat()
      return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }
  }

  /// The source's bytes, at most `maxBytes`, or why they cannot be read; `noun` names what the
  /// input should be in the error (`ManifestReadError.noun`). Never reads more than
  /// `maxBytes + 1` bytes, never blocks on a named pipe without a writer, never crashes.
  public func read(maxBytes: Int = ManifestSource.maxBytes, noun: String) -> Result<[UInt8], ManifestReadError> {
    read(maxBytes: maxBytes).mapError { error in
      var named = error
      named.noun = noun
      return named
    }
  }

  /// Why the source cannot be read (as `read(maxBytes:)` would fail), or `nil` when it can. A
  /// regular file within the bound is only opened and its size looked at, not read: what a
  /// fleet file's check of the manifests it names costs per watch (docs/fleet.md "Scale").
  public func readProblem(maxBytes: Int = ManifestSource.maxBytes) -> ManifestReadError? {
    if case .file(let path, let name) = self {
      let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
      guard descriptor >= 0 else { return ManifestReadError(name, ManifestReadError.Reason(openError: errno, path: path)) }
      var info = stat()
      let plainFile = fstat(descriptor, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG && Int(info.st_size) <= maxBytes
      close(descriptor)
      if plainFile { return nil }
    }
    if case .failure(let problem) = read(maxBytes: maxBytes) { return problem }
    return nil
  }

  /// The most bytes one of tsapply's own records may have (backups, last-applied records,
  /// statuses): 4 MiB, many times the largest watch state (100 contacts, 10 custom reminders).
  public static let maxRecordBytes = 4 << 20

  /// The source's bytes, at most `maxBytes`, or why they cannot be read. Never reads more than
  /// `maxBytes + 1` bytes, never blocks on a named pipe without a writer, never crashes.
  public func read(maxBytes: Int = ManifestSource.maxBytes) -> Result<[UInt8], ManifestReadError> {
    switch self {
    case .bytes(let bytes, let name):
      guard bytes.count <= maxBytes else { return .failure(ManifestReadError(name, .tooLarge(size: bytes.count, limit: maxBytes))) }
      return .success(bytes)
    case .descriptor(let descriptor, let name):
      return BoundedReader(descriptor: descriptor, name: name, maxBytes: maxBytes, openedByPath: false).read()
    case .file(let path, let name):
      let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
      guard descriptor >= 0 else { return .failure(ManifestReadError(name, ManifestReadError.Reason(openError: errno, path: path))) }
      defer { close(descriptor) }
      return BoundedReader(descriptor: descriptor, name: name, maxBytes: maxBytes, openedByPath: true).read()
    }
  }
}

/// Why a manifest (or another input read through `ManifestSource`) could not be read.
public struct ManifestReadError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What the input turned out to be, or what went wrong.
  public enum Reason: Sendable, Hashable {
    /// Nothing exists at the path.
    case notFound
    /// A symbolic link whose target does not exist.
    case danglingSymlink(target: String)
    /// A part of the path before the last is a file, not a directory.
    case notADirectory
    /// This user may not read the file (or search a directory on its path).
    case permissionDenied
    /// Symbolic links that lead round in a loop.
    case symlinkLoop
    /// A directory.
    case directory
    /// A named pipe that nothing is writing to (and that holds nothing).
    case fifoWithoutWriter
    /// A character device (a terminal, `/dev/zero`, `/dev/null`) named by path.
    case characterDevice
    /// A block device (a disk) named by path.
    case blockDevice
    /// A socket.
    case socket
    /// More than `limit` bytes; `size` when known from the file's size (nothing was read).
    case tooLarge(size: Int?, limit: Int)
    /// Any other failure of the system call, as the system describes it.
    case system(String)
  }

  /// The input as the user named it.
  public var displayName: String
  /// What was wrong.
  public var reason: Reason
  /// What the input should have been, in messages: `manifest` unless the reader said otherwise
  /// (`backup`, `last-applied record`, `saved plan`).
  public var noun = "manifest"

  /// An error about the input named `displayName`.
  public init(_ displayName: String, _ reason: Reason) {
    self.displayName = displayName
    self.reason = reason
  }

  /// What is wrong, without the input's name: `it is a directory, not a manifest file`.
  public var explanation: String {
    switch reason {
    case .notFound: "no such file or directory"
    case .danglingSymlink(let target): "it is a symbolic link to \(target), which does not exist"
    case .notADirectory: "a part of the path before the file name is a file, not a directory"
    case .permissionDenied: "permission denied (this user may not read it)"
    case .symlinkLoop: "it is a loop of symbolic links (too many levels of symbolic links)"
    case .directory: "it is a directory, not a \(noun) file"
    case .fifoWithoutWriter:
      "it is a named pipe (FIFO) and nothing is writing to it; tsapply does not wait for a writer (start the program that writes to it first, or pipe the \(noun) into '-')"
    case .characterDevice: "it is a device file (a character device, such as a terminal or /dev/zero), not a \(noun) file"
    case .blockDevice: "it is a device file (a block device, such as a disk), not a \(noun) file"
    case .socket: "it is a socket, not a \(noun) file"
    case .tooLarge(let size?, let limit): "the file is \(size) bytes; a \(noun) may be at most \(limit) bytes"
    case .tooLarge(nil, let limit):
      "\(displayName == "-" ? "standard input" : "the input") holds more than \(limit) bytes; a \(noun) may be at most \(limit) bytes"
    case .system(let message): message
    }
  }

  /// `cannot read watch.yaml: it is a directory, not a manifest file`.
  public var description: String { "cannot read \(displayName): \(explanation)" }

  /// The error as a diagnostic: a size problem is about the content, at line 1, column 1, like
  /// every other problem with the bytes; any other is about the input as a whole, without a
  /// position.
  public var diagnostic: Diagnostic {
    if case .tooLarge = reason {
      return .error(at: SourcePosition(file: displayName, line: 1, column: 1), field: "", explanation)
    }
    return .error(at: nil, field: "", description)
  }
}

extension ManifestReadError.Reason {
  /// The reason `open(path)` failed with `code`, looking at the path where that tells more
  /// (a dangling symbolic link rather than "no such file", a socket rather than ENXIO).
  init(openError code: Int32, path: String) {
    switch code {
    case ENOENT:
      var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
      let length = readlink(path, &buffer, buffer.count - 1)
      if length > 0 {
        self = .danglingSymlink(target: String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self))
      } else {
        self = .notFound
      }
    case ENOTDIR: self = .notADirectory
    case EACCES, EPERM: self = .permissionDenied
    case ELOOP: self = .symlinkLoop
    case ENXIO, EOPNOTSUPP:
      var info = stat()
      self = stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFSOCK ? .socket : .system(Self.describe(code))
    default: self = .system(Self.describe(code))
    }
  }

  /// The system's description of `code`, in lower case (`input/output error`).
  static func describe(_ code: Int32) -> String { String(cString: strerror(code)).lowercased() }
}

/// Reads one open descriptor to its end, never more than `maxBytes + 1` bytes.
private struct BoundedReader {
  let descriptor: Int32
  let name: String
  let maxBytes: Int
  /// Opened from a path by `ManifestSource` (with `O_NONBLOCK`): device files and sockets are
  /// refused, and a named pipe without a writer is detected instead of waited for. Standard
  /// input is read as given.
  let openedByPath: Bool

  func read() -> Result<[UInt8], ManifestReadError> {
    var info = stat()
    guard fstat(descriptor, &info) == 0 else { return failure(.system(ManifestReadError.Reason.describe(errno))) }
    let type = info.st_mode & S_IFMT
    switch type {
    case S_IFDIR: return failure(.directory)
    case S_IFREG where Int(info.st_size) > maxBytes: return failure(.tooLarge(size: Int(info.st_size), limit: maxBytes))
    case S_IFCHR where openedByPath: return failure(.characterDevice)
    case S_IFBLK where openedByPath: return failure(.blockDevice)
    case S_IFSOCK where openedByPath: return failure(.socket)
    default: break
    }
    var bytes = [UInt8]()
    // The first read takes a regular file whole (and one byte more, to see a file that grew).
    let first = min(maxBytes + 1, type == S_IFREG ? Int(info.st_size) + 1 : 1 << 16)
    // A regular file never blocks, so the probe for a named pipe's writer (and the two `fcntl`
    // calls after it) is only for other files: a fleet reads three regular files per watch.
    if openedByPath && type != S_IFREG {
      // Still non-blocking: a named pipe with nothing in it and no writer reads as its end now.
      switch chunk(into: &bytes, probing: true, first: first) {
      case .failed(let reason): return failure(reason)
      case .read(0) where type == S_IFIFO: return failure(.fifoWithoutWriter)
      case .read(0): return .success(bytes)
      case .read, .wouldBlock: break
      }
      // From here on wait for the writer's bytes (and for its end) like any reader.
      let flags = fcntl(descriptor, F_GETFL)
      if flags >= 0 { _ = fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK) }
    }
    while bytes.count <= maxBytes {
      switch chunk(into: &bytes, probing: false, first: first) {
      case .failed(let reason): return failure(reason)
      case .read(0): return .success(bytes)
      case .read, .wouldBlock: continue
      }
    }
    return failure(.tooLarge(size: type == S_IFREG ? bytes.count : nil, limit: maxBytes))
  }

  /// What one `read(2)` gave.
  private enum Chunk {
    /// This many bytes (0: the end).
    case read(Int)
    /// Nothing yet, and `probing` asked not to wait.
    case wouldBlock
    case failed(ManifestReadError.Reason)
  }

  /// Appends one `read(2)` of at most what keeps `bytes` within `maxBytes + 1`, retrying when
  /// interrupted. A descriptor that would block is waited for (standard input may have been made
  /// non-blocking by another program), unless `probing`.
  private func chunk(into bytes: inout [UInt8], probing: Bool, first: Int) -> Chunk {
    let room = bytes.isEmpty ? first : min(1 << 16, maxBytes + 1 - bytes.count)
    while true {
      let count = readAppending(descriptor, room, to: &bytes)
      if count >= 0 { return .read(count) }
      let code = errno
      if code == EINTR { continue }
      if code == EAGAIN || code == EWOULDBLOCK {
        if probing { return .wouldBlock }
        var waiting = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        _ = poll(&waiting, 1, -1)
        continue
      }
      return .failed(code == EISDIR ? .directory : .system(ManifestReadError.Reason.describe(code)))
    }
  }

  private func failure(_ reason: ManifestReadError.Reason) -> Result<[UInt8], ManifestReadError> {
    .failure(ManifestReadError(name, reason))
  }
}

/// `read(2)` of at most `count` bytes from `descriptor`, appended to `bytes`; the system call's
/// result (bytes read, 0 at the end, -1 with `errno` set).
private func readAppending(_ descriptor: Int32, _ count: Int, to bytes: inout [UInt8]) -> Int {
  var result = 0
  // Read into uninitialised memory: a zero-filled 64 KiB buffer per read cost more than the
  // read itself for the few-KiB files of a fleet (three per watch). The first read goes straight
  // into the array it returns, with no second copy.
  if bytes.isEmpty {
    bytes = [UInt8](unsafeUninitializedCapacity: count) { memory, initialized in
      result = read(descriptor, memory.baseAddress, count)
      initialized = max(result, 0)
    }
    return result
  }
  let buffer = [UInt8](unsafeUninitializedCapacity: count) { memory, initialized in
    result = read(descriptor, memory.baseAddress, count)
    initialized = max(result, 0)
  }
  if result > 0 { bytes.append(contentsOf: buffer) }
  return result
}
