import Foundation
import Testing
import TSTestSupport

/// `tsapply drift --adopt`: what the wearer did on the watch goes into the manifest (comments
/// kept, mode kept), after the diff and a confirmation; then plan and drift show nothing.
@Suite struct DriftAdoptTests {
  @Test func adoptsTheWearersChangesThenPlanAndDriftShowNothing() throws {
    let dir = try ReconcileTests.workspace("family.yaml")
    let file = dir.appendingPathComponent("watch.yaml")
    try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
    let original = try String(contentsOf: file, encoding: .utf8)
    #expect(try TSApplyBinary.run(["apply", "--auto-approve"], in: dir).status == 0)
    #expect(try TSApplyBinary.run(["device", "simulate", "contact-add", "Carol", "+447700900789"], in: dir).status == 0)
    #expect(try TSApplyBinary.run(["device", "simulate", "reminder-toggle", "1"], in: dir).status == 0)

    // Without a terminal and without --auto-approve: refused, the file untouched.
    let refused = try TSApplyBinary.run(["drift", "--adopt"], in: dir)
    #expect(refused.status == 1, "\(refused.stdout)")
    #expect(refused.stderr.contains("refusing to adopt without confirmation: standard input is not a terminal"), "\(refused.stderr)")
    #expect(try String(contentsOf: file, encoding: .utf8) == original)

    let adopted = try TSApplyBinary.run(["drift", "--adopt", "--auto-approve", "--redact"], in: dir)
    #expect(adopted.status == 0, "\(adopted.stdout)\(adopted.stderr)")
    #expect(adopted.stdout.contains("--- a/watch.yaml\n+++ b/watch.yaml\n"), "\(adopted.stdout)")
    #expect(adopted.stdout.contains("-    enabled: true\n+    enabled: false\n"), "\(adopted.stdout)")
    #expect(adopted.stdout.contains("+  - {name: Carol, phone: \""), "\(adopted.stdout)")
    #expect(!adopted.stdout.contains("447700900789") && !adopted.stdout.contains("7700 900123"), "--redact masks every number")

    let text = try String(contentsOf: file, encoding: .utf8)
    #expect(text.hasPrefix("# A watch for an older family member"), "comments are kept")
    #expect(text.contains("  - {name: Carol, phone: \"+447700900789\"}\nemergency:"))
    #expect(text == original
      .replacingOccurrences(of: "  drinking:\n    enabled: true", with: "  drinking:\n    enabled: false")
      .replacingOccurrences(of: "0018\"}\nemergency:", with: "0018\"}\n  - {name: Carol, phone: \"+447700900789\"}\nemergency:"))
    #expect(try ReconcileTests.mode(file) == 0o600)

