import Foundation
import Testing
import TSApply
import TSDevice
import TSEngine
import TSManifest
import TSModel
import TSPlan
import TSTestSupport

/// The apply history (docs/apply.md "History"): the engine appends an entry for every apply
/// and restore that may have written the watch — whichever front end ran it — with who, the
/// manifest's commit, the plan's digest, the result and the backup; the file is append-only
/// and chained, so every kind of tampering is reported.
@Suite struct ApplyHistoryTests {
  static func document(_ yaml: String, path: String? = nil) -> ManifestDocument {
    let loaded = ManifestLoader.load(bytes: Array(yaml.utf8), file: "watch.yaml")
    return ManifestDocument(manifest: loaded.manifest!, bytes: Array(yaml.utf8), path: path)
  }

  static let one = "contacts:\n  - {name: Ward desk, phone: \"+15550100\"}\n"
  static let two = "contacts:\n  - {name: Ward desk, phone: \"+15550100\"}\n  - {name: Niece, phone: \"+15550111\"}\n"

  /// A watch with six entries: two applies and a restore, each `started` and then `applied`.
  static func historyOfThree() async throws -> (Workspace, Watch) {
    let space = try Workspace()
    let watch = try await space.open()
    let options = ApplyOptions(approval: .automatic(allowDestroy: true), command: "tsapply apply watch.yaml")
    _ = try await watch.apply(document(one, path: space.directory + "/watch.yaml"), options: options)
    // Nothing to change: nothing recorded.
    _ = try await watch.apply(document(one), options: options)
    _ = try await watch.apply(document(two), options: options)
    let first = try #require(try watch.history.read().entries.first?.backup)
    _ = try await watch.restore(try Backup.read(path: first), file: first, options: options)
    return (space, watch)
  }

  @Test func everyApplyAndRestoreThatWritesIsRecordedInAChain() async throws {
    let (space, watch) = try await Self.historyOfThree()
    let read = try watch.history.read()
    #expect(read.isIntact, "\(read.problems)")
    // Each one twice: `started` once its backup is taken, then how it ended, with the same backup.
    #expect(read.entries.map(\.kind) == ["apply", "apply", "apply", "apply", "restore", "restore"])
    #expect(read.entries.map(\.sequence) == [1, 2, 3, 4, 5, 6])
    #expect(read.entries.map(\.result) == ["started", "applied", "started", "applied", "started", "applied"])
    #expect(stride(from: 0, to: 6, by: 2).allSatisfy { read.entries[$0].backup == read.entries[$0 + 1].backup })
    let ended = read.entries.filter { $0.result != HistoryEntry.started }
    #expect(ended.map { "+\($0.add) ~\($0.change) -\($0.destroy)" } == ["+0 ~1 -0", "+0 ~1 -0", "+0 ~1 -0"])
    #expect(ended[0].manifest == space.directory + "/watch.yaml" && ended[1].manifest == nil)
    #expect(read.entries.allSatisfy { $0.user == Operator.user && $0.host == Operator.host && $0.device == watch.identity })
    #expect(read.entries.allSatisfy { $0.backup.map { FileManager.default.fileExists(atPath: $0) } == true })
    #expect(read.entries[0].previous == ApplyHistory.origin && read.entries[1].previous == read.entries[0].hash)
    // The same change has the same digest: the restore undoes the second apply.
    #expect(ended[0].plan != ended[1].plan)
    // The table shows each once, by how it ended.
    #expect(read.table.split(separator: "\n").count == 1 + 3 && !read.table.contains("started"), "\(read.table)")
    var mode = stat()
    #expect(stat(watch.history.path, &mode) == 0 && mode.st_mode & 0o777 == 0o600)
  }

  @Test func aFailedApplyThatMayHaveWrittenIsRecordedWithItsBackup() async throws {
    let space = try Workspace()
    // The write's answer lost, and reading the list back fails too: it may have written.
    let watch = try await space.open(fault: "lands-then-fails@5,fail@6")
    let options = ApplyOptions(approval: .automatic(allowDestroy: true), command: "t")
    await #expect(throws: EngineError.self) { _ = try await watch.apply(Self.document(Self.one), options: options) }
    let entry = try #require(try watch.history.read().entries.last)
    #expect(entry.result == "failed" && entry.backup != nil && entry.error != nil)
  }

