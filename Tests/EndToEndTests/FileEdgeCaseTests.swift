import Foundation
import Testing
import TSTestSupport

/// `fmt` and `export -o` on symbolic links, `-`, missing directories, directories, absolute
/// paths and bad `SOURCE_DATE_EPOCH` values, run as the built binary.
@Suite struct FileEdgeCaseTests {
  static let messy = "version: 1\nreminders:\n  drinking:\n    period: {start: \"09:00\", end: \"18:00\", every: 60m}\n"

  @Test func fmtWritesThroughASymlinkToItsTarget() throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    let real = directory.appendingPathComponent("real.yaml").path
    try Self.messy.write(toFile: real, atomically: true, encoding: .utf8)
    try FileManager.default.createSymbolicLink(atPath: directory.appendingPathComponent("watch.yaml").path, withDestinationPath: "real.yaml")
    let run = try TSApplyBinary.run(["fmt"], in: directory)
    #expect(run.status == 0, "\(run.stderr)")
    let link = try FileManager.default.destinationOfSymbolicLink(atPath: directory.appendingPathComponent("watch.yaml").path)
    #expect(link == "real.yaml")
    #expect(try String(contentsOfFile: real, encoding: .utf8).contains("every: 1h"))
  }

  /// A manifest saved as UTF-16 (Notepad's "Unicode") is named as such, with no line of
  /// mojibake echoed under the error, and exits 1.
  @Test func aUTF16ManifestIsNamedWithoutEchoingItsBytes() throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    var bytes: [UInt8] = [0xFF, 0xFE]
    for unit in "contacts:\n  - {name: Anna, phone: \"+1 555 0100\"}\n".utf16 { bytes += [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
    try Data(bytes).write(to: directory.appendingPathComponent("watch.yaml"))
    let run = try TSApplyBinary.run(["validate", "watch.yaml"], in: directory)
    #expect(run.status == 1)
    #expect(run.stderr == "watch.yaml:1:1: error: the file is UTF-16 text (it begins with that encoding's byte-order mark: Windows Notepad saves \"Unicode\" so); "
              + "save the manifest as UTF-8 text (in Notepad: Save As, Encoding UTF-8)\nwatch.yaml is not valid: 1 error.\n", "\(run.stderr)")
  }

  @Test func exportToDashWritesStandardOutput() throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    let run = try TSApplyBinary.run(["export", "-o", "-"], in: directory)
    #expect(run.status == 0, "\(run.stderr)")
    #expect(run.stdout.contains("version: 1"))
    #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("-").path))
  }

  @Test func exportRefusesADanglingSymlinkWithoutForce() throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    try FileManager.default.createSymbolicLink(atPath: directory.appendingPathComponent("link.yaml").path, withDestinationPath: "nowhere.yaml")
    let run = try TSApplyBinary.run(["export", "-o", "link.yaml"], in: directory)
    #expect(run.status == 1)
    #expect(run.stderr.contains("link.yaml already exists; use --force to replace it"))
    #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("nowhere.yaml").path))
  }

  @Test func exportRefusesAMissingDirectory() throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    let run = try TSApplyBinary.run(["export", "-o", "nodir/x.yaml"], in: directory)
    #expect(run.status == 1)
    #expect(run.stderr.contains("cannot write nodir/x.yaml: its directory nodir does not exist"))
    #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("nodir").path))
  }

  @Test(arguments: ["abc", "1.5", "-1", "99999999999999", " 5"])
  func exportRefusesABadSourceDateEpoch(_ value: String) throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    let run = try TSApplyBinary.run(["export"], in: directory, environment: ["SOURCE_DATE_EPOCH": value])
    #expect(run.status == 1)
    #expect(run.stderr.contains("SOURCE_DATE_EPOCH must be whole seconds since 1970"))
    #expect(run.stdout.isEmpty)
  }

  @Test func fmtOnADirectorySaysSo() throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    try FileManager.default.createDirectory(at: directory.appendingPathComponent("d.yaml"), withIntermediateDirectories: false)
    let run = try TSApplyBinary.run(["fmt", "d.yaml"], in: directory)
    #expect(run.status == 1)
    #expect(run.stderr == "Error: cannot read d.yaml: it is a directory, not a manifest file\n")
  }

  @Test func fmtDiffOfAnAbsolutePathHasNoPrefix() throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    let path = directory.appendingPathComponent("x.yaml").path
    try Self.messy.write(toFile: path, atomically: true, encoding: .utf8)
    let run = try TSApplyBinary.run(["fmt", "--check", "--diff", path], in: directory)
    #expect(run.status == 1)
    #expect(run.stdout.hasPrefix("--- \(path)\n+++ \(path)\n"), "\(run.stdout)")
  }

  @Test func fileNamesAfterDoubleDashAreNotOptions() throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    try Self.messy.write(to: directory.appendingPathComponent("-n.yaml"), atomically: true, encoding: .utf8)
    #expect(try TSApplyBinary.run(["validate", "--", "-n.yaml"], in: directory).status == 0)
    let check = try TSApplyBinary.run(["fmt", "--check", "--", "-n.yaml"], in: directory)
    #expect(check.status == 1)
    #expect(check.stdout == "-n.yaml\n")
  }
}
