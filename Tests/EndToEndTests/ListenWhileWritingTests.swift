import Foundation
import Testing
import TSBridge
@testable import TSDevice
import TSModel
import TSTestSupport

/// A contact added on the watch in the instant between the apply's read of the contact list and
/// its write is overwritten (the SDK has no conditional write), but the apply hears the watch
/// announce it: it says so by name and keeps the announced list in a backup that `restore`
/// brings back.
@Suite struct ListenWhileWritingTests {
  /// One watch, and the same watch as the only member of a fleet (`apply --fleet`: the engine
  /// listens for every person's apply, so the fleet path must not lose it).
  @Test(arguments: [false, true])
  func aContactAddedOnTheWatchDuringTheWriteIsReportedAndKept(fleet: Bool) throws {
    let dir = try TSApplyBinary.temporaryDirectory()
    #expect(try TSApplyBinary.run(["device", "init"], in: dir).status == 0)
    // The emergency list is written after the contacts: the restore the warning advises must
    // leave it as the apply wrote it.
    try "version: 1\ncontacts:\n  - {name: Ann Lee, phone: \"+15550100\"}\nemergency: {sos: true, contacts: [{name: Ann Lee, phone: \"+15550100\"}]}\n"
      .write(to: dir.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    try "watches:\n  room-1: {device: \"sim:.tsapply/device.json\", manifest: watch.yaml}\n"
      .write(to: dir.appendingPathComponent("fleet.yaml"), atomically: true, encoding: .utf8)
    // Each call takes 2 s: the contacts step reads the list (the check before writing),
    // then writes it; the wearer adds a contact 400 ms into that read (a wide window, for a
    // loaded machine).
    let arguments = fleet ? ["apply", "--auto-approve", "--fleet", "fleet.yaml"] : ["apply", "--auto-approve"]
    let state = dir.appendingPathComponent("state")
    let run = try TSApplyBinary.startInteractive(arguments, in: dir,
                                                 environment: ["TSAPPLY_SIM_LATENCY": "2000,0", "TSAPPLY_STATE_DIR": state.path])
    if fleet {
      // A fleet prints a watch's section when the watch is done: the backup, written just
      // before the contacts step, says it began.
      let deadline = Date().addingTimeInterval(60)
      while Self.backups(in: state).isEmpty && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
    } else {
      _ = run.read(until: "contacts: Modifying...")
    }
    Thread.sleep(forTimeInterval: 0.4)
    let watch = try SimulatedDevice(path: dir.path + "/.tsapply/device.json")
    try watch.simulateContactAdd(Contact(name: "Zed Roe", phoneNum: "+15550199", shortName: "Z"))
    let result = run.wait(limit: 60)
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    #expect(try watch.snapshot().contacts.map(\.name) == ["Ann Lee"], "the write did not land after the wearer's change")
    // One watch warns on stderr; a fleet's warning is in the watch's section.
    let output = fleet ? result.stdout : result.stderr
    #expect(output.contains("Warning: while this apply was writing, the watch's contacts were changed on the watch itself"),
            "\(result.stdout)\(result.stderr)")
    #expect(output.contains("Zed Roe (+15550199)"), "\(output)")
    #expect(output.contains("the apply wrote over that change (reading the watch back shows what it wrote)"), "\(output)")
    // The backup is the watch as the apply left it with the announced list: its restore puts
    // that list back and nothing else.
    let line = try #require(output.split(separator: "\n").first {
      $0.contains("' puts that list back over what this apply wrote to it and leaves the rest as the apply left it")
    })
    #expect(line.contains("That list, as the watch announced it, is kept in "), "\(line)")
    #expect(line.contains("To keep what was changed on the watch, put it into the manifest and apply again"), "\(line)")
    let quoted = try #require(line.split(separator: "'").last { $0.hasPrefix("tsapply restore ") })
    // The advice's own words (`--device …` where the watch is not the default), then approval.
    let words = quoted.split(separator: " ").dropFirst().map(String.init)
    let restore = try TSApplyBinary.run(words + ["--auto-approve", "--allow-destroy"], in: dir,
                                        environment: ["TSAPPLY_STATE_DIR": state.path])
    #expect(restore.status == 0, "\(restore.stderr)")
    // That list back, and nothing else: the emergency list stays as the apply wrote it.
    #expect(try watch.snapshot().contacts.map(\.name) == ["Zed Roe"])
    #expect(try watch.snapshot().emergency.isSosOn && watch.snapshot().emergency.contacts.map(\.name) == ["Ann Lee"], "\(restore.stdout)")
  }

  /// A contact added on the watch after the apply wrote the contacts (while it writes the
  /// emergency list) is not written over: the read-back shows it, the apply fails its
  /// verification saying the watch still holds the change, and the record keeps what the apply
  /// wrote — so `drift` reports the wearer's contact, never as tsapply's own write.
  @Test func aContactAddedAfterTheContactsWriteIsDriftNotRecordedAsTsapplysOwn() throws {
    let (dir, environment, watch, result) = try Self.contactAddedDuringApply(after: "emergency: Modifying...", wait: 0.3)
    #expect(try watch.snapshot().contacts.map(\.name) == ["Ann Lee", "Zed Roe"], "the wearer's contact stays")
    #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
    #expect(result.stderr.contains("the watch's contacts were changed on the watch itself; the watch still holds that change"),
            "\(result.stderr)")
    // The watch holds the change: seen as drift and kept by adopting it, not "brought back" by a
    // restore — which would only undo the apply's own changes (fresh-eyes finding: the backup it
    // named held the watch from before the apply).
    #expect(result.stderr.contains("See it with 'tsapply drift watch.yaml'; keep it with 'tsapply drift --adopt watch.yaml' (it goes into the manifest)"),
            "\(result.stderr)")
    #expect(!result.stderr.contains("brings the whole watch back"), "\(result.stderr)")
    // The backup it names is the watch as the apply left it, with the wearer's list: restoring it changes nothing.
    let line = try #require(result.stderr.split(separator: "\n").first { $0.contains("a backup of the watch with it is ") })
    let backup = try #require(line.split(separator: " ").last.map { String($0.dropLast()) })
    let drift = try TSApplyBinary.run(["drift"], in: dir, environment: environment)
    #expect(drift.status == 2, "\(drift.stdout)\(drift.stderr)")
    #expect(drift.stdout.contains("Zed Roe"), "\(drift.stdout)")
    let restore = try TSApplyBinary.run(["restore", backup, "--auto-approve", "--allow-destroy"], in: dir, environment: environment)
    #expect(restore.status == 0 && restore.stdout.contains("No changes"), "\(restore.stdout)\(restore.stderr)")
  }

  /// A contact added on the watch after the apply's last write, while it reads the watch back:
  /// the warning never says the apply wrote over it — the list is read once more after the
  /// announcement — and `drift` reports it (fresh-eyes test: "the apply wrote over that
  /// change", exit 0, while the watch held the contact).
  @Test func aContactAddedWhileTheApplyReadsBackIsNotSaidToBeWrittenOver() throws {
    let (dir, environment, watch, result) = try Self.contactAddedDuringApply(after: "emergency: Modifications complete", wait: 1.4)
    #expect(try watch.snapshot().contacts.map(\.name) == ["Ann Lee", "Zed Roe"])
    #expect(result.stderr.contains("the watch's contacts were changed on the watch itself; the watch still holds that change"),
            "\(result.stdout)\(result.stderr)")
    #expect(!result.stderr.contains("wrote over that change"), "\(result.stderr)")
    // Found by the verification or only after it: either way the watch does not hold what was
    // applied, and the exit status says so (fresh-eyes finding: "Apply complete!", exit 0).
    #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
    #expect(!result.stdout.contains("Apply complete!"), "not complete beside exit 1: \(result.stdout)")
    let drift = try TSApplyBinary.run(["drift"], in: dir, environment: environment)
    #expect(drift.status == 2 && drift.stdout.contains("Zed Roe"), "\(drift.stdout)\(drift.stderr)")
  }

  /// A contact added on the watch while the apply writes the reminders, before its contacts
  /// step: the apply stops before writing over it, and its advice does not offer a rerun or a
  /// restore bare — both would undo the wearer's contact — but says so, and how to keep it.
  /// Also when the list is the apply's first write, so it stopped before writing anything:
  /// nothing to undo, but applying again would write over the change all the same (fresh-eyes
  /// finding: the advice was a bare "then apply again", which removed the wearer's contact).
  @Test(arguments: [
    ("reminders:\n  drinking: {enabled: true, repeat: everyday, period: {start: \"08:00\", end: \"20:00\", every: 2h}}\n", "reminder.drinking: Modifying...",
     "is kept; running the apply again or restoring the backup would undo it. See it with 'tsapply drift"),
    // Asked and answered: the wearer's contact comes while the question waits, after the plan's read.
    ("", "Enter a value:",
     "Nothing was written to the watch, so there is nothing to undo. The change made on the watch to contacts is kept; running the apply again would undo it. See it with 'tsapply drift"),
  ])
  func anApplyStoppedToKeepAChangeOnTheWatchSaysBothWaysOnWouldUndoIt(before: String, marker: String, advice: String) throws {
    let dir = try TSApplyBinary.temporaryDirectory()
    #expect(try TSApplyBinary.run(["device", "init"], in: dir).status == 0)
    try "version: 1\n\(before)contacts:\n  - {name: Ann Lee, phone: \"+15550100\"}\n"
      .write(to: dir.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    let environment = ["TSAPPLY_STATE_DIR": dir.appendingPathComponent("state").path]
    let asks = marker == "Enter a value:"
    let run = try TSApplyBinary.startInteractive(["apply"] + (asks ? [] : ["--auto-approve"]), in: dir,
                                                 environment: environment.merging(["TSAPPLY_SIM_LATENCY": "1000,0"]) { $1 })
    _ = run.read(until: marker)
    let watch = try SimulatedDevice(path: dir.path + "/.tsapply/device.json")
    try watch.simulateContactAdd(Contact(name: "Zed Roe", phoneNum: "+15550199", shortName: "Z"))
    if asks { run.type("yes\n") }
    let result = run.wait(limit: 60)
    #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
    #expect(try watch.snapshot().contacts.map(\.name) == ["Zed Roe"], "nothing was written over the wearer's contact")
    #expect(result.stderr.contains(advice), "\(result.stderr)")
    #expect(result.stderr.contains("keep it with 'tsapply drift --adopt"), "\(result.stderr)")
    #expect(!result.stderr.contains("again to finish, or"), "\(result.stderr)")
  }

  /// An agent applying a revision listens on the watch all along (for SOS and drift): a
  /// contact the wearer adds while its apply writes the contacts is overwritten (no conditional
  /// write), but the agent says so in its status — by name, with the backup that keeps it and
  /// the command that brings it back — instead of a silent "in sync" (fresh-eyes finding: no
  /// warning for a contact added during an agent's apply).
  @Test func anAgentSaysWhatTheWearerChangedWhileItsApplyWrote() throws {
    let (dir, broker) = try FleetAgentTests.fleetOnABroker()
    defer { broker.stop() }
    // Only contacts to write: the step that writes them comes right after the backup.
    try """
      transport: \(broker.address)
      site: ward-a
      watches:
        room-12: {device: "sim:watches/room-12.json", manifest: residents/room-12.yaml}

      """.write(to: dir.appendingPathComponent("fleet.yaml"), atomically: true, encoding: .utf8)
    let state = dir.appendingPathComponent("agent-state")
    let agent = try ListeningProcess(["agent", "--broker", "\(broker.address)", "--site", "ward-a", "--agent-id", "station",
                                      "--device", "sim:watches/room-12.json"],
                                     in: dir, environment: ["TSAPPLY_SIM_LATENCY": "1000,0", "TSAPPLY_STATE_DIR": state.path])
    defer { agent.send(SIGKILL); _ = agent.finish() }
    _ = try FleetAgentTests.waitForStatus("station (online)", in: dir)
    // Published, then waited for: the wearer's change is made meanwhile.
    let publisher = try TSApplyBinary.startInteractive(["apply", "--fleet", "fleet.yaml", "--auto-approve"], in: dir)
    // The backup is written just before the contacts step, which reads the list (1 s) and then
    // writes it: the wearer adds a contact 300 ms into that read.
    let deadline = Date().addingTimeInterval(60)
    while Self.backups(in: state).isEmpty && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
    Thread.sleep(forTimeInterval: 0.3)
    let watch = try SimulatedDevice(path: dir.path + "/watches/room-12.json")
    try watch.simulateContactAdd(Contact(name: "Zed Roe", phoneNum: "+15550199", shortName: "Z"))
    let published = publisher.wait(limit: 60)
    #expect(published.status == 0, "\(published.stdout)\(published.stderr)")
    var shown = ""
    while Date() < deadline {
      shown = try TSApplyBinary.run(["status", "--fleet", "fleet.yaml"], in: dir).stdout
      if shown.contains("room-12: while it wrote") { break }
      Thread.sleep(forTimeInterval: 0.2)
    }
    #expect(try watch.snapshot().contacts.map(\.name) == ["Daughter"], "the write did not land after the wearer's change")
    #expect(shown.contains("room-12: while it wrote, the watch's contacts were changed on the watch itself (it announced 1 contact: Zed Roe ("),
            "\(shown)")
    #expect(shown.contains("the apply wrote over that change; a backup holds that list: 'tsapply restore --device "), "\(shown)")
    #expect(!shown.contains("+15550199"), "the agent's status masks numbers: \(shown)")
    // The advice's own words bring the wearer's contact back (on the agent's machine: its state folder).
    let line = try #require(shown.split(separator: "\n").first { $0.hasPrefix("room-12: while it wrote") })
    let quoted = try #require(line.split(separator: "'").first { $0.hasPrefix("tsapply restore ") })
    let words = quoted.split(separator: " ").dropFirst().map(String.init)
    agent.send(SIGTERM)
    _ = agent.finish()
    let restore = try TSApplyBinary.run(words + ["--auto-approve", "--allow-destroy"], in: dir,
                                        environment: ["TSAPPLY_STATE_DIR": state.path])
    #expect(restore.status == 0, "\(restore.stdout)\(restore.stderr)")
    #expect(try watch.snapshot().contacts.map(\.name).contains("Zed Roe"))
  }

  /// An apply of one contact that is also the emergency contact, each device call taking a
  /// second, with "Zed Roe" added on the watch `wait` seconds after the apply printed `marker`:
  /// the workspace, its environment (state folder), the watch and the apply's result.
  /// A reminder the wearer switches while the apply writes the contacts, after it wrote the
  /// reminders (no listener announces reminders): the apply says so, with the drift and adopt
  /// commands; when the manifest sets that reminder, its verification fails on it and the
  /// advice keeps the wearer's change instead of "see the watch with 'tsapply plan …'", whose
  /// plan switched it back (fresh-eyes finding). `drift` reports it either way.
  @Test(arguments: [false, true])
  func aReminderSwitchedWhileTheApplyWritesIsSaidAndKept(managed: Bool) throws {
    let dir = try TSApplyBinary.temporaryDirectory()
    #expect(try TSApplyBinary.run(["device", "init"], in: dir).status == 0)
    let environment = ["TSAPPLY_STATE_DIR": dir.appendingPathComponent("state").path]
    func manifest(_ sedentary: Bool, _ contacts: [String]) throws {
      try ("version: 1\nreminders:\n  sedentary: {enabled: \(sedentary)}\n" + (managed ? "  drinking: {enabled: false}\n" : "")
           + "contacts:\n" + contacts.enumerated().map { "  - {name: \($1), phone: \"+155501\($0 + 10)\"}\n" }.joined())
        .write(to: dir.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    }
    try manifest(true, ["Ann"])
    #expect(try TSApplyBinary.run(["apply", "--auto-approve"], in: dir, environment: environment).status == 0)
    try manifest(false, ["Ann", "Bob"])
    let run = try TSApplyBinary.startInteractive(["apply", "--auto-approve"], in: dir,
                                                 environment: environment.merging(["TSAPPLY_SIM_LATENCY": "1000,0"]) { $1 })
    _ = run.read(until: "contacts: Modifying...")
    Thread.sleep(forTimeInterval: 0.2)
    #expect(try TSApplyBinary.run(["device", "simulate", "reminder-toggle", "1"], in: dir).status == 0)
    let result = run.wait(limit: 60)
    #expect(result.status == (managed ? 1 : 0), "\(result.stdout)\(result.stderr)")
    #expect(result.stderr.contains("Warning: while this apply was writing, the watch itself changed: reminder.drinking (turned on)."),
            "\(result.stderr)")
    #expect(result.stderr.contains("See it with 'tsapply drift watch.yaml'; keep it with 'tsapply drift --adopt watch.yaml'"), "\(result.stderr)")
    #expect(!result.stderr.contains("see the watch with 'tsapply plan"), "\(result.stderr)")
    let drift = try TSApplyBinary.run(["drift", "watch.yaml"], in: dir, environment: environment)
    #expect(drift.status == 2 && drift.stdout.contains("reminder.drinking"), "\(drift.stdout)\(drift.stderr)")
  }

  /// The same for a watch of a fleet reached directly (`apply --fleet`): the advice names the
  /// fleet (`drift --fleet … --watch …`, `drift --adopt --fleet …`), which reads the watch's
  /// merged manifests — not `drift --device …`, which read `watch.yaml` (fresh-eyes finding).
  @Test func aReminderSwitchedWhileAFleetsApplyWritesIsSaidWithTheFleetsCommands() throws {
    let dir = try TSApplyBinary.temporaryDirectory()
    let environment = ["TSAPPLY_STATE_DIR": dir.appendingPathComponent("state").path]
    #expect(try TSApplyBinary.run(["device", "init", "--device", "sim:watches/r1.json"], in: dir).status == 0)
    try "version: 1\nwatches:\n  r1: {device: \"sim:watches/r1.json\", manifest: r1.yaml}\n"
      .write(to: dir.appendingPathComponent("fleet.yaml"), atomically: true, encoding: .utf8)
    func manifest(_ sedentary: Bool, _ contacts: [String]) throws {
      try ("version: 1\nreminders:\n  sedentary: {enabled: \(sedentary)}\n  drinking: {enabled: false}\ncontacts:\n"
           + contacts.enumerated().map { "  - {name: \($1), phone: \"+155501\($0 + 10)\"}\n" }.joined())
        .write(to: dir.appendingPathComponent("r1.yaml"), atomically: true, encoding: .utf8)
    }
    try manifest(true, ["Ann"])
    #expect(try TSApplyBinary.run(["apply", "--fleet", "fleet.yaml", "--auto-approve"], in: dir, environment: environment).status == 0)
    try manifest(false, ["Ann", "Bob"])
    let run = try TSApplyBinary.startInteractive(["apply", "--fleet", "fleet.yaml", "--auto-approve"], in: dir,
                                                 environment: environment.merging(["TSAPPLY_SIM_LATENCY": "1000,0"]) { $1 })
    // A fleet's sections come whole at the end: the switch follows the reminders' write on the watch itself.
    let watch = try SimulatedDevice(path: dir.path + "/watches/r1.json")
    let deadline = Date().addingTimeInterval(60)
    while Date() < deadline, try watch.snapshot().deviceState.reminders.first(where: { $0.kind == .sedentary })?.isEnabled != false {
      Thread.sleep(forTimeInterval: 0.05)
    }
    _ = try watch.simulateReminderToggle(id: "1")
    let result = run.wait(limit: 60)
    let output = result.stdout + result.stderr
    #expect(result.status == 1, "\(output)")
    #expect(output.contains("the watch itself changed: reminder.drinking (turned on)"), "\(output)")
    #expect(output.contains("See it with 'tsapply drift --fleet fleet.yaml --watch r1'; keep it with 'tsapply drift --adopt --fleet fleet.yaml --watch r1'"),
            "\(output)")
    #expect(!output.contains("--device sim:watches/r1.json'") && !output.contains("see the watch with 'tsapply plan"), "\(output)")
  }

  static func contactAddedDuringApply(after marker: String, wait: TimeInterval) throws
    -> (URL, [String: String], SimulatedDevice, ProcessResult) {
    let dir = try TSApplyBinary.temporaryDirectory()
    #expect(try TSApplyBinary.run(["device", "init"], in: dir).status == 0)
    try "version: 1\ncontacts:\n  - {name: Ann Lee, phone: \"+15550100\"}\nemergency:\n  sos: true\n  contacts:\n    - {contact: Ann Lee}\n"
      .write(to: dir.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    let environment = ["TSAPPLY_STATE_DIR": dir.appendingPathComponent("state").path]
    let run = try TSApplyBinary.startInteractive(["apply", "--auto-approve"], in: dir,
                                                 environment: environment.merging(["TSAPPLY_SIM_LATENCY": "1000,0"]) { $1 })
    _ = run.read(until: marker)
    Thread.sleep(forTimeInterval: wait)
    let watch = try SimulatedDevice(path: dir.path + "/.tsapply/device.json")
    try watch.simulateContactAdd(Contact(name: "Zed Roe", phoneNum: "+15550199", shortName: "Z"))
    return (dir, environment, watch, run.wait(limit: 60))
  }

  /// Backup files anywhere under `dir` (a watch's `backups/` folder).
  /// Through a bridge (`bridge:`), whose event stream is the apply's listener: a contact the
  /// wearer adds during the contacts step — the apply's first calls to the watch after it began
  /// listening — is heard also when the stream is slow to open (`delay@events`: a slow link):
  /// the apply writes only once its stream is open (fresh-eyes finding: a change made before
  /// the stream connected was written over without a word).
  @Test(arguments: [(1500, 0), (400, 1500)])
  func aContactAddedDuringTheFirstWriteThroughABridgeIsReportedAndKept(latency: Int, streamDelay: Int) async throws {
    let bridge = try await BridgeFixture.make(["default"], serveEnvironment: [
      "TSAPPLY_SIM_LATENCY": "\(latency),0", BridgeFaults.variable: "delay@events:\(streamDelay)"])
    defer { bridge.stop() }
    try "version: 1\ncontacts:\n  - {name: Ann Lee, phone: \"+15550100\"}\n"
      .write(to: bridge.directory.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    let state = bridge.directory.appendingPathComponent("state")
    let environment = bridge.environment.merging(["TSAPPLY_STATE_DIR": state.path]) { $1 }
    let (directory, watchPath) = (bridge.directory, bridge.directory.path + "/w0.json")
    let result = try await offThePool {
      let run = try TSApplyBinary.startInteractive(["apply", "--auto-approve", "--device", "bridge:home"], in: directory,
                                                   environment: environment)
      // The contacts step reads the list (the check before writing), then writes it: the
      // wearer's contact comes at once as the step begins, during that read.
      _ = run.read(until: "contacts: Modifying...")
      Thread.sleep(forTimeInterval: 0.1)
      try SimulatedDevice(path: watchPath).simulateContactAdd(Contact(name: "Zed Roe", phoneNum: "+15550199", shortName: "Z"))
      return run.wait(limit: 60)
    }
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    #expect(try SimulatedDevice(path: watchPath).snapshot().contacts.map(\.name) == ["Ann Lee"], "the write landed after the wearer's change")
    #expect(result.stderr.contains("Warning: while this apply was writing, the watch's contacts were changed on the watch itself"),
            "\(result.stdout)\(result.stderr)")
    #expect(result.stderr.contains("Zed Roe (+15550199)"), "\(result.stderr)")
    #expect(Self.backups(in: state).count == 2, "the backup before the apply and the one holding the announced list: \(Self.backups(in: state))")
  }

  /// A bridge whose event stream does not open within the wait (5 s at most): the apply goes
  /// on — the window it cannot close then is as where the platform has no listener — and says
  /// so, instead of a silent "Apply complete!" (fresh-eyes finding).
  @Test func anApplyThatCannotHearTheWatchSaysSo() async throws {
    let bridge = try await BridgeFixture.make(["default"], serveEnvironment: [BridgeFaults.variable: "delay@events:8000"])
    defer { bridge.stop() }
    try "version: 1\ncontacts:\n  - {name: Ann Lee, phone: \"+15550100\"}\n"
      .write(to: bridge.directory.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    let result = try await bridge.run(["apply", "--auto-approve", "--device", "bridge:home"],
                                      environment: ["TSAPPLY_STATE_DIR": bridge.directory.path + "/state"])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stderr.contains("Warning: this apply cannot hear the watch announce changes to its contacts (its listener did not open in time"),
            "\(result.stderr)")
    #expect(result.stdout.contains("Apply complete!"), "\(result.stdout)")
  }

  /// The contacts write lands, the wearer adds a contact, then the write's answer is lost: the
  /// list reads back as neither what was sent nor what was there. The apply says the watch
  /// still holds the wearer's change, its advice keeps it (no bare "run it again to finish",
  /// which would remove it), and `drift` reports it — never recorded as the apply's own
  /// (fresh-eyes finding: "No drift", and the advice removed the contact).
  @Test func aContactAddedAsTheAnswerToTheWriteWasLostIsDriftAndKept() throws {
    let (dir, environment, result) = try Self.lostAnswerToTheContactsWrite { watch in
      try watch.simulateContactAdd(Contact(name: "Zed Roe", phoneNum: "+15550199"))
    }
    #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
    #expect(result.stderr.contains("reading the watch back shows the list changed, but not to what was sent"), "\(result.stderr)")
    #expect(result.stderr.contains("the watch still holds that change"), "\(result.stderr)")
    #expect(result.stderr.contains("The change made on the watch to contacts is kept; running the apply again or restoring the backup would undo it"),
            "\(result.stderr)")
    #expect(!result.stderr.contains("again to finish, or"), "\(result.stderr)")
    let drift = try TSApplyBinary.run(["drift"], in: dir, environment: environment)
    #expect(drift.status == 2 && drift.stdout.contains("Zed Roe"), "\(drift.stdout)\(drift.stderr)")
  }

  /// The contacts write lands, the wearer removes the contact it added — the list is as the
  /// plan found it — then the write's answer is lost: the read-back says "not applied", but the
  /// apply heard the watch put the list back, says so, and does not say nothing reached the
  /// watch (fresh-eyes finding: "Nothing reached the watch … run it again", no word of it).
  @Test func aListPutBackOnTheWatchAsTheAnswerWasLostIsSaid() throws {
    let (_, _, result) = try Self.lostAnswerToTheContactsWrite { watch in
      let removed = try watch.simulateContactRemove(name: "Ann Lee")
      #expect(removed == 1, "the write had not landed")
    }
    #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
    #expect(result.stderr.contains("reading the watch back shows it was not applied"), "\(result.stderr)")
    #expect(result.stderr.contains("were changed on the watch itself back to what the watch held when the plan was made"), "\(result.stderr)")
    #expect(result.stderr.contains("whether the write landed cannot be told"), "\(result.stderr)")
    #expect(!result.stderr.contains("Nothing reached the watch"), "\(result.stderr)")
  }

  /// Applies a manifest of one contact (Ann Lee) to a fresh simulated watch at 2 s a call, the
  /// contacts write's answer lost after it landed (call 5, setAllContacts): the step reads
  /// (0–2 s), the write lands as its call begins (2 s), its answer would come at 4 s; `wearer`
  /// acts on the watch at 3 s. The folder, the environment and the apply's result.
  static func lostAnswerToTheContactsWrite(_ wearer: (SimulatedDevice) throws -> Void) throws
    -> (dir: URL, environment: [String: String], result: ProcessResult) {
    let dir = try TSApplyBinary.temporaryDirectory()
    #expect(try TSApplyBinary.run(["device", "init"], in: dir).status == 0)
    try "version: 1\ncontacts:\n  - {name: Ann Lee, phone: \"+15550100\"}\n"
      .write(to: dir.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    let environment = ["TSAPPLY_STATE_DIR": dir.appendingPathComponent("state").path]
    let run = try TSApplyBinary.startInteractive(["apply", "--auto-approve"], in: dir, environment: environment.merging(
      ["TSAPPLY_SIM_LATENCY": "2000,0", "TSAPPLY_SIM_FAULT": "lands-then-fails@5"]) { $1 })
    _ = run.read(until: "contacts: Modifying...")
    Thread.sleep(forTimeInterval: 3)
    try wearer(try SimulatedDevice(path: dir.path + "/.tsapply/device.json"))
    return (dir, environment, run.wait(limit: 60))
  }

  static func backups(in dir: URL) -> [String] {
    let files = FileManager.default.enumerator(atPath: dir.path)?.compactMap { $0 as? String } ?? []
    return files.filter { $0.contains("backups/") && $0.hasSuffix(".json") }
  }
}
