import Foundation

/// `tsapply-bench alerts [N] [OFF] [BINARY]`: the offline alerts of a monitored fleet (issue
/// "Operating a fleet": 100 watches, 10 taken offline — exactly 10 `offline` alerts within the
/// threshold + 5 s, 10 `recovered`, none lost or duplicated across a `kill -9`).
///
/// `monitor --fleet --events offline,recovered --offline-after 5s --on-event CMD` over N drifted
/// sim: watches (the `fleet-seed` set-up); the command appends each alert to a file and fails
/// while a `down` file exists, so the alerts wait in the outbox. OFF watches' files are moved
/// away; once their alerts are queued the monitor is killed with SIGKILL, the watches come back,
/// the command works again and a new monitor starts: it must deliver each `offline` once and
/// send one `recovered` each.
enum AlertBenchmark {
  static func run(_ arguments: [String]) async throws -> Int32 {
    let count = arguments.first.flatMap(Int.init) ?? 100
    let off = arguments.dropFirst().first.flatMap(Int.init) ?? 10
    let (binary, directory) = try FleetBenchmark.drifted(count, binary: arguments.dropFirst(2).first)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let received = directory + "/alerts.jsonl", down = directory + "/down"
    try FleetBenchmark.write("#!/bin/sh\n[ -e \(down) ] && exit 1\nprintf '%s\\n' \"$TSAPPLY_EVENT_JSON\" >> \(received)\n",
                             to: directory + "/record.sh")
    chmod(directory + "/record.sh", 0o755)
    _ = FileManager.default.createFile(atPath: down, contents: nil)
    let extra = ["--interval", "2s", "--offline-after", "5s", "--events", "offline,recovered", "--on-event", directory + "/record.sh"]

    let (first, firstOutput) = try FleetBenchmark.startReadyMonitor(binary: binary, in: directory, count: count, extra: extra)
    let firstDrained = Task.detached { while !firstOutput.availableData.isEmpty {} }
    let names = (1...off).map { String(format: "room-%04d", $0 * count / off - 1) }
    let start = Date()
    for name in names { try FileManager.default.moveItem(atPath: "\(directory)/watches/\(name).json", toPath: "\(directory)/\(name).away") }
    let outbox = directory + "/state/fleets"
    func queued() -> Int {
      let folders = (try? FileManager.default.contentsOfDirectory(atPath: outbox)) ?? []
      return folders.flatMap { (try? FileManager.default.contentsOfDirectory(atPath: "\(outbox)/\($0)/alerts/outbox")) ?? [] }
        .filter { $0.contains("-offline-") && !$0.contains("-recovered-") }.count
    }
    while queued() < off, Date().timeIntervalSince(start) < 120 { try await Task.sleep(for: .milliseconds(50)) }
    let raisedAfter = Date().timeIntervalSince(start)
    let queuedCount = queued()
    kill(first.processIdentifier, SIGKILL)
    first.waitUntilExit()
    firstDrained.cancel()
    for name in names { try FileManager.default.moveItem(atPath: "\(directory)/\(name).away", toPath: "\(directory)/watches/\(name).json") }
    try FileManager.default.removeItem(atPath: down)
    let restart = Date()
    let (monitor, output) = try FleetBenchmark.startReadyMonitor(binary: binary, in: directory, count: count, extra: extra)
    let drained = Task.detached { while !output.availableData.isEmpty {} }
    defer { monitor.terminate(); monitor.waitUntilExit(); drained.cancel() }
    func alerts() -> [[String: Any]] {
      ((try? String(contentsOfFile: received, encoding: .utf8)) ?? "").split(separator: "\n").compactMap {
        try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
      }
    }
    func delivered(_ kind: String) -> Int {
      alerts().filter { ($0["alert"] as? String) == kind || ($0["recovers"] as? String).map { "recovered:" + $0 } == kind }.count
    }
    while delivered("offline") < off || delivered("recovered:offline") < off, Date().timeIntervalSince(restart) < 120 {
      try await Task.sleep(for: .milliseconds(50))
    }
    let settled = Date().timeIntervalSince(restart)
    try await Task.sleep(for: .seconds(5))  // anything late or twice
    let all = alerts()
    let ids = all.compactMap { $0["id"] as? String }
    let offline = Set(all.filter { $0["alert"] as? String == "offline" }.compactMap { $0["watch"] as? String })
    let recovered = Set(all.filter { $0["recovers"] as? String == "offline" }.compactMap { $0["watch"] as? String })
    print("alerts, \(count) sim: watches, \(off) taken offline (threshold 5 s, checks every 2 s), monitor killed with SIGKILL while they waited:")
    print(String(format: "  %d of %d offline alerts raised %.1f s after the watches went away (threshold + %.1f s)",
                 queuedCount, off, raisedAfter, raisedAfter - 5))
    print(String(format: "  after the restart: %d offline and %d recovered delivered within %.1f s (monitor ready included); %d duplicate ids; offline for the right watches: %@, recovered: %@",
                 delivered("offline"), delivered("recovered:offline"), settled, ids.count - Set(ids).count,
                 offline == Set(names) ? "yes" : "no", recovered == Set(names) ? "yes" : "no"))
    return delivered("offline") == off && delivered("recovered:offline") == off && ids.count == Set(ids).count ? 0 : 1
  }
}

extension FleetBenchmark {
  /// The built `tsapply` (`binary`, or the one beside this benchmark) and a new folder holding a
  /// fleet of `count` sim: watches `room-0000`… set up by `fleet-seed` (applied, then each
  /// drifted); the caller removes the folder.
  /// - Throws: `BenchmarkFailure` when the binary is not built or the set-up fails.
  static func drifted(_ count: Int, binary: String?) throws -> (binary: String, directory: String) {
    let binary = binary ?? MonitorBenchmark.binary.path
    guard FileManager.default.isExecutableFile(atPath: binary) else {
      throw BenchmarkFailure("\(binary) not built (swift build -c release --product tsapply)")
    }
    let directory = try directory()
    do {
      try fleet(count, in: directory) { String(format: "sim:watches/room-%04d.json", $0) }
      try seedProcess(directory)
    } catch {
      try? FileManager.default.removeItem(atPath: directory)
      throw error
    }
    return (binary, directory)
  }
}
