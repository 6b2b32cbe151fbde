import Foundation
import Testing
import TSTestSupport

/// `tsapply history` and `tsapply restore --at TIME` with the built binary (docs/apply.md
/// "History"): every apply and restore recorded with who ran it and the manifest's git commit,
/// tampering reported, and a watch — or a fleet — taken back to before a time through the
/// safety gate.
@Suite struct HistoryCommandTests {
  static let before = "contacts:\n  - {name: Ward desk, phone: \"+15550100\"}\n"
  static let after = before + "emergency:\n  sos: true\n  contacts:\n    - {name: Anna, phone: \"+15550123\"}\n"

  static func run(_ arguments: [String], in dir: URL) throws -> ProcessResult {
    try TSApplyBinary.run(arguments, in: dir, environment: ["TSAPPLY_STATE_DIR": dir.appendingPathComponent("state").path])
  }

  static func git(_ arguments: [String], in dir: URL) throws -> String {
    let result = try TSApplyBinary.runProgram(URL(fileURLWithPath: "/usr/bin/git"),
                                              ["-c", "user.name=Ana", "-c", "user.email=ana@example.org"] + arguments, in: dir)
    #expect(result.status == 0, "git \(arguments): \(result.stderr)")
    return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
  }

  /// The time now as `restore --at` takes it, after the clock has moved past the last apply.
  static func now() -> String {
    usleep(50_000)
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    let text = formatter.string(from: Date())
    usleep(50_000)
    return text
  }

  static func history(in dir: URL) throws -> [[String: Any]] {
    let result = try run(["history", "--device", "sim:w.json", "--json"], in: dir)
    let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
    return object?["entries"] as? [[String: Any]] ?? []
  }

