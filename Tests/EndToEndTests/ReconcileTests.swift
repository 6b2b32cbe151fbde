import Foundation
import Testing
import TSTestSupport

/// `plan`, `apply`, `show` and `restore` run as the built binary against the default simulated
/// watch in a fresh directory, as a new user would.
@Suite struct ReconcileTests {
  static let examples = TSApplyBinary.packageRoot.appendingPathComponent("examples")

  /// A fresh working directory holding a copy of `examples/<name>` as `watch.yaml`.
  static func workspace(_ name: String = "watch.yaml") throws -> URL {
    let directory = try TSApplyBinary.temporaryDirectory()
    try FileManager.default.copyItem(at: examples.appendingPathComponent(name), to: directory.appendingPathComponent("watch.yaml"))
    return directory
  }

  static func stateFile(_ directory: URL) -> URL { directory.appendingPathComponent(".tsapply/device.json") }

  static func mode(_ url: URL) throws -> Int {
    try (FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
  }

  @Test func readmeFlowAppliesThenPlansNoChanges() throws {
    let dir = try Self.workspace()
    let apply = try TSApplyBinary.run(["apply", "--auto-approve", "watch.yaml"], in: dir)
    #expect(apply.status == 0, "\(apply.stderr)")
    #expect(apply.stdout.hasSuffix("Apply complete! Resources: 3 added, 5 changed, 0 destroyed.\n"))
    let backup = try #require(TSApplyBinary.backupPath(in: apply.stdout))
    #expect(backup.hasPrefix(TSApplyBinary.testStateDirectory + "/watches/"), "\(backup)")
    #expect(try Self.mode(URL(fileURLWithPath: backup)) == 0o600)
    let plan = try TSApplyBinary.run(["plan", "--detailed-exitcode", "watch.yaml"], in: dir)
    #expect(plan.status == 0)
    #expect(plan.stdout == "No changes. The watch matches watch.yaml.\n")
  }

  @Test func planShowsDriftAfterAWatchSideChange() throws {
    let dir = try Self.workspace()
    _ = try TSApplyBinary.run(["apply", "--auto-approve"], in: dir)
    _ = try TSApplyBinary.run(["device", "simulate", "reminder-toggle", "1"], in: dir)
    let plan = try TSApplyBinary.run(["plan", "--detailed-exitcode"], in: dir)
    #expect(plan.status == 2)
    #expect(plan.stdout.hasPrefix("Note: Objects have changed outside of tsapply\n"))
    #expect(plan.stdout.contains("  # reminder.drinking has changed\n  ~ reminder.drinking {\n      ~ enabled = true -> false\n"))
    let json = try TSApplyBinary.run(["plan", "--json"], in: dir)
    #expect(json.stdout.contains("\"resource_drift\""))
  }

  @Test func detailedExitCodeIsTwoWhenChangesArePending() throws {
    let dir = try Self.workspace()
    let plan = try TSApplyBinary.run(["plan", "--detailed-exitcode"], in: dir)
    #expect(plan.status == 2)
    #expect(plan.stdout.contains("Plan: 3 to add, 5 to change, 0 to destroy (contacts: 4 added; emergency contacts: 1 added)."), "\(plan.stdout)")
    let plain = try TSApplyBinary.run(["plan"], in: dir)
    #expect(plain.status == 0)
  }

  @Test func applyWithoutTerminalOrAutoApproveRefusesAndLeavesTheWatchAlone() throws {
    let dir = try Self.workspace()
    _ = try TSApplyBinary.run(["device", "init"], in: dir)
    let before = try Data(contentsOf: Self.stateFile(dir))
    let apply = try TSApplyBinary.run(["apply"], in: dir, stdin: "yes\n")
    #expect(apply.status == 1)
    #expect(apply.stderr.contains("refusing to apply without confirmation: standard input is not a terminal"))
    #expect(apply.stderr.contains("Re-run with --auto-approve, or save the plan with "), "\(apply.stderr)")
    #expect(try Data(contentsOf: Self.stateFile(dir)) == before)
    #expect(TSApplyBinary.backups(of: "sim:" + Self.stateFile(dir).resolvingSymlinksInPath().path).isEmpty)
  }

  @Test func invalidManifestNeverTouchesTheWatch() throws {
    let dir = try TSApplyBinary.temporaryDirectory()
    try "contacts:\n  - {name: Ann, phone: 1-800-FLOWERS}\n".write(to: dir.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    for command in [["plan"], ["apply", "--auto-approve"]] {
      let result = try TSApplyBinary.run(command, in: dir)
      #expect(result.status == 1)
      #expect(result.stderr.hasPrefix("watch.yaml:2:24: error: contacts[0].phone: \"1-800-FLOWERS\" contains letters"))
      #expect(result.stderr.contains("1 error in the manifest; the watch was not touched"))
    }
    #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent(".tsapply").path))
  }

  @Test func capabilityErrorsStopThePlanBeforeAnyWrite() throws {
    let dir = try Self.workspace()
    _ = try TSApplyBinary.run(["device", "init", "--profile", "fit-basic"], in: dir)
    let before = try Data(contentsOf: Self.stateFile(dir))
    let result = try TSApplyBinary.run(["apply", "--auto-approve"], in: dir)
    #expect(result.status == 1)
    #expect(result.stderr.contains("error: reminders.medicine"))
    #expect(result.stderr.contains("error: reminders.custom"))
    #expect(result.stderr.contains("the watch was not touched"))
    #expect(try Data(contentsOf: Self.stateFile(dir)) == before)
  }

  @Test func savedPlanAppliesExactlyAndIsRefusedWhenStale() throws {
    let dir = try Self.workspace()
    let plan = try TSApplyBinary.run(["plan", "-out", "changes.tfplan"], in: dir)
    #expect(plan.status == 0, "\(plan.stderr)")
    #expect(plan.stdout.contains("tsapply apply changes.tfplan"))
    #expect(try Self.mode(dir.appendingPathComponent("changes.tfplan")) == 0o600)
    let show = try TSApplyBinary.run(["show", "changes.tfplan"], in: dir)
    #expect(show.stdout.contains("Plan: 3 to add, 5 to change, 0 to destroy (contacts: 4 added; emergency contacts: 1 added)."), "\(show.stdout)")

    // The watch changes after planning: the saved plan is stale.
    _ = try TSApplyBinary.run(["device", "simulate", "contact-add", "Zed", "+15550199"], in: dir)
    let stale = try TSApplyBinary.run(["apply", "changes.tfplan"], in: dir)
    #expect(stale.status == 1)
    #expect(stale.stderr.contains("saved plan is stale: the watch changed since the plan was made"))

    // A fresh plan applies without asking; then the manifest changes and the next one is stale.
    _ = try TSApplyBinary.run(["plan", "-out", "changes.tfplan"], in: dir)
    let applied = try TSApplyBinary.run(["apply", "changes.tfplan"], in: dir)
    #expect(applied.status == 0, "\(applied.stderr)")
    #expect(applied.stdout.contains("Apply complete!"))
    // Applied twice: stale, and said to hold what the plan makes, not only "the watch changed"
    // (fresh-eyes fe101: "stale" alone read as someone else having changed the watch).
    let twice = try TSApplyBinary.run(["apply", "changes.tfplan"], in: dir)
    #expect(twice.status == 1)
    #expect(twice.stderr.contains("the saved plan is stale: the watch changed since the plan was made; it holds what the manifest gives now "
                                  + "(was the plan applied already?), so nothing is left to apply"), "\(twice.stderr)")
    let replan = try TSApplyBinary.run(["plan", "-out", "again.tfplan"], in: dir)
    #expect(replan.stdout.contains("No changes."))
    let manifest = dir.appendingPathComponent("watch.yaml")
    try (String(contentsOf: manifest, encoding: .utf8) + "\n# edited\n").write(to: manifest, atomically: true, encoding: .utf8)
    let edited = try TSApplyBinary.run(["apply", "again.tfplan"], in: dir)
    #expect(edited.status == 1)
    #expect(edited.stderr.contains("saved plan is stale: the manifest"))
  }

