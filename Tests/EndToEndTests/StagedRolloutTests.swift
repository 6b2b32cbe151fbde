import Foundation
import Testing
import TSDevice
import TSMQTT
import TSTestSupport

/// Staged rollouts with the built binary (docs/fleet.md "Staged rollouts"): waves, the failure
/// limit, `pause: manual` with `--continue` and `--abort`, `status --fleet`, over 5 and 1,000
/// simulated watches directly and over a real Mosquitto on 127.0.0.1. Applies are made to fail
/// with `TSAPPLY_SIM_FAULT=lands-then-fails@5,fail@6`: the first write takes effect, its answer
/// is lost and reading the list back fails too, the worst case, so a watch a wave reached is a
/// watch that was written (a landed write read back is simply applied).
@Suite struct StagedRolloutTests {
  /// The device call that writes the defaults' contact (the reads come first), then the read back.
  static let failingWrite = ["TSAPPLY_SIM_FAULT": "lands-then-fails@5,fail@6"]

  /// A fleet `fleet.yaml` of `count` simulated watches `w0001`… on the defaults only (a contact
  /// the watches lack), with `head` before `watches:` (a rollout, a transport); the names.
  static func fleet(_ count: Int, in dir: URL, head: String = "", profile: PlatformProfile = .default,
                    defaults: String = "contacts:\n  - {name: Ward desk, phone: \"+15550100\"}\n") throws -> [String] {
    let names = (1...count).map { String(format: "w%04d", $0) }
    try FileManager.default.createDirectory(at: dir.appendingPathComponent("watches"), withIntermediateDirectories: true)
    try defaults.write(to: dir.appendingPathComponent("defaults.yaml"), atomically: true, encoding: .utf8)
    var text = head + "defaults: defaults.yaml\nwatches:\n"
    for name in names {
      try SimulatedDevice.create(path: dir.appendingPathComponent("watches/\(name).json").path, profile: profile, force: false)
      text += "  \(name): {device: \"sim:watches/\(name).json\"}\n"
    }
    try text.write(to: dir.appendingPathComponent("fleet.yaml"), atomically: true, encoding: .utf8)
    return names
  }

  /// The watches whose simulated state holds the defaults' contact: written by a rollout.
  static func written(_ names: [String], in dir: URL) throws -> [String] {
    try names.filter { name in
      try String(contentsOf: dir.appendingPathComponent("watches/\(name).json"), encoding: .utf8).contains("Ward desk")
    }
  }

  static func run(_ arguments: [String], in dir: URL, environment: [String: String] = [:]) throws -> ProcessResult {
    try TSApplyBinary.run(arguments, in: dir, environment: ["TSAPPLY_STATE_DIR": dir.appendingPathComponent("state").path].merging(environment) { _, new in new })
  }

