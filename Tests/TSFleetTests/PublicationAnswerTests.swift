import Foundation
import Testing
@testable import TSFleet
import TSMQTT
import TSPlan
import TSModel

/// Which status answers a published desired document (`FleetPublication.answer`, docs/fleet.md
/// "`apply`, `plan`, `drift` and `status` over MQTT"): with a publication only a final status
/// naming it; without one (an agent that does not announce publications) the earlier rule by
/// revision and time of arrival.
@Suite struct PublicationAnswerTests {
  /// Whether the page takes an agent's drift count as known: a refused (or invalid) revision
  /// leaves the watch checked against the revision the agent applied — but an agent that never
  /// applied one (a fresh state folder, its first revision refused) has measured nothing, and
  /// its `drift: 0` must not end a drift (fresh-eyes finding: "sos drift is over" while the
  /// watch held an unknown emergency number).
  @Test(arguments: [(WatchStatus.Result.refused, "aaaaaaaaaaaaaaaa" as String?, 2 as Int?), (.refused, nil, nil), (.invalid, nil, nil),
                    (.applied, "aaaaaaaaaaaaaaaa", 2), (.failed, "aaaaaaaaaaaaaaaa", nil)])
  func driftIsKnownOnlyAgainstARevisionTheAgentApplied(_ result: WatchStatus.Result, _ applied: String?, _ drift: Int?) {
    var status = WatchStatus(agent: "station", watch: "room-1", device: "memory:room-1", revision: "aaaaaaaaaaaaaaaa", appliedRevision: applied,
                             result: result, drift: 2, pending: 1)
    if applied == nil { status.drift = 0 }
    let report = FleetMonitor.agentReport(status, current: .success(["aaaaaaaaaaaaaaaa"]))
    #expect(report.drift == (applied == nil ? nil : drift), "\(result) \(applied ?? "never applied"): \(report)")
  }

  struct Row: Sendable, CustomTestStringConvertible {
    var name: String
    /// The document's publication.
    var published: String?
    /// The status: its publication, revision, result, drift, and whether it arrived before the
    /// publication began.
    var answering: String?
    var revision = "r1"
    var result: WatchStatus.Result = .applied
    var drift = 0
    var before = false
    /// The verdict's word, `nil` for "not an answer yet".
    var verdict: String?
    var testDescription: String { name }
  }

  static let rows: [Row] = [
    // With a publication.
    Row(name: "this run's answer", published: "p2", answering: "p2", verdict: "applied"),
    Row(name: "this run's no-changes", published: "p2", answering: "p2", result: .noChanges, verdict: "no changes"),
    Row(name: "this run's failure", published: "p2", answering: "p2", result: .failed, verdict: "failed"),
    Row(name: "this run's answer, still retrying", published: "p2", answering: "p2", result: .retrying, verdict: nil),
    Row(name: "an earlier run's answer arriving now", published: "p2", answering: "p1", result: .failed, verdict: nil),
    Row(name: "an earlier run's settled status from before", published: "p2", answering: "p1", before: true, verdict: nil),
    Row(name: "a status from an agent that named no publication", published: "p2", answering: nil, verdict: nil),
    Row(name: "another revision, this publication", published: "p2", answering: "p2", revision: "r0", verdict: nil),
    // Without one: the rule by revision and time.
    Row(name: "no publication: an answer after publishing", published: nil, answering: nil, verdict: "applied"),
    Row(name: "no publication: settled before", published: nil, answering: nil, before: true, verdict: "no changes"),
    Row(name: "no publication: drifted before", published: nil, answering: nil, drift: 1, before: true, verdict: nil),
    Row(name: "no publication: failed before", published: nil, answering: nil, result: .failed, before: true, verdict: nil),
    Row(name: "no publication: refused before", published: nil, answering: nil, result: .refused, before: true, verdict: "refused"),
    Row(name: "no publication: another revision", published: nil, answering: nil, revision: "r0", verdict: nil),
  ]

