import Foundation
import Testing
import TSDevice
import TSEngine
@testable import TSFleet
import TSModel
import TSMonitor
import TSMQTT

/// `tsapply monitor --fleet`: a monitor per watch reading its merged manifests, and the events of
/// a fleet's agents followed on the broker, SOS presses passed on through the outbox.
@Suite struct FleetMonitorTests {
  @Test func aWatchsMonitorHealsDriftWithItsMergedManifestsReadAgainAtEveryCheck() async throws {
    let space = try FleetSpace()
    try space.write("wards/ward-a.yaml", "contacts:\n  - {name: Ward desk, phone: \"+15550100\"}\n  - {name: Night nurse, phone: \"+15550101\"}\n  - {name: Kitchen, phone: \"+15550102\"}\n")
    try space.write("fleet.yaml", "defaults: wards/ward-a.yaml\nwatches:\n  room-1: {device: \"sim:watches/room-1.json\"}\n")
    try space.watch("room-1")
    let loaded = try space.load()
    _ = await FleetRunner(engine: space.engine).run(loaded.members) { _, document, watch throws(EngineError) in
      try await watch.apply(document, options: ApplyOptions(approval: .automatic(allowDestroy: false), command: "test"))
    }
    let device = try SimulatedDevice(path: space.directory + "/watches/room-1.json")
    try device.simulateContactAdd(Contact(name: "Stranger", phoneNum: "+15550199"))
    let events = Inbox<MonitorEvent>()
    var template = MonitorSettings(manifestPath: "", manifestName: "", reconcile: true)
    template.commandLine = "tsapply monitor --reconcile --fleet fleet.yaml"
    let monitors = FleetMonitor.monitors(for: loaded.members, fleetPath: space.directory + "/fleet.yaml", fleetName: "fleet.yaml",
                                         engine: space.engine, template: template, notifiers: [], emit: { events.add($0) }, notice: { _ in })
    #expect(try await monitors[0].checkOnce())
    // Healed, then read once more: the drift's end is said by the same check (`resolved`).
    #expect(events.items.map(\.kind) == [.drift, .applied, .resolved])
    // Events name the watch as the fleet does; its device is beside it.
    #expect(events.items.map(\.watch) == ["room-1", "room-1", "room-1"])
    let identity = try await space.engine.open("sim:watches/room-1.json").identity
    #expect(events.items.map { $0.fields["device"] } == [.string(identity), .string(identity), .string(identity)])
    #expect(try await space.state("room-1").contacts.map(\.name) == ["Ward desk", "Night nurse", "Kitchen"])
    // The defaults are read again: a new ward contact is pending on the next check, not drift.
    try space.write("wards/ward-a.yaml", "contacts:\n  - {name: Ward desk, phone: \"+15550100\"}\n")
    #expect(try await monitors[0].checkOnce() == false)
    // Given a manifest of its own since, with an error in it: the error is the resident's file's,
    // and messages name that file, not the ward's (fresh-eyes finding: "cannot use wards/ward-a.yaml:
    // residents/room-1.yaml:2:…" sent staff to the file every resident shares).
    try space.write("residents/room-1.yaml", "contacts:\n  - {name: Son, phone: \"+1555OO115\"}\n")
    try space.write("fleet.yaml", "defaults: wards/ward-a.yaml\nwatches:\n  room-1: {device: \"sim:watches/room-1.json\", manifest: residents/room-1.yaml}\n")
    try device.simulateContactAdd(Contact(name: "Visitor", phoneNum: "+15550198"))
    await #expect(throws: MonitorError.self) { try await monitors[0].checkOnce() }
    let problem = try #require(events.items.last { $0.kind == .error })
    #expect(problem.message.hasPrefix("cannot use residents/room-1.yaml: residents/room-1.yaml:2:"), "\(problem.message)")
    let drift = try #require(events.items.last { $0.kind == .drift })
    #expect(drift.message.hasSuffix("not healed: residents/room-1.yaml cannot be used, so nothing is applied until it is fixed"), "\(drift.message)")
    // Fixed: the merged manifests are named, the resident's first.
    try space.write("residents/room-1.yaml", "contacts:\n  - {name: Son, phone: \"+15550115\"}\n")
    _ = try? await monitors[0].checkOnce()
    #expect(monitors[0].manifestName == "residents/room-1.yaml over wards/ward-a.yaml")
  }

  /// The watches a fleet's monitor has monitored are kept for a site of thousands: a press left
  /// in the outbox of one of 6,000 watches, removed from the fleet file, is still found to be
  /// delivered (the record of 6,000 watches is about 350 KB; it read as empty over 256 KiB).
  @Test func aPressLeftByAWatchRemovedFromAFleetOfThousandsIsStillFound() throws {
    let space = try FleetSpace()
    let names = (0..<6_000).map { String(format: "room-%04d", $0) }
    try space.write("ward.yaml", "contacts: []\n")
    try space.write("fleet.yaml", "defaults: ward.yaml\nwatches:\n" + names.map { "  \($0): {device: \"sim:watches/\($0).json\"}\n" }.joined())
    let members = try space.load().members
    let monitored = MonitoredWatches(path: space.directory + "/monitors/monitored-watches.json")
    try FileManager.default.createDirectory(atPath: space.directory + "/monitors", withIntermediateDirectories: true)
    monitored.add(members)
    let gone = try #require(members.first { $0.name == "room-4321" })
    let home = WatchHome(identity: space.engine.canonicalSpec(gone.device), root: space.engine.stateRoot)
    try Outbox(directory: home.outboxDirectory).put(Outbox.Entry(id: "sos-1", body: "{}"))
    let left = members.filter { $0.name != gone.name }
    #expect(monitored.waiting(members: left, engine: space.engine) == [MonitoredWatches.Watch(name: "room-4321", device: gone.device)])
    // Kept for the next start until delivered.
    #expect(monitored.waiting(members: left, engine: space.engine).map(\.name) == ["room-4321"])
  }

  /// A fleet's folder, a Mosquitto on 127.0.0.1 (the caller stops it), in-memory watches and an
  /// engine over them with its records in the folder.
  static func site(configuration: (Int, String) -> String = MosquittoBroker.openConfiguration) throws
    -> (FleetSpace, MosquittoBroker, MemoryScheme, Engine) {
    let space = try FleetSpace()
    let broker = try MosquittoBroker.start(in: space.directory, configuration: configuration)
    let scheme = MemoryScheme()
    let engine = Engine(registry: DeviceRegistry(schemes: [scheme], defaultSpec: "memory:x"),
                        environment: ["TSAPPLY_STATE_DIR": space.directory + "/state"], currentDirectory: space.directory)
    return (space, broker, scheme, engine)
  }

  /// Records what it is asked to deliver.
  final class Recorder: Notifier, @unchecked Sendable {
    let key = "recorder"
    let name = "recorder"
    let delivered = Inbox<String>()
    func deliver(id: String, body: String, attempt: Int) async -> String? {
      delivered.add(body)
      return nil
    }
  }

