import Foundation
import Testing
import TSTestSupport

/// Reports that equal the watch, with the built binary: `tsapply history` says what of an apply
/// that stopped part-way reached the watch (docs/apply.md "History"), and `status --fleet`
/// never shows a write time tsapply does not know (docs/fleet.md).
@Suite struct TruthfulReportTests {
  static let manifest = Build.fourChanges

  static func run(_ arguments: [String], in dir: URL, fault: String? = nil) throws -> ProcessResult {
    var environment = ["TSAPPLY_STATE_DIR": dir.appendingPathComponent("state").path]
    environment["TSAPPLY_SIM_FAULT"] = fault
    return try TSApplyBinary.run(arguments, in: dir, environment: environment)
  }

  /// The sixth call (reading the contacts before writing them) fails: the two reminders reached
  /// the watch, the contacts and the emergency contacts did not. The history says so, not the
  /// plan's `+0 ~4 -0`.
  @Test func theHistoryOfAnApplyThatStoppedPartWaySaysWhatReachedTheWatch() throws {
    let dir = try TSApplyBinary.temporaryDirectory().resolvingSymlinksInPath()
    try Self.manifest.write(to: dir.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    #expect(try Self.run(["device", "init", "--device", "sim:w.json"], in: dir).status == 0)
    let apply = try Self.run(["apply", "--device", "sim:w.json", "--auto-approve", "watch.yaml"], in: dir, fault: "fail@6")
    #expect(apply.status == 1 && apply.stderr.contains("applied:      reminder.drinking, reminder.sedentary"), "\(apply.stderr)")
    let text = try Self.run(["history", "--device", "sim:w.json"], in: dir)
    let row = try #require(text.stdout.split(separator: "\n").last.map(String.init))
    #expect(row.contains("failed  2 of 4 applied (+0 ~2 -0); failed: contacts  "), "\(text.stdout)")
    let json = try Self.run(["history", "--device", "sim:w.json", "--json"], in: dir)
    let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
    let entry = try #require((object?["entries"] as? [[String: Any]])?.last)
    #expect(entry["change"] as? Int == 4 && entry["result"] as? String == "failed")
    #expect(entry["reached"] as? [String: Int] == ["add": 0, "change": 2, "destroy": 0] && entry["failed_at"] as? [String] == ["contacts"],
            "\(json.stdout)")
    // A rerun finishes it: all of its own plan reached the watch.
    #expect(try Self.run(["apply", "--device", "sim:w.json", "--auto-approve", "watch.yaml"], in: dir).status == 0)
    let after = try Self.run(["history", "--device", "sim:w.json"], in: dir).stdout
    #expect(after.split(separator: "\n").last?.contains("applied  +0 ~2 -0  ") == true, "\(after)")
  }

  /// A watch that already held its manifest (moved from another phone, set up elsewhere): the
  /// apply that found it matching recorded it, and tsapply never wrote to it. `status --fleet`
  /// says `none recorded (matched already)` and `null`, reachable or not, until an apply writes.
  @Test func aWatchThatMatchedAlreadyShowsNeverAppliedNotTheTimeOfARefresh() throws {
    let dir = try TSApplyBinary.temporaryDirectory().resolvingSymlinksInPath()
    try Self.manifest.write(to: dir.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    try "watches:\n  room-1: {device: \"sim:room-1.json\", manifest: watch.yaml}\n"
      .write(to: dir.appendingPathComponent("fleet.yaml"), atomically: true, encoding: .utf8)
    // Set up elsewhere: another state directory applied it, then the watch came here.
    #expect(try Self.run(["device", "init", "--device", "sim:room-1.json"], in: dir).status == 0)
    #expect(try TSApplyBinary.run(["apply", "--device", "sim:room-1.json", "--auto-approve", "watch.yaml"], in: dir,
                                  environment: ["TSAPPLY_STATE_DIR": dir.appendingPathComponent("elsewhere").path]).status == 0)
    let matched = try Self.run(["apply", "--device", "sim:room-1.json", "--auto-approve", "watch.yaml"], in: dir)
    #expect(matched.status == 0 && matched.stdout.contains("0 changed"), "\(matched.stdout)")
    sleep(1)
    #expect(try Self.run(["apply", "--device", "sim:room-1.json", "--auto-approve", "watch.yaml"], in: dir).status == 0)

    let table = try Self.run(["status", "--fleet", "fleet.yaml"], in: dir)
    #expect(table.stdout.contains("room-1  in sync  none recorded (matched already)  "), "\(table.stdout)")
    let json = try Self.run(["status", "--fleet", "fleet.yaml", "--json"], in: dir)
    #expect(json.stdout.contains("\"last_applied\" : null"), "\(json.stdout)")
    try FileManager.default.moveItem(at: dir.appendingPathComponent("room-1.json"), to: dir.appendingPathComponent("room-1.away"))
    let away = try Self.run(["status", "--fleet", "fleet.yaml"], in: dir)
    #expect(away.stdout.contains("room-1  unreachable  none recorded (matched already)  "), "\(away.stdout)")
    try FileManager.default.moveItem(at: dir.appendingPathComponent("room-1.away"), to: dir.appendingPathComponent("room-1.json"))
    // A write gives it a time.
    try Self.manifest.replacingOccurrences(of: "+15550100", with: "+15550102")
      .write(to: dir.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    #expect(try Self.run(["apply", "--device", "sim:room-1.json", "--auto-approve", "watch.yaml"], in: dir).status == 0)
    let written = try Self.run(["status", "--fleet", "fleet.yaml", "--json"], in: dir).stdout
    #expect(!written.contains("\"last_applied\" : null") && written.contains("\"last_applied\" : \"20"), "\(written)")
  }

  /// `drift --adopt` says what the next apply of the adopted manifest still undoes as planned:
  /// an emergency contact written as a reference is not adopted, yet the manifest gives it as
  /// the watch holds it, so the next apply undoes nothing.
  @Test func adoptingSaysWhatTheNextApplyStillUndoesAsPlanned() throws {
    let dir = try TSApplyBinary.temporaryDirectory().resolvingSymlinksInPath()
    try "contacts:\n  - {name: Sam, phone: \"+15550101\"}\nemergency:\n  sos: true\n  contacts:\n    - {contact: Sam}\n"
      .write(to: dir.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    #expect(try Self.run(["device", "init", "--device", "sim:w.json"], in: dir).status == 0)
    #expect(try Self.run(["apply", "--device", "sim:w.json", "--auto-approve", "watch.yaml"], in: dir).status == 0)
    #expect(try Self.run(["device", "simulate", "emergency-set", "Sam", "+15550101", "Bo", "+15550109", "--device", "sim:w.json"], in: dir).status == 0)
    // At a terminal: adding an emergency contact changes whom SOS reaches, which --auto-approve
    // does not adopt (fresh-eyes fe96 #8).
    let run = try TSApplyBinary.startInteractive(["drift", "--adopt", "--device", "sim:w.json", "watch.yaml"], in: dir,
                                                 environment: ["TSAPPLY_STATE_DIR": dir.path + "/state"])
    _ = run.read(until: "Enter a value:")
    run.type("yes\n")
    let adopt = run.wait(limit: 30)
    #expect(adopt.stdout.contains("Not adopted emergency:") && !adopt.stdout.contains("still undoes")
            && adopt.stdout.contains("the next apply does not undo it."), "\(adopt.stdout)")
    let plan = try Self.run(["plan", "--device", "sim:w.json", "watch.yaml"], in: dir)
    #expect(plan.stdout.contains("No changes."), "\(plan.stdout)")
  }
}
