import Foundation
import Testing
import TSTestSupport

/// `tsapply export` and `tsapply fmt` run as the built binary.
@Suite struct ExportFmtTests {
  static let examples = TSApplyBinary.packageRoot.appendingPathComponent("examples")
  /// 2027-01-15, for a stable export header.
  static let fixedDate = ["SOURCE_DATE_EPOCH": "1800000000"]

  func mode(_ path: String) throws -> Int {
    try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
  }

  /// A temporary directory holding a default watch with examples/watch.yaml applied.
  func appliedWatch() throws -> URL {
    let directory = try TSApplyBinary.temporaryDirectory()
    let apply = try TSApplyBinary.run(["apply", "--auto-approve", Self.examples.appendingPathComponent("watch.yaml").path], in: directory)
    #expect(apply.status == 0, "\(apply.stderr)")
    return directory
  }

  @Test func exportPrintsTheWatchAndPlansEmpty() throws {
    let directory = try appliedWatch()
    let export = try TSApplyBinary.run(["export"], in: directory, environment: Self.fixedDate)
    #expect(export.status == 0, "\(export.stderr)")
    expectGolden(export.stdout, "export-watch.yaml")
    try export.stdout.write(to: directory.appendingPathComponent("exported.yaml"), atomically: true, encoding: .utf8)
    let plan = try TSApplyBinary.run(["plan", "--detailed-exitcode", "exported.yaml"], in: directory)
    #expect(plan.status == 0, "\(plan.stdout)\(plan.stderr)")
    #expect(plan.stdout.contains("No changes."))
  }

