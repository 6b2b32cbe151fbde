import Foundation
import TSApply
import TSDevice
import TSEngine
import TSFleet
import TSManifest
import TSModel
import TSMQTT
import TSPlan

/// Fleet benchmarks (docs/fleet.md "Scale"):
///
/// - `fleet-plan [N …] [--repeat K] [--layers L] [--keep-plans] [--review] [--stages] [--parallelism P]`: a fleet of N simulated watches (state files)
///   under a defaults manifest (with `--layers L`, L layers: the defaults, then L − 1 selected by
///   labels and profile, each adding a shared contact, the first referred to from the emergency
///   list, one replacing a custom reminder), each merged manifest 50 contacts (+ L − 1), 3
///   built-ins and 5 custom reminders; the
///   fleet file, every manifest and every state loaded from files, and every watch planned
///   through the engine by the fleet runner (`-parallelism` 10, or P), in this process, each plan
///   counted and dropped as its watch finishes (with `--keep-plans`, kept to the end; with
///   `--review`, reduced as `plan --fleet`'s review keeps them, `FleetReviewPlans`). CPU time
///   (user + system, every thread) and wall time, for each N (default 10, 100, 1000); with
///   `--repeat K` the timed part K times over the same files. The set-up (`fleet-seed`: every
///   watch as applied and recorded, then a contact added on it) runs in another process, so
///   the peak RSS shown for the timed part is its own (the kernel's high-water mark reset).
///   With `--stages`, first where a watch's CPU goes, one watch at a time (`planStages`).
/// - `monitor-fleet [N] [SECONDS] [BINARY]`: `tsapply monitor --fleet` (BINARY, default
///   `.build/release/tsapply`) over N `sim:` watches set up as for `fleet-plan` (each drifted by
///   one contact added on the watch): CPU (user + system, from /proc) until it is ready — every
///   watch reported `online` and its first check reported (the drift) — then CPU and RSS over
///   SECONDS idle (default 20), as a share of one core; then the same start again over the same
///   state folder (a restart: each watch's monitor lock and record of the last event handled
///   exist, so no file is created).
/// - `fleet-agents [N] [OFFLINE%]`: one local Mosquitto and N agents in this process, each with
///   its own session and one in-memory watch; N new revisions published; time until every
///   status reports its revision, messages per watch per change, broker and process CPU. With
///   OFFLINE% (e.g. 10) that share of the agents vanishes before the publication and returns
///   after the others converged: they converge from their kept sessions without a re-publish.
/// - `fleet-direct [N] [LATENCY] [BINARY]`: `apply --fleet` over N fresh watches with the
///   simulator's latency model (`TSAPPLY_SIM_LATENCY`, default `40,8`), ten at a time: wall time
///   against the sum of the per-watch times; first `sim:` watches in this
///   process, then `bridge:` watches served by one `tsapply bridge serve` (BINARY, default
///   `.build/release/tsapply`) with `tsapply apply --fleet` run as a process.
enum FleetBenchmark {
  /// CPU seconds (user + system) of this process so far.
  static func cpuSeconds() -> Double {
    var usage = rusage()
    #if os(Linux)
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    #else
    getrusage(RUSAGE_SELF, &usage)
    #endif
    func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
  }

  static func directory() throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("tsapply-bench-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
  }

  static func write(_ text: String, to path: String) throws {
    try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    try text.write(toFile: path, atomically: true, encoding: .utf8)
  }

  /// The ward's defaults: 3 built-ins and 3 custom reminders.
  static let defaults = """
    version: 1
    reminders:
      sedentary: {enabled: true, repeat: workday, period: {start: "09:00", end: "18:00", every: 60m}, lunch_break: {start: "12:00", end: "13:30"}}
      drinking: {enabled: true, repeat: everyday, period: {start: "08:00", end: "20:00", every: 2h}}
      medicine: {enabled: true, repeat: everyday, at: ["08:00", "13:00", "20:00"]}
      custom:
        - {name: Lunch, repeat: everyday, at: ["12:00"]}
        - {name: Round, repeat: workday, at: ["10:00"], notes: Nurse round}
        - {name: Walk, repeat: weekend, at: ["15:30"]}

    """

  /// Resident `index`'s own manifest: 2 more custom reminders (5 in all), 50 contacts, an
  /// emergency block.
  static func resident(_ index: Int, revision: Int = 0) -> String {
    var text = "version: 1\nreminders:\n  custom:\n"
    text += "    - {name: Visit, repeat: [sat], at: [\"14:00\"], notes: Family \(index)}\n"
    text += "    - {name: Call, repeat: [sun], at: [\"18:\(String(format: "%02d", revision % 60))\"]}\n"
    text += "contacts:\n"
    for contact in 0..<50 {
      text += "  - {name: \"Contact \(contact) of \(index)\", phone: \"+1 555 \(String(format: "%03d", index % 1000))-\(String(format: "%04d", contact))\"}\n"
    }
    text += "emergency:\n  sos: true\n  contacts:\n    - {name: Family \(index), phone: \"+1 555 9\(String(format: "%06d", index))\"}\n"
    return text
  }

