import Foundation
import Testing
import TSApplyNetworkCLI
import TSApplyCLI
import TSTestSupport

/// `plan`, `apply` and `drift` with `--fleet`, run in-process: sections, the summary table, the
/// aggregated exit status, the JSON report, one question for the whole fleet.
@Suite struct FleetCommandTests {
  /// A fleet of two simulated watches under shared defaults, and a third whose device is missing.
  struct Fleet {
    let directory: String

    init() async throws {
      directory = try TSApplyBinary.temporaryDirectory().resolvingSymlinksInPath().path
      try write("wards/ward-a.yaml", "reminders:\n  custom:\n    - {name: Lunch, at: [\"12:00\"]}\ncontacts:\n  - {name: Ward desk, phone: \"+15550100\"}\n")
      try write("residents/room-1.yaml", "contacts:\n  - {name: Daughter, phone: \"+15550111\"}\n")
      try write("fleet.yaml", """
        defaults: wards/ward-a.yaml
        watches:
          room-1: {device: "sim:watches/room-1.json", manifest: residents/room-1.yaml}
          room-2: {device: "sim:watches/room-2.json"}
          room-3: {device: "sim:watches/room-3.json"}

        """)
      for name in ["room-1", "room-2"] {
        let (status, _, err) = await run(["device", "init", "--device", "sim:watches/\(name).json"])
        #expect(status == .success, "\(err)")
      }
    }

    func write(_ name: String, _ text: String) throws {
      let path = directory + "/" + name
      try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
      try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    func run(_ arguments: [String], terminal: Bool = false, answer: String? = nil) async -> (TSApplyCLI.ExitStatus, String, String) {
      let out = BufferOutput(), err = BufferOutput()
      let context = CommandContext(stdout: out, stderr: err, readLine: { answer }, stdinIsTerminal: terminal,
                                   environment: ["TSAPPLY_STATE_DIR": directory + "/state"], currentDirectory: directory,
                                   toolset: .network)
      let status = await CLI.run(arguments, context: context)
      return (status, out.text, err.text)
    }
  }

  @Test func planShowsASectionPerWatchAndATableAndFailsWhenOneWatchFails() async throws {
    let fleet = try await Fleet()
    let (status, out, err) = await fleet.run(["plan", "--fleet", "fleet.yaml"])
    #expect(status == .failure)
    #expect(out.contains("=== room-1  device sim:watches/room-1.json  manifest residents/room-1.yaml over wards/ward-a.yaml\n"))
    #expect(out.contains("=== room-2  device sim:watches/room-2.json  manifest wards/ward-a.yaml\n"))
    #expect(out.contains("Error: no simulated watch at \(fleet.directory)/watches/room-3.json"))
    let table = out.components(separatedBy: "\n\nWatch ").last ?? ""
    #expect(table.hasPrefix("  Result   Changes   Time\nroom-1  changes  +1 ~1 -0  "))
    #expect(table.contains("\nroom-2  changes  +1 ~1 -0  "))
    #expect(table.contains("\nroom-3  failed   -         "))
    #expect(table.hasSuffix("\n\n3 watches: 2 with changes, 1 failed.\n"))
    #expect(err == "Error: 1 of 3 watches failed: room-3\n")
  }

  /// One watch: the totals line is in the singular ("1 watch: 1 with changes.", never "1 changes").
  @Test func theTotalsOfOneWatchAreSingular() async throws {
    let fleet = try await Fleet()
    let (_, out, _) = await fleet.run(["plan", "--fleet", "fleet.yaml", "--watch", "room-1"])
    #expect(out.hasSuffix("\n\n1 watch: 1 with changes.\n"), "\(out)")
    let (_, failedOut, failedErr) = await fleet.run(["plan", "--fleet", "fleet.yaml", "--watch", "room-3"])
    #expect(failedOut.hasSuffix("\n\n1 watch: 1 failed.\n"), "\(failedOut)")
    #expect(failedErr == "Error: 1 of 1 watch failed: room-3\n")
  }

  @Test func detailedExitCodeIsTwoWhenAWatchHasChangesAndNoneFailed() async throws {
    let fleet = try await Fleet()
    let (status, _, _) = await fleet.run(["plan", "--fleet", "fleet.yaml", "--watch", "room-1", "--watch", "room-2", "--detailed-exitcode"])
    #expect(status == .changesPresent)
  }

