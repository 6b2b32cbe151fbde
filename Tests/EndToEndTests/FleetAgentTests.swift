import Foundation
import Testing
import TSModel
import TSMQTT
import TSTestSupport

/// `tsapply agent` and `tsapply apply|status --fleet` as processes, through a Mosquitto on
/// 127.0.0.1: the open broker of the tests, and the example configuration of
/// examples/fleet/broker (TLS, one password per agent, an ACL confining each to its site).
@Suite struct FleetAgentTests {
  /// A fleet directory with two simulated watches, its fleet file naming `broker` as transport.
  static func fleet(transport: String) throws -> URL {
    let dir = try TSApplyBinary.temporaryDirectory().resolvingSymlinksInPath()
    func write(_ name: String, _ text: String) throws {
      let url = dir.appendingPathComponent(name)
      try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
      try text.write(to: url, atomically: true, encoding: .utf8)
    }
    try write("wards/ward-a.yaml", "reminders:\n  custom:\n    - {name: Lunch, at: [\"12:00\"]}\n")
    try write("residents/room-12.yaml", "contacts:\n  - {name: Daughter, phone: \"+15550112\"}\n")
    try write("residents/room-14.yaml", "contacts:\n  - {name: Son, phone: \"+15550114\"}\n")
    try write("fleet.yaml", """
      defaults: wards/ward-a.yaml
      transport: \(transport)
      site: ward-a
      watches:
        room-12: {device: "sim:watches/room-12.json", manifest: residents/room-12.yaml}
        room-14: {device: "sim:watches/room-14.json", manifest: residents/room-14.yaml}

      """)
    for room in ["room-12", "room-14"] {
      #expect(try TSApplyBinary.run(["device", "init", "--device", "sim:watches/\(room).json"], in: dir).status == 0)
    }
    return dir
  }

  /// The fleet of `fleet(transport:)` on an open broker started for it (the caller stops it).
  static func fleetOnABroker() throws -> (URL, MosquittoBroker) {
    let dir = try fleet(transport: "mqtt://127.0.0.1:1")
    let broker = try MosquittoBroker.start(in: dir.path)
    let text = try String(contentsOf: dir.appendingPathComponent("fleet.yaml"), encoding: .utf8)
      .replacingOccurrences(of: "mqtt://127.0.0.1:1", with: "\(broker.address)")
    try text.write(to: dir.appendingPathComponent("fleet.yaml"), atomically: true, encoding: .utf8)
    return (dir, broker)
  }

  /// The agent `station` serving both watches of `fleet(transport:)` on `broker`, once
  /// `status --fleet` shows it online (and the watches without a status).
  static func station(_ broker: MosquittoBroker, in dir: URL) throws -> ListeningProcess {
    let agent = try ListeningProcess(["agent", "--broker", "\(broker.address)", "--site", "ward-a", "--agent-id", "station",
                                      "--device", "sim:watches/room-12.json", "--device", "sim:watches/room-14.json"], in: dir)
    #expect(try waitForStatus("station (online)", in: dir).contains("room-12  no status"))
    return agent
  }

  /// Runs `tsapply status --fleet` until its output contains `text` (at most 10 s).
  static func waitForStatus(_ text: String, in dir: URL, environment: [String: String] = [:]) throws -> String {
    var last = ""
    for _ in 0..<100 {
      last = try TSApplyBinary.run(["status", "--fleet", "fleet.yaml"], in: dir, environment: environment).stdout
      if last.contains(text) { return last }
      usleep(100_000)
    }
    return last
  }

  /// Runs `tsapply plan --fleet ARGUMENTS` until its output contains `text` (at most 10 s): an
  /// agent publishes a watch's state beside its status, not necessarily before it.
  static func waitForPlan(_ text: String, _ arguments: [String] = [], in dir: URL,
                          environment: [String: String] = [:]) throws -> (status: Int32, stdout: String, stderr: String) {
    var last = (status: Int32(-1), stdout: "", stderr: "")
    for _ in 0..<100 {
      let run = try TSApplyBinary.run(["plan", "--fleet", "fleet.yaml"] + arguments, in: dir, environment: environment)
      last = (run.status, run.stdout, run.stderr)
      if last.stdout.contains(text) { return last }
      usleep(100_000)
    }
    return last
  }

  /// `text` with the times and ages of the agents' readings (`as agent a01 read it at
  /// 2026-12-05 01:20:03Z (4s ago`) replaced by placeholders, for a golden file.
  static func timeless(_ text: String) -> String {
    text.replacingOccurrences(of: #"\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ (\\?)\([0-9hms]+ ago"#, with: "<TIME> $1(<AGE> ago",
                              options: .regularExpression)
  }