  /// Layer `k` (1…) over the defaults: a shared contact (the first also an emergency contact,
  /// by reference), and for k = 2 the `Walk` reminder at another time.
  static func layer(_ k: Int) -> String {
    var text = "version: 1\n"
    if k == 2 { text += "reminders:\n  custom:\n    - {name: Walk, repeat: weekend, at: [\"16:00\"]}\n" }
    text += "contacts:\n  - {name: Desk \(k), phone: \"+1 555 01\(String(format: "%02d", k))\"}\n"
    if k == 1 { text += "emergency:\n  contacts:\n    - {contact: Desk 1}\n" }
    return text
  }

  /// The selector of layer `k` (1…): every watch matches, through a label or its profile.
  static func selector(_ k: Int) -> String {
    ["{ward: A}", "{profile: default}", "{floor: [\"1\", \"2\"]}", "{ward: [A, B], profile: [default, fit]}"][(k - 1) % 4]
  }

  /// A fleet of `count` watches in `directory` under `layers` layers (1: `defaults:`);
  /// `device(i)` names watch i's device.
  static func fleet(_ count: Int, in directory: String, transport: String? = nil, layers: Int = 1, device: (Int) -> String) throws {
    try write(defaults, to: directory + "/wards/ward-a.yaml")
    var text = "version: 1\n"
    if layers > 1 {
      text += "layers:\n  - manifest: wards/ward-a.yaml\n"
      for k in 1..<layers {
        try write(layer(k), to: directory + "/layers/layer-\(k).yaml")
        text += "  - {manifest: layers/layer-\(k).yaml, select: \(selector(k))}\n"
      }
    } else {
      text += "defaults: wards/ward-a.yaml\n"
    }
    if let transport { text += "transport: \(transport)\nsite: ward-a\n" }
    text += "watches:\n"
    let labels = layers > 1 ? ", profile: default, labels: {ward: A, floor: \"1\"}" : ""
    for index in 0..<count {
      let name = String(format: "room-%04d", index)
      try write(resident(index), to: directory + "/residents/\(name).yaml")
      text += "  \(name): {device: \"\(device(index))\", manifest: residents/\(name).yaml\(labels)}\n"
    }
    try write(text, to: directory + "/fleet.yaml")
  }

  static func engine(_ directory: String, registry: DeviceRegistry = DeviceRegistry(schemes: [SimulatorScheme()], defaultSpec: "sim:x.json"),
                     environment: [String: String] = [:]) -> Engine {
    Engine(registry: registry, environment: environment.merging(["TSAPPLY_STATE_DIR": directory + "/state"]) { a, _ in a },
           currentDirectory: directory)
  }

  // MARK: fleet-plan

