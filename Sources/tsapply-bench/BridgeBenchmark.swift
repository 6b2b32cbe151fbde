import Foundation
import TSApply
import TSBridge
import TSBridgeClient
import TSBridgeServer
import TSDevice
import TSManifest
import TSModel
import TSPlan

/// `tsapply-bench bridge [CALLS] [APPLIES]`: what the bridge costs over loopback.
///
/// 1. Per call: `getAllContacts` and `setAllContacts` (5 contacts) on an in-memory default
///    watch, straight and through a `BridgeServer` on 127.0.0.1 (sealed, on kept-alive
///    connections); median and p99 of each, and the overhead (bridge median − direct median).
/// 2. `apply examples/watch.yaml` (read, plan, back up, write, verify) on a factory-fresh
///    default watch, in-process and through the bridge (a new bridge each time, so the watch is
///    fresh); median and p99, and what starting and stopping that bridge costs alone.
enum BridgeBenchmark {
  static func run(_ arguments: [String]) async throws -> Int32 {
    let calls = arguments.first.flatMap(Int.init) ?? 2000
    let applies = arguments.dropFirst().first.flatMap(Int.init) ?? 50
    let watch = SimulatedDevice(profile: .default)
    let (server, device) = try await serve(watch)
    defer { server.stop() }
    let contacts = (0..<5).map { Contact(name: "Person \($0)", phoneNum: "+1555010\($0)") }
    print("per call over loopback, \(calls) calls each (ms):")
    for (name, direct, bridged) in [
      ("getAllContacts", { () async throws in _ = try await watch.getAllContacts() }, { () async throws in _ = try await device.getAllContacts() }),
      ("setAllContacts", { () async throws in try await watch.setAllContacts(contacts) }, { () async throws in try await device.setAllContacts(contacts) }),
    ] as [(String, () async throws -> Void, () async throws -> Void)] {
      for _ in 0..<50 { try await bridged() }
      let straight = try await BenchmarkClock.measureAsync(iterations: calls, direct)
      let through = try await BenchmarkClock.measureAsync(iterations: calls, bridged)
      print("  \(name): direct \(percentiles(straight)); bridge \(percentiles(through)); overhead median \(String(format: "%.3f", median(through) - median(straight)))")
    }
    await device.close()

    let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("examples/watch.yaml").path
    guard let data = FileManager.default.contents(atPath: path), let manifest = ManifestLoader.load(bytes: Array(data), file: "watch.yaml").manifest else {
      print("cannot read \(path)")
      return 1
    }
    let backups = FileManager.default.temporaryDirectory.appendingPathComponent("tsapply-bench-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: backups) }
    let inProcess = try await BenchmarkClock.measureAsync(iterations: applies) {
      try await apply(manifest, on: SimulatedDevice(profile: .default), backups: backups)
    }
    var roundTrips = 0
    let bridged = try await BenchmarkClock.measureAsync(iterations: applies) {
      let (server, device) = try await serve(SimulatedDevice(profile: .default))
      try await apply(manifest, on: device, backups: backups)
      roundTrips = await device.statistics().totalCalls
      await device.close()
      server.stop()
    }
    let startStop = try await BenchmarkClock.measureAsync(iterations: applies) {
      let (server, device) = try await serve(SimulatedDevice(profile: .default))
      await device.close()
      server.stop()
    }
    print("apply examples/watch.yaml on a fresh default watch, \(applies) times (ms):")
    print("  in-process: \(percentiles(inProcess))")
    print("  bridge:     \(percentiles(bridged)) (\(roundTrips) round trips, server start included)")
    print("  of which starting a bridge, connecting (1 round trip) and stopping it: \(percentiles(startStop))")
    return 0
  }

  static func serve(_ watch: SimulatedDevice) async throws -> (BridgeServer, BridgeDevice) {
    let key = SealingKey.random()
    let service = BridgeService(bridgeID: "bench", key: key,
                                watches: [ServedWatch(id: "02:00:00:00:00:01", device: watch, capabilities: try await watch.capabilities())],
                                cipher: ChaCha20Poly1305())
    let server = try BridgeServer(service: service)
    let device = try await BridgeDevice.connect(PairingString(host: "127.0.0.1", port: Int(server.port), bridgeID: "bench", key: key),
                                                watchID: nil)
    return (server, device)
  }

  static func apply(_ manifest: Manifest, on device: any Device, backups: String) async throws {
    let reconciler = try await Reconciler.connect(device)
    let (state, result) = try await reconciler.plan(manifest)
    guard let plan = result.plan else { throw DeviceError(.simulator, .paramError, "examples/watch.yaml does not fit the default watch") }
    _ = try await reconciler.apply(plan, manifest: manifest, state: state, backupDirectory: backups, now: Date())
  }

  static func median(_ times: [Double]) -> Double { times.sorted()[times.count / 2] }

  /// "median X p99 Y".
  static func percentiles(_ times: [Double]) -> String {
    let sorted = times.sorted()
    let p99 = sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.99))]
    return String(format: "median %.3f p99 %.3f", sorted[sorted.count / 2], p99)
  }
}

