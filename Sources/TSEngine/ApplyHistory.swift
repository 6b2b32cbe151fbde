import Foundation
import TSManifest
import TSModel
import TSPlan

/// One apply or restore in a watch's history (docs/apply.md "History"): when, who, from which
/// manifest and commit, the plan's digest, how it ended and the backup taken before it.
///
/// One line of `history.jsonl` each, keys sorted:
/// ```json
/// {"add":0,"backup":"/…/backups/20261202T093000.123Z.json","change":1,"command":"tsapply apply watch.yaml",
///  "commit":"3f1c…","destroy":0,"device":"sim:/…/watch.json","format_version":1,"hash":"…","host":"ward-pc",
///  "kind":"apply","manifest":"/…/watch.yaml","plan":"9a0e…","previous":"…","result":"applied","sequence":1,
///  "time":"2026-12-02T09:30:00.123Z","user":"ana"}
/// ```
/// `hash` is the SHA-256 of the line with `hash` empty; `previous` is the hash of the line
/// before (64 zeros for the first), so an edited, removed, inserted or reordered line breaks
/// the chain (`ApplyHistory.read`).
public struct HistoryEntry: Codable, Sendable, Equatable {
  /// `1`.
  public var formatVersion = 1
  /// Its place in the history, from 1.
  public var sequence: Int
  /// When the apply ended (for `started`: when its backup was taken), ISO 8601 UTC with milliseconds.
  public var time: String
  /// `apply` (a manifest, a saved plan, a heal, an agent's revision) or `restore` (a backup).
  public var kind: String
  /// The login name that ran it (`Operator.user`).
  public var user: String
  /// The machine it ran on.
  public var host: String
  /// The command that ran it (`ApplyOptions.command`: `tsapply apply watch.yaml`, `tsapply monitor …`).
  public var command: String
  /// The watch (`Watch.identity`).
  public var device: String
  /// The manifest's absolute path, when it came from a file.
  public var manifest: String?
  /// The commit checked out in the manifest's git repository (`GitCommit.head`), when it is in one.
  public var commit: String?
  /// The plan's digest (`ApplyHistory.digest(of:)`): equal plans, equal digests.
  public var plan: String
  /// Resources the plan adds, changes and destroys: what was planned, not what was written
  /// (`reached`).
  public var add: Int, change: Int, destroy: Int
  /// Of the plan's changes, those that reached the watch, counted as `add`, `change` and
  /// `destroy` are: all of them for `applied` (and for a `failed` verification, every write
  /// having been answered), those before the step that failed for `failed` or `interrupted`.
  /// `nil` in a `started` entry, and in entries written before tsapply kept it (what reached
  /// the watch is not known for those).
  public var reached: PlanCounts?
  /// The resources of the step that failed (`reminder.drinking`, `contacts`): not written.
  /// `nil` when no step failed.
  public var failedAt: [String]?
  /// The resources whose write's answer was lost and whose list could not be read back as
  /// either what was sent or what was there (`PartialApplyFailure.Cause.outcomeUnknown`): the
  /// watch may or may not hold them. `nil` when there are none.
  public var unknown: [String]?
  /// `started` (its backup was taken; written before the first write), then `applied`,
  /// `failed` (something may have been written: see the backup) or `interrupted`.
  public var result: String

  /// The `result` of the entry an apply writes before its first write.
  public static let started = "started"
  /// Why it failed, in words.
  public var error: String?
  /// The backup of the state before it (absolute path), which `restore --at` goes back to.
  public var backup: String?
  /// The hash of the entry before (64 zeros for the first).
  public var previous: String
  /// The SHA-256 of this line with `hash` empty.
  public var hash: String

  /// An entry of these parts (`ApplyHistory.append` fills in `sequence`, `previous` and `hash`).
  public init(sequence: Int = 0, time: String, kind: String, user: String, host: String, command: String, device: String,
              manifest: String?, commit: String?, plan: String, add: Int, change: Int, destroy: Int, result: String,
              error: String?, backup: String?, previous: String = "", hash: String = "",
              reached: PlanCounts? = nil, failedAt: [String]? = nil, unknown: [String]? = nil) {
    self.sequence = sequence
    self.time = time
    self.kind = kind
    self.user = user
    self.host = host
    self.command = command
    self.device = device
    self.manifest = manifest
    self.commit = commit
    self.plan = plan
    self.add = add
    self.change = change
    self.destroy = destroy
    self.result = result
    self.error = error
    self.backup = backup
    self.previous = previous
    self.hash = hash
    self.reached = reached
    self.failedAt = failedAt
    self.unknown = unknown
  }

