import Foundation
import Testing
import TSTestSupport

/// No temporary file outlives its writer. A tester killed `tsapply device simulate contact-add`
/// and `tsapply apply` (`kill -9`) while they wrote: hidden temporary files holding the whole
/// contact list stayed beside the watch's state file (`.t.json.PID.RAND.tmp`) and in its backups
/// folder (`.2026…Z.json.PID.RAND.tmp`, a name no later backup has), and later commands left
/// them there. The next command that opens the watch or writes into the folder removes those of
/// a process that no longer runs; a running writer's file is left alone.
@Suite struct OrphanTemporaryFileTests {
  /// Files planted in `directory`: (name, whether the next command removes it). A killed
  /// writer's temporary file of any name goes (its process no longer runs); a running process's,
  /// and files of other names, stay.
  static func plant(in directory: String, file: String) throws -> [(String, Bool)] {
    let dead = try DeadProcess.pid()
    let files: [(String, Bool)] = [
      (".\(file).\(dead).12345.tmp", true),
      (".20261205T091200.123Z.json.\(dead).7.tmp", true),
      (".\(file).tmp-\(dead)-678", true),
      (".\(file).\(getpid()).999.tmp", false),  // this test process: a writer still running
      (".\(file).notes", false),
      ("\(dead).1.tmp", false),
    ]
    for (name, _) in files {
      #expect(FileManager.default.createFile(atPath: directory + "/" + name, contents: Data("{\"contacts\":[{\"name\":\"Ann\"}]}".utf8),
                                             attributes: [.posixPermissions: 0o600]))
    }
    return files
  }

  static func expectSwept(_ files: [(String, Bool)], in directory: String, after command: String) {
    for (name, removed) in files {
      #expect(FileManager.default.fileExists(atPath: directory + "/" + name) != removed, "\(name) after \(command)")
    }
  }

  /// Commands that open the watch: one that only reads it, one that finds nothing to change, one
  /// that writes it.
  @Test(arguments: [["plan", "--device", "sim:t.json", "m.yaml"],
                    ["apply", "--auto-approve", "--allow-destroy", "--device", "sim:t.json", "m.yaml"],
                    ["device", "simulate", "contact-add", "Bo", "+15550111", "--device", "sim:t.json"]])
  func aKilledWritersFileBesideTheWatchIsRemovedByTheNextCommand(_ command: [String]) throws {
    let dir = try TSApplyBinary.temporaryDirectory()
    try "contacts:\n  - {name: Ann, phone: \"+15550100\"}\n".write(to: dir.appendingPathComponent("m.yaml"), atomically: true, encoding: .utf8)
    #expect(try TSApplyBinary.run(["device", "init", "--device", "sim:t.json"], in: dir).status == 0)
    #expect(try TSApplyBinary.run(["apply", "--auto-approve", "--allow-destroy", "--device", "sim:t.json", "m.yaml"], in: dir).status == 0)
    let files = try Self.plant(in: dir.path, file: "t.json")
    let result = try TSApplyBinary.run(command, in: dir)
    #expect(result.status == 0, "\(result.stderr)")
    Self.expectSwept(files, in: dir.path, after: command.joined(separator: " "))
  }

  /// A backup's name is never written again, so its killed writer's temporary file is removed
  /// by the next backup into the folder.
  @Test func aKilledWritersFileInTheBackupsFolderIsRemovedByTheNextBackup() throws {
    let dir = try TSApplyBinary.temporaryDirectory()
    let state = ["TSAPPLY_STATE_DIR": dir.path + "/state"]
    try "contacts:\n  - {name: Ann, phone: \"+15550100\"}\n".write(to: dir.appendingPathComponent("m.yaml"), atomically: true, encoding: .utf8)
    let first = try TSApplyBinary.run(["apply", "--auto-approve", "--allow-destroy", "m.yaml"], in: dir, environment: state)
    let backup = try #require(TSApplyBinary.backupPath(in: first.stdout), "\(first.stdout)\(first.stderr)")
    let folder = ((backup.hasPrefix("/") ? backup : dir.path + "/" + backup) as NSString).deletingLastPathComponent
    let files = try Self.plant(in: folder, file: (backup as NSString).lastPathComponent)
    try "contacts:\n  - {name: Ann, phone: \"+15550100\"}\n  - {name: Bo, phone: \"+15550111\"}\n"
      .write(to: dir.appendingPathComponent("m.yaml"), atomically: true, encoding: .utf8)
    let second = try TSApplyBinary.run(["apply", "--auto-approve", "--allow-destroy", "m.yaml"], in: dir, environment: state)
    #expect(second.status == 0, "\(second.stderr)")
    Self.expectSwept(files, in: folder, after: "apply")
  }
}