  @Test func applyAsksOnceForEveryWatchAndAppliesThoseApproved() async throws {
    let fleet = try await Fleet()
    let selection = ["--fleet", "fleet.yaml", "--watch", "room-1", "--watch", "room-2"]
    let refused = await fleet.run(["apply"] + selection)
    #expect(refused.0 == .failure)
    #expect(refused.2.contains("refusing to apply without confirmation: standard input is not a terminal."))
    let (status, out, err) = await fleet.run(["apply"] + selection, terminal: true, answer: "yes")
    #expect(status == .success, "\(err)")
    #expect(out.contains("Do you want to perform these actions on 2 watches?"))
    #expect(out.components(separatedBy: "Apply complete! Resources: 1 added, 1 changed, 0 destroyed.").count == 3)
    #expect(out.hasSuffix("2 watches: 2 applied.\n"))
    let (planStatus, planOut, _) = await fleet.run(["plan", "--detailed-exitcode"] + selection)
    #expect(planStatus == .success)
    #expect(planOut.hasSuffix("2 watches: 2 with no changes.\n"))
  }

  @Test func applyJSONHasAResultPerWatch() async throws {
    let fleet = try await Fleet()
    let (status, out, _) = await fleet.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--json"])
    #expect(status == .failure)
    let report = try #require(try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any])
    let watches = try #require(report["watches"] as? [[String: Any]])
    let names = watches.map { $0["name"] as? String ?? "" }
    let results = watches.map { $0["result"] as? String ?? "" }
    #expect(names == ["room-1", "room-2", "room-3"])
    #expect(results == ["applied", "applied", "failed"])
    let error = watches[2]["error"] as? String ?? ""
    #expect(error.hasPrefix("no simulated watch at"))
    let summary = try #require(report["summary"] as? [String: Any])
    #expect(summary["failed"] as? Int == 1)
  }

  @Test func driftOverTheFleetExitsTwoWhenAWatchDrifted() async throws {
    let fleet = try await Fleet()
    _ = await fleet.run(["apply", "--fleet", "fleet.yaml", "--watch", "room-1", "--watch", "room-2", "--auto-approve"])
    _ = await fleet.run(["device", "simulate", "contact-add", "Zed", "+15550199", "--device", "sim:watches/room-2.json"])
    let (status, out, _) = await fleet.run(["drift", "--fleet", "fleet.yaml", "--watch", "room-1", "--watch", "room-2"])
    #expect(status == .changesPresent)
    #expect(out.contains("\nroom-1  no drift  0 drifted"))
    #expect(out.contains("\nroom-2  drift     1 drifted, 1 pending"))
  }

  @Test func statusFailsWhenAWatchCannotBeReadOrItsRecordsCannotBeUsed() async throws {
    let fleet = try await Fleet()
    _ = await fleet.run(["apply", "--fleet", "fleet.yaml", "--watch", "room-1", "--watch", "room-2", "--auto-approve"])
    let (good, goodOut, _) = await fleet.run(["status", "--fleet", "fleet.yaml", "--watch", "room-1", "--watch", "room-2"])
    #expect(good == .success, "\(goodOut)")
    // room-2's drift record broken; room-3 has no watch file.
    let records = try FileManager.default.contentsOfDirectory(atPath: fleet.directory + "/state/watches").map { fleet.directory + "/state/watches/" + $0 }
    let room2 = try #require(records.first { (try? String(contentsOfFile: $0 + "/watch.json", encoding: .utf8))?.contains("room-2.json") == true })
    try "{\"x\":1}".write(toFile: room2 + "/last-applied.json", atomically: true, encoding: .utf8)
    let (status, out, err) = await fleet.run(["status", "--fleet", "fleet.yaml"])
    #expect(status == .failure)
    #expect(out.contains("\nroom-1  in sync "), "\(out)")
    #expect(out.contains("\nroom-2  failed "), "\(out)")
    #expect(out.contains("\nroom-3  unreachable "), "\(out)")
    #expect(err == "Error: 2 of 3 watches failed: room-2, room-3\n")
  }

  @Test(arguments: [
    (["plan", "--fleet", "fleet.yaml", "watch.yaml"], "with --fleet, the manifests come from the fleet file; remove 'watch.yaml'"),
    (["plan", "--fleet", "fleet.yaml", "--device", "sim:x.json"], "with --fleet, each watch's device comes from the fleet file; remove --device"),
    (["plan", "--watch", "room-1"], "--watch, -parallelism and --wait only matter with --fleet FILE"),
    (["plan", "--fleet", "fleet.yaml", "-parallelism=0"], "-parallelism expects a number of watches from 1 to 1000, got '0'"),
    (["apply", "--fleet", "fleet.yaml", "--json"], "apply --fleet --json needs --auto-approve (a JSON report cannot ask for confirmation)"),
    (["plan", "--fleet", "fleet.yaml", "-out", "x.tfplan"], "-out saves the plan of one watch; it cannot be used with --fleet"),
  ])
  func usageMistakes(_ arguments: [String], _ message: String) async throws {
    let fleet = try await Fleet()
    let (status, _, err) = await fleet.run(arguments)
    #expect(status == .usage)
    #expect(err.hasPrefix("Error: \(message)\n"))
  }
}