  enum CodingKeys: String, CodingKey {
    case formatVersion = "format_version", sequence, time, kind, user, host, command, device, manifest, commit, plan
    case add, change, destroy, reached, failedAt = "failed_at", unknown, result, error, backup, previous, hash
  }

  /// The Changes column of `tsapply history`: the plan's counts (`+0 ~2 -0`) for an apply that
  /// applied; for one that failed or was interrupted, how many of the plan's changes reached
  /// the watch, with the step that failed (`1 of 4 applied (+0 ~1 -0); failed: contacts`, a
  /// write whose outcome is unknown as `unknown: …`); for
  /// one that never ended, or an entry from before tsapply kept what reached the watch,
  /// `planned +0 ~2 -0` (what reached it is not known: check with `tsapply drift`).
  public var changesText: String {
    let planned = "+\(add) ~\(change) -\(destroy)"
    // Applied and verified: every change reached the watch.
    if result == "applied" { return planned }
    guard let reached, result != Self.started else { return "planned " + planned }
    let total = add + change + destroy, done = reached.add + reached.change + reached.destroy
    var text = "\(done) of \(total) applied"
    if done > 0 { text += " (+\(reached.add) ~\(reached.change) -\(reached.destroy))" }
    if let failedAt, !failedAt.isEmpty { text += "; failed: " + failedAt.joined(separator: ", ") }
    if let unknown, !unknown.isEmpty { text += "; unknown: " + unknown.joined(separator: ", ") }
    return text
  }

  /// The hash this entry should have: of its line with `hash` empty.
  public var computedHash: String {
    var unhashed = self
    unhashed.hash = ""
    return SHA256Digest.hex(of: Array(canonicalJSON(unhashed, pretty: false).utf8))
  }

  /// Whether the apply or restore it ended is known to have written to the watch: it `applied`,
  /// or some of its plan reached the watch (`reached`), or a write's outcome is unknown. A
  /// `started` entry (not ended) and a failed one from before tsapply kept `reached` are not known to.
  public var wrote: Bool {
    if result == "applied" { return true }
    guard result != Self.started, let reached else { return false }
    return reached.add + reached.change + reached.destroy > 0 || !(unknown ?? []).isEmpty
  }

  /// `time` as a date, `nil` when it is not one.
  public var date: Date? { ApplyHistory.parseTime(time) }
}

/// A watch's apply history: `history.jsonl` in its records folder (`WatchHome`), one
/// `HistoryEntry` a line, only ever appended to (`SecureFile.append`, 0600), chained by hashes,
/// with `history.head` (the count and the last hash, rewritten atomically after each append) so
/// that lines cut off the end are noticed too. Appends happen under the watch's lock (the
/// engine appends while it holds it), so entries never interleave.
///
/// The chain detects changes made to the file by anything but tsapply; it is not a signature:
/// whoever can write the records folder can write a new, consistent history (docs/apply.md
/// "History").
public struct ApplyHistory: Sendable {
  /// `history.jsonl`.
  public var path: String
  /// `history.head`.
  public var headPath: String

  /// The largest history read: 64 MiB (some 150,000 entries).
  public static let maxBytes = 64 << 20
  /// The hash before the first entry.
  public static let origin = String(repeating: "0", count: 64)

  /// The history in the records folder `home`.
  public init(home: WatchHome) {
    path = home.directory + "/history.jsonl"
    headPath = home.directory + "/history.head"
  }

  /// What `history.head` holds.
  struct Head: Codable, Equatable {
    var count: Int
    var hash: String
  }

  /// What reading the history found: its entries (those that could be read), and every
  /// sign that it was changed other than by appending, in words with the line.
  public struct Read: Sendable {
    /// The entries, in order.
    public var entries: [HistoryEntry]
    /// Where the chain is broken: `line 3 was changed after it was written (its hash does not match)`.
    public var problems: [String]
    /// Whether the history is intact.
    public var isIntact: Bool { problems.isEmpty }

