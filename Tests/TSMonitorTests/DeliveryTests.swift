import Foundation
import Testing
import TSModel
import TSTestSupport
@testable import TSMonitor

/// A notifier that fails its first `failures` attempts and counts every attempt and success
/// (keeping the bodies it delivered).
final class ScriptedNotifier: Notifier, @unchecked Sendable {
  let key: String
  var name: String { key }
  private let lock = NSLock()
  private var failuresLeft: Int
  private(set) var attempts = 0
  private(set) var successes: [String] = []
  private(set) var numbers: [Int] = []
  private var bodies: [String] = []

  init(_ key: String, failures: Int) {
    self.key = key
    failuresLeft = failures
  }

  func deliver(id: String, body: String, attempt number: Int) async -> String? { attempt(id, number, body) }

  private func attempt(_ id: String, _ number: Int, _ body: String) -> String? {
    lock.lock()
    defer { lock.unlock() }
    attempts += 1
    numbers.append(number)
    if failuresLeft != 0 {
      failuresLeft -= 1
      return "down"
    }
    successes.append(id)
    bodies.append(body)
    return nil
  }

  /// The bodies delivered, in order.
  var delivered: [String] {
    lock.lock()
    defer { lock.unlock() }
    return bodies
  }

  var counts: (attempts: Int, successes: [String]) {
    lock.lock()
    defer { lock.unlock() }
    return (attempts, successes)
  }

  /// The attempt numbers it was given, in order.
  var attemptNumbers: [Int] {
    lock.lock()
    defer { lock.unlock() }
    return numbers
  }
}

/// Delivery: retried until success, recorded per notifier, the entry removed only when every
/// notifier succeeded; a new delivery (a restart) tries only the notifiers that have not.
@Suite struct DeliveryTests {
  static let fast = Backoff.Policy(initial: .milliseconds(5), maximum: .milliseconds(20))

