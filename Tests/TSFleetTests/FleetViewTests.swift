import Foundation
import Testing
import TSFleet
import TSMQTT
import TSTestSupport

/// A fleet view (`FleetBrokerView`, what `status|plan|drift|apply --fleet` read) against a real
/// Mosquitto on 127.0.0.1 with its default settings (in-flight window 20, 1,000 queued
/// messages): it sees every retained status and presence of the site, or says it could not.
@Suite struct FleetViewTests {
  /// A broker with Mosquitto's default settings, holding the retained statuses of `watches`
  /// watches served by `agents` online agents, as agents publish them (retained, QoS 1).
  final class RetainedSite: @unchecked Sendable {
    let broker: MosquittoBroker
    let watches: [String]
    let agents: [String]

    init(watches count: Int, agents agentCount: Int,
         configuration: @escaping (Int, String) -> String = MosquittoBroker.defaultConfiguration) async throws {
      broker = try MosquittoBroker.start(in: try TSApplyBinary.temporaryDirectory().path, configuration: configuration)
      watches = (0..<count).map { String(format: "w%05d", $0) }
      agents = (0..<agentCount).map { String(format: "a%02d", $0) }
      let publisher = try MQTTClient(address: broker.address, configuration: .init(clientID: "seed"), onMessage: { _ in })
      publisher.connect()
      try await publisher.ready(within: .seconds(120))
      let perAgent = (count + agentCount - 1) / agentCount
      var messages: [(String, String)] = []
      for (index, agent) in agents.enumerated() {
        let served = watches.dropFirst(index * perAgent).prefix(perAgent)
        messages.append((FleetTopics.agent(site: "ward-a", agent: agent),
                         #"{"agent":"\#(agent)","format_version":"1","online":true,"watches":[\#(served.map { "\"\($0)\"" }.joined(separator: ","))]}"#))
        for watch in served {
          messages.append((FleetTopics.watch(site: "ward-a", watch: watch, .status),
                           #"{"agent":"\#(agent)","applied_revision":"r1","device":"\#(watch)","drift":0,"format_version":"1","pending":0,"result":"applied","revision":"r1","watch":"\#(watch)"}"#))
        }
      }
      try await withThrowingTaskGroup(of: Void.self) { group in
        for (topic, payload) in messages {
          group.addTask { try await publisher.publish(topic, payload: Array(payload.utf8), qos: 1, retain: true) }
        }
        try await group.waitForAll()
      }
      await publisher.close()
    }

    deinit { broker.stop() }

    var settings: BrokerSettings { BrokerSettings(address: broker.address) }
  }

  @Test(arguments: [300, 1_000, 10_000])
  func aViewSeesEveryRetainedStatusAndAgentAtTheBrokersDefaultSettings(watches: Int) async throws {
    let site = try await RetainedSite(watches: watches, agents: 10)
    for run in 1...5 {
      let view = try FleetBrokerView(settings: site.settings, site: "ward-a")
      try await view.connect(within: .seconds(120))
      let statuses = view.statuses, agents = view.agents
      await view.close()
      let missing = Set(site.watches).subtracting(statuses.keys)
      #expect(missing.isEmpty && statuses.count == watches, "run \(run): \(statuses.count) of \(watches) statuses, \(missing.count) missing")
      #expect(agents.count == 10 && agents.values.allSatisfy(\.online), "run \(run): \(agents.count) agents")
    }
  }

  @Test func aViewWhoseMarkerNeverComesBackSaysItIsIncomplete() async throws {
    // The ACL lets clients read and write the statuses and presences, not the view's marker
    // topic: the retained statuses arrive, the end of them is never known.
    let site = try await RetainedSite(watches: 50, agents: 2) { port, directory in
      let acl = directory + "/acl"
      #expect(FileManager.default.createFile(atPath: acl, contents: Data("""
        topic readwrite tsapply/v1/ward-a/+/status
        topic readwrite tsapply/v1/ward-a/agent/+/state

        """.utf8)))
      return MosquittoBroker.defaultConfiguration(port: port, directory: directory) + "acl_file \(acl)\n"
    }
    let view = try FleetBrokerView(settings: site.settings, site: "ward-a")
    do {
      try await view.connect(within: .seconds(2))
      Issue.record("the view claimed to be complete")
    } catch {
      #expect("\(error)".contains("the view of site ward-a is incomplete ("), "\(error)")
    }
    await view.close()
  }
}
