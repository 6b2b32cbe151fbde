import Foundation
import Testing
import TSDevice
import TSEngine
@testable import TSFleet
import TSManifest
import TSModel
import TSMonitor
import TSMQTT
import TSPlan
import TSTestSupport

/// Agents end to end through a real Mosquitto on 127.0.0.1: desired documents published,
/// applied through the engine, statuses back; an agent that vanishes and returns; duplicate
/// deliveries; a revision published while an apply runs; the safety gate across the broker.
@Suite struct AgentTests {
  /// A broker, in-memory watches, and a fleet file whose transport is the broker.
  final class Site: @unchecked Sendable {
    let space: FleetSpace
    var broker: MosquittoBroker
    let scheme: MemoryScheme
    let engine: Engine
    var settings: BrokerSettings { BrokerSettings(address: broker.address) }

    init(watches: [String], latency: SimulationOptions.Latency? = nil, faults: [SimulationOptions.Fault] = [],
         configuration: @escaping @Sendable (Int, String) -> String = MosquittoBroker.openConfiguration) async throws {
      space = try FleetSpace()
      broker = try await MosquittoBroker.started(in: space.directory, configuration: configuration)
      scheme = MemoryScheme(options: SimulationOptions(latency: latency, faults: faults))
      engine = Engine(registry: DeviceRegistry(schemes: [scheme], defaultSpec: "memory:default"),
                      environment: ["TSAPPLY_STATE_DIR": space.directory + "/state"], currentDirectory: space.directory)
      try space.write("wards/ward-a.yaml", "reminders:\n  custom:\n    - {name: Lunch, at: [\"12:00\"]}\n")
      try fleet(watches)
      for name in watches { try manifest(name, contacts: ["Family \(name)"]) }
    }

    deinit { broker.stop() }

    func fleet(_ watches: [String]) throws {
      var text = "defaults: wards/ward-a.yaml\ntransport: \(broker.address)\nsite: ward-a\nwatches:\n"
      for name in watches { text += "  \(name): {device: \"memory:\(name)\", manifest: residents/\(name).yaml}\n" }
      try space.write("fleet.yaml", text)
    }

    func manifest(_ name: String, contacts: [String], extra: String = "") throws {
      var text = contacts.isEmpty ? "contacts: []\n" : "contacts:\n"
      for (index, contact) in contacts.enumerated() { text += "  - {name: \(contact), phone: \"+1555010\(index)\"}\n" }
      try space.write("residents/\(name).yaml", text + extra)
    }

    /// An agent serving `watches` as `id`.
    func agent(_ id: String, _ watches: [String], driftInterval: Duration = .zero, engine: Engine? = nil,
               log: @escaping @Sendable (String) -> Void = { _ in }) async throws -> FleetAgent {
      let engine = engine ?? self.engine
      var served: [(id: String, watch: Watch)] = []
      for name in watches { served.append((name, try await engine.open("memory:\(name)"))) }
      let agent = try FleetAgent(configuration: .init(broker: settings, site: "ward-a", agentID: id, driftInterval: driftInterval,
                                                      retryDelay: (.milliseconds(200), .seconds(1))),
                                 watches: served, log: log)
      await agent.start()
      try await agent.ready(within: .seconds(120))
      // A publisher sends publications only to an agent it has seen announce them (retained):
      // wait until the broker holds the announcement, so a loaded machine does not race it.
      let announced = Inbox<Bool>()
      let probe = try MQTTClient(address: broker.address,
                                 configuration: .init(clientID: "probe-\(id)", subscriptions: [FleetTopics.agent(site: "ward-a", agent: id)]),
                                 onMessage: { message in
                                   if String(decoding: message.payload, as: UTF8.self).contains("publication") { announced.add(true) }
                                 })
      probe.connect()
      _ = await announced.wait(for: 1)
      await probe.close()
      return agent
    }

    /// The first watch's row of `status --fleet` over the broker, read until `done` holds of it
    /// (every 50 ms, at most `tries` reads); the last read.
    func row(tries: Int = 1, until done: (FleetStatusRow?) -> Bool = { _ in true }) async throws -> FleetStatusRow? {
      var seen: FleetStatusRow?
      for attempt in 0..<max(tries, 1) {
        if attempt > 0 { try await Task.sleep(for: .milliseconds(50)) }
        seen = try await FleetStatus.broker(try space.load([]).members, site: "ward-a", settings: settings, timeout: .seconds(120)).rows.first
        if done(seen) { break }
      }
      return seen
    }

    /// `apply --fleet` over the broker.
    func apply(_ selection: [String] = [], allowDestroy: Bool = false, wait: Duration = .seconds(120)) async throws -> [FleetWatchReport] {
      let loaded = try space.load(selection)
      return try await FleetPublication.apply(loaded.members, site: "ward-a", settings: settings, allowDestroy: allowDestroy, wait: wait)
    }

    /// A client following the site's events, as `monitor --fleet` does, and what it received.
    func events() async throws -> (Inbox<FleetEvent>, MQTTClient) {
      let events = Inbox<FleetEvent>()
      let listener = try MQTTClient(address: broker.address,
                                    configuration: .init(clientID: "monitor", subscriptions: [FleetTopics.every(.events, site: "ward-a")]),
                                    onMessage: { message in FleetEvent.decode(message.payload).map(events.add) })
      listener.connect()
      try await listener.ready(within: .seconds(120))
      return (events, listener)
    }

    /// What a client `clientID` subscribed to `topic` reads, each message decoded with `decode`
    /// (those it cannot are dropped), and the client (the caller closes it).
    func read<T: Sendable>(_ topic: String, as clientID: String, _ decode: @escaping @Sendable ([UInt8]) -> T?) async throws -> (Inbox<T>, MQTTClient) {
      let read = Inbox<T>()
      let client = try MQTTClient(address: broker.address, configuration: .init(clientID: clientID, subscriptions: [topic]),
                                  onMessage: { message in decode(message.payload).map(read.add) })
      client.connect()
      try await client.ready(within: .seconds(120))
      return (read, client)
    }

    func contacts(_ name: String) async throws -> [String] {
      try await scheme.device(name).getAllContacts().map(\.name)
    }
  }

  /// Published for a watch no agent has ever announced: `no status` (not known), not
  /// "pending: agent ? is offline … may hold part of it" (fresh-eyes finding: `drift --fleet`
  /// exited 0 for it).
  @Test func aPublishedWatchNoAgentAnnouncedIsNoStatus() async throws {
    let site = try await Site(watches: ["room-1"])
    _ = try await site.apply(wait: .zero)
    let members = try site.space.load([]).members
    let row = try await FleetStatus.broker(members, site: "ward-a", settings: site.settings, timeout: .seconds(120)).rows.first
    #expect(row?.state == "no status", "\(String(describing: row))")
    #expect(row?.note?.contains("is published, but no agent has announced the watch") == true, "\(row?.note ?? "")")
    #expect(row?.mayHoldPart == false)
  }

  /// A presence kept by a broker restored from a save says "online" for an agent that died
  /// meanwhile (its Last Will is never sent): one that says it connected before the broker
  /// started (its retained `$SYS/broker/uptime`) is taken as offline, saying why — not "in sync",
  /// exit 0, for watches changed since (fresh-eyes finding). A live agent, connected since, is online.
  @Test func aPresenceFromBeforeTheBrokerStartedIsOffline() async throws {
    let site = try await Site(watches: ["room-1", "room-2"])
    let station = try await site.agent("station", ["room-1"])
    let live = try await site.agent("live", ["room-2"])
    try site.manifest("room-1", contacts: ["A"])
    try site.manifest("room-2", contacts: ["A"])
    #expect(try await site.apply().map(\.verdict.word) == ["applied", "applied"])
    await station.stop()
    // What a broker's save held when station died: station online since two minutes before
    // this broker started, its watch's status in sync.
    let publisher = try MQTTClient(address: site.broker.address, configuration: .init(clientID: "restored"), onMessage: { _ in })
    publisher.connect()
    try await publisher.ready(within: .seconds(120))
    let since = InternetTime.text(Date().addingTimeInterval(-120))
    let presence = #"{"agent":"station","format_version":"1","online":true,"since":"\#(since)","watches":["room-1"]}"#
    try await publisher.publish(FleetTopics.agent(site: "ward-a", agent: "station"), payload: Array(presence.utf8), qos: 1, retain: true)
    await publisher.close()
    let rows = try await FleetStatus.broker(try site.space.load([]).members, site: "ward-a", settings: site.settings, timeout: .seconds(120)).rows
    #expect(rows.first?.agent?.online == false, "\(rows)")
    #expect(rows.first?.state == "offline" && rows.first?.note?.contains("kept by the broker from before it restarted") == true, "\(rows)")
    #expect(rows.last?.agent?.online == true && rows.last?.state == "in sync", "\(rows)")
    let view = try FleetBrokerView(settings: site.settings, site: "ward-a")
    try await view.connect(within: .seconds(120))
    #expect(view.agents["station"]?.online == false)
    #expect(view.presenceNote("station")?.contains("kept by the broker from before it restarted") == true, "\(view.presenceNote("station") ?? "")")
    #expect(view.agents["live"]?.online == true && view.presenceNote("live") == nil)
    await view.close()
    await live.stop()
  }

  /// An agent restarted serving fewer watches: the one it dropped keeps its last retained
  /// status (in sync), but no online agent announces it — `no status`, served by no one, not
  /// in sync (fresh-eyes finding: SOS off and a press nobody heard, shown in sync, exit 0).
  @Test func aWatchItsAgentNoLongerServesIsServedByNoOne() async throws {
    let site = try await Site(watches: ["room-1", "room-2"])
    let first = try await site.agent("station", ["room-1", "room-2"])
    #expect(try await site.apply().map(\.verdict.word) == ["applied", "applied"])
    await first.stop()
    let again = try await site.agent("station", ["room-2"])
    let rows = try await FleetStatus.broker(try site.space.load([]).members, site: "ward-a", settings: site.settings, timeout: .seconds(120)).rows
    #expect(rows.map(\.state) == ["no status", "in sync"], "\(rows)")
    #expect(rows.first?.note?.contains("agent station no longer serves the watch room-1") == true, "\(rows.first?.note ?? "")")
    #expect(rows.first?.drift == nil && rows.first?.pending == nil)
    #expect(rows.map(\.servedByNoOne) == [true, false], "\(rows)")
    // A revision published for it is applied by no one: not "pending … it applies revision …
    // when it can" (exit 0), but not applied, saying why (fresh-eyes finding).
    try site.manifest("room-1", contacts: ["A", "B"])
    let published = try await site.apply(["room-1"], wait: .seconds(3))
    #expect(published.map(\.verdict.word) == ["failed"], "\(published.map(\.verdict))")
    #expect(published.first?.verdict.isFailure == true)
    guard case .failed(let reason)? = published.first?.verdict else { return }
    #expect(reason.hasPrefix("not applied: agent station no longer serves the watch room-1"), "\(reason)")
    await again.stop()
  }

  @Test func publishedRevisionsConvergeAndTheStatusesTellIt() async throws {
    let site = try await Site(watches: ["room-1", "room-2"])
    let agent = try await site.agent("station", ["room-1", "room-2"])
    let rows = try await site.apply()
    #expect(rows.map(\.verdict.word) == ["applied", "applied"])
    #expect(rows.first?.verdict.changesText == "+1 ~1 -0")
    #expect(try await site.contacts("room-1") == ["Family room-1"])
    #expect(try await site.scheme.device("room-2").fetchAllReminders().map(\.reminderName).contains("Lunch"))
    let applied = try #require(await agent.status(of: "room-1"))
    #expect(applied.result == .applied)
    #expect(applied.publication != nil && applied.publication == rows.first?.publication)
    // The same manifests again: a new publication, which the agent answers after checking the
    // watch through the engine: it still matches, so nothing is written.
    let again = try await site.apply()
    #expect(again.map(\.verdict.word) == ["no changes", "no changes"])
    #expect(agent.statistics.applies == 4)
    let status = try #require(await agent.status(of: "room-1"))
    #expect(status.result == .noChanges)
    #expect(status.appliedRevision == status.revision)
    #expect(status.publication == again.first?.publication)
    #expect(status.publication != applied.publication)
    #expect(status.lastApplied == applied.lastApplied)
    #expect(status.lastSeen != nil && status.lastApplied != nil)
    // The retained status and presence are what a later reader sees.
    let view = try FleetBrokerView(settings: site.settings, site: "ward-a")
    try await view.connect(within: .seconds(120))
    #expect(view.statuses["room-2"]?.status.result == .noChanges)
    #expect(view.agents["station"]?.online == true)
    #expect(view.agents["station"]?.watches == ["room-1", "room-2"])
    #expect(view.agents["station"]?.announces(.publication) == true)
    await view.close()
    await agent.stop()
  }

  @Test func aWatchWhoseAgentIsOfflineIsPendingAndConvergesWhenItReturns() async throws {
    let site = try await Site(watches: ["room-1"])
    var agent = try await site.agent("station", ["room-1"])
    #expect(try await site.apply().map(\.verdict.word) == ["applied"])
    await agent.abandon()
    // The broker publishes the will; the publisher sees the agent offline.
    let view = try FleetBrokerView(settings: site.settings, site: "ward-a")
    try await view.connect(within: .seconds(120))
    for _ in 0..<200 where view.agents["station"]?.online != false { try await Task.sleep(for: .milliseconds(20)) }
    #expect(view.agents["station"]?.online == false)
    try site.manifest("room-1", contacts: ["Family room-1", "Neighbour"])
    // Offline when the publication begins: waited for during the grace (`--wait`, at most 30 s),
    // then pending.
    let rows = try await site.apply(wait: .seconds(2))
    guard case .pending(let reason) = rows.first?.verdict else { Issue.record("not pending: \(rows)"); return }
    #expect(reason.hasPrefix("agent station is offline (waited for 2s); it applies revision "), "\(reason)")
    #expect(FleetPublication.offlineGrace(.seconds(120)) == .seconds(30))
    #expect(try await site.contacts("room-1") == ["Family room-1"])
    // Back, with its kept session: the queued document is applied without a re-publish.
    agent = try await site.agent("station", ["room-1"])
    for _ in 0..<250 where try await site.contacts("room-1").count < 2 { try await Task.sleep(for: .milliseconds(20)) }
    #expect(try await site.contacts("room-1") == ["Family room-1", "Neighbour"])
    for _ in 0..<250 where view.statuses["room-1"]?.status.revision != (rows.first?.details["revision"]).flatMap({ if case .string(let r) = $0 { r } else { nil } }) {
      try await Task.sleep(for: .milliseconds(20))
    }
    #expect(view.statuses["room-1"]?.status.result == .applied)
    #expect(view.agents["station"]?.online == true)
    await view.close()
    await agent.stop()
  }

  /// An agent back with its kept session, two revisions queued for a watch (R2, then R3 that
  /// replaced it while the agent was away): it applies only R3, the newest, never R2 on the way
  /// — its documents are held until its own presence, published after it subscribed, comes
  /// back behind everything the broker queued and retained for it (fresh-eyes fe90 #2: 4 of 4
  /// watches got the withdrawn revision first).
  @Test func anAgentBackOnlineAppliesOnlyTheNewestOfItsQueuedRevisions() async throws {
    let site = try await Site(watches: ["room-1", "room-2"])
    var agent = try await site.agent("station", ["room-1", "room-2"])
    #expect(try await site.apply().map(\.verdict.word) == ["applied", "applied"])
    await agent.abandon()
    for name in ["room-1", "room-2"] { try site.manifest(name, contacts: ["Family \(name)", "Withdrawn"]) }
    _ = try await site.apply(wait: .zero)
    for name in ["room-1", "room-2"] { try site.manifest(name, contacts: ["Family \(name)", "Replacement"]) }
    let newest = try await site.apply(wait: .zero)
    let log = Collector<String>()
    agent = try await site.agent("station", ["room-1", "room-2"], log: { log.append($0) })
    for name in ["room-1", "room-2"] {
      let revision = newest.first { $0.name == name }.flatMap { row -> String? in if case .string(let r)? = row.details["revision"] { r } else { nil } }
      for _ in 0..<500 {
        let status = await agent.status(of: name)
        if try await site.contacts(name).contains("Replacement"), status?.revision == revision, status?.result == .applied { break }
        try await Task.sleep(for: .milliseconds(20))
      }
      #expect(try await site.contacts(name) == ["Family \(name)", "Replacement"])
      let status = await agent.status(of: name)
      #expect(revision != nil && status?.revision == revision, "\(name)")
    }
    // One apply a watch: R3's. R2 applied first made two.
    #expect(agent.statistics.applies == 2, "\(log.values.joined(separator: "\n"))")
    await agent.stop()
  }

