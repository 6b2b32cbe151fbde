import Foundation
import Testing
import TSDevice
import TSEngine
import TSFleet
import TSManifest
import TSModel
import TSMQTT
import TSPlan
import TSTestSupport

/// The watch states agents publish on `tsapply/v1/SITE/WATCH-ID/state` (docs/fleet.md "Reported
/// states"), through a real Mosquitto on 127.0.0.1: published after an apply's read-back and
/// when a drift check reads another state, never again for the same one; planned against by the
/// engine's planner.
@Suite struct ReportedStateTests {
  /// Waits (at most 5 s) until `condition` holds.
  static func eventually(_ condition: () async -> Bool) async throws {
    for _ in 0..<250 where !(await condition()) { try await Task.sleep(for: .milliseconds(20)) }
  }

  /// The site's reported states as a new reader sees them.
  static func reported(_ site: AgentTests.Site) async throws -> [String: ReportedState] {
    let view = try FleetBrokerView(settings: site.settings, site: "ward-a", states: true)
    try await view.connect(within: .seconds(120))
    let states = view.reportedStates
    await view.close()
    return states
  }

  @Test func anAgentPublishesTheStateItReadOnlyWhenItDiffersFromTheLastItPublished() async throws {
    let site = try await AgentTests.Site(watches: ["room-1", "room-2"])
    let agent = try await site.agent("station", ["room-1", "room-2"], driftInterval: .milliseconds(100))
    #expect(try await site.apply().map(\.verdict.word) == ["applied", "applied"])
    try await Self.eventually { agent.statistics.states >= 2 }
    let first = try await Self.reported(site)
    let report = try #require(first["room-1"])
    #expect(report.agent == "station" && report.watchID == "room-1" && report.profile == "default")
    #expect(report.device == (try site.scheme.device("room-1")).identity)
    #expect(report.readTime != nil)
    #expect(report.state.contacts.map(\.name) == ["Family room-1"])
    #expect(first["room-2"]?.state.contacts.map(\.name) == ["Family room-2"])
    // Drift checks every 100 ms read the same states: nothing more is published.
    let seen = (await agent.status(of: "room-1"))?.lastSeen
    try await Task.sleep(for: .milliseconds(1_100))
    #expect((await agent.status(of: "room-1"))?.lastSeen != seen, "the drift checks ran")
    #expect(agent.statistics.states == 2)
    // The wearer adds a contact: the next read publishes room-1's new state, and only it.
    try site.scheme.device("room-1").simulateContactAdd(Contact(name: "Zed", phoneNum: "+15550199"))
    try await Self.eventually { agent.statistics.states == 3 }
    #expect(agent.statistics.states == 3)
    // Counted as it is published, on the broker a moment later.
    var second = try await Self.reported(site)
    for _ in 0..<100 where second["room-1"]?.state.contacts.map(\.name) != ["Family room-1", "Zed"] {
      try await Task.sleep(for: .milliseconds(50))
      second = try await Self.reported(site)
    }
    #expect(second["room-1"]?.state.contacts.map(\.name) == ["Family room-1", "Zed"])
    #expect(second["room-2"] == first["room-2"])
    await agent.stop()
  }

  /// An apply that finds the watch already matching keeps no read state: the agent reads the
  /// watch once for the state topic (a drift check), so an agent started afresh publishes it.
  @Test func anAgentThatFindsTheWatchMatchingPublishesItsStateOnce() async throws {
    let site = try await AgentTests.Site(watches: ["room-1"])
    let first = try await site.agent("station", ["room-1"])
    #expect(try await site.apply().map(\.verdict.word) == ["applied"])
    await first.stop()
    // The same manifests with allow_destroy: a new revision the watch already matches.
    #expect(try await site.apply(allowDestroy: true, wait: .zero).map(\.verdict.word) == ["pending"])
    let second = try await site.agent("station", ["room-1"])
    try await Self.eventually { (await second.status(of: "room-1"))?.result == .noChanges && second.statistics.states == 1 }
    #expect((await second.status(of: "room-1"))?.result == .noChanges)
    #expect(second.statistics.states == 1)
    #expect(second.statistics.applies == 1)
    #expect(try await Self.reported(site)["room-1"]?.state.contacts.map(\.name) == ["Family room-1"])
    await second.stop()
  }