  @Test func restorePutsTheWatchBackExactly() throws {
    let dir = try Self.workspace()
    _ = try TSApplyBinary.run(["apply", "--auto-approve"], in: dir)
    // A contact added on the watch itself has no short name; restored, it still has none
    // (a manifest would derive "Z" for it).
    #expect(try TSApplyBinary.run(["device", "simulate", "contact-add", "Zed", "+15550199"], in: dir).status == 0)
    let before = try TSApplyBinary.run(["device", "show", "--json"], in: dir).stdout
    #expect(before.contains("Zed"))
    try FileManager.default.removeItem(at: dir.appendingPathComponent("watch.yaml"))
    try FileManager.default.copyItem(at: Self.examples.appendingPathComponent("family.yaml"), to: dir.appendingPathComponent("watch.yaml"))
    let apply = try TSApplyBinary.run(["apply", "--auto-approve", "--allow-destroy"], in: dir)
    #expect(apply.status == 0, "\(apply.stderr)")
    let backup = try #require(TSApplyBinary.backupPath(in: apply.stdout))
    #expect(try Self.mode(URL(fileURLWithPath: backup)) == 0o600)
    // Without a terminal the advice names both flags this unsafe plan needs.
    let refused = try TSApplyBinary.run(["restore", backup], in: dir)
    #expect(refused.status == 1)
    #expect(refused.stderr.contains("Re-run with --auto-approve --allow-destroy (this plan is unsafe)."), "\(refused.stderr)")
    let restore = try TSApplyBinary.run(["restore", "--auto-approve", "--allow-destroy", backup], in: dir)
    #expect(restore.status == 0, "\(restore.stderr)")
    #expect(restore.stdout.contains("Restore complete!"))
    let after = try TSApplyBinary.run(["device", "show", "--json"], in: dir).stdout
    #expect(Self.withoutJournal(after) == Self.withoutJournal(before))
    // Restored already, the backup equals the watch: it says so, restores nothing and exits 0,
    // as an apply with nothing to change does — asked or not (there is no question to ask).
    for flags in [["--auto-approve", "--allow-destroy"], []] {
      let again = try TSApplyBinary.run(["restore"] + flags + [backup], in: dir)
      #expect(again.status == 0, "\(flags): \(again.stdout)\(again.stderr)")
      #expect(again.stdout.contains("No changes. The watch matches \(backup)"), "\(flags): \(again.stdout)")
      #expect(!again.stdout.contains("complete!") && !again.stdout.contains("Backed up"), "\(flags): \(again.stdout)")
    }
  }