    /// A history of `entries` with `problems` (as `read()` finds them).
    public init(entries: [HistoryEntry], problems: [String]) {
      self.entries = entries
      self.problems = problems
    }
  }

  /// Reads and checks the history; no history is an empty, intact one.
  /// - Throws: `SecureFileError` when it is there but cannot be read (or is over `maxBytes`).
  public func read() throws(SecureFileError) -> Read {
    guard SecureFile.exists(path) else {
      let head = readHead()
      return Read(entries: [], problems: head.map { ["the history file is missing, but history.head says it had \($0.count) entries"] } ?? [])
    }
    let bytes: [UInt8]
    switch ManifestSource.file(path: path, displayName: path).read(maxBytes: Self.maxBytes, noun: "apply history") {
    case .success(let read): bytes = read
    case .failure(let problem): throw SecureFileError(path: path, reason: problem.description)
    }
    var entries: [HistoryEntry] = []
    var problems: [String] = []
    var previous = Self.origin
    let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
    for (index, line) in lines.enumerated() {
      let number = index + 1
      if line.isEmpty {
        if index != lines.count - 1 { problems.append("line \(number) is empty") }
        continue
      }
      guard let entry = try? JSONDecoder().decode(HistoryEntry.self, from: Data(line)) else {
        problems.append("line \(number) is not a history entry")
        continue
      }
      if entry.computedHash != entry.hash {
        problems.append("line \(number) (entry \(entry.sequence)) was changed after it was written: its hash does not match")
      }
      if entry.previous != previous {
        problems.append("line \(number) (entry \(entry.sequence)) does not follow the entry before it: an entry was removed, inserted or moved")
      }
      if entry.sequence != entries.count + 1 {
        problems.append("line \(number) is entry \(entry.sequence), expected \(entries.count + 1)")
      }
      previous = entry.hash
      entries.append(entry)
    }
    if lines.last?.isEmpty == false { problems.append("the last line is cut short (no line end)") }
    if let head = readHead() {
      if head.count > entries.count {
        problems.append("history.head says there were \(head.count) entries, the file has \(entries.count): entries were removed from its end")
      } else if head.count == entries.count, head.hash != previous {
        problems.append("the last entry is not the one history.head recorded")
      }
    } else if !entries.isEmpty {
      problems.append("history.head is missing or unreadable")
    }
    return Read(entries: entries, problems: problems)
  }

  /// Appends `entry` (its `sequence`, `previous` and `hash` filled in here) and updates the head.
  /// - Throws: `SecureFileError` when either cannot be written.
  @discardableResult
  public func append(_ entry: HistoryEntry) throws(SecureFileError) -> HistoryEntry {
    var entry = entry
    let head = currentHead() ?? Head(count: 0, hash: Self.origin)
    entry.sequence = head.count + 1
    entry.previous = head.hash
    entry.hash = entry.computedHash
    try SecureFile.append(Array((canonicalJSON(entry, pretty: false) + "\n").utf8), to: path)
    try SecureFile.write(Array(canonicalJSON(Head(count: entry.sequence, hash: entry.hash)).utf8), to: headPath)
    return entry
  }

  /// How many entries the history has, as `history.head` says (one small read); 0 without one.
  public var count: Int { readHead()?.count ?? 0 }

  private func readHead() -> Head? {
    guard let bytes = try? ManifestSource.file(path: headPath, displayName: headPath)
      .read(maxBytes: 4096, noun: "history head").get() else { return nil }
    return try? JSONDecoder().decode(Head.self, from: Data(bytes))
  }

