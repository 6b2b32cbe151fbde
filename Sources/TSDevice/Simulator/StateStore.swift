import Foundation
import TSModel

/// Where a simulated watch keeps its state: in memory or in a file. Every call is one
/// transaction: `update` reads, lets `body` change a copy, and keeps the copy only when `body`
/// returns; a thrown error leaves the state as it was.
protocol StateStore: Sendable {
  /// The current state.
  func read() throws(DeviceError) -> SimulatedWatch
  /// Runs `body` on the state and keeps its changes when it returns normally.
  func update<T>(_ body: (inout SimulatedWatch) throws(DeviceError) -> T) throws(DeviceError) -> T
  /// Canonical path of the state file, or `nil` in memory (listeners of one file share events).
  var path: String? { get }
}

/// State held by one in-memory watch, for tests, benchmarks and property tests.
final class MemoryStore: StateStore, @unchecked Sendable {
  private let lock = NSLock()
  private var watch: SimulatedWatch

  init(_ watch: SimulatedWatch) { self.watch = watch }

  var path: String? { nil }

  func read() throws(DeviceError) -> SimulatedWatch {
    lock.lock()
    defer { lock.unlock() }
    return watch
  }

  func update<T>(_ body: (inout SimulatedWatch) throws(DeviceError) -> T) throws(DeviceError) -> T {
    lock.lock()
    defer { lock.unlock() }
    var copy = watch
    let result = try body(&copy)
    watch = copy
    return result
  }
}

/// State in a JSON file, guarded by `flock` on `<file>.lock` and replaced atomically
/// (temporary file created 0600 in the same directory, fsync, rename, fsync of the directory),
/// so neither a crash nor two concurrent processes leave a half-written or lost state.
///
/// The store keeps the last state it read or wrote with the file's identity (device, inode,
/// size, modification and change times): a file that is still that file is not decoded again,
/// so the calls of one plan (fetch reminders, contacts, emergency contacts) decode it once.
/// Every write replaces the file (a new inode), so a change by any process is always seen.
/// A `read` whose file is still the one kept takes no lock: the path names either the file
/// kept or its atomic replacement, never a half-written one, so the state kept is what the
/// file holds at the moment of that `stat` (a plan's reads cost one `stat` each, not a lock
/// file's open, two `flock`s and a close).
final class FileStore: StateStore, @unchecked Sendable {
  let path: String?
  let file: String
  /// How the user names this watch, for the advice in error messages.
  let name: WatchName
  private let cacheLock = NSLock()
  private var cached: (key: FileIdentity, watch: SimulatedWatch)?
  /// Whether the file has been read (or written) once: a file missing after that is a watch
  /// gone out of reach, not one never made (`load`).
  private var seen = false

  /// A store over the existing state file at `file` (absolute), which the user calls `name`.
  /// Opening the watch removes the temporary files writers killed mid-write left beside it
  /// (`SecureFile.removeOrphansOnce(in:)`: once per folder and process): they hold the watch's
  /// contacts, and a command that only reads the watch would otherwise leave them there.
  init(file: String, name: WatchName = .defaultWatch) {
    self.file = file
    self.path = file
    self.name = name
    SecureFile.removeOrphansOnce(in: (file as NSString).deletingLastPathComponent)
  }

  func read() throws(DeviceError) -> SimulatedWatch {
    if let kept = kept(FileIdentity(file)) { return kept }
    return try withLock(LOCK_SH) { () throws(DeviceError) in try load() }
  }

  func update<T>(_ body: (inout SimulatedWatch) throws(DeviceError) -> T) throws(DeviceError) -> T {
    try withLock(LOCK_EX) { () throws(DeviceError) -> T in
      let original = try load()
      var copy = original
      let result = try body(&copy)
      if copy != original {
        try StateFile.write(copy, to: file)
        remember(copy)
      }
      return result
    }
  }