  /// A restore stopped by a fault at each device call: where its advice says how to see what
  /// the watch holds, it names the restore of the same backup (which shows its plan and asks),
  /// never a bare `plan`, which reads `watch.yaml` — failing, or comparing the watch with another
  /// manifest (fresh-eyes finding).
  @Test func theAdviceAfterAFailedRestoreNamesTheRestore() throws {
    let dir = try Self.workspace()
    _ = try TSApplyBinary.run(["apply", "--auto-approve"], in: dir)
    try FileManager.default.removeItem(at: dir.appendingPathComponent("watch.yaml"))
    try FileManager.default.copyItem(at: Self.examples.appendingPathComponent("family.yaml"), to: dir.appendingPathComponent("watch.yaml"))
    let apply = try TSApplyBinary.run(["apply", "--auto-approve", "--allow-destroy"], in: dir)
    let backup = try #require(TSApplyBinary.backupPath(in: apply.stdout))
    var advised = 0
    for call in 1...16 {
      let snapshot = try TSApplyBinary.run(["device", "show", "--json"], in: dir).stdout
      let failed = try TSApplyBinary.run(["restore", "--auto-approve", "--allow-destroy", backup], in: dir,
                                         environment: ["TSAPPLY_SIM_FAULT": "fail@\(call)"])
      guard failed.status != 0 else { break }
      for marker in ["See what it holds now with '", "Check with '", "see the watch with '"] where failed.stderr.contains(marker) {
        advised += 1
        let command = failed.stderr.components(separatedBy: marker)[1].prefix { $0 != "'" }
        #expect(command.hasPrefix("tsapply restore ") && command.hasSuffix(backup), "fail@\(call): \(failed.stderr)")
      }
      // Back to where the restore starts from, for the next call.
      if try TSApplyBinary.run(["device", "show", "--json"], in: dir).stdout != snapshot {
        #expect(try TSApplyBinary.run(["apply", "--auto-approve", "--allow-destroy"], in: dir).status == 0)
      }
    }
    #expect(advised >= 2, "no fault gave advice to see the watch")
  }

  @Test func restoreRefusesABackupHoldingValuesNoWatchCanTake() throws {
    let dir = try Self.workspace()
    let apply = try TSApplyBinary.run(["apply", "--auto-approve"], in: dir)
    let backup = try #require(TSApplyBinary.backupPath(in: apply.stdout))
    let url = URL(fileURLWithPath: backup)
    let edited = try String(contentsOf: url, encoding: .utf8).replacingOccurrences(of: "\"repeatDays\" : 127", with: "\"repeatDays\" : -1")
    try edited.write(to: url, atomically: true, encoding: .utf8)
    let before = try Data(contentsOf: Self.stateFile(dir))
    let restore = try TSApplyBinary.run(["restore", "--auto-approve", backup], in: dir)
    #expect(restore.status == 1)
    #expect(restore.stderr.contains("in the backup; the watch was not touched"), "\(restore.stderr)")
    #expect(try Data(contentsOf: Self.stateFile(dir)) == before)
  }

  /// A backup that loads as a manifest but does not fit the watch (150 contacts on a watch of
  /// 100) is refused as "the backup" too, not "the manifest" (found by a tester).
  @Test func restoreNamesTheBackupWhenItDoesNotFitTheWatch() throws {
    let dir = try Self.workspace()
    let apply = try TSApplyBinary.run(["apply", "--auto-approve"], in: dir)
    let backup = try #require(TSApplyBinary.backupPath(in: apply.stdout))
    let url = URL(fileURLWithPath: backup)
    var object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
    var state = try #require(object["state"] as? [String: Any])
    state["contacts"] = (0..<150).map { ["name": "P\($0)", "phoneNum": "+1555\(10000 + $0)", "shortName": "P"] }
    object["state"] = state
    try JSONSerialization.data(withJSONObject: object).write(to: url)
    let restore = try TSApplyBinary.run(["restore", "--auto-approve", backup], in: dir)
    #expect(restore.status == 1)
    #expect(restore.stderr.contains("150 contacts, but the watch (profile default) holds at most 100"), "\(restore.stderr)")
    #expect(restore.stderr.contains("Error: 1 error in the backup; the watch was not touched"), "\(restore.stderr)")
  }

  /// `device show --json` without the journal and sequence counter (restore writes are not
  /// watch-side events) and without custom reminders' IDs: the watch assigns those through the
  /// template call, so a re-created reminder may get another number (built-in IDs stay).
  static func withoutJournal(_ json: String) -> String {
    json.split(separator: "\n").filter { line in
      !line.contains("\"journal\"") && !line.contains("nextSequence")
        && !(line.contains("\"reminderId\"") && !["\"0\"", "\"1\"", "\"2\""].contains { line.contains($0) })
    }.joined(separator: "\n")
  }

  @Test func redactLeavesNoFullPhoneNumberInAnyOutput() throws {
    let dir = try Self.workspace()
    let phones = ["15550100100", "8613912345678", "33123456789", "5550100102", "15550101"]
    let outputs = [
      try TSApplyBinary.run(["plan", "--redact", "-out", "p.tfplan"], in: dir),
      try TSApplyBinary.run(["plan", "--redact", "--json"], in: dir),
      try TSApplyBinary.run(["show", "--redact", "p.tfplan"], in: dir),
      try TSApplyBinary.run(["show", "--redact", "--json", "p.tfplan"], in: dir),
      try TSApplyBinary.run(["apply", "--redact", "--auto-approve"], in: dir),
    ]
    for output in outputs {
      #expect(output.status == 0, "\(output.stderr)")
      for phone in phones {
        #expect(!(output.stdout + output.stderr).contains(phone), "\(phone) appears")
      }
    }
    #expect(outputs[0].stdout.contains("+*********00"))
  }

