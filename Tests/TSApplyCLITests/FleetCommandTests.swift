import Foundation
import Testing
import TSEngine
import TSFleet
import TSMonitor
@testable import TSApplyNetworkCLI
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

    func run(_ arguments: [String], terminal: Bool = false, answer: String? = nil,
             environment: [String: String] = [:]) async -> (TSApplyCLI.ExitStatus, String, String) {
      let out = BufferOutput(), err = BufferOutput()
      let context = CommandContext(stdout: out, stderr: err, readLine: { answer }, stdinIsTerminal: terminal,
                                   environment: environment.merging(["TSAPPLY_STATE_DIR": directory + "/state"]) { $1 },
                                   currentDirectory: directory,
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
    #expect(table.hasPrefix("  Result       Changes   Time\nroom-1  changes      +1 ~1 -0  "), "\(table)")
    #expect(table.contains("\nroom-2  changes      +1 ~1 -0  "))
    // No watch there: it cannot be read, as `status --fleet` says.
    #expect(table.contains("\nroom-3  unreachable  -         "))
    #expect(table.hasSuffix("\n\n3 watches: 2 with changes, 1 unreachable.\n"))
    #expect(err == "Error: 1 of 3 watches out of reach: room-3 (nothing was read or written; its section says why, and what is known of it)\n", "\(err)")
  }

  /// One watch: the totals line is in the singular ("1 watch: 1 with changes.", never "1 changes").
  @Test func theTotalsOfOneWatchAreSingular() async throws {
    let fleet = try await Fleet()
    let (_, out, _) = await fleet.run(["plan", "--fleet", "fleet.yaml", "--watch", "room-1"])
    #expect(out.hasSuffix("\n\n1 watch: 1 with changes.\n"), "\(out)")
    let (_, failedOut, failedErr) = await fleet.run(["plan", "--fleet", "fleet.yaml", "--watch", "room-3"])
    #expect(failedOut.hasSuffix("\n\n1 watch: 1 unreachable.\n"), "\(failedOut)")
    #expect(failedErr.hasPrefix("Error: 1 of 1 watch out of reach: room-3 ("), "\(failedErr)")
  }

  /// The review: the failed watch first; `--only failed` shows it alone (the totals still
  /// count every watch); `--summary` is one line per group; an empty plan names every manifest
  /// merged for the watch, not only its own.
  @Test func theReviewShowsFailuresFirstFiltersAndSummarises() async throws {
    let fleet = try await Fleet()
    let (_, out, _) = await fleet.run(["plan", "--fleet", "fleet.yaml"])
    let failed = try #require(out.range(of: "=== room-3 "))
    let changed = try #require(out.range(of: "=== room-1 "))
    #expect(failed.lowerBound < changed.lowerBound, "\(out)")
    let (_, only, _) = await fleet.run(["plan", "--fleet", "fleet.yaml", "--only", "failed"])
    #expect(only.contains("=== room-3 ") && !only.contains("room-1") && !only.contains("room-2"), "\(only)")
    #expect(only.hasSuffix("3 watches: 2 with changes, 1 unreachable.\nShown: 1 of 3 watches (--only failed).\n"), "\(only)")
    let (_, summary, _) = await fleet.run(["plan", "--fleet", "fleet.yaml", "--summary"])
    #expect(summary.hasPrefix("Planning 3 watches of fleet.yaml...\n\nroom-3: unreachable: no simulated watch at "), "\(summary)")
    // room-1's own contact joins the ward's (lists merge by name): two changes to its contacts.
    #expect(summary.contains("\nroom-1: ~ contacts (2 changes), + reminder.custom[\"Lunch\"] { + name = \"Lunch\" + enabled = true + at = [\"12:00\"] }\n"), "\(summary)")
    #expect(summary.components(separatedBy: "\n").count == 8, "\(summary)")
    _ = await fleet.run(["apply", "--fleet", "fleet.yaml", "--watch", "room-1", "--auto-approve"])
    let (_, json, _) = await fleet.run(["plan", "--fleet", "fleet.yaml", "--watch", "room-1", "--json"])
    #expect(json.contains("\"manifest\" : \"residents/room-1.yaml over wards/ward-a.yaml\""), "\(json)")
    // The plan's JSON form is made for `--json` only (not for the review), and is there.
    #expect(json.contains("\"plan\" : {") && json.contains("\"resource_changes\""), "\(json)")
  }

  /// `plan --fleet -out` saves every watch's plan; `apply PLANFILE` applies the parts still
  /// current (an unsafe one too: the review satisfies the safety gate) and refuses, per watch,
  /// a part whose watch changed since, touching nothing of it.
  @Test func aFleetsSavedPlanIsAppliedPerWatchAndStalePartsAreRefused() async throws {
    let fleet = try await Fleet()
    let selection = ["--fleet", "fleet.yaml", "--watch", "room-1", "--watch", "room-2"]
    _ = await fleet.run(["apply"] + selection + ["--auto-approve"])
    // room-1 gets an unsafe change (its daughter removed); room-2 a safe one.
    try fleet.write("residents/room-1.yaml", "contacts: []\n")
    try fleet.write("wards/ward-a.yaml", "reminders:\n  custom:\n    - {name: Lunch, at: [\"12:30\"]}\ncontacts:\n  - {name: Ward desk, phone: \"+15550100\"}\n")
    let (planStatus, planOut, planErr) = await fleet.run(["plan"] + selection + ["-out", "fleet.tfplan"])
    #expect(planStatus == .success, "\(planErr)")
    #expect(planOut.contains("Saved the plans of 2 watches to: fleet.tfplan"), "\(planOut)")
    let mode = try FileManager.default.attributesOfItem(atPath: fleet.directory + "/fleet.tfplan")[.posixPermissions] as? Int
    #expect(mode == 0o600)
    // `show` reviews the saved plan as `plan --fleet` did.
    let (showStatus, shown, _) = await fleet.run(["show", "fleet.tfplan", "--redact"])
    #expect(showStatus == .success)
    #expect(shown.contains("=== room-1  device sim:watches/room-1.json\n") && shown.contains("(!) Unsafe for an unattended apply"), "\(shown)")
    #expect(!shown.contains("5550111") && shown.contains("\"+******11\" ‹"), "\(shown)")
    // room-2 changes on the watch itself after the review.
    _ = await fleet.run(["device", "simulate", "contact-add", "Zed", "+15550199", "--device", "sim:watches/room-2.json"])
    let (status, out, err) = await fleet.run(["apply", "fleet.tfplan"])
    #expect(status == .failure)
    #expect(err == "Error: 1 of 2 watches refused: room-2 (its part of the saved plan no longer applies, so nothing was written to it: plan again, review and apply the new plan)\n", "\(err)")
    #expect(out.contains("not applied: the saved plan is stale: the watch changed since the plan was made; nothing was written."), "\(out)")
    #expect(out.contains("\nroom-1  applied "), "\(out)")
    let (_, after, _) = await fleet.run(["plan", "--fleet", "fleet.yaml", "--watch", "room-1", "--detailed-exitcode"])
    #expect(after.contains("No changes."), "\(after)")
    let (_, room2, _) = await fleet.run(["plan", "--fleet", "fleet.yaml", "--watch", "room-2"])
    #expect(room2.contains("at = [\"12:00\"] -> [\"12:30\"]"), "room-2 was not touched: \(room2)")
  }

  /// A part edited by hand (changes its manifests do not give) is refused, and a watch that
  /// left the fleet file since the plan is reported, not applied.
  @Test func anEditedPartAndAWatchThatLeftTheFleetAreRefused() async throws {
    let fleet = try await Fleet()
    let (_, _, planErr) = await fleet.run(["plan", "--fleet", "fleet.yaml", "--watch", "room-1", "--watch", "room-2", "-out", "fleet.tfplan"])
    #expect(planErr.isEmpty, "\(planErr)")
    let path = fleet.directory + "/fleet.tfplan"
    let text = try String(contentsOfFile: path, encoding: .utf8)
    #expect(text.contains("\"Daughter\""))
    try text.replacingOccurrences(of: "\"Daughter\"", with: "\"Stranger\"").write(toFile: path, atomically: true, encoding: .utf8)
    try fleet.write("fleet.yaml", "defaults: wards/ward-a.yaml\nwatches:\n  room-1: {device: \"sim:watches/room-1.json\", manifest: residents/room-1.yaml}\n")
    let (status, out, err) = await fleet.run(["apply", "fleet.tfplan"])
    #expect(status == .failure)
    #expect(out.contains("does not hold the changes its manifest gives for this watch (was it edited?)"), "\(out)")
    #expect(out.contains("Error: room-2 is no longer in fleet.yaml; nothing was written."), "\(out)")
    #expect(err == "Error: 2 of 2 watches refused: room-1, room-2 (their parts of the saved plan no longer apply, so nothing was written to them: plan again, review and apply the new plan)\n", "\(err)")
    let (_, after, _) = await fleet.run(["plan", "--fleet", "fleet.yaml", "--detailed-exitcode"])
    #expect(!after.contains("Stranger") && after.contains("Daughter"), "nothing was written: \(after)")
  }

  /// `--redact` over a fleet: every output shows each masked number's fingerprint (equal
  /// numbers, equal fingerprints: the ward desk's on both watches) and no number.
  @Test(arguments: [[], ["--summary"], ["--markdown"], ["--json"]])
  func redactedFleetOutputsCarryFingerprintsAndNoNumber(_ form: [String]) async throws {
    let fleet = try await Fleet()
    let (_, out, _) = await fleet.run(["plan", "--fleet", "fleet.yaml", "--redact"] + form)
    #expect(!out.contains("5550111") && !out.contains("5550100"), "\(out)")
    let key = try String(contentsOfFile: fleet.directory + "/state/redaction.key", encoding: .utf8)
    #expect(key.count == 65)
    if form == ["--json"] {
      #expect(out.contains("\"phoneNum_fingerprint\" : \""), "\(out)")
    } else {
      #expect(out.contains("\"+******00\" ‹") || out.contains("\"+******11\" ‹"), "\(out)")
    }
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
    // After the approval, each applied watch is one line (its plan was shown before the question).
    #expect(out.components(separatedBy: "\napplied: ~ contacts ").count == 3, "\(out)")
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
    #expect(results == ["applied", "applied", "unreachable"])
    let error = watches[2]["error"] as? String ?? ""
    #expect(error.hasPrefix("no simulated watch at"))
    let summary = try #require(report["summary"] as? [String: Any])
    #expect(summary["failed"] as? Int == 0 && summary["unreachable"] as? Int == 1, "\(out)")
  }

  /// A watch whose plan the safety gate refuses (`--auto-approve` without `--allow-destroy`;
  /// room-1's daughter removed) is `refused`, not `failed`: in the table, the totals, the JSON
  /// and the error, which says how to apply it. Nothing is written to it; not applied, it
  /// counts against the exit status (docs/fleet.md).
  @Test func anUnsafePlanIsRefusedNotFailed() async throws {
    let fleet = try await Fleet()
    _ = await fleet.run(["apply", "--fleet", "fleet.yaml", "--watch", "room-1", "--watch", "room-2", "--auto-approve"])
    try fleet.write("residents/room-1.yaml", "contacts: []\n")
    let (status, out, err) = await fleet.run(["apply", "--fleet", "fleet.yaml", "--auto-approve"])
    #expect(status == .failure)
    #expect(out.contains("=== room-1 ") && out.contains("or add --allow-destroy to --auto-approve."), "\(out)")
    let table = out.components(separatedBy: "\n\nWatch ").last ?? ""
    #expect(table.contains("\nroom-1  refused      -  "), "\(table)")
    #expect(table.contains("\nroom-2  no changes   +0 ~0 -0  "), "\(table)")
    #expect(table.contains("\nroom-3  unreachable  -  "), "\(table)")
    #expect(table.hasSuffix("\n\n3 watches: 1 refused, 1 with no changes, 1 unreachable.\n"), "\(table)")
    #expect(err == "Error: 1 of 3 watches out of reach: room-3 (nothing was read or written; its section says why, and what is known of it); 1 refused: room-1 (its plan is unsafe, so nothing was written to it: "
      + "rerun with --auto-approve --allow-destroy --watch room-1 to apply it alone, or review it without --auto-approve)\n", "\(err)")
    let (jsonStatus, json, _) = await fleet.run(["apply", "--fleet", "fleet.yaml", "--watch", "room-1", "--auto-approve", "--json"])
    #expect(jsonStatus == .failure)
    let report = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    let watch = try #require((report["watches"] as? [[String: Any]])?.first)
    #expect(watch["result"] as? String == "refused")
    #expect((watch["reason"] as? String ?? "").hasPrefix("refusing to apply without review: this plan "), "\(watch)")
    let summary = try #require(report["summary"] as? [String: Any])
    #expect(summary["failed"] as? Int == 0 && summary["refused"] as? Int == 1, "\(summary)")
    #expect((summary["by_result"] as? [String: Int]) == ["refused": 1], "\(summary)")
    let (_, after, _) = await fleet.run(["plan", "--fleet", "fleet.yaml", "--watch", "room-1"])
    #expect(after.contains("Daughter"), "nothing was written: \(after)")
  }

  /// A watch whose apply stopped part-way says in the table what reached it (`2 of 3
  /// applied`), as its history does, not `-`; `--json` has it as `reached`.
  @Test func aPartWayApplySaysWhatReachedTheWatch() async throws {
    var partWay: [String] = []
    for call in 4...14 where partWay.isEmpty {
      let fleet = try await Fleet()
      let fault = ["TSAPPLY_SIM_FAULT": "fail@\(call)"]
      let (status, out, _) = await fleet.run(["apply", "--fleet", "fleet.yaml", "--watch", "room-1", "--auto-approve"], environment: fault)
      guard status == .failure, let row = out.split(separator: "\n").first(where: { $0.hasPrefix("room-1  failed") }) else { continue }
      guard row.contains(" applied") else {
        #expect(row.contains("failed  -"), "\(row)")
        continue
      }
      partWay.append(String(row))
      let (_, history, _) = await fleet.run(["history", "--device", "sim:watches/room-1.json"])
      let reached = try #require(row.firstMatch(of: /(\d+) of (\d+) applied/))
      #expect(history.contains("\(reached.1) of \(reached.2) applied"), "the history says the same: \(history)")
    }
    #expect(!partWay.isEmpty, "no fault index stopped the apply part-way")
  }

  @Test func driftOverTheFleetExitsTwoWhenAWatchDrifted() async throws {
    let fleet = try await Fleet()
    _ = await fleet.run(["apply", "--fleet", "fleet.yaml", "--watch", "room-1", "--watch", "room-2", "--auto-approve"])
    _ = await fleet.run(["device", "simulate", "contact-add", "Zed", "+15550199", "--device", "sim:watches/room-2.json"])
    let (status, out, _) = await fleet.run(["drift", "--fleet", "fleet.yaml", "--watch", "room-1", "--watch", "room-2"])
    #expect(status == .changesPresent)
    #expect(out.contains("\nroom-1  no drift  0 drifted"))
    #expect(out.contains("\nroom-2  drift     1 drifted  "), "\(out)")
  }

  /// A manifest edited and not applied: with `--pending` the totals and the JSON summary count
  /// the watch with its changes, as the exit status 2 does (not `with no drift`, `with_changes: 0`).
  @Test(arguments: [(["--pending"], TSApplyCLI.ExitStatus.changesPresent, "1 watch: 1 with pending changes.", 1),
                    ([], TSApplyCLI.ExitStatus.success, "1 watch: 1 with no drift.", 0)])
  func pendingChangesAreCountedAsTheExitStatusCountsThem(_ flags: [String], _ expected: TSApplyCLI.ExitStatus, _ totals: String,
                                                        _ withChanges: Int) async throws {
    let fleet = try await Fleet()
    _ = await fleet.run(["apply", "--fleet", "fleet.yaml", "--watch", "room-1", "--auto-approve"])
    try fleet.write("residents/room-1.yaml", "contacts:\n  - {name: Daughter, phone: \"+15550111\"}\n  - {name: Son, phone: \"+15550112\"}\n")
    let (status, out, err) = await fleet.run(["drift", "--fleet", "fleet.yaml", "--watch", "room-1"] + flags)
    #expect(status == expected, "\(out)\(err)")
    #expect(out.hasSuffix(totals + "\n"), "\(out)")
    let (_, json, _) = await fleet.run(["drift", "--fleet", "fleet.yaml", "--watch", "room-1", "--json"] + flags)
    let summary = try #require((try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])?["summary"] as? [String: Any])
    #expect(summary["with_changes"] as? Int == withChanges, "\(json)")
  }

  /// A watch tsapply applied to before whose state file is gone is out of reach: `status
  /// --fleet` does not advise creating a blank watch in its place (fresh-eyes finding), while a
  /// watch never applied to still gets that advice.
  @Test func aWatchAppliedBeforeAndNowGoneIsOutOfReachNotNew() async throws {
    let fleet = try await Fleet()
    _ = await fleet.run(["apply", "--fleet", "fleet.yaml", "--watch", "room-1", "--watch", "room-2", "--auto-approve"])
    let file = fleet.directory + "/watches/room-1.json"
    #expect(rename(file, file + ".away") == 0)
    let (_, out, _) = await fleet.run(["status", "--fleet", "fleet.yaml"])
    let room1 = out.split(separator: "\n").first { $0.hasPrefix("room-1: ") }.map(String.init) ?? ""
    #expect(room1.contains("tsapply has applied to this watch before, so it is out of reach, not new") && !room1.contains("device init"), "\(out)")
    let room3 = out.split(separator: "\n").first { $0.hasPrefix("room-3: ") }.map(String.init) ?? ""
    #expect(room3.contains("create one with 'tsapply device init"), "\(out)")
    // `device show` says the same (it advised device init, and a blank watch got healed).
    let (_, _, shown) = await fleet.run(["device", "show", "--device", "sim:watches/room-1.json"])
    #expect(shown.contains("out of reach, not new") && !shown.contains("device init"), "\(shown)")
  }

  /// A watch out of reach is `unreachable` in `plan`, `drift` and `apply --fleet`, as in `status
  /// --fleet`, not `failed` (fresh-eyes finding: "failed" for a watch only out of reach), and
  /// its section says what its records and its monitor last knew: when it was last applied and
  /// seen, and SOS at risk as its monitor last read it (`drift --fleet` said nothing of it).
  @Test(arguments: [["plan"], ["drift"], ["apply", "--auto-approve"]])
  func aWatchOutOfReachIsUnreachableInEveryFleetCommand(_ command: [String]) async throws {
    let fleet = try await Fleet()
    let selection = ["--fleet", "fleet.yaml", "--watch", "room-1", "--watch", "room-2"]
    _ = await fleet.run(["apply", "--auto-approve"] + selection)
    // Its monitor last read it with SOS at risk, then it went out of reach.
    let identity = "sim:" + fleet.directory + "/watches/room-1.json"
    let home = WatchHome(identity: identity, root: fleet.directory + "/state")
    let seen = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 100).rounded(.down))
    let seenText = ISO8601DateFormatter().string(from: seen)
    try HandledEvents(path: home.monitorEventsPath, watch: identity).seen(seen, sosAtRisk: true, exactly: true)
    #expect(rename(fleet.directory + "/watches/room-1.json", fleet.directory + "/room-1.away") == 0)
    let (status, out, err) = await fleet.run(command + selection)
    #expect(status == .failure, "\(out)")
    #expect(err.hasPrefix("Error: 1 of 2 watches out of reach: room-1 ("), "\(err)")
    let row = out.split(separator: "\n").last { $0.hasPrefix("room-1  ") }.map(String.init) ?? ""
    #expect(row.hasPrefix("room-1  unreachable  "), "\(out)")
    #expect(out.contains("2 watches: 1 unreachable, ") && !out.contains("failed"), "\(out)")
    #expect(out.contains("SOS at risk as its monitor last read it (\(seenText)), before it went out of reach"), "\(out)")
    #expect(out.contains("Last applied: 20"), "\(out)")
    let (_, json, _) = await fleet.run(command + selection + ["--json"])
    let report = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any], "\(json)")
    let watch = try #require((report["watches"] as? [[String: Any]])?.first { $0["name"] as? String == "room-1" }, "\(json)")
    #expect(watch["result"] as? String == "unreachable" && watch["sos_at_risk"] as? Bool == true, "\(json)")
    #expect(watch["last_seen"] as? String == seenText && watch["last_applied"] is String, "\(json)")
    let summary = try #require(report["summary"] as? [String: Any])
    #expect(summary["unreachable"] as? Int == 1 && summary["failed"] as? Int == 0, "\(json)")
  }

  /// A rollout paused after its canary counts what the watches hold: a later wave's watch that
  /// holds the revision already is not "not started, without it" (fresh-eyes finding: "1 of 8
  /// have the new revision, 7 do not" when all 8 held it).
  @Test func aPausedRolloutCountsTheWatchesThatHoldItAlready() async throws {
    let fleet = try await Fleet()
    let selection = ["--watch", "room-1", "--watch", "room-2"]
    _ = await fleet.run(["apply", "--fleet", "fleet.yaml", "--auto-approve"] + selection)
    let (paused, out, err) = await fleet.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--canary", "1", "--pause", "manual"] + selection)
    #expect(paused == .success, "\(err)")
    #expect(out.contains("2 of 2 watches have the new revision") && out.contains("With the new revision: room-1, room-2\n"), "\(out)")
    // Its row: no wave of this rollout wrote it.
    #expect(out.contains("room-2  no changes  has it (read)  -\n"), "\(out)")
  }

  /// A manifest with an error does not hide what changed on the watch from `drift --fleet`:
  /// SOS switched off is said beside the error (read against the last apply, no manifest needed).
  @Test func driftOfAWatchWhoseManifestHasAnErrorStillSaysWhatChanged() async throws {
    let fleet = try await Fleet()
    _ = await fleet.run(["apply", "--fleet", "fleet.yaml", "--watch", "room-1", "--watch", "room-2", "--auto-approve"])
    let (cleared, _, clearErr) = await fleet.run(["device", "simulate", "emergency-set", "Zed", "+15550199", "--device", "sim:watches/room-1.json"])
    #expect(cleared == .success, "\(clearErr)")
    try fleet.write("residents/room-1.yaml", "contacts:\n  - {name: Daughter, phone: \"+1555OO111\"}\n")
    let (status, out, _) = await fleet.run(["drift", "--fleet", "fleet.yaml", "--watch", "room-1"])
    #expect(status == .failure)
    #expect(out.contains("Changed on the watch since the last apply (read without its manifests, which have errors): emergency ("), "\(out)")
    let (_, json, _) = await fleet.run(["drift", "--fleet", "fleet.yaml", "--watch", "room-1", "--json"])
    #expect(json.contains("\"drift_since_record\":[\"emergency\"]") || json.contains("\"drift_since_record\" : [\n"), "\(json)")
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
    #expect(err == "Error: 1 of 3 watches failed: room-2; 1 out of reach: room-3 (its row says when it was last applied and seen)\n")
  }

  @Test(arguments: [
    (["plan", "--fleet", "fleet.yaml", "watch.yaml"], "with --fleet, the manifests come from the fleet file; remove 'watch.yaml'"),
    (["plan", "--fleet", "fleet.yaml", "--device", "sim:x.json"], "with --fleet, each watch's device comes from the fleet file; remove --device"),
    (["plan", "--watch", "room-1"], "--watch, -parallelism, --wait, --summary and --only only matter with --fleet FILE"),
    (["plan", "--fleet", "fleet.yaml", "-parallelism=0"], "-parallelism expects a number of watches from 1 to 1000, got '0'"),
    (["apply", "--fleet", "fleet.yaml", "--json"], "apply --fleet --json needs --auto-approve (a JSON report cannot ask for confirmation)"),
    (["plan", "--fleet", "fleet.yaml", "--json", "--markdown"], "--json and --markdown exclude each other"),
    (["plan", "--fleet", "fleet.yaml", "--only", "failed,broken"],
     "--only expects a comma-separated list of failed, changed, drift, pending, got 'broken' in 'failed,broken'"),
  ])
  func usageMistakes(_ arguments: [String], _ message: String) async throws {
    let fleet = try await Fleet()
    let (status, _, err) = await fleet.run(arguments)
    #expect(status == .usage)
    #expect(err.hasPrefix("Error: \(message)\n"))
  }

  /// A staged rollout's review shows why a watch failed, as an apply of the whole fleet does:
  /// its section with the error, before the table and the rollout's summary (docs/fleet.md
  /// "Staged rollouts"); a bad policy value is a usage error (64) naming the option.
  @Test func aRolloutShowsEachFailedWatchsErrorSection() async throws {
    let fleet = try await Fleet()
    let (status, out, err) = await fleet.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--canary", "1", "--batch", "5", "--max-failures", "0"])
    #expect(status == .failure)
    let section = try #require(out.range(of: "=== room-3  device sim:watches/room-3.json"), "\(out)")
    let error = try #require(out.range(of: "Error: no simulated watch at \(fleet.directory)/watches/room-3.json"))
    let table = try #require(out.range(of: "\nWatch "))
    let summary = try #require(out.range(of: "Rollout (canary 1, batch 5"))
    #expect(section.lowerBound < error.lowerBound && error.lowerBound < table.lowerBound && table.lowerBound < summary.lowerBound)
    #expect(err.contains("the rollout was aborted after wave 2 of 2"), "\(err)")
    let (usage, _, usageErr) = await fleet.run(["apply", "--fleet", "fleet.yaml", "--canary", "0"])
    #expect(usage == .usage && usage.rawValue == 64)
    #expect(usageErr.hasPrefix("Error: --canary "), "\(usageErr)")
  }

  /// A rollout left running by a process killed in its first wave (its record says no watch was
  /// reached; the canary was written): `status --fleet` says it was interrupted and counts the
  /// canary as having the new revision, read from the watch, and so does `--abort`.
  @Test func aRolloutKilledMidWaveIsInterruptedAndItsSummaryIsWhatTheWatchesHold() async throws {
    let fleet = try await Fleet()
    let selection = ["--watch", "room-1", "--watch", "room-2"]
    let (paused, _, pausedErr) = await fleet.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--canary", "1", "--pause", "manual"] + selection)
    #expect(paused == .success, "\(pausedErr)")
    // What `kill -9` in wave 1 leaves: the record as written when the wave started.
    let folder = fleet.directory + "/state/fleets"
    let record = try #require(try FileManager.default.contentsOfDirectory(atPath: folder).map { folder + "/" + $0 + "/rollout.json" }
      .first { FileManager.default.fileExists(atPath: $0) })
    var object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: record))) as? [String: Any])
    object["phase"] = "running"
    object["next_wave"] = 0
    object["watches"] = [String: Any]()
    try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: record))
    let (_, status, _) = await fleet.run(["status", "--fleet", "fleet.yaml"] + selection)
    #expect(status.contains("interrupted during wave 1 of 2: the process running it ended."), "\(status)")
    #expect(status.contains("1 of 2 watches have the new revision"), "\(status)")
    #expect(status.contains("With the new revision: room-1\n") && status.contains("Without it: room-2\n"), "\(status)")
    let (_, json, _) = await fleet.run(["status", "--fleet", "fleet.yaml", "--json"] + selection)
    let report = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    #expect((report["rollout"] as? [String: Any])?["phase"] as? String == "interrupted", "\(json)")
    let (aborted, out, err) = await fleet.run(["apply", "--fleet", "fleet.yaml", "--abort"])
    #expect(aborted == .failure)
    #expect(out.contains("With the new revision: room-1\n") && out.contains("Without it: room-2\n"), "\(out)")
    #expect(err.contains("1 of 2 watches have the new revision, 1 do not"), "\(err)")
    // The killed wave's watch, holding the revision, is not "no changes" in the table above the summary.
    #expect(out.contains("room-1  applied  has it (read)  earlier run\nroom-2  pending  -              -\n"), "\(out)")
  }
}