  @Test func eachApplyIsRecordedWithItsCommitAndRestoreAtGoesBackThroughTheSafetyGate() throws {
    let dir = try TSApplyBinary.temporaryDirectory().resolvingSymlinksInPath()
    _ = try Self.git(["init", "-q"], in: dir)
    try Self.before.write(to: dir.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    _ = try Self.git(["add", "watch.yaml"], in: dir)
    _ = try Self.git(["commit", "-q", "-m", "ward desk"], in: dir)
    let first = try Self.git(["rev-parse", "HEAD"], in: dir)
    #expect(try Self.run(["device", "init", "--device", "sim:w.json"], in: dir).status == 0)
    #expect(try Self.run(["apply", "--device", "sim:w.json", "--auto-approve", "watch.yaml"], in: dir).status == 0)
    let time = Self.now()
    try Self.after.write(to: dir.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    _ = try Self.git(["commit", "-q", "-am", "Anna for SOS"], in: dir)
    let second = try Self.git(["rev-parse", "HEAD"], in: dir)
    #expect(try Self.run(["apply", "--device", "sim:w.json", "--auto-approve", "watch.yaml"], in: dir).status == 0)

    var entries = try Self.history(in: dir)
    #expect(entries.map { $0["commit"] as? String } == [first, first, second, second])
    #expect(entries.map { $0["result"] as? String } == ["started", "applied", "started", "applied"])
    #expect(entries.allSatisfy { ($0["command"] as? String) == "tsapply apply --device sim:w.json --auto-approve watch.yaml" && $0["backup"] is String && $0["user"] is String })
    let text = try Self.run(["history", "--device", "sim:w.json"], in: dir)
    #expect(text.status == 0 && text.stdout.contains("4 entries, chain intact."), "\(text.stdout)")
    #expect(text.stdout.contains(String(second.prefix(12))), "\(text.stdout)")

    // Back to before the second apply: removing Anna from the emergency contacts is unsafe.
    var restore = try Self.run(["restore", "--device", "sim:w.json", "--at", time, "--auto-approve"], in: dir)
    #expect(restore.status == 1, "\(restore.stdout)\(restore.stderr)")
    // Named as `history` lists that apply: by the entry that ended it (its `started` entry is not a row).
    #expect(restore.stdout.contains("Going back to before entry 4 of the history (apply at "), "\(restore.stdout)")
    // The plan's note names the flag of the command that refused it, restore's as well as apply's.
    #expect(restore.stdout.contains("--auto-approve (apply, restore) refuses it unless --allow-destroy"), "\(restore.stdout)")
    #expect(try Self.run(["device", "show", "--device", "sim:w.json"], in: dir).stdout.contains("Anna"))
    restore = try Self.run(["restore", "--device", "sim:w.json", "--at", time, "--auto-approve", "--allow-destroy"], in: dir)
    #expect(restore.status == 0, "\(restore.stdout)\(restore.stderr)")
    #expect(!(try Self.run(["device", "show", "--device", "sim:w.json"], in: dir).stdout.contains("Anna")))
    entries = try Self.history(in: dir)
    #expect(entries.map { $0["kind"] as? String } == ["apply", "apply", "apply", "apply", "restore", "restore"])

    // Nothing after now: nothing to restore.
    let later = try Self.run(["restore", "--device", "sim:w.json", "--at", Self.now(), "--auto-approve"], in: dir)
    #expect(later.status == 0 && later.stdout.contains("Nothing to restore"), "\(later.stdout)")
    // Never "it is as it was then": a change made on the watch itself is in no backup.
    #expect(later.stdout.contains("A change made on the watch itself is not in its history: 'tsapply drift --device sim:w.json' shows"),
            "\(later.stdout)")
  }

  /// An apply killed while it writes (after its backup, before it ends) is in the history as
  /// `unfinished`, and `restore --at` goes back past it.
  @Test func anApplyKilledWhileWritingIsRecordedAndRestoreAtGoesBackPastIt() throws {
    let dir = try TSApplyBinary.temporaryDirectory().resolvingSymlinksInPath()
    try Self.before.write(to: dir.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    #expect(try Self.run(["device", "init", "--device", "sim:w.json"], in: dir).status == 0)
    #expect(try Self.run(["apply", "--device", "sim:w.json", "--auto-approve", "watch.yaml"], in: dir).status == 0)
    let time = Self.now()
    try Self.after.write(to: dir.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    // Slow calls; killed once its `started` entry is written (its backup taken), before it ends.
    let apply = try ListeningProcess(["apply", "--device", "sim:w.json", "--auto-approve", "watch.yaml"], in: dir,
                                     environment: ["TSAPPLY_STATE_DIR": dir.appendingPathComponent("state").path, "TSAPPLY_SIM_LATENCY": "300,0"])
    let deadline = Date().addingTimeInterval(60)
    while (try? Self.history(in: dir).count) ?? 0 < 3, Date() < deadline { usleep(20_000) }
    usleep(400_000)
    apply.send(SIGKILL)
    _ = apply.finish()
    let entries = try Self.history(in: dir)
    #expect(entries.map { $0["result"] as? String } == ["started", "applied", "started"], "\(entries)")
    let text = try Self.run(["history", "--device", "sim:w.json"], in: dir)
    #expect(text.status == 0 && text.stdout.contains(" unfinished "), "\(text.stdout)")
    let restored = try Self.run(["restore", "--device", "sim:w.json", "--at", time, "--auto-approve", "--allow-destroy"], in: dir)
    #expect(restored.status == 0 && restored.stdout.contains("Going back to before entry 3 of the history"), "\(restored.stdout)\(restored.stderr)")
    let shown = try Self.run(["device", "show", "--device", "sim:w.json"], in: dir).stdout
    #expect(shown.contains("Ward desk") && !shown.contains("Anna"), "\(shown)")
  }

  @Test func aChangedHistoryIsReportedAndNotRestoredFrom() throws {
    let dir = try TSApplyBinary.temporaryDirectory().resolvingSymlinksInPath()
    try Self.before.write(to: dir.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    #expect(try Self.run(["device", "init", "--device", "sim:w.json"], in: dir).status == 0)
    let time = Self.now()
    #expect(try Self.run(["apply", "--device", "sim:w.json", "--auto-approve", "watch.yaml"], in: dir).status == 0)
    let state = dir.appendingPathComponent("state/watches")
    let folder = try #require(try FileManager.default.contentsOfDirectory(atPath: state.path).first)
    let file = state.appendingPathComponent(folder).appendingPathComponent("history.jsonl")
    let line = try String(contentsOf: file, encoding: .utf8)
    try line.replacingOccurrences(of: "\"result\":\"applied\"", with: "\"result\":\"failed\"").write(to: file, atomically: true, encoding: .utf8)
    let history = try Self.run(["history", "--device", "sim:w.json"], in: dir)
    #expect(history.status == 1, "\(history.stdout)\(history.stderr)")
    #expect(history.stdout.contains("THE HISTORY WAS CHANGED other than by tsapply"), "\(history.stdout)")
    #expect(history.stdout.contains("line 2 (entry 2) was changed after it was written: its hash does not match"), "\(history.stdout)")
    let restore = try Self.run(["restore", "--device", "sim:w.json", "--at", time, "--auto-approve"], in: dir)
    #expect(restore.status == 1 && restore.stderr.contains("refusing to restore from a history that was changed"), "\(restore.stderr)")
  }

  @Test func aFleetGoesBackToBeforeATimeWatchByWatch() throws {
    let dir = try TSApplyBinary.temporaryDirectory().resolvingSymlinksInPath()
    let names = try StagedRolloutTests.fleet(3, in: dir)
    #expect(try Self.run(["apply", "--fleet", "fleet.yaml", "--auto-approve"], in: dir).status == 0)
    let time = Self.now()
    try Self.after.write(to: dir.appendingPathComponent("defaults.yaml"), atomically: true, encoding: .utf8)
    #expect(try Self.run(["apply", "--fleet", "fleet.yaml", "--auto-approve"], in: dir).status == 0)

    let history = try Self.run(["history", "--fleet", "fleet.yaml"], in: dir)
    #expect(history.status == 0, "\(history.stdout)\(history.stderr)")
    #expect(history.stdout.components(separatedBy: "4 entries, chain intact.").count == 4, "\(history.stdout)")
    #expect(try Self.run(["restore", "--fleet", "fleet.yaml", "--at", time], in: dir).stderr.contains("restore --fleet needs --auto-approve"))
    // Through the gate: removing the emergency contact needs --allow-destroy.
    let refused = try Self.run(["restore", "--fleet", "fleet.yaml", "--at", time, "--auto-approve"], in: dir)
    // Refused by the gate, as apply --fleet says it (it said failed), with restore's advice.
    #expect(refused.status == 1 && refused.stdout.contains("3 watches: 3 refused."), "\(refused.stdout)")
    #expect(refused.stderr.contains("rerun with --auto-approve --allow-destroy to restore them; each watch's section shows its plan)"), "\(refused.stderr)")
    // The table gives the refusal's first line; its advice is in the section, on lines of its own.
    #expect(!refused.stdout.contains("\\n"), "no escaped line break: \(refused.stdout)")
    #expect(refused.stdout.contains("Nothing was written.\n  Review it"), "\(refused.stdout)")
    let restored = try Self.run(["restore", "--fleet", "fleet.yaml", "--at", time, "--auto-approve", "--allow-destroy"], in: dir)
    #expect(restored.status == 0 && restored.stdout.contains("3 watches: 3 applied."), "\(restored.stdout)\(restored.stderr)")
    for name in names {
      let shown = try Self.run(["device", "show", "--device", "sim:watches/\(name).json"], in: dir).stdout
      #expect(shown.contains("Ward desk") && !shown.contains("Anna"), "\(name): \(shown)")
    }
    let json = try Self.run(["history", "--fleet", "fleet.yaml", "--json"], in: dir)
    let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
    let watches = object?["watches"] as? [[String: Any]] ?? []
    #expect(watches.map { ($0["entries"] as? [[String: Any]])?.map { $0["kind"] as? String } } == Array(repeating: ["apply", "apply", "apply", "apply", "restore", "restore"], count: 3))
  }

  /// A fleet restore whose write lands and whose read back then fails: its row says in Changes that
  /// it was written, as its history does (it said `-`, "nothing was written", of a restore that
  /// wrote: fresh-eyes test).
  @Test func aFleetRestoreThatFailsAfterWritingSaysWhatReachedTheWatch() throws {
    let dir = try TSApplyBinary.temporaryDirectory().resolvingSymlinksInPath()
    _ = try StagedRolloutTests.fleet(2, in: dir)
    #expect(try Self.run(["apply", "--fleet", "fleet.yaml", "--auto-approve"], in: dir).status == 0)
    let time = Self.now()
    try Self.after.write(to: dir.appendingPathComponent("defaults.yaml"), atomically: true, encoding: .utf8)
    #expect(try Self.run(["apply", "--fleet", "fleet.yaml", "--watch", "w0001", "--auto-approve"], in: dir).status == 0)
    let restore = try TSApplyBinary.run(["restore", "--fleet", "fleet.yaml", "--watch", "w0001", "--at", time, "--auto-approve", "--allow-destroy"],
                                        in: dir, environment: ["TSAPPLY_STATE_DIR": dir.appendingPathComponent("state").path,
                                                               "TSAPPLY_SIM_FAULT": "fail@6"])
    #expect(restore.status == 1, "\(restore.stdout)\(restore.stderr)")
    let entries = try Self.run(["history", "--device", "sim:watches/w0001.json", "--json"], in: dir)
    let object = try JSONSerialization.jsonObject(with: Data(entries.stdout.utf8)) as? [String: Any]
    let last = try #require((object?["entries"] as? [[String: Any]])?.last, "\(entries.stdout)")
    #expect(last["kind"] as? String == "restore" && last["result"] as? String == "failed", "\(last)")
    let reached = try #require(last["reached"] as? [String: Int], "\(last)")
    #expect(reached.values.reduce(0, +) > 0, "the watch changed: \(last)")
    let row = try #require(restore.stdout.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("w0001 ") }, "\(restore.stdout)")
    #expect(row.contains("failed") && row.contains("written, not verified"), "\(row)\n\(restore.stdout)")
    #expect(!row.contains(" - "), "\(row)")
  }
}