  @Test func partialFailureReportsWhatWasAppliedAndARerunConverges() throws {
    let dir = try Self.workspace()
    _ = try TSApplyBinary.run(["device", "init"], in: dir)
    // Calls 1–3 read the watch for the plan and 4–6 again before writing; call 9 is a write.
    let failed = try TSApplyBinary.run(["apply", "--auto-approve"], in: dir, environment: ["TSAPPLY_SIM_FAULT": "fail@9"])
    #expect(failed.status == 1)
    #expect(failed.stderr.contains("apply stopped part-way"))
    #expect(failed.stderr.contains("  applied:      "))
    #expect(failed.stderr.contains("  not applied:  "))
    #expect(failed.stderr.contains("or 'tsapply restore \(TSApplyBinary.testStateDirectory)/watches/"), "\(failed.stderr)")
    let rerun = try TSApplyBinary.run(["apply", "--auto-approve"], in: dir)
    #expect(rerun.status == 0, "\(rerun.stderr)")
    let plan = try TSApplyBinary.run(["plan", "--detailed-exitcode"], in: dir)
    #expect(plan.status == 0)
  }

  /// A backup given to `apply` and a saved plan given to `restore` are named for what they are,
  /// with the command that takes them; nothing is written.
  @Test func aFileGivenToTheWrongCommandSaysWhichCommandTakesIt() throws {
    let dir = try Self.workspace()
    _ = try TSApplyBinary.run(["device", "init"], in: dir)
    let applied = try TSApplyBinary.run(["apply", "--auto-approve"], in: dir)
    let backup = try #require(TSApplyBinary.backupPath(in: applied.stdout))
    let before = try Data(contentsOf: Self.stateFile(dir))
    let wrongApply = try TSApplyBinary.run(["apply", "--auto-approve", backup], in: dir)
    #expect(wrongApply.status == 1)
    #expect(wrongApply.stderr.contains("is a tsapply backup, not a manifest: restore it with 'tsapply restore "), "\(wrongApply.stderr)")
    #expect(try TSApplyBinary.run(["plan", "-out", "p.tfplan"], in: dir).status == 0)
    let wrongRestore = try TSApplyBinary.run(["restore", "--auto-approve", "p.tfplan"], in: dir)
    #expect(wrongRestore.status == 1)
    #expect(wrongRestore.stderr.contains("it is a saved plan (tsapply plan -out), not a backup: apply it with 'tsapply apply "),
            "\(wrongRestore.stderr)")
    // A manifest given to restore (fresh-eyes fe106 #5: "top level: not valid JSON", no hint).
    let manifestRestore = try TSApplyBinary.run(["restore", "--auto-approve", "watch.yaml"], in: dir)
    #expect(manifestRestore.status == 1 && manifestRestore.stderr.contains("it is a manifest, not a backup: apply it with 'tsapply apply "),
            "\(manifestRestore.stderr)")
    #expect(try Data(contentsOf: Self.stateFile(dir)) == before)
  }

  /// A write whose answer was lost while reading the list back fails too: its resources are
  /// listed as unknown, not failed, and drift reports neither outcome as a change on the watch.
  @Test func aWriteWhoseOutcomeCannotBeReadIsUnknownNotFailed() throws {
    var found = false
    for call in 4...24 where !found {
      let dir = try Self.workspace()
      _ = try TSApplyBinary.run(["device", "init"], in: dir)
      let failed = try TSApplyBinary.run(["apply", "--auto-approve"], in: dir,
                                         environment: ["TSAPPLY_SIM_FAULT": "lands-then-fails@\(call),fail@\(call + 1)"])
      guard failed.stderr.contains("reading the list back failed too") else { continue }
      found = true
      #expect(failed.status == 1)
      #expect(failed.stderr.contains("  unknown:      ") && !failed.stderr.contains("  failed:       "), "\(failed.stderr)")
      let drift = try TSApplyBinary.run(["drift", "watch.yaml"], in: dir)
      #expect(drift.status == 0, "\(drift.stdout)")
    }
    #expect(found, "no call index gave a lost answer whose read-back failed")
  }

  /// The reproduction of a failed verification read (and of a failure part-way through a saved
  /// plan): `drift` shows none of the apply's own writes, the advice given works when followed,
  /// and after it `drift` exits 0.
  @Test(arguments: [("fail@17", false), ("fail@9", true), ("lands-then-fails@10", true)])
  func afterAFailureDriftShowsNoOwnWritesAndTheAdviceWorks(_ fault: String, _ saved: Bool) throws {
    let dir = try Self.workspace()
    try FileManager.default.copyItem(at: Self.examples.appendingPathComponent("family.yaml"), to: dir.appendingPathComponent("family.yaml"))
    _ = try TSApplyBinary.run(["device", "init"], in: dir)
    #expect(try TSApplyBinary.run(["apply", "--auto-approve", "family.yaml"], in: dir).status == 0)
    if saved { #expect(try TSApplyBinary.run(["plan", "-out", "p.tfplan", "watch.yaml"], in: dir).status == 0) }
    let failed = try TSApplyBinary.run(["apply", "--auto-approve", "--allow-destroy", saved ? "p.tfplan" : "watch.yaml"], in: dir,
                                       environment: ["TSAPPLY_SIM_FAULT": fault])
    #expect(failed.status == 1, "\(failed.stderr)")
    let drift = try TSApplyBinary.run(["drift", "watch.yaml"], in: dir)
    #expect(drift.status == 0, "after \(fault): \(drift.stdout)\(drift.stderr)")
    if saved {
      #expect(failed.stderr.contains("The saved plan no longer matches the watch. To finish, plan what is left with 'tsapply plan -out p.tfplan "), "\(failed.stderr)")
      #expect(try TSApplyBinary.run(["plan", "-out", "p.tfplan", "watch.yaml"], in: dir).status == 0)
      let finish = try TSApplyBinary.run(["apply", "p.tfplan"], in: dir)
      #expect(finish.status == 0, "\(finish.stderr)")
    } else {
      #expect(try TSApplyBinary.run(["apply", "--auto-approve", "--allow-destroy", "watch.yaml"], in: dir).status == 0)
    }
    #expect(try TSApplyBinary.run(["drift", "watch.yaml"], in: dir).status == 0)
    #expect(try TSApplyBinary.run(["plan", "--detailed-exitcode", "watch.yaml"], in: dir).status == 0)
  }

  /// A saved plan whose first write's outcome is unknown (the link dropped in it) and nothing
  /// else written: whether the plan still matches is not known, and the advice says "may" — not
  /// "no longer matches" as a fact (fresh-eyes fe93: the same saved plan was then accepted).
  @Test func aSavedPlanCutOffWithOnlyAnUnknownWriteSaysItMayNoLongerMatch() throws {
    let dir = try Self.workspace()
    try FileManager.default.copyItem(at: Self.examples.appendingPathComponent("family.yaml"), to: dir.appendingPathComponent("family.yaml"))
    _ = try TSApplyBinary.run(["device", "init"], in: dir)
    #expect(try TSApplyBinary.run(["apply", "--auto-approve", "family.yaml"], in: dir).status == 0)
    #expect(try TSApplyBinary.run(["plan", "-out", "p.tfplan", "watch.yaml"], in: dir).status == 0)
    let failed = try TSApplyBinary.run(["apply", "p.tfplan"], in: dir, environment: ["TSAPPLY_SIM_FAULT": "disconnect@6"])
    #expect(failed.status == 1, "\(failed.stderr)")
    #expect(failed.stderr.contains("  unknown:      "), "\(failed.stderr)")
    #expect(failed.stderr.contains("The saved plan may no longer match the watch (a write whose outcome is unknown may have landed). To finish, plan what is left with"),
            "\(failed.stderr)")
    #expect(!failed.stderr.contains("The saved plan no longer matches the watch"), "\(failed.stderr)")
  }
}