  /// The manifests planned against a reported state give the plan a watch read directly gives
  /// (the same planner): one field changed, one change; nothing for the same manifests.
  @Test func aPlanAgainstTheReportedStateIsThePlanAgainstTheWatch() async throws {
    let site = try await AgentTests.Site(watches: ["room-1", "room-2"])
    let agent = try await site.agent("station", ["room-1", "room-2"])
    #expect(try await site.apply().map(\.verdict.word) == ["applied", "applied"])
    try await Self.eventually { agent.statistics.states >= 2 }
    await agent.stop()
    try site.manifest("room-1", contacts: ["Family room-1"], extra: "emergency:\n  sos: true\n  contacts:\n    - {name: Ward desk, phone: \"+15550150\"}\n")
    let reported = try await Self.reported(site)
    let loaded = try site.space.load()
    for member in loaded.members {
      guard case .success(let document) = member.document, let report = reported[member.watch.watchID] else {
        Issue.record("no document or no reported state for \(member.name)")
        continue
      }
      let plan = try report.plan(document)
      let direct = try await site.engine.open(member.device).plan(document).plan
      #expect(plan.resourceChanges == direct.resourceChanges, "\(member.name)")
    }
    let room1 = try #require(loaded.members.first { $0.name == "room-1" })
    guard case .success(let document) = room1.document else { return }
    #expect(try reported["room-1"]?.plan(document).resourceChanges.map(\.address.rawValue) == ["emergency"])
  }

  /// 30 watches over MQTT planned against their agents' readings of different ages: the same
  /// change is one group, which names its oldest reading; a watch with no reading keeps its
  /// status's line; the caveat comes before the totals (golden, with a fixed clock).
  @Test func aGroupOfWatchesPlannedAgainstReadingsNamesTheOldest() throws {
    let now = try #require(InternetTime.date("2026-12-05T01:30:00Z"))
    let document = ManifestDocumentFixture.document("contacts:\n  - {name: Daughter, phone: \"+447700960456\"}\n",
                                                    file: "residents/room.yaml")
    var state = PlatformProfile.default.factoryState
    state.contacts = [Contact(name: "Daughter", phoneNum: "+447700900456")]
    let rows = try (0..<30).map { index -> FleetWatchReport in
      let name = String(format: "room-%02d", index)
      guard index != 7 else {
        return FleetWatchReport(name: name, device: "bridge:ward-a/\(name)", verdict: .publish("no agent has announced the watch \(name)"),
                                elapsed: .zero)
      }
      let report = ReportedState(agent: index < 20 ? "a01" : "a02", watchID: name, device: "bridge:ward-a/\(name)", profile: "default",
                                 readAt: String(format: "2026-12-05T01:%02d:00Z", 29 - index), state: state)
      let plan = try report.plan(document)
      var row = FleetWatchReport(name: name, device: "bridge:ward-a/\(name)", verdict: .changes(plan.counts), elapsed: .zero, plan: plan,
                                 manifests: ["residents/\(name).yaml"])
      row.basis = FleetStateBasis(report, now: now, agentOnline: index < 20)
      return row
    }
    let report = FleetReport(operation: "plan", fleetFile: "fleet.yaml", watches: rows)
    let renderer = HumanPlanRenderer(color: false, redact: false)
    expectGolden(report.review(renderer: renderer), "review-reported-states.txt")
    expectGolden(report.review(renderer: renderer, options: FleetReviewOptions(summary: true)), "review-reported-states-summary.txt")
    expectGolden(report.markdown(renderer: renderer), "review-reported-states.md")
  }

