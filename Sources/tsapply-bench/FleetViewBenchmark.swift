import Foundation
import TSFleet
import TSMQTT

/// `fleet-view [N] [RUNS]`: a site of N retained watch statuses and 10 agents on a local
/// Mosquitto with its default settings (in-flight window 20, 1,000 queued messages per client);
/// RUNS fresh fleet views (what `status`, `plan` and `drift --fleet` read), each counted complete
/// when it holds every status and every agent online, with the time each took to connect and
/// see the whole site.
enum FleetViewBenchmark {
  static func run(_ arguments: [String]) async throws -> Int32 {
    let count = arguments.first.flatMap(Int.init) ?? 1000
    let runs = arguments.dropFirst().first.flatMap(Int.init) ?? 10
    let directory = try FleetBenchmark.directory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let broker = try MosquittoBroker.start(in: directory, configuration: MosquittoBroker.defaultConfiguration)
    defer { broker.stop() }
    let publisher = try MQTTClient(address: broker.address, configuration: .init(clientID: "seed"), onMessage: { _ in })
    publisher.connect()
    try await publisher.ready(within: .seconds(60))
    let agents = 10, perAgent = (count + agents - 1) / agents
    for agent in 0..<agents {
      let served = (agent * perAgent..<min(count, (agent + 1) * perAgent)).map { String(format: "w%05d", $0) }
      let name = String(format: "a%02d", agent)
      try await publisher.publish(FleetTopics.agent(site: "site", agent: name),
                                  payload: Array(#"{"agent":"\#(name)","format_version":"1","online":true,"watches":[\#(served.map { "\"\($0)\"" }.joined(separator: ","))]}"#.utf8),
                                  qos: 1, retain: true)
      for watch in served {
        try await publisher.publish(FleetTopics.watch(site: "site", watch: watch, .status),
                                    payload: Array(#"{"agent":"\#(name)","applied_revision":"r1","device":"\#(watch)","drift":0,"format_version":"1","pending":0,"result":"applied","revision":"r1","watch":"\#(watch)"}"#.utf8),
                                    qos: 1, retain: true)
      }
    }
    await publisher.close()
    print("site: \(count) retained statuses, \(agents) agents, Mosquitto with its default settings")
    var complete = 0
    var times: [Double] = []
    for run in 1...runs {
      let start = DispatchTime.now().uptimeNanoseconds
      let view = try FleetBrokerView(settings: BrokerSettings(address: broker.address), site: "site")
      do {
        try await view.connect(within: .seconds(60))
      } catch {
        print("run \(run): \(error)")
        continue
      }
      let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
      let statuses = view.statuses.count, online = view.agents.values.filter(\.online).count
      await view.close()
      if statuses == count && online == agents { complete += 1 }
      times.append(seconds)
      print(String(format: "run %2d: %d of %d statuses, %d of %d agents online, %.3f s", run, statuses, count, online, agents, seconds))
    }
    times.sort()
    print("complete: \(complete) of \(runs) runs; view time median \(times.isEmpty ? 0 : times[times.count / 2]) s, max \(times.last ?? 0) s")
    return complete == runs ? 0 : 1
  }

  /// `status-wait [N] [SECONDS]`: what `tsapply status --fleet --wait SECONDS` costs while it
  /// waits for a site that does not settle: N watches of 10 agents (a fleet file, a manifest
  /// each, as `fleet-plan` writes them; each watch's status retained as applied), agent `a00`
  /// offline; `FleetStatus.broker` with `settleWithin`, in this process: its CPU (user +
  /// system) and wall time.
  static func statusWait(_ arguments: [String]) async throws -> Int32 {
    let count = arguments.first.flatMap(Int.init) ?? 300
    let seconds = arguments.dropFirst().first.flatMap(Double.init) ?? 15
    let directory = try FleetBenchmark.directory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let broker = try MosquittoBroker.start(in: directory, configuration: MosquittoBroker.defaultConfiguration)
    defer { broker.stop() }
    try FleetBenchmark.fleet(count, in: directory, transport: "\(broker.address)") { String(format: "bridge:ward/w%05d", $0) }
    let members = try FleetLoader.load(path: directory + "/fleet.yaml", displayName: "fleet.yaml").members
    let publisher = try MQTTClient(address: broker.address, configuration: .init(clientID: "seed"), onMessage: { _ in })
    publisher.connect()
    try await publisher.ready(within: .seconds(60))
    let agents = 10, perAgent = (count + agents - 1) / agents
    for agent in 0..<agents {
      let served = members[min(count, agent * perAgent)..<min(count, (agent + 1) * perAgent)]
      let name = String(format: "a%02d", agent)
      let ids = served.map { "\"\($0.watch.watchID)\"" }.joined(separator: ",")
      try await publisher.publish(FleetTopics.agent(site: "ward-a", agent: name),
                                  payload: Array(#"{"agent":"\#(name)","format_version":"1","online":\#(agent != 0),"watches":[\#(ids)]}"#.utf8),
                                  qos: 1, retain: true)
      for member in served {
        let revision = (try? member.document.get()).map { DesiredDocument.revisions(manifest: $0.manifest)[0] } ?? "r1"
        let id = member.watch.watchID
        try await publisher.publish(FleetTopics.watch(site: "ward-a", watch: id, .status),
                                    payload: Array(#"{"agent":"\#(name)","applied_revision":"\#(revision)","device":"\#(member.device)","drift":0,"format_version":"1","pending":0,"result":"applied","revision":"\#(revision)","watch":"\#(id)"}"#.utf8),
                                    qos: 1, retain: true)
      }
    }
    await publisher.close()
    let cpu = FleetBenchmark.cpuSeconds(), start = DispatchTime.now().uptimeNanoseconds
    let site = try await FleetStatus.broker(members, site: "ward-a", settings: BrokerSettings(address: broker.address), timeout: .seconds(60),
                                           settleWithin: .milliseconds(Int(seconds * 1000)))
    let used = FleetBenchmark.cpuSeconds() - cpu, wall = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    print(String(format: "%d watches, agent a00 offline: settled %@; %.2f s CPU over %.2f s waited (%.1f %% of a core)",
                 count, site.isSettled ? "yes" : "no" as NSString, used, wall, used / wall * 100))
    return 0
  }
}
