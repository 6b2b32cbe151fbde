import Foundation
import TSDevice
import TSEngine
import TSManifest
import TSModel
import TSMonitor
import TSHTTPServer

/// The monitor's figures, run by hand:
///
/// - `monitor [ROUNDS]`: how long after a watch-side change (`tsapply device simulate` in another
///   process, timed from the state file's modification time) the monitor reports drift, on a polled platform for several
///   `--interval`s and on a listening one; and how long an SOS takes to reach an `--on-sos`
///   command and (when the package has TSHTTPServer) a webhook on 127.0.0.1.
/// - `monitor-idle [SECONDS]`: CPU and memory of an idle `tsapply monitor` (the built binary,
///   default interval), from /proc, on a listening and on a polled platform.
enum MonitorBenchmark {
  static func run(_ arguments: [String]) async throws -> Int32 {
    let rounds = max(1, Int(arguments.first ?? "") ?? 10)
    say("drift detection latency (change made by another process, timed from the state file's write):")
    for (interval, count) in [(Duration.milliseconds(200), rounds), (.seconds(1), rounds), (.seconds(5), max(1, rounds / 2))] {
      let times = try await detection(profile: .npk, interval: interval, rounds: count, change: { round in
        ["emergency-set", round % 2 == 0 ? "Pop" : "Mum", round % 2 == 0 ? "+15550112" : "+15550113"]
      })
      say("  npk (polled), --interval \(text(interval)): \(BenchmarkClock.summary(times)); "
            + String(format: "median %.2f intervals, max %.2f", ratio(times, interval, 0.5), ratio(times, interval, 1)))
    }
    let listened = try await detection(profile: .default, interval: .seconds(300), phase: .milliseconds(300), rounds: rounds,
                                       change: { round in
      ["contact-add", "Zed \(round)", "+1555019\(round % 10)"]
    })
    say("  default (listening), --interval 5m: \(BenchmarkClock.summary(listened))")
    let command = try await sosLatency(rounds: rounds, webhook: false)
    say("SOS to an --on-sos command (spawned without a shell): \(BenchmarkClock.summary(command))")
    let webhook = try await sosLatency(rounds: rounds, webhook: true)
    say("SOS to a signed webhook on 127.0.0.1 (TSHTTPServer receiver): \(BenchmarkClock.summary(webhook))")
    return 0
  }

  /// A watch of `profile` in a temporary folder holding an applied manifest, and an engine.
  struct Setup {
    let directory: String
    let spec: String
    let engine: Engine

    init(profile: PlatformProfile, manifest: String) async throws {
      directory = NSTemporaryDirectory() + "tsapply-bench-monitor-\(UUID().uuidString)"
      try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
      try SimulatedDevice.create(path: directory + "/watch.json", profile: profile, force: false)
      spec = "sim:" + directory + "/watch.json"
      engine = Engine(registry: DeviceRegistry(schemes: [SimulatorScheme()], defaultSpec: spec),
                      environment: ["TSAPPLY_STATE_DIR": directory + "/state"], currentDirectory: directory)
      try manifest.write(toFile: directory + "/watch.yaml", atomically: true, encoding: .utf8)
      let watch = try await engine.open(spec)
      let loaded = ManifestLoader.load(bytes: Array(manifest.utf8), file: "watch.yaml")
      guard let parsed = loaded.manifest else { throw BenchmarkFailure("bad manifest: \(loaded.diagnostics)") }
      _ = try await watch.apply(ManifestDocument(manifest: parsed, bytes: Array(manifest.utf8), path: directory + "/watch.yaml"),
                                options: ApplyOptions(approval: .automatic(allowDestroy: true), command: "bench"))
      await watch.close()
    }

    func settings(interval: Duration) -> MonitorSettings {
      MonitorSettings(manifestPath: directory + "/watch.yaml", manifestName: "watch.yaml", deviceSpec: spec, interval: interval)
    }

    /// Runs `tsapply device simulate WORDS` on this watch; returns, when it has exited, the
    /// moment the change reached the state file (its modification time, in nanoseconds since 1970).
    @discardableResult
    func simulate(_ words: [String]) throws -> UInt64 {
      let process = Process()
      process.executableURL = MonitorBenchmark.binary
      process.arguments = ["device", "simulate"] + words + ["--device", spec]
      process.standardOutput = FileHandle.nullDevice
      try process.run()
      process.waitUntilExit()
      guard process.terminationStatus == 0 else { throw BenchmarkFailure("device simulate \(words) failed") }
      var info = stat()
      guard stat(directory + "/watch.json", &info) == 0 else { throw BenchmarkFailure("cannot stat the watch") }
      return UInt64(info.st_mtim.tv_sec) * 1_000_000_000 + UInt64(info.st_mtim.tv_nsec)
    }
  }