  @Test func retriesUntilEveryNotifierSucceedsThenEmptiesTheOutbox() async throws {
    let outbox = Outbox(directory: try temporaryDirectory())
    let flaky = ScriptedNotifier("flaky", failures: 3), steady = ScriptedNotifier("steady", failures: 0)
    let reports = Collector<Delivery.Report>()
    let delivery = Delivery(outbox: outbox, notifiers: [flaky, steady], policy: Self.fast) { reports.append($0) }
    let entry = Outbox.Entry(id: "20261201T101000.000Z-00000000000000aa", body: #"{"kind":"sos"}"#)
    try outbox.put(entry)
    await delivery.start(entry)
    await delivery.start(entry)
    await delivery.idle()
    #expect(flaky.counts.attempts == 4 && flaky.counts.successes == [entry.id], "delivered once, after 3 failures")
    #expect(steady.counts.attempts == 1, "one notifier's failures never repeat another's delivery")
    #expect(outbox.entries().entries.isEmpty)
    let failed = reports.values.filter { if case .attemptFailed = $0 { true } else { false } }.count
    #expect(failed == 3)
    #expect(reports.values.contains { if case .completed(entry.id) = $0 { true } else { false } })
  }

  /// What a restart leaves is delivered, numbered on; and the `delivered` event that ends the
  /// first run's delivery failure is made by the restarted monitor too (fresh-eyes finding: the
  /// log held the failure and never the success, though the receiver had the press).
  @Test func aRestartDeliversOnlyWhatIsLeft() async throws {
    let directory = try temporaryDirectory()
    let steady = ScriptedNotifier("steady", failures: 0), down = ScriptedNotifier("down", failures: -1)
    let events = Locked<[MonitorEvent]>([])
    let firstEvents = DeliveryEvents()
    let first = Delivery(outbox: Outbox(directory: directory), notifiers: [steady, down], policy: Self.fast) { report in
      if let event = firstEvents.event(for: report, watch: "w", at: Date()) { events.mutate { $0.append(event) } }
    }
    let entry = Outbox.Entry(id: "20261201T101000.000Z-00000000000000bb", body: "{}")
    try Outbox(directory: directory).put(entry)
    await first.start(entry)
    while steady.counts.successes.isEmpty || down.counts.attempts < 3 { try await Task.sleep(for: .milliseconds(5)) }
    await first.stop(grace: .zero)
    #expect(Outbox(directory: directory).entries().entries.map(\.delivered) == [["steady"]], "the entry stays, with what succeeded")
    let counted = try #require(Outbox(directory: directory).entry(entry.id)?.attempts?["down"])
    #expect(down.attemptNumbers == Array(1...down.counts.attempts), "each attempt is numbered, from 1")
    #expect(counted >= down.counts.attempts, "every attempt started is counted on disk (one cut short by the stop too)")

    let back = ScriptedNotifier("down", failures: 0), steadyAgain = ScriptedNotifier("steady", failures: 0)
    let restartedEvents = DeliveryEvents()
    let restarted = Delivery(outbox: Outbox(directory: directory), notifiers: [steadyAgain, back], policy: Self.fast) { report in
      if let event = restartedEvents.event(for: report, watch: "w", at: Date()) { events.mutate { $0.append(event) } }
    }
    for left in Outbox(directory: directory).entries().entries { await restarted.start(left) }
    await restarted.idle()
    #expect(events.value.map(\.kind) == [.error, .delivered], "\(events.value.map(\.message))")
    #expect(events.value.last?.fields["attempt"] == .integer(counted + 1) && events.value.last?.fields["notifier"] == .string("down"))
    #expect(back.counts.successes == [entry.id])
    #expect(back.attemptNumbers == [counted + 1], "the numbering goes on across the restart")
    #expect(steadyAgain.counts.attempts == 0, "the notifier that already succeeded is not run again")
    #expect(Outbox(directory: directory).entries().entries.isEmpty)
  }

  /// An attempt cut short by a kill (counted, neither failed nor succeeded) and the attempt
  /// after the restart that succeeds: the `delivered` event says the earlier attempt's end is not
  /// known — the receiver may have the press twice — not that it failed (fresh-eyes finding:
  /// "after failing" with no failure ever told).
  @Test func aDeliveryAfterAnAttemptCutShortDoesNotSayItFailed() async throws {
    let directory = try temporaryDirectory()
    var entry = Outbox.Entry(id: "20261201T101000.000Z-00000000000000dd", body: "{}")
    entry.attempts = ["receiver": 1]
    try Outbox(directory: directory).put(entry)
    let receiver = ScriptedNotifier("receiver", failures: 0)
    let events = Locked<[MonitorEvent]>([]), told = DeliveryEvents()
    let delivery = Delivery(outbox: Outbox(directory: directory), notifiers: [receiver], policy: Self.fast) { report in
      if let event = told.event(for: report, watch: "w", at: Date()) { events.mutate { $0.append(event) } }
    }
    await delivery.start(entry)
    await delivery.idle()
    #expect(receiver.attemptNumbers == [2])
    let delivered = try #require(events.value.first { $0.kind == .delivered }, "\(events.value.map(\.jsonLine))")
    #expect(delivered.message == "SOS \(entry.id) reached receiver (attempt 2) after an attempt cut short by a stop or a crash "
      + "(the receiver may have had it then too)", "\(delivered.message)")
    #expect(delivered.fields["attempt"] == .integer(2))
  }

  /// A notifier still failing after a restart: the failure the restarted monitor tells says it
  /// began with the first run's first failed attempt, kept in the outbox (fresh-eyes finding: the
  /// page's "delivery has failed since" moved to the restart, understating the wait).
  @Test func howLongADeliveryHasFailedOutlivesARestart() async throws {
    let directory = try temporaryDirectory()
    let entry = Outbox.Entry(id: "20261201T101000.000Z-00000000000000cc", body: "{}")
    try Outbox(directory: directory).put(entry)
    func run() async throws -> MonitorEvent {
      let down = ScriptedNotifier("down", failures: -1)
      let events = Locked<[MonitorEvent]>([]), told = DeliveryEvents()
      let delivery = Delivery(outbox: Outbox(directory: directory), notifiers: [down], policy: Self.fast) { report in
        if let event = told.event(for: report, watch: "w", at: Date()) { events.mutate { $0.append(event) } }
      }
      await delivery.start(entry)
      while events.value.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
      await delivery.stop(grace: .zero)
      return try #require(events.value.first)
    }
    let first = try await run()
    try await Task.sleep(for: .milliseconds(50))
    let again = try await run()
    guard case .string(let since)? = first.fields["failing_since"], let date = InternetTime.date(since) else {
      Issue.record("\(first.jsonLine)")
      return
    }
    #expect(abs(date.timeIntervalSince(first.time)) < 0.05, "\(first.jsonLine)")
    #expect(again.fields["failing_since"] == first.fields["failing_since"] && again.time > first.time.addingTimeInterval(0.04), "\(again.jsonLine)")
  }
}