  /// Over MQTT, `plan --fleet` plans each watch's merged manifests against its state as its agent
  /// last read it, with the review of a direct plan: one field changed in room-12's manifest is
  /// that field's diff; room-14, unchanged, has none — though its wearer changed it after the
  /// agent's last read, which the age of the reading beside it and the caveat warn of.
  @Test func planOverTheBrokerShowsEachWatchsDiffAgainstItsReportedState() throws {
    let (dir, broker) = try Self.fleetOnABroker()
    defer { broker.stop() }
    let agent = try Self.station(broker, in: dir)
    // No agent has read the watches yet: the statuses' lines.
    let unread = try TSApplyBinary.run(["plan", "--fleet", "fleet.yaml", "--detailed-exitcode"], in: dir)
    #expect(unread.status == 2, "\(unread.stdout)\(unread.stderr)")
    #expect(unread.stdout.hasSuffix("2 watches: 2 to publish.\n"), "\(unread.stdout)")
    #expect(!unread.stdout.contains("read it at"), "\(unread.stdout)")
    #expect(try TSApplyBinary.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--wait", "30s"], in: dir).status == 0)
    // Revision A on both, as the agent read them back after applying it.
    let clean = try Self.waitForPlan("2 watches: 2 with no changes.", ["--detailed-exitcode"], in: dir)
    #expect(clean.status == 0, "\(clean.stdout)\(clean.stderr)")
    #expect(clean.stdout.contains("as their agents last read them, the oldest at ") && clean.stdout.contains(" by agent station"),
            "\(clean.stdout)")
    agent.send(SIGTERM)
    #expect(agent.finish().0 == 0)
    // One field changes in room-12's manifest; room-14's wearer adds a contact, unseen by the
    // agent (it is gone).
    try "contacts:\n  - {name: Daughter, phone: \"+15550119\"}\n".write(to: dir.appendingPathComponent("residents/room-12.yaml"),
                                                                     atomically: true, encoding: .utf8)
    #expect(try TSApplyBinary.run(["device", "simulate", "contact-add", "Nurse Pat", "+15550177", "--device", "sim:watches/room-14.json"],
                                  in: dir).status == 0)
    let planned = try TSApplyBinary.run(["plan", "--fleet", "fleet.yaml", "--detailed-exitcode"], in: dir, environment: ["NO_COLOR": "1"])
    // room-14's "no changes" is as of a reading its offline agent made: not known now, exit 1
    // (as `drift --fleet` says), not 2 as if every watch were known.
    #expect(planned.status == 1, "\(planned.stdout)\(planned.stderr)")
    #expect(planned.stderr.contains("room-14"), "\(planned.stderr)")
    expectGolden(Self.timeless(planned.stdout), "plan-fleet-mqtt-reported-states.txt")
    let summary = try TSApplyBinary.run(["plan", "--fleet", "fleet.yaml", "--summary"], in: dir)
    expectGolden(Self.timeless(summary.stdout), "plan-fleet-mqtt-reported-states-summary.txt")
    let markdown = try TSApplyBinary.run(["plan", "--fleet", "fleet.yaml", "--markdown"], in: dir)
    expectGolden(Self.timeless(markdown.stdout), "plan-fleet-mqtt-reported-states.md")
    // --json: each watch's plan and whose reading it was made against.
    let json = try TSApplyBinary.run(["plan", "--fleet", "fleet.yaml", "--json"], in: dir)
    let rows = try #require((try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])?["watches"] as? [[String: Any]])
    #expect(rows.map { $0["result"] as? String } == ["changes", "not known"])
    #expect(rows.map { ($0["reported_state"] as? [String: Any])?["agent"] as? String } == ["station", "station"])
    #expect(rows.map { ($0["reported_state"] as? [String: Any])?["agent_online"] as? Bool } == [false, false])
    #expect((rows.first?["plan"] as? [String: Any])?["resource_changes"] != nil, "\(json.stdout)")
    // --redact masks the numbers of the plan made from the reported state.
    let redacted = try TSApplyBinary.run(["plan", "--fleet", "fleet.yaml", "--redact"], in: dir)
    #expect(!redacted.stdout.contains("5550119") && !redacted.stdout.contains("5550112"), "\(redacted.stdout)")
    #expect(redacted.stdout.contains("~ contacts"), "\(redacted.stdout)")
  }

  @Test func anAgentProcessAppliesWhatApplyPublishesAndGoesOfflineWhenStopped() throws {
    let (dir, broker) = try Self.fleetOnABroker()
    defer { broker.stop() }
    let agent = try Self.station(broker, in: dir)
    let applied = try TSApplyBinary.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--wait", "30s"], in: dir)
    #expect(applied.status == 0, "\(applied.stderr)")
    #expect(applied.stdout.contains("room-12: applied (revision "))
    #expect(applied.stdout.hasSuffix("2 watches: 2 applied.\n"), "\(applied.stdout)")
    let status = try TSApplyBinary.run(["status", "--fleet", "fleet.yaml", "--json"], in: dir)
    let watches = try #require((try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])?["watches"] as? [[String: Any]])
    #expect(watches.map { $0["state"] as? String } == ["in sync", "in sync"])
    #expect(watches.map { $0["agent_online"] as? Bool } == [true, true])
    // An unsafe change refused by the agent: its advice names the fleet file, not the agent's
    // placeholder (fresh-eyes finding: 'FLEET-FILE' echoed).
    let manifest = dir.appendingPathComponent("residents/room-12.yaml")
    let kept = try String(contentsOf: manifest, encoding: .utf8)
    try "contacts: []\n".write(to: manifest, atomically: true, encoding: .utf8)
    let refused = try TSApplyBinary.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--watch", "room-12", "--wait", "30s"], in: dir)
    #expect(refused.status == 1 && refused.stdout.contains("room-12: refused (revision "), "\(refused.stdout)")
    #expect(refused.stdout.contains("('tsapply apply --fleet fleet.yaml --auto-approve --allow-destroy') to apply it")
            && !refused.stdout.contains("FLEET-FILE"), "\(refused.stdout)")
    try kept.write(to: manifest, atomically: true, encoding: .utf8)
    // The wearer presses SOS: the agent publishes the event and logs it.
    #expect(try TSApplyBinary.run(["device", "simulate", "sos", "--device", "sim:watches/room-12.json"], in: dir).status == 0)
    for _ in 0..<400 where !agent.standardError.contains("room-12: SOS") { usleep(50_000) }
    agent.send(SIGTERM)
    let (exitStatus, _, agentLog) = agent.finish()
    let ended = (status: exitStatus, stderr: agentLog)
    #expect(ended.status == 0)
    #expect(ended.stderr.contains("SIGTERM received; going offline"))
    #expect(!ended.stderr.contains("5550112"), "the agent's log holds a phone number")
    // Addresses and revisions are not masked as if they were phone numbers: the log matches
    // what apply printed.
    #expect(ended.stderr.contains("connected to \(broker.address) as tsapply-agent-ward-a-station"), "\(ended.stderr)")
    let revision = try #require(applied.stdout.split(separator: "\n").first { $0.hasPrefix("room-12: applied (revision ") }?
      .dropFirst("room-12: applied (revision ".count).prefix(16))
    #expect(ended.stderr.contains("room-12: revision \(revision) applied (+"), "\(ended.stderr)")
    #expect(ended.stderr.contains("room-12: SOS: the wearer pressed SOS"), "\(ended.stderr)")
    try "contacts:\n  - {name: Daughter, phone: \"+15550113\"}\n".write(to: dir.appendingPathComponent("residents/room-12.yaml"), atomically: true, encoding: .utf8)
    let pending = try TSApplyBinary.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--watch", "room-12"], in: dir)
    #expect(pending.status == 0, "a watch whose agent is offline is pending, not failed: \(pending.stderr)")
    #expect(pending.stdout.contains("room-12: pending (revision "))
    #expect(pending.stdout.contains("agent station is offline"))
    // A watch whose own manifest has errors: nothing of it is published, and its diagnostics
    // are shown as without a broker, with file, line, column and field.
    try "contacts:\n  - {name: Son, phone: \"+15550114\"}\ncontacts: []\n".write(to: dir.appendingPathComponent("residents/room-14.yaml"),
                                                                           atomically: true, encoding: .utf8)
    let invalid = try TSApplyBinary.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--watch", "room-14"], in: dir)
    #expect(invalid.status == 1)
    #expect(invalid.stdout.contains("residents/room-14.yaml:3:1: error: contacts: "), "\(invalid.stdout)")
    let invalidJSON = try TSApplyBinary.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--watch", "room-14", "--json"], in: dir)
    let rows = try #require((try JSONSerialization.jsonObject(with: Data(invalidJSON.stdout.utf8)) as? [String: Any])?["watches"] as? [[String: Any]])
    let diagnostics = try #require(rows.first?["diagnostics"] as? [[String: Any]], "\(invalidJSON.stdout)")
    #expect(diagnostics.first?["line"] as? Int == 3)
    #expect(diagnostics.first?["field"] as? String == "contacts")
    let planned = try TSApplyBinary.run(["plan", "--fleet", "fleet.yaml"], in: dir)
    #expect(planned.status == 1)
    #expect(planned.stdout.contains("=== room-14  device sim:watches/room-14.json"), "\(planned.stdout)")
    #expect(planned.stdout.contains("residents/room-14.yaml:3:1: error: contacts: "), "\(planned.stdout)")
    // room-12's revision is on the broker, its agent offline: waiting for it, not to publish
    // (nor planned against the agent's last reading: publishing again would change nothing).
    #expect(planned.stdout.hasSuffix("\n2 watches: 1 pending, 1 failed.\n"), "\(planned.stdout)")
    #expect(planned.stdout.contains("is published; agent station is offline and has not reported on it"), "\(planned.stdout)")
    let table = try TSApplyBinary.run(["status", "--fleet", "fleet.yaml"], in: dir).stdout
    let row = table.split(separator: "\n").first { $0.hasPrefix("room-12 ") }.map(String.init) ?? ""
    #expect(row.contains(" pending ") && row.contains(" - "), "\(table)")
  }

  /// Over MQTT, `plan` and `drift` answer from the agents' statuses with the exit codes they
  /// have without a broker: a watch changed on the watch is a change to plan (publishing again
  /// converges it) and drift; a revision the agent has not applied is pending.
  @Test func planAndDriftOverTheBrokerExitWithChangesWhenTheWatchDiffers() throws {
    let (dir, broker) = try Self.fleetOnABroker()
    defer { broker.stop() }
    let agent = try ListeningProcess(["agent", "--broker", "\(broker.address)", "--site", "ward-a", "--agent-id", "station",
                                      "--device", "sim:watches/room-12.json", "--device", "sim:watches/room-14.json"], in: dir)
    defer { agent.send(SIGTERM); _ = agent.finish() }
    #expect(try Self.waitForStatus("station (online)", in: dir).contains("room-12  no status"))
    #expect(try TSApplyBinary.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--wait", "30s"], in: dir).status == 0)
    let clean = try TSApplyBinary.run(["plan", "--fleet", "fleet.yaml", "--detailed-exitcode"], in: dir)
    #expect(clean.status == 0, "\(clean.stdout)\(clean.stderr)")
    // The wearer adds a contact: the agent's listener reports drift.
    #expect(try TSApplyBinary.run(["device", "simulate", "contact-add", "Nurse Pat", "+15550177", "--device", "sim:watches/room-12.json"],
                                  in: dir).status == 0)
    _ = try Self.waitForStatus("room-12  drift", in: dir)
    // Planned against the state the agent's drift check read: publishing removes the contact.
    let planned = try Self.waitForPlan("2 watches: 1 with changes, 1 with no changes.", ["--detailed-exitcode"], in: dir)
    #expect(planned.status == 2, "\(planned.stdout)\(planned.stderr)")
    #expect(planned.stdout.contains("Nurse Pat"), "\(planned.stdout)")
    let drifted = try TSApplyBinary.run(["drift", "--fleet", "fleet.yaml", "--watch", "room-12"], in: dir)
    #expect(drifted.status == 2, "\(drifted.stdout)\(drifted.stderr)")
    // A manifest edited, not published yet: pending for `drift --pending`, and Drift/Pending
    // are unknown, not 0, in the status.
    try "contacts:\n  - {name: Son, phone: \"+15550115\"}\n".write(to: dir.appendingPathComponent("residents/room-14.yaml"),
                                                                   atomically: true, encoding: .utf8)
    let pending = try TSApplyBinary.run(["drift", "--fleet", "fleet.yaml", "--watch", "room-14", "--pending"], in: dir)
    #expect(pending.status == 2, "\(pending.stdout)\(pending.stderr)")
    #expect(pending.stdout.hasSuffix("1 watch: 1 with pending changes.\n"), "\(pending.stdout)")
    // The text says it too: the Pending column holds that count, not `-` beside exit status 2.
    let lines = pending.stdout.split(separator: "\n").map(String.init)
    if let header = lines.first(where: { $0.contains("Pending") }), let row = lines.first(where: { $0.hasPrefix("room-14 ") }),
       let column = header.range(of: "Pending").map({ header.distance(from: header.startIndex, to: $0.lowerBound) }), row.count > column {
      #expect(row.dropFirst(column).hasPrefix("1 "), "\(pending.stdout)")
    } else {
      Issue.record("no table: \(pending.stdout)")
    }
    // Its agent's pending count is of the revision it holds: the JSON counts the manifests' own
    // change on the state the agent reported, not 0.
    let counted = try TSApplyBinary.run(["drift", "--fleet", "fleet.yaml", "--watch", "room-14", "--pending", "--json"], in: dir)
    let object = try JSONSerialization.jsonObject(with: Data(counted.stdout.utf8)) as? [String: Any]
    let watch = (object?["watches"] as? [[String: Any]])?.first { $0["name"] as? String == "room-14" }
    #expect((watch?["counts"] as? [String: Int])?["pending"] == 1, "\(counted.stdout)")
    #expect((object?["summary"] as? [String: Any])?["with_changes"] as? Int == 1, "\(counted.stdout)")
    let table = try TSApplyBinary.run(["status", "--fleet", "fleet.yaml"], in: dir).stdout
    let row = table.split(separator: "\n").first { $0.hasPrefix("room-14 ") }.map(String.init) ?? ""
    #expect(row.contains("new revision") && row.contains(" -  "), "\(table)")
  }

  /// Two agents started with the same `--agent-id` for a site take turns on the broker (each
  /// new connection takes the other's session over) forever: they say so, naming the client ID
  /// and the option, rather than only "lost the broker; reconnecting" (it looped silently).
  @Test func twoAgentsWithOneAgentIDSayWhyTheyKeepLosingTheBroker() throws {
    let (dir, broker) = try Self.fleetOnABroker()
    defer { broker.stop() }
    let first = try Self.station(broker, in: dir)
    defer { first.send(SIGTERM); _ = first.finish() }
    let second = try ListeningProcess(["agent", "--broker", "\(broker.address)", "--site", "ward-a", "--agent-id", "station",
                                       "--device", "sim:watches/room-12.json"], in: dir)
    defer { second.send(SIGTERM); _ = second.finish() }
    let said = "as it does when another client connects with the same client ID (tsapply-agent-ward-a-station): is another agent running with --agent-id station"
    let deadline = Date().addingTimeInterval(60)
    while !(first.standardError + second.standardError).contains(said), Date() < deadline { usleep(100_000) }
    #expect((first.standardError + second.standardError).contains(said), "\(first.standardError)\n---\n\(second.standardError)")
  }

  /// A broker restarted without persistence loses the desired documents: the agent's next
  /// drift check publishes its status again, and `status --fleet` does not call the watches in
  /// sync (exit 1, the fix in the note); `plan --fleet` has them to publish; publishing again
  /// brings the site back.
  @Test func aBrokerThatLostTheDesiredDocumentsIsNotInSync() throws {
    let (dir, first) = try Self.fleetOnABroker()
    var broker = first
    defer { broker.stop() }
    let agent = try ListeningProcess(["agent", "--broker", "\(broker.address)", "--site", "ward-a", "--agent-id", "station",
                                      "--drift-interval", "1s",
                                      "--device", "sim:watches/room-12.json", "--device", "sim:watches/room-14.json"], in: dir)
    defer { agent.send(SIGTERM); _ = agent.finish() }
    #expect(try Self.waitForStatus("station (online)", in: dir).contains("room-12  no status"))
    #expect(try TSApplyBinary.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--wait", "30s"], in: dir).status == 0)
    #expect(try TSApplyBinary.run(["status", "--fleet", "fleet.yaml"], in: dir).status == 0)
    broker = try broker.restart()
    let table = try Self.waitForStatus("room-14  no desired document", in: dir)
    #expect(table.contains("room-12  no desired document"), "\(table)")
    let status = try TSApplyBinary.run(["status", "--fleet", "fleet.yaml"], in: dir)
    #expect(status.status == 1, "\(status.stdout)\(status.stderr)")
    #expect(status.stdout.contains("room-12: the broker holds no desired document for the watch"), "\(status.stdout)")
    #expect(status.stdout.contains("Publish the manifests again with 'tsapply apply --fleet'"), "\(status.stdout)")
    // The closing error says what is wrong — the broker lost the documents — not that the watches failed.
    #expect(status.stderr.hasPrefix("Error: 2 of 2 watches with no desired document on the broker: room-12, room-14 (the broker lost them"),
            "\(status.stderr)")
    #expect(!status.stderr.contains("failed"), "\(status.stderr)")
    // The watches still hold the manifests: nothing pending. Once a manifest is edited, its
    // change is pending, counted on the state the agent reported (it said 0 and exited 0: the
    // agent's count is of the revision it holds, fresh-eyes finding).
    let held = try TSApplyBinary.run(["drift", "--fleet", "fleet.yaml", "--pending"], in: dir)
    #expect(held.status == 0, "\(held.stdout)\(held.stderr)")
    try "contacts:\n  - {name: Son, phone: \"+15550115\"}\n".write(to: dir.appendingPathComponent("residents/room-14.yaml"),
                                                                   atomically: true, encoding: .utf8)
    let edited = try TSApplyBinary.run(["drift", "--fleet", "fleet.yaml", "--pending"], in: dir)
    #expect(edited.status == 2, "\(edited.stdout)\(edited.stderr)")
    #expect(edited.stdout.hasSuffix("2 watches: 1 with no drift, 1 with pending changes.\n"), "\(edited.stdout)")
    // Its Pending cell is the report's count, as in `--json` (fresh-eyes fe105 #3: 0 beside exit 2).
    let line = edited.stdout.split(separator: "\n").first { $0.hasPrefix("room-14 ") }.map(String.init) ?? ""
    let cells = line.components(separatedBy: "  ").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    #expect(cells.count >= 6 && cells[1] == "no desired document" && cells[5] != "0" && cells[5] != "-", "\(line)")
    let planned = try TSApplyBinary.run(["plan", "--fleet", "fleet.yaml", "--detailed-exitcode"], in: dir)
    #expect(planned.status == 2, "\(planned.stdout)\(planned.stderr)")
    #expect(planned.stdout.hasSuffix("2 watches: 1 to publish, 1 with changes.\n"), "\(planned.stdout)")
    // The wearer adds a contact on room-12: its agent measures drift 1 and its own pending 0
    // against the revision it holds; the table's Pending is the report's count, as in `--json`
    // (fresh-eyes fe105 #3: 0 in the table, 1 in `--json`).
    _ = try TSApplyBinary.run(["device", "simulate", "contact-add", "Visitor", "+15550999", "--device", "sim:watches/room-12.json"], in: dir)
    func room12() throws -> (cells: [String], json: String) {
      let text = try TSApplyBinary.run(["drift", "--fleet", "fleet.yaml", "--pending"], in: dir).stdout
      let line = text.split(separator: "\n").first { $0.hasPrefix("room-12 ") }.map(String.init) ?? ""
      return (line.components(separatedBy: "  ").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty },
              try TSApplyBinary.run(["drift", "--fleet", "fleet.yaml", "--pending", "--json"], in: dir).stdout)
    }
    var seen = try room12()
    let deadline = Date().addingTimeInterval(30)
    while !(seen.cells.count >= 6 && seen.cells[4] == "1"), Date() < deadline {
      Thread.sleep(forTimeInterval: 0.5)
      seen = try room12()
    }
    let watches = (try JSONSerialization.jsonObject(with: Data(seen.json.utf8)) as? [String: Any])?["watches"] as? [[String: Any]]
    let counts = watches?.first { $0["name"] as? String == "room-12" }?["counts"] as? [String: Any]
    #expect(seen.cells.count >= 6 && seen.cells[1] == "no desired document" && seen.cells[4] == "1"
              && seen.cells[5] == (counts?["pending"] as? Int).map(String.init), "\(seen.cells) \(String(describing: counts))")
    // (Taken off again by the wearer: publishing would remove it, which the safety gate refuses.)
    _ = try TSApplyBinary.run(["device", "simulate", "contact-remove", "Visitor", "--device", "sim:watches/room-12.json"], in: dir)
    #expect(try TSApplyBinary.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--wait", "30s"], in: dir).status == 0)
    let again = try TSApplyBinary.run(["status", "--fleet", "fleet.yaml"], in: dir)
    #expect(again.status == 0 && again.stdout.contains("room-12  in sync"), "\(again.stdout)\(again.stderr)")
    // The broker lost the watches' states too: the agent, finding no session kept, publishes them
    // again at its next read, unchanged as they are.
    let replanned = try Self.waitForPlan("by agent station", ["--detailed-exitcode"], in: dir)
    #expect(replanned.stdout.contains("as their agents last read them, the oldest at "), "\(replanned.stdout)")
    #expect(replanned.status == 0 && replanned.stdout.hasSuffix("2 watches: 2 with no changes.\n"), "\(replanned.stdout)\(replanned.stderr)")
  }

  /// A watch whose state file is moved away while its agent runs is out of reach, not gone for
  /// good: the revision published meanwhile is `retrying` (never `failed`, never with advice to
  /// create a blank watch where the wearer's was), and it is applied, without publishing it
  /// again, once the file is back.
  @Test func aWatchMovedAwayIsRetriedAndAppliedOnceItIsBack() throws {
    let (dir, broker) = try Self.fleetOnABroker()
    defer { broker.stop() }
    let agent = try Self.station(broker, in: dir)
    defer { agent.send(SIGTERM); _ = agent.finish() }
    let file = dir.appendingPathComponent("watches/room-12.json").path
    #expect(rename(file, file + ".away") == 0)
    let published = try TSApplyBinary.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--watch", "room-12", "--wait", "3s"], in: dir)
    #expect(published.status == 1, "\(published.stdout)\(published.stderr)")
    #expect(published.stdout.contains("retrying"), "\(published.stdout)")
    let away = try Self.waitForStatus("room-12  retrying", in: dir)
    #expect(away.contains("room-12: agent station cannot read the watch since ") && away.contains(": attempt "), "\(away)")
    #expect(away.contains("is out of reach: its state file was there when tsapply opened the watch and is gone now"), "\(away)")
    #expect(!away.contains("create one with") && !away.contains("device init"), "\(away)")
    // Out of reach while its agent retries: counted so, as without a revision being retried
    // (fresh-eyes fe95 #4: exit 0 beside "is out of reach").
    let status = try TSApplyBinary.run(["status", "--fleet", "fleet.yaml", "--watch", "room-12"], in: dir)
    #expect(status.status == 1, "\(status.stdout)\(status.stderr)")
    #expect(status.stdout.contains("room-12  retrying"), "\(status.stdout)")
    #expect(status.stderr.contains("1 of 1 watch out of reach: room-12"), "\(status.stderr)")
    let site = try TSApplyBinary.run(["status", "--fleet", "fleet.yaml"], in: dir)
    #expect(site.status == 1 && site.stderr.contains("out of reach: room-12"), "\(site.stdout)\(site.stderr)")
    #expect(rename(file + ".away", file) == 0)
    // The agent's next try (5 s, then 10 s after the first) applies it.
    var table = ""
    for _ in 0..<3 where !table.contains("room-12  in sync") { table = try Self.waitForStatus("room-12  in sync", in: dir) }
    #expect(table.contains("room-12  in sync"), "\(table)")
    let held = try TSApplyBinary.run(["drift", "--fleet", "fleet.yaml", "--watch", "room-12"], in: dir)
    #expect(held.status == 0, "\(held.stdout)\(held.stderr)")
  }

  /// A broker restored from a save older than the last publication hands the agents back older
  /// desired documents: the watches are `invalid` (nothing rolled back), and `drift --fleet`
  /// still shows each watch's drift as its agent measured it against the revision it applied,
  /// labelled `invalid` as `status --fleet` says, with SOS at risk, and exits 2 for it (fresh-eyes
  /// fe95 #1: "failed" for every watch, no drift, no SOS at risk, exit 1).
  @Test func driftOverAnOlderDesiredDocumentShowsWhatTheAgentsMeasured() throws {
    let dir = try Self.fleet(transport: "mqtt://127.0.0.1:1")
    var broker = try MosquittoBroker.start(in: dir.path) { port, directory in
      MosquittoBroker.openConfiguration(port: port, directory: directory)
        .replacingOccurrences(of: "persistence false", with: "persistence true\npersistence_location \(directory)/\nuser \(NSUserName())")
    }
    defer { broker.stop() }
    let text = try String(contentsOf: dir.appendingPathComponent("fleet.yaml"), encoding: .utf8)
      .replacingOccurrences(of: "mqtt://127.0.0.1:1", with: "\(broker.address)")
    try text.write(to: dir.appendingPathComponent("fleet.yaml"), atomically: true, encoding: .utf8)
    let agent = try ListeningProcess(["agent", "--broker", "\(broker.address)", "--site", "ward-a", "--agent-id", "station",
                                      "--drift-interval", "1s",
                                      "--device", "sim:watches/room-12.json", "--device", "sim:watches/room-14.json"], in: dir)
    defer { agent.send(SIGTERM); _ = agent.finish() }
    #expect(try Self.waitForStatus("station (online)", in: dir).contains("room-12  no status"))
    let emergency = "emergency:\n  sos: true\n  contacts:\n    - {name: Ward desk, phone: \"+15550150\"}\n"
    try ("reminders:\n  custom:\n    - {name: Lunch, at: [\"12:00\"]}\n" + emergency)
      .write(to: dir.appendingPathComponent("wards/ward-a.yaml"), atomically: true, encoding: .utf8)
    #expect(try TSApplyBinary.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--wait", "30s"], in: dir).status == 0)
    // The broker saves as it stops; that save is kept.
    let file = dir.appendingPathComponent("mosquitto.db").path, saved = dir.appendingPathComponent("saved.db").path
    broker.stop()
    try FileManager.default.copyItem(atPath: file, toPath: saved)
    broker = try broker.restart()
    try ("reminders:\n  custom:\n    - {name: Lunch, at: [\"12:30\"]}\n" + emergency)
      .write(to: dir.appendingPathComponent("wards/ward-a.yaml"), atomically: true, encoding: .utf8)
    #expect(try TSApplyBinary.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--wait", "30s"], in: dir).status == 0)
    // It crashes and comes back from the older save.
    broker.stop()
    try FileManager.default.removeItem(atPath: file)
    try FileManager.default.copyItem(atPath: saved, toPath: file)
    broker = try broker.restart()
    _ = try Self.waitForStatus("room-14  invalid", in: dir)
    #expect(try TSApplyBinary.run(["device", "simulate", "emergency-clear", "--device", "sim:watches/room-12.json"], in: dir).status == 0)
    let table = try Self.waitForStatus("SOS at risk", in: dir)
    #expect(table.contains("room-12  invalid"), "\(table)")
    let drift = try TSApplyBinary.run(["drift", "--fleet", "fleet.yaml"], in: dir)
    #expect(drift.status == 2, "\(drift.stdout)\(drift.stderr)")
    #expect(drift.stdout.contains("room-12  invalid") && drift.stdout.contains("room-12: SOS at risk"), "\(drift.stdout)")
    #expect(drift.stdout.hasSuffix("2 watches: 1 invalid with drift, 1 invalid.\n"), "\(drift.stdout)")
    #expect(!drift.stdout.contains("failed") && !drift.stderr.contains("failed"), "\(drift.stdout)\(drift.stderr)")
    let summary = try TSApplyBinary.run(["drift", "--fleet", "fleet.yaml", "--summary"], in: dir)
    #expect(summary.status == 2, "\(summary.stdout)\(summary.stderr)")
    #expect(summary.stdout.contains("SOS at risk") && summary.stdout.contains("emergency"), "\(summary.stdout)")
    let json = try TSApplyBinary.run(["drift", "--fleet", "fleet.yaml", "--json"], in: dir)
    let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
    let room12 = (object?["watches"] as? [[String: Any]])?.first { $0["name"] as? String == "room-12" }
    #expect(room12?["result"] as? String == "invalid", "\(json.stdout)")
    #expect((room12?["counts"] as? [String: Int])?["drift"] == 1 && room12?["sos_at_risk"] as? Bool == true, "\(json.stdout)")
    #expect(room12?["stale_desired"] as? Bool == true, "\(json.stdout)")
  }

  /// An agent started while its broker is down (started after it, restarting) says so and keeps
  /// trying; once the broker is up it serves its watches (fresh-eyes finding: it gave up after
  /// 30 s, exit 1, and served nothing until something restarted it).
  @Test func anAgentStartedBeforeItsBrokerServesOnceTheBrokerIsUp() throws {
    let (dir, first) = try Self.fleetOnABroker()
    first.stop()
    let agent = try ListeningProcess(["agent", "--broker", "\(first.address)", "--site", "ward-a", "--agent-id", "station",
                                      "--device", "sim:watches/room-12.json", "--device", "sim:watches/room-14.json"], in: dir)
    defer { agent.send(SIGTERM); _ = agent.finish() }
    for _ in 0..<400 where !agent.standardError.contains("cannot reach the broker") { usleep(50_000) }
    #expect(agent.standardError.contains("cannot reach the broker at \(first.address) yet"), "\(agent.standardError)")
    #expect(agent.standardError.contains("the agent keeps trying"), "\(agent.standardError)")
    #expect(!agent.standardError.contains("serving room-12"), "\(agent.standardError)")
    let broker = try first.restart()
    defer { broker.stop() }
    for _ in 0..<600 where !agent.standardError.contains("serving room-12") { usleep(50_000) }
    #expect(agent.standardError.contains("agent station serving room-12, room-14 on site ward-a"), "\(agent.standardError)")
    let published = try TSApplyBinary.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--wait", "60s"], in: dir)
    #expect(published.status == 0, "\(published.stdout)\(published.stderr)")
    #expect(try Self.waitForStatus("room-14  in sync", in: dir).contains("room-12  in sync"))
  }

  /// Above 20 watches `apply --fleet` prints the grouped review: a watch whose agent undid what
  /// the wearer changed is a group of its own with the agent's words, as the line per watch of a
  /// smaller fleet says them (fresh-eyes finding: "22 watches: applied (+0 ~1 -0)", no word of
  /// the contacts the agents removed).
  @Test func theGroupedReviewSaysWhatTheAgentsUndidOnTheWatches() throws {
    let dir = try TSApplyBinary.temporaryDirectory().resolvingSymlinksInPath()
    let broker = try MosquittoBroker.start(in: dir.path)
    defer { broker.stop() }
    let rooms = (1...22).map { String(format: "room-%02d", $0) }
    try FileManager.default.createDirectory(at: dir.appendingPathComponent("wards"), withIntermediateDirectories: true)
    func ward(_ time: String) throws {
      try "reminders:\n  custom:\n    - {name: Lunch, at: [\"\(time)\"]}\ncontacts:\n  - {name: Desk, phone: \"+15550100\"}\n"
        .write(to: dir.appendingPathComponent("wards/ward-a.yaml"), atomically: true, encoding: .utf8)
    }
    try ward("12:00")
    try ("defaults: wards/ward-a.yaml\ntransport: \(broker.address)\nsite: ward-a\nwatches:\n"
         + rooms.map { "  \($0): {device: \"sim:watches/\($0).json\"}\n" }.joined())
      .write(to: dir.appendingPathComponent("fleet.yaml"), atomically: true, encoding: .utf8)
    for room in rooms {
      #expect(try TSApplyBinary.run(["device", "init", "--device", "sim:watches/\(room).json"], in: dir).status == 0)
    }
    let agent = try ListeningProcess(["agent", "--broker", "\(broker.address)", "--site", "ward-a", "--agent-id", "station"]
                                     + rooms.flatMap { ["--device", "sim:watches/\($0).json"] }, in: dir)
    defer { agent.send(SIGTERM); _ = agent.finish() }
    for _ in 0..<600 where !agent.standardError.contains("serving room-01") { usleep(50_000) }
    let first = try TSApplyBinary.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--wait", "120s"], in: dir)
    #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
    for room in ["room-05", "room-06"] {
      #expect(try TSApplyBinary.run(["device", "simulate", "contact-add", "Visitor", "+15550199", "--device", "sim:watches/\(room).json"],
                                    in: dir).status == 0)
    }
    try ward("12:30")
    let second = try TSApplyBinary.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--allow-destroy", "--wait", "120s"], in: dir)
    #expect(second.status == 0, "\(second.stdout)\(second.stderr)")
    #expect(second.stdout.contains("=== 20 watches: applied"), "\(second.stdout)")
    #expect(second.stdout.contains("=== 2 watches: applied") && second.stdout.contains("room-05, room-06"), "\(second.stdout)")
    #expect(second.stdout.contains("Warning: undid what was changed on the watch since the last apply: contacts (1 added)"), "\(second.stdout)")
  }

  /// A drift check that could not read the watch once (a dropped link) is tried again with the
  /// agent's backoff, from 5 s, not only at the next periodic check: the watch is `unreachable`
  /// seconds, not the drift interval (fresh-eyes finding: 5 minutes, "10 of 40 watches failed").
  @Test func aWatchOneDriftCheckCouldNotReadIsReadAgainSoon() throws {
    let (dir, broker) = try Self.fleetOnABroker()
    defer { broker.stop() }
    let first = try Self.station(broker, in: dir)
    #expect(try TSApplyBinary.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--wait", "60s"], in: dir).status == 0)
    first.send(SIGTERM)
    _ = first.finish()
    // Started again: its first drift check of each watch reads it, and that read fails once.
    let agent = try ListeningProcess(["agent", "--broker", "\(broker.address)", "--site", "ward-a", "--agent-id", "station",
                                      "--device", "sim:watches/room-12.json", "--device", "sim:watches/room-14.json",
                                      "--drift-interval", "1h"], in: dir, environment: ["TSAPPLY_SIM_FAULT": "fail@5"])
    defer { agent.send(SIGTERM); _ = agent.finish() }
    for _ in 0..<600 where !agent.standardError.contains("cannot read the watch for drift") { usleep(50_000) }
    #expect(agent.standardError.contains("room-12: cannot read the watch for drift"), "\(agent.standardError)")
    // Each watch is read again on its own backoff (5 s with jitter): waited for one by one (the
    // test waited for room-12 alone, and failed when room-14's reread came a moment later).
    var table = try Self.waitForStatus("room-12  in sync", in: dir)
    if !table.contains("room-14  in sync") { table = try Self.waitForStatus("room-14  in sync", in: dir) }
    #expect(table.contains("room-12  in sync") && table.contains("room-14  in sync"), "\(table)\n\(agent.standardError)")
  }

  /// A watch reset while its agent listens (`device init --force`: a factory reset) is read at
  /// once: the reset's gap in the watch's events says it may hold anything now (fresh-eyes
  /// finding: "in sync" until the agent's next drift check, 5 minutes by default).
  @Test func aWatchResetWhileItsAgentListensIsReadAtOnce() throws {
    let (dir, broker) = try Self.fleetOnABroker()
    defer { broker.stop() }
    let agent = try ListeningProcess(["agent", "--broker", "\(broker.address)", "--site", "ward-a", "--agent-id", "station",
                                      "--device", "sim:watches/room-12.json", "--device", "sim:watches/room-14.json",
                                      "--drift-interval", "1h"], in: dir)
    defer { agent.send(SIGTERM); _ = agent.finish() }
    #expect(try Self.waitForStatus("station (online)", in: dir).contains("room-12  no status"))
    #expect(try TSApplyBinary.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--wait", "60s"], in: dir).status == 0)
    _ = try Self.waitForStatus("room-12  in sync", in: dir)
    #expect(try TSApplyBinary.run(["device", "init", "--force", "--device", "sim:watches/room-12.json"], in: dir).status == 0)
    let table = try Self.waitForStatus("room-12  drift", in: dir)
    #expect(table.contains("room-12  drift") && table.contains("room-14  in sync"), "\(table)\n\(agent.standardError)")
    #expect(agent.standardError.contains("room-12: the watch's events after"), "\(agent.standardError)")
  }

  @Test func aSecondSignalEndsAnAgentThatIsWaitingForAnApplyToStop() throws {
    let (dir, broker) = try Self.fleetOnABroker()
    defer { broker.stop() }
    // Three seconds per device call: the apply is in progress for a long time.
    let agent = try ListeningProcess(["agent", "--broker", "\(broker.address)", "--site", "ward-a", "--agent-id", "station",
                                      "--device", "sim:watches/room-12.json"], in: dir, environment: ["TSAPPLY_SIM_LATENCY": "3000,0"])
    for _ in 0..<400 where !agent.standardError.contains("serving room-12") { usleep(50_000) }
    let published = try TSApplyBinary.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--watch", "room-12", "--wait", "1s"], in: dir)
    #expect(published.stdout.contains("room-12: pending (revision "), "\(published.stdout)")
    agent.send(SIGTERM)
    for _ in 0..<400 where !agent.standardError.contains("going offline") { usleep(50_000) }
    #expect(agent.standardError.contains("SIGTERM received; going offline (an apply in progress stops after its current step; send it again to quit at once)"))
    usleep(200_000)  // one request delivered twice within StopSignals.repeatInterval counts once
    let start = Date()
    agent.send(SIGTERM)
    let (status, _, _) = agent.finish()
    #expect(status == 128 + SIGTERM, "ended by the second signal")
    #expect(Date().timeIntervalSince(start) < 2.5, "the second signal did not wait for the device call")
  }

  @Test func theExampleBrokerConfigurationAuthenticatesEncryptsAndConfinesAgentsToTheirSite() throws {
    let dir = try Self.fleet(transport: "mqtts://127.0.0.1:1")
    let brokerDir = dir.appendingPathComponent("broker")
    try FileManager.default.createDirectory(at: brokerDir, withIntermediateDirectories: true)
    let example = TSApplyBinary.packageRoot.appendingPathComponent("examples/fleet/broker")
    for file in ["mosquitto.conf", "acl", "add-user.sh", "make-certs.sh"] {
      try FileManager.default.copyItem(at: example.appendingPathComponent(file), to: brokerDir.appendingPathComponent(file))
    }
    let shell = URL(fileURLWithPath: "/bin/bash")
    #expect(try TSApplyBinary.runProgram(shell, ["make-certs.sh", brokerDir.path, "127.0.0.1"], in: brokerDir).status == 0)
    let agentPassword = try TSApplyBinary.runProgram(shell, ["add-user.sh", brokerDir.path, "ward-a", "ward-a-station"], in: brokerDir)
    #expect(agentPassword.status == 0, "\(agentPassword.stderr)")
    #expect(try TSApplyBinary.runProgram(shell, ["add-user.sh", brokerDir.path, "ward-b", "ward-b-station", "b-secret"], in: brokerDir).status == 0)
    #expect(try TSApplyBinary.runProgram(URL(fileURLWithPath: "/usr/bin/mosquitto_passwd"),
                                         ["-b", brokerDir.appendingPathComponent("passwords").path, "tsapply-controller", "c-secret"]).status == 0)
    #expect(try TSApplyBinary.runProgram(URL(fileURLWithPath: "/usr/bin/mosquitto_passwd"),
                                         ["-b", brokerDir.appendingPathComponent("passwords").path, "tsapply-monitor", "m-secret"]).status == 0)
    try agentPassword.stdout.write(to: dir.appendingPathComponent("station.password"), atomically: true, encoding: .utf8)
    try "b-secret\n".write(to: dir.appendingPathComponent("b.password"), atomically: true, encoding: .utf8)
    try "wrong\n".write(to: dir.appendingPathComponent("wrong.password"), atomically: true, encoding: .utf8)
    let configuration = try String(contentsOf: brokerDir.appendingPathComponent("mosquitto.conf"), encoding: .utf8)
    var broker = try MosquittoBroker.start(in: brokerDir.path) { port, _ in
      configuration.replacingOccurrences(of: "/etc/mosquitto/tsapply/", with: brokerDir.path + "/")
        .replacingOccurrences(of: "persistence_location /var/lib/mosquitto/", with: "persistence_location \(brokerDir.path)/")
        .replacingOccurrences(of: "\nlistener 8883\n", with: "\nlistener \(port) 127.0.0.1\n")
    }
    defer { broker.stop() }
    let url = "mqtts://127.0.0.1:\(broker.port)"
    let fleet = try String(contentsOf: dir.appendingPathComponent("fleet.yaml"), encoding: .utf8)
      .replacingOccurrences(of: "mqtts://127.0.0.1:1", with: url)
    try fleet.write(to: dir.appendingPathComponent("fleet.yaml"), atomically: true, encoding: .utf8)
    let ca = brokerDir.appendingPathComponent("ca.crt").path
    // The controller's password from a file named by the environment (a service's unit), relative to where it runs.
    try "c-secret\n".write(to: dir.appendingPathComponent("controller.password"), atomically: true, encoding: .utf8)
    let controller = ["TSAPPLY_MQTT_USERNAME": "tsapply-controller", "TSAPPLY_MQTT_PASSWORD_FILE": "controller.password", "TSAPPLY_MQTT_CA_FILE": ca]

    // A wrong password is refused.
    let refused = try TSApplyBinary.run(["agent", "--broker", url, "--site", "ward-a", "--username", "ward-a-station",
                                         "--password-file", "wrong.password", "--ca-file", ca, "--device", "sim:watches/room-12.json"], in: dir)
    #expect(refused.status == 1)
    #expect(refused.stderr.contains("the broker refused the connection"), "\(refused.stderr)")
    // Without the CA the broker's certificate is not trusted.
    let untrusted = try TSApplyBinary.run(["status", "--fleet", "fleet.yaml"], in: dir,
                                          environment: ["TSAPPLY_MQTT_USERNAME": "tsapply-controller", "TSAPPLY_MQTT_PASSWORD": "c-secret",
                                                        "TSAPPLY_MQTT_CA_FILE": brokerDir.appendingPathComponent("server.crt").path])
    #expect(untrusted.status == 1)
    #expect(untrusted.stderr.contains("TLS failed") && untrusted.stderr.contains("certificate verify failed"), "\(untrusted.stderr)")

    // Ward B's agent, pointed at ward A's site, gets nothing of it and cannot speak for it.
    let intruder = try TSApplyBinary.start(["agent", "--broker", url, "--site", "ward-a", "--username", "ward-b-station",
                                            "--password-file", "b.password", "--ca-file", ca, "--device", "sim:watches/room-14.json"], in: dir)
    let station = try ListeningProcess(["agent", "--broker", url, "--site", "ward-a", "--username", "ward-a-station",
                                        "--password-file", "station.password", "--ca-file", ca, "--device", "sim:watches/room-12.json"], in: dir)
    #expect(try Self.waitForStatus("ward-a-station (online)", in: dir, environment: controller).contains("ward-a-station (online)"))
    let applied = try TSApplyBinary.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--wait", "5s"], in: dir, environment: controller)
    #expect(applied.status == 0, "\(applied.stdout)\(applied.stderr)")
    #expect(applied.stdout.contains("room-12: applied (revision "), "\(applied.stdout)")
    #expect(applied.stdout.contains("room-14: pending (revision "), "\(applied.stdout)")
    let room14 = try TSApplyBinary.run(["device", "show", "--device", "sim:watches/room-14.json"], in: dir)
    #expect(!room14.stdout.contains("Son"), "an agent outside its site applied a document")
    // The agent may write its watch's state, and the controller read it (the ACL's state topic).
    let planned = try Self.waitForPlan("as agent ward-a-station read it at", in: dir, environment: controller)
    #expect(planned.stdout.contains("as agent ward-a-station read it at"), "\(planned.stdout)\(planned.stderr)")
    // A monitor gets the statuses and the agent's list of SOS presses (the ACL's sos topic:
    // agent writes, monitor reads), never the watches' states (they hold contacts).
    _ = try MonitorCommandTests.simulate(["sos"], in: dir, device: "sim:watches/room-12.json")
    let received = Collector<String>()
    let monitor = try MQTTClient(address: MQTTAddress(parsing: url),
                                 configuration: .init(clientID: "monitor-test",
                                                      subscriptions: ["tsapply/v1/ward-a/+/status", "tsapply/v1/ward-a/+/state", "tsapply/v1/ward-a/+/sos"],
                                                      username: "tsapply-monitor", password: "m-secret", tls: .init(caFile: ca)),
                                 onMessage: { received.append($0.topic) })
    // Not `await monitor.ready`: an await needs the concurrency pool, which the end-to-end
    // tests' blocking process runs can hold; the retained status arriving says it is connected
    // and subscribed (messages come on the client's own thread).
    monitor.connect()
    let expected = ["tsapply/v1/ward-a/room-12/sos", "tsapply/v1/ward-a/room-12/status"]
    for _ in 0..<3000 where !Set(expected).isSubset(of: received.values) { usleep(20_000) }
    usleep(300_000)
    #expect(Set(received.values) == Set(expected) && !received.values.contains { $0.hasSuffix("/state") }, "\(received.values)")
    Task.detached { await monitor.close() }
    // The broker crashes (SIGKILL) and is back 2 s later: the agent reconnects within a few
    // seconds (fresh-eyes finding: about 30 s over TLS, the broker's dropped TLS session taken
    // for a TLS failure, which waits the longest).
    let connections = station.standardError.components(separatedBy: "connected to ").count
    kill(broker.processIdentifier, SIGKILL)
    usleep(2_000_000)
    broker = try broker.restart()
    let restarted = Date()
    for _ in 0..<600 where station.standardError.components(separatedBy: "connected to ").count == connections { usleep(50_000) }
    let reconnected = Date().timeIntervalSince(restarted)
    #expect(station.standardError.components(separatedBy: "connected to ").count > connections && reconnected < 10,
            "reconnected after \(reconnected) s: \(station.standardError)")
    intruder.send(SIGTERM)
    station.send(SIGTERM)
    #expect(station.finish().0 == 0)
    _ = intruder.wait()
  }

  /// Ctrl-C (or SIGTERM) while `apply --fleet` waits for the agents: the wait ends, not the
  /// process — what each watch reported so far is printed, the rest pending "before the run
  /// was interrupted", exit 1 — and what was published stays published: the agent applies it
  /// (fresh-eyes finding: exit 130, not a word, while the agents went on to apply it).
  @Test(arguments: [SIGINT, SIGTERM])
  func aSignalWhileWaitingForTheAgentsEndsTheWaitAndSaysWhatIsPublished(_ signal: Int32) throws {
    let (dir, broker) = try Self.fleetOnABroker()
    defer { broker.stop() }
    // Every call of the agent's watches takes 1 s: each apply takes seconds.
    let agent = try ListeningProcess(["agent", "--broker", "\(broker.address)", "--site", "ward-a", "--agent-id", "station",
                                      "--device", "sim:watches/room-12.json", "--device", "sim:watches/room-14.json"], in: dir,
                                     environment: ["TSAPPLY_SIM_LATENCY": "1000,0"])
    defer { agent.send(SIGKILL); _ = agent.finish() }
    #expect(try Self.waitForStatus("station (online)", in: dir).contains("room-12  no status"))
    let running = try TSApplyBinary.start(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--wait", "120s"], in: dir)
    // Published: the agent is applying.
    #expect(try Self.waitForStatus("applying", in: dir).contains("applying"))
    running.send(signal)
    // It must end by itself within seconds; a watchdog kills it (a status other than 1) if not.
    let ended = Locked(false)
    DispatchQueue.global().asyncAfter(deadline: .now() + 30) { if !ended.value { running.send(SIGKILL) } }
    let result = running.wait()
    ended.set(true)
    #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
    #expect(result.stderr.contains("received. No longer waiting for the agents: what is published stays published and they apply it"),
            "\(result.stderr)")
    #expect(result.stdout.contains("pending (revision ") && result.stdout.contains("before the run was interrupted; it applies revision "),
            "\(result.stdout)")
    #expect(result.stderr.contains("interrupted while waiting for the agents: 2 of 2 watches had not reported on the revision; it stays published"),
            "\(result.stderr)")
    // The agent goes on and applies it (each call takes a second: up to a minute).
    var table = ""
    for _ in 0..<6 where !(table.contains("room-12  in sync") && table.contains("room-14  in sync")) {
      table = try Self.waitForStatus("room-14  in sync", in: dir)
    }
    #expect(table.contains("room-12  in sync") && table.contains("room-14  in sync"), "the agent did not apply what was published: \(table)")
  }
}
