import Foundation
import Testing
import TSTestSupport

/// One watch however its state file is spelt, and the files no command writes over, run as the
/// built binary: a symbolic link to the state file shares the lock and stays a link; a fleet
/// refuses one watch under two spellings; export never writes over the watch it reads; a state
/// directory that is a file is named.
@Suite struct WatchIdentityTests {
  static let manifest = "contacts: [{name: A, phone: \"12345\"}]\n"

  /// A directory (links resolved) with the watch `w.json`, the link `l.json -> w.json` and
  /// `watch.yaml`.
  static func space() throws -> URL {
    let directory = try TSApplyBinary.temporaryDirectory().resolvingSymlinksInPath()
    let created = try TSApplyBinary.run(["device", "init", "--device", "sim:w.json"], in: directory)
    #expect(created.status == 0, "\(created.stderr)")
    try FileManager.default.createSymbolicLink(atPath: directory.appendingPathComponent("l.json").path, withDestinationPath: "w.json")
    try manifest.write(to: directory.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    return directory
  }

  @Test func anApplyThroughALinkIsLockedOutAndWritesThroughTheLink() throws {
    let directory = try Self.space()
    let header = try TSApplyBinary.run(["plan", "--device", "sim:l.json", "watch.yaml"], in: directory)
    #expect(header.stdout.contains("tsapply compared watch.yaml with the watch sim:\(directory.path)/w.json"), "\(header.stdout)")
    let slow = try TSApplyBinary.start(["apply", "--auto-approve", "--device", "sim:w.json", "watch.yaml"], in: directory,
                                       environment: ["TSAPPLY_SIM_LATENCY": "700,0"])
    usleep(350_000)
    let second = try TSApplyBinary.run(["apply", "--auto-approve", "--device", "sim:l.json", "watch.yaml"], in: directory)
    let first = slow.wait()
    #expect(first.status == 0, "\(first.stderr)")
    #expect(second.status == 1)
    #expect(second.stderr.contains("the watch is locked"), "\(second.stderr)")
    let plan = try TSApplyBinary.run(["plan", "--device", "sim:l.json", "watch.yaml"], in: directory)
    #expect(plan.stdout.contains("No changes"), "\(plan.stdout)")
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: directory.appendingPathComponent("l.json").path) == "w.json")
    #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("l.json.lock").path))
  }

  @Test(arguments: ["sim:./a.json", "sim:<DIR>/a.json", "sim:la.json"])
  func aFleetRefusesOneWatchUnderTwoSpellings(_ spelling: String) throws {
    let directory = try TSApplyBinary.temporaryDirectory().resolvingSymlinksInPath()
    #expect(try TSApplyBinary.run(["device", "init", "--device", "sim:a.json"], in: directory).status == 0)
    try FileManager.default.createSymbolicLink(atPath: directory.appendingPathComponent("la.json").path, withDestinationPath: "a.json")
    try Self.manifest.write(to: directory.appendingPathComponent("ma.yaml"), atomically: true, encoding: .utf8)
    try "contacts: [{name: B, phone: \"54321\"}]\n".write(to: directory.appendingPathComponent("mb.yaml"), atomically: true, encoding: .utf8)
    let second = spelling.replacingOccurrences(of: "<DIR>", with: directory.path)
    try "watches:\n  a: {device: sim:a.json, manifest: ma.yaml}\n  b: {device: \(second), manifest: mb.yaml}\n"
      .write(to: directory.appendingPathComponent("fleet.yaml"), atomically: true, encoding: .utf8)
    let before = try String(contentsOf: directory.appendingPathComponent("a.json"), encoding: .utf8)
    let run = try TSApplyBinary.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--allow-destroy"], in: directory)
    #expect(run.status == 1)
    #expect(run.stderr.contains("fleet.yaml:3:15: error: watches.b.device: the device \(second) is already used by the watch a (line 2, column 15, written there as sim:a.json: both name the watch sim:\(directory.path)/a.json)"), "\(run.stderr)")
    #expect(try String(contentsOf: directory.appendingPathComponent("a.json"), encoding: .utf8) == before)
  }

  @Test(arguments: [["export", "-o", "w.json", "--force", "--device", "sim:w.json"],
                    ["export", "-o", "l.json", "--force", "--device", "sim:w.json"],
                    ["export", "-o", ".tsapply/device.json", "--force"],
                    ["plan", "-out", "w.json.lock", "--device", "sim:l.json", "watch.yaml"]])
  func noOutputIsWrittenOverTheWatchItReads(_ arguments: [String]) throws {
    let directory = try Self.space()
    #expect(try TSApplyBinary.run(["device", "show"], in: directory).status == 0)
    let files = ["w.json", ".tsapply/device.json"].map { directory.appendingPathComponent($0) }
    let before = try files.map { try Data(contentsOf: $0) }
    let run = try TSApplyBinary.run(arguments, in: directory)
    #expect(run.status == 1)
    // plan -out checks its target before planning: an existing file that is not a saved plan
    // (the lock) is refused as such before the watch is opened.
    #expect(run.stderr.contains("it is the state file of the watch")
              || (arguments[0] == "plan" && run.stderr.contains("is not a tsapply saved plan, so it is not replaced")), "\(run.stderr)")
    #expect(try files.map { try Data(contentsOf: $0) } == before)
    #expect(try TSApplyBinary.run(["plan", "--device", "sim:w.json", "watch.yaml"], in: directory).status == 0)
  }

  @Test func aStateFileOverwrittenByAnotherFileGetsAdviceThatWorks() throws {
    let directory = try Self.space()
    try "contacts: []\n".write(to: directory.appendingPathComponent("w.json"), atomically: true, encoding: .utf8)
    let plan = try TSApplyBinary.run(["plan", "--device", "sim:w.json", "watch.yaml"], in: directory)
    #expect(plan.status == 1)
    let advice = "remove it yourself and create the watch again with 'tsapply device init --device sim:\(directory.path)/w.json'"
    #expect(plan.stderr.contains(advice), "\(plan.stderr)")
    #expect(!plan.stderr.contains("reset the watch with"))
    try FileManager.default.removeItem(at: directory.appendingPathComponent("w.json"))
    #expect(try TSApplyBinary.run(["device", "init", "--device", "sim:\(directory.path)/w.json"], in: directory).status == 0)
  }

  @Test(arguments: [["apply", "--auto-approve", "--device", "sim:w.json", "watch.yaml"],
                    ["plan", "--device", "sim:w.json", "watch.yaml"], ["drift", "--device", "sim:w.json", "watch.yaml"]])
  func aStateDirectoryThatIsAFileIsNamed(_ arguments: [String]) throws {
    let directory = try Self.space()
    let file = directory.appendingPathComponent("state-file").path
    try "x".write(toFile: file, atomically: true, encoding: .utf8)
    let run = try TSApplyBinary.run(arguments, in: directory, environment: ["TSAPPLY_STATE_DIR": file])
    #expect(run.status == 1)
    #expect(run.stderr.contains("cannot write \(file): it is a file, not a directory"), "\(run.stderr)")
    #expect(!run.stderr.contains("NSCocoaErrorDomain"))
  }
}