  /// A monitor's own manifests that do not load make the watch `invalid` in words that reach
  /// the alerts and the log: a phone number in them is masked, as the agents mask theirs
  /// (fresh-eyes fe100 #7: `"+1 555 01x4"` whole in the `invalid` alert).
  @Test func aLocalManifestErrorIsToldWithItsNumbersMasked() {
    let status = WatchStatus(agent: "a01", watch: "room-1", device: "memory:room-1", revision: "r1", appliedRevision: "r1",
                             result: .applied, drift: 0, pending: 0)
    let problem = FleetInputProblem(diagnostics: [.error(at: SourcePosition(file: "room-14.yaml", line: 3, column: 12), field: "contacts[0].phone",
                                                         "\"+1 555 0104x4\" holds the letter 'x'")], subject: "room-14.yaml")
    let report = FleetMonitor.agentReport(status, current: .failure(problem))
    #expect(report.state == "invalid" && report.note?.contains("room-14.yaml:3:12") == true && report.note?.contains("555 0104") == false,
            "\(String(describing: report.note))")
  }

  @Test(arguments: rows)
  func aStatusAnswersADocumentByThisRule(_ row: Row) throws {
    let manifest = try manifest("contacts: []\n", file: "a.yaml")
    var document = DesiredDocument(manifest: manifest, allowDestroy: false, watch: "room-1", publication: row.published)
    document.revision = "r1"
    var status = WatchStatus(agent: "a01", watch: "room-1", device: "memory:room-1", revision: row.revision, appliedRevision: row.revision,
                             result: row.result, drift: row.drift, pending: 0)
    status.publication = row.answering
    status.changes = PlanCounts(add: 1, change: 0, destroy: 0)
    let publishedAt = ContinuousClock.now
    let received = row.before ? publishedAt - .seconds(60) : publishedAt + .milliseconds(5)
    let verdict = FleetPublication.answer(status, received: received, to: document, publishedAt: publishedAt)
    #expect(verdict?.word == row.verdict, "\(String(describing: verdict))")
  }

  /// The publisher names its publication only for a watch whose serving agent announces that it
  /// reads one: an agent of an earlier release (its presence without `features`, here played by
  /// a bare MQTT client) decodes desired documents strictly and would call one with
  /// `publication` invalid. Such a watch keeps the earlier rule: its settled status from
  /// before is "no changes". An announcing agent's old status answers no publication of this
  /// run: the watch waits for the agent's answer (pending here, as the fake agent never answers).
  @Test(arguments: [false, true])
  func thePublicationIsSentOnlyToAgentsThatAnnounceIt(announces: Bool) async throws {
    let site = try await AgentTests.Site(watches: ["room-1"])
    let document = try #require(try site.space.load().members.first?.document.get())
    let revision = DesiredDocument.revision(manifest: document.manifest, allowDestroy: false)
    let (agent, reader, desired) = try await Self.fakeAgent(on: site, revision: revision, features: announces ? ["publication"] : nil)
    let rows = try await site.apply(wait: .seconds(1))
    let published = try #require(await desired.wait(for: 1).first)
    let object = try #require(try JSONSerialization.jsonObject(with: Data(published)) as? [String: Any])
    #expect((object["publication"] as? String) == (announces ? rows.first?.publication : nil))
    #expect(object["revision"] as? String == revision)
    if announces {
      #expect(rows.first?.publication != nil)
      guard case .pending(let reason) = rows.first?.verdict else { Issue.record("not pending: \(rows)"); return }
      #expect(reason == "agent station did not report within 1s; it applies revision \(revision) when it can")
    } else {
      #expect(rows.map(\.verdict.word) == ["no changes"])
    }
    await reader.close()
    await agent.close()
  }
  /// Two admins publishing at once: the agent takes the other's revision after this run
  /// published its own, so this run's may never be applied. Said so, not "it applies revision
  /// … when it can" (fresh-eyes finding).
  @Test func aRevisionReplacedByAnotherPublisherIsSaidReplaced() async throws {
    let site = try await AgentTests.Site(watches: ["room-1"])
    let (agent, reader, desired) = try await Self.fakeAgent(on: site, revision: "aaaaaaaaaaaaaaaa", features: nil)
    let running = Task { try await site.apply(wait: .seconds(3)) }
    _ = await desired.wait(for: 1)
    // The other admin's revision, published over this run's and applied by the agent.
    let other = WatchStatus(agent: "station", watch: "room-1", device: "memory:room-1", revision: "bbbbbbbbbbbbbbbb", appliedRevision: "bbbbbbbbbbbbbbbb",
                            result: .applied, drift: 0, pending: 0)
    try await agent.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .status), payload: other.encoded(), qos: 1, retain: true)
    let rows = try await running.value
    guard case .pending(let reason) = rows.first?.verdict else { Issue.record("not pending: \(rows.map(\.verdict))"); return }
    #expect(reason.hasPrefix("agent station applied revision bbbbbbbbbbbbbbbb, another publisher's, after this run published ") && reason.contains(
      "the broker keeps one desired document per watch, so if bbbbbbbbbbbbbbbb was published after"), "\(reason)")
    await reader.close()
    await agent.close()
  }
  /// A watch whose agent is offline but whose last status says it holds the very revision
  /// published, settled, is not known now (the wearer may have changed it since), and not
  /// pending, which counts against a rollout's max_failures (it counted one failed while
  /// listing it with the revision).
  @Test func aWatchHoldingTheRevisionWhileItsAgentIsOfflineIsNotKnownAndNoRolloutFailure() async throws {
    let site = try await AgentTests.Site(watches: ["room-1"])
    let document = try #require(try site.space.load().members.first?.document.get())
    let revision = DesiredDocument.revision(manifest: document.manifest, allowDestroy: false)
    // An agent of this release: a status from before answers no publication of this run.
    let (agent, reader, _) = try await Self.fakeAgent(on: site, revision: revision, features: ["publication"])
    var away = AgentState(agent: "station", online: false, watches: ["room-1"], features: ["publication"])
    away.since = "2026-12-05T01:00:00Z"
    try await agent.publish(FleetTopics.agent(site: "ward-a", agent: "station"), payload: away.encoded(), qos: 1, retain: true)
    let rows = try await site.apply(wait: .seconds(1))
    #expect(rows.map(\.verdict.word) == ["not known"], "\(rows.map(\.verdict))")
    #expect(rows.allSatisfy { !RolloutRecord.countsAsFailure($0.verdict) })
    await reader.close()
    await agent.close()
  }

  /// A bare MQTT client playing agent `station` for `room-1` (online, with `features`), its
  /// status retained as applied at `revision`, and a reader of the watch's desired documents.
  static func fakeAgent(on site: AgentTests.Site, revision: String, features: [String]?) async throws -> (MQTTClient, MQTTClient, Inbox<[UInt8]>) {
    let agent = try MQTTClient(address: site.broker.address, configuration: .init(clientID: "fake-agent"), onMessage: { _ in })
    agent.connect()
    try await agent.ready(within: .seconds(120))
    let state = AgentState(agent: "station", online: true, watches: ["room-1"], features: features)
    try await agent.publish(FleetTopics.agent(site: "ward-a", agent: "station"), payload: state.encoded(), qos: 1, retain: true)
    let settled = WatchStatus(agent: "station", watch: "room-1", device: "memory:room-1", revision: revision, appliedRevision: revision,
                              result: .applied, drift: 0, pending: 0)
    try await agent.publish(FleetTopics.watch(site: "ward-a", watch: "room-1", .status), payload: settled.encoded(), qos: 1, retain: true)
    let desired = Inbox<[UInt8]>()
    let reader = try MQTTClient(address: site.broker.address,
                                configuration: .init(clientID: "reader", subscriptions: [FleetTopics.watch(site: "ward-a", watch: "room-1", .desired)]),
                                onMessage: { desired.add($0.payload) })
    reader.connect()
    try await reader.ready(within: .seconds(120))
    return (agent, reader, desired)
  }
}