  /// Milliseconds from each change to its drift event; each change is made after a random wait
  /// of up to `phase` (default: the interval, so polled latencies spread over it).
  static func detection(profile: PlatformProfile, interval: Duration, phase: Duration? = nil, rounds: Int,
                        change: (Int) -> [String]) async throws -> [Double] {
    let manifest = profile.name == "npk"
      ? "version: 1\nemergency:\n  sos: true\n  contacts:\n    - {name: Mom, phone: \"+15550110\"}\n"
      : "version: 1\ncontacts:\n  - {name: Alex Doe, phone: \"+15550100\"}\n"
    let setup = try await Setup(profile: profile, manifest: manifest)
    let drifts = Stamps()
    let monitor = Monitor(engine: setup.engine, settings: setup.settings(interval: interval), notifiers: [],
                          emit: { if $0.kind == .drift { drifts.add() } })
    let task = Task { try? await monitor.run() }
    try await Task.sleep(for: .milliseconds(300))
    var times: [Double] = []
    for round in 0..<rounds {
      try await Task.sleep(for: .milliseconds(Int64(Double.random(in: 0..<1) * seconds(phase ?? interval) * 1000)))
      let seen = drifts.count
      let changed = try setup.simulate(change(round))
      guard let at = await drifts.next(after: seen, timeout: seconds(interval) * 3 + 10) else {
        throw BenchmarkFailure("no drift reported in round \(round)")
      }
      times.append(Double(Int64(at) - Int64(changed)) / 1_000_000)
    }
    monitor.stop()
    await task.value
    return times
  }

  /// Milliseconds from each SOS press (the simulate process's exit) to its delivery.
  static func sosLatency(rounds: Int, webhook: Bool) async throws -> [Double] {
    let setup = try await Setup(profile: .fit, manifest: "version: 1\n")
    let delivered = Stamps()
    var notifiers: [any Notifier] = []
    var stopReceiver: () -> Void = {}
    if webhook {
      let secret = Array("bench".utf8)
      let server = try HTTPServer.start(.init(host: "127.0.0.1", port: 0)) { request in
        let valid = WebhookSignature.verify(request.header(WebhookSignature.header) ?? "", body: request.body, secret: secret)
        if valid { delivered.add() }
        return HTTPResponse(status: valid ? 200 : 401)
      }
      notifiers = [try WebhookNotifier(url: server.baseURL + "/sos", secret: secret)]
      stopReceiver = { server.stop() }
    } else {
      let script = setup.directory + "/deliver.sh"
      try "#!/bin/sh\nexit 0\n".write(toFile: script, atomically: true, encoding: .utf8)
      chmod(script, 0o755)
      notifiers = [TimedNotifier(inner: try CommandNotifier(command: script, environment: ProcessInfo.processInfo.environment,
                                                             currentDirectory: setup.directory), stamps: delivered)]
    }
    let monitor = Monitor(engine: setup.engine, settings: setup.settings(interval: .seconds(300)), notifiers: notifiers, emit: { _ in })
    let task = Task { try? await monitor.run() }
    try await Task.sleep(for: .milliseconds(300))
    var times: [Double] = []
    for round in 0..<rounds {
      let seen = delivered.count
      let pressed = try setup.simulate(["sos"])
      guard let at = await delivered.next(after: seen, timeout: 20) else { throw BenchmarkFailure("SOS \(round) not delivered") }
      times.append(Double(Int64(at) - Int64(pressed)) / 1_000_000)
      try await Task.sleep(for: .milliseconds(50))
    }
    monitor.stop()
    await task.value
    stopReceiver()
    return times
  }

  /// The `tsapply` binary built beside this one.
  static var binary: URL {
    URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("tsapply")
  }

