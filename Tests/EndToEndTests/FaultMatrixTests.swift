import Foundation
import Testing
import TSMQTT
import TSTestSupport

/// The fault matrix of "truth under faults" (docs/fleet.md "Agents over MQTT"): one rollout over
/// MQTT — a Mosquitto on 127.0.0.1 with its default settings (and persistence, as a site runs
/// it), two agent processes with three simulated watches each — under each fault, and one
/// oracle for all of them: the watches themselves, read directly (a twin fleet file without a
/// transport, planned by `tsapply plan --fleet`). Whatever the fault, no watch is left mixed,
/// every watch reported applied holds the new manifests, the exit code is 0 exactly when every
/// watch holds them, and once the site settles `status --fleet` and `drift --fleet` agree with
/// the watches: in sync, no drift — tsapply's own writes are never drift.
@Suite struct FaultMatrixTests {
  enum Fault: String, CaseIterable, CustomTestStringConvertible {
    /// The broker restarted while the agents apply (its Last Wills say they went offline).
    case brokerRestart
    /// An agent killed with SIGKILL in the middle of its watches, started again.
    case agentKilled
    /// Every watch of one agent fails its third device call for a reason that can pass (a timeout).
    case transientFailure
    /// Every watch of one agent loses the answer to its third device call, whose write landed.
    case lostAnswer

    var testDescription: String { rawValue }
  }

  @Test(arguments: Fault.allCases)
  func whatIsReportedIsWhatTheWatchesHold(_ fault: Fault) throws {
    let dir = try TSApplyBinary.temporaryDirectory().resolvingSymlinksInPath()
    var broker = try FleetRolloutTests.persistentBroker(in: dir)
    defer { broker.stop() }
    let names = try FleetRolloutTests.fleet(6, in: dir, broker: broker)
    // The oracle: the same watches and manifests, reached directly.
    let fleet = try String(contentsOf: dir.appendingPathComponent("fleet.yaml"), encoding: .utf8)
    try fleet.split(separator: "\n").filter { !$0.hasPrefix("transport:") && !$0.hasPrefix("site:") }.joined(separator: "\n")
      .write(to: dir.appendingPathComponent("direct.yaml"), atomically: true, encoding: .utf8)

    var faulty: [String: String] = ["TSAPPLY_SIM_LATENCY": "150,0"]
    switch fault {
    case .transientFailure: faulty["TSAPPLY_SIM_FAULT"] = "fail@3"
    case .lostAnswer: faulty["TSAPPLY_SIM_FAULT"] = "lands-then-fails@3"
    case .brokerRestart, .agentKilled: break
    }
    let first = try FleetRolloutTests.agent("a1", names.prefix(3), broker: broker, in: dir, environment: ["TSAPPLY_SIM_LATENCY": "50,0"])
    var second = try FleetRolloutTests.agent("a2", names.suffix(3), broker: broker, in: dir, environment: faulty)
    defer {
      for agent in [first, second] { agent.send(SIGKILL); _ = agent.finish() }
    }
    #expect(try FleetAgentTests.waitForStatus("a2 (online)", in: dir).contains("a1 (online)"))

    // Every watch gets a second contact.
    for (index, name) in names.enumerated() {
      try "contacts:\n  - {name: Family, phone: \"+1555011\(index % 10)\"}\n  - {name: Nurse, phone: \"+15550177\"}\nreminders:\n  custom:\n    - {name: Lunch, at: [\"12:00\"]}\n"
        .write(to: dir.appendingPathComponent("residents/\(name).yaml"), atomically: true, encoding: .utf8)
    }
    let rollout = try TSApplyBinary.start(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--json", "--wait", "90s"], in: dir)
    func applied(_ agent: ListeningProcess) -> Int { agent.standardError.components(separatedBy: " applied (").count - 1 }
    switch fault {
    case .brokerRestart:
      for _ in 0..<1000 where applied(first) + applied(second) < 2 { usleep(10_000) }
      broker = try broker.restart()
    case .agentKilled:
      for _ in 0..<1000 where applied(second) < 1 { usleep(10_000) }
      second.send(SIGKILL)
      _ = second.finish()
      second = try FleetRolloutTests.agent("a2", names.suffix(3), broker: broker, in: dir, environment: faulty)
    case .transientFailure, .lostAnswer: break
    }
    let result = rollout.wait()
    // The fault happened.
    switch fault {
    case .brokerRestart: #expect(first.standardError.contains("lost the broker"), "\(first.standardError)")
    case .transientFailure: #expect(second.standardError.contains(" retrying: "), "\(second.standardError)")
    case .agentKilled, .lostAnswer: break
    }

    // What the watches hold: no changes left to make, or the whole change (never part of it).
    let direct = try TSApplyBinary.run(["plan", "--fleet", "direct.yaml", "--json"], in: dir)
    let rows = try #require((try JSONSerialization.jsonObject(with: Data(direct.stdout.utf8)) as? [String: Any])?["watches"] as? [[String: Any]],
                            "\(direct.stdout)\(direct.stderr)")
    var holds: [String: Bool] = [:]
    for row in rows {
      let name = row["name"] as? String ?? "?"
      let shown = try TSApplyBinary.run(["device", "show", "--device", "sim:watches/\(name).json"], in: dir).stdout
      #expect(shown.contains("Family") && shown.contains("Lunch"), "\(fault) \(name): mixed: \(shown)")
      holds[name] = (row["result"] as? String) == "no changes"
    }
    #expect(holds.count == names.count)
    // What the rollout reported.
    let report = try #require((try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])?["watches"] as? [[String: Any]],
                              "\(fault): \(result.stdout)\(result.stderr)")
    for row in report {
      let name = row["name"] as? String ?? "?", word = row["result"] as? String ?? "?"
      if word == "applied" || word == "no changes" { #expect(holds[name] == true, "\(fault) \(name): reported \(word), but the watch does not hold it") }
    }
    let everyWatchHolds = holds.values.allSatisfy { $0 }
    #expect((result.status == 0) == everyWatchHolds, "\(fault): exit \(result.status), holds \(holds)\n\(result.stderr)")
    // The faults are all ridden out within the wait.
    #expect(result.status == 0, "\(fault): \(result.stdout)\(result.stderr)")

    // Settled, the views agree with the watches; tsapply's own writes are not drift.
    let settled = try TSApplyBinary.run(["status", "--fleet", "fleet.yaml", "--wait", "60s"], in: dir)
    #expect(settled.status == 0, "\(fault): \(settled.stdout)\(settled.stderr)")
    for name in names {
      let line = settled.stdout.split(separator: "\n").first { $0.hasPrefix(name + " ") }.map(String.init) ?? ""
      #expect(line.contains(" in sync ") == (holds[name] == true), "\(fault): \(line)")
    }
    let drift = try TSApplyBinary.run(["drift", "--fleet", "fleet.yaml"], in: dir)
    #expect(drift.status == 0, "\(fault): \(drift.stdout)\(drift.stderr)")
    #expect(drift.stdout.hasSuffix("6 watches: 6 with no drift.\n"), "\(fault): \(drift.stdout)")
  }
}