  static func plan(_ arguments: [String]) async throws -> Int32 {
    // `--repeat K`: the timed load and plan K times over the same files (for profiling and
    // for a median on a noisy machine); the set-up (`seed`: the watches as applied, then one
    // contact added on each) runs once.
    var arguments = arguments
    var repeats = 1
    if let flag = arguments.firstIndex(of: "--repeat"), flag + 1 < arguments.count, let k = Int(arguments[flag + 1]), k > 0 {
      repeats = k
      arguments.removeSubrange(flag...flag + 1)
    }
    var layers = 1
    if let flag = arguments.firstIndex(of: "--layers"), flag + 1 < arguments.count, let l = Int(arguments[flag + 1]), l > 0 {
      layers = l
      arguments.removeSubrange(flag...flag + 1)
    }
    var keepPlans = false
    if let flag = arguments.firstIndex(of: "--keep-plans") {
      keepPlans = true
      arguments.remove(at: flag)
    }
    var review = false
    if let flag = arguments.firstIndex(of: "--review") {
      review = true
      arguments.remove(at: flag)
    }
    var parallelism = FleetRunner.defaultParallelism
    if let flag = arguments.firstIndex(of: "--parallelism"), flag + 1 < arguments.count, let p = Int(arguments[flag + 1]), p > 0 {
      parallelism = p
      arguments.removeSubrange(flag...flag + 1)
    }
    var stages = false
    if let flag = arguments.firstIndex(of: "--stages") {
      stages = true
      arguments.remove(at: flag)
    }
    let counts = arguments.compactMap(Int.init)
    for count in counts.isEmpty ? [10, 100, 1000] : counts {
      let directory = try directory()
      defer { try? FileManager.default.removeItem(atPath: directory) }
      try fleet(count, in: directory, layers: layers) { String(format: "sim:watches/room-%04d.json", $0) }
      print("\(layers) layer\(layers == 1 ? " (defaults:)" : "s")")
      // Each watch holds its manifests already, but for one contact added on the watch itself:
      // set up by another process (`fleet-seed`), so that nothing it leaves in memory counts here.
      try seedProcess(directory)
      let engine = engine(directory)
      if stages { try await planStages(directory, engine: engine) }
      BenchmarkClock.resetPeakResident()
      print("watches  load CPU  plan CPU  total CPU  wall      per watch (CPU)  changes")
      fflush(nil)  // shown now, also into a file: a profiler attached on this line profiles only what follows

      for _ in 0..<repeats {
        let wallStart = DispatchTime.now().uptimeNanoseconds
        let cpuStart = cpuSeconds()
        let loaded = try FleetLoader.load(path: directory + "/fleet.yaml", displayName: "fleet.yaml")
        let cpuLoaded = cpuSeconds()
        let residentLoaded = BenchmarkClock.residentKiB()
        // Each plan summarised (its number of changes) and dropped as its watch finishes, as a
        // streaming report would; with `--keep-plans`, every plan kept to the end, as `plan
        // --fleet`'s grouped review keeps them.
        let kept = Locked<[Plan]>([])
        let reviewed = FleetReviewPlans()
        let keepPlans = keepPlans, review = review
        let order = Dictionary(loaded.members.enumerated().map { ($1.name, $0) }) { first, _ in first }
        let results = await FleetRunner(engine: engine, parallelism: parallelism).run(loaded.members) { member, document, watch throws(EngineError) in
          let plan = try await watch.plan(document).plan
          if keepPlans { kept.mutate { $0.append(plan) } }
          if review { _ = reviewed.add(plan, index: order[member.name] ?? .max) }
          return plan.resourceChanges.count
        }
        let cpuEnd = cpuSeconds()
        let wall = Double(DispatchTime.now().uptimeNanoseconds - wallStart) / 1e9
        let changes = results.compactMap { try? $0.outcome.get() }.reduce(0, +)
        let failed = results.filter { (try? $0.outcome.get()) == nil }.count
        let total = cpuEnd - cpuStart
        print(String(format: "%7d  %7.3fs  %7.3fs  %8.3fs  %7.3fs  %13.2fms  %d%@", count, cpuLoaded - cpuStart, cpuEnd - cpuLoaded, total, wall,
                     total / Double(count) * 1000, changes, failed > 0 ? " (\(failed) failed)" as NSString : "" as NSString))
        print("  RSS: \(residentLoaded) KiB with the fleet loaded, \(BenchmarkClock.residentKiB()) KiB after planning"
              + (keepPlans ? " (\(kept.value.count) plans kept)" : ""))
      }
      print("  peak RSS of the timed part (from the end of the set-up): \(BenchmarkClock.peakResidentSinceResetKiB()) KiB")
    }
    print("peak RSS: \(BenchmarkClock.peakResidentKiB()) KiB")
    return 0
  }