  static func ratio(_ times: [Double], _ interval: Duration, _ quantile: Double) -> Double {
    let sorted = times.sorted()
    guard !sorted.isEmpty else { return 0 }
    return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * quantile))] / (seconds(interval) * 1000)
  }

  static func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
  }

  static func text(_ duration: Duration) -> String {
    let ms = Int(seconds(duration) * 1000)
    return ms % 1000 == 0 ? "\(ms / 1000)s" : "\(ms)ms"
  }

  // MARK: Idle cost

  /// CPU and resident memory of an idle `tsapply monitor` over `SECONDS` (default 180), read
  /// from /proc: a listening platform (default: the simulated watch polls its journal every
  /// 100 ms for the listeners) and a polled one (npk: no listener, one read per interval).
  static func idle(_ arguments: [String]) async throws -> Int32 {
    let seconds = max(5, Int(arguments.first ?? "") ?? 180)
    for profile in [PlatformProfile.default, .npk] {
      let setup = try await Setup(profile: profile, manifest: "version: 1\n")
      let process = Process()
      process.executableURL = binary
      process.arguments = ["monitor", "--device", setup.spec, "--log", setup.directory + "/events.jsonl", setup.directory + "/watch.yaml"]
      process.environment = ProcessInfo.processInfo.environment.merging(["TSAPPLY_STATE_DIR": setup.directory + "/state"]) { _, new in new }
      process.standardOutput = FileHandle.nullDevice
      process.standardError = FileHandle.nullDevice
      try process.run()
      try await Task.sleep(for: .seconds(2))
      let pid = process.processIdentifier
      let start = try cpuTicks(pid), startRSS = try residentKiB(pid)
      let began = DispatchTime.now().uptimeNanoseconds
      var peak = startRSS
      for _ in 0..<seconds {
        try await Task.sleep(for: .seconds(1))
        peak = max(peak, try residentKiB(pid))
      }
      let wall = Double(DispatchTime.now().uptimeNanoseconds - began) / 1e9
      let used = Double(try cpuTicks(pid) - start) / Double(sysconf(Int32(_SC_CLK_TCK)))
      process.terminate()
      process.waitUntilExit()
      say(String(format: "idle monitor, %@ (%@), %.0f s: CPU %.2f s = %.3f%% of one core; RSS %d KiB after start, %d KiB peak",
                   profile.name, profile.name == "npk" ? "no listener, --interval 5m" : "listeners, --interval 5m",
                   wall, used, used / wall * 100, startRSS, peak))
    }
    return 0
  }

  /// utime + stime of `pid`, in clock ticks (/proc/PID/stat fields 14 and 15).
  static func cpuTicks(_ pid: Int32) throws -> Int {
    let (user, system) = try cpuTicksSplit(pid)
    return user + system
  }

  /// utime and stime of `pid`, in clock ticks (/proc/PID/stat fields 14 and 15).
  static func cpuTicksSplit(_ pid: Int32) throws -> (user: Int, system: Int) {
    let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
    guard let close = stat.lastIndex(of: ")") else { throw BenchmarkFailure("unreadable /proc/\(pid)/stat") }
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count > 13, let user = Int(fields[11]), let system = Int(fields[12]) else {
      throw BenchmarkFailure("unreadable /proc/\(pid)/stat")
    }
    return (user, system)
  }

  /// VmRSS of `pid` in KiB.
  static func residentKiB(_ pid: Int32) throws -> Int {
    let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
    guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
          let value = Int(line.split(separator: " ").dropFirst().first ?? "") else { throw BenchmarkFailure("no VmRSS for \(pid)") }
    return value
  }
}

/// Prints `line` at once (figures come out while a long benchmark runs, even into a pipe).
func say(_ line: String) {
  FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Moments something happened, for latency figures.
final class Stamps: @unchecked Sendable {
  private let lock = NSLock()
  private var stamps: [UInt64] = []

  /// Records now (wall clock, nanoseconds since 1970, comparable with file times).
  func add() {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    lock.lock()
    stamps.append(UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec))
    lock.unlock()
  }

  var count: Int {
    lock.lock()
    defer { lock.unlock() }
    return stamps.count
  }

  private func stamp(_ index: Int) -> UInt64? {
    lock.lock()
    defer { lock.unlock() }
    return stamps.count > index ? stamps[index] : nil
  }

  /// The first stamp after the first `seen`, waiting up to `timeout` seconds.
  func next(after seen: Int, timeout: Double) async -> UInt64? {
    let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(timeout * 1e9)
    while DispatchTime.now().uptimeNanoseconds < deadline {
      if let found = stamp(seen) { return found }
      try? await Task.sleep(for: .milliseconds(1))
    }
    return nil
  }
}

/// A notifier that stamps each success of `inner` (the moment the command has exited 0).
struct TimedNotifier: Notifier {
  let inner: any Notifier
  let stamps: Stamps
  var key: String { inner.key }
  var name: String { inner.name }
  func deliver(id: String, body: String, attempt: Int) async -> String? {
    let result = await inner.deliver(id: id, body: body, attempt: attempt)
    if result == nil { stamps.add() }
    return result
  }
}

struct BenchmarkFailure: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}
