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
}