    let plan = try TSApplyBinary.run(["plan", "--detailed-exitcode"], in: dir)
    #expect(plan.status == 0, "\(plan.stdout)")
    let drift = try TSApplyBinary.run(["drift"], in: dir)
    #expect(drift.status == 0, "\(drift.stdout)")
    #expect(drift.stdout.contains("No drift."))
    let again = try TSApplyBinary.run(["drift", "--adopt"], in: dir)
    #expect(again.status == 0 && again.stdout.contains("nothing to adopt"), "\(again.stdout)")
  }

  /// A manifest edit not applied yet that concerns what the wearer changed stays in the file:
  /// that item is named as not adopted, with both changes, and the command fails.
  /// SOS switched off and the emergency list cleared on the watch: adopting it says first that it
  /// puts SOS at risk, and how to keep SOS instead (fresh-eyes finding: adopted without a word).
  /// With --auto-approve there is no question to answer no to: it is not adopted, nothing is
  /// written, and the advice says how to answer or to write SOS back (fresh-eyes fe96 #8).
  @Test func adoptingSOSSwitchedOffWarnsFirst() throws {
    let dir = try ReconcileTests.workspace("family.yaml")
    #expect(try TSApplyBinary.run(["apply", "--auto-approve"], in: dir).status == 0)
    #expect(try TSApplyBinary.run(["device", "simulate", "emergency-clear"], in: dir).status == 0)
    let before = try String(contentsOf: dir.appendingPathComponent("watch.yaml"), encoding: .utf8)
    let refused = try TSApplyBinary.run(["drift", "--adopt", "--auto-approve"], in: dir)
    #expect(refused.status == 1, "\(refused.stdout)\(refused.stderr)")
    #expect(refused.stderr.contains("Error: not adopted with --auto-approve: it puts SOS at risk; run 'tsapply drift --adopt watch.yaml' at a terminal to "
                                    + "answer, or 'tsapply apply watch.yaml' to write SOS back"), "\(refused.stderr)")
    #expect(try String(contentsOf: dir.appendingPathComponent("watch.yaml"), encoding: .utf8) == before)
    #expect(try TSApplyBinary.run(["drift"], in: dir).status == 2, "still drift: nothing recorded")
    // At a terminal: said before the diff and the question, which is answered.
    let run = try TSApplyBinary.startInteractive(["drift", "--adopt"], in: dir)
    _ = run.read(until: "Enter a value:")
    run.type("yes\n")
    let adopted = run.wait(limit: 30)
    #expect(adopted.status == 0, "\(adopted.stdout)\(adopted.stderr)")
    #expect(try String(contentsOf: dir.appendingPathComponent("watch.yaml"), encoding: .utf8).contains("sos: false"))
    let warning = try #require(adopted.stdout.range(of: "Warning: this puts SOS at risk: the SOS switch or emergency contacts as changed on the watch "
                                                    + "become what watch.yaml asks for"), "\(adopted.stdout)")
    #expect(adopted.stdout.contains("answer no and apply it instead ('tsapply apply watch.yaml' writes it back)"), "\(adopted.stdout)")
    #expect(adopted.stdout[..<warning.lowerBound].contains("Adopting emergency"), "\(adopted.stdout)")
    #expect(!adopted.stdout[..<warning.lowerBound].contains("--- a/watch.yaml"), "said before the diff and the question: \(adopted.stdout)")
    // A contact added adopts without it.
    #expect(try TSApplyBinary.run(["device", "simulate", "contact-add", "Carol", "+447700900789"], in: dir).status == 0)
    let contact = try TSApplyBinary.run(["drift", "--adopt", "--auto-approve"], in: dir)
    #expect(contact.status == 0 && !contact.stdout.contains("SOS at risk"), "\(contact.stdout)\(contact.stderr)")
  }

  /// SOS switched off on the watch is marked in `drift` as the plan marks turning it off
  /// (fresh-eyes fe101: `~ sos = true -> false` with no `(!)`).
  @Test func driftMarksSOSSwitchedOffOnTheWatch() throws {
    let dir = try ReconcileTests.workspace("family.yaml")
    #expect(try TSApplyBinary.run(["apply", "--auto-approve"], in: dir).status == 0)
    #expect(try TSApplyBinary.run(["device", "simulate", "emergency-clear"], in: dir).status == 0)
    let drift = try TSApplyBinary.run(["drift", "--no-color"], in: dir)
    #expect(drift.status == 2 && drift.stdout.contains("  # (!) SOS was switched off on the watch: a long press calls no one\n  ~ emergency {"),
            "\(drift.stdout)")
  }

  /// SOS switched on and an emergency contact set on the watch, where the manifest has SOS off:
  /// adopting changes whom a press reaches, which is said as that, not as "a press may reach no
  /// one" (fresh-eyes fe99); unattended it is refused in the same words.
  @Test func adoptingSOSSwitchedOnSaysWhomAPressReaches() throws {
    let dir = try TSApplyBinary.temporaryDirectory()
    try "version: 1\nemergency:\n  sos: false\n  contacts: []\n".write(to: dir.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    #expect(try TSApplyBinary.run(["apply", "--auto-approve"], in: dir).status == 0)
    #expect(try TSApplyBinary.run(["device", "simulate", "emergency-set", "Kim Poe", "+15550177"], in: dir).status == 0)
    let refused = try TSApplyBinary.run(["drift", "--adopt", "--auto-approve"], in: dir)
    #expect(refused.status == 1 && refused.stderr.contains("Error: not adopted with --auto-approve: it changes whom an SOS press reaches; "
      + "run 'tsapply drift --adopt watch.yaml' at a terminal to answer, or 'tsapply apply watch.yaml' to write the emergency list as watch.yaml has it back"),
      "\(refused.stderr)")
    let run = try TSApplyBinary.startInteractive(["drift", "--adopt"], in: dir)
    let shown = run.read(until: "Enter a value:")
    run.type("no\n")
    _ = run.wait(limit: 30)
    #expect(shown.contains("Warning: this changes whom an SOS press reaches: the SOS switch or emergency contacts as changed on the watch become "
      + "what watch.yaml asks for, so a press may reach others than it says now."), "\(shown)")
  }

  /// Adopting into a manifest that does not state the emergency list (examples/minimal.yaml)
  /// takes nothing of it into the record: SOS switched off stays drift for the family's
  /// manifest; and recording what a manifest agrees with, with nothing to write, is asked for
  /// as a write is (fresh-eyes finding: recorded without a question, and `drift` of the
  /// family's manifest then exited 0 with SOS off).
  @Test func adoptingIntoAManifestThatLeavesASectionOutKeepsItDrift() throws {
    let dir = try ReconcileTests.workspace("family.yaml")
    try FileManager.default.copyItem(at: ReconcileTests.examples.appendingPathComponent("minimal.yaml"), to: dir.appendingPathComponent("small.yaml"))
    #expect(try TSApplyBinary.run(["apply", "--auto-approve"], in: dir).status == 0)
    #expect(try TSApplyBinary.run(["device", "simulate", "emergency-clear"], in: dir).status == 0)
    let adopted = try TSApplyBinary.run(["drift", "--adopt", "small.yaml"], in: dir)
    #expect(adopted.stdout.contains("Not adopted emergency: small.yaml does not state it at all, so it stays drift"), "\(adopted.stdout)\(adopted.stderr)")
    let drift = try TSApplyBinary.run(["drift", "watch.yaml"], in: dir)
    #expect(drift.status == 2 && drift.stdout.contains("emergency"), "\(drift.stdout)")
    #expect(try TSApplyBinary.run(["monitor", "--once", "watch.yaml"], in: dir).status == 2)
  }

  @Test func keepsAPendingEditOfWhatTheWearerChanged() throws {
    let dir = try TSApplyBinary.temporaryDirectory()
    let file = dir.appendingPathComponent("m.yaml")
    try "version: 1\ncontacts:\n  - {name: Ann, phone: \"+15550100\"}\n  - {name: Bob, phone: \"+15550101\"}\n"
      .write(to: file, atomically: true, encoding: .utf8)
    #expect(try TSApplyBinary.run(["apply", "--auto-approve", "m.yaml"], in: dir).status == 0)
    let edited = try String(contentsOf: file, encoding: .utf8).replacingOccurrences(of: "+15550101", with: "+15550102")
    try edited.write(to: file, atomically: true, encoding: .utf8)
    #expect(try TSApplyBinary.run(["device", "simulate", "contact-remove", "Bob"], in: dir).status == 0)
    let adopt = try TSApplyBinary.run(["drift", "--adopt", "--auto-approve", "m.yaml"], in: dir)
    #expect(adopt.status == 1, "\(adopt.stdout)\(adopt.stderr)")
    #expect(adopt.stdout.contains("Not adopted contacts: the watch removed \"Bob\"; m.yaml changes the phone of \"Bob\", not applied yet: apply or edit it first.\n"),
            "\(adopt.stdout)")
    #expect(try String(contentsOf: file, encoding: .utf8) == edited, "the user's new number stays")
    let plan = try TSApplyBinary.run(["plan", "--detailed-exitcode", "m.yaml"], in: dir)
    #expect(plan.status == 2 && plan.stdout.contains("+15550102"), "the edit is still in the next plan: \(plan.stdout)")
  }

  /// The wearer removed a contact the emergency list refers to by name: adopting the removal
  /// alone would leave the reference dangling, so it is not adopted, and the words name the
  /// field that blocks it and what to change (they said "a manifest cannot state it": fresh-eyes
  /// finding). Nothing is written.
  @Test func aRemovalThatWouldLeaveAReferenceDanglingSaysWhatBlocksIt() throws {
    let dir = try TSApplyBinary.temporaryDirectory()
    let file = dir.appendingPathComponent("m.yaml")
    let text = "version: 1\ncontacts:\n  - {name: Anna Müller, phone: \"+15550100\"}\n  - {name: Bob, phone: \"+15550101\"}\n"
      + "emergency:\n  sos: true\n  contacts:\n    - {contact: Anna Müller}\n"
    try text.write(to: file, atomically: true, encoding: .utf8)
    #expect(try TSApplyBinary.run(["apply", "--auto-approve", "m.yaml"], in: dir).status == 0)
    #expect(try TSApplyBinary.run(["device", "simulate", "contact-remove", "Anna Müller"], in: dir).status == 0)
    let adopt = try TSApplyBinary.run(["drift", "--adopt", "--auto-approve", "m.yaml"], in: dir)
    #expect(adopt.status == 1, "\(adopt.stdout)\(adopt.stderr)")
    #expect(adopt.stdout.contains("Not adopted contacts: written as the watch holds it, m.yaml would not load: `emergency.contacts[0].contact` refers to the contact \"Anna Müller\""),
            "\(adopt.stdout)")
    #expect(adopt.stdout.contains("change that in m.yaml so it agrees with what the watch holds, then adopt again"), "\(adopt.stdout)")
    #expect(try String(contentsOf: file, encoding: .utf8) == text)
  }

  @Test func refusesWhatItCannotDo() throws {
    let dir = try ReconcileTests.workspace("family.yaml")
    let stdin = try TSApplyBinary.run(["drift", "--adopt", "-"], in: dir)
    #expect(stdin.status == 64 && stdin.stderr.contains("name its file, not '-'"), "\(stdin.stderr)")
    let flag = try TSApplyBinary.run(["drift", "--auto-approve"], in: dir)
    #expect(flag.status == 64 && flag.stderr.contains("--auto-approve only matters with --adopt"), "\(flag.stderr)")
    _ = try TSApplyBinary.run(["device", "init"], in: dir)
    let noRecord = try TSApplyBinary.run(["drift", "--adopt", "--auto-approve"], in: dir)
    #expect(noRecord.status == 1 && noRecord.stderr.contains("nothing to adopt"), "\(noRecord.stderr)")
  }
}