  @Test(arguments: ["default", "npk", "fit", "fit-basic", "fw"])
  func exportOfEachProfilePlansEmpty(_ profile: String) throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    #expect(try TSApplyBinary.run(["device", "init", "--profile", profile], in: directory).status == 0)
    let export = try TSApplyBinary.run(["export", "-o", "watch.yaml"], in: directory)
    #expect(export.status == 0, "\(export.stderr)")
    #expect(export.stdout.isEmpty)
    // It names the watch it read (not "default watch", the default profile's name).
    let device = directory.resolvingSymlinksInPath().appendingPathComponent(".tsapply/device.json").path
    #expect(export.stderr == "Wrote watch.yaml from sim:\(device) (platform profile \(profile)).\n", "\(export.stderr)")
    let text = try String(contentsOf: directory.appendingPathComponent("watch.yaml"), encoding: .utf8)
    #expect(text.hasPrefix("# Exported by tsapply from a watch with the '\(profile)' platform profile on "))
    let plan = try TSApplyBinary.run(["plan", "--detailed-exitcode"], in: directory)
    #expect(plan.status == 0, "\(plan.stdout)\(plan.stderr)")
  }

  @Test func exportWritesMode0600AndRefusesToOverwriteWithoutForce() throws {
    let directory = try appliedWatch()
    let path = directory.appendingPathComponent("watch.yaml").path
    #expect(try TSApplyBinary.run(["export", "-o", "watch.yaml"], in: directory).status == 0)
    #expect(try mode(path) == 0o600)
    try "contacts: []\n".write(toFile: path, atomically: true, encoding: .utf8)
    let again = try TSApplyBinary.run(["export", "-o", "watch.yaml"], in: directory)
    #expect(again.status == 1)
    #expect(again.stderr.contains("watch.yaml already exists; use --force to replace it"))
    #expect(try String(contentsOfFile: path, encoding: .utf8) == "contacts: []\n")
    let forced = try TSApplyBinary.run(["export", "--output", "watch.yaml", "--force"], in: directory)
    #expect(forced.status == 0, "\(forced.stderr)")
    #expect(try String(contentsOfFile: path, encoding: .utf8).contains("Alex Doe"))
    #expect(try mode(path) == 0o600)
  }

  @Test func fmtCheckNamesUnformattedFilesAndExitsOne() throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    let messy = "reminders:\n  medicine:\n    at: [8:00]   # breakfast\n    enabled: true\n"
    let tidy = "contacts:\n  - {name: Alex, phone: \"+15550100\"}\n"
    try messy.write(to: directory.appendingPathComponent("messy.yaml"), atomically: true, encoding: .utf8)
    try tidy.write(to: directory.appendingPathComponent("tidy.yaml"), atomically: true, encoding: .utf8)
    let check = try TSApplyBinary.run(["fmt", "--check", "messy.yaml", "tidy.yaml"], in: directory)
    #expect(check.status == 1)
    #expect(check.stdout == "messy.yaml\n")
    #expect(check.stderr == "messy.yaml is not formatted: see the changes with 'tsapply fmt --check --diff messy.yaml', "
            + "write them with 'tsapply fmt messy.yaml'.\n")
    // A name beginning with "-" goes after "--" in the commands it names, which then work; standard input is said too.
    try FileManager.default.copyItem(at: directory.appendingPathComponent("messy.yaml"), to: directory.appendingPathComponent("-x.yaml"))
    let dashed = try TSApplyBinary.run(["fmt", "--check", "--", "-x.yaml"], in: directory)
    #expect(dashed.status == 1 && dashed.stderr.contains("write them with 'tsapply fmt -- -x.yaml'"), "\(dashed.stderr)")
    #expect(try TSApplyBinary.run(["fmt", "--", "-x.yaml"], in: directory).status == 0)
    #expect(try TSApplyBinary.run(["fmt", "--check", "--", "-x.yaml"], in: directory).status == 0)
    let piped = try TSApplyBinary.run(["fmt", "--check", "-"], in: directory, stdin: try String(contentsOf: directory.appendingPathComponent("messy.yaml"), encoding: .utf8))
    #expect(piped.status == 1 && piped.stderr.contains("is not formatted: 'tsapply fmt -' writes it formatted to standard output"), "\(piped.stderr)")
    #expect(try String(contentsOf: directory.appendingPathComponent("messy.yaml"), encoding: .utf8) == messy)
    #expect(try TSApplyBinary.run(["fmt", "--check", "tidy.yaml"], in: directory).status == 0)
  }

  @Test func fmtDiffShowsTheChangeAndFmtWritesIt() throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    let path = directory.appendingPathComponent("watch.yaml").path
    try "reminders:\n  medicine:\n    at: [8:00]   # breakfast\n    enabled: true\n".write(toFile: path, atomically: true, encoding: .utf8)
    let diff = try TSApplyBinary.run(["fmt", "--check", "--diff"], in: directory)
    #expect(diff.status == 1)
    #expect(diff.stdout == """
      --- a/watch.yaml
      +++ b/watch.yaml
      @@ -1,4 +1,4 @@
       reminders:
         medicine:
      -    at: [8:00]   # breakfast
      +    at: ["08:00"] # breakfast
           enabled: true

      """)
    let write = try TSApplyBinary.run(["fmt"], in: directory)
    #expect(write.status == 0, "\(write.stderr)")
    #expect(write.stdout == "watch.yaml\n")
    #expect(try String(contentsOfFile: path, encoding: .utf8) == "reminders:\n  medicine:\n    at: [\"08:00\"] # breakfast\n    enabled: true\n")
    let again = try TSApplyBinary.run(["fmt", "--check", "--diff"], in: directory)
    #expect(again.status == 0)
    #expect(again.stdout.isEmpty)
  }

  /// A value a manifest cannot state is written as the watch holds it; the errors and the
  /// closing line agree on that (the closing line said "left out", found by a tester).
  @Test func exportOfValuesAManifestCannotStateSaysWhatWasWritten() throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    #expect(try TSApplyBinary.run(["device", "init"], in: directory).status == 0)
    #expect(try TSApplyBinary.run(["device", "simulate", "contact-add", "Bob ", "+15550100"], in: directory).status == 0)
    let result = try TSApplyBinary.run(["export", "-o", "ex.yaml"], in: directory)
    #expect(result.status == 1)
    #expect(result.stderr.contains("error: contacts[0].name: the watch holds a value a manifest cannot state; it is written as the watch holds it"), "\(result.stderr)")
    #expect(result.stderr.contains("The export is incomplete: 1 part of the watch cannot be stated in a manifest; each error above says what was written instead."), "\(result.stderr)")
    #expect(!result.stderr.contains("left out"), "\(result.stderr)")
    #expect(try String(contentsOfFile: directory.appendingPathComponent("ex.yaml").path, encoding: .utf8).contains("{name: 'Bob ', phone: \"+15550100\"}"))
  }

  @Test func fmtRefusesAFileWithErrorsAndLeavesItAlone() throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    let path = directory.appendingPathComponent("watch.yaml").path
    let broken = "reminders:\n  medicine:\n    at: [24:30]\n"
    try broken.write(toFile: path, atomically: true, encoding: .utf8)
    let result = try TSApplyBinary.run(["fmt", "watch.yaml"], in: directory)
    #expect(result.status == 1)
    #expect(result.stderr.contains("watch.yaml:3:10: error: reminders.medicine.at[0]: \"24:30\" is not a time of day"))
    #expect(result.stderr.contains("watch.yaml was not formatted: it has errors."))
    #expect(try String(contentsOfFile: path, encoding: .utf8) == broken)
  }

  @Test func fmtKeepsTheFileMode() throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    let path = directory.appendingPathComponent("watch.yaml").path
    try "contacts:\n  - {phone: +15550100, name: Alex}\n".write(toFile: path, atomically: true, encoding: .utf8)
    try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: path)
    #expect(try TSApplyBinary.run(["fmt"], in: directory).status == 0)
    #expect(try String(contentsOfFile: path, encoding: .utf8) == "contacts:\n  - {name: Alex, phone: \"+15550100\"}\n")
    #expect(try mode(path) == 0o640)
  }

  @Test func fmtOfStandardInputWritesStandardOutput() throws {
    let result = try TSApplyBinary.run(["fmt", "-"], stdin: "reminders:\n  drinking:\n    repeat: [Sat, sun]\n")
    #expect(result.status == 0)
    #expect(result.stdout == "reminders:\n  drinking:\n    repeat: weekend\n")
  }
}