  /// `head` advanced over the entries at the file's end that follow it in the chain: a process
  /// killed between appending an entry and rewriting the head (`kill -9` of an apply or an agent)
  /// leaves the head one entry behind, and numbering the next entry from it would break the
  /// chain — the history would then say it was changed by something other than tsapply. Only
  /// entries whose hash is right and that chain from the head are taken (an edit of the file is
  /// still found by `read()`); the last 256 KiB of the file are read, bounded.
  private func catchingUp(_ head: Head) -> Head {
    guard let handle = FileHandle(forReadingAtPath: path) else { return head }
    defer { try? handle.close() }
    guard let size = try? handle.seekToEnd(), size > 0 else { return head }
    let start = size > 256 << 10 ? size - (256 << 10) : 0
    guard (try? handle.seek(toOffset: start)) != nil, let data = try? handle.readToEnd() else { return head }
    var lines = Array(data).split(separator: UInt8(ascii: "\n"))
    if start > 0, !lines.isEmpty { lines.removeFirst() }  // cut by the window
    var current = head
    for line in lines {
      guard let entry = try? JSONDecoder().decode(HistoryEntry.self, from: Data(line)),
            entry.sequence == current.count + 1, entry.previous == current.hash, entry.computedHash == entry.hash else { continue }
      current = Head(count: entry.sequence, hash: entry.hash)
    }
    return current
  }

  /// The last entry of the file (when the head is missing).
  private func lastEntry() -> HistoryEntry? { (try? read())?.entries.last }

  /// The head as the history's end gives it: `history.head` caught up over entries appended
  /// after it, else (no head) the last entry's; `nil` for an empty history.
  private func currentHead() -> Head? {
    readHead().map(catchingUp) ?? lastEntry().map { Head(count: $0.sequence, hash: $0.hash) }
  }

  /// The `sequence` of the last entry, from the head (caught up as `append` does) without
  /// reading the whole history; `nil` for an empty history.
  public var lastSequence: Int? { currentHead().flatMap { $0.count > 0 ? $0.count : nil } }

  /// The digest of `plan`'s changes: 16 hex digits of the SHA-256 of their JSON
  /// (`JSONPlanRenderer`, unredacted).
  public static func digest(of plan: Plan) -> String {
    String(SHA256Digest.hex(of: Array(canonicalJSON(JSONPlanRenderer.object(plan, redact: false)["resource_changes"] ?? .null, pretty: false).utf8)).prefix(16))
  }

  /// `date` as ISO 8601 UTC with milliseconds: `2026-12-02T09:30:00.123Z`.
  public static func timeText(_ date: Date) -> String {
    formatterLock.withLock { formatter.string(from: date) }
  }

  /// A time in the history's form, or any ISO 8601 time with seconds (`Z` or an offset).
  public static func parseTime(_ text: String) -> Date? { InternetTime.date(text) }

  /// The time `text` names for `restore --at`: an ISO 8601 time (`2026-12-02T09:30:00Z`, an
  /// offset instead of `Z`, fractional seconds allowed), a UTC day (`2026-12-02`, its start), or
  /// a duration before `now` (`90m`, `2h`, `DurationText`); `nil` when it is none of these.
  public static func time(_ text: String, now: Date) -> Date? {
    if let date = parseTime(text) { return date }
    if let duration = DurationText.parse(text) { return now.addingTimeInterval(-(Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)) }
    let parts = text.split(separator: "-", omittingEmptySubsequences: false)
    guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2 else { return nil }
    return parseTime(text + "T00:00:00Z")
  }

  private static let formatterLock = NSLock()
  nonisolated(unsafe) private static let formatter: ISO8601DateFormatter = {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return formatter
  }()

  /// The entry `restore --at time` goes back through: the first apply or restore after `time`
  /// that took a backup (the state before it). `nil` when nothing was applied after `time`.
  public static func firstChange(after time: Date, in entries: [HistoryEntry]) -> HistoryEntry? {
    entries.first { entry in entry.backup != nil && (entry.date.map { $0 > time } ?? false) }
  }
}

/// The commit a manifest's git repository has checked out, read from the repository's files
/// (`.git/HEAD`, the ref it names, `packed-refs`; a worktree's or submodule's `.git` file and
/// `commondir` followed), without running git. Every file read is bounded.
public enum GitCommit {
  /// The 40-hex commit of the repository holding `file` (an absolute path), or `nil` when it
  /// is in none, or HEAD names a branch with no commit yet.
  public static func head(of file: String) -> String? {
    var directory = (file as NSString).deletingLastPathComponent
    while !directory.isEmpty {
      let dotGit = directory + "/.git"
      var isDirectory: ObjCBool = false
      if FileManager.default.fileExists(atPath: dotGit, isDirectory: &isDirectory) {
        if isDirectory.boolValue { return commit(gitDirectory: dotGit) }
        guard let text = small(dotGit), text.hasPrefix("gitdir:") else { return nil }
        let target = text.dropFirst("gitdir:".count).trimmingCharacters(in: .whitespacesAndNewlines)
        return commit(gitDirectory: target.hasPrefix("/") ? target : directory + "/" + target)
      }
      if directory == "/" { return nil }
      directory = (directory as NSString).deletingLastPathComponent
    }
    return nil
  }