extension FleetCommandTests {
  /// `--continue` after a process was killed in wave 2 once it had written that wave's watch:
  /// the earlier wave's rows say they come from an earlier run (not "0.0s" of this one), and
  /// the killed wave's watch, with nothing left to change, is said to hold the new revision
  /// (fresh-eyes finding: the table read as if the rollout had changed nothing there).
  @Test func continuingAfterAKilledWaveSaysWhatEarlierRunsDid() async throws {
    let fleet = try await Fleet()
    let selection = ["--watch", "room-1", "--watch", "room-2"]
    let (paused, _, pausedErr) = await fleet.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--canary", "1", "--pause", "manual"] + selection)
    #expect(paused == .success, "\(pausedErr)")
    let folder = fleet.directory + "/state/fleets"
    let path = try #require(try FileManager.default.contentsOfDirectory(atPath: folder).map { folder + "/" + $0 + "/rollout.json" }
      .first { FileManager.default.fileExists(atPath: $0) })
    let atPause = try Data(contentsOf: URL(fileURLWithPath: path))
    let (done, _, doneErr) = await fleet.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--continue"])
    #expect(done == .success, "\(doneErr)")
    // What `kill -9` in wave 2 after its write leaves: the record as written when the wave started.
    var object = try #require(try JSONSerialization.jsonObject(with: atPause) as? [String: Any])
    object["phase"] = "running"
    object["reason"] = nil
    try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
    let (continued, out, err) = await fleet.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--continue"])
    #expect(continued == .success, "\(err)")
    #expect(out.contains("room-1  applied     +1 ~1 -0  earlier run\nroom-2  no changes  +0 ~0 -0  0.0s\n"), "\(out)")
    #expect(out.contains("room-2 of wave 2 had nothing left to change: it holds the new revision, most likely written by the run that was interrupted in that wave.\n"),
            "\(out)")
    #expect(out.contains("completed: 2 waves applied"), "\(out)")
  }
}

