import Foundation
import TSDevice

/// `fleet-rollout [N] [BINARY]`: the blast radius of a change that fails everywhere under a staged
/// rollout (docs/fleet.md "Staged rollouts"). N simulated watches (default 1000) on a defaults
/// manifest adding one contact, `rollout: {canary: 2, batch: 25%, max_failures: 0}`, and every
/// watch's first write made to land and then fail (`TSAPPLY_SIM_FAULT=lands-then-fails@5,fail@6`, the
/// worst case: a watch a wave reaches is written); `tsapply apply --fleet --auto-approve` run as
/// a process (BINARY, default `.build/release/tsapply`, else `.build/debug/tsapply`). Prints the
/// exit status, the watches written (their state files hold the contact), the waves the record
/// says ran, and the wall time.
enum RolloutBenchmark {
  static func run(_ arguments: [String]) async throws -> Int32 {
    let count = arguments.first.flatMap(Int.init) ?? 1000
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let binary = arguments.dropFirst().first ?? ["release", "debug"].map { root.appendingPathComponent(".build/\($0)/tsapply").path }
      .first { FileManager.default.isExecutableFile(atPath: $0) } ?? "tsapply"
    let directory = try FleetBenchmark.directory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try FleetBenchmark.write("contacts:\n  - {name: Ward desk, phone: \"+15550100\"}\n", to: directory + "/defaults.yaml")
    var fleet = "rollout:\n  canary: 2\n  batch: 25%\n  max_failures: 0\ndefaults: defaults.yaml\nwatches:\n"
    try FileManager.default.createDirectory(atPath: directory + "/watches", withIntermediateDirectories: true)
    for index in 1...count {
      let name = String(format: "w%04d", index)
      try SimulatedDevice.create(path: directory + "/watches/\(name).json", profile: .default, force: false)
      fleet += "  \(name): {device: \"sim:watches/\(name).json\"}\n"
    }
    try FleetBenchmark.write(fleet, to: directory + "/fleet.yaml")

    let process = Process()
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = ["apply", "--fleet", "fleet.yaml", "--auto-approve", "--json"]
    process.currentDirectoryURL = URL(fileURLWithPath: directory)
    var environment = ProcessInfo.processInfo.environment
    environment["TSAPPLY_STATE_DIR"] = directory + "/state"
    environment["TSAPPLY_SIM_FAULT"] = "lands-then-fails@5,fail@6"
    process.environment = environment
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    let start = ContinuousClock.now
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let elapsed = ContinuousClock.now - start

    var written = 0
    for index in 1...count {
      let text = try String(contentsOfFile: directory + String(format: "/watches/w%04d.json", index), encoding: .utf8)
      if text.contains("Ward desk") { written += 1 }
    }
    let report = try JSONSerialization.jsonObject(with: data) as? [String: Any]
    let rollout = report?["rollout"] as? [String: Any]
    print("fleet-rollout: \(count) watches, canary 2, batch 25%, max_failures 0, every first write lands then fails (\(binary))")
    print("  exit status \(process.terminationStatus); phase \(rollout?["phase"] as? String ?? "?"), waves run \(rollout?["waves_done"] ?? "?") of \(rollout?["waves"] ?? "?")")
    print("  watches written: \(written) of \(count); without the new revision: \((rollout?["without_revision"] as? [String])?.count ?? -1)")
    print(String(format: "  wall time %.2fs", Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18))
    return 0
  }
}
