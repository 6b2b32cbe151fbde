import Foundation
import Testing
import TSApply
import TSTestSupport

/// Every record tsapply reads is bounded before it is read: a huge file is refused from its
/// size, naming what it should have been, without reading it.
@Suite struct BoundedRecordTests {
  /// A sparse file of `size` bytes (costs no disk).
  static func hugeFile(_ size: off_t) throws -> String {
    let path = try TSApplyBinary.temporaryDirectory().path + "/huge.json"
    #expect(FileManager.default.createFile(atPath: path, contents: nil))
    #expect(truncate(path, size) == 0)
    return path
  }

  @Test func aHugeBackupIsRefusedFromItsSize() throws {
    let path = try Self.hugeFile(1 << 30)
    #expect {
      try Backup.read(path: path)
    } throws: { error in
      "\(error)" == "cannot restore from \(path): the file is 1073741824 bytes; a backup may be at most 4194304 bytes"
    }
  }

  @Test func aHugeLastAppliedRecordIsRefusedFromItsSize() throws {
    let path = try Self.hugeFile(1 << 30)
    #expect {
      try LastApplied.load(at: path, device: "sim:/w.json")
    } throws: { error in
      (error as? LastAppliedError)?.reason == "the file is 1073741824 bytes; a last-applied record may be at most 4194304 bytes"
    }
  }

  @Test func aDirectoryIsNotABackup() throws {
    let path = try TSApplyBinary.temporaryDirectory().path
    #expect {
      try Backup.read(path: path)
    } throws: { error in
      "\(error)" == "cannot restore from \(path): it is a directory, not a backup file"
    }
  }
}