  /// `--stages`: where a watch's plan goes, one watch at a time (no parallelism, so no
  /// contention), each watch through every stage before the next starts, as a streaming run
  /// does: CPU per watch (this process's, `CLOCK_PROCESS_CPUTIME_ID`) of reading and merging its
  /// manifests, opening its watch, reading the watch's state, reading its last-applied record,
  /// planning (drift included) and closing; then, apart, the own manifest's parse alone (read
  /// again, not part of the sum).
  static func planStages(_ directory: String, engine: Engine) async throws {
    let loaded = try FleetLoader.load(path: directory + "/fleet.yaml", displayName: "fleet.yaml")
    let names = ["manifests", "open", "read state", "record", "plan", "close"]
    var totals = [Double](repeating: 0, count: names.count)
    func now() -> Double {
      var time = timespec()
      clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
      return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
    for member in loaded.members {
      var marks = [now()]
      let document = try member.read().document.get()
      marks.append(now())
      let watch = try await engine.open(member.device, mayCreate: false)
      marks.append(now())
      let state = try await watch.readState()
      marks.append(now())
      let record = LastApplied.read(at: watch.home.lastAppliedPath, device: watch.identity)
      marks.append(now())
      _ = try Watch.plan(document, state: state, since: record, capabilities: watch.capabilities, device: watch.identity).plan.resourceChanges.count
      marks.append(now())
      await watch.close()
      marks.append(now())
      for index in names.indices { totals[index] += marks[index + 1] - marks[index] }
    }
    let count = Double(loaded.members.count)
    var timings = zip(names, totals.map { $0 / count * 1000 }).map { ($0, $1) }
    let parseStart = now()
    for member in loaded.members {
      guard let own = member.watch.manifest else { continue }
      _ = ManifestLoader.load(path: loaded.fleet.absolutePath(own.value), displayName: own.value, resolvesReferences: false)
    }
    timings.append(("(apart: own manifest parsed alone", (now() - parseStart) / count * 1000))
    print("stages, one watch at a time (CPU per watch): " + timings.map { String(format: "%@ %.3f ms", $0.0, $0.1) }.joined(separator: ", ") + ")")
  }

  /// `fleet-seed DIRECTORY [--no-drift]`: the set-up of `fleet-plan` for the fleet in DIRECTORY
  /// (`seed`); with `--no-drift`, no contact is added on the watches (each matches its manifests).
  static func seed(_ arguments: [String]) async throws -> Int32 {
    guard let directory = arguments.first else { throw BenchmarkFailure("fleet-seed DIRECTORY [--no-drift]") }
    let start = DispatchTime.now().uptimeNanoseconds
    let loaded = try FleetLoader.load(path: directory + "/fleet.yaml", displayName: "fleet.yaml")
    try await seed(loaded.members, engine: engine(directory), scratch: directory + "/seed", drift: !arguments.contains("--no-drift"))
    print(String(format: "  (set-up of %d watches, another process: %.1fs CPU, %.1fs wall)", loaded.members.count, cpuSeconds(),
                 Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9))
    return 0
  }

  /// Brings every member's watch (a `sim:` state file, created here) to its merged manifest and
  /// records it, as `apply --fleet` would leave it, then adds one contact on each watch itself:
  /// each manifest is applied by the engine's `Reconciler` to an in-memory simulated watch (backups
  /// under `scratch`, removed after), whose state is then written as the watch's state file with
  /// its last-applied record. Applying through the state files costs over 13 CPU-minutes at
  /// 10,000 watches (every call rewrites the file); this costs a few milliseconds a watch.
  static func seed(_ members: [FleetMember], engine: Engine, scratch: String, drift: Bool = true) async throws {
    defer { try? FileManager.default.removeItem(atPath: scratch) }
    // Eight at a time: the backups' fsyncs, not the CPU, bound the set-up's wall time.
    try await withThrowingTaskGroup(of: Void.self) { group in
      for (index, member) in members.enumerated() {
        if index >= 8 { try await group.next() }
        group.addTask { try await seed(member, engine: engine, scratch: scratch, drift: drift) }
      }
      try await group.waitForAll()
    }
  }

  private static func seed(_ member: FleetMember, engine: Engine, scratch: String, drift: Bool) async throws {
    let document = try member.document.get()
    let device = SimulatedDevice(profile: .default)
    let reconciler = try await Reconciler.connect(device)
    let (state, result) = try await reconciler.plan(document.manifest)
    guard let plan = result.plan else { throw BenchmarkFailure("\(member.name): \(result.diagnostics)") }
    let report = try await reconciler.apply(plan, manifest: document.manifest, state: state, backupDirectory: scratch, now: Date())
    guard let applied = report.finalState else { throw BenchmarkFailure("\(member.name): nothing read back") }
    if drift { try device.simulateContactAdd(Contact(name: "Visitor", phoneNum: "+15550000")) }
    let written = engine.currentDirectory + "/" + member.device.dropFirst(DeviceSelector.simulatorScheme.count)
    try SecureFile.createDirectory((written as NSString).deletingLastPathComponent)
    let path = SimulatedDevice.canonical(written)
    try writePrivate(try device.snapshot().jsonData(), to: path)
    try writePrivate(Data(), to: path + ".lock")  // as `tsapply device init` leaves it
    let profile = reconciler.capabilities.profile
    let home = WatchHome(identity: DeviceSelector.simulatorScheme + path, root: engine.stateRoot)
    try home.prepare(profile: profile)
    try writePrivate(Data(canonicalJSON(LastApplied(device: home.identity, profile: profile, state: applied)).utf8), to: home.lastAppliedPath)
  }

  /// Writes `data` to a new file at `path`, mode 0600 from the start, without the fsyncs of
  /// `SecureFile.write` (a set-up in a temporary folder needs no durability).
  static func writePrivate(_ data: Data, to path: String) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard fd >= 0 else { throw BenchmarkFailure("cannot create \(path): errno \(errno)") }
    defer { close(fd) }
    let written = data.withUnsafeBytes { Foundation.write(fd, $0.baseAddress, $0.count) }
    guard written == data.count else { throw BenchmarkFailure("cannot write \(path): errno \(errno)") }
  }

  // MARK: fleet-review