  /// Over MQTT the page compares each agent's status with what the watch's manifests give now:
  /// manifests edited and not published are `new revision` (as `status --fleet` says), also
  /// when they change after the status arrived, and `in sync` again once the agent reports them.
  @Test func thePageOverMQTTShowsANewRevisionWhenTheManifestsChangeUnpublished() async throws {
    let space = try FleetSpace()
    let broker = try MosquittoBroker.start(in: space.directory)
    defer { broker.stop() }
    let settings = BrokerSettings(address: broker.address)
    let board = StatusBoard(members: [StatusBoard.Member(name: "r1", device: "bridge:ward-a/room-1")], offlineThreshold: .seconds(3600))
    let manifests = Locked<[String]?>(["aaaa", "aaab"])
    let follower = try FleetMonitor.Follower(site: "ward-a", settings: settings, outboxDirectory: space.directory + "/outbox", eventsDirectory: space.directory + "/monitor-events",
                                             notifiers: [], delivery: Backoff.Policy(initial: .milliseconds(50), maximum: .seconds(1)),
                                             emit: { _ in }, notice: { _ in }, observers: [board], names: ["room-1": "r1"],
                                             revisions: { _ in
                                               manifests.value.map { .success($0) } ?? .failure(FleetInputProblem(
                                                 diagnostics: [.error(at: nil, field: "contacts[0].phone", "\"abc\" is not a phone number")],
                                                 subject: "residents/room-1.yaml"))
                                             }, recheck: .milliseconds(100), fleetFile: "fleet.yaml")
    try await follower.start(within: .seconds(120))
    defer { Task { await follower.stop(grace: .zero) } }
    let publisher = try MQTTClient(address: broker.address, configuration: .init(clientID: "agent-side"), onMessage: { _ in })
    publisher.connect()
    try await publisher.ready(within: .seconds(120))
    func status(_ revision: String, drift: Int = 0) -> [UInt8] {
      Array(#"{"agent":"station","applied_revision":"\#(revision)","device":"memory:room-1","drift":\#(drift),"format_version":"1","pending":0,"result":"applied","revision":"\#(revision)","watch":"room-1"}"#.utf8)
    }
    func becomes(_ expected: String) async -> String? {
      let deadline = Date().addingTimeInterval(30)
      while Date() < deadline, board.snapshot().rows.first?.state != expected { try? await Task.sleep(for: .milliseconds(50)) }
      return board.snapshot().rows.first?.state
    }
    // No agent has published a status for it yet: not "checking" forever (fresh-eyes finding:
    // a watch no agent served looked healthy on the page, its SOS presses heard by no one).
    #expect(await becomes("no status") == "no status")
    #expect(board.snapshot().rows.first?.reasons.first?.contains("No agent has announced this watch") == true,
            "\(board.snapshot().rows.first?.reasons ?? [])")
    // An agent announces it, with nothing published to it yet: still no status, but its presses
    // are heard (fresh-eyes finding: the page said they reached no one).
    let announced = AgentState(agent: "station", online: true, watches: ["room-1"])
    try await publisher.publish(FleetTopics.agent(site: "ward-a", agent: "station"), payload: announced.encoded(), qos: 1, retain: true)
    let deadline = Date().addingTimeInterval(30)
    while Date() < deadline, board.snapshot().rows.first?.reasons.first?.hasPrefix("Agent station serves this watch") != true {
      try await Task.sleep(for: .milliseconds(50))
    }
    let served = board.snapshot().rows.first?.reasons.first ?? ""
    #expect(served.hasPrefix("Agent station serves this watch but has reported no status for it") && !served.contains("reach no one"), "\(served)")
    // (what the agent applied, what the manifests give, the drift it counted) → the page's state.
    let table: [(applied: String, current: [String], drift: Int, state: String)] = [
      ("aaaa", ["aaaa", "aaab"], 0, "in sync"),
      ("aaaa", ["bbbb", "bbbc"], 0, "new revision"),
      ("aaaa", ["bbbb", "bbbc"], 2, "new revision"),
      ("bbbc", ["bbbb", "bbbc"], 0, "in sync"),
      ("bbbc", ["bbbb", "bbbc"], 1, "drift"),
    ]
    for row in table {
      manifests.update { $0 = row.current }
      try await publisher.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .status), payload: status(row.applied, drift: row.drift), qos: 1, retain: true)
      #expect(await becomes(row.state) == row.state, "\(row)")
    }
    // The agent cannot read the watch: offline on the page (its words), online again with a read.
    let unreachable = String(decoding: status("bbbc"), as: UTF8.self)
      .replacingOccurrences(of: #""watch":"room-1"}"#, with: #""unreachable":"Device not connected (2003)","unreachable_since":"2026-12-05T01:00:00Z","watch":"room-1"}"#)
    try await publisher.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .status), payload: Array(unreachable.utf8), qos: 1, retain: true)
    #expect(await becomes("offline") == "offline")
    #expect(board.snapshot().rows.first?.offlineSince == InternetTime.date("2026-12-05T01:00:00Z"))
    try await publisher.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .status), payload: status("bbbc"), qos: 1, retain: true)
    #expect(await becomes("in sync") == "in sync")
    // Edited after the status came: the page sees it at its next comparison, without a new status.
    manifests.update { $0 = ["cccc", "cccd"] }
    #expect(await becomes("new revision") == "new revision")
    let reason = board.snapshot().rows.first?.reasons.first ?? ""
    #expect(reason.contains("not published yet") && reason.contains("the manifests give revision cccc; the agent last applied bbbc"), "\(reason)")
    #expect(board.snapshot().rows.first?.pending == nil, "what publishing would change is not known")
    // Manifests that cannot be used: invalid on the page, as in `status --fleet`.
    manifests.update { $0 = nil }
    #expect(await becomes("invalid") == "invalid")
    #expect(board.snapshot().rows.first?.reasons.first?.contains("is not a phone number") == true)
    // A refusal in the agent's words names the fleet file as the page knows it, not the agent's
    // placeholder (FLEET-FILE).
    manifests.update { $0 = ["bbbb", "bbbc"] }
    let refused = #"{"agent":"station","applied_revision":"aaaa","device":"memory:room-1","drift":0,"format_version":"1","pending":1,"result":"refused","revision":"bbbc","#
      + #""message":"unsafe; publish it with allow_destroy ('tsapply apply --fleet FLEET-FILE --auto-approve --allow-destroy', FLEET-FILE the fleet file naming the watch) to apply it","watch":"room-1"}"#
    try await publisher.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .status), payload: Array(refused.utf8), qos: 1, retain: true)
    #expect(await becomes("refused") == "refused")
    let advice = board.snapshot().rows.first?.reasons.joined(separator: " ") ?? ""
    #expect(advice.contains("('tsapply apply --fleet fleet.yaml --auto-approve --allow-destroy') to apply it") && !advice.contains("FLEET-FILE"), "\(advice)")
    // The watch also announced by another agent, which then goes: the watch is still read by
    // `station`, whose statuses it reports, so it is not offline (fresh-eyes finding: a watch
    // moved between agents showed offline while the other agent read it).
    manifests.update { $0 = ["bbbb", "bbbc"] }
    try await publisher.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .status), payload: status("bbbc"), qos: 1, retain: true)
    #expect(await becomes("in sync") == "in sync")
    for online in [true, false] {
      var other = AgentState(agent: "a3", online: online, watches: ["room-1"])
      other.since = InternetTime.text(Date())  // a clean stop, not a will: believed at once
      try await publisher.publish(FleetTopics.agent(site: "ward-a", agent: "a3"), payload: other.encoded(), qos: 1, retain: true)
    }
    try await Task.sleep(for: .milliseconds(1500))
    let row = board.snapshot().rows.first
    #expect(row?.state == "in sync" && row?.offlineSince == nil && row?.reasons.contains { $0.contains("a3") } != true, "\(String(describing: row))")
    // Its own agent goes, then comes back serving other watches (the watch moved away while
    // it was down): the watch is not left offline with it (fresh-eyes finding).
    for watches in [["room-1"], ["room-9"]] {
      var station = AgentState(agent: "station", online: watches == ["room-9"], watches: watches)
      station.since = InternetTime.text(Date())
      try await publisher.publish(FleetTopics.agent(site: "ward-a", agent: "station"), payload: station.encoded(), qos: 1, retain: true)
      try await Task.sleep(for: .milliseconds(700))
      if watches == ["room-1"] { #expect(board.snapshot().rows.first?.offlineSince != nil, "offline with its agent") }
    }
    #expect(board.snapshot().rows.first?.offlineSince == nil, "\(String(describing: board.snapshot().rows.first))")
    await publisher.close()
  }

  /// A broker, a follower of site `ward-a` on it showing watch `room-1` as `r1` (its `device`)
  /// on a board, what it emits, and a client to publish as an agent would.
  static func followedRoom1(device: String) async throws
    -> (MosquittoBroker, StatusBoard, Inbox<MonitorEvent>, FleetMonitor.Follower, MQTTClient) {
    let (space, broker, publisher) = try await brokerAndPublisher()
    let (board, events, follower) = try await follower(space, broker, device: device)
    return (broker, board, events, follower, publisher)
  }

  /// A broker in a new fleet space, and a client to publish on it as an agent would.
  static func brokerAndPublisher() async throws -> (FleetSpace, MosquittoBroker, MQTTClient) {
    let space = try FleetSpace()
    let broker = try MosquittoBroker.start(in: space.directory)
    let publisher = try MQTTClient(address: broker.address, configuration: .init(clientID: "agent-side"), onMessage: { _ in })
    publisher.connect()
    try await publisher.ready(within: .seconds(120))
    return (space, broker, publisher)
  }

  /// A started follower of site `ward-a` on `broker`, its records in `space`, showing watch
  /// `room-1` as `r1` (its `device`) on a board; what it emits.
  static func follower(_ space: FleetSpace, _ broker: MosquittoBroker, device: String) async throws
    -> (StatusBoard, Inbox<MonitorEvent>, FleetMonitor.Follower) {
    let board = StatusBoard(members: [StatusBoard.Member(name: "r1", device: device)], offlineThreshold: .seconds(3600))
    let events = Inbox<MonitorEvent>()
    let follower = try FleetMonitor.Follower(site: "ward-a", settings: BrokerSettings(address: broker.address),
                                             outboxDirectory: space.directory + "/outbox", eventsDirectory: space.directory + "/monitor-events", notifiers: [],
                                             delivery: Backoff.Policy(initial: .milliseconds(50), maximum: .seconds(1)),
                                             emit: { events.add($0) }, notice: { _ in }, observers: [board], names: ["room-1": "r1"])
    try await follower.start(within: .seconds(120))
    return (board, events, follower)
  }

  /// An agent's error event says whether the agent retries: `reconcile: retrying` with the
  /// status's `attempt` and `next_retry` when its status (published just before) is `retrying`,
  /// so the page says `retrying` and no `failed` alert opens; a final failure has no `reconcile`.
  @Test func anAgentsErrorSaysRetryingWhenItsStatusDoes() async throws {
    let (broker, board, events, follower, publisher) = try await Self.followedRoom1(device: "bridge:ward-a/room-1")
    defer { broker.stop() }
    defer { Task { await follower.stop(grace: .zero) } }
    // (the status's result and its retry fields, the error event's own `result` — none from an
    // older agent) → the forwarded event's reconcile fields: the event's word wins over a status
    // that is not its apply's.
    let table: [(result: String, retry: String, event: String?, reconcile: JSONValue?, attempt: JSONValue?, state: String)] = [
      ("retrying", #""attempt":2,"next_retry":"2026-12-05T01:00:05Z","#, nil, .string("retrying"), .integer(2), "retrying"),
      ("failed", "", nil, nil, nil, "failed"),
      ("retrying", #""attempt":3,"next_retry":"2026-12-05T01:00:09Z","#, "retrying", .string("retrying"), .integer(3), "retrying"),
      ("failed", "", "retrying", .string("retrying"), nil, "failed"),
      ("retrying", #""attempt":4,"next_retry":"2026-12-05T01:00:05Z","#, "failed", nil, nil, "retrying"),
    ]
    for (index, row) in table.enumerated() {
      let status = #"{"agent":"station","device":"memory:room-1","drift":0,"format_version":"1","message":"timeout","pending":1,"#
        + #""result":"\#(row.result)",\#(row.retry)"revision":"aaaa","watch":"room-1"}"#
      try await publisher.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .status), payload: Array(status.utf8), qos: 1, retain: true)
      let said = row.event.map { #","result":"\#($0)""# } ?? ""
      let error = #"{"agent":"station","format_version":"1","kind":"error","message":"timeout"\#(said),"revision":"aaaa","time":"2026-12-05T01:00:00Z","watch":"room-1"}"#
      try await publisher.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .events), payload: Array(error.utf8), qos: 1, retain: false)
      let forwarded = try #require(await events.wait(for: index + 1).last)
      #expect(forwarded.kind == .error && forwarded.fields["reconcile"] == row.reconcile && forwarded.fields["attempt"] == row.attempt,
              "\(row.result): \(forwarded.jsonLine)")
      #expect(row.attempt == nil || forwarded.fields["next_retry"] != nil, "\(forwarded.jsonLine)")
      // The event's own word, else a final status's.
      #expect(forwarded.fields["result"] == (row.event ?? (row.result == "retrying" ? nil : row.result)).map(JSONValue.string), "\(forwarded.jsonLine)")
      let deadline = Date().addingTimeInterval(30)
      while Date() < deadline, board.snapshot().rows.first?.state != row.state { try? await Task.sleep(for: .milliseconds(20)) }
      #expect(board.snapshot().rows.first?.state == row.state, "\(row.result)")
    }
    await publisher.close()
  }

  /// A gap in a watch's events an agent publishes (`reason: events_missed`) is raised as a
  /// direct monitor raises its own: the same fields, an "SOS?" card on the page, no result of
  /// an apply taken from the status (only the agent's log said it: an SOS possibly missed
  /// behind an agent was shown nowhere a care home looks).
  @Test func aGapAnAgentPublishesIsAnSOSCardOnThePage() async throws {
    let (broker, board, events, follower, publisher) = try await Self.followedRoom1(device: "sim:room-1.json")
    defer { broker.stop() }
    defer { Task { await follower.stop(grace: .zero) } }
    let status = #"{"agent":"station","device":"sim:room-1.json","drift":0,"format_version":"1","pending":0,"result":"applied","revision":"aaaa","watch":"room-1"}"#
    try await publisher.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .status), payload: Array(status.utf8), qos: 1, retain: true)
    let gap = #"{"after":"8ac586f6-7","agent":"station","before":"23c347b-1","format_version":"1","kind":"error","#
      + #""message":"the watch's events after 8ac586f6-7 and before 23c347b-1 never reached this agent; ask the wearer","#
      + #""reason":"events_missed","time":"2026-12-07T07:00:00Z","watch":"room-1"}"#
    try await publisher.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .events), payload: Array(gap.utf8), qos: 1, retain: false)
    let forwarded = try #require(await events.wait(for: 1).first)
    #expect(forwarded.kind == .error && forwarded.fields["reason"] == .string("events_missed") && forwarded.fields["after"] == .string("8ac586f6-7")
              && forwarded.fields["before"] == .string("23c347b-1") && forwarded.fields["result"] == nil, "\(forwarded.jsonLine)")
    let open = board.snapshot().openSOS
    #expect(open.count == 1 && open.first?.missed?.contains("after 8ac586f6-7 and before 23c347b-1") == true, "\(open)")
    await publisher.close()
  }

  /// An agent's drift is ended by its status: `resolved` names the drift event (`drift_id`), as a
  /// direct monitor's does — over MQTT nothing closed it (fresh-eyes fe92 D1). A drift event after
  /// another not over `supersedes` it; a drift the agent's own apply undid says so
  /// (`overwritten_by`), not as if the wearer had undone it.
  /// The drift open when the monitor restarts is ended by the next one, by its id.
  @Test func anAgentsDriftIsResolvedWhenItsStatusFindsItOver() async throws {
    let (space, broker, publisher) = try await Self.brokerAndPublisher()
    defer { broker.stop() }
    var (_, events, follower) = try await Self.follower(space, broker, device: "sim:room-1.json")
    func publish(_ topic: FleetTopics.Kind, _ text: String) async throws {
      try await publisher.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", topic), payload: Array(text.utf8), qos: 1, retain: topic == .status)
    }
    func status(drift: Int, result: String, message: String) -> String {
      #"{"agent":"station","applied_revision":"aaaa","device":"sim:room-1.json","drift":\#(drift),"format_version":"1","#
        + #""last_applied":"2026-12-07T10:00:00.000Z","message":"\#(message)","pending":0,"result":"\#(result)","revision":"aaaa","watch":"room-1"}"#
    }
    let drift = #"{"addresses":["contacts"],"agent":"station","format_version":"1","kind":"drift","message":"1 resource changed on the watch since the last apply: contacts (1 added)","#
      + #""revision":"aaaa","time":"\#(InternetTime.text(Date()))","watch":"room-1"}"#
    try await publish(.events, drift)
    try await publish(.events, drift)
    let drifts = await events.wait(for: 2)
    await follower.stop(grace: .zero)
    (_, events, follower) = try await Self.follower(space, broker, device: "sim:room-1.json")
    try await publish(.status, status(drift: 0, result: "applied",
                                      message: "undid what was changed on the watch since the last apply: contacts (1 added)"))
    let seen = await events.wait(for: 1)
    // A drift on a watch whose newer revision was refused, then undone by the wearer: its
    // status (refused, drift 0 against the revision applied) ends it too (fresh-eyes fe94 D1).
    try await publish(.events, drift)
    try await publish(.status, status(drift: 0, result: "refused", message: "refused: the plan removes 1 contact"))
    let afterRefusal = await events.wait(for: 3)
    await follower.stop(grace: .zero)
    await publisher.close()
    #expect(afterRefusal.count == 3 && afterRefusal[2].kind == .resolved && afterRefusal[2].fields["drift_id"] == .string(afterRefusal[1].id)
              && afterRefusal[2].fields["overwritten_by"] == nil, "\(afterRefusal.map(\.jsonLine))")
    #expect(drifts.count == 2 && drifts[1].fields["supersedes"] == .string(drifts[0].id), "\(seen.map(\.jsonLine))")
    let resolved = try #require(seen.first { $0.kind == .resolved }, "\(seen.map(\.jsonLine))")
    #expect(resolved.fields["drift_id"] == .string(drifts[1].id) && resolved.fields["healed"] == .bool(false), "\(resolved.jsonLine)")
    #expect(resolved.message.hasPrefix("the watch holds what the last apply left again: agent station's apply of revision aaaa wrote over"),
            "\(resolved.message)")
    guard case .object(let by)? = resolved.fields["overwritten_by"] else { Issue.record("\(resolved.jsonLine)"); return }
    #expect(by["agent"] == .string("station") && by["revision"] == .string("aaaa"), "\(resolved.jsonLine)")
  }

  /// A drift another agent ends — the watch taken over by an agent with records of its own,
  /// which measures no drift against what it found — is not said to be over as if the watch held
  /// what the last apply left: the event names both agents (fresh-eyes fe105 #2).
  @Test func aDriftEndedByAnAgentThatTookTheWatchOverSaysSo() async throws {
    let (space, broker, publisher) = try await Self.brokerAndPublisher()
    defer { broker.stop() }
    let (_, events, follower) = try await Self.follower(space, broker, device: "sim:room-1.json")
    func status(_ agent: String, drift: Int) -> [UInt8] {
      Array((#"{"agent":"\#(agent)","applied_revision":"aaaa","device":"sim:room-1.json","drift":\#(drift),"format_version":"1","#
        + #""pending":0,"result":"no-changes","revision":"aaaa","watch":"room-1"}"#).utf8)
    }
    let drift = #"{"addresses":["reminder.custom[\"Lunch\"]"],"agent":"a01","format_version":"1","kind":"drift","message":"1 resource changed on the watch since the last apply","#
      + #""revision":"aaaa","time":"\#(InternetTime.text(Date()))","watch":"room-1"}"#
    try await publisher.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .status), payload: status("a01", drift: 1), qos: 1, retain: true)
    try await publisher.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .events), payload: Array(drift.utf8), qos: 1, retain: false)
    _ = await events.wait(for: 1)
    try await publisher.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .status), payload: status("a03", drift: 0), qos: 1, retain: true)
    let seen = await events.wait(for: 2)
    await follower.stop(grace: .zero)
    await publisher.close()
    let resolved = try #require(seen.first { $0.kind == .resolved }, "\(seen.map(\.jsonLine))")
    #expect(resolved.message.hasPrefix("agent a03, which took the watch over from agent a01, measures no drift against what it found on the watch")
            && resolved.fields["taken_over_from"] == .string("a01"), "\(resolved.jsonLine)")
  }

  /// A press heard well after it was made (an agent that published it late) says so in its
  /// words as well as in `heard_at`, as a direct monitor's does (fresh-eyes fe91: only the page said it).
  /// It carries the watch's `profile` (from the agent) and the monitor's `host`, as docs/monitor.md
  /// says of every `sos` event (fresh-eyes fe95 #8: empty `TSAPPLY_EVENT_PROFILE` and `_HOST`).
  @Test func aPressHeardLateSaysSoInItsWords() async throws {
    let (broker, _, events, follower, publisher) = try await Self.followedRoom1(device: "sim:room-1.json")
    defer { broker.stop() }
    let pressed = InternetTime.text(Date().addingTimeInterval(-600))
    let press = #"{"agent":"station","format_version":"1","id":"sos-e-0000000001","kind":"sos","message":"the wearer pressed SOS","#
      + #""profile":"fit","sequence":1,"time":"\#(pressed)","watch":"room-1"}"#
    try await publisher.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .events), payload: Array(press.utf8), qos: 1, retain: false)
    let shown = await events.wait(for: 1).first
    await follower.stop(grace: .zero)
    #expect(shown?.kind == .sos && shown?.fields["heard_at"] != nil, "\(shown?.jsonLine ?? "-")")
    #expect(shown?.message.hasSuffix("the wearer pressed SOS 10 min before it was heard") == true, "\(shown?.message ?? "-")")
    #expect(shown?.fields["profile"] == .string("fit") && shown?.fields["host"] == .string(ProcessInfo.processInfo.hostName),
            "\(shown?.jsonLine ?? "-")")
    await publisher.close()
  }

  /// A gap an agent told while no monitor was connected comes from its retained list
  /// (`RecentSOS.gap`): raised when the monitor connects, under the gap's id, and once — not
  /// again at the next start, nor when the live event comes too (fresh-eyes fe91 #1: a watch
  /// reset while `monitor --fleet` was down never reached the page).
  @Test func aGapToldWhileNoMonitorWasConnectedIsRaisedOnceWhenOneIs() async throws {
    let (space, broker, publisher) = try await Self.brokerAndPublisher()
    defer { broker.stop() }
    var gap = FleetEvent(agent: "station", watch: "room-1", kind: .error, time: InternetTime.text(Date()),
                         message: "the watch's events after 8ac586f6-7 and before 23c347b-1 never reached this agent; ask the wearer")
    (gap.reason, gap.after, gap.before, gap.id) = ("events_missed", "8ac586f6-7", "23c347b-1", "gap-8ac586f6-7-23c347b-1")
    var list = RecentSOS(agent: "station", watch: "room-1", presses: [])
    list.gap = gap
    try await publisher.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .sos), payload: list.encoded(), qos: 1, retain: true)
    for start in 1...2 {
      let (board, events, follower) = try await Self.follower(space, broker, device: "sim:room-1.json")
      // The live event too, and then an SOS: by its arrival everything before it was handled.
      try await publisher.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .events), payload: gap.encoded(), qos: 1, retain: false)
      let press = #"{"agent":"station","format_version":"1","id":"sos-e-000000000\#(start)","kind":"sos","message":"the wearer pressed SOS","#
        + #""sequence":\#(start),"time":"\#(InternetTime.text(Date()))","watch":"room-1"}"#
      try await publisher.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .events), payload: Array(press.utf8), qos: 1, retain: false)
      let deadline = Date().addingTimeInterval(60)
      while Date() < deadline, !events.items.contains(where: { $0.kind == .sos }) { try await Task.sleep(for: .milliseconds(20)) }
      await follower.stop(grace: .zero)
      let gaps = events.items.filter { $0.fields["reason"] == .string("events_missed") }
      #expect(gaps.count == (start == 1 ? 1 : 0), "start \(start): \(gaps.map(\.jsonLine))")
      if start == 1 {
        #expect(gaps.first?.id == "gap-8ac586f6-7-23c347b-1" && board.snapshot().openSOS.contains { $0.id == "gap-8ac586f6-7-23c347b-1" },
                "\(gaps.map(\.jsonLine))")
      }
    }
    await publisher.close()
  }

  /// Presses the agent's list no longer keeps (more than `RecentSOS.limit` while the monitor was
  /// down), made after the last one the monitor handled: raised as a gap ("SOS?" on the page, an
  /// `events_missed` event), once, beside the presses the list does keep (fresh-eyes fe100 #1:
  /// 18 presses, 2 lost with no word).
  @Test func pressesTheAgentNoLongerKeepsAreRaisedAsMissed() async throws {
    let (space, broker, publisher) = try await Self.brokerAndPublisher()
    defer { broker.stop() }
    func press(_ number: Int) -> FleetEvent {
      var event = FleetEvent(agent: "station", watch: "room-1", kind: .sos, time: InternetTime.text(Date()), message: "the wearer pressed SOS")
      event.id = "sos-e-" + String(format: "%010d", number)
      event.sequence = number
      return event
    }
    for start in 1...3 {
      let (board, events, follower) = try await Self.follower(space, broker, device: "sim:room-1.json")
      if start == 1 {
        try await publisher.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .events), payload: press(1).encoded(), qos: 1, retain: false)
        _ = await events.wait(for: 1)
      } else if start == 2 {
        let list = RecentSOS(agent: "station", watch: "room-1", presses: (4...19).map(press))
        try await publisher.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .sos), payload: list.encoded(), qos: 1, retain: true)
      }
      let deadline = Date().addingTimeInterval(start == 2 ? 60 : 2)
      while Date() < deadline, events.items.filter({ $0.kind == .sos }).count < (start == 2 ? 16 : 1) { try await Task.sleep(for: .milliseconds(20)) }
      try await Task.sleep(for: .milliseconds(200))
      await follower.stop(grace: .zero)
      let gaps = events.items.filter { $0.fields["reason"] == .string("events_missed") }
      #expect(gaps.count == (start == 2 ? 1 : 0), "start \(start): \(gaps.map(\.jsonLine))")
      if start == 2 {
        #expect(gaps.first?.message.hasPrefix("2 SOS presses of the watch, made while this monitor was not connected, are no longer kept by agent station") == true,
                "\(gaps.map(\.jsonLine))")
        #expect(board.snapshot().openSOS.contains { $0.id == gaps.first?.id }, "the page asks: \(board.snapshot().openSOS.map(\.id))")
        #expect(events.items.filter { $0.kind == .sos }.count == 16)
      }
    }
    await publisher.close()
  }

  /// A monitor started (or restarted) while an agent is online hears it from the agent's
  /// retained state and says so: an `agent_offline` alert kept open across its restart is then
  /// recovered, though the agent came back while the monitor was down.
  @Test func aMonitorStartedAfterAnAgentCameBackSaysItIsOnline() async throws {
    let (space, broker, _, engine) = try Self.site()
    defer { broker.stop() }
    let settings = BrokerSettings(address: broker.address)
    let agent = try FleetAgent(configuration: .init(broker: settings, site: "ward-a", agentID: "station", driftInterval: .zero),
                               watches: [("room-1", try await engine.open("memory:room-1"))])
    await agent.start()
    try await agent.ready(within: .seconds(120))
    let events = Inbox<MonitorEvent>()
    let alerts = Alerts(directory: space.directory + "/alerts", notifiers: [], filter: try Alerts.parseFilter("all"), offlineAfter: .seconds(60),
                        policy: Backoff.Policy(initial: .milliseconds(10), maximum: .milliseconds(20)), emit: { events.add($0) }, notice: { _ in })
    await alerts.start()
    alerts.record(MonitorEvent(time: Date(), watch: "agent:station", kind: .offline, message: "agent station is offline",
                               fields: ["agent": .string("station"), "watches": .array([.string("r1")])]), for: ["r1"])
    let follower = try FleetMonitor.Follower(site: "ward-a", settings: settings, outboxDirectory: space.directory + "/outbox", eventsDirectory: space.directory + "/monitor-events",
                                             notifiers: [], delivery: Backoff.Policy(initial: .milliseconds(50), maximum: .seconds(1)),
                                             emit: { events.add($0) }, notice: { _ in }, observers: [alerts], names: ["room-1": "r1"])
    try await follower.start(within: .seconds(120))
    let seen = await events.wait(for: 3)
    #expect(seen.contains { $0.kind == .online && $0.watch == "agent:station" }, "\(seen.map(\.message))")
    #expect(seen.contains { $0.kind == .alert && $0.fields["alert"] == .string("recovered") && $0.fields["recovers"] == .string("agent_offline") },
            "\(seen.map(\.message))")
    await follower.stop(grace: .zero)
    await agent.abandon()
  }

  /// An agent retired by deleting its retained presence (`mosquitto_pub -r -n`, docs/fleet.md):
  /// its `agent_offline` alert is recovered, saying so, and its watch, which no other agent
  /// serves, says that nothing serves it — not "its agent is offline" for good (fresh-eyes fe100:
  /// the alert never closed).
  @Test func aRetiredAgentsOutageEndsAndItsWatchSaysNothingServesIt() async throws {
    let (space, broker, publisher) = try await Self.brokerAndPublisher()
    defer { broker.stop() }
    let topic = FleetTopics.agent(site: "ward-a", agent: "station")
    try await Self.publishInSync(publisher)
    try await publisher.publish(topic, payload: Self.presence(online: true), qos: 1, retain: true)
    let events = Inbox<MonitorEvent>()
    let alerts = Alerts(directory: space.directory + "/alerts", notifiers: [], filter: try Alerts.parseFilter("all"), offlineAfter: .seconds(60),
                        policy: Backoff.Policy(initial: .milliseconds(10), maximum: .milliseconds(20)), emit: { events.add($0) }, notice: { _ in })
    await alerts.start()
    let (board, follower) = try await Self.follow(space, broker, alerts: alerts, events: events)
    // Stopped for good: its last presence, offline (with a time: no will to wait for).
    let stopped = #"{"agent":"station","format_version":"1","online":false,"since":"2026-12-05T13:00:00Z","watches":["room-1"]}"#
    try await publisher.publish(topic, payload: Array(stopped.utf8), qos: 1, retain: true)
    #expect(await Self.eventually { events.items.contains { $0.fields["alert"] == .string("agent_offline") } }, "\(events.items.map(\.message))")
    try await publisher.publish(topic, payload: [], qos: 1, retain: true)
    #expect(await Self.eventually { events.items.contains { $0.kind == .removed && $0.watch == "agent:station" } }, "\(events.items.map(\.message))")
    #expect(await Self.eventually {
      events.items.contains { $0.fields["alert"] == .string("recovered") && $0.fields["recovers"] == .string("agent_offline") }
    }, "\(events.items.map(\.message))")
    #expect(await Self.eventually { board.snapshot().rows.first?.state == "no status" }, "\(String(describing: board.snapshot().rows.first))")
    let row = try #require(board.snapshot().rows.first)
    #expect(row.reasons.contains { $0.contains("agent station was retired (its presence was deleted from the broker), and no other agent serves") },
            "\(row.reasons)")
    #expect(!row.reasons.contains { $0.contains("is offline") }, "\(row.reasons)")
    await follower.stop(grace: .zero)
    await alerts.stop(grace: .zero)
    await publisher.close()
  }

  /// A monitor started after the broker was restored from a save that holds an agent's
  /// presence "online" since before the broker started (the agent died meanwhile, its Last Will
  /// never sent): the agent is offline, saying why, and so is its watch — as `status --fleet`
  /// takes it (fresh-eyes fe105 #1: "online", and its watches in sync, SOS switched off on one).
  @Test func aPresenceKeptFromBeforeTheBrokerStartedIsOffline() async throws {
    let (space, broker, publisher) = try await Self.brokerAndPublisher()
    defer { broker.stop() }
    try await Self.publishInSync(publisher)
    let since = InternetTime.text(Date().addingTimeInterval(-120))
    let presence = #"{"agent":"station","format_version":"1","online":true,"since":"\#(since)","watches":["room-1"]}"#
    try await publisher.publish(FleetTopics.agent(site: "ward-a", agent: "station"), payload: Array(presence.utf8), qos: 1, retain: true)
    let events = Inbox<MonitorEvent>()
    let (board, follower) = try await Self.follow(space, broker, events: events, revisions: { _ in .success(["0123456789abcdef"]) })
    #expect(await Self.eventually { events.items.contains { $0.kind == .offline && $0.watch == "agent:station" } }, "\(events.items.map(\.message))")
    let offline = try #require(events.items.first { $0.kind == .offline && $0.watch == "agent:station" })
    #expect(offline.message.contains("kept by the broker from before it restarted"), "\(offline.message)")
    #expect(!events.items.contains { $0.kind == .online && $0.watch == "agent:station" }, "\(events.items.map(\.message))")
    #expect(await Self.eventually { board.snapshot().rows.first?.state == "offline" }, "\(String(describing: board.snapshot().rows.first))")
    await follower.stop(grace: .zero)
    await publisher.close()
  }

  /// A monitor started after an agent was retired (its presence deleted from the broker, its
  /// watch's status still retained): once agents have had the time to be heard (`unheardSettle`),
  /// the watch says that no agent has a presence that serves it, as `status --fleet` says —
  /// not the status's "in sync" for good (fresh-eyes fe102 #6).
  @Test func aMonitorStartedAfterAnAgentWasRetiredSaysNothingServesItsWatch() async throws {
    let (space, broker, publisher) = try await Self.brokerAndPublisher()
    defer { broker.stop() }
    try await Self.publishInSync(publisher)
    let events = Inbox<MonitorEvent>()
    let (board, follower) = try await Self.follow(space, broker, events: events, unheardSettle: .seconds(1))
    #expect(await Self.eventually { board.snapshot().rows.first?.state == "no status" }, "\(String(describing: board.snapshot().rows.first))")
    let row = try #require(board.snapshot().rows.first)
    #expect(row.reasons.contains { $0.contains("agent station, which last reported on the watch, has no presence on the broker") }, "\(row.reasons)")
    // An agent that announces it later serves it: its status is said again.
    try await publisher.publish(FleetTopics.agent(site: "ward-a", agent: "station"), payload: Self.presence(online: true), qos: 1, retain: true)
    #expect(await Self.eventually { board.snapshot().rows.first?.state == "in sync" }, "\(String(describing: board.snapshot().rows.first))")
    await follower.stop(grace: .zero)
    await publisher.close()
  }

  /// Publishes, retained, agent `station`'s status of `room-1`: revision 0123456789abcdef
  /// applied, in sync when last read.
  static func publishInSync(_ client: MQTTClient) async throws {
    let status = #"{"agent":"station","applied_revision":"0123456789abcdef","device":"memory:room-1","drift":0,"format_version":"1","#
      + #""last_seen":"2026-12-05T12:00:00Z","pending":0,"result":"applied","revision":"0123456789abcdef","watch":"room-1"}"#
    try await client.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .status), payload: Array(status.utf8), qos: 1, retain: true)
  }

  /// Agent `station`'s presence serving `room-1`: online since a time, or its will (no time).
  static func presence(online: Bool) -> [UInt8] {
    Array((online ? #"{"agent":"station","format_version":"1","online":true,"since":"\#(InternetTime.text(Date()))","watches":["room-1"]}"#
      : #"{"agent":"station","format_version":"1","online":false,"watches":["room-1"]}"#).utf8)
  }

  /// A board listing `r1` (`room-1`), and a follower of site `ward-a` on `broker` telling it (and
  /// `alerts`, when given) under `names`, started; its events go to `events`, its notices to `notices`.
  static func follow(_ space: FleetSpace, _ broker: MosquittoBroker, names: [String: String] = ["room-1": "r1"], alerts: Alerts? = nil,
                     events: Inbox<MonitorEvent>, notices: Inbox<String> = Inbox(), notifiers: [any Notifier] = [],
                     revisions: (@Sendable (String) -> Result<[String], FleetInputProblem>)? = nil,
                     within: Duration = .seconds(120), unheardSettle: Duration = .seconds(45)) async throws -> (StatusBoard, FleetMonitor.Follower) {
    let board = StatusBoard(members: [StatusBoard.Member(name: "r1", device: "bridge:ward-a/room-1")], offlineThreshold: .seconds(3600))
    let follower = try FleetMonitor.Follower(site: "ward-a", settings: BrokerSettings(address: broker.address),
                                             outboxDirectory: space.directory + "/outbox", eventsDirectory: space.directory + "/monitor-events",
                                             notifiers: notifiers, delivery: Backoff.Policy(initial: .milliseconds(50), maximum: .milliseconds(200)),
                                             emit: { events.add($0) }, notice: { notices.add($0) },
                                             observers: [board as any MonitorObserver] + (alerts.map { [$0] } ?? []), names: names,
                                             revisions: revisions, unheardSettle: unheardSettle)
    try await follower.start(within: within)
    return (board, follower)
  }

  /// Waits until `condition` holds (at most 30 s); whether it does.
  static func eventually(_ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(30)
    while Date() < deadline, !condition() { try? await Task.sleep(for: .milliseconds(20)) }
    return condition()
  }

  /// A monitor (re)started while an agent cannot reach its watch: the broker gives the watch's
  /// retained status (`unreachable`) and then the agent's retained presence (online). The page
  /// shows the watch offline, as `status --fleet` does, not `in sync` (fe17 defect 1).
  @Test func aMonitorStartedWhileItsAgentCannotReachAWatchShowsItOffline() async throws {
    let (space, broker, publisher) = try await Self.brokerAndPublisher()
    defer { broker.stop() }
    let status = #"{"agent":"station","applied_revision":"aaaa","device":"memory:room-1","drift":0,"format_version":"1","pending":0,"#
      + #""result":"applied","revision":"aaaa","unreachable":"Device not connected (2003)","unreachable_since":"2026-12-05T01:00:00Z","watch":"room-1"}"#
    try await publisher.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .status), payload: Array(status.utf8), qos: 1, retain: true)
    try await publisher.publish(FleetTopics.agent(site: "ward-a", agent: "station"), payload: Self.presence(online: true), qos: 1, retain: true)
    await publisher.close()
    let events = Inbox<MonitorEvent>()
    let (board, follower) = try await Self.follow(space, broker, events: events, revisions: { _ in .success(["aaaa"]) })
    defer { Task { await follower.stop(grace: .zero) } }
    #expect(await Self.eventually { events.items.contains { $0.kind == .online && $0.watch == "agent:station" } }, "\(events.items.map(\.message))")
    #expect(await Self.eventually { board.snapshot().rows.first?.appliedRevision == "aaaa" })
    let row = try #require(board.snapshot().rows.first)
    #expect(row.state == "offline", "\(events.items.map(\.message))")
    #expect(row.offlineSince == InternetTime.date("2026-12-05T01:00:00Z"))
  }

  /// The monitor loses the broker: its log says so in an event of its own, the page shows no
  /// watch as known, one alert names the monitor's connection (not an agent), and all of it
  /// clears when the monitor is connected again (fe17 defect 2).
  @Test func aMonitorThatLosesTheBrokerSaysItCannotSeeTheSite() async throws {
    let space = try FleetSpace()
    var broker = try MosquittoBroker.start(in: space.directory)
    defer { broker.stop() }
    let events = Inbox<MonitorEvent>()
    let alerts = Alerts(directory: space.directory + "/alerts", notifiers: [], filter: try Alerts.parseFilter("all"), offlineAfter: .seconds(60),
                        policy: Backoff.Policy(initial: .milliseconds(10), maximum: .milliseconds(20)), emit: { events.add($0) }, notice: { _ in })
    await alerts.start()
    let notices = Inbox<String>()
    let (board, follower) = try await Self.follow(space, broker, alerts: alerts, events: events, notices: notices)
    defer { Task { await follower.stop(grace: .zero) } }
    // An agent online, with a will as a real agent has: a broker shutting down may send it.
    let agentSide = try MQTTClient(address: broker.address,
                                   configuration: .init(clientID: "station", will: .init(topic: FleetTopics.agent(site: "ward-a", agent: "station"),
                                                                                          payload: Self.presence(online: false), qos: 1, retain: true)),
                                   onMessage: { _ in })
    agentSide.connect()
    try await agentSide.ready(within: .seconds(120))
    try await agentSide.publish(FleetTopics.agent(site: "ward-a", agent: "station"), payload: Self.presence(online: true), qos: 1, retain: true)
    #expect(await Self.eventually { events.items.contains { $0.kind == .online && $0.watch == "agent:station" } })
    broker.stop()
    #expect(await Self.eventually { events.items.contains { $0.kind == .offline && $0.fields["broker"] != nil } }, "\(events.items.map(\.message))")
    let lost = try #require(events.items.first { $0.kind == .offline && $0.fields["broker"] != nil })
    #expect(lost.watch == "monitor:ward-a" && lost.message.contains("SOS presses"), "\(lost.jsonLine)")
    #expect(notices.items.contains { $0.contains("lost its connection to the broker") }, "\(notices.items)")
    #expect(await Self.eventually { events.items.contains { $0.fields["alert"] == .string("monitor_offline") } }, "\(events.items.map(\.message))")
    #expect(board.snapshot().rows.first?.state == "not known")
    // Give a will sent as the broker closed its time to arrive and be judged.
    try await Task.sleep(for: .seconds(3))
    #expect(!events.items.contains { $0.fields["alert"] == .string("agent_offline") }, "the agent was not seen to go: \(events.items.map(\.message))")
    broker = try broker.restart()
    #expect(await Self.eventually { events.items.contains { $0.kind == .online && $0.fields["broker"] != nil } }, "\(events.items.map(\.message))")
    #expect(await Self.eventually { events.items.contains { $0.fields["recovers"] == .string("monitor_offline") } })
    #expect(await Self.eventually { board.snapshot().rows.first?.state != "not known" })
    #expect(board.snapshot().monitorProblem == nil)
    await agentSide.abandon()
  }

  /// A monitor started while its broker is down (started after it, restarting): the start does
  /// not fail — the monitor says it cannot reach the broker, the page knows no watch, and once
  /// the broker is up it follows the site (fresh-eyes finding: it gave up after 30 s, exit 1).
  @Test func aMonitorStartedBeforeItsBrokerFollowsOnceTheBrokerIsUp() async throws {
    let space = try FleetSpace()
    let first = try MosquittoBroker.start(in: space.directory)
    first.stop()
    let events = Inbox<MonitorEvent>()
    let notices = Inbox<String>()
    let (board, follower) = try await Self.follow(space, first, events: events, notices: notices, within: .milliseconds(500))
    defer { Task { await follower.stop(grace: .zero) } }
    let away = try #require(events.items.first { $0.kind == .offline && $0.fields["broker"] != nil }, "\(events.items.map(\.message))")
    #expect(away.message.hasPrefix("this monitor cannot reach the broker \(first.address)") && away.message.contains("it keeps trying"), "\(away.message)")
    #expect(notices.items.contains { $0.hasPrefix("This monitor cannot reach the broker") }, "\(notices.items)")
    #expect(board.snapshot().rows.first?.state == "not known")
    let broker = try first.restart()
    defer { broker.stop() }
    #expect(await Self.eventually { events.items.contains { $0.kind == .online && $0.fields["broker"] != nil } }, "\(events.items.map(\.message))")
    let back = try #require(events.items.first { $0.kind == .online && $0.fields["broker"] != nil })
    #expect(back.message.hasPrefix("this monitor is connected to the broker \(broker.address) after"), "\(back.message)")
    #expect(board.snapshot().monitorProblem == nil)
  }

  /// A monitor that lost the broker and was then killed leaves its `monitor_offline` alert open
  /// (`alerts.json`); the monitor started after it, once connected, says it is connected
  /// (`online` for `monitor:SITE`, its outage counted from when the first one lost the broker)
  /// and closes that alert (fresh-eyes fe95 #2: open for ever while the new monitor followed the site).
  @Test func aMonitorOfflineAlertLeftByAKilledMonitorIsClosedByTheNextOneOnceConnected() async throws {
    let space = try FleetSpace()
    var broker = try MosquittoBroker.start(in: space.directory, configuration: MosquittoBroker.defaultConfiguration)
    defer { broker.stop() }
    func alerts(_ events: Inbox<MonitorEvent>) async throws -> Alerts {
      let alerts = Alerts(directory: space.directory + "/alerts", notifiers: [], filter: try Alerts.parseFilter("all"), offlineAfter: .seconds(60),
                          policy: Backoff.Policy(initial: .milliseconds(10), maximum: .milliseconds(20)), emit: { events.add($0) }, notice: { _ in })
      await alerts.start()
      return alerts
    }
    let first = Inbox<MonitorEvent>()
    let (_, killed) = try await Self.follow(space, broker, alerts: try await alerts(first), events: first)
    broker.stop()
    #expect(await Self.eventually { first.items.contains { $0.fields["alert"] == .string("monitor_offline") } }, "\(first.items.map(\.message))")
    let lost = try #require(first.items.first { $0.kind == .offline && $0.watch == "monitor:ward-a" })
    // Killed: nothing more of it (its connection is down, so nothing is sent either).
    await killed.stop(grace: .zero)
    broker = try broker.restart()
    let second = Inbox<MonitorEvent>()
    let (board, follower) = try await Self.follow(space, broker, alerts: try await alerts(second), events: second)
    defer { Task { await follower.stop(grace: .zero) } }
    #expect(await Self.eventually { second.items.contains { $0.fields["recovers"] == .string("monitor_offline") } }, "\(second.items.map(\.message))")
    let back = try #require(second.items.first { $0.kind == .online && $0.watch == "monitor:ward-a" }, "\(second.items.map(\.message))")
    #expect(back.fields["offline_seconds"].flatMap { if case .integer(let seconds) = $0 { seconds } else { nil } }
              == Int(back.time.timeIntervalSince(lost.time).rounded()), "\(back.jsonLine)")
    #expect(!second.items.contains { $0.kind == .offline && $0.watch == "monitor:ward-a" }, "\(second.items.map(\.message))")
    #expect(board.snapshot().monitorProblem == nil)
    // Its outage over, the next monitor says nothing of it.
    await follower.stop(grace: .zero)
    let third = Inbox<MonitorEvent>()
    let (_, next) = try await Self.follow(space, broker, alerts: try await alerts(third), events: third)
    try await Task.sleep(for: .milliseconds(300))
    #expect(!third.items.contains { $0.watch == "monitor:ward-a" }, "\(third.items.map(\.message))")
    await next.stop(grace: .zero)
  }

  /// A monitor started while the outage an earlier run left goes on (the broker still down)
  /// says so at once, since the outage began — not "every watch in sync" until its first try
  /// times out, and not since its own start (fresh-eyes fe100 #4: 5 s of an all-clear page).
  @Test func anOutageAnEarlierRunLeftIsShownAtOnceSinceItBegan() async throws {
    let space = try FleetSpace()
    let broker = try MosquittoBroker.start(in: space.directory, configuration: MosquittoBroker.defaultConfiguration)
    let first = Inbox<MonitorEvent>()
    let (firstBoard, killed) = try await Self.follow(space, broker, events: first)
    broker.stop()
    #expect(await Self.eventually { firstBoard.snapshot().monitorProblemSince != nil }, "\(first.items.map(\.message))")
    let began = try #require(firstBoard.snapshot().monitorProblemSince)
    await killed.stop(grace: .zero)
    let second = Inbox<MonitorEvent>()
    let started = Date()
    let starting = Task { try await Self.follow(space, broker, events: second, within: .seconds(5)) }
    while Date().timeIntervalSince(started) < 10, !second.items.contains(where: { $0.kind == .offline && $0.watch == "monitor:ward-a" }) {
      try await Task.sleep(for: .milliseconds(20))
    }
    let shownAfter = Date().timeIntervalSince(started)
    #expect(shownAfter < 3, "shown \(shownAfter) s after the start")
    let (board, follower) = try await starting.value
    defer { Task { await follower.stop(grace: .zero) } }
    #expect(abs((board.snapshot().monitorProblemSince ?? .distantFuture).timeIntervalSince(began)) < 0.01,
            "since \(String(describing: board.snapshot().monitorProblemSince)), the outage began \(began)")
  }

  /// A watch taken out of the fleet file while the monitor was down: its next press is shown
  /// under the name the file gave it, which the watch's record kept — not `ward-a/room-1`, a
  /// name it never had (fresh-eyes fe100 #5: two cards for one resident).
  @Test func aPressOfAWatchTakenOutOfTheFileWhileTheMonitorWasDownKeepsItsName() async throws {
    let (space, broker, publisher) = try await Self.brokerAndPublisher()
    defer { broker.stop() }
    func press(_ number: Int) -> [UInt8] {
      var event = FleetEvent(agent: "station", watch: "room-1", kind: .sos, time: InternetTime.text(Date()), message: "the wearer pressed SOS")
      event.id = "sos-e-" + String(format: "%010d", number)
      event.sequence = number
      return event.encoded()
    }
    for (start, names) in [(1, ["room-1": "r1"]), (2, [:])] {
      let events = Inbox<MonitorEvent>()
      let (_, follower) = try await Self.follow(space, broker, names: names, events: events)
      try await publisher.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .events), payload: press(start), qos: 1, retain: false)
      let shown = await events.wait(for: 1).first { $0.kind == .sos }
      await follower.stop(grace: .zero)
      #expect(shown?.watch == "r1", "start \(start): \(shown?.jsonLine ?? "-")")
    }
    await publisher.close()
  }

  /// An SOS from a watch the fleet file no longer names (its agent still serves it: the press is
  /// delivered) is an open press on the page, under the name the fleet gave it (fe17 defect 3).
  @Test func anSOSFromAWatchRemovedFromTheFleetIsOpenOnThePage() async throws {
    let space = try FleetSpace()
    let broker = try MosquittoBroker.start(in: space.directory)
    defer { broker.stop() }
    let events = Inbox<MonitorEvent>()
    let (board, follower) = try await Self.follow(space, broker, names: ["room-1": "r1", "room-2": "r2"], events: events)
    defer { Task { await follower.stop(grace: .zero) } }
    follower.rename([:])
    board.remove(["r1"])
    let publisher = try MQTTClient(address: broker.address, configuration: .init(clientID: "agent-side"), onMessage: { _ in })
    publisher.connect()
    try await publisher.ready(within: .seconds(120))
    let now = InternetTime.text(Date())
    for (watch, sequence) in [("room-1", 1), ("room-3", 2)] {
      let sos = #"{"agent":"station","format_version":"1","id":"sos-105bd4bc9615af4d-000000000\#(sequence)","kind":"sos","#
        + #""message":"the wearer pressed SOS","sequence":\#(sequence),"time":"\#(now)","watch":"\#(watch)"}"#
      try await publisher.publish(FleetTopics.watch(site: "ward-a", watch: watch, .events), payload: Array(sos.utf8), qos: 1, retain: false)
    }
    #expect(await Self.eventually { board.snapshot().openSOS.count == 2 }, "\(events.items.map(\.jsonLine))")
    // The name the fleet gave it; one never named: as the monitor names it in its log.
    #expect(Set(board.snapshot().openSOS.map(\.watch)) == ["r1", "ward-a/room-3"], "\(board.snapshot().openSOS)")
    #expect(events.items.filter { $0.kind == .sos }.map(\.watch).sorted() == ["r1", "ward-a/room-3"])
    await publisher.close()
  }

  /// A watch moved to another agent, which replays the press the watch still keeps under its own
  /// id and number: the same press (same time) is shown and delivered once; another press
  /// (another time) is not taken for it (fresh-eyes finding: two open SOS cards, the
  /// `--on-event` command run twice, for one press).
  @Test func aPressPublishedAgainByTheAgentAWatchMovedToIsShownOnce() async throws {
    let space = try FleetSpace()
    let broker = try MosquittoBroker.start(in: space.directory)
    defer { broker.stop() }
    let events = Inbox<MonitorEvent>()
    let (board, follower) = try await Self.follow(space, broker, events: events)
    defer { Task { await follower.stop(grace: .zero) } }
    let publisher = try await Self.agentsSide(broker)
    let pressed = InternetTime.text(Date()), later = InternetTime.text(Date().addingTimeInterval(3))
    // The last: another press the first agent timed alike (a watch timing presses to the second):
    // one numbering's presses are never taken for each other.
    for (agent, id, time) in [("station", "sos-105bd4bc9615af4d-0000000002", pressed), ("other", "sos-35403dc0aa11bb22-0000000001", pressed),
                              ("other", "sos-35403dc0aa11bb22-0000000002", later), ("station", "sos-105bd4bc9615af4d-0000000003", pressed)] {
      let sos = #"{"agent":"\#(agent)","format_version":"1","id":"\#(id)","kind":"sos","#
        + #""message":"the wearer pressed SOS","sequence":1,"time":"\#(time)","watch":"room-1"}"#
      try await publisher.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .events), payload: Array(sos.utf8), qos: 1, retain: false)
      try await Task.sleep(for: .milliseconds(200))
    }
    #expect(await Self.eventually { events.items.filter { $0.kind == .sos }.count == 3 }, "\(events.items.map(\.jsonLine))")
    try await Task.sleep(for: .milliseconds(300))
    let shown = events.items.filter { $0.kind == .sos }
    #expect(shown.map(\.id) == ["sos-105bd4bc9615af4d-0000000002", "sos-35403dc0aa11bb22-0000000002", "sos-105bd4bc9615af4d-0000000003"],
            "\(shown.map(\.jsonLine))")
    #expect(board.snapshot().openSOS.count == 3)
    await publisher.close()
  }

  /// Fails its first `failures` deliveries, then records.
  final class Flaky: Notifier, @unchecked Sendable {
    let key = "receiver"
    let name = "receiver"
    private let left: Locked<Int>
    init(failures: Int) { left = Locked(failures) }
    func deliver(id: String, body: String, attempt: Int) async -> String? {
      left.update { count -> String? in
        guard count > 0 else { return nil }
        count -= 1
        return "connection refused"
      }
    }
  }

  /// Over MQTT as for a watch monitored directly: a press a receiver has not had yet is on the
  /// page ("has not reached receiver yet") from its first failure until a `delivered` event
  /// (the page said nothing while the receiver kept failing, fresh-eyes finding).
  @Test func anSOSNotDeliveredYetOverMQTTNeedsAttentionUntilItIs() async throws {
    let space = try FleetSpace()
    let broker = try MosquittoBroker.start(in: space.directory)
    defer { broker.stop() }
    let events = Inbox<MonitorEvent>()
    let (board, follower) = try await Self.follow(space, broker, events: events, notifiers: [Flaky(failures: 3)])
    defer { Task { await follower.stop(grace: .zero) } }
    let publisher = try MQTTClient(address: broker.address, configuration: .init(clientID: "agent-side"), onMessage: { _ in })
    publisher.connect()
    try await publisher.ready(within: .seconds(120))
    let sos = #"{"agent":"station","format_version":"1","id":"sos-105bd4bc9615af4d-0000000001","kind":"sos","#
      + #""message":"the wearer pressed SOS","sequence":1,"time":"\#(InternetTime.text(Date()))","watch":"room-1"}"#
    try await publisher.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .events), payload: Array(sos.utf8), qos: 1, retain: false)
    #expect(await Self.eventually { board.snapshot().rows.first?.reasons.first?.hasPrefix("An SOS press has not reached receiver yet") == true },
            "\(board.snapshot().rows.first?.reasons ?? [])")
    #expect(await Self.eventually { events.items.contains { $0.kind == .delivered } }, "\(events.items.map(\.jsonLine))")
    #expect(!(board.snapshot().rows.first?.reasons.first?.hasPrefix("An SOS press") ?? false), "\(board.snapshot().rows.first?.reasons ?? [])")
    let failed = events.items.filter { $0.kind == .error && $0.fields["reason"] == .string("delivery") }
    #expect(failed.count == 1 && failed.first?.watch == "r1", "\(failed.map(\.jsonLine))")
    await publisher.close()
  }

  @Test func theAgentsEventsAreFollowedOnTheBrokerAndAnSOSReachesTheNotifiers() async throws {
    let (space, broker, scheme, engine) = try Self.site()
    defer { broker.stop() }
    let settings = BrokerSettings(address: broker.address)
    let events = Inbox<MonitorEvent>()
    let recorder = Recorder()
    let follower = try FleetMonitor.Follower(site: "ward-a", settings: settings, outboxDirectory: space.directory + "/outbox", eventsDirectory: space.directory + "/monitor-events",
                                             notifiers: [recorder], delivery: Backoff.Policy(initial: .milliseconds(50), maximum: .seconds(1)),
                                             emit: { events.add($0) }, notice: { _ in }, names: ["room-1": "r1"])
    try await follower.start(within: .seconds(120))
    let agent = try FleetAgent(configuration: .init(broker: settings, site: "ward-a", agentID: "station", driftInterval: .zero),
                               watches: [("room-1", try await engine.open("memory:room-1"))])
    await agent.start()
    try await agent.ready(within: .seconds(120))
    try scheme.device("room-1").simulateSOSPress()
    let seen = await events.wait(for: 2)
    #expect(seen.map(\.kind) == [.online, .sos])
    #expect(seen.first?.watch == "agent:station")
    #expect(seen.first?.fields["watches"] == .array([.string("r1")]))
    #expect(seen.last?.watch == "r1")
    #expect(seen.last?.fields["agent"] == .string("station"))
    let bodies = await recorder.delivered.wait(for: 1)
    #expect(bodies.first?.contains("\"kind\":\"sos\"") == true)
    await agent.abandon()
    let offline = await events.wait(for: 3).last
    #expect(offline?.kind == .offline)
    // The agent went offline, not one of its watches: the event names the agent and all its watches.
    #expect(offline?.watch == "agent:station")
    #expect(offline?.fields["watches"] == .array([.string("r1")]))
    await follower.stop(grace: .seconds(1))
  }

  /// A follower of site `ward-a` on `broker`, started, keeping its outbox and the presses it
  /// handled in `space`, delivering to `recorder`, its events in `events`.
  static func follower(_ space: FleetSpace, _ broker: MosquittoBroker, _ recorder: Recorder,
                       _ events: Inbox<MonitorEvent>) async throws -> FleetMonitor.Follower {
    let follower = try FleetMonitor.Follower(site: "ward-a", settings: BrokerSettings(address: broker.address),
                                             outboxDirectory: space.directory + "/outbox", eventsDirectory: space.directory + "/monitor-events",
                                             notifiers: [recorder], delivery: Backoff.Policy(initial: .milliseconds(50), maximum: .seconds(1)),
                                             emit: { events.add($0) }, notice: { _ in }, names: ["room-1": "r1"])
    try await follower.start(within: .seconds(120))
    return follower
  }

  /// The agent `station` serving `memory:room-1` on `broker`, started and connected.
  static func station(_ engine: Engine, _ broker: MosquittoBroker) async throws -> FleetAgent {
    let agent = try FleetAgent(configuration: .init(broker: BrokerSettings(address: broker.address), site: "ward-a", agentID: "station",
                                                    driftInterval: .zero),
                               watches: [("room-1", try await engine.open("memory:room-1"))])
    await agent.start()
    try await agent.ready(within: .seconds(120))
    return agent
  }

  /// A press a monitor over MQTT stored in its outbox and was killed before it said is said when
  /// it starts again — the stored event, `left_in_outbox`, under the name it was shown under,
  /// to the page too — and delivered once (fresh-eyes finding, for a watch monitored directly:
  /// delivered, never on the page nor in the log).
  @Test func aPressStoredButNotSaidBeforeAKillIsSaidWhenTheMonitorStartsAgain() async throws {
    let (space, broker, _, _) = try Self.site()
    defer { broker.stop() }
    let stored = MonitorEvent(time: Date().addingTimeInterval(-2), watch: "r1", kind: .sos, id: "sos-0123456789abcdef-0000000004",
                              message: "SOS pressed on the watch", fields: ["agent": .string("station")])
    try Outbox(directory: space.directory + "/outbox").put(Outbox.Entry(id: stored.id, body: stored.jsonLine))
    let recorder = Recorder()
    let events = Inbox<MonitorEvent>()
    let monitor = try await Self.follower(space, broker, recorder, events)
    let bodies = await recorder.delivered.wait(for: 1)
    await monitor.stop(grace: .seconds(1))
    let said = events.items.filter { $0.kind == .sos }
    #expect(said.map(\.id) == [stored.id] && said.first?.watch == "r1" && said.first?.fields["left_in_outbox"] == .bool(true),
            "\(events.items.map(\.jsonLine))")
    #expect(bodies.count == 1 && bodies.first?.contains(stored.id) == true, "\(bodies)")
  }

  /// An SOS pressed while no monitor follows the site (stopped, restarting) is delivered when
  /// it starts again, once, `replayed`, with the broker's default settings; the press it heard
  /// live before is not delivered again, and a later start delivers neither.
  @Test func anSOSPressedWhileTheMonitorWasDownIsDeliveredOnceWhenItStartsAgain() async throws {
    let (space, broker, scheme, engine) = try Self.site(configuration: MosquittoBroker.defaultConfiguration)
    defer { broker.stop() }
    // Another subscriber of the events: proof that the broker had each press.
    let published = Inbox<String>()
    let listener = try MQTTClient(address: broker.address,
                                  configuration: .init(clientID: "listener", subscriptions: [FleetTopics.every(.events, site: "ward-a")]),
                                  onMessage: { published.add(FleetEvent.decode($0.payload)?.id ?? "") })
    listener.connect()
    try await listener.ready(within: .seconds(120))
    let agent = try await Self.station(engine, broker)
    let recorder = Recorder()
    let first = Inbox<MonitorEvent>()
    let monitor = try await Self.follower(space, broker, recorder, first)
    try scheme.device("room-1").simulateSOSPress()
    let live = try #require(await first.wait(for: 2).first { $0.kind == .sos })
    #expect(live.fields["replayed"] == nil)
    await monitor.stop(grace: .seconds(1))
    // Pressed while no monitor runs: the agent publishes it to nobody that delivers it.
    try scheme.device("room-1").simulateSOSPress()
    let ids = await published.wait(for: 2)
    #expect(ids.count == 2 && ids[0] == live.id, "\(ids)")
    let missed = ids.last ?? ""
    // The agent publishes its list of presses after the event: retained by the broker before the monitor starts.
    let listed = Inbox<Bool>()
    let lists = try MQTTClient(address: broker.address, configuration: .init(clientID: "lists", subscriptions: [FleetTopics.every(.sos, site: "ward-a")]),
                               onMessage: { message in
                                 if RecentSOS.decode(message.payload)?.presses.contains(where: { $0.id == missed }) == true { listed.add(true) }
                               })
    lists.connect()
    try await lists.ready(within: .seconds(120))
    _ = await listed.wait(for: 1)
    await lists.close()
    let second = Inbox<MonitorEvent>()
    let again = try await Self.follower(space, broker, recorder, second)
    // The retained list comes before the agent's presence (the monitor subscribes to it first).
    let seen = await second.wait(for: 2)
    let presses = seen.filter { $0.kind == .sos }
    #expect(presses.map(\.id) == [missed], "\(seen.map(\.jsonLine))")
    #expect(presses.first?.fields["replayed"] == .bool(true))
    #expect(presses.first?.watch == "r1")
    #expect(seen.last?.kind == .online, "\(seen.map(\.jsonLine))")
    let bodies = await recorder.delivered.wait(for: 2)
    #expect(bodies.count == 2 && bodies.last?.contains(missed) == true && bodies.last?.contains("\"replayed\":true") == true, "\(bodies)")
    await again.stop(grace: .seconds(1))
    // A third start delivers neither again.
    let third = Inbox<MonitorEvent>()
    let last = try await Self.follower(space, broker, recorder, third)
    let after = await third.wait(for: 1)
    #expect(after.map(\.kind) == [.online], "\(after.map(\.jsonLine))")
    await last.stop(grace: .seconds(1))
    #expect(third.items.filter { $0.kind == .sos }.isEmpty && recorder.delivered.items.count == 2)
    await agent.abandon()
    await listener.close()
  }

  /// A broker restarted with persistence keeps the will it sent for an agent as it stopped:
  /// heard by the monitor as it connects again, it is not believed while the agent connects
  /// again too (fresh-eyes finding: `agent_offline` and `recovered` 8 ms apart for an agent that
  /// never went). The agent's side is played by a client publishing its presence: retained
  /// online, then — on the restarted broker, before the monitor is back — its will, then online.
  @Test func aWillKeptByARestartedBrokerIsNoAgentOffline() async throws {
    let (space, started, _, _) = try Self.site(configuration: { port, directory in
      MosquittoBroker.defaultConfiguration(port: port, directory: directory) + "persistence true\npersistence_location \(directory)/\n"
    })
    var broker = started
    defer { broker.stop() }
    let topic = FleetTopics.agent(site: "ward-a", agent: "station")
    func presence(_ online: Bool) -> [UInt8] {
      Array(#"{"agent":"station","format_version":"1","online":\#(online),"watches":["room-1"]\#(online ? #","since":"\#(InternetTime.text(Date()))""# : "")}"#.utf8)
    }
    func publish(_ online: Bool) async throws {
      let client = try MQTTClient(address: broker.address, configuration: .init(clientID: "station-side"), onMessage: { _ in })
      client.connect()
      try await client.ready(within: .seconds(120))
      try await client.publish(topic, payload: presence(online), qos: 1, retain: true)
      await client.close()
    }
    try await publish(true)
    let events = Inbox<MonitorEvent>()
    let monitor = try await Self.follower(space, broker, Recorder(), events)
    _ = await events.wait(for: 1)
    broker.stop()
    broker = try broker.restart()
    try await publish(false)  // the will the broker kept, before the monitor is back (its reconnect waits 0.5 s or more)
    for _ in 0..<600 where !events.items.contains(where: { $0.watch == "monitor:ward-a" && $0.kind == .online }) {
      try await Task.sleep(for: .milliseconds(20))
    }
    try await publish(true)   // the agent connected again
    try await Task.sleep(for: .seconds(11))
    let offline = events.items.filter { $0.watch == "agent:station" && $0.kind == .offline }
    #expect(offline.isEmpty, "\(offline.map(\.jsonLine))")
    await monitor.stop(grace: .seconds(1))
  }

  /// A broker restarted from a persistence file saved before the agent's last status goes back
  /// to an older one (Mosquitto saves every `autosave_interval`): the agent had reported the
  /// wearer's change (drift 1, read at 12:05), the broker comes back holding the status of the
  /// read before (drift 0, 12:00), retained. The monitor keeps what it heard — the watch stays
  /// drifted, no `recovered` — rather than go back with the broker (fresh-eyes finding: "in
  /// sync" and a false `recovered` alert for 4 minutes while the watch held the change).
  @Test func aStatusOlderThanTheOneHeardIsNotTakenFromARestartedBroker() async throws {
    // Saved where the broker can write: it stays the user that runs the tests.
    let (space, started, _, _) = try Self.site(configuration: { port, directory in
      MosquittoBroker.defaultConfiguration(port: port, directory: directory)
        + "persistence true\npersistence_location \(directory)/\nuser \(NSUserName())\n"
    })
    var broker = started
    defer { broker.stop() }
    let saved = space.directory + "/saved-mosquitto.db", file = space.directory + "/mosquitto.db"
    func status(drift: Int, seen: String) -> [UInt8] {
      Array((#"{"agent":"station","applied_revision":"aaaa","device":"memory:room-1","drift":\#(drift),"format_version":"1","#
        + #""last_seen":"2026-12-05T12:\#(seen):00.000Z","pending":0,"result":"applied","revision":"aaaa","watch":"room-1"}"#).utf8)
    }
    func publish(_ payload: [UInt8]) async throws {
      let client = try MQTTClient(address: broker.address, configuration: .init(clientID: "station-side"), onMessage: { _ in })
      client.connect()
      try await client.ready(within: .seconds(120))
      try await client.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .status), payload: payload, qos: 1, retain: true)
      await client.close()
    }
    // The persistence file as it was saved while the older status was retained.
    try await publish(status(drift: 0, seen: "00"))
    broker.stop()
    try FileManager.default.copyItem(atPath: file, toPath: saved)
    broker = try broker.restart()
    let events = Inbox<MonitorEvent>()
    let alerts = Alerts(directory: space.directory + "/alerts", notifiers: [], filter: try Alerts.parseFilter("all"), offlineAfter: .seconds(60),
                        policy: Backoff.Policy(initial: .milliseconds(10), maximum: .milliseconds(20)), emit: { events.add($0) }, notice: { _ in })
    await alerts.start()
    let (board, follower) = try await Self.follow(space, broker, alerts: alerts, events: events, revisions: { _ in .success(["aaaa"]) })
    try await publish(status(drift: 1, seen: "05"))
    #expect(await Self.eventually { board.snapshot().rows.first?.state == "drift" }, "\(board.snapshot().rows.first?.state ?? "")")
    // The broker crashes and comes back from that older file.
    broker.stop()
    try FileManager.default.removeItem(atPath: file)
    try FileManager.default.copyItem(atPath: saved, toPath: file)
    broker = try broker.restart()
    #expect(await Self.eventually { events.items.contains { $0.watch == "monitor:ward-a" && $0.kind == .online } })
    try await Task.sleep(for: .seconds(1))
    #expect(board.snapshot().rows.first?.state == "drift", "\(board.snapshot().rows.first?.state ?? "")")
    let recovered = events.items.filter { $0.kind == .alert && $0.fields["alert"] == .string("recovered") && $0.fields["recovers"] == .string("drift") }
    #expect(recovered.isEmpty, "\(recovered.map(\.jsonLine))")
    // A later read's status is taken as ever.
    try await publish(status(drift: 0, seen: "10"))
    #expect(await Self.eventually { board.snapshot().rows.first?.state == "in sync" }, "\(board.snapshot().rows.first?.state ?? "")")
    await follower.stop(grace: .zero)
    await alerts.stop(grace: .zero)
  }

  /// A broker restored from a save holds an agent's old will (retained): a monitor whose first
  /// connection is to it (started, or restarted, as the broker came back) hears the will before
  /// the agent, which connects again at once. It is no `agent_offline` — only a will the agent
  /// does not follow within the grace is (fresh-eyes fe95 #3: `agent_offline` for an agent and
  /// its 50 watches, `recovered` 35 ms later).
  @Test func aKeptWillHeardOnAMonitorsFirstConnectionWaitsForTheAgent() async throws {
    let (space, broker, publisher) = try await Self.brokerAndPublisher()
    defer { broker.stop() }
    let topic = FleetTopics.agent(site: "ward-a", agent: "station")
    try await publisher.publish(topic, payload: Self.presence(online: false), qos: 1, retain: true)
    // Another agent's will, which its agent does not follow: offline once the grace is over.
    try await publisher.publish(FleetTopics.agent(site: "ward-a", agent: "lobby"),
                                payload: AgentState(agent: "lobby", online: false, watches: ["room-9"]).encoded(), qos: 1, retain: true)
    let events = Inbox<MonitorEvent>()
    let alerts = Alerts(directory: space.directory + "/alerts", notifiers: [], filter: try Alerts.parseFilter("all"), offlineAfter: .seconds(60),
                        policy: Backoff.Policy(initial: .milliseconds(10), maximum: .milliseconds(20)), emit: { events.add($0) }, notice: { _ in })
    await alerts.start()
    let (_, follower) = try await Self.follow(space, broker, alerts: alerts, events: events)
    defer { Task { await follower.stop(grace: .zero) } }
    try await Task.sleep(for: .milliseconds(100))
    try await publisher.publish(topic, payload: Self.presence(online: true), qos: 1, retain: true)
    #expect(await Self.eventually { events.items.contains { $0.watch == "agent:station" && $0.kind == .online } }, "\(events.items.map(\.message))")
    #expect(await Self.eventually { events.items.contains { $0.watch == "agent:lobby" && $0.kind == .offline } }, "\(events.items.map(\.message))")
    #expect(await Self.eventually { events.items.contains { $0.fields["alert"] == .string("agent_offline") } })
    #expect(!events.items.contains { $0.watch == "agent:station" && $0.kind == .offline }, "\(events.items.map(\.message))")
    let raised = events.items.filter { $0.fields["alert"] == .string("agent_offline") }.map(\.watch)
    #expect(raised == ["agent:lobby"], "\(events.items.map(\.message))")
    await publisher.close()
  }

  /// A broker killed and restored from an older save (Mosquitto with persistence) hands the
  /// agents back older desired documents, so every watch is `invalid` (`stale_desired`) — and
  /// stays so: one `invalid` alert per watch, never `recovered` in between while the monitor
  /// reads the restored retained messages, and no `agent_offline` for the agent whose old will
  /// the save held, connected again at once (fresh-eyes fe95 #3).
  /// Also for a monitor killed while the broker was down and started again as it comes back.
  @Test(arguments: [false, true])
  func aBrokerRestoredFromAnOlderSaveRaisesOneInvalidPerWatchAndNoAgentOffline(monitorRestarted: Bool) async throws {
    let watches = ["room-1", "room-2"]
    let site = try await AgentTests.Site(watches: watches, configuration: { port, directory in
      MosquittoBroker.defaultConfiguration(port: port, directory: directory)
        + "persistence true\npersistence_location \(directory)/\nuser \(NSUserName())\n"
    })
    let agent = try await site.agent("station", watches, driftInterval: .seconds(3600))
    #expect(try await site.apply().map(\.verdict.word) == ["applied", "applied"])
    // The save the broker will come back from: the first revisions, and the agent's will (the
    // broker sent it once, as the agent's connection broke, and kept it, retained).
    let will = try MQTTClient(address: site.broker.address, configuration: .init(clientID: "will"), onMessage: { _ in })
    will.connect()
    try await will.ready(within: .seconds(120))
    try await will.publish(FleetTopics.agent(site: "ward-a", agent: "station"), payload: AgentState(agent: "station", online: false, watches: watches).encoded(),
                           qos: 1, retain: true)
    await will.close()
    let file = site.space.directory + "/mosquitto.db", saved = site.space.directory + "/saved-mosquitto.db"
    site.broker.stop()
    try FileManager.default.copyItem(atPath: file, toPath: saved)
    site.broker = try site.broker.restart()
    for name in watches { try site.manifest(name, contacts: ["A", "B"]) }
    #expect(try await site.apply().map(\.verdict.word) == ["applied", "applied"])
    var current: [String: String] = [:]
    for name in watches { current[name] = try #require(await agent.status(of: name)?.appliedRevision) }
    let revisions = current
    func monitor(within: Duration = .seconds(120)) async throws -> (Inbox<MonitorEvent>, Alerts, StatusBoard, FleetMonitor.Follower) {
      let events = Inbox<MonitorEvent>()
      let alerts = Alerts(directory: site.space.directory + "/alerts", notifiers: [], filter: try Alerts.parseFilter("all"), offlineAfter: .seconds(60),
                          policy: Backoff.Policy(initial: .milliseconds(10), maximum: .milliseconds(20)), emit: { events.add($0) }, notice: { _ in })
      await alerts.start()
      let board = StatusBoard(members: watches.map { StatusBoard.Member(name: $0, device: "memory:\($0)") }, offlineThreshold: .seconds(3600))
      let follower = try FleetMonitor.Follower(site: "ward-a", settings: site.settings, outboxDirectory: site.space.directory + "/outbox",
                                               eventsDirectory: site.space.directory + "/monitor-events", notifiers: [],
                                               delivery: Backoff.Policy(initial: .milliseconds(50), maximum: .seconds(1)),
                                               emit: { events.add($0) }, notice: { _ in }, observers: [board, alerts],
                                               names: Dictionary(uniqueKeysWithValues: watches.map { ($0, $0) }),
                                               revisions: { name in .success(revisions[name].map { [$0] } ?? []) })
      try await follower.start(within: within)
      return (events, alerts, board, follower)
    }
    var (events, alerts, board, follower) = try await monitor()
    #expect(await Self.eventually { board.snapshot().rows.allSatisfy { $0.state == "in sync" } }, "\(board.snapshot().rows.map(\.state))")
    // Killed, and back from the older save.
    kill(site.broker.processIdentifier, SIGKILL)
    site.broker.stop()
    if monitorRestarted {
      #expect(await Self.eventually { events.items.contains { $0.watch == "monitor:ward-a" && $0.kind == .offline } })
      await follower.stop(grace: .zero)
      await alerts.stop(grace: .zero)
      (events, alerts, board, follower) = try await monitor(within: .milliseconds(200))
    }
    try FileManager.default.removeItem(atPath: file)
    try FileManager.default.copyItem(atPath: saved, toPath: file)
    site.broker = try site.broker.restart()
    #expect(await Self.eventually { events.items.contains { $0.watch == "monitor:ward-a" && $0.kind == .online } }, "\(events.items.map(\.message))")
    #expect(await Self.eventually { board.snapshot().rows.allSatisfy { $0.state == "invalid" } }, "\(board.snapshot().rows.map(\.state))")
    // Longer than a will heard live waits before it is believed.
    try await Task.sleep(for: .seconds(3))
    let alerted = events.items.filter { $0.kind == .alert }
    for name in watches {
      let invalid = alerted.filter { $0.watch == name && $0.fields["alert"] == .string("invalid") }
      let recovered = alerted.filter { $0.watch == name && $0.fields["recovers"] == .string("invalid") }
      #expect(invalid.count == 1 && recovered.isEmpty, "\(name): \(events.items.map(\.jsonLine).joined(separator: "\n"))")
    }
    #expect(!alerted.contains { $0.fields["alert"] == .string("agent_offline") }, "\(alerted.map(\.message))")
    #expect(!events.items.contains { $0.watch == "agent:station" && $0.kind == .offline }, "\(events.items.map(\.message))")
    #expect(board.snapshot().rows.allSatisfy { $0.state == "invalid" }, "\(board.snapshot().rows.map(\.state))")
    await follower.stop(grace: .zero)
    await alerts.stop(grace: .zero)
    await agent.stop()
  }

  /// A client publishing as the agents' side would (retained presences and statuses), connected.
  static func agentsSide(_ broker: MosquittoBroker) async throws -> MQTTClient {
    let client = try MQTTClient(address: broker.address, configuration: .init(clientID: "agents-side"), onMessage: { _ in })
    client.connect()
    try await client.ready(within: .seconds(120))
    return client
  }

  /// Publishes, retained, agent `agent`'s presence serving `watches` (online since a time, or not).
  static func announce(_ client: MQTTClient, _ agent: String, online: Bool = true, watches: [String] = ["room-1"]) async throws {
    let list = watches.map { "\"\($0)\"" }.joined(separator: ",")
    let payload = #"{"agent":"\#(agent)","format_version":"1","online":\#(online),"since":"\#(InternetTime.text(Date()))","watches":[\#(list)]}"#
    try await client.publish(FleetTopics.agent(site: "ward-a", agent: agent), payload: Array(payload.utf8), qos: 1, retain: true)
  }

  /// A second online agent announcing a watch another already serves: both apply to it and its
  /// status is whichever spoke last. The page says so first (as `status --fleet` does) while
  /// both are online, and stops once one of them is gone.
  @Test func aWatchTwoOnlineAgentsServeIsSaidOnThePage() async throws {
    let (space, broker, _, _) = try Self.site()
    defer { broker.stop() }
    let client = try await Self.agentsSide(broker)
    func announce(_ agent: String, online: Bool) async throws { try await Self.announce(client, agent, online: online) }
    let status = #"{"agent":"station","applied_revision":"aaaa","device":"memory:room-1","drift":0,"format_version":"1","#
      + #""last_seen":"2026-12-05T12:00:00.000Z","pending":0,"result":"applied","revision":"aaaa","watch":"room-1"}"#
    try await client.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .status), payload: Array(status.utf8), qos: 1, retain: true)
    try await announce("station", online: true)
    let events = Inbox<MonitorEvent>()
    let (board, follower) = try await Self.follow(space, broker, events: events, revisions: { _ in .success(["aaaa"]) })
    let clash = "Served by more than one agent at once (second, station)"
    #expect(await Self.eventually { board.snapshot().rows.first?.state == "in sync" })
    #expect(board.snapshot().rows.first?.reasons == [], "\(board.snapshot().rows.first?.reasons ?? [])")
    try await announce("second", online: true)
    #expect(await Self.eventually { board.snapshot().rows.first?.reasons.first?.hasPrefix(clash) == true },
            "\(board.snapshot().rows.first?.reasons ?? [])")
    // Not the last status's "in sync" beside it: not known, as `status --fleet` says (fe102 #9),
    // the clash said once.
    #expect(board.snapshot().rows.first?.state == "no status" && board.snapshot().rows.first?.reasons.count == 1,
            "\(String(describing: board.snapshot().rows.first))")
    // The second one reports last, then goes (its will): served by one again, and not offline —
    // the first, online, still announces it (fresh-eyes finding: shown offline with the agent
    // that went, while the other reported on it).
    try await client.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .status),
                             payload: Array(status.replacingOccurrences(of: #""agent":"station""#, with: #""agent":"second""#)
                               .replacingOccurrences(of: "12:00:00", with: "12:00:05").utf8), qos: 1, retain: true)
    try await Task.sleep(for: .milliseconds(300))
    let will = #"{"agent":"second","format_version":"1","online":false,"since":"2026-12-05T01:00:00Z","watches":["room-1"]}"#
    try await client.publish(FleetTopics.agent(site: "ward-a", agent: "second"), payload: Array(will.utf8), qos: 1, retain: true)
    // Its last status is the one that went: what the watch holds is not known until the one
    // serving it reports again — not "in sync" from the agent that left (fresh-eyes fe100 #2).
    #expect(await Self.eventually { board.snapshot().rows.first?.reasons.first?.hasPrefix(clash) == false },
            "\(board.snapshot().rows.first?.reasons ?? [])")
    try await Task.sleep(for: .milliseconds(300))
    #expect(board.snapshot().rows.first?.state == "no status"
              && board.snapshot().rows.first?.reasons.first?.contains("its last status came from agent second, which no longer serves it") == true
              && board.snapshot().rows.first?.reasons.first?.contains("until agent station, serving it now, reports on it") == true,
            "\(String(describing: board.snapshot().rows.first))")
    try await client.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .status), payload: Array(status.replacingOccurrences(of: "12:00:00", with: "12:00:09").utf8),
                             qos: 1, retain: true)
    #expect(await Self.eventually { board.snapshot().rows.first?.state == "in sync" && board.snapshot().rows.first?.reasons == [] },
            "\(String(describing: board.snapshot().rows.first))")
    #expect(!events.items.contains { $0.kind == .offline && $0.watch == "r1" }, "\(events.items.map(\.message))")
    await follower.stop(grace: .zero)
    await client.close()
  }

  /// A watch moved to another agent that has not reported on it yet: `status --fleet` says
  /// what it holds is not known until that agent reports, naming it as the agent — not
  /// `offline` with the agent it left, nor `in sync` from the status of an agent that let it go
  /// (fresh-eyes fe100 #2, #3), as the page says it.
  @Test(arguments: ["went offline", "let it go"])
  func aWatchMovedToAnotherAgentIsNotKnownUntilThatOneReports(_ how: String) async throws {
    let (space, broker, _, _) = try Self.site()
    defer { broker.stop() }
    try space.oneWatch("version: 1\n")
    let client = try await Self.agentsSide(broker)
    let document = DesiredDocument(manifest: try manifest("version: 1\n", file: "residents/room-1.yaml"), allowDestroy: false, watch: "room-1")
    try await client.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .desired), payload: document.encoded(), qos: 1, retain: true)
    let status = #"{"agent":"station","applied_revision":"\#(document.revision)","device":"sim:watches/room-1.json","drift":0,"format_version":"1","#
      + #""last_seen":"2026-12-05T12:00:00.000Z","pending":0,"result":"applied","revision":"\#(document.revision)","watch":"room-1"}"#
    try await client.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .status), payload: Array(status.utf8), qos: 1, retain: true)
    // Presences of now (one from before the broker started is taken as kept from an earlier run).
    func announce(_ agent: String, online: Bool = true, watches: [String] = ["room-1"]) async throws {
      let list = watches.map { "\"\($0)\"" }.joined(separator: ",")
      let payload = #"{"agent":"\#(agent)","format_version":"1","online":\#(online),"since":"\#(InternetTime.text(Date()))","watches":[\#(list)]}"#
      try await client.publish(FleetTopics.agent(site: "ward-a", agent: agent), payload: Array(payload.utf8), qos: 1, retain: true)
    }
    if how == "went offline" { try await announce("station", online: false) } else { try await announce("station", watches: []) }
    try await announce("other")
    let rows = try await FleetStatus.broker(try space.load([]).members, site: "ward-a", settings: BrokerSettings(address: broker.address),
                                            timeout: .seconds(120)).rows
    #expect(rows.first?.state == "no status" && rows.first?.agent?.id == "other" && rows.first?.agent?.online == true, "\(rows)")
    #expect(rows.first?.note?.contains("its last status came from agent station, which no longer serves it (applied, read at 2026-12-05T12:00:00.000Z)") == true
              && rows.first?.note?.contains("until agent other, serving it now, reports on it") == true, "\(rows.first?.note ?? "")")
    await client.close()
  }

  /// The agent takes a watch's status down (it holds none of its own: its state folder new,
  /// `FleetAgent` publishes an empty retained status): the page stops showing the status it
  /// had — not "in sync" from what an earlier agent knew (fresh-eyes finding: SOS off on the
  /// watch, the page in sync with nothing needing attention) — and says what it holds is not
  /// known.
  @Test func aStatusTakenDownIsNoLongerShown() async throws {
    let (space, broker, _, _) = try Self.site()
    defer { broker.stop() }
    let client = try await Self.agentsSide(broker)
    let status = #"{"agent":"station","applied_revision":"aaaa","device":"memory:room-1","drift":0,"format_version":"1","#
      + #""last_seen":"2026-12-05T12:00:00.000Z","pending":0,"result":"applied","revision":"aaaa","watch":"room-1"}"#
    try await client.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .status), payload: Array(status.utf8), qos: 1, retain: true)
    try await Self.announce(client, "station", watches: ["room-1"])
    let events = Inbox<MonitorEvent>()
    let (board, follower) = try await Self.follow(space, broker, events: events, revisions: { _ in .success(["aaaa"]) })
    #expect(await Self.eventually { board.snapshot().rows.first?.state == "in sync" })
    try await client.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .status), payload: [], qos: 1, retain: true)
    #expect(await Self.eventually { board.snapshot().rows.first?.state == "no status" }, "\(String(describing: board.snapshot().rows.first))")
    let row = try #require(board.snapshot().rows.first)
    #expect(row.drift == nil && row.reasons.first?.contains("what it holds is not known") == true, "\(row)")
    await follower.stop(grace: .zero)
    await client.close()
  }

  /// The agent that last reported on a watch restarted with another device list: online, it no
  /// longer announces the watch, and no other agent does. The page says no one serves it — not
  /// "in sync" from its last status (fresh-eyes finding: SOS off and a press heard by no one,
  /// shown in sync with nothing needing attention); given to an agent again, it is in sync.
  @Test func aWatchItsAgentNoLongerServesIsSaidToBeServedByNoOne() async throws {
    let (space, broker, _, _) = try Self.site()
    defer { broker.stop() }
    let client = try await Self.agentsSide(broker)
    func announce(_ watches: [String], agent: String = "station") async throws { try await Self.announce(client, agent, watches: watches) }
    let status = #"{"agent":"station","applied_revision":"aaaa","device":"memory:room-1","drift":0,"format_version":"1","#
      + #""last_seen":"2026-12-05T12:00:00.000Z","pending":0,"result":"applied","revision":"aaaa","watch":"room-1"}"#
    try await client.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .status), payload: Array(status.utf8), qos: 1, retain: true)
    try await announce(["room-1", "room-2"])
    let events = Inbox<MonitorEvent>()
    let (board, follower) = try await Self.follow(space, broker, events: events, revisions: { _ in .success(["aaaa"]) })
    #expect(await Self.eventually { board.snapshot().rows.first?.state == "in sync" })
    try await announce(["room-2"])
    #expect(await Self.eventually { board.snapshot().rows.first?.state == "no status" }, "\(String(describing: board.snapshot().rows.first))")
    let row = try #require(board.snapshot().rows.first)
    #expect(row.reasons.first?.contains("agent station no longer serves the watch room-1") == true
            && row.reasons.first?.contains("its SOS presses reach no one") == true, "\(row.reasons)")
    #expect(row.needsAttention && row.drift == nil, "\(row)")
    // Another agent announces it: served again, and not known until it reports (fresh-eyes
    // fe100 #2: "in sync" from the agent that let it go); its status follows.
    try await announce(["room-1"], agent: "other")
    #expect(await Self.eventually { board.snapshot().rows.first?.reasons.first?.contains("until agent other, serving it now, reports on it") == true },
            "\(String(describing: board.snapshot().rows.first))")
    try await client.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .status),
                             payload: Array(status.replacingOccurrences(of: #""agent":"station""#, with: #""agent":"other""#).utf8), qos: 1, retain: true)
    #expect(await Self.eventually { board.snapshot().rows.first?.state == "in sync" }, "\(String(describing: board.snapshot().rows.first))")
    await follower.stop(grace: .zero)
    await client.close()
  }

  /// An agent that goes while a broker with its default settings (no persistence) is down: the
  /// restarted broker never sends its will. The monitor, connected again, takes an agent it has
  /// not heard from since as offline once agents have had time to reconnect — with why — not
  /// online for as long as the page stays open (fresh-eyes finding).
  @Test func anAgentThatWentWhileTheBrokerRestartedWithoutItsSessionsIsOffline() async throws {
    let (space, started, _, engine) = try Self.site(configuration: MosquittoBroker.defaultConfiguration)
    var broker = started
    defer { broker.stop() }
    let agent = try await Self.station(engine, broker)
    let events = Inbox<MonitorEvent>()
    let board = StatusBoard(members: [StatusBoard.Member(name: "r1", device: "bridge:ward-a/room-1")], offlineThreshold: .seconds(3600))
    let follower = try FleetMonitor.Follower(site: "ward-a", settings: BrokerSettings(address: broker.address),
                                             outboxDirectory: space.directory + "/outbox", eventsDirectory: space.directory + "/monitor-events",
                                             notifiers: [], delivery: Backoff.Policy(initial: .milliseconds(50), maximum: .seconds(1)),
                                             emit: { events.add($0) }, notice: { _ in }, observers: [board], names: ["room-1": "r1"],
                                             unheardSettle: .seconds(2))
    try await follower.start(within: .seconds(120))
    #expect(await Self.eventually { events.items.contains { $0.kind == .online && $0.watch == "agent:station" } })
    broker.stop()
    await agent.abandon()
    broker = try broker.restart()
    #expect(await Self.eventually { events.items.contains { $0.kind == .online && $0.watch == "monitor:ward-a" } }, "\(events.items.map(\.message))")
    #expect(await Self.eventually { events.items.contains { $0.kind == .offline && $0.watch == "agent:station" } }, "\(events.items.map(\.message))")
    let offline = try #require(events.items.last { $0.kind == .offline && $0.watch == "agent:station" })
    #expect(offline.message.contains("not heard from since this monitor connected to the broker again"), "\(offline.message)")
    #expect(await Self.eventually { board.snapshot().rows.first?.state == "offline" }, "\(String(describing: board.snapshot().rows.first))")
    await follower.stop(grace: .zero)
  }

  /// A broker restarted with its default settings (no persistence: its retained messages are
  /// lost) while the monitor and the agent run, an SOS pressed during the outage: the agent
  /// publishes it when it reconnects, before or after the monitor does; either way the monitor
  /// delivers it once (live, or from the list the agent published again).
  @Test func anSOSPressedWhileTheBrokerRestartsIsDeliveredOnce() async throws {
    let (space, started, scheme, engine) = try Self.site(configuration: MosquittoBroker.defaultConfiguration)
    var broker = started
    defer { broker.stop() }
    let agent = try await Self.station(engine, broker)
    let recorder = Recorder()
    let events = Inbox<MonitorEvent>()
    let monitor = try await Self.follower(space, broker, recorder, events)
    _ = await events.wait(for: 1)
    // Before the outage one press; during it another.
    try scheme.device("room-1").simulateSOSPress()
    _ = await recorder.delivered.wait(for: 1)
    broker.stop()
    try scheme.device("room-1").simulateSOSPress()
    broker = try broker.restart()
    let bodies = await recorder.delivered.wait(for: 2)
    #expect(bodies.count == 2, "\(events.items.map(\.jsonLine))")
    // Whatever comes later (the list published again at each connection) delivers nothing more.
    try await agent.ready(within: .seconds(120))
    try await Task.sleep(for: .seconds(1))
    let ids = events.items.filter { $0.kind == .sos }.map(\.id)
    #expect(ids.count == 2 && Set(ids).count == 2, "\(ids)")
    #expect(recorder.delivered.items.count == 2)
    await monitor.stop(grace: .seconds(1))
    await agent.abandon()
  }
}