  /// An agent says whether a drift of the emergency list puts SOS at risk (`sos_at_risk` in its
  /// drift event and status): short names dropped on the watch do not, a number changed does.
  @Test func anAgentSaysWhetherAnEmergencyDriftPutsSOSAtRisk() async throws {
    let site = try await Site(watches: ["room-1"])
    let agent = try await site.agent("station", ["room-1"])
    let (events, listener) = try await site.events()
    try site.manifest("room-1", contacts: ["A"], extra: "emergency:\n  sos: true\n  contacts:\n    - {name: Mom, phone: \"+15550110\"}\n")
    #expect(try await site.apply().map(\.verdict.word) == ["applied"])
    let device = try site.scheme.device("room-1")
    try device.simulateEmergencyChange(contacts: [Contact(name: "Mom", phoneNum: "+15550110", shortName: "")], sosOn: true)
    let named = await events.wait(for: 1).first
    #expect(named?.kind == .drift && named?.addresses == ["emergency"] && named?.sosAtRisk == false, "\(String(describing: named))")
    for _ in 0..<250 where (await agent.status(of: "room-1"))?.drift != 1 { try await Task.sleep(for: .milliseconds(20)) }
    #expect((await agent.status(of: "room-1"))?.sosAtRisk == false)
    try device.simulateEmergencyChange(contacts: [Contact(name: "Mom", phoneNum: "+15550119", shortName: "")], sosOn: true)
    let renumbered = await events.wait(for: 2).dropFirst().first
    #expect(renumbered?.kind == .drift && renumbered?.sosAtRisk == true, "\(String(describing: renumbered))")
    for _ in 0..<250 where (await agent.status(of: "room-1"))?.sosAtRisk != true { try await Task.sleep(for: .milliseconds(20)) }
    #expect((await agent.status(of: "room-1"))?.sosAtRisk == true)
    // `status --fleet` says it, from the agent's status.
    let row = try await site.row()
    #expect(row?.state == "drift" && row?.sosAtRisk == true && row?.shownNote?.hasPrefix("SOS at risk: ") == true, "\(String(describing: row))")
    await listener.close()
    await agent.stop()
  }

  /// A gap in the watch's events (here: the agent's record resumes after an id of a journal the
  /// watch no longer has, as after a reset) is published once as an `events_missed` error, so
  /// `monitor --fleet` shows it; an agent started again before anything new happened on the
  /// watch finds the same gap and does not publish it again.
  @Test func aGapInTheWatchsEventsIsPublishedOnce() async throws {
    let site = try await Site(watches: ["room-1"])
    let watch = try await site.engine.open("memory:room-1")
    try HandledEvents(path: watch.home.agentEventsPath, watch: watch.identity).handled(DeviceEventID("8ac586f6-7"))
    await watch.close()
    let (events, listener) = try await site.events()
    var agent = try await site.agent("station", ["room-1"])
    let gap = try #require(await events.wait(for: 1).first)
    #expect(gap.kind == .error && gap.reason == "events_missed" && gap.after == "8ac586f6-7" && gap.before != nil, "\(gap)")
    #expect(gap.message.contains("after 8ac586f6-7 and before") && gap.message.hasSuffix("ask the wearer"), "\(gap.message)")
    // Kept in the watch's retained list too, under the same id, for a monitor not connected now.
    let (lists, reader) = try await site.read(FleetTopics.watch(site: "ward-a", watch: "room-1", .sos), as: "reader", RecentSOS.decode)
    let list = await lists.wait(for: 1).first
    #expect(list?.gap?.id == gap.id && gap.id?.hasPrefix("gap-8ac586f6-7-") == true && list?.gap?.reason == "events_missed", "\(String(describing: list))")
    await reader.close()
    await agent.stop()
    agent = try await site.agent("station", ["room-1"])
    try await site.scheme.device("room-1").simulateSOSPress()
    let next = await events.wait(for: 2).dropFirst().first
    #expect(next?.kind == .sos, "the same gap is not published again: \(String(describing: next))")
    await listener.close()
    await agent.stop()
  }

  /// An agent started again after its watch changed while it was down publishes no status from
  /// before the change: the first status of the new start says what the watch holds now (its kept
  /// status, "drift 0", published again first ended the SOS-at-risk alert its check then raised
  /// again: fresh-eyes finding).
  @Test func anAgentStartedAgainPublishesNoStatusFromBeforeItsCheck() async throws {
    let site = try await Site(watches: ["room-1"])
    var agent = try await site.agent("station", ["room-1"])
    try site.manifest("room-1", contacts: ["A"], extra: "emergency:\n  sos: true\n  contacts:\n    - {name: Mom, phone: \"+15550110\"}\n")
    #expect(try await site.apply().map(\.verdict.word) == ["applied"])
    await agent.stop()
    try site.scheme.device("room-1").simulateEmergencyChange(contacts: [], sosOn: false)
    let statuses = Inbox<WatchStatus>()
    let watcher = try MQTTClient(address: site.broker.address,
                                 configuration: .init(clientID: "watcher", subscriptions: [FleetTopics.every(.status, site: "ward-a")]),
                                 onMessage: { message in if !message.retained { WatchStatus.decode(message.payload).map(statuses.add) } })
    watcher.connect()
    try await watcher.ready(within: .seconds(120))
    agent = try await site.agent("station", ["room-1"])
    let first = await statuses.wait(for: 1).first
    #expect(first?.drift == 1 && first?.sosAtRisk == true, "\(String(describing: first))")
    #expect(statuses.items.allSatisfy { $0.drift == 1 }, "\(statuses.items.map(\.drift))")
    await watcher.close()
    await agent.stop()
  }

