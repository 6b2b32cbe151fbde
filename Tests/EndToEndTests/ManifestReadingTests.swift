import Foundation
import Testing
import TSTestSupport

/// Every command reads its manifest through one bounded reader (`ManifestSource`): endless or
/// huge input is refused without being read, and what cannot be a manifest is named for what
/// it is, with the same words from every command.
@Suite struct ManifestReadingTests {
  static let commands = ["validate", "plan", "apply", "fmt"]
  /// Enough for the binary's normal run, far less than reading /dev/zero or a 1 GiB file takes.
  static let memoryCap = "ulimit -v 400000"

  /// How a command reports a manifest it cannot read: `validate` as a diagnostic, the others
  /// as `Error:`; the message is the same.
  static func reported(_ message: String, by command: String, file: String) -> String {
    command == "validate" ? "error: \(message)\n\(file) is not valid: 1 error.\n" : "Error: \(message)\n"
  }

  @Test(arguments: commands)
  func endlessStandardInputIsRefusedAtTheBound(_ command: String) throws {
    let run = try TSApplyBinary.runShell("\(Self.memoryCap); exec timeout 30 \"$TSAPPLY\" \(command) - < /dev/zero",
                                         in: try TSApplyBinary.temporaryDirectory())
    let message = "standard input holds more than 1048576 bytes; a manifest may be at most 1048576 bytes"
    #expect(run.status == 1, "\(run.stderr)")
    #expect(run.stderr == (command == "validate" ? "-:1:1: error: \(message)\n- is not valid: 1 error.\n" : "Error: cannot read -: \(message)\n"))
  }