/// `drift --fleet FILE --watch NAME --adopt`: into the watch's own manifest only.
@Suite struct FleetDriftAdoptTests {
  @Test func adoptsIntoTheWatchsOwnManifestAndNamesWhatALayerSets() throws {
    let dir = try FleetLayersTests.mixedFleet()
    let applied = try TSApplyBinary.run(["apply", "--fleet", "mixed.yaml", "--auto-approve"], in: dir)
    #expect(applied.status == 0, "\(applied.stdout)\(applied.stderr)")
    let own = dir.appendingPathComponent("residents/room-20.yaml"), layer = dir.appendingPathComponent("wards/ward-b.yaml")
    let (ownBefore, layerBefore) = (try String(contentsOf: own, encoding: .utf8), try String(contentsOf: layer, encoding: .utf8))
    let device = ["--device", "sim:watches/room-20.json"]
    #expect(try TSApplyBinary.run(["device", "simulate", "contact-add", "Carol", "+15550230"] + device, in: dir).status == 0)
    #expect(try TSApplyBinary.run(["device", "simulate", "contact-remove", "Ward B desk"] + device, in: dir).status == 0)
    #expect(try TSApplyBinary.run(["device", "simulate", "reminder-toggle", "1"] + device, in: dir).status == 0)

    let adopt = try TSApplyBinary.run(["drift", "--fleet", "mixed.yaml", "--watch", "room-20", "--adopt", "--auto-approve"], in: dir)
    #expect(adopt.status == 1, "part of the drift is a layer's: \(adopt.stdout)\(adopt.stderr)")
    #expect(adopt.stdout.contains("Adopting contacts: added \"Carol\"."), "\(adopt.stdout)")
    #expect(adopt.stdout.contains("Not adopted contacts: \"Ward B desk\", removed on the watch, is not written in contacts of residents/room-20.yaml"),
            "\(adopt.stdout)")
    #expect(adopt.stdout.contains("Not adopted reminder.drinking: what changed is set by another manifest merged for this watch (a layer), not by residents/room-20.yaml"),
            "\(adopt.stdout)")
    #expect(adopt.stdout.contains("Adopting writes only into residents/room-20.yaml, the watch's own manifest"), "\(adopt.stdout)")
    #expect(try String(contentsOf: own, encoding: .utf8) == ownBefore.replacingOccurrences(
      of: "  - {name: Daughter, phone: \"+1 555 0220\"}\n",
      with: "  - {name: Daughter, phone: \"+1 555 0220\"}\n  - {name: Carol, phone: \"+15550230\"}\n"))
    #expect(try String(contentsOf: layer, encoding: .utf8) == layerBefore, "a layer is never written")

    // Carol is kept; only the desk (the layer's) is still put back.
    let plan = try TSApplyBinary.run(["plan", "--fleet", "mixed.yaml", "--watch", "room-20", "--detailed-exitcode"], in: dir)
    #expect(plan.status == 2)
    // (The drift note before the actions still names both: the list was adopted in part, so
    // it stays drift until the next apply.)
    let actions = plan.stdout.components(separatedBy: "─────").last ?? ""
    #expect(actions.contains("+ contact {name = \"Ward B desk\"") && !actions.contains("Carol"), "\(plan.stdout)")
    #expect(actions.contains("reminder.drinking"), "the layer's reminder is still put back: \(plan.stdout)")

    let noOwn = try TSApplyBinary.run(["drift", "--fleet", "mixed.yaml", "--watch", "room-21", "--adopt", "--auto-approve"], in: dir)
    #expect(noOwn.status == 1 && noOwn.stderr.contains("the watch room-21 has no manifest of its own in mixed.yaml"), "\(noOwn.stderr)")
    let several = try TSApplyBinary.run(["drift", "--fleet", "mixed.yaml", "--adopt", "--auto-approve"], in: dir)
    #expect(several.status == 64 && several.stderr.contains("name it with one --watch NAME"), "\(several.stderr)")
  }

  /// Over MQTT the agents hold the drift records: refused, and for a watch whose manifests are
  /// merged the advice compares with them all (a copy of the fleet file without its transport),
  /// never `--device` with its own file alone, whose comparison took the layers' contacts for
  /// removals (fresh-eyes fe105 #4).
  @Test func overMQTTTheAdviceAdoptsAgainstEveryManifestOfTheWatch() throws {
    let dir = try TSApplyBinary.temporaryDirectory()
    try FileManager.default.createDirectory(at: dir.appendingPathComponent("res"), withIntermediateDirectories: true)
    try "version: 1\ncontacts:\n  - {name: Desk, phone: \"+15550100\"}\n".write(to: dir.appendingPathComponent("res/ward.yaml"), atomically: true, encoding: .utf8)
    try "version: 1\ncontacts:\n  - {name: Son, phone: \"+15550101\"}\n".write(to: dir.appendingPathComponent("res/r1.yaml"), atomically: true, encoding: .utf8)
    try """
      version: 1
      transport: mqtt://127.0.0.1:1
      site: ward-a
      defaults: res/ward.yaml
      watches:
        r1: {device: "sim:w/r1.json", manifest: res/r1.yaml}
      """.write(to: dir.appendingPathComponent("fleet.yaml"), atomically: true, encoding: .utf8)
    let refused = try TSApplyBinary.run(["drift", "--fleet", "fleet.yaml", "--watch", "r1", "--adopt"], in: dir)
    #expect(refused.status == 1, "\(refused.stderr)")
    #expect(refused.stderr.contains("r1 takes values from res/ward.yaml as well") && refused.stderr.contains("'tsapply drift --adopt --fleet COPY --watch r1'")
              && refused.stderr.contains("publish it with 'tsapply apply --fleet fleet.yaml'"), "\(refused.stderr)")
  }

  /// A manifest another watch shares, or that is a layer, is refused however its path is spelled
  /// (`.`/`..`, a symbolic link): adopting one watch's drift into it would change the others.
  @Test func refusesASharedManifestHoweverItsPathIsSpelled() throws {
    let dir = try TSApplyBinary.temporaryDirectory()
    let res = dir.appendingPathComponent("res")
    try FileManager.default.createDirectory(at: res, withIntermediateDirectories: true)
    let shared = res.appendingPathComponent("shared.yaml")
    try FileManager.default.copyItem(at: ReconcileTests.examples.appendingPathComponent("family.yaml"), to: shared)
    try FileManager.default.copyItem(at: shared, to: res.appendingPathComponent("layer.yaml"))
    try FileManager.default.createSymbolicLink(atPath: res.appendingPathComponent("link.yaml").path, withDestinationPath: "shared.yaml")
    try """
      version: 1
      watches:
        b: {device: "sim:w/b.json", manifest: res/shared.yaml}
        c: {device: "sim:./w/../w/c.json", manifest: ./res/../res/shared.yaml}
        d: {device: "sim:w/d.json", manifest: res/link.yaml}

      """.write(to: dir.appendingPathComponent("fleetS.yaml"), atomically: true, encoding: .utf8)
    try """
      version: 1
      layers:
        - manifest: ./res/../res/layer.yaml
      watches:
        e: {device: "sim:w/e.json", manifest: res/layer.yaml}

      """.write(to: dir.appendingPathComponent("fleetL.yaml"), atomically: true, encoding: .utf8)
    for name in ["b", "c", "d", "e"] {
      #expect(try TSApplyBinary.run(["device", "init", "--device", "sim:w/\(name).json"], in: dir).status == 0)
    }
    for fleet in ["fleetS.yaml", "fleetL.yaml"] {
      let applied = try TSApplyBinary.run(["apply", "--fleet", fleet, "--auto-approve"], in: dir)
      #expect(applied.status == 0, "\(applied.stdout)\(applied.stderr)")
    }
    let cases = [("fleetS.yaml", "c", "shared.yaml", "res/../res/shared.yaml is also the manifest of b, d in fleetS.yaml"),
                 ("fleetL.yaml", "e", "layer.yaml", "res/layer.yaml is also a layer of fleetL.yaml (./res/../res/layer.yaml)")]
    for (fleet, watch, file, refusal) in cases {
      let written = res.appendingPathComponent(file)
      let before = try String(contentsOf: written, encoding: .utf8)
      #expect(try TSApplyBinary.run(["device", "simulate", "reminder-toggle", "0", "--device", "sim:w/\(watch).json"], in: dir).status == 0)
      let adopt = try TSApplyBinary.run(["drift", "--fleet", fleet, "--watch", watch, "--adopt", "--auto-approve"], in: dir)
      #expect(adopt.status == 1, "\(adopt.stdout)\(adopt.stderr)")
      #expect(adopt.stderr.contains(refusal), "\(adopt.stderr)")
      #expect(try String(contentsOf: written, encoding: .utf8) == before, "a manifest other watches take is not written")
    }
  }
}