extension ReconcileTests {
  /// The answer to the apply's last write lost, the write landed: the write is applied (said on
  /// its line, never sent again), the apply verifies and completes, exit 0, and the watch
  /// matches (it said "Error: apply stopped part-way", exit 1, while every change had landed).
  @Test func aLostAnswerToTheLastWriteThatLandedCompletesTheApply() throws {
    let dir = try Self.workspace()
    try "contacts:\n  - {name: Anna, phone: \"+447700900123\"}\nemergency:\n  sos: true\n  contacts:\n    - {name: Bob, phone: \"+447700900777\"}\n"
      .write(to: dir.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    #expect(try TSApplyBinary.run(["apply", "--auto-approve"], in: dir).status == 0)
    #expect(try TSApplyBinary.run(["device", "simulate", "emergency-set", "Tom", "+447700900111"], in: dir).status == 0)
    // The calls: read the watch (3), back it up, read emergency before writing (4), write it (5).
    let landed = try TSApplyBinary.run(["apply", "--auto-approve", "--allow-destroy"], in: dir, environment: ["TSAPPLY_SIM_FAULT": "lands-then-fails@5"])
    #expect(landed.status == 0, "\(landed.stderr)")
    #expect(landed.stdout.contains("emergency: the answer to the write was lost (") && landed.stdout.contains(
      "yet reading it back shows the watch holds it: applied, not written again\nemergency: Modifications complete"), "\(landed.stdout)")
    #expect(landed.stdout.contains("Apply complete! Resources: 0 added, 1 changed, 0 destroyed."), "\(landed.stdout)")
    #expect(try TSApplyBinary.run(["plan", "--detailed-exitcode"], in: dir).status == 0)
    #expect(try TSApplyBinary.run(["drift"], in: dir).status == 0)
  }

  /// A lost answer to one write that carried several resources (both built-in reminders in
  /// one replaceAllReminders) is said once, naming each (it was said once per reminder, the
  /// same long line six times in a fresh-eyes run).
  @Test func aLostAnswerToOneWriteOfSeveralResourcesIsSaidOnce() throws {
    let dir = try Self.workspace()
    try "reminders:\n  drinking: {enabled: true}\n  medicine: {enabled: true}\n"
      .write(to: dir.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    // The calls: read the watch (3), read the reminders before writing (4), write them (5).
    let landed = try TSApplyBinary.run(["apply", "--auto-approve"], in: dir, environment: ["TSAPPLY_SIM_FAULT": "lands-then-fails@5"])
    #expect(landed.status == 0, "\(landed.stderr)")
    let lines = landed.stdout.split(separator: "\n").filter { $0.contains("the answer to the write was lost") }
    #expect(lines.count == 1, "\(landed.stdout)")
    #expect(lines.first?.hasPrefix("reminder.drinking and reminder.medicine (one write): the answer to the write was lost (replaceAllReminders") == true
            && lines.first?.hasSuffix("yet reading it back shows the watch holds them: applied, not written again") == true, "\(landed.stdout)")
    #expect(try TSApplyBinary.run(["drift", "watch.yaml"], in: dir).status == 0)
  }
}

