import Foundation
import Testing
import TSDevice
import TSModel
import TSTestSupport
@testable import TSMonitor

/// `--on-sos` splitting: the documented rules, table by table, and what is never special.
@Suite struct CommandWordsTests {
  struct Case: Sendable, CustomTestStringConvertible {
    var text: String
    var words: [String]
    var testDescription: String { text.debugDescription }
  }

  static let cases: [Case] = [
    Case(text: "notify", words: ["notify"]),
    Case(text: "  notify   --urgent\tnow \n", words: ["notify", "--urgent", "now"]),
    Case(text: "say 'SOS on the watch'", words: ["say", "SOS on the watch"]),
    Case(text: #"say "SOS on \"Mum's\" watch""#, words: ["say", #"SOS on "Mum's" watch"#]),
    Case(text: #"say "a\\b" "c\d""#, words: ["say", #"a\b"#, #"c\d"#]),
    Case(text: #"say a\ b \'x"#, words: ["say", "a b", "'x"]),
    Case(text: "say --name=\"Sam Roe\" ''", words: ["say", "--name=Sam Roe", ""]),
    Case(text: "say $(rm -rf /) `id` $HOME ~ * ; | & > out # no comment",
         words: ["say", "$(rm", "-rf", "/)", "`id`", "$HOME", "~", "*", ";", "|", "&", ">", "out", "#", "no", "comment"]),
    Case(text: "say '$(touch pwned)'", words: ["say", "$(touch pwned)"]),
    Case(text: "say 'line one\nline two'", words: ["say", "line one\nline two"]),
    Case(text: "a'b'\"c\"d", words: ["abcd"]),
  ]

  @Test(arguments: cases)
  func splitsAsDocumented(_ example: Case) throws {
    #expect(try CommandWords.split(example.text) == example.words)
  }

  @Test(arguments: [
    ("", CommandWords.Problem.empty),
    ("   \n", .empty),
    ("say 'open", .unterminatedQuote("'", offset: 4)),
    ("say \"open", .unterminatedQuote("\"", offset: 4)),
    ("say \"x\\\"", .unterminatedQuote("\"", offset: 4)),
    ("say x\\", .trailingBackslash),
  ])
  func refusesWhatCannotBeSplit(_ text: String, _ problem: CommandWords.Problem) {
    #expect(throws: problem) { try CommandWords.split(text) }
  }
}

/// The webhook signature: HMAC-SHA256 (RFC 4231 vectors) and what a receiver's check refuses.
@Suite struct WebhookSignatureTests {
  @Test func matchesRFC4231() {
    // RFC 4231 test case 2.
    #expect(SHA256Digest.hmacHex(of: Array("what do ya want for nothing?".utf8), key: Array("Jefe".utf8))
            == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    // Test case 6: a key longer than the block size.
    #expect(SHA256Digest.hmacHex(of: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
                                 key: [UInt8](repeating: 0xaa, count: 131))
            == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
  }

  @Test func receiverTellsARightSignatureFromAWrongOne() {
    let body = Array(#"{"id":"x","kind":"sos"}"#.utf8), secret = Array("s3cret".utf8)
    let header = WebhookSignature.value(body: body, secret: secret)
    #expect(header.hasPrefix("sha256=") && header.count == 7 + 64)
    #expect(WebhookSignature.verify(header, body: body, secret: secret))
    #expect(WebhookSignature.verify(header.uppercased().replacingOccurrences(of: "SHA256=", with: "sha256="), body: body, secret: secret))
    #expect(!WebhookSignature.verify(header, body: body, secret: Array("wrong".utf8)), "a wrong secret is detectable")
    #expect(!WebhookSignature.verify(header, body: body + [0x20], secret: secret), "a changed body is detectable")
    #expect(!WebhookSignature.verify(String(header.dropLast()), body: body, secret: secret))
    #expect(!WebhookSignature.verify(header.replacingOccurrences(of: "sha256=", with: "sha1="), body: body, secret: secret))
    #expect(!WebhookSignature.verify("", body: body, secret: secret))
    #expect(SHA256Digest.hmacHex(of: [], key: Array("k".utf8)).count == 64, "an empty body is signed too")
  }
}

/// Backoff waits and the hourly heal budget.
@Suite struct BackoffAndBudgetTests {
  /// The SOS delivery schedule, walked on a clock of its own (no test waits for it): whatever
  /// the outage and the jitter, no wait is over 30 s, so the first attempt after a receiver comes
  /// back starts within 30 s of its return, and — an attempt against a port that refuses taking
  /// well under the half second allowed here, one that succeeds another half second — the event
  /// is delivered within 31 s of the return. The outage of issue 21 (30 s) is in the table.
  @Test(arguments: [0.1, 1, 29.9, 30, 31, 61, 300, 3600, 86_400])
  func anSOSIsDeliveredWithin31SecondsOfTheReceiversReturn(_ outage: Double) {
    let failedAttempt = 0.5, deliveringAttempt = 0.5
    for random in [0.0, 0.37, 0.999] {
      var backoff = Backoff(.sosDelivery, random: { random })
      var start = 0.0
      while start < outage {  // attempts while the receiver is down fail
        let wait = Backoff.seconds(backoff.next())
        #expect(wait <= 30, "a wait of \(wait)s after attempt \(backoff.attempts)")
        start += failedAttempt + wait
      }
      #expect(start + deliveringAttempt - outage <= 31, "outage \(outage)s, jitter \(random): delivered \(start + deliveringAttempt - outage)s after the return")
    }
    #expect(Backoff.Policy.sosDelivery.maximum == .seconds(30))
    #expect(MonitorSettings(manifestPath: "/m.yaml", manifestName: "m.yaml").delivery == .sosDelivery, "the monitors deliver SOS by it")
  }

  @Test func waitsDoubleUpToTheMaximum() {
    var backoff = Backoff(Backoff.Policy(initial: .milliseconds(500), maximum: .seconds(3)), random: { 0 })
    #expect((0..<6).map { _ in backoff.next() } == [.milliseconds(500), .seconds(1), .seconds(2), .seconds(3), .seconds(3), .seconds(3)])
    backoff.reset()
    #expect(backoff.next() == .milliseconds(500))
    var jittered = Backoff(Backoff.Policy(initial: .seconds(1), maximum: .seconds(10), jitter: 0.5), random: { 0.5 })
    #expect(jittered.next() == .milliseconds(750), "jitter only shortens a wait")
    var huge = Backoff(Backoff.Policy(initial: .seconds(1), maximum: .seconds(60)), random: { 0 })
    for _ in 0..<1000 { _ = huge.next() }
    #expect(huge.next() == .seconds(60), "a long outage never overflows")
  }

  @Test func reconnectionIsTriedAtLeastAsOftenAsTheWatchIsRead() {
    #expect(MonitorSettings.reconnectPolicy(interval: .milliseconds(200)) == Backoff.Policy(initial: .milliseconds(200), maximum: .seconds(1)))
    #expect(MonitorSettings.reconnectPolicy(interval: .seconds(300)) == Backoff.Policy(initial: .seconds(1), maximum: .seconds(300)))
    #expect(MonitorSettings.reconnectPolicy(interval: .seconds(7200)).maximum == .seconds(300))
  }

  @Test func budgetIsASlidingHour() {
    let start = Date(timeIntervalSince1970: 1_000_000)
    var budget = ApplyBudget(limit: 2)
    #expect(budget.allows(at: start))
    budget.record(at: start)
    budget.record(at: start.addingTimeInterval(600))
    #expect(!budget.allows(at: start.addingTimeInterval(1200)))
    #expect(budget.used(at: start.addingTimeInterval(3599)) == 2)
    #expect(budget.allows(at: start.addingTimeInterval(3600)), "the first apply left the window")
    #expect(budget.used(at: start.addingTimeInterval(4200)) == 0)
  }

  /// The spent budget says how many heals worked and how many failed: a heal that keeps failing
  /// is not "healed N times".
  @Test(arguments: [
    ([false, false, false], "healed 3 times in the last hour"),
    ([false], "healed 1 time in the last hour"),
    ([false, true, true], "healed 1 time in the last hour, and 2 heals failed"),
    ([true, true], "2 heals failed in the last hour"),
    ([true], "1 heal failed in the last hour"),
  ])
  func theSpentBudgetSaysWhichHealsFailed(failures: [Bool], words: String) {
    let start = Date(timeIntervalSince1970: 1_000_000)
    var budget = ApplyBudget(limit: failures.count)
    for (index, failed) in failures.enumerated() { budget.record(at: start.addingTimeInterval(Double(index) * 60), failed: failed) }
    let now = start.addingTimeInterval(600)
    #expect(!budget.allows(at: now))
    #expect(budget.failed(at: now) == failures.filter { $0 }.count)
    #expect(budget.spentWords(at: now) == words)
  }
}

/// Events: one line of JSON with sorted keys whatever the text holds, and a human line with
/// control characters escaped.
@Suite struct EventTests {
  @Test func jsonLineIsOneLineWithEveryCommonKey() throws {
    let time = Date(timeIntervalSince1970: 1_796_117_400.123)
    let event = MonitorEvent(time: time, watch: "sim:/tmp/a\nb\u{2028}c/device.json", kind: .sos,
                             message: "SOS \u{1B}[31m pressed", fields: ["profile": .string("fit")])
    let line = event.jsonLine
    #expect(!line.contains("\n") && !line.contains("\u{2028}"))
    let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
    #expect(object["watch"] == "sim:/tmp/a\nb\u{2028}c/device.json")
    #expect(object["time"] == "2026-12-01T09:30:00.123Z")
    #expect(object["kind"] == "sos" && object["id"] == event.id && object["profile"] == "fit")
    #expect(line.hasPrefix(#"{"id":"#), "keys are sorted")
    #expect(event.humanLine.hasSuffix("SOS      SOS \\e[31m pressed"))
  }

  /// The compact line is byte for byte what `JSONEncoder` writes (sorted keys, unescaped
  /// slashes, U+2028/U+2029 escaped after), for keys and text that need sorting or escaping care.
  @Test(arguments: [
    JSONValue.object(["b": .integer(-2), "a_b": .bool(true), "aB": .null, "Ab": .array([]), "a10": .object([:]), "a2": .string("/"),
                      "é": .string("e\u{301}"), "z": .array([.string("q\"\\\t\n\r\u{8}\u{c}\u{1}\u{1f}\u{7f}"), .integer(0)])]),
    JSONValue.array([.string("line\u{2028}sep\u{2029}para"), .object(["phoneNum": .string("+1555"), "name": .string("½ 😀")])]),
    JSONValue.string(""),
    // Whole numbers are written as the integers they are; a fraction anywhere goes through the encoder.
    JSONValue.object(["interval_seconds": .number(300), "z": .number(0), "n": .number(-2), "big": .number(9_007_199_254_740_992),
                      "list": .array([.number(1), .object(["deep": .number(7)])])]),
    JSONValue.object(["offline_seconds": .number(12.5), "interval_seconds": .number(300)]),
    JSONValue.array([.number(1e300), .number(-0.25)]),
  ])
  func compactIsWhatTheEncoderWrites(value: JSONValue) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    let expected = String(decoding: try encoder.encode(value), as: UTF8.self)
      .replacingOccurrences(of: "\u{2028}", with: "\\u2028").replacingOccurrences(of: "\u{2029}", with: "\\u2029")
    #expect(MonitorEvent.compact(value) == expected)
  }

  @Test func idsAreUniqueAndSortByTime() {
    let early = Date(timeIntervalSince1970: 1_796_117_400), late = early.addingTimeInterval(0.001)
    let ids = (0..<1000).map { MonitorEvent.newID(time: $0 < 500 ? early : late) }
    #expect(Set(ids).count == 1000)
    #expect(ids[0] < ids[999])
    #expect(ids[0].hasPrefix("20261201T093000.000Z-") && ids[0].count == 21 + 16)
    #expect(ids.allSatisfy(Outbox.isSafeID))
  }
}

/// The outbox: entries survive a new instance (a restart), are 0600 in a 0700 folder, record
/// each notifier's success, and anything unreadable is named and left alone.
@Suite struct OutboxTests {
  @Test func entriesSurviveARestartAndRecordEachNotifier() throws {
    let directory = try temporaryDirectory() + "/outbox"
    let outbox = Outbox(directory: directory)
    #expect(outbox.entries().entries.isEmpty, "a missing folder is an empty outbox")
    try outbox.put(Outbox.Entry(id: "20261201T101000.000Z-0000000000000002", body: #"{"b":2}"#))
    try outbox.put(Outbox.Entry(id: "20261201T101000.000Z-0000000000000001", body: #"{"a":1}"#))
    try outbox.markDelivered("20261201T101000.000Z-0000000000000001", by: "webhook x")
    try outbox.markDelivered("20261201T101000.000Z-0000000000000001", by: "webhook x")
    let again = Outbox(directory: directory).entries()
    #expect(again.unreadable.isEmpty)
    #expect(again.entries.map(\.body) == [#"{"a":1}"#, #"{"b":2}"#], "oldest first")
    #expect(again.entries[0].delivered == ["webhook x"])
    #expect(try mode(directory) == 0o700)
    #expect(try mode(outbox.path(again.entries[0].id)) == 0o600)
    outbox.remove(again.entries[0].id)
    #expect(Outbox(directory: directory).entries().entries.map(\.body) == [#"{"b":2}"#])
  }

  @Test func unreadableFilesAreNamedAndLeftAlone() throws {
    let directory = try temporaryDirectory()
    let outbox = Outbox(directory: directory)
    try Data("not json".utf8).write(to: URL(fileURLWithPath: directory + "/bad.json"))
    try Data(#"{"format":"other","version":1,"id":"x","body":"","delivered":[]}"#.utf8)
      .write(to: URL(fileURLWithPath: directory + "/x.json"))
    try Data("ignored".utf8).write(to: URL(fileURLWithPath: directory + "/notes.txt"))
    let found = outbox.entries()
    #expect(found.entries.isEmpty)
    #expect(found.unreadable.map { ($0 as NSString).lastPathComponent } == ["bad.json", "x.json"])
    #expect(FileManager.default.fileExists(atPath: directory + "/bad.json"))
    #expect(throws: (any Error).self) { try outbox.put(Outbox.Entry(id: "../escape", body: "{}")) }
    #expect(outbox.entry("../x") == nil)
  }
}

/// An existing folder under the system's temporary directory, for one test (`TestFolders`:
/// removed when the test process exits).
func temporaryDirectory() throws -> String { try TestFolders.make("tsmonitor") }

/// The permission bits of `path`.
func mode(_ path: String) throws -> Int {
  try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
}

/// docs/monitor.md's listener table is what the monitor does on each platform of the one
/// platform table.
@Suite struct ListenerTableDocTests {
  @Test func theDocsTableMatchesThePlatformTable() throws {
    let page = try String(contentsOf: TSApplyBinary.packageRoot.appendingPathComponent("docs/monitor.md"), encoding: .utf8)
    let begin = try #require(page.range(of: "<!-- monitor-listeners:begin -->\n"))
    let end = try #require(page.range(of: "<!-- monitor-listeners:end -->"))
    let rows = page[begin.upperBound..<end.lowerBound].split(separator: "\n").dropFirst(2).map { row in
      row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "`", with: "") }
    }
    let expected = PlatformTable.all.map { capabilities -> [String] in
      let served = Monitor.listeners(for: capabilities.contacts)
      return [capabilities.profile] + [Monitor.Listener.contacts, .emergency, .sos].map { served[$0] ?? "?" }
    }
    #expect(rows == expected)
  }
}

/// `monitor-events.json`: the last event handled and the SOS numbering survive a restart; a file
/// that cannot be used is named and replaced, never trusted.
@Suite struct HandledEventsTests {
  @Test func theRecordSurvivesARestartAndNumbersSOSInOrder() throws {
    let path = try temporaryDirectory() + "/monitor-events.json"
    let first = HandledEvents(path: path, watch: "sim:/w.json")
    #expect(first.problem == nil && first.lastEventID == nil)
    let one = first.nextSOS()
    #expect(first.nextSOS() == one, "nothing is used up until it is recorded")
    try first.handled(DeviceEventID("7"), sequence: one.sequence)
    try first.handled(DeviceEventID("8"))
    #expect(((try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions]) as? Int) == 0o600)

    let restarted = HandledEvents(path: path, watch: "sim:/w.json")
    #expect(restarted.lastEventID == DeviceEventID("8"))
    let two = restarted.nextSOS()
    #expect(one.sequence == 1 && two.sequence == 2)
    #expect(two.id.hasPrefix("sos-") && two.id.hasSuffix("-0000000002") && two.id.dropLast(10) == one.id.dropLast(10))
    #expect(Outbox.isSafeID(two.id))
    #expect(HandledEvents(path: try temporaryDirectory() + "/other.json", watch: "sim:/w.json").nextSOS().id != one.id,
            "another file (one lost and made again) never reuses an id")

    // A restart's resume point that is the one read is not written again (no fsync per watch
    // at every start); a new one is, and so is a fresh record's first.
    let inode = { (try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber]) as? Int }
    let before = try inode()
    try restarted.handled(DeviceEventID("8"))
    #expect(try inode() == before, "the same resume point is not written again")
    try restarted.handled(DeviceEventID("9"))
    #expect(try inode() != before)
    #expect(HandledEvents(path: path, watch: "sim:/w.json").lastEventID == DeviceEventID("9"))
    let freshPath = try temporaryDirectory() + "/fresh.json"
    try HandledEvents(path: freshPath, watch: "sim:/w.json").handled(nil, sequence: 0)
    #expect(FileManager.default.fileExists(atPath: freshPath), "a fresh record is written at its first resume point")
  }

  /// A listener's resume point goes to disk with the record's next write, not with one of its
  /// own: a monitor's first start writes each watch's record twice (when it first listened,
  /// then when it first read the watch), not three times. A handled event is on disk at once.
  @Test func aResumePointIsWrittenWithTheNextWrite() throws {
    let path = try temporaryDirectory() + "/monitor-events.json"
    let record = HandledEvents(path: path, watch: "sim:/w.json")
    let since = try record.listeningSince(now: Date(timeIntervalSince1970: 1_800_000_000))
    let inode = { (try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber]) as? Int }
    let first = try inode()
    record.resumeAfter(DeviceEventID("4"))
    #expect(record.lastEventID == DeviceEventID("4"))
    #expect(try inode() == first, "the resume point alone is not written")
    #expect(HandledEvents(path: path, watch: "sim:/w.json").lastEventID == nil, "a restart now resumes from the point before")
    try record.seen(Date(timeIntervalSince1970: 1_800_000_001), sosAtRisk: false)
    let restarted = HandledEvents(path: path, watch: "sim:/w.json")
    #expect(restarted.lastEventID == DeviceEventID("4") && restarted.current.lastSeen != nil)
    #expect(try restarted.listeningSince(now: Date()) == since)

    // The resume point a restart read is not written again; a handled event is written and kept.
    let written = try inode()
    restarted.resumeAfter(DeviceEventID("4"))
    try restarted.seen(Date(timeIntervalSince1970: 1_800_000_002), sosAtRisk: false)
    #expect(try inode() == written, "nothing changed: nothing written")
    try restarted.handled(DeviceEventID("5"))
    #expect(HandledEvents(path: path, watch: "sim:/w.json").lastEventID == DeviceEventID("5"))
  }

  /// The newest presses handled are kept across restarts, each once, oldest dropped beyond
  /// `keptPresses`; a record written before they were kept reads as holding none.
  @Test func theNewestSOSPressesHandledAreKeptBoundedAndOnce() throws {
    let path = try temporaryDirectory() + "/agent-events.json"
    let record = HandledEvents(path: path, watch: "sim:/w.json")
    let presses = (1...(HandledEvents.keptPresses + 3)).map {
      HandledEvents.Press(id: "sos-ab-" + String(format: "%010d", $0), sequence: $0, time: "2026-12-05T06:00:\(String(format: "%02d", $0 % 60))Z")
    }
    for press in presses { try record.handled(nil, sequence: press.sequence, press: press) }
    try record.handled(nil, press: presses.last!)
    let restarted = HandledEvents(path: path, watch: "sim:/w.json")
    #expect(restarted.recentPresses == Array(presses.suffix(HandledEvents.keptPresses)))
    #expect(restarted.hasHandled(press: presses.last!.id) && !restarted.hasHandled(press: presses[0].id))
    #expect(restarted.current.sequence == presses.count)

    let older = try temporaryDirectory() + "/monitor-events.json"
    try #"{"epoch":"ab","format":"tsapply-monitor-events","lastEventID":"7","sequence":3,"version":1,"watch":"sim:/w.json"}"#
      .write(toFile: older, atomically: true, encoding: .utf8)
    let before = HandledEvents(path: older, watch: "sim:/w.json")
    #expect(before.problem == nil && before.recentPresses.isEmpty && before.lastEventID == DeviceEventID("7"))
  }

  @Test(arguments: [
    ("not json", "it does not hold the events a monitor handled"),
    (String(repeating: " ", count: 70_000), "it is larger than 64 KiB"),
    (#"{"format":"tsapply-monitor-events","version":1,"watch":"sim:/other.json","epoch":"ab","sequence":3}"#,
     "it is not a record of events handled for sim:/w.json"),
  ])
  func aFileThatCannotBeUsedIsNamedAndStartsAfresh(_ contents: String, _ problem: String) throws {
    let path = try temporaryDirectory() + "/monitor-events.json"
    try contents.write(toFile: path, atomically: true, encoding: .utf8)
    let handled = HandledEvents(path: path, watch: "sim:/w.json")
    #expect(handled.problem == problem)
    #expect(handled.lastEventID == nil && handled.nextSOS().sequence == 1)
  }
}
