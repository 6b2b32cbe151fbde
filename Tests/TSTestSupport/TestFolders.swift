import Foundation

/// Temporary folders for tests, under the system's temporary directory, each removed (with what
/// it holds) when the test process exits: a run used to leave about 3,000 behind in /tmp.
/// A process that crashes leaves its folders.
public enum TestFolders {
  private static let lock = NSLock()
  nonisolated(unsafe) private static var made: [String] = []
  nonisolated(unsafe) private static var removesAtExit = false

  /// A new empty folder named `PREFIX-UUID`, its path with every symbolic link resolved.
  /// - Throws: when it cannot be created.
  public static func make(_ prefix: String) throws -> String {
    let base = realpath(NSTemporaryDirectory(), nil).map { path in defer { free(path) }; return String(cString: path) } ?? NSTemporaryDirectory()
    let path = (base as NSString).appendingPathComponent("\(prefix)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    lock.withLock {
      made.append(path)
      if !removesAtExit {
        removesAtExit = true
        atexit { TestFolders.removeAll() }
      }
    }
    return path
  }

  /// Removes every folder `make` made.
  static func removeAll() {
    let paths = lock.withLock { () -> [String] in
      defer { made = [] }
      return made
    }
    for path in paths { try? FileManager.default.removeItem(atPath: path) }
  }
}