  /// The completion rule of a view (docs/fleet.md "Complete views only") holds for the states
  /// too: 1,000 watches' statuses and 50-contact states on a broker with its default settings
  /// (1,000 queued messages), all seen by every one of three views.
  @Test func aViewSeesEveryRetainedStateOfAThousandWatches() async throws {
    let site = try await FleetViewTests.RetainedSite(watches: 1_000, agents: 10)
    let publisher = try MQTTClient(address: site.broker.address, configuration: .init(clientID: "states"), onMessage: { _ in })
    publisher.connect()
    try await publisher.ready(within: .seconds(120))
    var state = PlatformProfile.default.factoryState
    state.contacts = (0..<50).map { Contact(name: "Contact \($0)", phoneNum: "+4477009\(String(format: "%05d", $0))") }
    try await withThrowingTaskGroup(of: Void.self) { group in
      for watch in site.watches {
        let report = ReportedState(agent: "a00", watchID: watch, device: watch, profile: "default", readAt: "2026-12-05T01:20:03Z", state: state)
        group.addTask { try await publisher.publish(FleetTopics.watch(site: "ward-a", watch: watch, .state), payload: report.encoded(), qos: 1, retain: true) }
      }
      try await group.waitForAll()
    }
    await publisher.close()
    for run in 1...3 {
      let view = try FleetBrokerView(settings: site.settings, site: "ward-a", states: true)
      try await view.connect(within: .seconds(120))
      let states = view.reportedStates, statuses = view.statuses
      await view.close()
      #expect(states.count == 1_000 && statuses.count == 1_000, "run \(run): \(states.count) states, \(statuses.count) statuses")
      #expect(states.values.allSatisfy { $0.state.contacts.count == 50 })
    }
  }

  /// A report of a platform this tsapply does not know, or of another format, is not planned against.
  @Test func aReportOfAnUnknownPlatformOrFormatIsRefused() throws {
    var report = ReportedState(agent: "a01", watchID: "room-1", device: "memory:room-1", profile: "watch-9000",
                               readAt: "2026-12-05T01:20:03Z", state: PlatformProfile.default.factoryState)
    let document = ManifestDocumentFixture.document("contacts: []\n")
    #expect(throws: EngineError.self) { try report.plan(document) }
    report.formatVersion = "2"
    #expect(ReportedState.decode(report.encoded()) == nil)
    report.formatVersion = "1"
    #expect(ReportedState.decode(report.encoded()) == report)
  }

  /// The retained size of a 50-contact watch's state is what docs/fleet.md "Reported states" says.
  @Test func theSizeOfAFiftyContactWatchsStateIsTheOneTheDocsGive() throws {
    var state = PlatformProfile.default.factoryState
    let names = ["Ann Baker", "Bob Carter", "Cleo Dunn", "Dev Ellis", "Eve Fischer", "Finn Grant", "Gail Hughes"]
    state.contacts = (0..<50).map { index in
      Contact(name: "\(names[index % names.count]) \(index)", phoneNum: "+4477009\(String(format: "%05d", index))")
    }
    state.emergency = EmergencyContacts(contacts: [Contact(name: "Ward desk", phoneNum: "+447700900001"),
                                                   Contact(name: "Daughter", phoneNum: "+447700900002")], isSosOn: true)
    let report = ReportedState(agent: "ward-a-station", watchID: "AA:BB:CC:DD:EE:12", device: "bridge:ward-a/AA:BB:CC:DD:EE:12",
                               profile: "default", readAt: "2026-12-05T01:20:03Z", state: state)
    let size = report.encoded().count
    #expect(ReportedState.decode(report.encoded()) == report)
    let docs = try String(contentsOf: TSApplyBinary.packageRoot.appendingPathComponent("docs/fleet.md"), encoding: .utf8)
    let perThousand = String(format: "%.1f", Double(size) * 1000 / 1_000_000)
    #expect(docs.contains("the retained state is\n\(size) bytes") || docs.contains("the retained state is \(size) bytes"),
            "docs/fleet.md should give \(size) bytes")
    #expect(docs.contains("about \(perThousand) MB"), "docs/fleet.md should give about \(perThousand) MB for 1,000 watches")
  }
}