  @Test(arguments: commands)
  func aHugeFileIsRefusedWithoutReadingIt(_ command: String) throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    let path = directory.appendingPathComponent("huge.yaml").path
    #expect(FileManager.default.createFile(atPath: path, contents: nil))
    let handle = try #require(FileHandle(forWritingAtPath: path))
    try handle.truncate(atOffset: 1 << 30)  // sparse: 1 GiB that takes no disk
    try handle.close()
    let started = Date()
    let run = try TSApplyBinary.runShell("\(Self.memoryCap); exec timeout 30 \"$TSAPPLY\" \(command) huge.yaml", in: directory)
    #expect(Date().timeIntervalSince(started) < 10)
    let message = "the file is 1073741824 bytes; a manifest may be at most 1048576 bytes"
    #expect(run.status == 1, "\(run.stderr)")
    #expect(run.stderr == (command == "validate" ? "huge.yaml:1:1: error: \(message)\nhuge.yaml is not valid: 1 error.\n"
                                                 : "Error: cannot read huge.yaml: \(message)\n"))
  }

  /// A saved plan over the bound is named as a saved plan, by `apply` and `show` alike, not as a
  /// manifest (fresh-eyes fe93).
  @Test(arguments: ["apply", "show"])
  func aHugeSavedPlanIsRefusedAsASavedPlan(_ command: String) throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    let path = directory.appendingPathComponent("big.tfplan").path
    #expect(FileManager.default.createFile(atPath: path, contents: nil))
    let handle = try #require(FileHandle(forWritingAtPath: path))
    try handle.truncate(atOffset: 150 << 20)  // sparse
    try handle.close()
    let run = try TSApplyBinary.runShell("\(Self.memoryCap); exec timeout 30 \"$TSAPPLY\" \(command) big.tfplan", in: directory)
    #expect(run.status == 1, "\(run.stderr)")
    #expect(run.stderr == "Error: cannot read big.tfplan: the file is 157286400 bytes; a saved plan may be at most 1048576 bytes\n", "\(run.stderr)")
  }

  /// A saved plan given where a manifest goes is named as a saved plan, with the commands that
  /// take it, not as five unknown keys (fresh-eyes fe96 #8); the watch is not touched.
  @Test(arguments: ["validate", "plan", "drift", "drift --adopt"])
  func aSavedPlanGivenForAManifestIsNamed(_ command: String) throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    _ = try TSApplyBinary.run(["device", "init"], in: directory)
    try "contacts:\n  - {name: Ann, phone: \"+15550100\"}\n".write(to: directory.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    #expect(try TSApplyBinary.run(["plan", "-out", "p.tfplan", "watch.yaml"], in: directory).status == 0)
    let run = try TSApplyBinary.runShell("exec \"$TSAPPLY\" \(command) p.tfplan", in: directory)
    #expect(run.status == 1, "\(run.stderr)")
    #expect(run.stderr.hasPrefix("p.tfplan:1:1: error: this is a saved plan (from 'tsapply plan -out'), not a manifest: "
      + "apply it with 'tsapply apply p.tfplan' or read it with 'tsapply show p.tfplan'\n"), "\(run.stderr)")
    #expect(!run.stderr.contains("unknown key"), "\(run.stderr)")
    #expect(try TSApplyBinary.run(["device", "show"], in: directory).stdout.contains("Ann") == false)
    // From standard input the advice names a file, not '-' (fresh-eyes fe97 #7: it went in a circle);
    // `drift --adopt -` is refused before reading (it rewrites a file).
    guard !command.contains("--adopt") else { return }
    let piped = try TSApplyBinary.runShell("exec \"$TSAPPLY\" \(command) - < p.tfplan", in: directory)
    #expect(piped.status == 1 && piped.stderr.hasPrefix("-:1:1: error: this is a saved plan (from 'tsapply plan -out'), not a manifest: "
      + "save it to a file, then apply it with 'tsapply apply FILE' or read it with 'tsapply show FILE'\n"), "\(piped.stderr)")
  }

  /// (what the path is, how to make it in the directory, the explanation every command gives).
  static let kinds: [(String, String, String)] = [
    ("missing", "", "no such file or directory"),
    ("a directory", "mkdir w.yaml", "it is a directory, not a manifest file"),
    ("a symlink loop", "ln -s w.yaml w.yaml", "it is a loop of symbolic links (too many levels of symbolic links)"),
    ("a dangling symlink", "ln -s gone.yaml w.yaml", "it is a symbolic link to gone.yaml, which does not exist"),
    ("a FIFO without a writer", "mkfifo w.yaml",
     "it is a named pipe (FIFO) and nothing is writing to it; tsapply does not wait for a writer (start the program that writes to it first, or pipe the manifest into '-')"),
    ("a device file", "ln -s /dev/zero w.yaml", "it is a device file (a character device, such as a terminal or /dev/zero), not a manifest file"),
  ]

  @Test(arguments: kinds, commands)
  func anUnreadablePathIsNamedForWhatItIs(_ kind: (String, String, String), _ command: String) throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    if !kind.1.isEmpty { #expect(try TSApplyBinary.runShell(kind.1, in: directory).status == 0) }
    // `timeout`: a reader that waited for the FIFO's writer would hang here.
    let run = try TSApplyBinary.runShell("exec timeout 10 \"$TSAPPLY\" \(command) w.yaml", in: directory)
    #expect(run.status == 1, "\(kind.0): \(run.stderr)")
    #expect(run.stderr == Self.reported("cannot read w.yaml: \(kind.2)", by: command, file: "w.yaml"), "\(kind.0)")
  }

  @Test(.enabled(if: geteuid() != 0, "root may read any file"), arguments: commands)
  func permissionDeniedSaysSo(_ command: String) throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    let path = directory.appendingPathComponent("w.yaml").path
    try "contacts: []\n".write(toFile: path, atomically: true, encoding: .utf8)
    try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: path)
    let run = try TSApplyBinary.run([command, "w.yaml"], in: directory)
    #expect(run.stderr == Self.reported("cannot read w.yaml: permission denied (this user may not read it)", by: command, file: "w.yaml"))
  }

  /// A pipe that has a writer is read like standard input: process substitution works.
  @Test(arguments: [("validate", " is valid.\n"), ("fmt --check", "")])
  func aPipeWithAWriterIsRead(_ command: String, _ output: String) throws {
    let run = try TSApplyBinary.runShell("exec timeout 10 bash -c '\"$TSAPPLY\" \(command) <(printf \"contacts: []\\\\n\")'",
                                         in: try TSApplyBinary.temporaryDirectory())
    #expect(run.status == 0, "\(run.stderr)")
    #expect(run.stdout.hasSuffix(output), "\(run.stdout)")
  }

  /// The default manifest missing: plan and apply say which path to give instead.
  @Test(arguments: ["plan", "apply"])
  func aMissingDefaultManifestSaysWhatToGive(_ command: String) throws {
    let run = try TSApplyBinary.run([command], in: try TSApplyBinary.temporaryDirectory())
    #expect(run.status == 1)
    #expect(run.stderr == "Error: cannot read watch.yaml: no such file or directory (give the manifest's path, e.g. 'tsapply \(command) examples/watch.yaml')\n")
  }
}