  static let four = Build.fourChanges

  /// (fault, result, the Changes column) for an apply of `four` (four changes: the two reminders,
  /// then the contacts, then the emergency contacts): what the history says reached the watch,
  /// never the plan's counts for an apply that stopped part-way.
  static let reachedCases: [(String?, String, String)] = [
    (nil, "applied", "+0 ~4 -0"),
    ("fail@4", "failed", "0 of 4 applied; failed: reminder.drinking, reminder.sedentary"),
    ("fail@6", "failed", "2 of 4 applied (+0 ~2 -0); failed: contacts"),
    ("fail@8", "failed", "3 of 4 applied (+0 ~3 -0); failed: emergency"),
    // The answer to the contacts' write lost, and it landed (read back): applied, and the apply
    // went on.
    ("lands-then-fails@7", "applied", "+0 ~4 -0"),
    // … and the emergency write then failed.
    ("lands-then-fails@7,fail@9", "failed", "3 of 4 applied (+0 ~3 -0); failed: emergency"),
  ]

  @Test(arguments: 0..<reachedCases.count) func theHistorySaysWhatReachedTheWatch(_ index: Int) async throws {
    let (fault, result, changes) = Self.reachedCases[index]
    let space = try Workspace()
    let watch = if let fault { try await space.open(fault: fault) } else { try await space.open() }
    _ = try? await watch.apply(Self.document(Self.four), options: ApplyOptions(approval: .automatic(allowDestroy: true), command: "t"))
    let read = try watch.history.read()
    let entry = try #require(read.entries.last)
    #expect(entry.result == result && entry.changesText == changes, "\(fault ?? "no fault"): \(entry.result) \(entry.changesText)")
    // The plan's counts stay what was planned; the table shows what reached the watch.
    #expect(entry.add + entry.change + entry.destroy == 4)
    #expect(read.table.contains(changes), "\(read.table)")
    #expect(read.isIntact)
  }

  /// How many of a failed apply's changes may or may not be on the watch (`Reconcile.unknown`,
  /// what an agent's status reports as `unknown`): the contacts' write whose answer was lost is
  /// known once read back (then applied, and a later failure leaves none unknown), and not
  /// known when the read back fails too.
  @Test(arguments: [("lands-then-fails@7,fail@9", 0), ("lands-then-fails@7,fail@8", 1), ("fail@6", 0)])
  func whatAFailedApplyCannotTellIsCounted(fault: String, unknown: Int) async throws {
    let space = try Workspace()
    let plan = try await space.open().plan(Self.document(Self.four)).plan
    let watch = try await space.open(fault: fault)
    do {
      _ = try await watch.apply(Self.document(Self.four), options: ApplyOptions(approval: .automatic(allowDestroy: true), command: "t"))
      Issue.record("\(fault): the apply did not fail")
    } catch {
      #expect(Reconcile.unknown(plan, failure: error) == unknown, "\(fault): \(error)")
    }
  }

