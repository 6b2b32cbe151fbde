import Foundation
import TSDevice
import TSModel

/// `tsapply-bench process --binary PATH [--hello PATH] [--runs N]`: whole-process costs of a
/// built `tsapply` (normally the static release binary, docs/performance.md), the way a shell
/// runs it: `--version`; `validate` of the contacts workload (`ContactWorkload`) at N = 1 and
/// N = 5000; `plan` of N = 90 against a simulated watch holding the drifted contacts. Runs the
/// commands in turn (`N` rounds after one warm-up, default 9), each spawned with its output
/// discarded, and prints per command the median CPU time (user + system, from `wait4`), the
/// median wall time and the peak RSS of one more run under GNU time (`/usr/bin/time`: a child
/// spawned by this large process would inherit its resident size as the peak); then the
/// per-contact cost of `validate`, its memory growth, and, with `--hello` (a static Swift "hello"
/// binary), `--version` against it.
/// The comparisons with octoDNS and libyaml's floor are the peer harness's (script/bench-peers).
enum ProcessBenchmark {
  /// One command's runs.
  struct Runs {
    var label: String
    var arguments: [String]
    var cpu: [Double] = []
    var wall: [Double] = []
    var peakKiB: Int?
    var statuses: Set<Int32> = []

    var medianCPU: Double { cpu.sorted()[cpu.count / 2] }
    var medianWall: Double { wall.sorted()[wall.count / 2] }
  }

  static func run(_ arguments: [String]) async throws -> Int32 {
    let options = try BenchmarkOptions(arguments, allowed: ["--binary", "--hello", "--runs"])
    guard let binary = options["--binary"] else {
      print("usage: tsapply-bench process --binary PATH [--hello PATH] [--runs N]")
      return 64
    }
    let rounds = try options.integer("--runs", default: 9)
    let directory = NSTemporaryDirectory() + "tsapply-bench-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    for count in [1, 90, 5000] {
      try ContactWorkload(count: count).manifest.write(toFile: "\(directory)/contacts-\(count).yaml", atomically: true, encoding: .utf8)
    }
    let watch = "\(directory)/watch.json"
    let device = try SimulatedDevice.create(path: watch, profile: .default, force: false)
    try await device.setAllContacts(ContactWorkload(count: 90).watchContacts.map {
      Contact(name: $0.name, phoneNum: $0.phoneNum, shortName: String($0.name.prefix(1)).uppercased())
    })

    var commands = [
      Runs(label: "tsapply --version", arguments: [binary, "--version"]),
      Runs(label: "tsapply validate (1 contact)", arguments: [binary, "validate", "\(directory)/contacts-1.yaml"]),
      Runs(label: "tsapply validate (5000 contacts)", arguments: [binary, "validate", "\(directory)/contacts-5000.yaml"]),
      Runs(label: "tsapply plan (90 contacts)",
           arguments: [binary, "plan", "--no-color", "--device", "sim:\(watch)", "\(directory)/contacts-90.yaml"]),
    ]
    if let hello = options["--hello"] { commands.insert(Runs(label: "static Swift hello", arguments: [hello]), at: 0) }
    for round in 0...rounds {
      for index in commands.indices {
        let (cpu, wall, status) = try spawn(commands[index].arguments)
        guard round > 0 else { continue }  // warm-up
        commands[index].cpu.append(cpu)
        commands[index].wall.append(wall)
        commands[index].statuses.insert(status)
      }
    }
    for index in commands.indices { commands[index].peakKiB = try peakResidentKiB(commands[index].arguments, in: directory) }
    print("\(rounds) paired runs; CPU = user + system of the whole process")
    for command in commands {
      let codes = command.statuses == [0] || command.statuses == [2] ? "" : "  exit statuses \(command.statuses.sorted())"
      let peak = command.peakKiB.map { String(format: "%6.1f MiB", Double($0) / 1024) } ?? "     -"
      print(command.label.padding(toLength: 34, withPad: " ", startingAt: 0)
        + String(format: "cpu %7.2f ms   wall %7.2f ms   peak RSS ", command.medianCPU, command.medianWall) + peak + codes)
    }
    let byLabel = Dictionary(uniqueKeysWithValues: commands.map { ($0.label, $0) })
    if let one = byLabel["tsapply validate (1 contact)"], let full = byLabel["tsapply validate (5000 contacts)"] {
      print(String(format: "validate: %.2f µs CPU per contact", (full.medianCPU - one.medianCPU) * 1000 / 4999))
      if let fullPeak = full.peakKiB, let onePeak = one.peakKiB {
        print(String(format: "validate: peak RSS at 5000 / at 1: %.2f× (target ≤ 1.5×)", Double(fullPeak) / Double(onePeak)))
      }
    }
    if let hello = byLabel["static Swift hello"], let version = byLabel["tsapply --version"] {
      print(String(format: "--version / static hello: %.2f× CPU (target ≤ 1.5×)", version.medianCPU / hello.medianCPU))
    }
    return 0
  }

  /// The peak RSS in KiB of one run of `arguments` under GNU time; `nil` without /usr/bin/time.
  static func peakResidentKiB(_ arguments: [String], in directory: String) throws -> Int? {
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/time") else { return nil }
    let report = "\(directory)/time.txt"
    _ = try spawn(["/usr/bin/time", "-f", "%M", "-o", report] + arguments)
    let text = (try? String(contentsOfFile: report, encoding: .utf8)) ?? ""
    return text.split(whereSeparator: \.isNewline).last.flatMap { Int($0) }
  }

  /// Runs `arguments` (a path and its arguments) with standard input, output and error on
  /// /dev/null; returns its CPU and wall time in milliseconds and its exit status.
  static func spawn(_ arguments: [String]) throws -> (cpu: Double, wall: Double, status: Int32) {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    for descriptor in [0, 1, 2] {
      posix_spawn_file_actions_addopen(&actions, Int32(descriptor), "/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY, 0)
    }
    let argv = arguments.map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid = pid_t()
    let start = DispatchTime.now().uptimeNanoseconds
    let spawned = posix_spawn(&pid, arguments[0], &actions, nil, argv, environ)
    guard spawned == 0 else { throw BenchmarkOptions.Problem(description: "cannot run \(arguments[0]): \(String(cString: strerror(spawned)))") }
    var status: Int32 = 0
    var usage = rusage()
    _ = wait4(pid, &status, 0, &usage)
    let wall = Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000_000
    let seconds = { (time: timeval) in Double(time.tv_sec) * 1000 + Double(time.tv_usec) / 1000 }
    let exitStatus = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    return (seconds(usage.ru_utime) + seconds(usage.ru_stime), wall, exitStatus)
  }
}