/// Ctrl-C during an apply stops between steps and reports exactly what was applied.
@Suite struct InterruptTests {
  /// `tsapply apply --auto-approve` in a new workspace, its simulated watch answering each
  /// call after `latency` ms, returned once it printed `marker` (its backup line; waiting for the line,
  /// not a fixed time, which a loaded machine can overrun before the first step or after the
  /// last), with what it printed so far.
  static func applyPastItsBackup(latency: Int, until marker: String = "Backed up") throws -> (process: Process, output: Pipe, error: Pipe, printed: Data) {
    let dir = try ReconcileTests.workspace()
    _ = try TSApplyBinary.run(["device", "init"], in: dir)
    let process = Process()
    process.executableURL = TSApplyBinary.url
    process.arguments = ["apply", "--auto-approve"]
    process.currentDirectoryURL = dir
    var environment = ProcessInfo.processInfo.environment
    environment["TSAPPLY_SIM_LATENCY"] = "\(latency),0"
    process.environment = environment
    let output = Pipe(), error = Pipe()
    process.standardOutput = output
    process.standardError = error
    try process.run()
    var printed = Data()
    let deadline = Date().addingTimeInterval(60)
    while !String(decoding: printed, as: UTF8.self).contains(marker), Date() < deadline {
      let chunk = output.fileHandleForReading.availableData
      if chunk.isEmpty { break }
      printed += chunk
    }
    return (process, output, error, printed)
  }

  @Test func firstInterruptStopsCleanlyWithASummary() throws {
    // At 300 ms a call, applying takes about 4 s after the backup line.
    let (process, output, error, _) = try Self.applyPastItsBackup(latency: 300)
    process.interrupt()
    let stderr = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    _ = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    #expect(process.terminationStatus == 1)
    #expect(stderr.contains("Interrupt received."))
    #expect(stderr.contains("apply stopped part-way: interrupted"))
    #expect(stderr.contains("  not applied:  "))
    let dir = try #require(process.currentDirectoryURL)
    let rerun = try TSApplyBinary.run(["apply", "--auto-approve"], in: dir)
    #expect(rerun.status == 0)
    #expect(try TSApplyBinary.run(["plan", "--detailed-exitcode"], in: dir).status == 0)
  }

  /// A second Ctrl-C quits at once (exit 130) but still says what that leaves and how to get
  /// back: it ended with no word (fresh-eyes finding).
  @Test func secondInterruptQuitsAtOnceAndSaysWhatItLeaves() throws {
    // Interrupted once its first write is under way (3 s a call): the second Ctrl-C comes well
    // within that call, however loaded the machine.
    var (process, output, error, printed) = try Self.applyPastItsBackup(latency: 3000, until: "Modifying...")
    process.interrupt()
    usleep(300_000)
    process.interrupt()
    let stderr = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    printed += output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    #expect(process.terminationStatus == 130)
    let backup = String(decoding: printed, as: UTF8.self).components(separatedBy: "(restore with '").dropFirst().first?.prefix { $0 != "'" } ?? ""
    #expect(!backup.isEmpty)
    #expect(stderr.contains("Quitting at once: the watch may hold part of this apply. 'tsapply plan watch.yaml' shows what is left to change; "
                            + "'\(backup)' brings the watch back to how it was before it; 'tsapply history' lists this apply as unfinished.\n"), "\(stderr)")
  }
}

/// Contacts added on the watch itself (no short name, number typed with spaces) survive an export
/// round trip: the export plans no changes; duplicates are listed once with a warning.
@Suite struct WatchSideContactExportTests {
  @Test func exportOfWatchSideContactsPlansNoChanges() throws {
    let dir = try TSApplyBinary.temporaryDirectory()
    _ = try TSApplyBinary.run(["device", "init"], in: dir)
    _ = try TSApplyBinary.run(["device", "simulate", "contact-add", "Zed", "+15550199"], in: dir)
    _ = try TSApplyBinary.run(["device", "simulate", "contact-add", "Émile", "+33 1 23 45", "É"], in: dir)
    _ = try TSApplyBinary.run(["device", "simulate", "emergency-set", "Kim", "+1 555 0188"], in: dir)
    let export = try TSApplyBinary.run(["export", "-o", "e.yaml"], in: dir)
    #expect(export.status == 0, "\(export.stderr)")
    let plan = try TSApplyBinary.run(["plan", "--detailed-exitcode", "e.yaml"], in: dir)
    #expect(plan.status == 0, "\(plan.stdout)")
  }

  @Test func duplicateWatchContactsAreExportedOnceWithAWarning() throws {
    let dir = try TSApplyBinary.temporaryDirectory()
    _ = try TSApplyBinary.run(["device", "init"], in: dir)
    for _ in 0..<2 { _ = try TSApplyBinary.run(["device", "simulate", "contact-add", "Zed", "+15550199"], in: dir) }
    let export = try TSApplyBinary.run(["export", "-o", "e.yaml"], in: dir)
    #expect(export.status == 0)
    #expect(export.stderr.contains("warning: contacts: the watch holds the contact \"Zed\" with the same phone number more than once"))
    #expect(!export.stderr.contains("15550199"))
    let plan = try TSApplyBinary.run(["plan", "e.yaml"], in: dir)
    #expect(plan.status == 0)
    #expect(plan.stdout.contains("# contacts: 1 removed"))
  }
}

