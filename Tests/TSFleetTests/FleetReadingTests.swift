import Foundation
import Testing
import TSDevice
@testable import TSFleet
import TSModel
import TSMQTT
import TSTestSupport

/// One reading of a watch's state over MQTT (`FleetStatusRow`) for every view — `status`,
/// `plan` and `drift --fleet` — through a real Mosquitto on 127.0.0.1 (fresh-eyes fe95).
extension AgentTests {
  /// A broker gone back to an older desired document than its agent applied (restored from an
  /// older save) makes the watch `invalid`, but its drift is still what its agent measured
  /// against the revision it applied: `drift --fleet` shows it, labelled `invalid`, with SOS at
  /// risk — not "failed" with the drift hidden (fe95 #1).
  @Test func aWatchAnsweringAnOlderDesiredDocumentInvalidStillShowsItsDrift() async throws {
    let site = try await Site(watches: ["room-1"])
    let emergency = "emergency:\n  sos: true\n  contacts:\n    - {name: Desk, phone: \"+15550150\"}\n"
    try site.manifest("room-1", contacts: ["Family room-1"], extra: emergency)
    let agent = try await site.agent("station", ["room-1"], driftInterval: .milliseconds(200))
    let topic = FleetTopics.watch(site: "ward-a", watch: "room-1", .desired)
    let (documents, reader) = try await site.read(topic, as: "older-save") { $0 }
    #expect(try await site.apply().map(\.verdict.word) == ["applied"])
    let older = try #require(await documents.wait(for: 1).last)
    await reader.close()
    try site.manifest("room-1", contacts: ["Family room-1", "Nurse"], extra: emergency)
    #expect(try await site.apply().map(\.verdict.word) == ["applied"])
    // What a broker restored from a save taken between the two publications holds.
    let publisher = try MQTTClient(address: site.broker.address, configuration: .init(clientID: "restored"), onMessage: { _ in })
    publisher.connect()
    try await publisher.ready(within: .seconds(120))
    try await publisher.publish(topic, payload: older, qos: 1, retain: true)
    await publisher.close()
    // The wearer clears the emergency list and switches SOS off.
    try site.scheme.device("room-1").simulateEmergencyChange(contacts: [], sosOn: false)
    let row = try #require(try await site.row(tries: 400) { $0?.state == "invalid" && $0?.drift == 1 })
    #expect(row.state == "invalid" && row.staleDesired && row.drift == 1 && row.sosAtRisk, "\(row)")
    let verdict = row.driftVerdict(reported: nil, document: nil)
    guard case .invalid(let reason, let drift, _) = verdict else {
      Issue.record("drift --fleet reads it as \(verdict)")
      return
    }
    #expect(drift == 1 && verdict.word == "invalid" && !verdict.isFailure && verdict.hasChanges, "\(verdict)")
    #expect(reason.contains("SOS at risk") && reason.contains("older than publication"), "\(reason)")
    #expect(reason.contains("1 resource changed on the watch since the last apply: emergency"), "\(reason)")
    await agent.stop()
  }

  /// A watch out of its agent's reach while the agent retries a revision is counted out of
  /// reach — a failure of `status --fleet`, `unreachable` in `plan` and `drift --fleet` — as it
  /// is without a revision being retried; the status still says it is retrying. The agent's
  /// status says why by `unreachable` (its apply could not read the watch), not in its message
  /// alone (fe95 #4).
  @Test func aWatchOutOfReachWhileItsAgentRetriesIsCountedOutOfReach() async throws {
    let site = try await Site(watches: ["room-1"])
    let agent = try await site.agent("station", ["room-1"], driftInterval: .seconds(3600))
    #expect(try await site.apply().map(\.verdict.word) == ["applied"])
    site.scheme.device("room-1").simulateOutOfReach()
    try site.manifest("room-1", contacts: ["Family room-1", "Nurse"])
    // Published; the agent's attempts fail (read below, not waited for here).
    _ = try await site.apply(wait: .milliseconds(300))
    let row = try #require(try await site.row(tries: 400) { $0?.state == "retrying" })
    let status = try #require(await agent.status(of: "room-1"))
    #expect(status.result == .retrying && status.unreachable != nil && status.unreachableSince != nil, "\(status)")
    #expect(row.state == "retrying" && row.isOutOfReach && row.isFailure, "\(row)")
    #expect(row.planVerdict.isUnreachable, "\(row.planVerdict)")
    #expect(row.driftVerdict(reported: nil, document: nil).isUnreachable)
    await agent.stop()
  }
}
