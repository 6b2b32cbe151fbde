import Foundation

/// What tells one version of a regular file from another: device, inode, size, and the
/// modification and status-change times to the nanosecond. A file replaced (a new inode, as
/// `SecureFile.write` and most editors do) or written in place (new times) has another identity,
/// so a reader that keeps what it decoded with the identity it read need not decode it again
/// (the simulator's `FileStore`, a fleet monitor's manifests).
public struct FileIdentity: Equatable, Sendable {
  let device: UInt64, inode: UInt64, size: Int64
  let modified: (Int, Int), changed: (Int, Int)

  /// The identity of the regular file at `path`; `nil` for anything else or an error.
  public init?(_ path: String) {
    var info = stat()
    guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
    device = UInt64(info.st_dev)
    inode = UInt64(info.st_ino)
    size = Int64(info.st_size)
    #if os(Linux)
    modified = (info.st_mtim.tv_sec, info.st_mtim.tv_nsec)
    changed = (info.st_ctim.tv_sec, info.st_ctim.tv_nsec)
    #else
    modified = (info.st_mtimespec.tv_sec, info.st_mtimespec.tv_nsec)
    changed = (info.st_ctimespec.tv_sec, info.st_ctimespec.tv_nsec)
    #endif
  }

  public static func == (a: Self, b: Self) -> Bool {
    a.device == b.device && a.inode == b.inode && a.size == b.size && a.modified == b.modified && a.changed == b.changed
  }
}