/// Several watches driven from one directory (`--device sim:PATH`): saved plans, backups and
/// drift records stay with the watch they belong to.
@Suite struct NamedWatchTests {
  static func setUp() throws -> URL {
    let dir = try TSApplyBinary.temporaryDirectory()
    try FileManager.default.createDirectory(at: dir.appendingPathComponent("watches"), withIntermediateDirectories: true)
    _ = try TSApplyBinary.run(["device", "init", "--device", "sim:watches/frank.json"], in: dir)
    _ = try TSApplyBinary.run(["device", "init", "--device", "sim:watches/alice.json"], in: dir)
    try "contacts:\n  - {name: Frank Poe, phone: \"+15550177\"}\n"
      .write(to: dir.appendingPathComponent("frank.yaml"), atomically: true, encoding: .utf8)
    return dir
  }

  @Test func savedPlanGoesToTheWatchItWasMadeFor() throws {
    let dir = try Self.setUp()
    _ = try TSApplyBinary.run(["plan", "--device", "sim:watches/frank.json", "frank.yaml", "-out", "f.tfplan"], in: dir)
    let other = try TSApplyBinary.run(["apply", "--device", "sim:watches/alice.json", "f.tfplan"], in: dir)
    #expect(other.status == 1)
    #expect(other.stderr.contains("f.tfplan was made for the watch sim:"))
    let apply = try TSApplyBinary.run(["apply", "f.tfplan"], in: dir)
    #expect(apply.status == 0, "\(apply.stderr)")
    #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent(".tsapply/device.json").path))
    let frank = try TSApplyBinary.run(["plan", "--detailed-exitcode", "--device", "sim:watches/frank.json", "frank.yaml"], in: dir)
    #expect(frank.status == 0)
  }

