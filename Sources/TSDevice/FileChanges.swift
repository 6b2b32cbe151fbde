import Foundation
#if os(Linux)
import Glibc
#endif

/// Tells when files change, without polling: on Linux one inotify descriptor and one thread for
/// the whole process, whatever the number of files (a `monitor --fleet` or an agent over 1,000
/// simulated watches has one of each, not 1,000 tasks reading state files ten times a second).
///
/// The directory of each file is watched, not the file: tsapply replaces a state file by renaming
/// a new one over it (`SecureFile.write`), which a watch on the old inode would not see. A file
/// is reported changed when a file of its name is renamed into the directory, created, or closed
/// after writing; every file when the kernel's queue overflowed. Reports may come for changes
/// that change nothing (the caller reads and compares), never late by more than the kernel takes.
///
/// Where there is no inotify (not Linux, or the kernel refuses a descriptor or a watch),
/// `watch(_:_:)` returns `nil` and the caller polls.
///
/// Used by the simulator (its state files) and by the monitor (a watch's last-applied record,
/// so an apply made by another process is seen at once: docs/monitor.md "Drift and healing").
public final class FileChanges: @unchecked Sendable {
  /// The process's watcher; `nil` where files cannot be watched.
  public static let shared: FileChanges? = FileChanges()

  /// One registration; `cancel()` ends it.
  public final class Registration: @unchecked Sendable {
    fileprivate let id: Int
    fileprivate weak var owner: FileChanges?
    fileprivate init(id: Int, owner: FileChanges) {
      self.id = id
      self.owner = owner
    }
    /// Stops the reports (the directory's watch ends with its last registration).
    public func cancel() { owner?.cancel(id) }
    deinit { cancel() }
  }

  #if os(Linux)
  private let descriptor: Int32
  private let lock = NSLock()
  private var nextID = 0
  /// Per watched directory (by watch descriptor): its path and, by file name, the registrations.
  private var directories: [Int32: (path: String, files: [String: [Int: @Sendable () -> Void]])] = [:]
  private var descriptors: [String: Int32] = [:]
  private var registrations: [Int: (watch: Int32, name: String)] = [:]

  private init?() {
    descriptor = inotify_init1(Int32(IN_CLOEXEC))
    guard descriptor >= 0 else { return nil }
    let thread = Thread { [unowned self] in self.run() }
    thread.name = "tsapply file changes"
    thread.start()
  }

  /// Calls `changed` (on the watcher's thread) whenever the file at `path` (absolute, canonical)
  /// may have changed, until the registration is cancelled or released.
  /// - Returns: `nil` when the kernel refuses to watch the file's directory.
  public func watch(_ path: String, _ changed: @escaping @Sendable () -> Void) -> Registration? {
    let directory = (path as NSString).deletingLastPathComponent
    let name = (path as NSString).lastPathComponent
    lock.lock()
    defer { lock.unlock() }
    let watch: Int32
    if let existing = descriptors[directory] {
      watch = existing
    } else {
      watch = inotify_add_watch(descriptor, directory, UInt32(IN_MOVED_TO | IN_CREATE | IN_CLOSE_WRITE))
      guard watch >= 0 else { return nil }
      descriptors[directory] = watch
      // The kernel gives one descriptor per directory: a second path of it adds to the first.
      if directories[watch] == nil { directories[watch] = (directory, [:]) }
    }
    nextID += 1
    directories[watch]?.files[name, default: [:]][nextID] = changed
    registrations[nextID] = (watch, name)
    return Registration(id: nextID, owner: self)
  }

  private func cancel(_ id: Int) {
    lock.lock()
    defer { lock.unlock() }
    guard let (watch, name) = registrations.removeValue(forKey: id) else { return }
    directories[watch]?.files[name]?[id] = nil
    if directories[watch]?.files[name]?.isEmpty == true { directories[watch]?.files[name] = nil }
    if let entry = directories[watch], entry.files.isEmpty {
      directories[watch] = nil
      descriptors[entry.path] = nil
      inotify_rm_watch(descriptor, watch)
    }
  }

  /// Reads the descriptor for ever, calling the registrations of each file named.
  private func run() {
    let size = 64 * 1024
    let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
    while true {
      let count = read(descriptor, buffer, size)
      if count < 0 {
        if errno == EINTR { continue }
        return
      }
      var offset = 0
      var called: [Int: @Sendable () -> Void] = [:]
      lock.lock()
      while offset + 16 <= count {
        let watch = buffer.load(fromByteOffset: offset, as: Int32.self)
        let mask = buffer.load(fromByteOffset: offset + 4, as: UInt32.self)
        let length = Int(buffer.load(fromByteOffset: offset + 12, as: UInt32.self))
        let name = length == 0 ? "" : String(cString: buffer.advanced(by: offset + 16).assumingMemoryBound(to: CChar.self))
        offset += 16 + length
        if mask & UInt32(IN_Q_OVERFLOW) != 0 {
          // Events were lost: every file may have changed.
          for entry in directories.values { for handlers in entry.files.values { called.merge(handlers) { a, _ in a } } }
        } else if let handlers = directories[watch]?.files[name] {
          called.merge(handlers) { a, _ in a }
        }
      }
      lock.unlock()
      for handler in called.values { handler() }
    }
  }
  #else
  private init?() { return nil }
  public func watch(_ path: String, _ changed: @escaping @Sendable () -> Void) -> Registration? { nil }
  private func cancel(_ id: Int) {}
  #endif
}