/// The words a fleet command ends with for refused watches: over MQTT the agent applies
/// unattended, so "review it without --auto-approve" (which the agent would refuse again) is
/// not offered.
@Suite struct FleetFailureWordsTests {
  @Test(arguments: [(false, ", or review it without --auto-approve)"),
                    (true, "; its agent applies unattended, so only that lets it: review the plan with 'tsapply plan --fleet' first)")])
  func aRefusalIsAdvisedAsTheTransportAllows(agents: Bool, ending: String) {
    let words = FleetSession.failed([], refused: ["r3"], of: 1, agents: agents).message
    #expect(words == "1 of 1 watch refused: r3 (its plan is unsafe, so nothing was written to it: rerun with --auto-approve --allow-destroy to apply it" + ending,
            "\(words)")
  }

  /// Refused watches among others that are not: --allow-destroy is advised for them alone, by
  /// name (fresh-eyes fe100: the fleet-wide advice for one refused watch of 40).
  @Test(arguments: [(["r3"], 40, "rerun with --auto-approve --allow-destroy --watch r3 to apply it alone"),
                    (["r3", "r 4"], 40, "rerun with --auto-approve --allow-destroy --watch r3 --watch \"r 4\" to apply them alone"),
                    (["a", "b", "c", "d", "e", "f"], 40, "rerun with --auto-approve --allow-destroy and --watch NAME for each to apply them alone"),
                    (["r3", "r4"], 2, "rerun with --auto-approve --allow-destroy to apply them,")])
  func aRefusalAmongOthersIsAdvisedForItAlone(refused: [String], total: Int, advice: String) {
    let words = FleetSession.failed([], refused: refused, of: total).message
    #expect(words.contains(advice), "\(words)")
  }

  /// From a command that does not apply, the one that does is named, with the fleet file
  /// (fresh-eyes findings: `status --fleet` said "add --allow-destroy to --auto-approve to status
  /// them"; fe103 #6: the file was left out, and "its agent" said of two watches).
  @Test(arguments: ["status", "plan", "drift"])
  func aRefusalSeenByAnotherCommandNamesTheApply(operation: String) {
    let words = FleetSession.failed([], refused: ["r3"], of: 1, agents: true, operation: operation, fleetFile: "ward a.yaml").message
    #expect(words.contains("run 'tsapply apply --fleet \"ward a.yaml\" --auto-approve --allow-destroy' to apply it; its agent applies"), "\(words)")
    let two = FleetSession.failed([], refused: ["r3", "r4"], of: 3, agents: true, operation: operation, fleetFile: "f.yaml").message
    #expect(two.contains("run 'tsapply apply --fleet f.yaml --auto-approve --allow-destroy --watch r3 --watch r4' to apply them alone; "
                         + "their agents apply unattended, so only that lets them: review the plan with 'tsapply plan --fleet f.yaml' first)"), "\(two)")
  }

  /// `plan --fleet` over MQTT of a watch served by no agent (its agent online and no longer
  /// announcing it): failed, saying why — not "No changes" planned against what its agent read
  /// before it dropped it, nor "to publish", which would change nothing on it.
  @Test func aWatchServedByNoOneFailsItsPlan() {
    var row = FleetStatusRow(name: "room-1", device: "sim:room-1.json", state: "no status", lastApplied: "2026-12-06T08:00:00Z",
                             agent: (id: "station", online: true), note: "agent station no longer serves the watch room-1 …")
    #expect(row.planVerdict.word == "to publish", "the row alone, as for a watch no agent ever announced")
    row.servedByNoOne = true
    #expect(row.planVerdict == .failed("agent station no longer serves the watch room-1 …"), "\(row.planVerdict)")
  }

  /// Watches whose broker document went back to an older save are not said to have failed
  /// (fresh-eyes finding: "4 of 8 watches failed" for watches that held the newest revision).
  @Test func anOlderDesiredDocumentIsNotAFailure() {
    let words = FleetSession.failed([], staleDesired: ["r1", "r2"], of: 8, agents: true, operation: "status").message
    #expect(words.hasPrefix("2 of 8 watches with an older desired document on the broker than their agents handled: r1, r2 (the broker went back"),
            "\(words)")
    #expect(!words.contains("failed"), "\(words)")
    // `plan --fleet` of such a watch: publishing the manifests again is the change, not a failure
    // (fresh-eyes fe97 #3: "3 of 3 watches failed").
    var row = FleetStatusRow(name: "r1", device: "sim:r1.json", state: "invalid", lastApplied: "2026-12-06T08:00:00Z",
                             agent: (id: "station", online: true), note: "the broker holds publication p1, older than p2")
    row.staleDesired = true
    #expect(row.planVerdict.word == "to publish", "\(row.planVerdict)")
    row.staleDesired = false
    #expect(row.planVerdict.word == "failed", "a manifest with errors for the watch: \(row.planVerdict)")
  }
}

/// Over MQTT a refusal can come after an earlier attempt at the revision wrote part of it: the
/// words never say that nothing was written to such a watch (fe17 defect 5).
@Suite struct RefusedHoldingPartWordsTests {
  @Test(arguments: [
    (["r3"], ["r3"], "1 of 1 watch refused: r3 (its plan is unsafe, so nothing more was written to it, but it holds (or may hold) part of the revision"),
    (["r3", "r4"], ["r4"], "2 of 2 watches refused: r3, r4 (their plans are unsafe, so nothing more was written to them, but r4 holds (or may hold) part of the revision"),
  ])
  func aRefusedWatchHoldingPartOfTheRevisionIsNotSaidUntouched(refused: [String], holding: [String], start: String) {
    let words = FleetSession.failed([], refused: refused, refusedHoldingPart: holding, of: refused.count, agents: true).message
    #expect(words.hasPrefix(start), "\(words)")
    #expect(!words.contains("nothing was written"), "\(words)")
  }
}
