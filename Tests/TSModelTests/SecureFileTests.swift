import Foundation
import Testing
@testable import TSModel
import TSTestSupport

/// `SecureFile.write` leaves no temporary file behind: one a killed writer left in the folder
/// (of any file) is removed by the next write into it, while a live writer's is left alone.
@Suite struct SecureFileTests {
  @Test func aKilledWritersTemporaryFileIsRemovedByTheNextWriteIntoItsFolder() throws {
    let directory = try TSApplyBinary.temporaryDirectory().path
    let path = directory + "/last-applied.json"
    let dead = try DeadProcess.pid()
    // (name beside the file, whether the next write removes it)
    let files: [(String, Bool)] = [
      (".last-applied.json.\(dead).12345.tmp", true),
      (".last-applied.json.tmp-\(dead)-678", true),
      (".last-applied.json.\(getpid()).999.tmp", false),  // this process: a write under way
      (".last-applied.json.\(getppid()).42.tmp", false),  // a live process
      (".other.json.\(dead).1.tmp", true),               // another file's: its name may never be written again
      (".\(dead).1.tmp", false),                         // no file name
      ("last-applied.json.\(dead).1.tmp", false),        // not hidden: not a name this helper gives
      (".last-applied.json.notes", false),
    ]
    for (name, _) in files { try Data("{\"contacts\":[]}".utf8).write(to: URL(fileURLWithPath: directory + "/" + name)) }
    try SecureFile.write(Array("{}\n".utf8), to: path)
    for (name, removed) in files {
      #expect(FileManager.default.fileExists(atPath: directory + "/" + name) != removed, "\(name)")
    }
    #expect(try String(contentsOfFile: path, encoding: .utf8) == "{}\n")
  }
}