  @Test func driftAndSOSOnTheWatchAreReportedAndApplyingAgainHealsTheDrift() async throws {
    let site = try await Site(watches: ["room-1"])
    let agent = try await site.agent("station", ["room-1"])
    let (events, listener) = try await site.events()
    try site.manifest("room-1", contacts: ["A", "B", "C"])
    #expect(try await site.apply().map(\.verdict.word) == ["applied"])
    try site.scheme.device("room-1").simulateContactAdd(Contact(name: "Zed", phoneNum: "+15550199"))
    try site.scheme.device("room-1").simulateSOSPress()
    let seen = await events.wait(for: 2)
    #expect(Set(seen.map(\.kind)) == [.drift, .sos])
    #expect(seen.first { $0.kind == .drift }?.message == "1 resource changed on the watch since the last apply: contacts (1 added)")
    // What drifted, by address: a monitor raises `sos_drift` from `emergency` in it.
    #expect(seen.first { $0.kind == .drift }?.addresses == ["contacts"])
    #expect(!seen.contains { $0.message.contains("5550199") })
    for _ in 0..<250 where (await agent.status(of: "room-1"))?.drift != 1 { try await Task.sleep(for: .milliseconds(20)) }
    // Undoing the wearer's contact is not a change of the manifest's own: nothing pending.
    #expect((await agent.status(of: "room-1"))?.pending == 0)
    // The retained status names what drifted too, for a monitor that missed the event.
    #expect((await agent.status(of: "room-1"))?.driftAddresses == ["contacts"])
    // The drift changes, its count not (Zed taken off again, A removed): said again, in its new
    // words (fresh-eyes finding: the page kept "1 added" until the next apply).
    _ = try site.scheme.device("room-1").simulateContactRemove(name: "Zed")
    _ = try site.scheme.device("room-1").simulateContactRemove(name: "A")
    let changed = await events.wait(for: 3).dropFirst(2).first
    #expect(changed?.kind == .drift && changed?.message == "1 resource changed on the watch since the last apply: contacts (1 removed)",
            "\(String(describing: changed))")
    // Applying the same manifests again converges the drifted watch (the contact put back).
    let again = try await site.apply()
    #expect(again.map(\.verdict.changesText) == ["+0 ~1 -0"])
    #expect(try await site.contacts("room-1") == ["A", "B", "C"])
    #expect((await agent.status(of: "room-1"))?.driftAddresses == nil)
    await listener.close()
    await agent.stop()
  }

  /// A drift the next revision does not write over (a built-in reminder the manifests leave
  /// out, toggled on the watch) stays drift in every status the agent publishes: none says
  /// drift 0 in between (fresh-eyes finding: each publication ended the drift and its alert,
  /// and the drift check after raised them again).
  @Test func aDriftTheNextRevisionKeepsIsNeverPublishedAsOver() async throws {
    let site = try await Site(watches: ["room-1"])
    let agent = try await site.agent("station", ["room-1"], driftInterval: .milliseconds(300))
    try site.manifest("room-1", contacts: ["A"])
    #expect(try await site.apply().map(\.verdict.word) == ["applied"])
    _ = try site.scheme.device("room-1").simulateReminderToggle(id: try #require(ReminderKind.drinking.builtInID))
    for _ in 0..<250 where (await agent.status(of: "room-1"))?.drift != 1 { try await Task.sleep(for: .milliseconds(20)) }
    #expect((await agent.status(of: "room-1"))?.drift == 1)
    let published = Locked<[WatchStatus]>([])
    let watcher = try MQTTClient(address: site.broker.address,
                                 configuration: .init(clientID: "status-watcher", subscriptions: [FleetTopics.watch(site: "ward-a", watch: "room-1", .status)]),
                                 onMessage: { message in if let status = WatchStatus.decode(message.payload) { published.mutate { $0.append(status) } } })
    watcher.connect()
    try await watcher.ready(within: .seconds(120))
    try site.manifest("room-1", contacts: ["A", "B"])
    #expect(try await site.apply().map(\.verdict.word) == ["applied"])
    try await Task.sleep(for: .milliseconds(500))
    let after = published.value.filter { $0.appliedRevision == published.value.last?.appliedRevision && $0.result == .applied }
    #expect(!after.isEmpty && after.allSatisfy { $0.drift == 1 && $0.driftAddresses == ["reminder.drinking"] },
            "\(published.value.map { "\($0.result) drift \($0.drift)" })")
    await watcher.close()
    await agent.stop()
  }

  /// The watch's link drops and comes back (`reconnect@N`: the SDK's listeners die with the
  /// connection): the agent listens again, so the next SOS is still published.
  @Test func anSOSAfterTheWatchReconnectedIsStillPublished() async throws {
    let site = try await Site(watches: ["room-1"], faults: [.init(.reconnect, atCall: 30)])
    let (events, listener) = try await site.events()
    let agent = try await site.agent("station", ["room-1"])
    let device = site.scheme.device("room-1")
    var reconnected = false
    for _ in 0..<40 where !reconnected {
      do { _ = try await device.getAllContacts() } catch { reconnected = error.code == .requestCancelledByDisconnect }
    }
    #expect(reconnected, "the fault did not fire within 40 calls")
    try await Task.sleep(for: .milliseconds(200))
    try device.simulateSOSPress()
    let seen = await events.wait(for: 1, within: 30)
    #expect(seen.map(\.kind) == [.sos], "\(seen)")
    await agent.stop()
    await listener.close()
  }

  /// An SOS pressed while the agent is down is published when it starts again, with a stable id,
  /// a sequence number and the time it was pressed (not when the agent came back), and never
  /// again by a later start.
  @Test func anSOSPressedWhileTheAgentIsDownIsPublishedOnceWhenItReturns() async throws {
    let site = try await Site(watches: ["room-1"])
    let (events, listener) = try await site.events()
    try await site.agent("station", ["room-1"]).stop()
    // After the first start listened (a press from before it is not this agent's to publish).
    // To the millisecond, as the watch recorded it (fresh-eyes finding: `….000Z` over MQTT).
    let pressed = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down) + 2.206)
    try site.scheme.device("room-1").simulateSOSPress(at: pressed)
    let second = try await site.agent("station", ["room-1"])
    let replayed = try #require(await events.wait(for: 1).first)
    #expect(replayed.kind == .sos && replayed.sequence == 1 && replayed.profile == "default", "\(replayed)")
    #expect(replayed.time == InternetTime.text(pressed) && replayed.time.hasSuffix(".206Z"), "the press's time: \(replayed)")
    let id = try #require(replayed.id)
    #expect(id.hasPrefix("sos-") && id.hasSuffix("-0000000001"))
    await second.stop()
    // A third start replays nothing: the next event is the next press.
    let third = try await site.agent("station", ["room-1"])
    try site.scheme.device("room-1").simulateSOSPress()
    let next = await events.wait(for: 2)
    #expect(next.map(\.sequence) == [1, 2], "\(next)")
    #expect(next.last?.id != id)
    await third.stop()
    await listener.close()
  }

  /// A press heard while the broker is down, the agent stopped before the broker had its event,
  /// started again once the broker is back: the watch replays the press (never acknowledged),
  /// and the agent publishes it again under the number and id it gave it — one press, one id
  /// (fresh-eyes finding: numbered again, `…-0000000002`, and delivered twice under two ids).
  @Test func aPressReplayedBeforeTheBrokerHadItKeepsItsNumberAndId() async throws {
    let site = try await Site(watches: ["room-1"])
    let first = try await site.agent("station", ["room-1"], driftInterval: .seconds(3600))
    site.broker.stop()
    try site.scheme.device("room-1").simulateSOSPress()
    // Heard and numbered (kept in the agent's record) while the broker cannot have it.
    try await Task.sleep(for: .milliseconds(500))
    await first.stop()
    site.broker = try site.broker.restart()
    let second = try await site.agent("station", ["room-1"], driftInterval: .seconds(3600))
    try await second.ready(within: .seconds(120))
    let (events, listener) = try await site.events()
    let presses = Inbox<RecentSOS>()
    let reader = try MQTTClient(address: site.broker.address,
                                configuration: .init(clientID: "reader", subscriptions: [FleetTopics.watch(site: "ward-a", watch: "room-1", .sos)]),
                                onMessage: { message in (try? JSONDecoder().decode(RecentSOS.self, from: Data(message.payload))).map(presses.add) })
    reader.connect()
    try await reader.ready(within: .seconds(120))
    var list = await presses.wait(for: 1).last
    for _ in 0..<40 where (list?.presses.count ?? 0) < 2 {
      try await Task.sleep(for: .milliseconds(50))
      list = presses.items.last
    }
    #expect(list?.presses.map(\.sequence) == [1], "\(String(describing: list))")
    #expect(events.items.filter { $0.kind == .sos }.allSatisfy { $0.sequence == 1 }, "\(events.items)")
    await second.stop()
    await listener.close()
    await reader.close()
  }

  /// An agent that starts with none of its own records of a watch — its phone's app reinstalled
  /// (same agent id, an empty state folder), or the watch moved to it — while the broker holds
  /// no desired document for the watch (restarted without persistence): it knows nothing of
  /// what the watch should hold, so the status an earlier agent left there is not what the views
  /// show (fresh-eyes finding: SOS switched off on the watch, and the page, `status --fleet`
  /// and `drift --fleet` said "in sync", drift 0, exit 0), and it reads the watch at once, so
  /// what the watch holds is published.
  @Test func anAgentWithNoRecordOfAWatchTakesTheStatusLeftForItDown() async throws {
    let site = try await Site(watches: ["room-1"])
    try site.manifest("room-1", contacts: ["A"], extra: "emergency:\n  sos: true\n  contacts:\n    - {contact: A}\n")
    let first = try await site.agent("station", ["room-1"], driftInterval: .seconds(3600))
    #expect(try await site.apply().map(\.verdict.word) == ["applied"])
    await first.stop()
    // The broker loses every retained message; the agent comes back with its records and
    // publishes its status again (in sync), then its phone's app is reinstalled.
    site.broker.stop()
    site.broker = try site.broker.restart()
    let again = try await site.agent("station", ["room-1"], driftInterval: .seconds(3600))
    var seen = try await site.row(tries: 200) { $0?.drift == 0 }
    // The broker lost the desired document too; what the agent said of the watch stands.
    #expect(seen?.drift == 0 && seen?.state == "no desired document", "\(String(describing: seen))")
    await again.stop()
    let reinstalled = Engine(registry: site.engine.registry, environment: ["TSAPPLY_STATE_DIR": site.space.directory + "/state-2"],
                             currentDirectory: site.space.directory)
    let fresh = try await site.agent("station", ["room-1"], driftInterval: .seconds(3600), engine: reinstalled)
    try site.scheme.device("room-1").simulateEmergencyChange(contacts: [], sosOn: false)
    seen = try await site.row(tries: 100) { $0?.drift != 0 }
    #expect(seen?.state == "no status" && seen?.drift == nil, "no drift said of a watch nobody knows the drift of: \(String(describing: seen))")
    await fresh.stop()
  }

  /// A broker whose ACL lets the agent write its presence but not read it: its presence never
  /// comes back, so after `settleLimit` the agent applies the documents it holds, says why in
  /// its log, and concludes nothing of what the broker lacks (no `desired_missing`).
  @Test func anAgentThatCannotReadItsPresenceAppliesWhatItHoldsAfterTheSettleLimit() async throws {
    let site = try await Site(watches: ["room-1", "room-2"]) { port, directory in
      let acl = directory + "/acl"
      #expect(FileManager.default.createFile(atPath: acl, contents: Data("""
        topic readwrite tsapply/v1/ward-a/+/desired
        topic readwrite tsapply/v1/ward-a/+/status
        topic readwrite tsapply/v1/ward-a/+/events
        topic readwrite tsapply/v1/ward-a/+/sos
        topic readwrite tsapply/v1/ward-a/+/state
        topic readwrite tsapply/v1/ward-a/sync/#
        topic read $SYS/broker/uptime
        topic write tsapply/v1/ward-a/agent/station/state

        """.utf8)))
      return MosquittoBroker.openConfiguration(port: port, directory: directory) + "acl_file \(acl)\n"
    }
    try site.fleet(["room-1"])
    _ = try await site.apply(wait: .zero)
    let log = Collector<String>()
    var configuration = FleetAgent.Configuration(broker: site.settings, site: "ward-a", agentID: "station", driftInterval: .zero)
    configuration.settleLimit = .seconds(1)
    let agent = try FleetAgent(configuration: configuration, watches: [("room-1", try await site.engine.open("memory:room-1")),
                                                                       ("room-2", try await site.engine.open("memory:room-2"))],
                               log: { log.append($0) })
    await agent.start()
    for _ in 0..<500 where try await site.contacts("room-1").isEmpty { try await Task.sleep(for: .milliseconds(20)) }
    #expect(try await site.contacts("room-1") == ["Family room-1"])
    #expect(log.values.contains { $0.hasPrefix("its own presence did not come back from the broker within 1 s of connecting") }, "\(log.values)")
    #expect(await agent.status(of: "room-2") == nil, "no document, and nothing concluded from its absence")
    await agent.stop()
  }

  /// A connection lost before `settleLimit` passes is not one whose presence failed to come
  /// back: nothing about an ACL is said while the agent is not connected, and nothing held is
  /// applied then (fresh-eyes fe95 #6: the ACL advice logged while the broker restarted).
  @Test func aConnectionLostWithinTheSettleLimitSaysNothingOfAnACL() async throws {
    let site = try await Site(watches: ["room-1"])
    let log = Collector<String>()
    var configuration = FleetAgent.Configuration(broker: site.settings, site: "ward-a", agentID: "station", driftInterval: .zero)
    configuration.settleLimit = .seconds(1)
    let agent = try FleetAgent(configuration: configuration, watches: [("room-1", try await site.engine.open("memory:room-1"))],
                               log: { log.append($0) })
    await agent.start()
    for _ in 0..<500 where !log.values.contains(where: { $0.hasPrefix("connected to") }) { try await Task.sleep(for: .milliseconds(10)) }
    site.broker.stop()
    for _ in 0..<500 where !log.values.contains(where: { $0.hasPrefix("lost the broker") }) { try await Task.sleep(for: .milliseconds(10)) }
    try await Task.sleep(for: .milliseconds(1500))
    #expect(!log.values.contains { $0.contains("did not come back") }, "\(log.values)")
    site.broker = try site.broker.restart()
    await agent.stop()
  }

  /// A broker restarted again and again, soon after each connection, is no client-ID clash: the
  /// agent's log does not send anyone looking for a second agent (fresh-eyes fe97 #6).
  @Test func quickBrokerRestartsAreNoClientIDClash() async throws {
    let site = try await Site(watches: ["room-1"])
    let log = Collector<String>()
    let agent = try await site.agent("station", ["room-1"], log: { log.append($0) })
    for round in 1...3 {
      for _ in 0..<500 where log.values.filter({ $0.hasPrefix("connected to") }).count < round { try await Task.sleep(for: .milliseconds(10)) }
      site.broker.stop()
      try await Task.sleep(for: .milliseconds(700))
      site.broker = try site.broker.restart()
    }
    for _ in 0..<500 where log.values.filter({ $0.hasPrefix("connected to") }).count < 4 { try await Task.sleep(for: .milliseconds(10)) }
    #expect(log.values.filter { $0.hasPrefix("connected to") }.count >= 4, "\(log.values)")
    #expect(!log.values.contains { $0.contains("same client ID") }, "\(log.values)")
    await agent.stop()
  }

  /// A broker restarted without persistence lost a watch's desired document: the agent, back
  /// on it, finds none for the watch by the end of what the broker had for it, and says so in its
  /// status (`desired_missing`), so the page — whose broker user cannot read desired documents —
  /// says "no desired document" as `status --fleet` does, not "in sync" (fresh-eyes fe83, fe87,
  /// fe90 #4). The manifests published again, the status says it no more.
  @Test func anAgentSaysTheBrokerLostItsWatchsDesiredDocument() async throws {
    let site = try await Site(watches: ["room-1", "room-2"])
    let agent = try await site.agent("station", ["room-1", "room-2"])
    #expect(try await site.apply().map(\.verdict.word) == ["applied", "applied"])
    site.broker.stop()
    site.broker = try site.broker.restart()
    for _ in 0..<500 where await agent.status(of: "room-2")?.desiredMissing != true { try await Task.sleep(for: .milliseconds(20)) }
    for name in ["room-1", "room-2"] {
      let status = try #require(await agent.status(of: name))
      #expect(status.desiredMissing == true, "\(name): \(status)")
      let report = FleetMonitor.agentReport(status, current: .success([status.revision]))
      #expect(report.state == "no desired document" && report.note?.hasPrefix("the broker holds no desired document for the watch") == true,
              "\(name): \(report)")
    }
    #expect(try await site.apply(["room-1"]).map(\.verdict.word) == ["no changes"])
    for _ in 0..<500 where await agent.status(of: "room-1")?.desiredMissing != nil { try await Task.sleep(for: .milliseconds(20)) }
    let published = await agent.status(of: "room-1")
    #expect(published?.desiredMissing == nil && published.map { FleetMonitor.agentReport($0, current: .success([$0.revision])).state } == "in sync",
            "\(String(describing: published))")
    #expect(await agent.status(of: "room-2")?.desiredMissing == true)
    await agent.stop()
  }

  /// Stopping while the broker no longer answers (frozen, or going down under it): the agent's
  /// last words are given a few seconds, not waited for until the broker is back (fresh-eyes
  /// finding: SIGTERM as the broker stopped, and the agent never exited).
  @Test func anAgentStopsWhileItsBrokerDoesNotAnswer() async throws {
    let site = try await Site(watches: ["room-1"])
    let agent = try await site.agent("station", ["room-1"])
    #expect(kill(site.broker.processIdentifier, SIGSTOP) == 0)
    defer { kill(site.broker.processIdentifier, SIGCONT) }
    let start = ContinuousClock.now
    await agent.stop()
    #expect(ContinuousClock.now - start < .seconds(20), "\(ContinuousClock.now - start)")
  }

  @Test func aDocumentDeliveredTwiceIsAppliedOnce() async throws {
    let site = try await Site(watches: ["room-1"])
    let agent = try await site.agent("station", ["room-1"])
    let document = DesiredDocument(manifest: try manifest("contacts:\n  - {name: A, phone: \"+15550100\"}\n", file: "a.yaml"),
                                   allowDestroy: false, watch: "room-1")
    let publisher = try MQTTClient(address: site.broker.address, configuration: .init(clientID: "twice"), onMessage: { _ in })
    publisher.connect()
    try await publisher.ready(within: .seconds(120))
    for _ in 0..<3 {
      try await publisher.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .desired), payload: document.encoded(), qos: 1, retain: true)
    }
    for _ in 0..<250 {
      if agent.statistics.desiredReceived == 3, await agent.status(of: "room-1") != nil { break }
      try await Task.sleep(for: .milliseconds(20))
    }
    try await Task.sleep(for: .milliseconds(200))
    #expect(agent.statistics.desiredReceived == 3)
    #expect(agent.statistics.applies == 1)
    #expect(agent.statistics.statuses == 1)
    #expect(try await site.contacts("room-1") == ["A"])
    await publisher.close()
    await agent.stop()
  }

  @Test func aRevisionPublishedWhileAnApplyRunsIsAppliedNextAndOnlyTheNewestOfThoseWaiting() async throws {
    // 40 ms per device call: one apply takes a few hundred milliseconds.
    let site = try await Site(watches: ["room-1"], latency: .init(perCallMilliseconds: 40, perPacketMilliseconds: 0))
    let agent = try await site.agent("station", ["room-1"])
    let publisher = try MQTTClient(address: site.broker.address, configuration: .init(clientID: "quick"), onMessage: { _ in })
    publisher.connect()
    try await publisher.ready(within: .seconds(120))
    let documents = try ["A", "B", "C"].map { name in
      DesiredDocument(manifest: try manifest("contacts:\n  - {name: \(name), phone: \"+15550100\"}\n", file: "\(name).yaml"),
                      allowDestroy: false, watch: "room-1")
    }
    let topic = FleetTopics.watch(site: "ward-a", watch: "room-1", .desired)
    try await publisher.publish(topic, payload: documents[0].encoded(), qos: 1, retain: true)
    for _ in 0..<250 where agent.statistics.applies == 0 { try await Task.sleep(for: .milliseconds(5)) }
    try await publisher.publish(topic, payload: documents[1].encoded(), qos: 1, retain: true)
    try await publisher.publish(topic, payload: documents[2].encoded(), qos: 1, retain: true)
    for _ in 0..<500 where (await agent.status(of: "room-1"))?.revision != documents[2].revision { try await Task.sleep(for: .milliseconds(20)) }
    #expect((await agent.status(of: "room-1"))?.appliedRevision == documents[2].revision)
    #expect(try await site.contacts("room-1") == ["C"])
    #expect(agent.statistics.applies == 2)
    await publisher.close()
    await agent.stop()
  }

  @Test func stoppingDuringAnApplyStopsItBetweenStepsReportsItAndTheReturningAgentFinishesIt() async throws {
    // 100 ms per device call: the apply is still reading the watch when the agent is stopped.
    let site = try await Site(watches: ["room-1"], latency: .init(perCallMilliseconds: 100, perPacketMilliseconds: 0))
    var agent: FleetAgent? = try await site.agent("station", ["room-1"])
    weak let released = agent
    let publisher = try MQTTClient(address: site.broker.address, configuration: .init(clientID: "late"), onMessage: { _ in })
    publisher.connect()
    try await publisher.ready(within: .seconds(120))
    let text = "contacts:\n  - {name: A, phone: \"+15550100\"}\nreminders:\n  custom:\n    - {name: Lunch, at: [\"12:00\"]}\n"
    let document = DesiredDocument(manifest: try manifest(text, file: "a.yaml"), allowDestroy: false, watch: "room-1")
    try await publisher.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .desired), payload: document.encoded(), qos: 1, retain: true)
    for _ in 0..<500 where agent?.statistics.applies == 0 { try await Task.sleep(for: .milliseconds(5)) }
    #expect(agent?.statistics.applies == 1)
    // stop() returns once the apply has stopped and its status is out; the agent is then freed.
    await agent?.stop()
    agent = nil
    #expect(released == nil)
    let view = try FleetBrokerView(settings: site.settings, site: "ward-a")
    try await view.connect(within: .seconds(120))
    let status = try #require(view.statuses["room-1"]?.status)
    #expect(status.result == .retrying)
    #expect(status.revision == document.revision)
    #expect(status.appliedRevision == nil)
    // The backup path is there whole (its timestamp is not masked as if it were a phone).
    let message = status.message ?? ""
    #expect(message.hasPrefix("apply stopped part-way: interrupted. Backup of the previous state: "), "\(message)")
    let backup = String(message.dropFirst("apply stopped part-way: interrupted. Backup of the previous state: ".count))
    #expect(FileManager.default.fileExists(atPath: backup), "\(backup)")
    #expect(view.agents["station"]?.online == false)
    let partial = try await site.contacts("room-1")
    // Back again: the revision it did not finish is applied, without a new publication.
    let returned = try await site.agent("station", ["room-1"])
    for _ in 0..<500 where view.statuses["room-1"]?.status.appliedRevision != document.revision { try await Task.sleep(for: .milliseconds(20)) }
    #expect(view.statuses["room-1"]?.status.result == .applied)
    #expect(try await site.contacts("room-1") == ["A"])
    #expect(try await site.scheme.device("room-1").fetchAllReminders().map(\.reminderName).contains("Lunch"))
    #expect(partial.count <= 1)
    await returned.stop()
    await view.close()
    await publisher.close()
  }

  @Test func theSafetyGateHoldsAcrossTheBrokerUntilTheDocumentAllowsDestruction() async throws {
    let site = try await Site(watches: ["room-1"])
    let agent = try await site.agent("station", ["room-1"])
    try site.manifest("room-1", contacts: ["A", "B", "C"])
    #expect(try await site.apply().map(\.verdict.word) == ["applied"])
    try site.manifest("room-1", contacts: [])
    let refused = try await site.apply()
    guard case .refused(let reason) = refused.first?.verdict else { Issue.record("not refused: \(refused)"); return }
    #expect(reason.hasPrefix("refused by agent station: refusing to apply without review: this plan "))
    #expect(try await site.contacts("room-1") == ["A", "B", "C"])
    // The status says refused, online or not: the agent handled this revision (publishing it
    // again changes nothing); an edited manifest is a new revision.
    func state() async throws -> FleetStatusRow? {
      try await FleetStatus.broker(try site.space.load([]).members, site: "ward-a", settings: site.settings, timeout: .seconds(120)).rows.first
    }
    let refusedRow = try await state()
    #expect(refusedRow?.state == "refused")
    // The agent's advice names the fleet file where the reader knows it (fresh-eyes finding:
    // `FLEET-FILE` passed on word for word).
    let advice = WatchStatus.naming(fleetFile: "ward a/fleet.yaml", in: refusedRow?.note ?? "")
    #expect(advice.contains("('tsapply apply --fleet \"ward a/fleet.yaml\" --auto-approve --allow-destroy') to apply it") && !advice.contains("FLEET-FILE"),
            "\(advice)")
    try site.manifest("room-1", contacts: ["A"])
    let edited = try await state()
    #expect(edited?.state == "new revision")
    #expect(edited?.note?.hasSuffix("; the agent last applied \(try #require(await agent.status(of: "room-1")?.appliedRevision))") == true,
            "\(edited?.note ?? "")")
    try site.manifest("room-1", contacts: [])
    let allowed = try await site.apply(allowDestroy: true)
    #expect(allowed.map(\.verdict.word) == ["applied"])
    #expect(try await site.contacts("room-1") == [])
    await agent.stop()
  }

  @Test func anotherWatchsDocumentIsRefusedAndAChangedDocumentThatKeptItsRevisionIsApplied() async throws {
    let site = try await Site(watches: ["room-1", "room-2"])
    let agent = try await site.agent("station", ["room-1", "room-2"])
    let publisher = try MQTTClient(address: site.broker.address, configuration: .init(clientID: "own"), onMessage: { _ in })
    publisher.connect()
    try await publisher.ready(within: .seconds(120))
    let topic = FleetTopics.watch(site: "ward-a", watch: "room-1", .desired)
    // room-2's document on room-1's topic: refused, room-1 untouched.
    let misrouted = #"{"manifest":{"contacts":[{"name":"Resident 2","phone":"+15550102"}]},"revision":"r1","watch":"room-2","watch_id":"room-2"}"#
    try await publisher.publish(topic, payload: Array(misrouted.utf8), qos: 1, retain: true)
    for _ in 0..<250 where (await agent.status(of: "room-1")) == nil { try await Task.sleep(for: .milliseconds(20)) }
    let refused = try #require(await agent.status(of: "room-1"))
    #expect(refused.result == .invalid)
    #expect(refused.message?.contains("watch_id: this document is for the watch ID room-2, but it was published on the topic of room-1") == true,
            "\(refused.message ?? "")")
    #expect(try await site.contacts("room-1") == [])
    // A publisher of its own that keeps its revision while the content changes.
    for name in ["A", "B"] {
      let document = #"{"manifest":{"contacts":[{"name":"\#(name)","phone":"+15550100"}]},"revision":"release-7","watch_id":"room-1"}"#
      try await publisher.publish(topic, payload: Array(document.utf8), qos: 1, retain: true)
      for _ in 0..<250 where try await site.contacts("room-1") != [name] { try await Task.sleep(for: .milliseconds(20)) }
      #expect(try await site.contacts("room-1") == [name])
    }
    #expect(agent.statistics.applies == 2)
    await publisher.close()
    await agent.stop()
  }

  @Test func aRestartedAgentKeepsWhatItKnewOfEachWatch() async throws {
    let site = try await Site(watches: ["room-1"])
    let first = try await site.agent("station", ["room-1"])
    try site.manifest("room-1", contacts: ["A", "B", "C"])
    #expect(try await site.apply().map(\.verdict.word) == ["applied"])
    let applied = try #require(await first.status(of: "room-1"))
    try site.manifest("room-1", contacts: [])
    #expect(try await site.apply().map(\.verdict.word) == ["refused"])
    await first.stop()
    // Started again, it is handed the refused revision again (retained) and refuses it again;
    // the revision it applied before, and when, are still in its status.
    let again = try await site.agent("station", ["room-1"])
    var status = await again.status(of: "room-1")
    #expect(status?.result == .refused)
    for _ in 0..<250 where again.statistics.applies == 0 { try await Task.sleep(for: .milliseconds(20)) }
    for _ in 0..<250 where again.statistics.statuses == 0 { try await Task.sleep(for: .milliseconds(20)) }
    status = await again.status(of: "room-1")
    #expect(status?.result == .refused)
    #expect(status?.appliedRevision == applied.appliedRevision)
    #expect(status?.lastApplied == applied.lastApplied)
    #expect(status?.changes == nil)
    let record = try await site.engine.open("memory:room-1").home.agentStatusPath
    #expect(try FileManager.default.attributesOfItem(atPath: record)[.posixPermissions] as? Int == 0o600)
    await again.stop()
  }

  /// What the wearer changed while the agent was down is drift, reported when it starts
  /// again: the retained revision it had applied is not applied again over it. Publishing the
  /// revision again (`apply --fleet`) is what brings the watch back.
  @Test func aRestartedAgentReportsTheWearersChangeAsDriftInsteadOfWritingOverIt() async throws {
    let site = try await Site(watches: ["room-1"])
    let first = try await site.agent("station", ["room-1"])
    try site.manifest("room-1", contacts: ["A", "B", "C"])
    #expect(try await site.apply().map(\.verdict.word) == ["applied"])
    await first.stop()
    try site.scheme.device("room-1").simulateContactAdd(Contact(name: "Zed", phoneNum: "+15550199"))
    let (events, listener) = try await site.events()
    let again = try await site.agent("station", ["room-1"])
    let seen = await events.wait(for: 1, within: 10)
    #expect(seen.map(\.kind) == [.drift])
    #expect(try await site.contacts("room-1") == ["A", "B", "C", "Zed"])
    #expect(again.statistics.applies == 0)
    for _ in 0..<1500 where (await again.status(of: "room-1"))?.drift != 1 { try await Task.sleep(for: .milliseconds(20)) }
    #expect((await again.status(of: "room-1"))?.drift == 1)
    #expect(try await site.apply().map(\.verdict.changesText) == ["+0 ~1 -0"])
    #expect(try await site.contacts("room-1") == ["A", "B", "C"])
    await listener.close()
    await again.stop()
  }

  /// A broker without persistence restarted while `apply --fleet` waits loses the desired
  /// documents it held. The publisher, connected again, finds its documents gone and publishes
  /// them again, so the agent applies them and the run reports what the watch holds
  /// (fresh-eyes finding: "pending … it applies revision … when it can", exit 0, while the
  /// broker held no document and the watch never changed).
  @Test func aDocumentLostByABrokerRestartedDuringTheWaitIsPublishedAgain() async throws {
    let site = try await Site(watches: ["room-1", "room-2"])
    var agent = try await site.agent("station", ["room-1"])
    let other = try await site.agent("other", ["room-2"])
    #expect(try await site.apply().map(\.verdict.word) == ["applied", "applied"])
    await agent.stop()
    try site.manifest("room-1", contacts: ["A"])
    try site.manifest("room-2", contacts: ["B"])
    let notes = Locked<[String]>([])
    let loaded = try site.space.load([])
    let settings = site.settings
    let before = await other.status(of: "room-2")?.revision
    let rollout = Task {
      try await FleetPublication.apply(loaded.members, site: "ward-a", settings: settings, allowDestroy: false, wait: .seconds(60)) { progress in
        if let note = progress.note { notes.mutate { $0.append(note) } }
      }
    }
    // Published (the broker holds room-1's), room-2's answered by its agent; then both lost with
    // the broker's restart.
    let probe = Inbox<Bool>()
    let reader = try MQTTClient(address: site.broker.address,
                                configuration: .init(clientID: "probe-desired", subscriptions: [FleetTopics.watch(site: "ward-a", watch: "room-1", .desired)]),
                                onMessage: { message in if String(decoding: message.payload, as: UTF8.self).contains("\"A\"") { probe.add(true) } })
    reader.connect()
    #expect(await probe.wait(for: 1, within: 30).count == 1)
    await reader.close()
    for _ in 0..<1500 where (await other.status(of: "room-2")).map({ $0.revision == before || $0.result != .applied }) ?? true {
      try await Task.sleep(for: .milliseconds(20))
    }
    #expect(try await site.contacts("room-2") == ["B"])
    site.broker = try site.broker.restart()
    agent = try await site.agent("station", ["room-1"])
    let rows = try await rollout.value
    #expect(rows.map(\.verdict.word) == ["applied", "applied"], "\(rows.map(\.verdict))")
    #expect(try await site.contacts("room-1") == ["A"])
    #expect(notes.value.contains { $0.contains("the broker lost the desired documents of 2 watches (restarted without persistence): published again") },
            "\(notes.value)")
    // The broker holds both again: an agent that restarts is handed its watch's revision.
    let view = try FleetBrokerView(settings: site.settings, site: "ward-a", desired: true)
    try await view.connect(within: .seconds(120))
    #expect(Set(view.desiredRevisions.keys) == ["room-1", "room-2"], "\(view.desiredRevisions)")
    await view.close()
    await agent.stop()
    await other.stop()
  }


  /// An apply that undoes part of a drifted resource says only that part as undone, and the
  /// rest is drift at once, not "in sync" until the next drift check (fresh-eyes fe95 #5: the
  /// wearer added an emergency contact and emptied a derived short name; the apply removed the
  /// contact, left the short name, and said it undid "emergency (1 added, 1 changed)").
  @Test func anApplyThatUndoesPartOfADriftSaysThatPartAndKeepsTheRest() async throws {
    let site = try await Site(watches: ["room-1"])
    let emergency = "emergency:\n  sos: true\n  contacts:\n    - {name: Mom, phone: \"+15550110\"}\n"
    let agent = try await site.agent("station", ["room-1"])
    try site.manifest("room-1", contacts: ["A"], extra: emergency)
    #expect(try await site.apply().map(\.verdict.word) == ["applied"])
    try site.scheme.device("room-1").simulateEmergencyChange(
      contacts: [Contact(name: "Mom", phoneNum: "+15550110"), Contact(name: "Grandson", phoneNum: "+15550333")], sosOn: true)
    try site.manifest("room-1", contacts: ["A", "B"], extra: emergency)
    let rows = try await site.apply(allowDestroy: true)
    #expect(rows.map(\.verdict.word) == ["applied"], "\(rows.map(\.verdict))")
    let status = try #require(await agent.status(of: "room-1"))
    #expect(status.message?.hasPrefix("undid what was changed on the watch since the last apply: emergency (1 added)") == true
              && status.message?.contains("1 changed") == false, "\(status)")
    #expect(status.drift == 1, "the short name the apply left is drift at once: \(status)")
    await agent.stop()
  }

  /// A revision that leaves a wearer's change as it is (a reminder it does not set) says so in
  /// its row, which `apply --fleet`'s lines and grouped review show (fresh-eyes fe95 #7: "applied"
  /// and no word of the reminder still switched off).
  @Test func aRevisionThatLeavesDriftSaysSoInItsRow() async throws {
    let site = try await Site(watches: ["room-1"])
    let agent = try await site.agent("station", ["room-1"])
    #expect(try await site.apply().map(\.verdict.word) == ["applied"])
    let device = try site.scheme.device("room-1")
    let lunch = try #require(try device.snapshot().reminders.first { $0.reminderName == "Lunch" })
    _ = try device.simulateReminderToggle(id: lunch.reminderId)
    try site.manifest("room-1", contacts: ["Family room-1", "B"])
    let rows = try await site.apply()
    #expect(rows.map(\.verdict.word) == ["applied"], "\(rows.map(\.verdict))")
    guard case .string(let note)? = rows.first?.details["note"] else { Issue.record("no note: \(rows)"); return }
    #expect(note.hasPrefix("still drift, which the revision does not set: 1 resource changed on the watch since the last apply: ")
              && note.contains("Lunch"), "\(note)")
    await agent.stop()
  }

  /// A revision published while the wearer's change is on the watch: applying it writes the
  /// contacts as a whole set, so the wearer's contact goes. That is said — in the agent's log,
  /// its status (`status --fleet`'s note) and `apply --fleet`'s line — by what was undone, not
  /// only as a count (fresh-eyes finding: a restarted agent removed a contact the wearer added
  /// and nothing named it).
  @Test func anApplyThatUndoesTheWearersChangeSaysWhatItUndid() async throws {
    let site = try await Site(watches: ["room-1"])
    let lines = Locked<[String]>([])
    let agent = try await site.agent("station", ["room-1"], log: { line in lines.mutate { $0.append(line) } })
    try site.manifest("room-1", contacts: ["A", "B", "C"])
    #expect(try await site.apply().map(\.verdict.word) == ["applied"])
    try site.scheme.device("room-1").simulateContactAdd(Contact(name: "Zed", phoneNum: "+15550199"))
    try site.manifest("room-1", contacts: ["A", "B", "C", "D"])
    let rows = try await site.apply()
    #expect(rows.map(\.verdict.word) == ["applied"], "\(rows.map(\.verdict))")
    #expect(try await site.contacts("room-1") == ["A", "B", "C", "D"])
    let words = "undid what was changed on the watch since the last apply: contacts (1 added)"
    #expect(rows.first?.details["note"] == .string(words), "\(rows.first?.details ?? [:])")
    let status = try #require(await agent.status(of: "room-1"))
    #expect(status.message == words, "\(status)")
    #expect(status.drift == 0)
    #expect(lines.value.contains { $0.hasPrefix("room-1: revision ") && $0.hasSuffix("applied (+0 ~1 -0); " + words) }, "\(lines.value)")
    let row = try await site.row()
    #expect(row?.state == "in sync" && row?.note == words, "\(String(describing: row))")
    // A drift found later is said in its own words — by `status --fleet`, the page and a drift
    // alert — not in the words of the apply before it (fresh-eyes finding: the alert for SOS
    // switched off said "undid … contacts (1 added)").
    try site.scheme.device("room-1").simulateContactAdd(Contact(name: "Yan", phoneNum: "+15550198"))
    for _ in 0..<1500 where (await agent.status(of: "room-1"))?.drift != 1 { try await Task.sleep(for: .milliseconds(20)) }
    let drifted = try #require(await agent.status(of: "room-1"))
    let driftWords = "1 resource changed on the watch since the last apply: contacts (1 added)"
    #expect(FleetMonitor.agentReport(drifted, current: nil).note == driftWords, "\(drifted)")
    let driftRow = try await site.row()
    #expect(driftRow?.state == "drift" && driftRow?.note == driftWords, "\(String(describing: driftRow))")
    await agent.stop()
  }

  /// A further change made while the agent was down again — the wearer's added contact gone
  /// and one of the manifest's removed: the same count, the same address, other words — is a
  /// new drift event after the restart (the words kept in the status, `drift_summary`); a
  /// restart with nothing changed tells the same drift no second time (fresh-eyes finding: no
  /// event, so the monitor kept "1 added" for a watch missing one).
  @Test func aRestartedAgentTellsAFurtherChangeAtTheSameCountOnce() async throws {
    let site = try await Site(watches: ["room-1"])
    let first = try await site.agent("station", ["room-1"])
    try site.manifest("room-1", contacts: ["A", "B", "C"])
    #expect(try await site.apply().map(\.verdict.word) == ["applied"])
    await first.stop()
    let watch = try site.scheme.device("room-1")
    try watch.simulateContactAdd(Contact(name: "Zed", phoneNum: "+15550199"))
    let (events, listener) = try await site.events()
    func restarted() async throws -> FleetAgent {
      let agent = try await site.agent("station", ["room-1"])
      for _ in 0..<1500 where (await agent.status(of: "room-1"))?.lastSeen == nil { try await Task.sleep(for: .milliseconds(20)) }
      return agent
    }
    var agent = try await restarted()
    let told = await events.wait(for: 1, within: 10).map(\.message)
    #expect(told.last?.hasSuffix("contacts (1 added)") == true, "\(told)")
    await agent.stop()
    // Nothing changed meanwhile: no second event for the same drift.
    agent = try await restarted()
    try await Task.sleep(for: .seconds(1))
    await agent.stop()
    #expect(events.items.count == 1, "the same drift told again after a restart: \(events.items.map(\.message))")
    // Changed otherwise while the agent was down: told, by its new words.
    #expect(try watch.simulateContactRemove(name: "Zed") == 1)
    #expect(try watch.simulateContactRemove(name: "A") == 1)
    agent = try await restarted()
    let seen = await events.wait(for: 2, within: 10)
    #expect(seen.map(\.kind) == [.drift, .drift], "\(seen.map(\.message))")
    #expect(seen.last?.message.hasSuffix("contacts (1 removed)") == true, "\(seen.map(\.message))")
    // The words are in the published status (no contact in them), for a reader that missed the event.
    let statuses = Inbox<String>()
    let probe = try MQTTClient(address: site.broker.address,
                               configuration: .init(clientID: "probe-status", subscriptions: [FleetTopics.watch(site: "ward-a", watch: "room-1", .status)]),
                               onMessage: { statuses.add(String(decoding: $0.payload, as: UTF8.self)) })
    probe.connect()
    let published = try #require(await statuses.wait(for: 1, within: 10).first)
    await probe.close()
    #expect(published.contains("\"drift_summary\" : \"contacts (1 removed)\""), "\(published)")
    await listener.close()
    await agent.stop()
  }

  /// Published again while its agent is offline, a watch whose agent last reported it settled
  /// on that revision is `not known` — as the agent last reported it, it held the revision, but
  /// the wearer may have changed it since, and the agent applies the revision again when it
  /// connects (fresh-eyes findings: "no changes", exit 0, for a watch whose contact was removed
  /// while its agent was down; then, with a note, still "no changes" and exit 0 while the agent
  /// went on to undo a contact the wearer had added). Not counted against a rollout's `max_failures`.
  @Test func aSettledWatchOfAnOfflineAgentIsNotKnown() async throws {
    let site = try await Site(watches: ["room-1"])
    let agent = try await site.agent("station", ["room-1"])
    #expect(try await site.apply().map(\.verdict.word) == ["applied"])
    await agent.stop()
    #expect(try site.scheme.device("room-1").simulateContactRemove(name: "Family room-1") == 1)
    let rows = try await site.apply(wait: .seconds(2))
    #expect(rows.map(\.verdict.word) == ["not known"], "\(rows.map(\.verdict))")
    guard case .unknown(let note)? = rows.first?.verdict else { Issue.record("\(rows.map(\.verdict))"); return }
    #expect(note.hasPrefix("holds revision ") && note.contains("as agent station last reported (read at "), "\(note)")
    #expect(note.hasSuffix("what the watch holds since is not known until the agent connects, checks it and applies the revision again"), "\(note)")
    #expect(rows.allSatisfy { !RolloutRecord.countsAsFailure($0.verdict) })
  }

  /// The wearer switches Lunch off while the agent is down, and the next revision moves Lunch's
  /// time: the agent writes the time, Lunch stays off, and every status from the apply on says
  /// drift 1 — never "drift 0" in between, which closed the drift alert while Lunch stayed off
  /// (fresh-eyes finding), nor for good.
  @Test func aWearersChangeToAReminderTheRevisionMovesStaysDriftInEveryStatus() async throws {
    let site = try await Site(watches: ["room-1"])
    let first = try await site.agent("station", ["room-1"])
    #expect(try await site.apply().map(\.verdict.word) == ["applied"])
    await first.stop()
    let device = try site.scheme.device("room-1")
    let lunch = try #require(try await device.fetchAllReminders().first { $0.reminderName == "Lunch" })
    #expect(try device.simulateReminderToggle(id: lunch.reminderId) == false)
    try site.space.write("wards/ward-a.yaml", "reminders:\n  custom:\n    - {name: Lunch, at: [\"13:00\"]}\n")
    let (statuses, probe) = try await site.read(FleetTopics.watch(site: "ward-a", watch: "room-1", .status), as: "probe-statuses", WatchStatus.decode)
    let again = try await site.agent("station", ["room-1"])
    let rows = try await site.apply()
    #expect(rows.map(\.verdict.word) == ["applied"], "\(rows.map(\.verdict))")
    let now = try #require(try await device.fetchAllReminders().first { $0.reminderName == "Lunch" })
    #expect(!now.isEnabled, "the revision turned Lunch back on")
    try await Task.sleep(for: .milliseconds(500))
    await probe.close()
    let revision = try #require(statuses.items.last?.appliedRevision)
    let after = statuses.items.filter { $0.appliedRevision == revision }
    #expect(!after.isEmpty && after.allSatisfy { $0.drift == 1 }, "\(after.map { ($0.result, $0.drift) })")
    await again.stop()
  }

  /// A write whose answer is lost (it landed), retried: the retry finds the watch matching, and
  /// the revision is reported applied with what the earlier attempt wrote — never "no
  /// changes" for a rollout that changed the watch. Faults at several calls of the first apply.
  @Test(arguments: [4, 6, 8, 10])
  func aRetryThatFindsTheEarlierAttemptsWritesReportsTheRevisionApplied(call: Int) async throws {
    let site = try await Site(watches: ["room-1"], faults: [.init(.landsThenFails(.timeout), atCall: call)])
    let agent = try await site.agent("station", ["room-1"])
    try site.manifest("room-1", contacts: ["A", "B", "C"])
    let rows = try await site.apply()
    #expect(rows.map(\.verdict.word) == ["applied"], "fault at call \(call): \(rows.map(\.verdict))")
    #expect(try await site.contacts("room-1") == ["A", "B", "C"])
    // The revision's changes, all attempts together — what its first attempt planned — not
    // only what the attempt that finished it had left to do.
    let entries = try await site.engine.open("memory:room-1").history.read().entries
    let first = try #require(entries.first { $0.command.hasPrefix("tsapply agent station") })
    #expect(rows.map(\.verdict.changesText) == ["+\(first.add) ~\(first.change) -\(first.destroy)"],
            "fault at call \(call): \(entries.map { ($0.result, $0.changesText) })")
    await agent.stop()
  }

  /// An agent stopped in the middle of an apply, after the first of the revision's two changes
  /// reached the watch: `apply --fleet` says what the watch holds of it (`1 of 2 applied`, not
  /// `-`) and that it is pending — its agent is offline, nobody is retrying it — and so does
  /// `status --fleet`, with no next try promised; the returning agent applies the rest and
  /// reports the revision's two changes, not only the one its last attempt made.
  @Test func anInterruptedRevisionSaysWhatReachedTheWatchAndIsReportedWholeOnceApplied() async throws {
    // 600 ms per device call, after the call took effect: the stop comes between two writes.
    let site = try await Site(watches: ["room-1"], latency: .init(perCallMilliseconds: 600, perPacketMilliseconds: 0))
    var agent: FleetAgent? = try await site.agent("station", ["room-1"])
    try site.manifest("room-1", contacts: ["A"])
    let initial = try site.scheme.device("room-1").snapshot()
    // Waited for long enough that the first write lands within the wait on a loaded machine
    // too (6 s was not, under parallel builds): the agent goes offline during it.
    let publishing = Task { try await site.apply(wait: .seconds(15)) }
    for _ in 0..<4000 {
      if try site.scheme.device("room-1").snapshot() != initial { break }
      try await Task.sleep(for: .milliseconds(5))
    }
    await agent?.stop()
    agent = nil
    let rows = try await publishing.value
    #expect(rows.map(\.verdict.word) == ["pending"], "\(rows.map(\.verdict))")
    #expect(rows.map(\.changesText) == ["1 of 2 applied"], "\(rows.map(\.verdict))")
    guard case .pending(let why) = rows.first?.verdict else { return }
    #expect(why.contains("went offline during the wait") && why.contains("the watch holds part of the revision: 1 of 2 applied"), "\(why)")
    let members = try site.space.load([]).members
    let row = try await FleetStatus.broker(members, site: "ward-a", settings: site.settings, timeout: .seconds(120)).rows.first
    #expect(row?.state == "pending", "\(String(describing: row))")
    #expect(row?.note?.contains("agent station is offline") == true && row?.note?.contains("holds part of it (1 of 2 applied)") == true,
            "\(row?.note ?? "")")
    #expect(row?.note?.contains("next at") == false, "\(row?.note ?? "")")
    #expect(row?.partlyApplied == true && rows.first?.isPartlyPending == true, "\(String(describing: row)) \(rows.map(\.partlyApplied))")
    // Back again: the rest is applied, and the revision is reported with both its changes.
    let returned = try await site.agent("station", ["room-1"])
    let view = try FleetBrokerView(settings: site.settings, site: "ward-a")
    try await view.connect(within: .seconds(120))
    for _ in 0..<1500 where view.statuses["room-1"]?.status.result != .applied { try await Task.sleep(for: .milliseconds(20)) }
    let status = view.statuses["room-1"]?.status
    #expect(status?.result == .applied, "\(String(describing: status))")
    #expect(status?.changes == PlanCounts(add: 1, change: 1, destroy: 0), "\(String(describing: status))")
    #expect(try await site.contacts("room-1") == ["A"])
    await view.close()
    await returned.stop()
  }

  /// The agent's process killed in the middle of an apply, after its write landed: the watch's
  /// history ends with that apply's `started` entry. Restarted and handed the revision again,
  /// the agent finds the watch matching and reports the revision applied with what the killed
  /// apply was writing — not "no changes" for a rollout that changed the watch.
  /// Also when the killed agent's apply finished (its `applied` entry last in the history) but
  /// the agent died before publishing and keeping its status (`finished`).
  /// With `wearerUndoes`, the wearer removes one of the revision's contacts before the restart:
  /// the agent writes the list again, and the revision's changes are still counted once
  /// (fresh-eyes finding: "+0 ~2 -0" for a revision changing the contacts only).
  @Test(arguments: [(false, false), (true, false), (false, true), (true, true)])
  func anApplyKilledAfterItsWriteLandedIsReportedAppliedAfterTheRestart(finished: Bool, wearerUndoes: Bool) async throws {
    let site = try await Site(watches: ["room-1"])
    try site.manifest("room-1", contacts: ["A", "B", "C"])
    guard case .success(let document) = try site.space.load([]).members[0].document else {
      Issue.record("the manifest does not load")
      return
    }
    let command = "tsapply agent station (site ward-a, watch room-1)"
    // What the killed apply did: wrote the watch, and left its `started` entry last in the
    // history (killed mid-apply) or its `applied` one (killed before its status).
    let watch = try await site.engine.open("memory:room-1")
    guard case .applied(let report) = try await watch.apply(document, options: ApplyOptions(approval: .automatic(allowDestroy: true),
                                                                                            command: finished ? command : "test")) else {
      Issue.record("nothing applied")
      return
    }
    let counts = report.plan.counts
    if !finished {
      _ = try watch.history.append(HistoryEntry(time: ApplyHistory.timeText(Date()), kind: "apply", user: "care", host: "phone",
                                                command: command, device: watch.identity,
                                                manifest: nil, commit: nil, plan: ApplyHistory.digest(of: report.plan), add: counts.add,
                                                change: counts.change, destroy: counts.destroy, result: HistoryEntry.started, error: nil,
                                                backup: nil))
    }
    if wearerUndoes { #expect(try site.scheme.device("room-1").simulateContactRemove(name: "C") == 1) }
    var agent = try await site.agent("station", ["room-1"])
    let rows = try await site.apply()
    #expect(rows.map(\.verdict.word) == ["applied"], "\(rows.map(\.verdict))")
    #expect(rows.map(\.verdict.changesText) == ["+\(counts.add) ~\(counts.change) -\(counts.destroy)"])
    #expect(try await site.contacts("room-1") == ["A", "B", "C"])
    // Accounted for once: started again, and handed the revision in a new publication, the agent
    // finds nothing to change and says so (fresh-eyes finding: every restart reported the killed
    // apply's changes "applied by an earlier attempt, confirmed now" again, though nothing was written).
    await agent.stop()
    agent = try await site.agent("station", ["room-1"])
    let again = try await site.apply()
    #expect(again.map(\.verdict.word) == ["no changes"], "\(again.map(\.verdict))")
    await agent.stop()
  }

  /// A watch its agent can no longer read (out of reach) is not reported in sync from the last
  /// read: the status says why and since when, `status --fleet` shows it `unreachable` (a
  /// failure, drift unknown), and `drift --fleet` counts it as not known.
  @Test func aWatchItsAgentCannotReadIsUnreachableNotInSync() async throws {
    let site = try await Site(watches: ["room-1"], faults: [.init(.disconnect, atCall: 30)])
    let agent = try await site.agent("station", ["room-1"], driftInterval: .milliseconds(50))
    try site.manifest("room-1", contacts: ["A"])
    #expect(try await site.apply().map(\.verdict.word) == ["applied"])
    for _ in 0..<400 where (await agent.status(of: "room-1"))?.unreachable == nil { try await Task.sleep(for: .milliseconds(50)) }
    let status = try #require(await agent.status(of: "room-1"))
    #expect(status.unreachable != nil && status.unreachableSince != nil, "\(status)")
    var row: FleetStatusRow?
    for _ in 0..<100 {
      row = try await site.row()
      if row?.state == "unreachable" { break }
      try await Task.sleep(for: .milliseconds(50))
    }
    #expect(row?.state == "unreachable", "\(String(describing: row))")
    #expect(row?.isFailure == true)
    #expect(row?.drift == nil)
    #expect(row?.note?.contains("agent station cannot read the watch since") == true, "\(row?.note ?? "")")
    // A manifest edited meanwhile does not hide it: still unreachable, drift not known.
    try site.manifest("room-1", contacts: ["A", "B"])
    let edited = try await site.row()
    #expect(edited?.state == "unreachable" && edited?.drift == nil, "\(String(describing: edited))")
    #expect(edited?.note?.contains("the manifests give a revision the broker does not hold: not published yet, or lost by the broker") == true, "\(edited?.note ?? "")")
    await agent.stop()
  }

  /// A revision refused as unsafe leaves the watch holding the one applied before: the agent
  /// keeps checking the watch against that one, so what the wearer changes is still reported.
  @Test func afterARefusedRevisionTheWatchIsStillCheckedForDrift() async throws {
    let site = try await Site(watches: ["room-1"])
    let agent = try await site.agent("station", ["room-1"], driftInterval: .milliseconds(100))
    try site.manifest("room-1", contacts: ["A", "B", "C"])
    #expect(try await site.apply().map(\.verdict.word) == ["applied"])
    try site.manifest("room-1", contacts: ["A"])
    #expect(try await site.apply().map(\.verdict.word) == ["refused"], "removing two contacts is refused without allow_destroy")
    #expect((await agent.status(of: "room-1"))?.result == .refused)
    try site.scheme.device("room-1").simulateContactAdd(Contact(name: "Cousin", phoneNum: "+15550144"))
    for _ in 0..<200 where (await agent.status(of: "room-1"))?.drift != 1 { try await Task.sleep(for: .milliseconds(50)) }
    #expect((await agent.status(of: "room-1"))?.drift == 1, "the wearer's contact is drift from what the watch was last given")
    await agent.stop()
  }

  @Test func stoppingWithoutTheBrokerSaysThatTheBrokerMarksItOffline() async throws {
    let site = try await Site(watches: ["room-1"])
    let lines = Inbox<String>()
    let agent = try await site.agent("station", ["room-1"], log: { lines.add($0) })
    site.broker.stop()
    for _ in 0..<500 where !lines.items.contains(where: { $0.hasPrefix("lost the broker") }) { try await Task.sleep(for: .milliseconds(20)) }
    await agent.stop()
    #expect(lines.items.last == "not connected to \(site.broker.address), so the last statuses and the going offline cannot be published; "
            + "the broker marks the agent offline itself (its Last Will) once 45 s pass without a word", "\(lines.items)")
  }

  @Test func anInvalidDocumentNeverTouchesTheWatchAndSaysWhereItIsWrong() async throws {
    let site = try await Site(watches: ["room-1"])
    let agent = try await site.agent("station", ["room-1"])
    let publisher = try MQTTClient(address: site.broker.address, configuration: .init(clientID: "bad"), onMessage: { _ in })
    publisher.connect()
    try await publisher.ready(within: .seconds(120))
    let bad = #"{"allow_destroy":false,"format_version":"1","manifest":{"contacts":[{"name":"A","phone":"12-AB"}]},"revision":"r1"}"#
    try await publisher.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .desired), payload: Array(bad.utf8), qos: 1, retain: true)
    for _ in 0..<250 where (await agent.status(of: "room-1")) == nil { try await Task.sleep(for: .milliseconds(20)) }
    let status = try #require(await agent.status(of: "room-1"))
    #expect(status.result == .invalid)
    #expect(status.revision == "r1")
    #expect(status.message?.hasPrefix("tsapply/v1/ward-a/room-1/desired:1:89: error: contacts[0].phone: \"12-AB\" contains letters") == true)
    #expect(status.publication == nil)
    #expect(try await site.contacts("room-1") == [])
    // Published again in a publication: answered with a status naming it; delivered again in
    // that publication: nothing new.
    let published = bad.replacingOccurrences(of: #""revision":"r1""#, with: #""publication":"p2","revision":"r1""#)
    for _ in 0..<2 {
      try await publisher.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .desired), payload: Array(published.utf8), qos: 1, retain: true)
    }
    for _ in 0..<250 where (await agent.status(of: "room-1"))?.publication == nil { try await Task.sleep(for: .milliseconds(20)) }
    for _ in 0..<250 where agent.statistics.desiredReceived < 3 { try await Task.sleep(for: .milliseconds(20)) }
    try await Task.sleep(for: .milliseconds(200))
    let answered = try #require(await agent.status(of: "room-1"))
    #expect(answered.result == .invalid && answered.publication == "p2" && answered.message == status.message)
    #expect(agent.statistics.statuses == 2)
    await publisher.close()
    await agent.stop()
  }

  /// A broker restarted from a save older than its newest desired document (crashed within
  /// `autosave_interval`) hands the agent back a publication it handled before the newest: not
  /// applied (it would roll the watch back silently, fresh-eyes finding), answered `invalid`
  /// saying why, also after the agent restarts; a new publication is applied as ever.
  @Test func anOlderPublicationTheBrokerHandsBackIsNotApplied() async throws {
    let site = try await Site(watches: ["room-1"])
    var agent = try await site.agent("station", ["room-1"])
    let publisher = try MQTTClient(address: site.broker.address, configuration: .init(clientID: "publisher"), onMessage: { _ in })
    publisher.connect()
    try await publisher.ready(within: .seconds(120))
    func publish(_ contacts: [String], _ publication: String) async throws -> String {
      let yaml = "contacts:\n" + contacts.enumerated().map { "  - {name: \($1), phone: \"+1555010\($0)\"}\n" }.joined()
      let manifest = try #require(ManifestLoader.load(bytes: Array(yaml.utf8), file: "room-1.yaml").manifest)
      let document = DesiredDocument(manifest: manifest, allowDestroy: true, watch: "room-1", watchID: "room-1", publication: publication)
      try await publisher.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .desired), payload: document.encoded(), qos: 1, retain: true)
      return document.revision
    }
    func answered(_ publication: String) async throws -> WatchStatus {
      for _ in 0..<1500 where (await agent.status(of: "room-1"))?.publication != publication { try await Task.sleep(for: .milliseconds(20)) }
      return try #require(await agent.status(of: "room-1"))
    }
    _ = try await publish(["A"], "pa")
    #expect(try await answered("pa").result == .applied)
    let newer = try await publish(["A", "B"], "pb")
    #expect(try await answered("pb").result == .applied)
    let older = try await publish(["A"], "pa")
    for _ in 0..<1500 where (await agent.status(of: "room-1"))?.result != .invalid { try await Task.sleep(for: .milliseconds(20)) }
    let refused = try #require(await agent.status(of: "room-1"))
    #expect(refused.result == .invalid && refused.revision == older && refused.appliedRevision == newer, "\(refused)")
    #expect(refused.message?.contains("older than publication pb") == true, "\(refused.message ?? "")")
    #expect(try await site.contacts("room-1") == ["A", "B"], "the watch keeps the newer revision")
    // Restarted, the agent is handed the same retained document: still not applied.
    await agent.stop()
    agent = try await site.agent("station", ["room-1"])
    try await Task.sleep(for: .milliseconds(500))
    #expect(try await site.contacts("room-1") == ["A", "B"])
    #expect((await agent.status(of: "room-1"))?.result == .invalid)
    // Published anew (a new publication, even of the older content): applied.
    _ = try await publish(["A"], "pc")
    #expect(try await answered("pc").result == .applied)
    #expect(try await site.contacts("room-1") == ["A"])
    await publisher.close()
    await agent.stop()
  }

  /// A broker restarted from a persistence file saved before the agent's last status (Mosquitto
  /// saves every `autosave_interval`) keeps the agent's session but goes back to an older
  /// status: the watch "in sync" though the agent had reported the wearer's change. The agent
  /// publishes its statuses again at every connection, kept session or not, so the broker
  /// holds the drift again at once, not at the next drift check (fresh-eyes finding: "in
  /// sync", and `drift --fleet` exiting 0, for 4 minutes).
  @Test func aBrokerGoneBackToAnOlderStatusHasTheCurrentOneAgainWhenTheAgentReconnects() async throws {
    // Saved where the broker can write: it stays the user that runs the tests (started as root,
    // Mosquitto would drop to its own user, which cannot write the test's folder).
    let site = try await Site(watches: ["room-1"], configuration: { port, directory in
      MosquittoBroker.openConfiguration(port: port, directory: directory)
        .replacingOccurrences(of: "persistence false", with: "persistence true\npersistence_location \(directory)/\nuser \(NSUserName())")
    })
    let agent = try await site.agent("station", ["room-1"], driftInterval: .seconds(3600))
    #expect(try await site.apply().map(\.verdict.word) == ["applied"])
    let inSync = try #require(await agent.status(of: "room-1"))
    try site.scheme.device("room-1").simulateContactAdd(Contact(name: "Zed", phoneNum: "+15550199"))
    for _ in 0..<1500 where (await agent.status(of: "room-1"))?.drift != 1 { try await Task.sleep(for: .milliseconds(20)) }
    #expect((await agent.status(of: "room-1"))?.drift == 1)
    site.broker = try site.broker.restart()
    // The broker goes back to the status before the drift, before the agent is back.
    let older = try MQTTClient(address: site.broker.address, configuration: .init(clientID: "older"), onMessage: { _ in })
    older.connect()
    try await older.ready(within: .seconds(120))
    try await older.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .status), payload: inSync.encoded(), qos: 1, retain: true)
    await older.close()
    let seen = try await site.row(tries: 300) { $0?.drift == 1 }
    #expect(seen?.drift == 1 && seen?.state == "drift", "\(String(describing: seen))")
    await agent.stop()
  }

  /// A broker restored from a save older than the last publication (a crash between
  /// `autosave_interval`s) keeps the agent's session and hands back an older desired document
  /// that, without subscribing again, the agent is never sent: `status --fleet` said
  /// "applying" for ever and exited 0, then "new revision" (fresh-eyes finding). The agent
  /// subscribes at every connection, is sent it, and answers it `invalid` (`stale_desired`),
  /// not applied; `status --fleet` says `invalid`; the watch keeps the newer revision.
  @Test func aBrokerRestoredFromAnOlderSaveIsAnsweredInvalidAndNothingIsRolledBack() async throws {
    let site = try await Site(watches: ["room-1"], configuration: { port, directory in
      MosquittoBroker.openConfiguration(port: port, directory: directory)
        .replacingOccurrences(of: "persistence false", with: "persistence true\npersistence_location \(directory)/\nuser \(NSUserName())")
    })
    let agent = try await site.agent("station", ["room-1"], driftInterval: .seconds(3600))
    try site.manifest("room-1", contacts: ["A", "B", "C"])
    #expect(try await site.apply().map(\.verdict.word) == ["applied"])
    // The broker saves as it stops; that save is kept.
    let file = site.space.directory + "/mosquitto.db", saved = site.space.directory + "/saved-mosquitto.db"
    site.broker.stop()
    try FileManager.default.copyItem(atPath: file, toPath: saved)
    site.broker = try site.broker.restart()
    try site.manifest("room-1", contacts: ["A", "B", "C", "D"])
    #expect(try await site.apply().map(\.verdict.word) == ["applied"])
    // It crashes and comes back from the older save.
    site.broker.stop()
    try FileManager.default.removeItem(atPath: file)
    try FileManager.default.copyItem(atPath: saved, toPath: file)
    site.broker = try site.broker.restart()
    let seen = try await site.row(tries: 300) { $0?.state == "invalid" }
    #expect(seen?.state == "invalid", "\(String(describing: seen))")
    #expect(seen?.note?.contains("the broker lost the newer one (restarted from an older save)") == true, "\(seen?.note ?? "")")
    #expect(seen?.staleDesired == true)
    // The page says it is the broker's document, not the manifest.
    let report = FleetMonitor.agentReport(try #require(await agent.status(of: "room-1")), current: .success(["x"]))
    #expect(report.state == "invalid" && report.staleDesired, "\(report)")
    #expect((await agent.status(of: "room-1"))?.staleDesired == true)
    #expect(try await site.contacts("room-1") == ["A", "B", "C", "D"])
    // Published again: applied as ever (nothing to change), no longer invalid.
    #expect(try await site.apply().map(\.verdict.word) == ["no changes"])
    #expect(try await site.row()?.state == "in sync")
    await agent.stop()
  }

  /// A broker that lost its retained desired documents (restarted without persistence): the
  /// agents' statuses come back (each drift check publishes one), but `status --fleet` does not
  /// call a watch in sync when the broker holds no desired document for it, and a restarted
  /// agent still checks its watches against the revision it applied (kept beside its status).
  @Test func aBrokerThatLostItsDesiredDocumentsIsReportedAndTheWatchesAreStillChecked() async throws {
    let site = try await Site(watches: ["room-1"])
    let first = try await site.agent("station", ["room-1"], driftInterval: .milliseconds(200))
    try site.manifest("room-1", contacts: ["A", "B", "C"])
    #expect(try await site.apply().map(\.verdict.word) == ["applied"])
    #expect(try await site.row()?.state == "in sync")
    site.broker = try site.broker.restart()
    // The agent reconnects and its next drift check publishes its status again.
    var seen: FleetStatusRow?
    for _ in 0..<100 {
      seen = try await site.row()
      if seen?.state != "no status" { break }
      try await Task.sleep(for: .milliseconds(100))
    }
    #expect(seen?.state == "no desired document", "\(String(describing: seen))")
    #expect(seen?.isFailure == true)
    #expect(seen?.note?.contains("the broker holds no desired document for the watch") == true, "\(seen?.note ?? "")")
    // Both causes named: the broker cannot tell which it was.
    #expect(seen?.note?.contains("as when the watch was taken out of the fleet file and published without it") == true, "\(seen?.note ?? "")")
    await first.stop()
    // Restarted, with nothing retained to hand it: the wearer's change is still found.
    try site.scheme.device("room-1").simulateContactAdd(Contact(name: "Zed", phoneNum: "+15550199"))
    let again = try await site.agent("station", ["room-1"], driftInterval: .milliseconds(200))
    for _ in 0..<1500 where (await again.status(of: "room-1"))?.drift != 1 { try await Task.sleep(for: .milliseconds(20)) }
    #expect((await again.status(of: "room-1"))?.drift == 1)
    // Once the broker has that status (a publisher judges by what the broker holds).
    var drifted = try await site.row()
    for _ in 0..<1500 where drifted?.drift != 1 {
      try await Task.sleep(for: .milliseconds(20))
      drifted = try await site.row()
    }
    #expect(drifted?.state == "no desired document" && drifted?.drift == 1, "\(String(describing: drifted))")
    // Publishing again is the way back: the agent writes the watch back, and the publisher
    // reports the agent's answer to this publication (not the drift status just before it).
    #expect(try await site.apply().map(\.verdict.changesText) == ["+0 ~1 -0"])
    var back = try await site.row()
    for _ in 0..<1500 where back?.state != "in sync" || back?.drift != 0 {
      try await Task.sleep(for: .milliseconds(20))
      back = try await site.row()
    }
    #expect(back?.state == "in sync" && back?.drift == 0, "\(String(describing: back))")
    #expect(try await !site.scheme.device("room-1").getAllContacts().contains { $0.name == "Zed" })
    await again.stop()
  }

  /// A refusal says what the revision itself would change apart from what changed on the
  /// watch since the last apply: the wearer's three new contacts are not the rollout's.
  @Test func aRefusalTellsTheRevisionsOwnChangeFromTheWearersChange() async throws {
    let site = try await Site(watches: ["room-1"])
    let agent = try await site.agent("station", ["room-1"])
    try site.manifest("room-1", contacts: ["A", "B"])
    #expect(try await site.apply().map(\.verdict.word) == ["applied"])
    for name in ["X", "Y", "Z"] {
      try site.scheme.device("room-1").simulateContactAdd(Contact(name: name, phoneNum: "+15550199"))
    }
    try site.manifest("room-1", contacts: ["A"])
    let refused = try await site.apply()
    guard case .refused(let reason) = refused.first?.verdict else { Issue.record("not refused: \(refused)"); return }
    #expect(reason.contains("the revision would change: removes 1 contact"), "\(reason)")
    #expect(reason.contains("changed on the watch since the last apply: contacts (3 added)"), "\(reason)")
    #expect(!reason.contains("the revision's own change: removes 4"), "\(reason)")
    #expect(try await site.contacts("room-1") == ["A", "B", "X", "Y", "Z"])
    await agent.stop()
  }

  /// A revision refused as unsafe (it would remove the wearer's new contact); then the wearer
  /// removes the contact. The refusal ends at the next drift check, not `refused` with advice to
  /// publish with `allow_destroy` for a change no longer there:
  /// - the revision the watch holds, published again: the watch holds it, `no-changes`
  ///   (fresh-eyes fe92 D3: `refused` and its alert stayed);
  /// - a new revision: tried again and applied (fresh-eyes fe94 D2).
  @Test(arguments: [false, true])
  func aRefusalWhoseCauseTheWearerUndidEnds(newRevision: Bool) async throws {
    let site = try await Site(watches: ["room-1"])
    let agent = try await site.agent("station", ["room-1"], driftInterval: .milliseconds(200))
    try site.manifest("room-1", contacts: ["A"])
    #expect(try await site.apply().map(\.verdict.word) == ["applied"])
    let device = try site.scheme.device("room-1")
    try device.simulateContactAdd(Contact(name: "Guest", phoneNum: "+15550199"))
    if newRevision { try site.manifest("room-1", contacts: ["A", "B"]) }
    #expect(try await site.apply().map(\.verdict.word) == ["refused"])
    #expect(try device.simulateContactRemove(name: "Guest") == 1)
    for _ in 0..<500 where await agent.status(of: "room-1")?.result == .refused { try await Task.sleep(for: .milliseconds(20)) }
    let status = try #require(await agent.status(of: "room-1"))
    #expect(status.result == (newRevision ? .applied : .noChanges) && status.drift == 0 && status.revision == status.appliedRevision, "\(status)")
    #expect(try await site.contacts("room-1") == (newRevision ? ["A", "B"] : ["A"]))
    if !newRevision {
      #expect(status.message?.hasPrefix("the watch holds revision \(status.revision) again") == true, "\(status.message ?? "-")")
    }
    #expect(FleetMonitor.agentReport(status, current: .success([status.revision])).state == "in sync")
    await agent.stop()
  }

  /// "Last applied" is when an apply last wrote to the watch: a revision the watch already
  /// matches (the same manifest published with allow_destroy) moves "last seen", not it.
  @Test func lastAppliedMovesOnlyWhenAnApplyWroteToTheWatch() async throws {
    let site = try await Site(watches: ["room-1"])
    let agent = try await site.agent("station", ["room-1"])
    try site.manifest("room-1", contacts: ["A"])
    #expect(try await site.apply().map(\.verdict.word) == ["applied"])
    let applied = try #require(await agent.status(of: "room-1")?.lastApplied)
    try await Task.sleep(for: .milliseconds(1_100))
    #expect(try await site.apply(allowDestroy: true).map(\.verdict.word) == ["no changes"])
    let status = try #require(await agent.status(of: "room-1"))
    #expect(status.result == .noChanges)
    #expect(status.lastApplied == applied)
    #expect(status.lastSeen != applied)
    await agent.stop()
  }

  // MARK: Reports equal what the watch holds (fe17)

  /// An attempt that wrote part of a revision and then timed out, and a retry the safety gate
  /// refused (the wearer added contacts meanwhile, which the retry would remove): the refusal
  /// wrote nothing, but the watch holds part of the revision. The status says what (`1 of 2
  /// applied`), as a failure's does; `apply --fleet` shows it, not `-`; `status --fleet` says
  /// it in its note — never that the watch is untouched.
  @Test func aRefusalAfterAnAttemptThatWrotePartSaysWhatTheWatchHolds() async throws {
    let site = try await Site(watches: ["room-1"], faults: [.init(.fail(.timeout), atCall: 7)])
    let device = site.scheme.device("room-1")
    let lines = Locked<[String]>([])
    let agent = try await site.agent("station", ["room-1"], log: { line in
      lines.mutate { $0.append(line) }
      // The wearer adds three contacts between the two attempts.
      if line.contains("room-1: revision") && line.contains(" retrying: ") {
        for name in ["X", "Y", "Z"] { try? device.simulateContactAdd(Contact(name: name, phoneNum: "+15550199")) }
      }
    })
    try site.manifest("room-1", contacts: ["A", "B"])
    let rows = try await site.apply()
    let first = try #require(lines.value.first { $0.contains(" retrying: ") }, "\(lines.value)")
    #expect(first.hasSuffix("1 of 2 applied") || first.contains("; 1 of 2 applied;"), "\(first)")
    guard case .refused(let reason) = rows.first?.verdict else { Issue.record("not refused: \(rows.map(\.verdict))"); return }
    #expect(reason.contains("the watch holds what earlier attempts at this revision wrote: 1 of 2 applied"), "\(reason)")
    #expect(rows.map(\.changesText) == ["1 of 2 applied"], "\(rows.map(\.changesText))")
    #expect(rows.first?.partlyApplied == true)
    let status = try #require(await agent.status(of: "room-1"))
    #expect(status.result == .refused && status.reached?.total == 1 && status.planned?.total == 2, "\(status)")
    let row = try await FleetStatus.broker(try site.space.load([]).members, site: "ward-a", settings: site.settings,
                                           timeout: .seconds(120)).rows.first
    #expect(row?.state == "refused" && row?.refusedHoldingPart == "1 of 2 applied", "\(String(describing: row))")
    #expect(row?.note?.hasPrefix("1 of 2 applied by earlier attempts: ") == true, "\(row?.note ?? "")")
    await agent.stop()
  }

  /// A watch its agent applied `contacts: [A]` to, then the agent's process killed in the middle
  /// of the next revision (the drinking reminder and contacts A, B): the drinking reminder
  /// written, the contacts not, and the apply's `started` entry, with the whole revision's
  /// counts, last in the history. The manifests are left as the killed apply's (contacts A).
  static func killedMidRevision() async throws -> (site: Site, watch: Watch, revision: ManifestDocument, whole: Plan, drinking: String) {
    let site = try await Site(watches: ["room-1"])
    let first = try await site.agent("station", ["room-1"])
    try site.manifest("room-1", contacts: ["A"])
    #expect(try await site.apply().map(\.verdict.word) == ["applied"])
    await first.stop()
    let drinking = "reminders:\n  drinking: {enabled: true, period: {start: \"07:00\", end: \"19:00\", every: 3h}}\n"
    try site.manifest("room-1", contacts: ["A", "B"], extra: drinking)
    let revision = try site.space.load([]).members[0].document.get()
    let watch = try await site.engine.open("memory:room-1")
    let whole = try await watch.plan(revision).plan
    #expect(whole.counts.total == 2, "\(whole.resourceChanges.map(\.address.rawValue))")
    try site.manifest("room-1", contacts: ["A"], extra: drinking)
    _ = try await watch.apply(try site.space.load([]).members[0].document.get(),
                              options: ApplyOptions(approval: .automatic(allowDestroy: false), command: "test"))
    _ = try watch.history.append(HistoryEntry(time: ApplyHistory.timeText(Date()), kind: "apply", user: "care", host: "phone",
                                              command: "tsapply agent station (site ward-a, watch room-1)", device: watch.identity,
                                              manifest: nil, commit: nil, plan: ApplyHistory.digest(of: whole), add: whole.counts.add,
                                              change: whole.counts.change, destroy: whole.counts.destroy, result: HistoryEntry.started,
                                              error: nil, backup: nil))
    return (site, watch, revision, whole, drinking)
  }

  /// The agent's process killed in the middle of a revision's apply (its first change written,
  /// the second not; the history ends with the apply's `started` entry), and the wearer turning
  /// off a reminder while it was down — in a field the manifests do not set. Restarted, the
  /// agent finishes the revision and reports the whole revision's changes, not only what was
  /// left; and the wearer's change is drift — in the status, and in the record — never taken
  /// in as what tsapply left.
  @Test func anAgentKilledMidApplyReportsTheWholeRevisionAndTheWearersChangeStaysDrift() async throws {
    let (site, watch, revision, whole, drinking) = try await Self.killedMidRevision()
    // Killed within the second of the status before it (statuses give `last_applied` to the
    // second; on a quick machine both fall in one): that status's time is no later than the
    // killed write's, whatever it says — the history says what it accounted for (it was taken
    // as counting the killed apply, whose changes went unreported).
    var kept = try #require(WatchStatus.decode(Array(try Data(contentsOf: URL(fileURLWithPath: watch.home.agentStatusPath)))))
    #expect(kept.historyCounted != nil)
    kept.lastApplied = InternetTime.text(Date().addingTimeInterval(2))
    try Data(kept.encoded()).write(to: URL(fileURLWithPath: watch.home.agentStatusPath))
    // The wearer switches Lunch off (the manifests give its time, not whether it is on).
    let lunch = try #require(try await watch.readState().reminders.first { $0.reminderName == "Lunch" })
    #expect(try site.scheme.device("room-1").simulateReminderToggle(id: lunch.reminderId) == false)
    try site.manifest("room-1", contacts: ["A", "B"], extra: drinking)
    let again = try await site.agent("station", ["room-1"])
    let rows = try await site.apply()
    #expect(rows.map(\.verdict.word) == ["applied"], "\(rows.map(\.verdict))")
    #expect(rows.map(\.verdict.changesText) == ["+\(whole.counts.add) ~\(whole.counts.change) -\(whole.counts.destroy)"],
            "\(rows.map(\.verdict))")
    #expect(try await site.contacts("room-1") == ["A", "B"])
    // The wearer's change: drift in the agent's status, and still drift in the record.
    for _ in 0..<1500 where (await again.status(of: "room-1"))?.drift != 1 { try await Task.sleep(for: .milliseconds(20)) }
    let status = await again.status(of: "room-1")
    #expect(status?.drift == 1 && status?.result == .applied, "\(String(describing: status))")
    #expect(status?.historyCounted == nil, "the history's sequence is said in the kept copy only, never published")
    let drift = try await site.engine.open("memory:room-1").drift(revision).drift.map(\.address.rawValue)
    #expect(drift == ["reminder.custom[\"Lunch\"]"], "\(drift)")
    await again.stop()
  }

  /// The agent's process killed in the middle of a revision's apply (its first change written),
  /// then the wearer adds a contact, so the revision's plan removes it: unsafe, refused. The
  /// refusal wrote nothing, but the watch may hold part of the revision, written by the killed
  /// attempt: the status says so (not known how much), never that nothing was written
  /// (fresh-eyes finding: "Nothing was written" beside a watch holding half of the revision).
  @Test func aRefusalAfterAKilledAttemptSaysTheWatchMayHoldPartOfTheRevision() async throws {
    let (site, _, _, whole, drinking) = try await Self.killedMidRevision()
    // The wearer adds Son: the revision's contacts would remove him.
    try site.scheme.device("room-1").simulateContactAdd(Contact(name: "Son", phoneNum: "+15550199"))
    try site.manifest("room-1", contacts: ["A", "B"], extra: drinking)
    let again = try await site.agent("station", ["room-1"])
    let rows = try await site.apply()
    #expect(rows.map(\.verdict.word) == ["refused"], "\(rows.map(\.verdict))")
    guard case .refused(let reason)? = rows.first?.verdict else { return }
    #expect(reason.contains("an earlier attempt at this revision was cut off (the agent's process ended during it): the watch may hold part of it"),
            "\(reason)")
    #expect(rows.first?.outcomeUnknown == true && rows.first?.changesText == "0 of \(whole.counts.total) applied, \(whole.counts.total) not known",
            "\(rows.first?.changesText ?? "")")
    let status = await again.status(of: "room-1")
    #expect(status?.result == .refused && status?.outcomeUnknown == true, "\(String(describing: status))")
    let row = try await FleetStatus.broker(try site.space.load([]).members, site: "ward-a", settings: site.settings,
                                           timeout: .seconds(120)).rows.first
    #expect(row?.state == "refused" && row?.refusedHoldingPart == "0 of \(whole.counts.total) applied, \(whole.counts.total) not known",
            "\(String(describing: row))")
    await again.stop()
  }

  /// The broker lost every retained message (restarted without persistence) and the manifests
  /// of one watch changed since: every watch whose agent holds an applied revision says
  /// `no desired document`, whatever its manifests give now — not `new revision` for some.
  @Test func everyWatchTheBrokerLostTheDocumentOfSaysSoWhateverTheManifestsGiveNow() async throws {
    let site = try await Site(watches: ["room-1", "room-2"])
    let agent = try await site.agent("station", ["room-1", "room-2"], driftInterval: .milliseconds(200))
    #expect(try await site.apply().map(\.verdict.word) == ["applied", "applied"])
    site.broker = try site.broker.restart()
    try site.manifest("room-2", contacts: ["Family room-2", "Neighbour"])
    var rows: [FleetStatusRow] = []
    for _ in 0..<100 {
      rows = try await FleetStatus.broker(try site.space.load([]).members, site: "ward-a", settings: site.settings,
                                          timeout: .seconds(120)).rows
      if !rows.contains(where: { $0.state == "no status" }) { break }
      try await Task.sleep(for: .milliseconds(100))
    }
    #expect(rows.map(\.state) == ["no desired document", "no desired document"], "\(rows.map { ($0.state, $0.note ?? "") })")
    #expect(rows.last?.note?.contains("and the manifests now give revision") == true, "\(rows.last?.note ?? "")")
    #expect(rows.last?.pending == nil)
    await agent.stop()
  }

  /// A revision published while the watch's agent is offline: the watch is pending, and may
  /// hold part of it (an agent can go down in the middle of an apply): what it holds is not
  /// known (`isNotKnown`, which `status --fleet` counts against its exit status), as `apply
  /// --fleet` counts it.
  @Test func aPendingWatchWhoseAgentIsOfflineIsNotKnown() async throws {
    let site = try await Site(watches: ["room-1"])
    let agent = try await site.agent("station", ["room-1"])
    #expect(try await site.apply().map(\.verdict.word) == ["applied"])
    await agent.stop()
    try site.manifest("room-1", contacts: ["A", "B"])
    #expect(try await site.apply(wait: .seconds(1)).map(\.verdict.word) == ["pending"])
    let row = try await FleetStatus.broker(try site.space.load([]).members, site: "ward-a", settings: site.settings,
                                           timeout: .seconds(120)).rows.first
    #expect(row?.state == "pending" && row?.mayHoldPart == true && row?.isNotKnown == true, "\(String(describing: row))")
  }

  /// A revision whose apply failed after every one of its changes reached the watch (the
  /// wearer added a contact just after the apply wrote the list, so its verification failed):
  /// the watch holds the revision — `status --fleet` says so, and a staged rollout's summary
  /// counts it with the revision (docs/fleet.md "Staged rollouts"), not "without it".
  @Test func aWatchWhoseApplyFailedAfterItsWritesLandedHasTheRevision() async throws {
    let site = try await Site(watches: ["room-1"], latency: .init(perCallMilliseconds: 600, perPacketMilliseconds: 0))
    let agent = try await site.agent("station", ["room-1"])
    #expect(try await site.apply().map(\.verdict.word) == ["applied"])
    try site.manifest("room-1", contacts: ["A"])
    let publishing = Task { try await site.apply() }
    // Read without the link's latency: the moment the list is written, before the apply reads it back.
    for _ in 0..<4000 {
      if try site.scheme.device("room-1").snapshot().contacts.map(\.name) == ["A"] { break }
      try await Task.sleep(for: .milliseconds(5))
    }
    try site.scheme.device("room-1").simulateContactAdd(Contact(name: "Zed", phoneNum: "+15550199"))
    let rows = try await publishing.value
    #expect(rows.map(\.verdict.word) == ["failed"], "\(rows.map(\.verdict))")
    let status = try #require(await agent.status(of: "room-1"))
    #expect(status.reached != nil && status.reached == status.planned, "\(status)")
    let members = try site.space.load([]).members
    let row = try #require(try await FleetStatus.broker(members, site: "ward-a", settings: site.settings, timeout: .seconds(120)).rows.first)
    #expect(row.holdsManifests == true, "\(row)")
    var rollout = RolloutRecord(fleet: "fleet.yaml", members: members, policy: RolloutPolicy(), startedBy: "t@h", now: Date())
    rollout.observe([row], members: members)
    #expect(rollout.withRevision == ["room-1"] && rollout.withoutRevision.isEmpty, "\(rollout.summary(fleetFile: "fleet.yaml"))")
    await agent.stop()
  }

  /// What a staged rollout's summary counts a watch as, from its agent's status (fresh-eyes
  /// findings: the 100 watches of an offline agent were counted as holding the revision "as read
  /// from the watches now" while the page said "not known"; a watch whose first revision was
  /// refused — nothing ever written — was "not known" rather than without it; and a canary
  /// whose write's outcome its agent could not tell — the answer lost, the read back failed too,
  /// `unknown` in its status — was listed without it though it may hold it: `status --fleet`
  /// says `0 of 1 applied, 1 not known`).
  /// (agent online, status fields after `revision` and `watch`, the rollout's bucket, words in the row's note)
  static let holdingCases: [(Bool, String, String, String?)] = [
    (true, #""applied_revision":"REV","result":"applied""#, "with", nil),
    (false, #""applied_revision":"REV","result":"applied""#, "unknown", nil),
    (true, #""applied_revision":"REV","result":"applied","unreachable":"Device not connected (2003)","unreachable_since":"2026-12-05T12:00:00Z""#,
     "unknown", nil),
    (true, #""message":"unsafe","result":"refused""#, "without", nil),
    (true, #""applied_revision":"0123456789abcdef","message":"unsafe","result":"refused""#, "without", nil),
    (true, #""applied_revision":"0123456789abcdef","message":"timeout","planned":{"add":0,"change":1,"destroy":0},"#
      + #""reached":{"add":0,"change":0,"destroy":0},"result":"retrying","unknown":1"#, "unknown", "(0 of 1 applied, 1 not known)"),
  ]

  @Test(arguments: holdingCases.indices)
  func aRolloutCountsWhatTheAgentsStatusSaysTheWatchHolds(_ index: Int) async throws {
    let (online, fields, bucket, words) = Self.holdingCases[index]
    let site = try await Site(watches: ["room-1"])
    try site.manifest("room-1", contacts: ["A"])
    let published = try #require(try await site.apply(wait: .seconds(1)).first)
    guard case .string(let revision)? = published.details["revision"] else { Issue.record("\(published.details)"); return }
    let members = try site.space.load([]).members
    let publisher = try MQTTClient(address: site.broker.address, configuration: .init(clientID: "agent-side"), onMessage: { _ in })
    publisher.connect()
    try await publisher.ready(within: .seconds(120))
    let announced = #"{"agent":"station","format_version":"1","online":\#(online),"watches":["room-1"]}"#
    try await publisher.publish(FleetTopics.agent(site: "ward-a", agent: "station"), payload: Array(announced.utf8), qos: 1, retain: true)
    let status = #"{"agent":"station","device":"memory:room-1","drift":0,"format_version":"1","last_seen":"2026-12-05T12:00:00Z","pending":0,"#
      + fields.replacingOccurrences(of: "REV", with: revision) + #","revision":"\#(revision)","watch":"room-1"}"#
    try await publisher.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .status), payload: Array(status.utf8), qos: 1, retain: true)
    let row = try #require(try await FleetStatus.broker(members, site: "ward-a", settings: site.settings, timeout: .seconds(120)).rows.first)
    var rollout = RolloutRecord(fleet: "fleet.yaml", members: members, policy: RolloutPolicy(), startedBy: "t@h", now: Date())
    rollout.observe([row], members: members)
    let counted = rollout.withRevision == ["room-1"] ? "with" : rollout.withoutRevision == ["room-1"] ? "without"
      : rollout.unknownRevision == ["room-1"] ? "unknown" : "?"
    #expect(counted == bucket, "\(row.state) \(String(describing: row.holdsManifests)): \(rollout.summary(fleetFile: "fleet.yaml"))")
    if let words { #expect(row.note?.contains(words) == true, "\(row.note ?? "")") }
    await publisher.close()
  }

  /// Two online agents announcing one watch (an agent started twice with other IDs, a watch
  /// moved to another agent and left in the first one's --device): said, with both agents —
  /// nothing said it before (fe32, fe34); one of them offline is a watch moved, not shared.
  @Test(arguments: [(true, ["station", "second"]), (false, [])])
  func aWatchServedByTwoOnlineAgentsIsSaid(bothOnline: Bool, agents: [String]) async throws {
    let site = try await Site(watches: ["room-1", "room-2"])
    let members = try site.space.load([]).members
    let publisher = try MQTTClient(address: site.broker.address, configuration: .init(clientID: "agent-side"), onMessage: { _ in })
    publisher.connect()
    try await publisher.ready(within: .seconds(120))
    for (agent, online, watches) in [("station", true, #"["room-1","room-2"]"#), ("second", bothOnline, #"["room-1"]"#)] {
      let announced = #"{"agent":"\#(agent)","format_version":"1","online":\#(online),"watches":\#(watches)}"#
      try await publisher.publish(FleetTopics.agent(site: "ward-a", agent: agent), payload: Array(announced.utf8), qos: 1, retain: true)
    }
    // The watch's last status: in sync, from whichever of them spoke last.
    let revision = try #require(DesiredDocument.revisions(manifest: members[0].document.get().manifest).first)
    let status = #"{"agent":"station","applied_revision":"\#(revision)","device":"memory:room-1","drift":0,"format_version":"1","#
      + #""last_seen":"2026-12-05T12:00:00Z","pending":0,"result":"applied","revision":"\#(revision)","watch":"room-1"}"#
    try await publisher.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .status), payload: Array(status.utf8), qos: 1, retain: true)
    let site2 = try await FleetStatus.broker(members, site: "ward-a", settings: site.settings, timeout: .seconds(120))
    // Its row: not the status's "in sync" beside the problem (fresh-eyes fe102 #9: `plan` and
    // `drift --fleet` exited 0 for it), but not known, which fails all three commands.
    let row = try #require(site2.rows.first)
    if bothOnline {
      #expect(row.state == "no status" && row.isNotKnown && row.note?.contains("served by more than one agent at once (second, station)") == true,
              "\(row.state): \(row.note ?? "")")
      #expect(row.planVerdict.isUnknown && row.driftVerdict(reported: nil, document: nil).isUnknown,
              "\(row.planVerdict) \(row.driftVerdict(reported: nil, document: nil))")
    } else {
      // (No desired document is on this broker: that is what its row says, served by one agent.)
      #expect(row.state == FleetStatusRow.noDesiredDocument && !row.servedByMany && !row.isNotKnown, "\(row.state): \(row.note ?? "")")
    }
    #expect(site2.servedByMany.map(\.watch) == (agents.isEmpty ? [] : ["room-1"]))
    #expect(site2.servedByMany.first?.agents ?? [] == agents.sorted())
    if bothOnline {
      #expect(site2.servedByManyWords?.hasPrefix("1 watch is served by more than one agent at once: room-1 (second, station)") == true,
              "\(site2.servedByManyWords ?? "")")
    }
    await publisher.close()
  }

  /// `apply --fleet` while two online agents serve one watch: each applies what it is handed
  /// and reports on the watch, so the row's "applied" is whichever agent spoke last, about
  /// whichever watch it reads — not known, counted against the exit status, with both agents
  /// named, as `status --fleet` says it (fresh-eyes fe100: "applied", exit 0).
  @Test func anApplyWhileTwoAgentsServeOneWatchIsNotKnown() async throws {
    let site = try await Site(watches: ["room-1", "room-2"])
    let station = try await site.agent("station", ["room-1", "room-2"])
    let second = try await site.agent("second", ["room-1"], engine: Engine(registry: DeviceRegistry(schemes: [MemoryScheme()], defaultSpec: "memory:default"),
                                                                           environment: ["TSAPPLY_STATE_DIR": site.space.directory + "/state2"],
                                                                           currentDirectory: site.space.directory))
    let rows = try await site.apply()
    let shared = try #require(rows.first { $0.name == "room-1" }), alone = try #require(rows.first { $0.name == "room-2" })
    #expect(shared.verdict.isUnknown, "\(shared.verdict)")
    if case .unknown(let reason) = shared.verdict {
      #expect(reason.contains("served by more than one agent at once (second, station)"), "\(reason)")
    }
    #expect(alone.verdict.isFailure == false && alone.verdict.isUnknown == false, "\(alone.verdict)")
    await second.stop()
    await station.stop()
  }

  /// A watch whose last status came from an agent with no presence on the broker (retired by
  /// deleting it, or lost by the broker) and that no agent announces is served by no one: `no
  /// status`, not known, which fails `status --fleet` — not the status's "in sync" (fresh-eyes fe102 #4).
  @Test func aWatchOfAnAgentWithNoPresenceIsServedByNoOne() async throws {
    let site = try await Site(watches: ["room-1"])
    let members = try site.space.load([]).members
    let publisher = try MQTTClient(address: site.broker.address, configuration: .init(clientID: "agent-side"), onMessage: { _ in })
    publisher.connect()
    try await publisher.ready(within: .seconds(120))
    let status = #"{"agent":"station","applied_revision":"0123456789abcdef","device":"memory:room-1","drift":0,"format_version":"1","#
      + #""last_seen":"2026-12-05T12:00:00Z","pending":0,"result":"applied","revision":"0123456789abcdef","watch":"room-1"}"#
    try await publisher.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .status), payload: Array(status.utf8), qos: 1, retain: true)
    let row = try #require(try await FleetStatus.broker(members, site: "ward-a", settings: site.settings, timeout: .seconds(120)).rows.first)
    #expect(row.state == "no status" && row.servedByNoOne && row.isNotKnown, "\(row.state): \(row.note ?? "")")
    #expect(row.note?.contains("agent station, which last reported on the watch, has no presence on the broker") == true, "\(row.note ?? "")")
    // Its last read found the emergency list drifted: said first, as when last read.
    let drifted = status.replacingOccurrences(of: #""drift":0"#, with: #""drift":1,"drift_addresses":["emergency"],"sos_at_risk":true"#)
    try await publisher.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .status), payload: Array(drifted.utf8), qos: 1, retain: true)
    let again = try #require(try await FleetStatus.broker(members, site: "ward-a", settings: site.settings, timeout: .seconds(120)).rows.first)
    #expect(again.state == "no status" && again.note?.hasPrefix("SOS at risk when its agent last read it (2026-12-05T12:00:00Z): ") == true
              && again.note?.contains("(it last reported applied, 1 changed on the watch since its last apply, read at") == true,
            "\(again.state): \(again.note ?? "")")
    await publisher.close()
  }

  /// A revision its agent refused, the agent offline since: still `refused` (what it did with
  /// the revision), and the note says what the watch holds now is not known (fresh-eyes fe103 #5).
  @Test func aRefusalWhoseAgentIsOfflineSaysTheWatchIsNotKnown() async throws {
    let site = try await Site(watches: ["room-1"])
    let members = try site.space.load([]).members
    let publisher = try await FleetMonitorTests.agentsSide(site.broker)
    let presence = #"{"agent":"station","format_version":"1","online":false,"since":"2026-12-05T13:00:00Z","watches":["room-1"]}"#
    try await publisher.publish(FleetTopics.agent(site: "ward-a", agent: "station"), payload: Array(presence.utf8), qos: 1, retain: true)
    let revision = try #require(DesiredDocument.revisions(manifest: members[0].document.get().manifest).first)
    let status = #"{"agent":"station","device":"memory:room-1","drift":0,"format_version":"1","last_seen":"2026-12-05T12:00:00Z","#
      + #""message":"removes 1 emergency contact","pending":1,"result":"refused","revision":"\#(revision)","watch":"room-1"}"#
    try await publisher.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .status), payload: Array(status.utf8), qos: 1, retain: true)
    let row = try #require(try await FleetStatus.broker(members, site: "ward-a", settings: site.settings, timeout: .seconds(120)).rows.first)
    #expect(row.state == "refused" && row.note?.hasSuffix("; agent station is offline: what the watch holds now is not known") == true,
            "\(row.state): \(row.note ?? "")")
    await publisher.close()
  }

  /// A watch whose manifest has errors here: its row keeps when its agent last wrote and read
  /// the watch (fresh-eyes fe100: both blank beside `invalid`).
  @Test func aWatchWhoseManifestHasErrorsKeepsItsLastAppliedAndSeen() async throws {
    let site = try await Site(watches: ["room-1"])
    let agent = try await site.agent("station", ["room-1"])
    try site.manifest("room-1", contacts: ["A"])
    #expect(try await site.apply().map(\.verdict.word) == ["applied"])
    try site.space.write("residents/room-1.yaml", "contacts: [\n")
    let members = try site.space.load([]).members
    let row = try #require(try await FleetStatus.broker(members, site: "ward-a", settings: site.settings, timeout: .seconds(120)).rows.first)
    #expect(row.state == "invalid" && row.lastApplied != nil && row.lastSeen != nil, "\(row)")
    await agent.stop()
  }

  // MARK: Statuses answer their publication

  /// Holds `name`'s watch lock, as another tsapply would: the agent's next apply waits for it
  /// (up to its 10 s lock timeout), so what the test publishes meanwhile arrives while that
  /// apply is under way, whatever the timing.
  static func hold(_ site: Site, _ name: String) async throws -> WatchLock {
    let watch = try await site.engine.open("memory:\(name)")
    // Its records folder exists once something was recorded; before the first apply, not yet.
    try SecureFile.createDirectory((watch.home.lockPath as NSString).deletingLastPathComponent)
    return try await WatchLock.acquire(at: watch.home.lockPath, holder: WatchLock.currentHolder(command: "test holding the watch"),
                                       timeout: .zero)
  }

  /// Revision A applied long ago (its status retained); someone publishes B and the agent
  /// starts on it; `apply --fleet` of A again must report what the agent does with this
  /// publication, not the old "A applied" — the watch holds B until the agent writes A back.
  @Test func republishingARevisionWhileTheAgentAppliesAnotherWaitsForTheAnswerToThisPublication() async throws {
    let site = try await Site(watches: ["room-1"])
    let agent = try await site.agent("station", ["room-1"])
    try site.manifest("room-1", contacts: ["A", "B", "C"])
    #expect(try await site.apply().map(\.verdict.word) == ["applied"])
    let lock = try await Self.hold(site, "room-1")
    // B published by someone who does not wait; the agent starts on it and waits for the watch.
    try site.manifest("room-1", contacts: ["A", "B", "C", "D"])
    _ = try await site.apply(wait: .zero)
    for _ in 0..<500 where agent.statistics.applies < 2 { try await Task.sleep(for: .milliseconds(10)) }
    #expect(agent.statistics.applies == 2)
    // A again, while the agent is still on B.
    try site.manifest("room-1", contacts: ["A", "B", "C"])
    let republished = Task { try await site.apply() }
    for _ in 0..<500 where agent.statistics.desiredReceived < 3 { try await Task.sleep(for: .milliseconds(10)) }
    lock.release()
    let rows = try await republished.value
    #expect(rows.map(\.verdict.word) == ["applied"], "\(rows.map(\.verdict))")
    #expect(rows.first?.verdict.changesText == "+0 ~1 -0")
    #expect(try await site.contacts("room-1") == ["A", "B", "C"])
    await agent.stop()
  }

  /// An agent's `error` event says in `result` whether the agent tries again (`retrying`: a
  /// timeout can pass) or not (`failed`: the watch refused the data), so a receiver needs no status.
  @Test(arguments: [(SimulationOptions.Fault.Kind.fail(.timeout), "retrying"), (.fail(.dataSetFailed), "failed")])
  func anErrorEventSaysWhetherTheAgentTriesAgain(fault: SimulationOptions.Fault.Kind, result: String) async throws {
    let site = try await Site(watches: ["room-1"], faults: [.init(fault, atCall: 6)])
    let (events, listener) = try await site.events()
    let agent = try await site.agent("station", ["room-1"])
    try site.manifest("room-1", contacts: ["A", "B", "C"])
    _ = try await site.apply(wait: .zero)
    let error = await events.wait(for: 1, within: 60).first
    #expect(error?.kind == .error && error?.result == result, "\(String(describing: error))")
    await listener.close()
    await agent.stop()
  }

  /// A first attempt that failed before anything reached the watch (a timeout on its first
  /// write, `0 of N applied`), then a retry that applied it: the log says the revision was
  /// applied, not that earlier attempts wrote part of it.
  @Test func aRetryAfterAnAttemptThatWroteNothingDoesNotCreditIt() async throws {
    let site = try await Site(watches: ["room-1"], faults: [.init(.fail(.timeout), atCall: 6)])
    let lines = Locked<[String]>([])
    let agent = try await site.agent("station", ["room-1"], log: { line in lines.mutate { $0.append(line) } })
    try site.manifest("room-1", contacts: ["A", "B", "C"])
    #expect(try await site.apply().map(\.verdict.word) == ["applied"])
    let applied = try #require(lines.value.first { $0.contains("room-1: revision") && $0.contains(" applied (") })
    #expect(!applied.contains("earlier attempts wrote"), "\(lines.value)")
    await agent.stop()
  }

  /// An earlier `apply --fleet` of the same revision, interrupted (it did not wait): its apply
  /// fails for good just after this run publishes again, and the agent then applies this run's
  /// document. This run reports that answer, not the earlier run's failure.
  @Test func aFailureAnsweringAnEarlierPublicationOfTheSameRevisionIsNotThisRunsAnswer() async throws {
    let site = try await Site(watches: ["room-1"], faults: [.init(.fail(.dataSetFailed), atCall: 6)])
    let agent = try await site.agent("station", ["room-1"])
    try site.manifest("room-1", contacts: ["A", "B", "C"])
    let lock = try await Self.hold(site, "room-1")
    // The interrupted run: published, did not wait.
    _ = try await site.apply(wait: .zero)
    for _ in 0..<500 where agent.statistics.applies < 1 { try await Task.sleep(for: .milliseconds(10)) }
    let again = Task { try await site.apply() }
    for _ in 0..<500 where agent.statistics.desiredReceived < 2 { try await Task.sleep(for: .milliseconds(10)) }
    lock.release()
    let rows = try await again.value
    #expect(rows.map(\.verdict.word) == ["applied"], "\(rows.map(\.verdict))")
    #expect(try await site.contacts("room-1") == ["A", "B", "C"])
    #expect(agent.statistics.applies == 2, "the earlier run's apply failed, this run's applied")
    await agent.stop()
  }
}

extension FleetWatchReport {
  /// The publication the row's document was published in (`details["publication"]`).
  var publication: String? { if case .string(let text)? = details["publication"] { text } else { nil } }
}