extension BridgeBenchmark {
  /// `tsapply-bench bridge-client [CALLS] [SECONDS] [BINARY]`: the bridge client (`BridgeDevice`)
  /// in this process against `tsapply bridge serve` (BINARY, default `.build/release/tsapply`)
  /// serving one file-backed default watch on 127.0.0.1, so only the client's costs are this
  /// process's:
  ///
  /// 1. per sealed call, `getAllContacts` (a read) and `setAllContacts` (5 contacts, a write),
  ///    CALLS each after 50 to warm up, on a new connection per call and on kept-alive
  ///    connections (`BridgeDevice.connect(reuseConnections:)`): median and p99 in ms;
  /// 2. this process's CPU (user + system, getrusage) while one event stream is open and
  ///    quiet for SECONDS (default 5), and while one call waits SECONDS for a watch that
  ///    answers that late (`TSAPPLY_SIM_LATENCY` on the served watch).
  static func client(_ arguments: [String]) async throws -> Int32 {
    let calls = arguments.first.flatMap(Int.init) ?? 2000
    let seconds = arguments.dropFirst().first.flatMap(Double.init) ?? 5
    let binary = arguments.dropFirst(2).first ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(".build/release/tsapply").path
    guard FileManager.default.isExecutableFile(atPath: binary) else {
      print("\(binary) is not built (swift build -c release --product tsapply --product tsapply-net)")
      return 1
    }
    let directory = try FleetBenchmark.directory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var environment = ProcessInfo.processInfo.environment
    environment["XDG_CONFIG_HOME"] = directory + "/config"
    environment["TSAPPLY_STATE_DIR"] = directory + "/state"
    let path = directory + "/watch.json"
    try SimulatedDevice.create(path: path, profile: .default, force: false)

    let served = try ServedBridge.start(binary: binary, paths: [path], environment: environment)
    let pairing = try PairingString(parsing: served.pairing)
    let device = try await BridgeDevice.connect(pairing, watchID: nil)
    let fresh = try await BridgeDevice.connect(pairing, watchID: nil, reuseConnections: false)
    let contacts = (0..<5).map { Contact(name: "Person \($0)", phoneNum: "+1555010\($0)") }
    print("per sealed call against tsapply bridge serve (one file-backed watch), \(calls) calls each (ms):")
    // The two clients take turns, so the machine's load falls on both alike.
    for (name, call) in [
      ("getAllContacts (read)", { (device: BridgeDevice) async throws in _ = try await device.getAllContacts() }),
      ("setAllContacts (write)", { (device: BridgeDevice) async throws in try await device.setAllContacts(contacts) }),
    ] as [(String, (BridgeDevice) async throws -> Void)] {
      for (label, client) in [("a new connection per call", fresh), ("kept-alive connections", device)] {
        for _ in 0..<50 { try await call(client) }
        print("  \(name), \(label): \(percentiles(try await BenchmarkClock.measureAsync(iterations: calls) { try await call(client) }))")
      }
    }
    await fresh.close()
    await device.listen(to: [.contactsChanged, .emergencyContactsChanged, .sosRequested], after: nil) { _ in }
    try await Task.sleep(for: .seconds(1))
    let before = FleetBenchmark.cpuSeconds()
    try await Task.sleep(for: .seconds(seconds))
    let quiet = FleetBenchmark.cpuSeconds() - before
    print(String(format: "  CPU of this process while one event stream waits %.0f s: %.3f s (%.2f %% of a core)", seconds, quiet,
                 quiet / seconds * 100))
    await device.close()
    served.stop()

    // A watch whose every call takes SECONDS: the client waits inside one call.
    environment[SimulationOptions.latencyVariable] = "\(Int(seconds * 1000)),0"
    let slow = try ServedBridge.start(binary: binary, paths: [path], environment: environment)
    defer { slow.stop() }
    let waiting = try await BridgeDevice.connect(try PairingString(parsing: slow.pairing), watchID: nil, timeout: seconds * 3)
    let start = FleetBenchmark.cpuSeconds()
    let wall = try await BenchmarkClock.measureAsync(iterations: 1) { _ = try await waiting.getAllContacts() }
    let busy = FleetBenchmark.cpuSeconds() - start
    print(String(format: "  CPU of this process while one call waits %.1f s for its answer: %.3f s (%.2f %% of a core)",
                 wall[0] / 1000, busy, busy / (wall[0] / 1000) * 100))
    await waiting.close()
    return 0
  }
}