/// With `--json`, a manifest that cannot be read gives the same JSON diagnostics document on
/// standard output as an invalid one, from every command that reads a manifest, and every entry
/// has the same keys: `file` always, `line` and `column` (`null` without a position).
@Suite struct ManifestJSONDiagnosticsTests {
  static let commands = [["validate", "--json"], ["plan", "--json"], ["drift", "--json"], ["plan", "--json", "--redact"]]

  struct Case: Sendable, CustomTestStringConvertible {
    let id: String
    let file: String
    let content: String?
    let line: Int?
    let message: String
    var testDescription: String { id }
  }

  static let cases: [Case] = [
    Case(id: "missing", file: "missing.yaml", content: nil, line: nil,
         message: "cannot read missing.yaml: no such file or directory"),
    Case(id: "invalid", file: "bad.yaml", content: "contacts: 5\n", line: 1,
         message: "expected a list of contacts, e.g. - {name: Alex, phone: \"+15550100\"}, found text"),
  ]

  @Test(arguments: commands, cases)
  func aManifestThatCannotBeUsedIsJSON(_ command: [String], _ c: Case) throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    if let content = c.content {
      try content.write(to: directory.appendingPathComponent(c.file), atomically: true, encoding: .utf8)
    }
    let run = try TSApplyBinary.run(command + [c.file], in: directory)
    #expect(run.status == 1, "\(run.stderr)")
    let object = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stdout)")
    #expect(object["valid"] as? Bool == false)
    #expect(object["format_version"] as? String == "1")
    let errors = try #require(object["errors"] as? [[String: Any]])
    let entry = try #require(errors.first)
    #expect(Set(entry.keys) == ["severity", "file", "line", "column", "field", "message"])
    #expect(entry["file"] as? String == c.file)
    if !command.contains("--redact") { #expect(entry["message"] as? String == c.message) }
    if let line = c.line {
      #expect(entry["line"] as? Int == line)
    } else {
      #expect(entry["line"] is NSNull)
      #expect(entry["column"] is NSNull)
    }
    #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent(".tsapply").path), "no watch was created")
  }
}

/// `plan -out FILE` refuses a target it would not write before it reads the watch or prints a
/// plan: nothing on standard output, the file untouched, exit 1.
@Suite struct PlanOutTargetTests {
  static let manifest = "contacts:\n  - {name: Ann, phone: \"+15550100\"}\n"

  @Test(arguments: [
    ("watch.yaml", "it is the manifest the plan was made from"),
    ("other.yaml", "the file exists and is not a tsapply saved plan"),
    ("folder", "it is a directory"),
    ("nowhere/changes.tfplan", "does not exist"),
  ])
  func aWrongTargetIsRefusedBeforePlanning(_ out: String, _ reason: String) throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    _ = try TSApplyBinary.run(["device", "init"], in: directory)
    try Self.manifest.write(to: directory.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    try "version: 1\n".write(to: directory.appendingPathComponent("other.yaml"), atomically: true, encoding: .utf8)
    try FileManager.default.createDirectory(at: directory.appendingPathComponent("folder"), withIntermediateDirectories: false)
    let run = try TSApplyBinary.run(["plan", "-out", out, "watch.yaml"], in: directory)
    #expect(run.status == 1)
    #expect(run.stdout == "", "nothing printed before the refusal")
    #expect(run.stderr.contains(reason), "\(run.stderr)")
    #expect(try String(contentsOf: directory.appendingPathComponent("watch.yaml"), encoding: .utf8) == Self.manifest)
    #expect(try String(contentsOf: directory.appendingPathComponent("other.yaml"), encoding: .utf8) == "version: 1\n")
    #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("nowhere").path))
  }
}