  /// Writes `watch` as a new state file. An existing file is replaced only with `force`, and
  /// only when it carries the state file's format marker (`StateFile.carriesFormatMarker`), so
  /// a mistyped path never overwrites a manifest or any other file. Checked before taking the
  /// lock (no lock file is left beside a file that is refused) and again under it.
  /// - Throws: 4001 for a directory; 3001 (invalidParam) for an existing watch without `force`
  ///   or a file that is not a state file; 4002 when the file cannot be written.
  func create(_ watch: SimulatedWatch, force: Bool) throws(DeviceError) {
    try checkReplaceable(force: force)
    try withLock(LOCK_EX) { () throws(DeviceError) in
      try checkReplaceable(force: force)
      try StateFile.write(watch, to: file)
    }
  }

  private func checkReplaceable(force: Bool) throws(DeviceError) {
    try StateFile.refuseDirectory(file)
    guard FileManager.default.fileExists(atPath: file) else { return }
    guard StateFile.carriesFormatMarker(file) else {
      throw .simulator(.invalidParam, "refusing to replace \(file): it is not a tsapply simulated-watch state file (no \"format\": \"\(SimulatedWatch.formatName)\"); choose another path with --device sim:PATH, or remove the file yourself if it may go")
    }
    if !force {
      throw .simulator(.invalidParam, "a simulated watch already exists at \(file); use --force to reset it")
    }
  }

  /// Creates the file with `watch` unless it exists; true when it was created.
  func createIfMissing(_ watch: SimulatedWatch) throws(DeviceError) -> Bool {
    try withLock(LOCK_EX) { () throws(DeviceError) -> Bool in
      if FileManager.default.fileExists(atPath: file) { return false }
      try StateFile.write(watch, to: file)
      return true
    }
  }

  /// The state, decoded from the file unless it is the file last read or written (called under
  /// the lock, so no writer changes it meanwhile).
  ///
  /// A file that was there when the watch was opened and is missing now (moved away, its disk
  /// unmounted) is the simulator's watch out of reach: 2003 "not connected" in the simulator
  /// domain, which is transient (`DeviceError.isTransient`: it may come back, as a watch out of
  /// Bluetooth range does), with no advice to create a blank watch where the wearer's was.
  private func load() throws(DeviceError) -> SimulatedWatch {
    let key = FileIdentity(file)
    if let hit = kept(key) { return hit }
    let watch: SimulatedWatch
    do {
      watch = try StateFile.read(file, name: name)
    } catch {
      cacheLock.lock()
      let wasThere = seen
      cacheLock.unlock()
      guard wasThere, !FileManager.default.fileExists(atPath: file) else { throw error }
      throw .simulator(.unConnected, "the simulated watch at \(file) is out of reach: its state file was there when tsapply opened "
        + "the watch and is gone now (moved or removed); nothing was read or written. Put the file back: the next try reaches the watch")
    }
    cacheLock.lock()
    seen = true
    if let key { cached = (key, watch) }
    cacheLock.unlock()
    return watch
  }

  /// The state kept, when `key` (the file's identity now) is the identity it was kept with.
  private func kept(_ key: FileIdentity?) -> SimulatedWatch? {
    guard let key else { return nil }
    cacheLock.lock()
    defer { cacheLock.unlock() }
    return cached?.key == key ? cached?.watch : nil
  }

  /// Keeps `watch` as the state of the file just written.
  private func remember(_ watch: SimulatedWatch) {
    let key = FileIdentity(file)
    cacheLock.lock()
    seen = true
    cached = key.map { ($0, watch) }
    cacheLock.unlock()
  }

  private func withLock<T>(_ mode: Int32, _ body: () throws(DeviceError) -> T) throws(DeviceError) -> T {
    let lockPath = file + ".lock"
    let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
    guard fd >= 0 else {
      throw .simulator(.isBusy, "cannot open the lock file \(lockPath): \(StateFile.errnoText())")
    }
    defer { close(fd) }
    while flock(fd, mode) != 0 {
      guard errno == EINTR else { throw .simulator(.isBusy, "cannot lock \(lockPath): \(StateFile.errnoText())") }
    }
    defer { flock(fd, LOCK_UN) }
    return try body()
  }
}
