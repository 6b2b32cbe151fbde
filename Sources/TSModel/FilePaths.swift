import Foundation

/// Paths as the kernel finds them: telling whether two spellings name one file (`./a.json`,
/// `/abs/a.json`, a symbolic link to it), writing through a symbolic link instead of replacing
/// it, and saying plainly why a directory cannot be created.
public enum FilePaths {
  /// Most symbolic links followed for one path before giving up (Linux's own limit, `ELOOP`).
  static let maximumLinks = 40

  /// The absolute `path` with `.` and `..` removed and every symbolic link resolved, the last
  /// component included, so two spellings of one file give one string (what `realpath(3)`
  /// gives for an existing file). Unlike `realpath`, it also answers for a path that does not
  /// exist (yet): a dangling link resolves to the path it points to, and the missing rest is
  /// kept as written. A relative `path` is taken from `/`; a loop of links stops after
  /// `maximumLinks` and keeps the rest as written.
  public static func resolved(_ path: String) -> String {
    // Taken from the end (reversed), so each component is removed in constant time.
    var pending = Array(components(path).reversed())
    var result: [String] = []
    // `result` as a path (`/a/b`; empty for the root), kept beside it so that each component's
    // `lstat` costs no join: this runs for every watch a fleet command or monitor opens.
    var prefix = ""
    var exists = true
    var links = 0
    while let component = pending.popLast() {
      if component == "." { continue }
      if component == ".." {
        if !result.isEmpty {
          result.removeLast()
          prefix = result.isEmpty ? "" : "/" + result.joined(separator: "/")
        }
        continue
      }
      if exists {
        // One `lstat` a component: whether it exists, and whether it is a link to follow.
        let candidate = prefix + "/" + component
        var info = stat()
        exists = lstat(candidate, &info) == 0
        if exists, (info.st_mode & S_IFMT) == S_IFLNK, links < maximumLinks, let target = linkTarget(candidate) {
          links += 1
          if target.hasPrefix("/") {
            result = []
            prefix = ""
          }
          pending += components(target).reversed()
          continue
        }
      }
      result.append(component)
      prefix += "/" + component
    }
    return prefix.isEmpty ? "/" : prefix
  }

  /// The absolute `path` without `.` and `..` components: `resolved(path)` when it has any
  /// (`/home/ana/work/../sp/s.json` is `/home/ana/sp/s.json`, as the kernel finds it), else
  /// `path` as written, so a symbolic link the user named stays named. How messages and advice
  /// name a path the user typed relative (docs/device.md).
  public static func undotted(_ path: String) -> String {
    path.split(separator: "/").contains { $0 == "." || $0 == ".." } ? resolved(path) : path
  }

  /// Whether `path` lies in the directory `directory` (or is it), both compared resolved.
  public static func isInside(_ path: String, directory: String) -> Bool {
    let file = resolved(path)
    let folder = resolved(directory)
    return file == folder || file.hasPrefix(folder == "/" ? "/" : folder + "/")
  }

  /// The first of `path` and its parents that exists but is not a directory (following links),
  /// so no directory can be created at `path`; `nil` when there is none.
  public static func nonDirectory(in path: String) -> String? {
    var prefix = ""
    for component in components(path) {
      prefix += "/" + component
      var info = stat()
      guard stat(prefix, &info) == 0 else { return nil }
      if (info.st_mode & S_IFMT) != S_IFDIR { return prefix }
    }
    return nil
  }

  /// Why no directory can be created at `path` because of `blocker` (from `nonDirectory(in:)`),
  /// to follow the path in a message: `it is a file, not a directory`, or `its parent BLOCKER is
  /// a file, not a directory`.
  public static func notADirectory(_ path: String, blocker: String) -> String {
    resolved(blocker) == resolved(path)
      ? "it is a file, not a directory"
      : "its parent \(blocker) is a file, not a directory"
  }

  /// The system's words for a Foundation file error (`strerror` of its POSIX cause, e.g.
  /// "Permission denied"), never Foundation's own "NSCocoaErrorDomain error 512".
  public static func systemReason(of error: any Error) -> String {
    if let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
      return String(cString: strerror(Int32(underlying.code)))
    }
    let own = error as NSError
    if own.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(own.code))) }
    return "the system refused it"
  }

  private static func components(_ path: String) -> [String] {
    path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
  }

  /// The target of the symbolic link at `path` (`lstat` said it is one), or `nil` when it
  /// cannot be read.
  private static func linkTarget(_ path: String) -> String? {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let count = readlink(path, &buffer, buffer.count - 1)
    guard count > 0 else { return nil }
    return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }
}