  /// A tester's report: a saved plan applied while `TSAPPLY_DEVICE` (or `--device`) names another
  /// watch was also called stale ("the watch changed": the plan's own watch did not) and the
  /// advice made a new plan for the other watch only. The refusal names both watches and gives
  /// both ways on: the plan applied to its own watch, or a new plan for the other one; each
  /// advised command works when pasted.
  @Test(arguments: [(["--device", "sim:watches/alice.json"], [String: String]()),
                    ([], ["TSAPPLY_DEVICE": "sim:watches/alice.json"])])
  func aSavedPlanForAnotherWatchIsRefusedWithAdviceForBoth(_ option: [String], _ environment: [String: String]) throws {
    let dir = try Self.setUp()
    #expect(try TSApplyBinary.run(["plan", "--device", "sim:watches/frank.json", "frank.yaml", "-out", "f.tfplan"], in: dir).status == 0)
    // Alice's watch holds what frank's does not: compared with the plan, it would look changed.
    #expect(try TSApplyBinary.run(["device", "simulate", "contact-add", "Zed", "+15550199", "--device", "sim:watches/alice.json"], in: dir).status == 0)
    let other = try TSApplyBinary.run(["apply"] + option + ["f.tfplan"], in: dir, environment: environment)
    #expect(other.status == 1)
    let root = dir.resolvingSymlinksInPath().path
    #expect(other.stderr.contains("f.tfplan was made for the watch sim:\(root)/watches/frank.json; it cannot be applied to sim:\(root)/watches/alice.json"),
            "\(other.stderr)")
    #expect(!other.stderr.contains("stale"), "the plan's own watch did not change: \(other.stderr)")
    #expect(other.stderr.contains("Apply it to the watch it was made for: 'tsapply apply --device sim:watches/frank.json f.tfplan'"), "\(other.stderr)")
    #expect(other.stderr.contains("or make a new plan for sim:watches/alice.json: 'tsapply plan -out f.tfplan --device sim:watches/alice.json frank.yaml'"),
            "\(other.stderr)")
    let own = try TSApplyBinary.run(["apply", "--device", "sim:watches/frank.json", "f.tfplan"], in: dir, environment: environment)
    #expect(own.status == 0, "\(own.stderr)")
    #expect(try TSApplyBinary.run(["plan", "-out", "f.tfplan", "--device", "sim:watches/alice.json", "frank.yaml"], in: dir, environment: environment).status == 0)
    let alice = try TSApplyBinary.run(["apply", "f.tfplan"], in: dir, environment: environment)
    #expect(alice.status == 0, "\(alice.stderr)")
  }

  /// A tester's report: deleting the `device` key of a saved plan let it apply to another watch
  /// of the same state. The watch is named twice in the file; with either key gone the plan
  /// still goes only to its own watch, and with both gone it goes nowhere.
  @Test(arguments: [["device"], ["plan.device"], ["device", "plan.device"]])
  func aSavedPlanWithoutItsWatchIsRefused(_ removed: [String]) throws {
    let dir = try Self.setUp()
    _ = try TSApplyBinary.run(["plan", "--device", "sim:watches/frank.json", "frank.yaml", "-out", "f.tfplan"], in: dir)
    let url = dir.appendingPathComponent("f.tfplan")
    var object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
    for key in removed {
      if key == "device" { object["device"] = nil } else if var plan = object["plan"] as? [String: Any] {
        plan["device"] = nil
        object["plan"] = plan
      }
    }
    try JSONSerialization.data(withJSONObject: object).write(to: url)
    let other = try TSApplyBinary.run(["apply", "--device", "sim:watches/alice.json", "f.tfplan"], in: dir)
    #expect(other.status == 1)
    #expect(other.stderr.contains(removed.count == 2 ? "f.tfplan does not name the watch it was made for" : "f.tfplan was made for the watch sim:"),
            "\(other.stderr)")
    let alice = try TSApplyBinary.run(["plan", "--detailed-exitcode", "--device", "sim:watches/alice.json", "frank.yaml"], in: dir)
    #expect(alice.status == 2, "nothing was written to alice's watch")
  }

  /// A damaged saved plan (`{}` in a `.tfplan` file, a marker that is not a number, a file cut
  /// short) is refused as a saved plan; it used to be read as a manifest, and `{}` planned
  /// nothing and reported "Apply complete!".
  @Test(arguments: [("{}", "f.tfplan"), ("{\"tsapply_saved_plan\": \"1\", \"plan\": {}}", "f.json"),
                    ("{\"tsapply_saved_plan\": 1, \"plan\": {\"format", "f.json")])
  func aDamagedSavedPlanIsRefusedAsOne(_ text: String, _ name: String) throws {
    let dir = try Self.setUp()
    try text.write(to: dir.appendingPathComponent(name), atomically: true, encoding: .utf8)
    let apply = try TSApplyBinary.run(["apply", "--device", "sim:watches/frank.json", name], in: dir)
    #expect(apply.status == 1)
    #expect(apply.stderr.contains("\(name) is not a readable saved plan"), "\(apply.stderr)")
    #expect(!apply.stdout.contains("Apply complete"))
  }

  @Test func backupRestoresToTheWatchItCameFromAndDriftIsFoundFromAnyDirectory() throws {
    let dir = try Self.setUp()
    let apply = try TSApplyBinary.run(["apply", "--auto-approve", "--device", "sim:watches/frank.json", "frank.yaml"], in: dir)
    let backup = try #require(TSApplyBinary.backupPath(in: apply.stdout), "\(apply.stdout)")
    _ = try TSApplyBinary.run(["device", "simulate", "contact-add", "Zed", "+15550199", "--device", "sim:watches/frank.json"], in: dir)
    let elsewhere = try TSApplyBinary.temporaryDirectory()
    let plan = try TSApplyBinary.run(["plan", "--device", "sim:" + dir.appendingPathComponent("watches/frank.json").path,
                                      dir.appendingPathComponent("frank.yaml").path], in: elsewhere)
    #expect(plan.stdout.contains("Note: Objects have changed outside of tsapply"))
    let restore = try TSApplyBinary.run(["restore", "--auto-approve", "--allow-destroy", backup], in: dir)
    #expect(restore.status == 0, "\(restore.stderr)")
    // Back to the state before the apply: no contacts, so Frank's manifest has changes again.
    let again = try TSApplyBinary.run(["plan", "--detailed-exitcode", "--device", "sim:watches/frank.json", "frank.yaml"], in: dir)
    #expect(again.status == 2)
    #expect(again.stdout.contains("# contacts: 1 added"), "\(again.stdout)")
    #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent(".tsapply/device.json").path))
  }

  @Test func anEditedSavedPlanIsRefused() throws {
    let dir = try Self.setUp()
    _ = try TSApplyBinary.run(["plan", "--device", "sim:watches/frank.json", "frank.yaml", "-out", "f.tfplan"], in: dir)
    let url = dir.appendingPathComponent("f.tfplan")
    let edited = try String(contentsOf: url, encoding: .utf8).replacingOccurrences(of: "+15550177", with: "+1555ABC0002")
    try edited.write(to: url, atomically: true, encoding: .utf8)
    let apply = try TSApplyBinary.run(["apply", "f.tfplan"], in: dir)
    #expect(apply.status == 1)
    #expect(apply.stderr.contains("does not hold the changes its manifest gives for this watch"))
  }

  @Test func saveIntoAMissingDirectoryIsRefused() throws {
    let dir = try Self.setUp()
    let plan = try TSApplyBinary.run(["plan", "--device", "sim:watches/frank.json", "frank.yaml", "-out", "nodir/f.tfplan"], in: dir)
    #expect(plan.status == 1)
    #expect(plan.stderr.contains("does not exist"))
    #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("nodir").path))
  }
}

/// `plan --json` carries every warning, and its errors are JSON too.
@Suite struct PlanJSONTests {
  @Test func warningsAndErrorsAreJSON() throws {
    let dir = try TSApplyBinary.temporaryDirectory()
    let long = String(repeating: "a", count: 35)
    try "contacts:\n  - {name: \(long), phone: \"+15550100\"}\n".write(to: dir.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    let plan = try TSApplyBinary.run(["plan", "--json"], in: dir)
    #expect(plan.status == 0)
    #expect(plan.stdout.contains("\"field\" : \"contacts[0].name\""), "\(plan.stdout)")
    // The only text on standard error: the default watch was created by this first use.
    #expect(plan.stderr == "Created the default simulated watch (profile default) at \(dir.resolvingSymlinksInPath().path)/.tsapply/device.json on first use.\n", "\(plan.stderr)")
    _ = try TSApplyBinary.run(["device", "init", "--profile", "npk", "--force"], in: dir)
    let refused = try TSApplyBinary.run(["plan", "--json"], in: dir)
    #expect(refused.status == 1)
    #expect(refused.stdout.contains("\"errors\""), "\(refused.stdout)")
    #expect(refused.stdout.contains("does not store regular contacts"))
  }
}