  @Test func aChangeThatFailsEverywhereOn1000WatchesTouchesOnlyTheCanary() throws {
    let dir = try TSApplyBinary.temporaryDirectory()
    let names = try Self.fleet(1000, in: dir, head: "rollout:\n  canary: 2\n  batch: 25%\n  max_failures: 0\n")
    let result = try Self.run(["apply", "--fleet", "fleet.yaml", "--auto-approve"], in: dir, environment: Self.failingWrite)
    #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
    // The canaries' write landed before their apply failed: read from them, they hold it.
    #expect(result.stderr.contains("the rollout was aborted after wave 1 of 5 (2 of 2 watches failed, more than max_failures 0 allows): 2 of 1000 watches have the new revision, 998 do not"),
            "\(result.stderr)")
    #expect(result.stdout.contains("1000 watches: 2 failed, 998 pending."), "\(result.stdout)")
    // The measured figure: watches written.
    #expect(try Self.written(names, in: dir) == ["w0001", "w0002"])
    let status = try Self.run(["status", "--fleet", "fleet.yaml", "--json"], in: dir)
    let object = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
    let rollout = try #require(object["rollout"] as? [String: Any], "\(status.stdout)")
    #expect(rollout["phase"] as? String == "aborted")
    #expect((rollout["failed"] as? [String]) == ["w0001", "w0002"])
    // Read from the watches: the canaries' write landed before their apply failed, so they hold it.
    #expect((rollout["with_revision"] as? [String]) == ["w0001", "w0002"], "\(rollout["with_revision"] ?? "-") \(rollout["unknown_revision"] ?? "-")")
    #expect((rollout["without_revision"] as? [String])?.count == 998)
  }

  @Test func aManualPauseWaitsForContinueAndAbortStopsEveryLaterWave() throws {
    let dir = try TSApplyBinary.temporaryDirectory()
    let names = try Self.fleet(5, in: dir, head: "rollout: {canary: 1, batch: 2, pause: manual}\n")
    var result = try Self.run(["apply", "--fleet", "fleet.yaml", "--auto-approve"], in: dir)
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    #expect(result.stdout.contains("--- Wave 1 of 3 (canary): 1 watch: w0001"), "\(result.stdout)")
    #expect(result.stdout.contains("paused after wave 1 of 3 (pause: manual)"), "\(result.stdout)")
    #expect(try Self.written(names, in: dir) == ["w0001"])

    // status shows where it stands; a plain apply does not pass the paused rollout by.
    let status = try Self.run(["status", "--fleet", "fleet.yaml"], in: dir)
    #expect(status.stdout.contains("paused after wave 1 of 3"), "\(status.stdout)")
    #expect(status.stdout.contains("1 of 5 watches have the new revision"), "\(status.stdout)")
    result = try Self.run(["apply", "--fleet", "fleet.yaml", "--auto-approve"], in: dir)
    #expect(result.status == 1 && result.stderr.contains("a rollout of fleet.yaml is paused after wave 1 of 3"), "\(result.stderr)")
    #expect(try Self.written(names, in: dir) == ["w0001"])

    result = try Self.run(["apply", "--fleet", "fleet.yaml", "--continue", "--auto-approve"], in: dir)
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    #expect(result.stdout.contains("--- Wave 2 of 3: 2 watches: w0002, w0003"), "\(result.stdout)")
    #expect(try Self.written(names, in: dir) == ["w0001", "w0002", "w0003"])
    // status of one watch reads that one; the manifests did not change, and the counts are the
    // same (it said "the manifests changed since it started": fresh-eyes test).
    let one = try Self.run(["status", "--fleet", "fleet.yaml", "--watch", "w0002"], in: dir)
    #expect(one.stdout.contains("1 of the 1 watch selected (--watch) have the new revision"), "\(one.stdout)")
    #expect(one.stdout.contains("(as read from the watches now)"), "\(one.stdout)")
    #expect(!one.stdout.contains("manifests changed"), "\(one.stdout)")

    result = try Self.run(["apply", "--fleet", "fleet.yaml", "--abort"], in: dir)
    #expect(result.status == 1)
    #expect(result.stdout.contains("With the new revision: w0001, w0002, w0003"), "\(result.stdout)")
    #expect(result.stdout.contains("Without it: w0004, w0005"), "\(result.stdout)")
    #expect(result.stderr.contains("3 of 5 watches have the new revision, 2 do not"), "\(result.stderr)")
    result = try Self.run(["apply", "--fleet", "fleet.yaml", "--continue", "--auto-approve"], in: dir)
    #expect(result.status == 1 && result.stderr.contains("fleet.yaml has no paused rollout to continue (its last one aborted"), "\(result.stderr)")
    #expect(try Self.written(names, in: dir) == ["w0001", "w0002", "w0003"])
  }

  @Test func optionsGiveOneRunARolloutAndAChangedManifestIsNotContinued() throws {
    let dir = try TSApplyBinary.temporaryDirectory()
    let names = try Self.fleet(5, in: dir)
    var result = try Self.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--canary", "w0004,w0002", "--batch", "50%",
                               "--pause", "manual"], in: dir)
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    #expect(result.stdout.contains("--- Wave 1 of 2 (canary): 2 watches: w0002, w0004"), "\(result.stdout)")
    #expect(try Self.written(names, in: dir) == ["w0002", "w0004"])
    try "contacts:\n  - {name: Ward desk, phone: \"+15550199\"}\n".write(to: dir.appendingPathComponent("defaults.yaml"), atomically: true, encoding: .utf8)
    result = try Self.run(["apply", "--fleet", "fleet.yaml", "--continue", "--auto-approve"], in: dir)
    #expect(result.status == 1 && result.stderr.contains("the manifests changed since this rollout started"), "\(result.stderr)")
    // Bad values are usage errors (64) naming the option.
    for (option, value, message) in [("--batch", "0", "--batch must be at least 1"), ("--max-failures", "x", "--max-failures expected a number"),
                                     ("--canary", "w9", "--canary names \"w9\", which is not a watch of fleet.yaml"),
                                     ("--pause", "soon", "--pause expected a duration")] {
      result = try Self.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", option, value], in: dir)
      #expect(result.status == 64 && result.stderr.contains(message), "\(option) \(value): \(result.stderr)")
    }
  }

  @Test func aFailureWithinMaxFailuresCompletesTheRolloutAndExitsNonZero() throws {
    let dir = try TSApplyBinary.temporaryDirectory()
    let names = try Self.fleet(4, in: dir, head: "rollout: {canary: 1, batch: 1, max_failures: 1}\n")
    // w0002's own manifest has an error: it fails in its wave, once.
    try "contacts:\n  - {name: Niece, phone: \"12-AB\"}\n".write(to: dir.appendingPathComponent("bad.yaml"), atomically: true, encoding: .utf8)
    let text = try String(contentsOf: dir.appendingPathComponent("fleet.yaml"), encoding: .utf8)
      .replacingOccurrences(of: "w0002: {device: \"sim:watches/w0002.json\"}", with: "w0002: {device: \"sim:watches/w0002.json\", manifest: bad.yaml}")
    try text.write(to: dir.appendingPathComponent("fleet.yaml"), atomically: true, encoding: .utf8)
    let result = try Self.run(["apply", "--fleet", "fleet.yaml", "--auto-approve"], in: dir)
    #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
    #expect(result.stdout.contains("completed: 4 waves applied"), "\(result.stdout)")
    #expect(result.stderr.contains("1 of 4 watches failed: w0002"), "\(result.stderr)")
    #expect(try Self.written(names, in: dir) == ["w0001", "w0003", "w0004"])
  }

  @Test func aCountMaxFailuresStopsAWaveStartingWatches() throws {
    let dir = try TSApplyBinary.temporaryDirectory()
    let names = try Self.fleet(20, in: dir)
    // Every watch but the two canaries has an own manifest with an error: it fails in its wave.
    try "contacts:\n  - {name: Niece, phone: \"12-AB\"}\n".write(to: dir.appendingPathComponent("bad.yaml"), atomically: true, encoding: .utf8)
    var text = try String(contentsOf: dir.appendingPathComponent("fleet.yaml"), encoding: .utf8)
    for name in names.dropFirst(2) {
      text = text.replacingOccurrences(of: "\(name): {device: \"sim:watches/\(name).json\"}", with: "\(name): {device: \"sim:watches/\(name).json\", manifest: bad.yaml}")
    }
    try text.write(to: dir.appendingPathComponent("fleet.yaml"), atomically: true, encoding: .utf8)
    let result = try Self.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--json", "-parallelism", "1",
                               "--canary", "w0001,w0002", "--max-failures", "1"], in: dir)
    #expect(result.status == 1, "\(result.stderr)")
    let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    let rollout = try #require(report["rollout"] as? [String: Any])
    #expect(rollout["phase"] as? String == "aborted")
    #expect(rollout["failed"] as? [String] == ["w0003", "w0004"], "the wave of 18 stopped after its second failure")
    #expect((report["summary"] as? [String: Any])?["by_result"] as? [String: Int] == ["applied": 2, "failed": 2, "pending": 16])
    #expect(try Self.written(names, in: dir) == ["w0001", "w0002"])
  }

  @Test func oneQuestionCoversEveryWaveAndCtrlCDuringAPausePausesTheRollout() throws {
    let dir = try TSApplyBinary.temporaryDirectory()
    let names = try Self.fleet(5, in: dir, head: "rollout: {canary: 1, batch: 2, pause: 1m}\n")
    let run = try TSApplyBinary.startInteractive(["apply", "--fleet", "fleet.yaml"], in: dir)
    let asked = run.read(until: "Enter a value:")
    #expect(asked.contains("Do you want to roll these actions out to 5 watches in 3 waves (canary 1, batch 2, pause 1m, max_failures 0)?"), "\(asked)")
    run.type("yes\n")
    _ = run.read(until: "--- Pausing 1m before the next wave")
    run.running.send(SIGINT)
    let result = run.wait(limit: 30)
    #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
    #expect(result.stdout.contains("paused after wave 1 of 3 (interrupted while pausing)"), "\(result.stdout)")
    #expect(result.stderr.contains("interrupted: the rollout is paused after wave 1 of 3"), "\(result.stderr)")
    #expect(try Self.written(names, in: dir) == ["w0001"])
    let continued = try TSApplyBinary.run(["apply", "--fleet", "fleet.yaml", "--continue", "--auto-approve", "--pause", "0s"], in: dir)
    #expect(continued.status == 64, "--continue takes the rollout as it was started: \(continued.stderr)")
  }

  /// `kill -9` in the middle of the canary wave: the record still says running, nothing
  /// recorded, while the canaries were written. `status --fleet` says it was interrupted and
  /// counts what the watches hold; `--abort` reports the same.
  @Test func aRolloutKilledInItsFirstWaveIsInterruptedAndCountsWhatTheWatchesHold() throws {
    let dir = try TSApplyBinary.temporaryDirectory()
    let names = try Self.fleet(10, in: dir)
    let state = ["TSAPPLY_STATE_DIR": dir.appendingPathComponent("state").path]
    let running = try TSApplyBinary.start(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--canary", "3", "--batch", "4", "--pause", "manual"],
                                          in: dir, environment: state.merging(["TSAPPLY_SIM_LATENCY": "400,0"]) { _, new in new })
    let deadline = Date().addingTimeInterval(60)
    while try Self.written(names, in: dir).count < 3, Date() < deadline { usleep(10_000) }
    running.send(SIGKILL)
    _ = running.wait()
    #expect(try Self.written(names, in: dir) == Array(names.prefix(3)))
    let status = try Self.run(["status", "--fleet", "fleet.yaml"], in: dir)
    #expect(status.stdout.contains("interrupted during wave 1 of 3: the process running it ended."), "\(status.stdout)")
    // Nothing goes on with it until someone continues or aborts it: the exit status says so.
    #expect(status.status == 1 && status.stderr.contains("the rollout of fleet.yaml was interrupted (the process running it ended): continue it with"),
            "\(status.stderr)")
    #expect(status.stdout.contains("3 of 10 watches have the new revision"), "\(status.stdout)")
    #expect(status.stdout.contains("With the new revision: w0001, w0002, w0003\n"), "\(status.stdout)")
    let aborted = try Self.run(["apply", "--fleet", "fleet.yaml", "--abort"], in: dir)
    #expect(aborted.status == 1)
    #expect(aborted.stdout.contains("With the new revision: w0001, w0002, w0003\n"), "\(aborted.stdout)")
    #expect(aborted.stdout.contains("Without it: w0004, w0005"), "\(aborted.stdout)")
    #expect(aborted.stderr.contains("3 of 10 watches have the new revision, 7 do not"), "\(aborted.stderr)")
    // The wave it was killed in counts as reached (it said "after wave 0": fresh-eyes test).
    #expect(aborted.stderr.contains("the rollout was aborted after wave 1 of 3 (aborted by "), "\(aborted.stderr)")
    #expect(aborted.stdout.contains("; wave 1 was interrupted (the process running it ended) and its results not recorded"), "\(aborted.stdout)")
  }

  /// `status --fleet --watch NAME` after a rollout whose canaries failed once their write had
  /// landed: the summary is of the watches selected and says so. It counted the others "as
  /// their waves left them": "0 of 30 … Without it: r01 (failed)" of a watch holding the
  /// revision (fresh-eyes test).
  @Test func statusOfSomeWatchesSummarisesTheRolloutForThoseOnly() throws {
    let dir = try TSApplyBinary.temporaryDirectory()
    _ = try Self.fleet(6, in: dir)
    let result = try Self.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--canary", "2", "--batch", "10"], in: dir, environment: Self.failingWrite)
    #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
    let all = try Self.run(["status", "--fleet", "fleet.yaml"], in: dir)
    #expect(all.stdout.contains("2 of 6 watches have the new revision"), "\(all.stdout)")
    #expect(all.stdout.contains("With the new revision: w0001, w0002\n"), "\(all.stdout)")
    // (selection, with it, without it) as `status --fleet --watch … --json` has them.
    let cases: [([String], [String], [String])] = [(["w0005"], [], ["w0005"]), (["w0001"], ["w0001"], []), (["w0002", "w0006"], ["w0002"], ["w0006"])]
    for (selection, with, without) in cases {
      let options = selection.flatMap { ["--watch", $0] }
      let one = try Self.run(["status", "--fleet", "fleet.yaml"] + options, in: dir)
      let count = selection.count
      #expect(one.stdout.contains("\(with.count) of the \(count) watch\(count == 1 ? "" : "es") selected (--watch) have the new revision"), "\(one.stdout)")
      #expect(one.stdout.contains("Without it: \(without.isEmpty ? "none" : without.joined(separator: ", "))\n"), "\(one.stdout)")
      #expect(one.stdout.contains("Not counted: the rollout's other \(6 - count) watches, not selected (--watch); 'tsapply status --fleet fleet.yaml' reads them all."),
              "\(one.stdout)")
      #expect(!one.stdout.contains("(failed)"), "a watch not read is not counted from its wave's result: \(one.stdout)")
      let json = try Self.run(["status", "--fleet", "fleet.yaml", "--json"] + options, in: dir)
      let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
      let rollout = try #require(object["rollout"] as? [String: Any], "\(json.stdout)")
      #expect(rollout["with_revision"] as? [String] == with, "\(selection)")
      #expect(rollout["without_revision"] as? [String] == without, "\(selection)")
      #expect(rollout["selected"] as? [String] == selection)
    }
  }

  /// A rollout killed in wave 2, then aborted: the abort counts what the watches hold; `status
  /// --watch` is of the watch selected; once the manifests change, the watches of the killed
  /// wave are not known, never "not started" (it said "28 not started" of watches the wave had
  /// written: fresh-eyes test).
  @Test func theWatchesOfAKilledWaveAreNeverSaidNotStarted() throws {
    let dir = try TSApplyBinary.temporaryDirectory()
    let names = try Self.fleet(10, in: dir)
    let state = ["TSAPPLY_STATE_DIR": dir.appendingPathComponent("state").path]
    let first = try Self.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--canary", "1", "--batch", "4", "--pause", "manual"], in: dir)
    #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
    let running = try TSApplyBinary.start(["apply", "--fleet", "fleet.yaml", "--continue", "--auto-approve"],
                                          in: dir, environment: state.merging(["TSAPPLY_SIM_LATENCY": "400,0"]) { _, new in new })
    let deadline = Date().addingTimeInterval(60)
    while try Self.written(names, in: dir).count < 2, Date() < deadline { usleep(10_000) }
    running.send(SIGKILL)
    _ = running.wait()
    let written = try Self.written(names, in: dir)
    #expect(written.count >= 2 && written.count <= 5, "\(written)")
    let aborted = try Self.run(["apply", "--fleet", "fleet.yaml", "--abort"], in: dir)
    #expect(aborted.stderr.contains("\(written.count) of 10 watches have the new revision"), "\(aborted.stderr)")
    let one = try Self.run(["status", "--fleet", "fleet.yaml", "--watch", "w0009"], in: dir)
    #expect(one.stdout.contains("0 of the 1 watch selected (--watch) have the new revision"), "\(one.stdout)")
    #expect(one.stdout.contains("Without it: w0009\n"), "\(one.stdout)")
    // The manifests change: the watches are not compared; what the record knows stands.
    try "contacts:\n  - {name: Ward desk, phone: \"+15550199\"}\n".write(to: dir.appendingPathComponent("defaults.yaml"), atomically: true, encoding: .utf8)
    let status = try Self.run(["status", "--fleet", "fleet.yaml"], in: dir)
    #expect(status.stdout.contains("1 of 10 watches have the new revision"), "\(status.stdout)")
    #expect(status.stdout.contains(", 5 do not (0 failed, 5 not started), 4 not known."), "\(status.stdout)")
    #expect(status.stdout.contains("Without it: w0006, w0007, w0008, w0009, w0010\n"), "\(status.stdout)")
    let interrupted = ["w0002", "w0003", "w0004", "w0005"].map { "\($0) (interrupted in wave 2)" }
    #expect(status.stdout.contains("Not known: " + interrupted.joined(separator: ", ") + "\n"), "\(status.stdout)")
    #expect(status.stdout.contains("Not read from the watches: the manifests changed since it started"), "\(status.stdout)")
  }

  // MARK: Over MQTT

  /// A 5-watch fleet on a broker with `rollout` (the watches of `profile`, the defaults
  /// `defaults`), and one agent serving every watch.
  static func brokerFleet(_ rollout: String, profile: PlatformProfile = .default, defaults: String? = nil) throws
    -> (dir: URL, names: [String], broker: MosquittoBroker, agent: ListeningProcess) {
    let dir = try TSApplyBinary.temporaryDirectory()
    let broker = try MosquittoBroker.start(in: dir.path, configuration: MosquittoBroker.defaultConfiguration)
    let head = "transport: \(broker.address)\nsite: ward-a\n" + rollout
    let names = try defaults.map { try fleet(5, in: dir, head: head, profile: profile, defaults: $0) } ?? fleet(5, in: dir, head: head, profile: profile)
    let agent = try ListeningProcess(["agent", "--broker", "\(broker.address)", "--site", "ward-a", "--agent-id", "station"]
                                       + names.flatMap { ["--device", "sim:watches/\($0).json"] }, in: dir,
                                     environment: ["TSAPPLY_STATE_DIR": dir.appendingPathComponent("agent-state").path])
    _ = try FleetAgentTests.waitForStatus("station (online)", in: dir)
    return (dir, names, broker, agent)
  }

  @Test func overMQTTThePublisherReleasesOnlyTheCanaryOfAChangeThatFails() throws {
    // A `once` reminder does not fit an npk watch: each agent's apply is invalid, a final failure.
    let (dir, names, broker, agent) = try Self.brokerFleet("rollout: {canary: 2, batch: 1, max_failures: 0}\n", profile: .npk,
                                                           defaults: "reminders:\n  custom:\n    - {name: Check-up, repeat: once, at: [\"10:00\"]}\n")
    defer { broker.stop() }
    defer { agent.send(SIGKILL); _ = agent.finish() }
    let result = try Self.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--wait", "60s"], in: dir)
    #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
    #expect(result.stderr.contains("aborted after wave 1 of 4"), "\(result.stderr)")
    #expect(result.stdout.contains("w0001: failed") && result.stdout.contains("w0002: failed"), "\(result.stdout)")
    // The others were never published: their agent has nothing to report on them.
    let status = try Self.run(["status", "--fleet", "fleet.yaml"], in: dir)
    for name in names.prefix(2) { #expect(status.stdout.contains("\(name)  invalid"), "\(status.stdout)") }
    for name in names.suffix(3) { #expect(status.stdout.contains("\(name)  no status"), "\(status.stdout)") }
    #expect(status.stdout.contains("aborted after wave 1 of 4"), "\(status.stdout)")
  }

  /// An aborted rollout whose canaries' agent applied the retained documents afterwards: the
  /// summary counts them as having the new revision, from the agents' statuses (docs/fleet.md
  /// "Staged rollouts"), and says which watches' state is not known.
  @Test func overMQTTTheSummaryCountsWhatTheAgentsApplied() throws {
    let (dir, _, broker, agent) = try Self.brokerFleet("rollout: {canary: 2, batch: 1, max_failures: 0}\n")
    defer { broker.stop() }
    defer { agent.send(SIGKILL); _ = agent.finish() }
    // The agent does not answer within the wave's wait: its canaries are pending, the rollout aborts.
    agent.send(SIGSTOP)
    let result = try Self.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--wait", "2s"], in: dir)
    #expect(result.status == 1 && result.stderr.contains("aborted after wave 1 of 4"), "\(result.stdout)\(result.stderr)")
    agent.send(SIGCONT)
    let status = try Self.run(["status", "--fleet", "fleet.yaml", "--wait", "60s"], in: dir)
    #expect(status.stdout.contains("2 of 5 watches have the new revision"), "\(status.stdout)")
    #expect(status.stdout.contains("With the new revision: w0001, w0002\n"), "\(status.stdout)")
    #expect(status.stdout.contains("Not known: w0003 (no status), w0004 (no status), w0005 (no status)"), "\(status.stdout)")
  }

  /// The `publication` each watch's status names, by watch ID (docs/fleet.md "Desired
  /// documents"), read from what the agent keeps of the status it publishes (`agent-status.json`
  /// in each watch's records folder under the agent's state directory `agentState`). Read from the
  /// files, not the broker: an MQTT client's `await`s in this test process need the concurrency
  /// pool, which the end-to-end tests' blocking process runs can hold for minutes.
  static func statusPublications(agentState: URL) throws -> [String: String] {
    let watches = agentState.appendingPathComponent("watches")
    var found: [String: String] = [:]
    for folder in try FileManager.default.contentsOfDirectory(atPath: watches.path) {
      let path = watches.appendingPathComponent(folder).appendingPathComponent("agent-status.json")
      guard let data = FileManager.default.contents(atPath: path.path),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let watch = object["watch"] as? String, let publication = object["publication"] as? String else { continue }
      found[watch] = publication
    }
    return found
  }

  @Test func overMQTTEveryWaveIsPublishedAfterTheOneBeforeIsApplied() throws {
    let (dir, names, broker, agent) = try Self.brokerFleet("rollout: {canary: 1, batch: 2}\n")
    defer { broker.stop() }
    defer { agent.send(SIGKILL); _ = agent.finish() }
    let result = try Self.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--wait", "60s"], in: dir)
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    for wave in ["--- Wave 1 of 3 (canary): 1 watch: w0001", "--- Wave 2 of 3: 2 watches: w0002, w0003", "--- Wave 3 of 3: 2 watches: w0004, w0005"] {
      #expect(result.stdout.contains(wave), "\(result.stdout)")
    }
    // Each wave's watches were applied (the agent's log) before the next wave was published.
    let wave1 = try #require(result.stdout.range(of: "w0001: applied"))
    let wave2 = try #require(result.stdout.range(of: "--- Wave 2"))
    #expect(wave1.lowerBound < wave2.lowerBound)
    #expect(result.stdout.contains("completed: 3 waves applied"), "\(result.stdout)")
    #expect(try Self.written(names, in: dir) == names)
    // Each wave is a publication of its own, which its watches' statuses name.
    let publications = try Self.statusPublications(agentState: dir.appendingPathComponent("agent-state"))
    #expect(publications.count == names.count, "\(publications)")
    #expect(publications["w0002"] == publications["w0003"] && publications["w0004"] == publications["w0005"], "\(publications)")
    #expect(Set(["w0001", "w0002", "w0004"].compactMap { publications[$0] }).count == 3, "\(publications)")
    // The agent's applies are in each watch's history, in the agent's records.
    let history = try TSApplyBinary.run(["history", "--device", "sim:watches/w0003.json"], in: dir,
                                        environment: ["TSAPPLY_STATE_DIR": dir.appendingPathComponent("agent-state").path])
    #expect(history.stdout.contains("2 entries, chain intact.") && history.stdout.contains("tsapply agent station (site ward-a, watch w0003)"),
            "\(history.stdout)")
    let fleetHistory = try Self.run(["history", "--fleet", "fleet.yaml"], in: dir)
    #expect(fleetHistory.status == 1 && fleetHistory.stderr.contains("each watch's history and backups are kept where its agent runs"),
            "\(fleetHistory.stderr)")
  }
}