  /// `fleet-review [N …] [--binary PATH]`: what a person reads for a one-field change over a
  /// fleet. A fleet of N watches as for `fleet-plan` (default 10, 100, 1000), every watch as
  /// applied (no drift), then the defaults' drinking interval changed from 2h to 3h; `tsapply
  /// plan --fleet` (PATH, default the `tsapply` beside this binary) run as a process, as on a
  /// terminal would show it (`NO_COLOR`): lines printed by default, with `--summary`, with
  /// `--markdown` (and its characters), the `--json` report's size; then the lines of `apply
  /// --fleet --auto-approve` making the change.
  static func review(_ arguments: [String]) async throws -> Int32 {
    var arguments = arguments
    var binary = MonitorBenchmark.binary.path
    if let flag = arguments.firstIndex(of: "--binary"), flag + 1 < arguments.count {
      binary = arguments[flag + 1]
      arguments.removeSubrange(flag...flag + 1)
    }
    guard FileManager.default.isExecutableFile(atPath: binary) else { throw BenchmarkFailure("\(binary) not built (swift build --product tsapply)") }
    let counts = arguments.compactMap(Int.init)
    print("watches  default lines  --summary lines  --markdown lines (chars)  --json bytes  exit  apply --auto-approve lines  exit")
    for count in counts.isEmpty ? [10, 100, 1000] : counts {
      let directory = try directory()
      defer { try? FileManager.default.removeItem(atPath: directory) }
      try fleet(count, in: directory) { String(format: "sim:watches/room-%04d.json", $0) }
      try seedProcess(directory, drift: false)
      try write(defaults.replacingOccurrences(of: "every: 2h}}", with: "every: 3h}}"), to: directory + "/wards/ward-a.yaml")
      func plan(_ options: [String], command: String = "plan") throws -> (text: String, status: Int32) {
        let environment = ProcessInfo.processInfo.environment.merging(["TSAPPLY_STATE_DIR": directory + "/state", "NO_COLOR": "1"]) { _, new in new }
        return try execute(binary, [command, "--fleet", "fleet.yaml"] + options, environment: environment, in: directory)
      }
      func lines(_ text: String) -> Int { text.split(separator: "\n", omittingEmptySubsequences: false).count - 1 }
      let human = try plan([]), summary = try plan(["--summary"]), markdown = try plan(["--markdown"]), json = try plan(["--json"])
      let apply = try plan(["--auto-approve"], command: "apply")
      print(String(format: "%7d  %13d  %15d  %14d (%7d)  %12d  %4d  %18d  %d", count, lines(human.text), lines(summary.text), lines(markdown.text),
                   markdown.text.count, json.text.utf8.count, human.status, lines(apply.text), apply.status))
      if count == counts.first ?? 10 { print("--- plan --fleet, \(count) watches:\n" + human.text + "---") }
    }
    return 0
  }

  // MARK: monitor-fleet

  static func monitorFleet(_ arguments: [String]) async throws -> Int32 {
    let count = arguments.first.flatMap(Int.init) ?? 1000
    let seconds = arguments.dropFirst().first.flatMap(Int.init) ?? 20
    let binary = arguments.dropFirst(2).first ?? MonitorBenchmark.binary.path
    guard FileManager.default.isExecutableFile(atPath: binary) else {
      throw BenchmarkFailure("\(binary) not built (swift build -c release --product tsapply)")
    }
    let directory = try directory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try fleet(count, in: directory) { String(format: "sim:watches/room-%04d.json", $0) }
    try seedProcess(directory)
    let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
    /// Starts the monitor and returns it once ready, with its CPU (user, system) and wall seconds and RSS then.
    func startReady() throws -> (Process, FileHandle, user: Double, system: Double, wall: Double, rss: Int) {
      let start = DispatchTime.now().uptimeNanoseconds
      let (process, reader) = try startReadyMonitor(binary: binary, in: directory, count: count)
      let (user, system) = try MonitorBenchmark.cpuTicksSplit(process.processIdentifier)
      return (process, reader, Double(user) / ticks, Double(system) / ticks,
              Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9, try MonitorBenchmark.residentKiB(process.processIdentifier))
    }
    let first = try startReady()
    let process = first.0, reader = first.1
    defer { if process.isRunning { process.terminate(); process.waitUntilExit() } }
    let pid = process.processIdentifier
    let ready = first.user + first.system
    // Drain what it prints meanwhile (nothing, when idle) so it never blocks on the pipe.
    let drained = Task.detached { while !reader.availableData.isEmpty {} }
    try await Task.sleep(for: .seconds(seconds))
    let idle = Double(try MonitorBenchmark.cpuTicks(pid)) / ticks - ready
    let idleRSS = try MonitorBenchmark.residentKiB(pid)
    process.terminate()
    process.waitUntilExit()
    drained.cancel()
    print(String(format: "monitor --fleet, %d sim: watches: ready (every watch online, its drift reported) after %.2fs CPU (user %.2fs, system %.2fs), %.2fs wall, RSS %d KiB",
                 count, ready, first.user, first.system, first.wall, first.rss))
    print(String(format: "  idle %ds: %.2fs CPU = %.2f%% of one core (%.2f%% per 1,000 watches), RSS %d KiB", seconds, idle,
                 idle / Double(seconds) * 100, idle / Double(seconds) * 100 * 1000 / Double(count), idleRSS))
    // Started again over the same state folder: each watch's monitor files (its lock, the last
    // event handled) exist now, so none is created.
    let again = try startReady()
    defer { if again.0.isRunning { again.0.terminate(); again.0.waitUntilExit() } }
    let drainedAgain = Task.detached { while !again.1.availableData.isEmpty {} }
    again.0.terminate()
    again.0.waitUntilExit()
    drainedAgain.cancel()
    print(String(format: "  restarted: ready after %.2fs CPU (user %.2fs, system %.2fs), %.2fs wall, RSS %d KiB",
                 again.user + again.system, again.user, again.system, again.wall, again.rss))
    return 0
  }

