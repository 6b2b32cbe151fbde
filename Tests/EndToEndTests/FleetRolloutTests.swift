import Foundation
import Testing
import TSMQTT
import TSTestSupport

/// `tsapply apply --fleet --wait` over MQTT as a process, riding out the infrastructure: a
/// broker restarted mid-rollout, and a transient failure its agent is still retrying when the
/// wait ends. Mosquitto on 127.0.0.1 with its default settings (and persistence, as a site runs it).
@Suite struct FleetRolloutTests {
  /// A fleet of `count` simulated watches `w01`… with their manifests, its transport `broker`.
  static func fleet(_ count: Int, in dir: URL, broker: MosquittoBroker) throws -> [String] {
    let names = (1...count).map { String(format: "w%02d", $0) }
    var text = "transport: \(broker.address)\nsite: ward-a\nwatches:\n"
    try FileManager.default.createDirectory(at: dir.appendingPathComponent("residents"), withIntermediateDirectories: true)
    for (index, name) in names.enumerated() {
      text += "  \(name): {device: \"sim:watches/\(name).json\", manifest: residents/\(name).yaml}\n"
      try "contacts:\n  - {name: Family, phone: \"+1555011\(index % 10)\"}\nreminders:\n  custom:\n    - {name: Lunch, at: [\"12:00\"]}\n"
        .write(to: dir.appendingPathComponent("residents/\(name).yaml"), atomically: true, encoding: .utf8)
      #expect(try TSApplyBinary.run(["device", "init", "--device", "sim:watches/\(name).json"], in: dir).status == 0)
    }
    try text.write(to: dir.appendingPathComponent("fleet.yaml"), atomically: true, encoding: .utf8)
    return names
  }

  /// Mosquitto's defaults, with persistence in the broker's directory.
  static func persistent(port: Int, directory: String) -> String {
    MosquittoBroker.defaultConfiguration(port: port, directory: directory) + "persistence true\npersistence_location \(directory)/\n"
  }