/// Runs `--on-sos` programs: exactly the words given, the event only in the environment.
@Suite struct CommandNotifierTests {
  @Test func runsExactlyTheGivenProgramWithTheEventInItsEnvironment() async throws {
    let (directory, script) = try MonitorFixtures.recorder(in: temporaryDirectory())
    let command = MonitorFixtures.quoted(script) + #" --say 'SOS for "Mum" $(touch pwned2) `id`' "# + "\"it's\nfine\" ''"
    let notifier = try CommandNotifier(command: command, environment: ["PATH": "/usr/bin:/bin", "KEEP": "me"],
                                       currentDirectory: directory)
    let event = MonitorEvent(time: Date(), watch: "sim:/w/it's \"$(touch pwned3)\"\n/device.json", kind: .sos,
                             message: "SOS pressed on the watch", fields: ["profile": .string("fit")])
    #expect(await notifier.deliver(id: event.id, body: event.jsonLine, attempt: 3) == nil)
    #expect(try MonitorFixtures.arguments(in: directory) == [script, "--say", #"SOS for "Mum" $(touch pwned2) `id`"#, "it's\nfine", ""])
    let environment = try MonitorFixtures.environment(in: directory)
    #expect(environment["TSAPPLY_EVENT_WATCH"] == event.watch)
    #expect(environment["TSAPPLY_EVENT_ID"] == event.id)
    #expect(environment["TSAPPLY_EVENT_KIND"] == "sos")
    #expect(environment["TSAPPLY_EVENT_PROFILE"] == "fit")
    #expect(environment["TSAPPLY_EVENT_JSON"] == event.jsonLine)
    #expect(environment["KEEP"] == "me")
    #expect(environment[CommandNotifier.attemptVariable] == "3")
    #expect(MonitorFixtures.shellTraces(in: [directory, (directory as NSString).deletingLastPathComponent,
                                             FileManager.default.currentDirectoryPath]).isEmpty)
  }

  /// A program it runs holds nothing the monitor has open but its output: not a status page's
  /// connection (whose client would wait for the program to end before it saw its answer end),
  /// not a file. Only 0, 1, 2, and the descriptor `ls` opens to list its own.
  @Test func theProgramInheritsNoDescriptorOfTheMonitor() async throws {
    let leaked = open("/dev/null", O_RDONLY)
    defer { close(leaked) }
    let path = try temporaryDirectory() + "/descriptors"
    let output = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
    let outcome = await ChildProcess.run(path: "/bin/ls", arguments: ["ls", "/proc/self/fd"], environment: [:], timeout: .seconds(30),
                                         outputDescriptor: output)
    close(output)
    #expect(outcome == .exited(0))
    let listed = Set(try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init))
    #expect(!listed.contains(String(leaked)))
    #expect(listed.isSubset(of: ["0", "1", "2", "3"]), "\(listed.count) descriptors open in the program")
  }

  @Test func failuresAndTimeoutsAreFailures() async throws {
    let (directory, script) = try MonitorFixtures.recorder(in: temporaryDirectory())
    let failing = try CommandNotifier(command: MonitorFixtures.quoted(script), environment: ["RECORD_STATUS": "3"], currentDirectory: directory)
    #expect(await failing.deliver(id: "x", body: "{}", attempt: 1) == "\(script) exited with status 3")
    let slow = try CommandNotifier(command: "sleep 30", environment: ["PATH": "/usr/bin:/bin"], currentDirectory: directory,
                                   timeout: .milliseconds(200))
    let started = ContinuousClock.now
    #expect(await slow.deliver(id: "x", body: "{}", attempt: 1)?.contains("was killed") == true)
    #expect(ContinuousClock.now - started < .seconds(20))
  }

  @Test func aProgramThatIsNotThereIsRefusedUpFront() {
    #expect(throws: NotifierError.self) {
      try CommandNotifier(command: "no-such-program-here", environment: ["PATH": "/usr/bin:/bin"], currentDirectory: "/")
    }
    #expect(throws: NotifierError.self) { try CommandNotifier(command: "'unclosed", environment: [:], currentDirectory: "/") }
  }
}
