import Foundation
import Testing
import TSMQTT
import TSTestSupport

/// `tsapply status --fleet` over MQTT as a process, through a Mosquitto on 127.0.0.1 with its
/// default settings: `--wait` until the site settles, and a view that cannot be completed.
@Suite struct FleetStatusWaitTests {
  /// The two-watch fleet of `FleetAgentTests.fleet(transport:)` on a broker started for it with
  /// `configuration` (the caller stops it).
  static func fleet(configuration: @escaping (Int, String) -> String = MosquittoBroker.defaultConfiguration) throws -> (URL, MosquittoBroker) {
    let dir = try FleetAgentTests.fleet(transport: "mqtt://127.0.0.1:1")
    let broker = try MosquittoBroker.start(in: dir.path, configuration: configuration)
    let text = try String(contentsOf: dir.appendingPathComponent("fleet.yaml"), encoding: .utf8)
      .replacingOccurrences(of: "mqtt://127.0.0.1:1", with: "\(broker.address)")
    try text.write(to: dir.appendingPathComponent("fleet.yaml"), atomically: true, encoding: .utf8)
    return (dir, broker)
  }

  @Test func statusWaitsUntilTheAgentsHaveAppliedWhatWasPublishedAndSaysWhenTheyHaveNot() throws {
    let (dir, broker) = try Self.fleet()
    defer { broker.stop() }
    // 400 ms per device call: applying a watch takes a few seconds.
    let agent = try ListeningProcess(["agent", "--broker", "\(broker.address)", "--site", "ward-a", "--agent-id", "station",
                                      "--device", "sim:watches/room-12.json", "--device", "sim:watches/room-14.json"],
                                     in: dir, environment: ["TSAPPLY_SIM_LATENCY": "400,0"])
    defer { agent.send(SIGKILL); _ = agent.finish() }
    #expect(try FleetAgentTests.waitForStatus("station (online)", in: dir).contains("room-12  no status"))
    // Nothing published yet, no agent has reported on either watch: what they hold is not known,
    // and the exit status says so (not 0 beside a table of `no status`).
    let unannounced = try TSApplyBinary.run(["status", "--fleet", "fleet.yaml"], in: dir)
    #expect(unannounced.status == 1, "\(unannounced.stdout)\(unannounced.stderr)")
    #expect(unannounced.stderr.contains("2 of 2 watches not known: room-12, room-14 (their agents have not reported what the watches hold "
                                        + "now: their rows above say why)"), "\(unannounced.stderr)")
    let published = try TSApplyBinary.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--wait", "1s"], in: dir)
    #expect(published.status == 0, "\(published.stderr)")
    #expect(published.stdout.contains("room-12: pending (revision "), "\(published.stdout)")

    // The agent is still applying: a short wait ends unsettled, and says so — also when a watch
    // failed besides (room-14's manifest broken now): both are said (only the failure was).
    let manifest = dir.appendingPathComponent("residents/room-14.yaml")
    let kept = try String(contentsOf: manifest, encoding: .utf8)
    try "contacts: [\n".write(to: manifest, atomically: true, encoding: .utf8)
    let early = try TSApplyBinary.run(["status", "--fleet", "fleet.yaml", "--wait", "1s"], in: dir)
    try kept.write(to: manifest, atomically: true, encoding: .utf8)
    #expect(early.status == 1)
    #expect(early.stdout.contains("room-12  applying"), "\(early.stdout)")
    #expect(early.stderr.contains("1 of 2 watches failed: room-14; the site did not settle within 1s: 1 watch applying or retrying: room-12"),
            "\(early.stderr)")

    // Waiting long enough ends when both are applied, well before the duration.
    let start = Date()
    let settled = try TSApplyBinary.run(["status", "--fleet", "fleet.yaml", "--wait", "2m", "--json"], in: dir)
    let elapsed = Date().timeIntervalSince(start)
    #expect(settled.status == 0, "\(settled.stderr)")
    let watches = try #require((try JSONSerialization.jsonObject(with: Data(settled.stdout.utf8)) as? [String: Any])?["watches"] as? [[String: Any]])
    #expect(watches.map { $0["state"] as? String } == ["in sync", "in sync"], "\(settled.stdout)")
    #expect(elapsed < 60, "status --wait returned after \(elapsed)s")
    // What it reported is what the watches hold.
    let plan = try TSApplyBinary.run(["plan", "--fleet", "fleet.yaml"], in: dir)
    #expect(plan.stdout.hasSuffix("2 watches: 2 with no changes.\n"), "\(plan.stdout)")

    // The agent goes away: the site is not settled while it is offline.
    agent.send(SIGTERM)
    _ = agent.finish()
    let offline = try TSApplyBinary.run(["status", "--fleet", "fleet.yaml", "--wait", "1s"], in: dir)
    #expect(offline.status == 1)
    #expect(offline.stderr.contains("the site did not settle within 1s: agent station offline"), "\(offline.stderr)")
    // Without --wait too: what the watches hold now is not known, and the exit status says so.
    let shown = try TSApplyBinary.run(["status", "--fleet", "fleet.yaml"], in: dir)
    #expect(shown.status == 1, "\(shown.stdout)\(shown.stderr)")
    #expect(shown.stdout.contains("room-12  offline") && shown.stdout.contains("agent station is offline: what the watch holds now is not known"),
            "\(shown.stdout)")
    #expect(shown.stderr.contains("2 of 2 watches not known: room-12, room-14"), "\(shown.stderr)")
    // And after an edit not published yet (a new revision): still offline, drift not known.
    let ward = dir.appendingPathComponent("wards/ward-a.yaml")
    try (String(contentsOf: ward, encoding: .utf8).replacingOccurrences(of: "12:00", with: "12:30")).write(to: ward, atomically: true, encoding: .utf8)
    let drift = try TSApplyBinary.run(["drift", "--fleet", "fleet.yaml"], in: dir)
    #expect(drift.status == 1 && drift.stdout.contains("not known") && !drift.stdout.contains("with no drift"), "\(drift.stdout)\(drift.stderr)")
  }

  @Test func aViewThatCannotBeCompletedIsAnErrorNotAPartialTable() throws {
    // The broker lets anyone read the statuses and presences but not the view's marker topic.
    let (dir, broker) = try Self.fleet { port, directory in
      let acl = directory + "/acl"
      #expect(FileManager.default.createFile(atPath: acl, contents: Data("topic read tsapply/v1/ward-a/+/status\ntopic read tsapply/v1/ward-a/agent/+/state\n".utf8)))
      return MosquittoBroker.defaultConfiguration(port: port, directory: directory) + "acl_file \(acl)\n"
    }
    defer { broker.stop() }
    // plan and drift give up after 30 s, status after its --wait: run at once.
    let commands = [["status", "--wait", "2s"], ["status"], ["plan"], ["drift"]]
    let running = try commands.map { try TSApplyBinary.start($0 + ["--fleet", "fleet.yaml"], in: dir) }
    for (command, process) in zip(commands, running) {
      let result = process.wait()
      #expect(result.status == 1, "\(command)")
      #expect(result.stderr.contains("the view of site ward-a is incomplete"), "\(command): \(result.stderr)")
      #expect(!result.stdout.contains("room-12"), "\(command): \(result.stdout)")
    }
  }
}