  /// Starts `BINARY monitor --fleet fleet.yaml --json EXTRA` in `directory` (its state folder
  /// there, standard error to `monitor.stderr`) over the `count` drifted watches `fleet-seed`
  /// set up, and returns once it is ready: every watch reported `online` and its drift. The
  /// caller drains `reader` afterwards and ends the process.
  static func startReadyMonitor(binary: String, in directory: String, count: Int, extra: [String] = []) throws -> (Process, FileHandle) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = ["monitor", "--fleet", "fleet.yaml", "--json"] + extra
    process.currentDirectoryURL = URL(fileURLWithPath: directory)
    process.environment = ProcessInfo.processInfo.environment.merging(["TSAPPLY_STATE_DIR": directory + "/state"]) { _, new in new }
    let output = Pipe()
    process.standardOutput = output
    let errors = directory + "/monitor.stderr"
    _ = FileManager.default.createFile(atPath: errors, contents: nil)
    process.standardError = FileHandle(forWritingAtPath: errors)
    try process.run()
    var online = 0, drift = 0, pending = Data()
    let reader = output.fileHandleForReading
    while online < count || drift < count {
      let data = reader.availableData
      if data.isEmpty {
        process.terminate()
        throw BenchmarkFailure("tsapply monitor --fleet ended before it was ready (\(online) online, \(drift) drift): "
                               + ((try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""))
      }
      pending += data
      while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
        let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
        pending = Data(pending[pending.index(after: newline)...])
        if line.contains("\"kind\":\"online\"") { online += 1 }
        if line.contains("\"kind\":\"drift\"") { drift += 1 }
      }
    }
    return (process, reader)
  }

  /// Runs `fleet-seed directory` (the set-up of `fleet-plan`) as another process.
  static func seedProcess(_ directory: String, drift: Bool = true) throws {
    let seeding = Process()
    seeding.executableURL = URL(fileURLWithPath: ProcessInfo.processInfo.arguments[0])
    seeding.arguments = ["fleet-seed", directory] + (drift ? [] : ["--no-drift"])
    try seeding.run()
    seeding.waitUntilExit()
    guard seeding.terminationStatus == 0 else { throw BenchmarkFailure("fleet-seed \(directory) failed") }
  }

  // MARK: fleet-agents

  static func agents(_ arguments: [String]) async throws -> Int32 {
    let count = arguments.first.flatMap(Int.init) ?? 1000
    let offlinePercent = arguments.dropFirst().first.flatMap(Int.init) ?? 0
    let directory = try directory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let broker = try MosquittoBroker.start(in: directory)
    defer { broker.stop() }
    let scheme = MemoryScheme()
    let engine = engine(directory, registry: DeviceRegistry(schemes: [scheme], defaultSpec: "memory:x"))
    try fleet(count, in: directory, transport: "\(broker.address)") { String(format: "memory:room-%04d", $0) }
    let settings = BrokerSettings(address: broker.address)
    func agent(_ index: Int) async throws -> FleetAgent {
      let id = String(format: "room-%04d", index)
      let watch = try await engine.open("memory:\(id)")
      let agent = try FleetAgent(configuration: .init(broker: settings, site: "ward-a", agentID: "agent-\(id)", driftInterval: .zero),
                                 watches: [(id, watch)])
      await agent.start()
      return agent
    }
    print("starting \(count) agents (one session and one in-memory watch each) on \(broker.address)…")
    var agents: [FleetAgent] = []
    for index in 0..<count { agents.append(try await agent(index)) }
    for agent in agents { try await agent.ready(within: .seconds(60)) }
    let loaded = try FleetLoader.load(path: directory + "/fleet.yaml", displayName: "fleet.yaml")
    // A first publication brings every watch to its manifests (not measured).
    _ = try await FleetPublication.apply(loaded.members, site: "ward-a", settings: settings, allowDestroy: true, wait: .seconds(300))

    // New revisions: every resident's "Call" reminder moves.
    for index in 0..<count { try write(resident(index, revision: 1), to: directory + String(format: "/residents/room-%04d.yaml", index)) }
    let changed = try FleetLoader.load(path: directory + "/fleet.yaml", displayName: "fleet.yaml")
    let offline = Set((0..<count).filter { offlinePercent > 0 && $0 % (100 / offlinePercent) == 0 })
    for index in offline { await agents[index].abandon() }
    if !offline.isEmpty {
      let view = try FleetBrokerView(settings: settings, site: "ward-a")
      try await view.connect(within: .seconds(30))
      while view.agents.values.filter({ !$0.online }).count < offline.count { try await Task.sleep(for: .milliseconds(20)) }
      await view.close()
    }
    let before = agents.map(\.statistics)
    let brokerBefore = broker.cpuSeconds() ?? 0
    let cpuBefore = cpuSeconds()
    let start = DispatchTime.now().uptimeNanoseconds
    let rows = try await FleetPublication.apply(changed.members, site: "ward-a", settings: settings, allowDestroy: false, wait: .seconds(300))
    let converged = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    let cpuOnline = cpuSeconds() - cpuBefore
    let brokerOnline = (broker.cpuSeconds() ?? 0) - brokerBefore
    let words = Dictionary(grouping: rows, by: \.verdict.word).mapValues(\.count)
    print(String(format: "publish %d revisions → statuses converged: %.3fs wall (%@)", count, converged,
                 words.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ") as NSString))
    print(String(format: "CPU: agents + publisher process %.3fs, broker %.3fs", cpuOnline, brokerOnline))

    var returned = 0.0
    if !offline.isEmpty {
      let returnStart = DispatchTime.now().uptimeNanoseconds
      for index in offline.sorted() { agents[index] = try await agent(index) }
      let view = try FleetBrokerView(settings: settings, site: "ward-a")
      try await view.connect(within: .seconds(30))
      let wanted = Dictionary(uniqueKeysWithValues: offline.map { index in
        (String(format: "room-%04d", index), rows[index].details["revision"])
      })
      while true {
        let statuses = view.statuses
        let done = wanted.filter { id, revision in
          guard case .string(let text) = revision else { return false }
          return statuses[id]?.status.revision == text
        }.count
        if done == wanted.count { break }
        try await Task.sleep(for: .milliseconds(20))
      }
      await view.close()
      returned = Double(DispatchTime.now().uptimeNanoseconds - returnStart) / 1e9
      print(String(format: "%d agents back online: converged without a re-publish in %.3fs", offline.count, returned))
    }
    let after = agents.map(\.statistics)
    // Messages published per watch for this change: its desired document, and the agent's statuses and events.
    var statuses = 0, events = 0, presence = 0
    for (index, stats) in after.enumerated() {
      let old = offline.contains(index) ? FleetAgent.Statistics() : before[index]
      statuses += stats.statuses - old.statuses
      events += stats.events - old.events
      presence += stats.presence - old.presence
    }
    let published = Double(count + statuses + events) / Double(count)
    print(String(format: "messages per watch per change: %.2f published (1 desired + %.2f status + %.2f events)%@",
                 published, Double(statuses) / Double(count), Double(events) / Double(count),
                 offline.isEmpty ? "" : String(format: "; %d presence messages from the agents that returned", presence) as NSString))
    print(String(format: "broker CPU in all: %.3fs; this process: %.3fs; peak RSS %d KiB", broker.cpuSeconds() ?? 0, cpuSeconds(),
                 BenchmarkClock.peakResidentKiB()))
    // Idle: every agent connected with its watch in sync, nothing published (issue 21's target:
    // ≤ 2 % of a core per 1,000 watches for the agents).
    let idleSeconds = 10.0
    let idleCPU = cpuSeconds(), idleBroker = broker.cpuSeconds() ?? 0
    try await Task.sleep(for: .seconds(idleSeconds))
    print(String(format: "idle for %.0fs: agents %.2f%% of a core (%.3fs CPU), broker %.2f%%", idleSeconds,
                 (cpuSeconds() - idleCPU) / idleSeconds * 100, cpuSeconds() - idleCPU,
                 ((broker.cpuSeconds() ?? 0) - idleBroker) / idleSeconds * 100))
    for agent in agents { await agent.stop() }
    _ = returned
    return 0
  }

  // MARK: fleet-direct

  static func direct(_ arguments: [String]) async throws -> Int32 {
    let count = arguments.first.flatMap(Int.init) ?? 100
    let latency = arguments.dropFirst().first ?? "40,8"
    let binary = arguments.dropFirst(2).first ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(".build/release/tsapply").path
    let directory = try directory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    for fleet in ["ten"] {
      try self.fleet(count, in: directory + "/" + fleet) { String(format: "sim:watches/room-%04d.json", $0) }
      for index in 0..<count {
        try SimulatedDevice.create(path: directory + "/\(fleet)" + String(format: "/watches/room-%04d.json", index), profile: .default, force: false)
      }
    }
    print("apply --fleet, \(count) watches each, TSAPPLY_SIM_LATENCY=\(latency):")
    for (fleet, parallelism) in [("ten", 10)] {
      // sim: paths are relative to the fleet file's directory, as in the command line.
      var engine = engine(directory + "/\(fleet)", environment: [SimulationOptions.latencyVariable: latency])
      engine.stateRoot = directory + "/state"
      let loaded = try FleetLoader.load(path: directory + "/\(fleet)/fleet.yaml", displayName: "fleet.yaml")
      let start = DispatchTime.now().uptimeNanoseconds
      let results = await FleetRunner(engine: engine, parallelism: parallelism).run(loaded.members) { _, document, watch throws(EngineError) in
        try await watch.apply(document, options: ApplyOptions(approval: .automatic(allowDestroy: false), command: "bench"))
      }
      let wall = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
      let failed = results.filter { (try? $0.outcome.get()) == nil }.count
      let sum = results.map(\.elapsed.seconds).reduce(0, +)
      print(String(format: "  sim: (in process), -parallelism=%d: wall %.2fs, sum of per-watch times %.2fs (%.1fx)%@", parallelism, wall,
                   sum, sum / wall, failed > 0 ? " (\(failed) failed)" as NSString : "" as NSString))
    }
    guard FileManager.default.isExecutableFile(atPath: binary) else {
      print("  bridge: \(binary) not built (swift build -c release --product tsapply); skipped")
      return 0
    }
    try await bridged(count, latency: latency, binary: binary)
    return 0
  }

  /// The same through one `tsapply bridge serve` serving every watch, with `tsapply apply
  /// --fleet` run as a process.
  static func bridged(_ count: Int, latency: String, binary: String) async throws {
    let directory = try directory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var environment = ProcessInfo.processInfo.environment
    environment["XDG_CONFIG_HOME"] = directory + "/config"
    environment["TSAPPLY_STATE_DIR"] = directory + "/state"
    environment[SimulationOptions.latencyVariable] = latency
    var paths: [String] = []
    for fleet in ["ten"] {
      for index in 0..<count {
        let path = directory + "/\(fleet)" + String(format: "/watches/room-%04d.json", index)
        try SimulatedDevice.create(path: path, profile: .default, force: false)
        paths.append(path)
      }
    }
    let served = try ServedBridge.start(binary: binary, paths: paths, environment: environment)
    defer { served.stop() }
    let (pairing, watchIDs) = (served.pairing, served.watchIDs)
    _ = try run(binary, ["bridge", "pair", pairing, "--name", "ward"], environment: environment, in: directory)
    for (fleet, parallelism) in [("ten", 10)] {
      let folder = directory + "/\(fleet)"
      try self.fleet(count, in: folder) { index in
        "bridge:ward/" + (watchIDs[folder + String(format: "/watches/room-%04d.json", index)] ?? "?")
      }
      let start = DispatchTime.now().uptimeNanoseconds
      let json = try run(binary, ["apply", "--fleet", "fleet.yaml", "--auto-approve", "--json", "-parallelism=\(parallelism)"],
                         environment: environment, in: folder)
      let wall = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
      let watches = ((try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any])?["watches"] as? [[String: Any]] ?? []
      let sum = watches.compactMap { $0["elapsed_seconds"] as? Double }.reduce(0, +)
      let applied = watches.filter { $0["result"] as? String == "applied" }.count
      print(String(format: "  bridge: (one tsapply bridge serve), -parallelism=%d: wall %.2fs (the whole process), sum of per-watch times %.2fs (%.1fx), %d applied",
                   parallelism, wall, sum, sum / wall, applied))
    }
  }

  /// Runs `binary arguments` in `directory`; its standard output.
  static func run(_ binary: String, _ arguments: [String], environment: [String: String], in directory: String) throws -> String {
    try execute(binary, arguments, environment: environment, in: directory).text
  }

  /// Runs `binary arguments` in `directory`; its standard output and exit status.
  static func execute(_ binary: String, _ arguments: [String], environment: [String: String],
                      in directory: String) throws -> (text: String, status: Int32) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = arguments
    process.environment = environment
    process.currentDirectoryURL = URL(fileURLWithPath: directory)
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (String(decoding: data, as: UTF8.self), process.terminationStatus)
  }
}