  /// An entry that does not say what reached the watch (an apply that never ended, or an entry
  /// from before tsapply kept it) shows its plan as planned, not as done.
  @Test func anEntryWithoutWhatReachedTheWatchShowsItsPlanAsPlanned() {
    func entry(_ result: String, reached: PlanCounts?) -> HistoryEntry {
      HistoryEntry(time: "2026-12-02T09:00:00.000Z", kind: "apply", user: "u", host: "h", command: "c", device: "d", manifest: nil,
                   commit: nil, plan: "p", add: 1, change: 2, destroy: 0, result: result, error: nil, backup: "b", reached: reached)
    }
    #expect(entry("failed", reached: nil).changesText == "planned +1 ~2 -0")
    #expect(entry(HistoryEntry.started, reached: nil).changesText == "planned +1 ~2 -0")
    #expect(entry("applied", reached: nil).changesText == "+1 ~2 -0")
    #expect(entry("interrupted", reached: PlanCounts(add: 1, change: 0, destroy: 0)).changesText == "1 of 3 applied (+1 ~0 -0)")
    // Which of them "Last applied" may take as a write (`Watch.lastWrite` without `applied_at`).
    #expect([entry("applied", reached: nil), entry("failed", reached: nil), entry(HistoryEntry.started, reached: nil),
             entry("failed", reached: PlanCounts(add: 0, change: 0, destroy: 0)),
             entry("interrupted", reached: PlanCounts(add: 1, change: 0, destroy: 0))].map(\.wrote) == [true, false, false, false, true])
  }

  /// An apply whose process ended between its backup and its end (killed) leaves its `started`
  /// entry: the table shows it `unfinished`, and `restore --at` goes back through it.
  @Test func anApplyThatNeverEndedIsInTheHistoryAsUnfinished() throws {
    func entry(_ sequence: Int, _ time: String, _ result: String, backup: String) -> HistoryEntry {
      HistoryEntry(sequence: sequence, time: time, kind: "apply", user: "u", host: "h", command: "c", device: "d", manifest: nil, commit: nil,
                   plan: "p", add: 0, change: 1, destroy: 0, result: result, error: nil, backup: backup, previous: "", hash: "")
    }
    let entries = [entry(1, "2026-12-02T09:00:00.000Z", "started", backup: "a"), entry(2, "2026-12-02T09:00:01.000Z", "applied", backup: "a"),
                   entry(3, "2026-12-02T10:00:00.000Z", "started", backup: "b"),
                   entry(4, "2026-12-02T11:00:00.000Z", "started", backup: "c"), entry(5, "2026-12-02T11:00:01.000Z", "failed", backup: "c")]
    let table = ApplyHistory.Read(entries: entries, problems: []).table
    let results = table.split(separator: "\n").dropFirst().map { $0.split(separator: " ", omittingEmptySubsequences: true)[3] }
    #expect(results == ["applied", "unfinished", "failed"], "\(table)")
    #expect(ApplyHistory.firstChange(after: ApplyHistory.parseTime("2026-12-02T09:30:00Z")!, in: entries)?.backup == "b")
  }

  /// (what is done to the file, a problem it must report)
  static let tampering: [(String, @Sendable (String, String) throws -> Void, String)] = [
    ("a field edited", { path, _ in try edit(path) { $0.replacingOccurrences(of: "\"result\":\"applied\"", with: "\"result\":\"failed\"") } },
     "line 2 (entry 2) was changed after it was written"),
    ("an entry removed", { path, _ in try edit(path) { lines($0).enumerated().filter { $0.offset != 1 }.map(\.element).joined(separator: "\n") + "\n" } },
     "line 2 (entry 3) does not follow the entry before it"),
    ("two entries swapped", { path, _ in try edit(path) { let l = lines($0); return [l[1], l[0], l[2]].joined(separator: "\n") + "\n" } },
     "line 1 (entry 2) does not follow the entry before it"),
    ("the last entry cut off", { path, _ in try edit(path) { lines($0).prefix(2).joined(separator: "\n") + "\n" } },
     "history.head says there were 6 entries, the file has 2"),
    ("the head removed", { _, head in try FileManager.default.removeItem(atPath: head) }, "history.head is missing"),
    ("not JSON", { path, _ in try edit(path) { $0 + "garbage\n" } }, "line 7 is not a history entry"),
  ]

  static func lines(_ text: String) -> [String] { text.split(separator: "\n").map(String.init) }
  static func edit(_ path: String, _ change: (String) -> String) throws {
    try change(try String(contentsOfFile: path, encoding: .utf8)).write(toFile: path, atomically: false, encoding: .utf8)
  }

  @Test(arguments: 0..<tampering.count) func tamperingIsReported(_ index: Int) async throws {
    let (name, tamper, expected) = Self.tampering[index]
    let (_, watch) = try await Self.historyOfThree()
    try tamper(watch.history.path, watch.history.headPath)
    let read = try watch.history.read()
    #expect(!read.isIntact, "\(name)")
    #expect(read.problems.contains { $0.hasPrefix(expected) }, "\(name): \(read.problems)")
  }

  /// A process killed between appending an entry and rewriting `history.head` leaves the head
  /// behind: the next append continues the chain from the file's last entry, and the history
  /// stays intact (it said "changed other than by tsapply" after a `kill -9` of an apply).
  @Test func anAppendAfterAHeadLeftBehindKeepsTheChain() async throws {
    let (_, watch) = try await Self.historyOfThree()
    let history = watch.history
    let count = try history.read().entries.count
    let behind = try Data(contentsOf: URL(fileURLWithPath: history.headPath))
    let template = try #require(try history.read().entries.last)
    try history.append(template)
    try behind.write(to: URL(fileURLWithPath: history.headPath))  // as if killed before the head was written
    let next = try history.append(template)
    #expect(next.sequence == count + 2)
    let read = try history.read()
    #expect(read.isIntact, "\(read.problems)")
    #expect(read.entries.map(\.sequence) == Array(1...(count + 2)))
  }

  @Test func theFirstChangeAfterATimeIsTheOneRestoreAtGoesBackThrough() throws {
    func entry(_ sequence: Int, _ time: String, backup: String?) -> HistoryEntry {
      HistoryEntry(sequence: sequence, time: time, kind: "apply", user: "u", host: "h", command: "c", device: "d", manifest: nil, commit: nil,
                   plan: "p", add: 0, change: 1, destroy: 0, result: "applied", error: nil, backup: backup, previous: "", hash: "")
    }
    let entries = [entry(1, "2026-12-02T09:00:00.000Z", backup: "a"), entry(2, "2026-12-02T10:00:00.000Z", backup: nil),
                   entry(3, "2026-12-02T11:00:00.000Z", backup: "c")]
    let at = { (text: String) in ApplyHistory.firstChange(after: ApplyHistory.time(text, now: Date())!, in: entries)?.sequence }
    #expect(at("2026-12-02T08:59:59Z") == 1)
    #expect(at("2026-12-02T09:00:00Z") == 3)
    #expect(at("2026-12-02T09:30:00+01:00") == 1)
    #expect(at("2026-12-02T09:30:00Z") == 3)
    #expect(at("2026-12-02") == 1)
    #expect(at("2026-12-03") == nil)
    let now = Date()
    #expect(abs(ApplyHistory.time("2h", now: now)!.timeIntervalSince(now) + 7200) < 0.001)
    #expect(ApplyHistory.time("yesterday", now: now) == nil && ApplyHistory.time("2026-13", now: now) == nil)
  }

  @Test func theCommitIsReadFromTheRepositoryHoldingTheManifest() throws {
    let root = try TSApplyBinary.temporaryDirectory().resolvingSymlinksInPath().path
    let commit = String(repeating: "ab", count: 20), other = String(repeating: "cd", count: 20)
    let cases: [(files: [String: String], manifest: String, expected: String?)] = [
      ([".git/HEAD": "ref: refs/heads/main\n", ".git/refs/heads/main": commit + "\n"], "a/watch.yaml", commit),
      ([".git/HEAD": "ref: refs/heads/main\n", ".git/packed-refs": "# pack-refs\n\(other) refs/heads/main\n"], "watch.yaml", other),
      ([".git/HEAD": commit + "\n"], "watch.yaml", commit),
      ([".git/HEAD": "ref: refs/heads/none\n"], "watch.yaml", nil),
      // A worktree: .git is a file naming its git directory, whose commondir has the refs.
      ([".git": "gitdir: main/.git/worktrees/wt\n", "main/.git/worktrees/wt/HEAD": "ref: refs/heads/wt\n",
        "main/.git/worktrees/wt/commondir": "../..\n", "main/.git/refs/heads/wt": commit + "\n"], "watch.yaml", commit),
      ([:], "watch.yaml", nil),
    ]
    for (index, (files, manifest, expected)) in cases.enumerated() {
      let dir = root + "/case\(index)"
      for (name, text) in files {
        try FileManager.default.createDirectory(atPath: ((dir + "/" + name) as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: dir + "/" + name, atomically: true, encoding: .utf8)
      }
      #expect(GitCommit.head(of: dir + "/" + manifest) == expected, "case \(index)")
    }
  }
}