  /// A broker with persistence (`persistent`) in `dir/broker`, as a site runs it (the caller stops it).
  static func persistentBroker(in dir: URL) throws -> MosquittoBroker {
    let brokerDir = dir.appendingPathComponent("broker")
    // Started as root, Mosquitto runs as the user mosquitto: its directory must be writable to
    // it for the persistence file (docs/fleet.md "Broker").
    try FileManager.default.createDirectory(at: brokerDir, withIntermediateDirectories: true)
    try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: brokerDir.path)
    return try MosquittoBroker.start(in: brokerDir.path, configuration: persistent)
  }

  /// An agent process serving `watches` as `id`.
  static func agent(_ id: String, _ watches: ArraySlice<String>, broker: MosquittoBroker, in dir: URL,
                    environment: [String: String] = [:]) throws -> ListeningProcess {
    try ListeningProcess(["agent", "--broker", "\(broker.address)", "--site", "ward-a", "--agent-id", id]
                         + watches.flatMap { ["--device", "sim:watches/\($0).json"] }, in: dir, environment: environment)
  }

  @Test func aRolloutWaitsThroughABrokerRestartAndReportsWhatTheWatchesHold() throws {
    let dir = try TSApplyBinary.temporaryDirectory().resolvingSymlinksInPath()
    var broker = try Self.persistentBroker(in: dir)
    defer { broker.stop() }
    let names = try Self.fleet(8, in: dir, broker: broker)
    // 100 and 600 ms per device call: a1's watches are applied when the broker restarts, a2's
    // are being applied.
    let agents = try [Self.agent("a1", names.prefix(4), broker: broker, in: dir, environment: ["TSAPPLY_SIM_LATENCY": "100,0"]),
                      Self.agent("a2", names.suffix(4), broker: broker, in: dir, environment: ["TSAPPLY_SIM_LATENCY": "600,0"])]
    defer { for agent in agents { agent.send(SIGKILL); _ = agent.finish() } }
    let online = try FleetAgentTests.waitForStatus("a2 (online)", in: dir)
    #expect(online.contains("a1 (online)"), "\(online)")

    let rollout = try TSApplyBinary.start(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--wait", "2m"], in: dir)
    // Restart once some watches are applied and others not yet.
    func applied() -> Int { agents.map { $0.standardError.components(separatedBy: " applied (").count - 1 }.reduce(0, +) }
    for _ in 0..<1000 where applied() < 4 { usleep(10_000) }
    let before = applied()
    broker = try broker.restart()
    #expect(before == 4, "\(before) of 8 applied when the broker restarted")
    let result = rollout.wait()
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    #expect(result.stdout.hasSuffix("8 watches: 8 applied.\n"), "\(result.stdout)")
    #expect(!result.stdout.contains("offline") && !result.stdout.contains("pending"), "\(result.stdout)")
    // What it reported is what the watches hold.
    let plan = try TSApplyBinary.run(["plan", "--fleet", "fleet.yaml"], in: dir)
    #expect(plan.stdout.hasSuffix("8 watches: 8 with no changes.\n"), "\(plan.stdout)")
    for name in names {
      let shown = try TSApplyBinary.run(["device", "show", "--device", "sim:watches/\(name).json"], in: dir)
      #expect(shown.stdout.contains("Family") && shown.stdout.contains("Lunch"), "\(name): \(shown.stdout)")
    }
  }

  /// A broker down for 4 s between a staged rollout's waves: the next wave's publication begins
  /// while the agent is offline (its Last Will), and the agent reconnects seconds later and
  /// applies it. The wave waits for it (`FleetPublication.offlineGrace`) instead of reporting its
  /// watches pending at once and aborting the rollout (fresh-eyes test: "aborted after wave 2 of
  /// 4: 5 of 7 watches failed or did not report" while every watch applied).
  @Test func aStagedRolloutRidesOutABrokerDownBetweenWaves() throws {
    let dir = try TSApplyBinary.temporaryDirectory().resolvingSymlinksInPath()
    var broker = try Self.persistentBroker(in: dir)
    defer { broker.stop() }
    let names = try Self.fleet(4, in: dir, broker: broker)
    let file = dir.appendingPathComponent("fleet.yaml")
    try (String(contentsOf: file, encoding: .utf8) + "rollout: {canary: 1, batch: 3, pause: 3s, max_failures: 0}\n")
      .write(to: file, atomically: true, encoding: .utf8)
    let agent = try Self.agent("a1", names[...], broker: broker, in: dir)
    defer { agent.send(SIGKILL); _ = agent.finish() }
    #expect(try FleetAgentTests.waitForStatus("a1 (online)", in: dir).contains("w04"))

    let rollout = try ListeningProcess(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--wait", "40s"], in: dir)
    defer { rollout.send(SIGKILL) }
    // The canary is applied; during the pause of 3 s the broker stops, and is back 4 s later.
    try rollout.waitFor("--- Pausing")
    broker.stop()
    sleep(4)
    broker = try broker.restart()
    let (status, stdout, stderr) = rollout.finish()
    #expect(status == 0, "\(stdout)\(stderr)")
    #expect(stdout.contains("completed: 2 waves applied"), "\(stdout)")
    #expect(!stdout.contains("pending") && !stdout.contains("offline"), "\(stdout)")
    // What it reported is what the watches hold, and status says the same.
    let shown = try TSApplyBinary.run(["status", "--fleet", "fleet.yaml"], in: dir)
    #expect(shown.stdout.contains("4 of 4 watches have the new revision"), "\(shown.stdout)")
    #expect(!shown.stdout.contains("aborted"), "\(shown.stdout)")
  }

  @Test func aWatchStillRetryingWhenTheWaitEndsCountsAgainstTheExitStatusAndSaysSo() throws {
    let dir = try TSApplyBinary.temporaryDirectory().resolvingSymlinksInPath()
    let broker = try MosquittoBroker.start(in: dir.path, configuration: MosquittoBroker.defaultConfiguration)
    defer { broker.stop() }
    let names = try Self.fleet(1, in: dir, broker: broker)
    // The watch's second device call times out (SDK 6001, a failure that can pass): the agent
    // retries after its first delay (5 s), and then succeeds.
    let agent = try Self.agent("a1", names[...], broker: broker, in: dir, environment: ["TSAPPLY_SIM_FAULT": "fail@2"])
    defer { agent.send(SIGKILL); _ = agent.finish() }
    #expect(try FleetAgentTests.waitForStatus("a1 (online)", in: dir).contains("w01"))
    let short = try TSApplyBinary.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--wait", "2s"], in: dir)
    #expect(short.status == 1)
    #expect(short.stdout.contains("w01: retrying (revision "), "\(short.stdout)")
    #expect(short.stdout.contains("still retrying when the wait of 2s ended: attempt 1 failed"), "\(short.stdout)")
    #expect(short.stderr.contains("1 of 1 watch still retrying when the wait ended: w01"), "\(short.stderr)")
    // The agent keeps trying, and the site settles.
    let settled = try TSApplyBinary.run(["status", "--fleet", "fleet.yaml", "--wait", "1m"], in: dir)
    #expect(settled.status == 0, "\(settled.stdout)\(settled.stderr)")
    #expect(settled.stdout.contains("w01    in sync"), "\(settled.stdout)")
  }

  /// Publishes the fleet (`apply --fleet --auto-approve --wait 8s`), sends `agent` `signal` as
  /// soon as the first write lands on w01 (with a slow watch, between two writes), and returns
  /// what the publisher said (status, stdout, stderr).
  static func publish(stopping agent: ListeningProcess, with signal: Int32, in dir: URL) throws -> (Int32, String, String) {
    let watch = dir.appendingPathComponent("watches/w01.json")
    let initial = try Data(contentsOf: watch)
    let rollout = try ListeningProcess(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--wait", "8s"], in: dir)
    defer { rollout.send(SIGKILL) }
    for _ in 0..<4000 where (try? Data(contentsOf: watch)) == initial { usleep(5_000) }
    agent.send(signal)
    return rollout.finish()
  }

  /// An agent stopped part-way through a watch's revision and still offline when `--wait`
  /// ends: the watch holds part of the revision, so the rollout is not done — `apply` and
  /// `status` exit 1, naming the watch and what reached it — where a pending watch with nothing
  /// written is not a failure.
  @Test(arguments: [SIGTERM, SIGKILL])
  func aWatchLeftPartlyAppliedByAStoppedAgentCountsAgainstTheExitStatus(signal: Int32) throws {
    let dir = try TSApplyBinary.temporaryDirectory().resolvingSymlinksInPath()
    let broker = try MosquittoBroker.start(in: dir.path, configuration: MosquittoBroker.defaultConfiguration)
    defer { broker.stop() }
    let names = try Self.fleet(1, in: dir, broker: broker)
    // 600 ms per device call, after the call took effect: the stop comes between two writes.
    let agent = try Self.agent("a1", names[...], broker: broker, in: dir, environment: ["TSAPPLY_SIM_LATENCY": "600,0"])
    defer { agent.send(SIGKILL); _ = agent.finish() }
    #expect(try FleetAgentTests.waitForStatus("a1 (online)", in: dir).contains("w01"))
    let (status, stdout, stderr) = try Self.publish(stopping: agent, with: signal, in: dir)
    #expect(status == 1, "\(stdout)\(stderr)")
    guard signal == SIGTERM else {
      // Killed: nothing says what it reached, and the watch may hold part of it.
      #expect(stderr.contains("1 of 1 watch may hold part of the revision: w01 (its agent went offline during the wait"), "\(stderr)")
      // So does its own line (fresh-eyes finding: only the summary said it).
      #expect(stdout.split(separator: "\n").contains { $0.hasPrefix("w01: pending") && $0.contains("the watch may hold part of the revision") },
              "\(stdout)")
      // Its Changes column says so too, not `-` (nothing written: fresh-eyes finding).
      #expect(stdout.split(separator: "\n").contains { $0.hasPrefix("w01") && $0.contains("not known") }, "\(stdout)")
      // `status --fleet` does not call it settled either: pending, its agent offline, what it
      // holds not known — exit 1, as `apply` (fe17 defect 7a).
      let shown = try TSApplyBinary.run(["status", "--fleet", "fleet.yaml"], in: dir)
      #expect(shown.status == 1, "\(shown.stdout)\(shown.stderr)")
      #expect(shown.stdout.contains("the watch may hold part of it"), "\(shown.stdout)")
      #expect(shown.stderr.contains("1 of 1 watch not known: w01"), "\(shown.stderr)")
      return
    }
    #expect(stdout.contains("1 of 2 applied"), "\(stdout)")
    #expect(stderr.contains("1 of 1 watch holds part of the revision: w01 (its agent stopped part-way and is offline"), "\(stderr)")
    // `status --fleet` says the same, and exits 1 too.
    let shown = try TSApplyBinary.run(["status", "--fleet", "fleet.yaml"], in: dir)
    #expect(shown.status == 1, "\(shown.stdout)\(shown.stderr)")
    #expect(shown.stdout.contains("holds part of it (1 of 2 applied)"), "\(shown.stdout)")
    #expect(shown.stderr.contains("1 of 1 watch holds part of the revision: w01"), "\(shown.stderr)")
  }

  /// The agent killed (-9) in the middle of a revision's apply — its first change written, the
  /// second not — and a reminder switched off on the watch while it is down, in a field the
  /// manifest does not set. Started again, the agent finishes the revision and reports its two
  /// changes, not only the one left; and the wearer's change is drift (`status --fleet`), not
  /// taken into the agent's record as what tsapply left (fe17 defect 6).
  @Test func anAgentKilledMidApplyReportsTheWholeRevisionAndTheWearersChangeAsDriftWhenItReturns() throws {
    let dir = try TSApplyBinary.temporaryDirectory().resolvingSymlinksInPath()
    let broker = try MosquittoBroker.start(in: dir.path, configuration: MosquittoBroker.defaultConfiguration)
    defer { broker.stop() }
    let names = try Self.fleet(1, in: dir, broker: broker)
    let manifest = dir.appendingPathComponent("residents/w01.yaml")
    func write(phone: String, lunch: String) throws {
      try "contacts:\n  - {name: Family, phone: \"\(phone)\"}\nreminders:\n  custom:\n    - {name: Lunch, at: [\"\(lunch)\"]}\n    - {name: Medicine, at: [\"08:00\"]}\n"
        .write(to: manifest, atomically: true, encoding: .utf8)
    }
    try write(phone: "+15550110", lunch: "12:00")
    let first = try Self.agent("a1", names[...], broker: broker, in: dir)
    #expect(try FleetAgentTests.waitForStatus("a1 (online)", in: dir).contains("w01"))
    let applied = try TSApplyBinary.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--wait", "60s"], in: dir)
    #expect(applied.status == 0, "\(applied.stdout)\(applied.stderr)")
    first.send(SIGTERM)
    _ = first.finish()

    // The revision: Lunch at 13:00 and Family's new number. 600 ms per device call, after the
    // call took effect: the kill comes between the two writes.
    try write(phone: "+15550199", lunch: "13:00")
    let killed = try Self.agent("a1", names[...], broker: broker, in: dir, environment: ["TSAPPLY_SIM_LATENCY": "600,0"])
    defer { killed.send(SIGKILL); _ = killed.finish() }
    #expect(try FleetAgentTests.waitForStatus("a1 (online)", in: dir).contains("w01"))
    #expect(try Self.publish(stopping: killed, with: SIGKILL, in: dir).0 == 1)
    // The wearer switches Medicine off while the agent is down.
    let shown = try TSApplyBinary.run(["device", "show", "--device", "sim:watches/w01.json"], in: dir).stdout
    let medicine = try #require(shown.split(separator: "\n").first { $0.contains("\"Medicine\"") }?.split(separator: " ").first, "\(shown)")
    #expect(try TSApplyBinary.run(["device", "simulate", "reminder-toggle", String(medicine), "--device", "sim:watches/w01.json"],
                                  in: dir).status == 0)

    let returned = try Self.agent("a1", names[...], broker: broker, in: dir)
    defer { returned.send(SIGKILL); _ = returned.finish() }
    let table = try FleetAgentTests.waitForStatus(" drift ", in: dir)
    #expect(table.contains("w01    drift"), "\(table)\n\(returned.standardError)")
    returned.send(SIGTERM)
    let log = returned.finish().2
    #expect(log.contains("w01: revision") && log.contains(" applied (+0 ~2 -0)"), "\(log)")
    #expect(log.contains("w01: drift: 1 resource changed on the watch since the last apply"), "\(log)")
    #expect(try TSApplyBinary.run(["device", "show", "--device", "sim:watches/w01.json"], in: dir).stdout.contains("custom    off \"Medicine\""))
  }
}
