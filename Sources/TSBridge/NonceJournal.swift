import Foundation

/// The request nonces a bridge accepted, on disk, so that a restart does not forget them: a
/// request captured off the network and sent again after the bridge restarted (an operator, a
/// crash, iOS suspending the app) is still refused as a replay while it is inside the time
/// window (docs/bridge-protocol.md "Freshness").
///
/// Each accepted nonce is appended (12 bytes) and flushed to the disk (`fdatasync`) before the
/// request is carried out. Two files take turns, `PATH.0` and `PATH.1`: once the current one
/// holds `rotation` nonces and every nonce of the other is outside the window, the other is
/// emptied and becomes the current one, so the files hold only about two windows' worth of
/// requests. Both are created 0600. Not thread-safe: `ReplayGuard` calls it under its lock.
public final class NonceJournal {
  /// Bytes of one record: the request's 12-byte nonce (its first 6 bytes are the timestamp).
  static let recordSize = 12
  /// Most bytes read from each file when the bridge starts (the newest records, at the end).
  static let maxReadBytes = 4 << 20

  /// The base path; the files are `path.0` and `path.1`.
  public let path: String
  let rotation: Int
  private var descriptors: [Int32]
  private var counts: [Int]
  private var newest: [UInt64]
  private var current: Int

  /// Opens (creating, 0600, the directory 0700) the journal at `path` and reads the nonces kept.
  /// - Parameter rotation: nonces in the current file before the files may take turns.
  /// - Throws: `NonceJournalError` when a file cannot be created or read.
  public init(path: String, rotation: Int = 4096) throws(NonceJournalError) {
    self.path = path
    self.rotation = max(1, rotation)
    let directory = (path as NSString).deletingLastPathComponent
    if !directory.isEmpty && !FileManager.default.fileExists(atPath: directory) {
      do {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
      } catch {
        throw NonceJournalError(path: directory, reason: "cannot create the directory")
      }
    }
    var descriptors: [Int32] = []
    for index in 0..<2 {
      let file = "\(path).\(index)"
      let fd = open(file, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
      guard fd >= 0 else {
        let reason = String(cString: strerror(errno))
        descriptors.forEach { close($0) }
        throw NonceJournalError(path: file, reason: reason)
      }
      descriptors.append(fd)
    }
    self.descriptors = descriptors
    counts = [0, 0]
    newest = [0, 0]
    current = 0
  }

  deinit { descriptors.forEach { close($0) } }

  /// Every nonce the files hold (a torn last record, from a crash mid-write, is cut off), and
  /// the file to append to next: the one with the newest nonce.
  /// - Throws: `NonceJournalError` when a file cannot be read.
  public func load() throws(NonceJournalError) -> [[UInt8]] {
    var nonces: [[UInt8]] = []
    for index in 0..<2 {
      let fd = descriptors[index]
      var info = stat()
      guard fstat(fd, &info) == 0 else { throw error(index) }
      let size = Int(info.st_size)
      let whole = size - size % Self.recordSize
      if whole != size, ftruncate(fd, off_t(whole)) != 0 { throw error(index) }
      let start = max(0, whole - Self.maxReadBytes / Self.recordSize * Self.recordSize)
      var bytes = [UInt8](repeating: 0, count: whole - start)
      var done = 0
      while done < bytes.count {
        let read = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, $0.count - done, off_t(start + done)) }
        if read < 0 && errno == EINTR { continue }
        guard read > 0 else { throw error(index) }
        done += read
      }
      for offset in stride(from: 0, to: bytes.count, by: Self.recordSize) {
        let nonce = Array(bytes[offset..<offset + Self.recordSize])
        nonces.append(nonce)
        newest[index] = max(newest[index], Self.stamp(of: nonce))
      }
      counts[index] = whole / Self.recordSize
    }
    current = newest[1] > newest[0] ? 1 : 0
    return nonces
  }

  /// Appends `nonce` and flushes it to the disk; first lets the files take turns when the
  /// current one is full and every nonce in the other is older than `now` minus `window` (ms).
  /// - Throws: `NonceJournalError` when it cannot be written: the request must be refused.
  public func record(_ nonce: [UInt8], now: UInt64, window: UInt64) throws(NonceJournalError) {
    let other = 1 - current
    if counts[current] >= rotation, newest[other] + window < now {
      guard ftruncate(descriptors[other], 0) == 0 else { throw error(other) }
      counts[other] = 0
      newest[other] = 0
      current = other
    }
    let fd = descriptors[current]
    let written = nonce.withUnsafeBytes { write(fd, $0.baseAddress!, $0.count) }
    guard written == nonce.count else {
      let failure = error(current)
      _ = ftruncate(fd, off_t(counts[current] * Self.recordSize))  // never leave a torn record to append after
      throw failure
    }
    #if canImport(Glibc)
    guard fdatasync(fd) == 0 else { throw error(current) }
    #else
    guard fsync(fd) == 0 else { throw error(current) }
    #endif
    counts[current] += 1
    newest[current] = max(newest[current], Self.stamp(of: nonce))
  }

  /// The timestamp (ms since 1970) in a nonce's first 6 bytes.
  static func stamp(of nonce: [UInt8]) -> UInt64 { SealedMessage.uint48(nonce[0..<6]) }

  private func error(_ index: Int) -> NonceJournalError {
    NonceJournalError(path: "\(path).\(index)", reason: String(cString: strerror(errno)))
  }
}

/// A journal file that could not be created, read or written.
public struct NonceJournalError: Error, Hashable, Sendable, CustomStringConvertible {
  /// The file.
  public var path: String
  /// Why, in the system's words.
  public var reason: String
  public var description: String { "cannot keep the bridge's nonce journal \(path): \(reason)" }
}