  private static func commit(gitDirectory: String) -> String? {
    guard let head = small(gitDirectory + "/HEAD") else { return nil }
    let text = head.trimmingCharacters(in: .whitespacesAndNewlines)
    guard text.hasPrefix("ref:") else { return isCommit(text) ? text : nil }
    let ref = text.dropFirst(4).trimmingCharacters(in: .whitespaces)
    let common = small(gitDirectory + "/commondir").map { path -> String in
      let trimmed = path.trimmingCharacters(in: .whitespacesAndNewlines)
      return trimmed.hasPrefix("/") ? trimmed : gitDirectory + "/" + trimmed
    }
    for directory in [gitDirectory] + (common.map { [$0] } ?? []) {
      if let value = small(directory + "/" + ref)?.trimmingCharacters(in: .whitespacesAndNewlines), isCommit(value) { return value }
      if let packed = small(directory + "/packed-refs", limit: 16 << 20) {
        for line in packed.split(separator: "\n") where line.hasSuffix(" " + ref) {
          let value = String(line.prefix(40))
          if isCommit(value) { return value }
        }
      }
    }
    return nil
  }

  private static func isCommit(_ text: String) -> Bool {
    (text.count == 40 || text.count == 64) && text.allSatisfy { $0.isHexDigit && !$0.isUppercase }
  }

  private static func small(_ path: String, limit: Int = 4096) -> String? {
    guard let bytes = try? ManifestSource.file(path: path, displayName: path).read(maxBytes: limit, noun: "git file").get() else { return nil }
    return String(decoding: bytes, as: UTF8.self)
  }
}

extension ApplyHistory.Read {
  /// The entries as a table, oldest first: number, time, kind, result, changes
  /// (`HistoryEntry.changesText`: what reached the watch), who, commit
  /// (12 digits), plan digest, backup (file name), command; ending with a newline.
  /// One row per apply: a `started` entry is shown by the entry that ended it (the same
  /// backup), or as `unfinished` when none did (its process ended first).
  public var table: String {
    let ended = Set(entries.filter { $0.result != HistoryEntry.started }.compactMap(\.backup))
    let shown = entries.filter { $0.result != HistoryEntry.started || !ended.contains($0.backup ?? "") }
    let rows = shown.map { entry -> [String] in
      [String(entry.sequence), entry.time, entry.kind, entry.result == HistoryEntry.started ? "unfinished" : entry.result,
       entry.changesText,
       "\(entry.user)@\(entry.host)", entry.commit.map { String($0.prefix(12)) } ?? "-", entry.plan,
       entry.backup.map { ($0 as NSString).lastPathComponent } ?? "-", ControlCharacters.escaped(entry.command)]
    }
    return TextColumns.render(["#", "Time", "Kind", "Result", "Changes", "By", "Commit", "Plan", "Backup", "Command"], rows)
  }

  /// What a person reads first: `3 entries, chain intact.`, or the problems found.
  public var verdict: String {
    let count = "\(entries.count) entr\(entries.count == 1 ? "y" : "ies")"
    guard !isIntact else { return count + ", chain intact." }
    return count + "; THE HISTORY WAS CHANGED other than by tsapply:\n" + problems.map { "  - " + $0 }.joined(separator: "\n")
  }

  /// The history as JSON: `{intact, problems, entries}` (each entry as its line holds it).
  public var json: JSONValue {
    let entries = self.entries.compactMap { entry -> JSONValue? in
      guard let data = try? JSONEncoder().encode(entry) else { return nil }
      return try? JSONDecoder().decode(JSONValue.self, from: data)
    }
    return .object(["intact": .bool(isIntact), "problems": .array(problems.map(JSONValue.string)), "entries": .array(entries)])
  }
}
