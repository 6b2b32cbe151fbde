import Foundation
import Testing
import TSTestSupport

/// `tsapply drift`: drift (changed on the watch since the last apply) apart from pending
/// (manifest changes not applied yet); exit 0 / 2 / 1; read-only by construction.
@Suite struct DriftCommandTests {
  /// A reminder changed on the watch in two fields, of which the plan changes one back: the note
  /// says it is undone only in part, and which field stays (fresh-eyes finding: "The actions
  /// below undo these changes" while `enabled` stayed as the wearer left it).
  @Test func aChangeUndoneOnlyInPartIsSaidSo() throws {
    let dir = try TSApplyBinary.temporaryDirectory()
    let state = ["TSAPPLY_STATE_DIR": dir.appendingPathComponent("state").path]
    try "version: 1\nreminders:\n  custom:\n    - {name: Church, repeat: [sun], at: [\"09:00\"]}\n"
      .write(to: dir.appendingPathComponent("m.yaml"), atomically: true, encoding: .utf8)
    try "version: 1\nreminders:\n  custom:\n    - {name: Church, repeat: [sun], at: [\"10:00\"]}\n"
      .write(to: dir.appendingPathComponent("other.yaml"), atomically: true, encoding: .utf8)
    #expect(try TSApplyBinary.run(["apply", "--auto-approve", "m.yaml"], in: dir, environment: state).status == 0)
    // Another tool's write (another state folder), then the wearer switches the reminder off.
    let other = ["TSAPPLY_STATE_DIR": dir.appendingPathComponent("other-state").path]
    #expect(try TSApplyBinary.run(["apply", "--auto-approve", "other.yaml"], in: dir, environment: other).status == 0)
    let shown = try TSApplyBinary.run(["device", "show", "--json"], in: dir).stdout
    let object = try #require(try JSONSerialization.jsonObject(with: Data(shown.utf8)) as? [String: Any])
    let id = try #require((object["reminders"] as? [[String: Any]])?.first { $0["reminderName"] as? String == "Church" }?["reminderId"] as? String)
    #expect(try TSApplyBinary.run(["device", "simulate", "reminder-toggle", id], in: dir).status == 0)
    let plan = try TSApplyBinary.run(["plan", "m.yaml"], in: dir, environment: state)
    #expect(plan.stdout.contains("The actions below undo reminder.custom[\"Church\"] only in part (enabled stays as the watch has it)."),
            "\(plan.stdout)")
  }

  /// The plan's note under the drift says exactly what its actions undo: a contact the wearer
  /// added is removed again; a custom reminder they switched off, whose `enabled` the manifest
  /// does not set, stays off (fresh-eyes finding: "the actions below undo these changes" for both).
  @Test func thePlansNoteSaysWhatItUndoesAndWhatItLeaves() throws {
    let dir = try ReconcileTests.workspace("family.yaml")
    #expect(try TSApplyBinary.run(["apply", "--auto-approve"], in: dir).status == 0)
    #expect(try TSApplyBinary.run(["device", "simulate", "contact-add", "Carol", "+447700900789"], in: dir).status == 0)
    let shown = try TSApplyBinary.run(["device", "show", "--json"], in: dir).stdout
    let object = try #require(try JSONSerialization.jsonObject(with: Data(shown.utf8)) as? [String: Any])
    let reminders = try #require(object["reminders"] as? [[String: Any]])
    let id = try #require(reminders.first { $0["reminderName"] as? String == "Eye drops" }?["reminderId"] as? String)
    #expect(try TSApplyBinary.run(["device", "simulate", "reminder-toggle", id], in: dir).status == 0)
    let plan = try TSApplyBinary.run(["plan"], in: dir)
    #expect(plan.stdout.contains("The actions below undo the changes to contacts; reminder.custom[\"Eye drops\"] stays as the watch has it "
                                 + "(the manifest does not manage what changed there, or already agrees with it)."), "\(plan.stdout)")
  }

  @Test func exitStatusSaysWhetherTheWatchDrifted() throws {
    let dir = try ReconcileTests.workspace()
    let fresh = try TSApplyBinary.run(["drift"], in: dir)
    #expect(fresh.status == 1)
    #expect(fresh.stderr.contains("no simulated watch at") && fresh.stderr.contains("yet"), "\(fresh.stderr)")
    #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent(".tsapply").path), "drift created a watch")

    _ = try TSApplyBinary.run(["device", "init"], in: dir)
    let noRecord = try TSApplyBinary.run(["drift", "--pending"], in: dir)
    #expect(noRecord.status == 2, "pending changes count with --pending")
    #expect(noRecord.stdout.hasPrefix("No record of an apply to the watch sim:"), "\(noRecord.stdout)")
    #expect(try TSApplyBinary.run(["drift"], in: dir).status == 0)

    #expect(try TSApplyBinary.run(["apply", "--auto-approve"], in: dir).status == 0)
    let clean = try TSApplyBinary.run(["drift", "--pending"], in: dir)
    #expect(clean.status == 0, "\(clean.stdout)")
    #expect(clean.stdout.contains("No drift."))

    _ = try TSApplyBinary.run(["device", "simulate", "contact-add", "Zed", "+15550199"], in: dir)
    let drifted = try TSApplyBinary.run(["drift", "--redact"], in: dir)
    #expect(drifted.status == 2)
    #expect(drifted.stdout.contains("  # contacts has changed\n  # contacts: 1 added\n"), "\(drifted.stdout)")
    // Undoing the wearer's contact is not a change written in the manifest: nothing pending in it.
    #expect(drifted.stdout.contains("Nothing pending in watch.yaml itself: applying it would only undo the drift above (contacts)."),
            "\(drifted.stdout)")
    #expect(!drifted.stdout.contains("has changes not applied yet"))
    #expect(!drifted.stdout.contains("15550199"))
  }

  /// A record that exists but cannot be used makes `drift` fail naming it (a cron check must not
  /// read it as "no record, no drift" forever); `plan` still plans, without drift.
  @Test func anUnusableRecordIsAnErrorForDriftOnly() throws {
    let dir = try ReconcileTests.workspace()
    #expect(try TSApplyBinary.run(["apply", "--auto-approve"], in: dir).status == 0)
    let watches = TSApplyBinary.testStateDirectory + "/watches"
    let folder = try #require(try FileManager.default.contentsOfDirectory(atPath: watches).first { folder in
      let record = (try? String(contentsOfFile: watches + "/" + folder + "/watch.json", encoding: .utf8)) ?? ""
      return record.replacingOccurrences(of: "\\/", with: "/").contains(dir.lastPathComponent + "/.tsapply/device.json")
    })
    let path = watches + "/" + folder + "/last-applied.json"
    for (text, reason) in [("{\"x\":1}", "not a tsapply last-applied record"), ("{\"format_version\": 9}", "last-applied record format 9 is not supported")] {
      try Data(text.utf8).write(to: URL(fileURLWithPath: path))
      let drift = try TSApplyBinary.run(["drift"], in: dir)
      #expect(drift.status == 1, "\(drift.stdout)")
      #expect(drift.stderr.contains("the last-applied record \(path) cannot be used: \(reason)"), "\(drift.stderr)")
      #expect(try TSApplyBinary.run(["plan", "--detailed-exitcode"], in: dir).status == 0)
    }
  }

  @Test func jsonHasThePlansShapes() throws {
    let dir = try ReconcileTests.workspace()
    _ = try TSApplyBinary.run(["apply", "--auto-approve"], in: dir)
    _ = try TSApplyBinary.run(["device", "simulate", "reminder-toggle", "1"], in: dir)
    let json = try TSApplyBinary.run(["drift", "--json"], in: dir)
    #expect(json.status == 2)
    let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
    #expect(object["has_record"] as? Bool == true)
    let drift = try #require(object["drift"] as? [[String: Any]])
    #expect(drift.map { $0["address"] as? String } == ["reminder.drinking"])
    #expect((drift.first?["actions"] as? [String]) == ["update"])
    let pending = try #require(object["pending"] as? [String: Any])
    #expect(pending["format_version"] as? String == "2")
    // `pending` (the plan) undoes the drift; `counts.pending` counts the manifest's own changes: none.
    #expect((pending["resource_changes"] as? [[String: Any]])?.count == 1)
    #expect((object["counts"] as? [String: Int]) == ["drift": 1, "pending": 0])
  }

  /// Drift takes no lock: it answers while an apply holds the watch.
  @Test func driftAnswersWhileAnApplyHoldsTheLock() throws {
    let dir = try ReconcileTests.workspace()
    _ = try TSApplyBinary.run(["device", "init"], in: dir)
    let (process, _) = try StopTests.slowApply(dir)
    Thread.sleep(forTimeInterval: 1.0)
    let drift = try TSApplyBinary.run(["drift"], in: dir)
    #expect(drift.status == 0, "\(drift.stderr)")
    #expect(!drift.stderr.contains("locked"))
    process.terminate()
    process.waitUntilExit()
  }
}
