import Foundation
import Testing
import TSDevice
import TSManifest
import TSModel
import TSPlan
import TSTestSupport

/// The engine's promises, tried on the built binary: concurrent applies end with exactly one
/// manifest's outcome, signals and a closed pipe stop an apply cleanly with a summary, a dead
/// holder never leaves a stale lock.
@Suite struct ConcurrentApplyTests {
  /// Four manifests that differ in every section: built-ins, custom reminders, contacts,
  /// emergency contacts.
  static func manifest(_ index: Int) -> String {
    let letters = ["A", "B", "C", "D"]
    let name = letters[index]
    return """
      version: 1
      reminders:
        sedentary:
          enabled: \(index % 2 == 0)
          repeat: \(["workday", "weekend", "everyday", "[mon, wed]"][index])
          period: {start: "0\(index + 5):00", end: "18:00", every: \(index + 1)h}
        custom:
          - {name: \(name) walk, repeat: weekend, at: ["1\(index):30"]}
          - {name: \(name) pills, repeat: everyday, at: ["0\(index + 6):15"]}
      contacts:
        - {name: \(name) One, phone: "+1555010\(index)"}
        - {name: \(name) Two, phone: "+1555020\(index)"}
      emergency:
        sos: true
        contacts:
          - {name: \(name) Help, phone: "+1555030\(index)"}

      """
  }

  /// Which of `manifests` the watch at `path` matches exactly (an empty plan).
  static func matching(_ manifests: [Manifest], watch path: String) async throws -> [Int] {
    let device = try SimulatedDevice(path: path)
    let capabilities = try await device.capabilities()
    let state = try await device.readState(capabilities: capabilities)
    return manifests.indices.filter { Planner.plan(manifests[$0], state: state, capabilities: capabilities).plan?.isEmpty == true }
  }

  @Test(arguments: [2, 4])
  func concurrentAppliesLeaveExactlyOneManifestsOutcome(_ processes: Int) async throws {
    let rounds = 50
    let dir = try TSApplyBinary.temporaryDirectory()
    _ = try TSApplyBinary.run(["device", "init", "--device", "sim:w.json"], in: dir)
    var manifests: [Manifest] = []
    for index in 0..<processes {
      let text = Self.manifest(index)
      try text.write(to: dir.appendingPathComponent("m\(index).yaml"), atomically: true, encoding: .utf8)
      manifests.append(try #require(ManifestLoader.load(bytes: Array(text.utf8), file: "m\(index).yaml").manifest))
    }
    var mixed = 0, refusals = 0, successes = 0
    for round in 0..<rounds {
      let runs = try (0..<processes).map { index in
        try TSApplyBinary.start(["apply", "--auto-approve", "--allow-destroy", "--device", "sim:w.json", "m\(index).yaml"],
                                in: dir, environment: ["TSAPPLY_SIM_LATENCY": "3,0"])
      }
      for run in runs {
        let result = run.wait()
        if result.status == 0 {
          successes += 1
        } else {
          refusals += 1
          #expect(result.status == 1 && result.stderr.contains("the watch is locked: another tsapply holds it"),
                  "round \(round): \(result.stderr)")
        }
      }
      let matches = try await Self.matching(manifests, watch: dir.appendingPathComponent("w.json").path)
      if matches.count != 1 { mixed += 1 }
    }
    #expect(mixed == 0, "\(mixed) of \(rounds) rounds ended in a state that is not exactly one manifest's outcome")
    #expect(successes >= rounds)
    #expect(refusals > 0, "the applies never overlapped, so the lock was not exercised")
  }
}

@Suite struct StopTests {
  /// A watch set up for a slow apply (300 ms a call: about 4 s of writes after about 1 s of reads).
  static func slowApply(_ dir: URL, stdout: Pipe = Pipe()) throws -> (Process, Pipe) {
    let process = Process()
    process.executableURL = TSApplyBinary.url
    process.arguments = ["apply", "--auto-approve"]
    process.currentDirectoryURL = dir
    var environment = ProcessInfo.processInfo.environment
    environment["TSAPPLY_SIM_LATENCY"] = "300,0"
    environment["TSAPPLY_STATE_DIR"] = TSApplyBinary.testStateDirectory
    process.environment = environment
    let error = Pipe()
    process.standardOutput = stdout
    process.standardError = error
    try process.run()
    return (process, error)
  }

  /// Sent once, or twice at once as `timeout` does (to the process and to its process group):
  /// one request, so the apply still stops between calls with the summary.
  @Test(arguments: [(SIGTERM, "SIGTERM", 1), (SIGHUP, "SIGHUP", 1), (SIGTERM, "SIGTERM", 2)])
  func aSignalStopsBetweenCallsWithTheSummary(_ signal: Int32, _ name: String, _ deliveries: Int) throws {
    let dir = try ReconcileTests.workspace()
    _ = try TSApplyBinary.run(["device", "init"], in: dir)
    let output = Pipe()
    let (process, error) = try Self.slowApply(dir, stdout: output)
    Thread.sleep(forTimeInterval: 2.0)
    for _ in 0..<deliveries { kill(process.processIdentifier, signal) }
    let stderr = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    _ = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    #expect(process.terminationStatus == 1, "\(stderr)")
    #expect(stderr.contains("\(name) received. Finishing the current device call, then stopping (send \(name) again to quit at once)..."))
    #expect(stderr.contains("apply stopped part-way: interrupted"))
    #expect(stderr.contains("  applied:      "))
    #expect(stderr.contains("  not applied:  "))
    #expect(stderr.contains("Run 'tsapply apply watch.yaml' again to finish, or 'tsapply restore "))
    let rerun = try TSApplyBinary.run(["apply", "--auto-approve"], in: dir)
    #expect(rerun.status == 0, "\(rerun.stderr)")
    #expect(try TSApplyBinary.run(["plan", "--detailed-exitcode"], in: dir).status == 0)
  }

  /// An apply that stops before its first write (here the read just before it fails) has
  /// nothing to undo: no advice to restore the backup, which would undo whatever changed on the
  /// watch meanwhile; it says to look at the watch and apply again.
  @Test func anApplyThatStopsBeforeWritingHasNothingToUndo() throws {
    let dir = try ReconcileTests.workspace()
    _ = try TSApplyBinary.run(["device", "init"], in: dir)
    let before = try Data(contentsOf: ReconcileTests.stateFile(dir))
    let failed = try TSApplyBinary.run(["apply", "--auto-approve"], in: dir, environment: ["TSAPPLY_SIM_FAULT": "fail@4"])
    #expect(failed.status == 1, "\(failed.stderr)")
    #expect(failed.stderr.contains("apply stopped part-way: "), "\(failed.stderr)")
    #expect(failed.stderr.contains("Nothing was written to the watch, so there is nothing to undo. See what it holds now with 'tsapply plan watch.yaml', then apply again."),
            "\(failed.stderr)")
    #expect(!failed.stderr.contains("restore"), "\(failed.stderr)")
    #expect(try Data(contentsOf: ReconcileTests.stateFile(dir)) == before, "nothing was written")
  }

  /// An apply whose first write fails without reaching the watch (its lost answer reads back as
  /// not applied) left the watch as it was: no advice to restore or to re-plan — the same apply,
  /// a saved plan too, runs again and completes.
  @Test(arguments: [false, true])
  func aFirstWriteThatDidNotLandLeavesNothingToUndo(savedPlan: Bool) throws {
    let dir = try ReconcileTests.workspace()
    _ = try TSApplyBinary.run(["device", "init"], in: dir)
    let before = try Data(contentsOf: ReconcileTests.stateFile(dir))
    if savedPlan { #expect(try TSApplyBinary.run(["plan", "-out", "w.tfplan"], in: dir).status == 0) }
    let arguments = savedPlan ? ["apply", "w.tfplan"] : ["apply", "--auto-approve"]
    let failed = try TSApplyBinary.run(arguments, in: dir, environment: ["TSAPPLY_SIM_FAULT": "fail@6"])
    #expect(failed.status == 1, "\(failed.stderr)")
    #expect(failed.stderr.contains("  applied:      (none)"), "\(failed.stderr)")
    let again = savedPlan ? "tsapply apply --device sim:.tsapply/device.json w.tfplan" : "tsapply apply watch.yaml"
    #expect(failed.stderr.contains("Nothing reached the watch (it holds what it held before), so there is nothing to undo. Run '\(again)' again to apply it."),
            "\(failed.stderr)")
    #expect(!failed.stderr.contains("restore") && !failed.stderr.contains("no longer matches"), "\(failed.stderr)")
    #expect(try Data(contentsOf: ReconcileTests.stateFile(dir)) == before, "nothing was written")
    let rerun = try TSApplyBinary.run(again.split(separator: " ").dropFirst().map(String.init) + (savedPlan ? [] : ["--auto-approve"]), in: dir)
    #expect(rerun.status == 0, "\(rerun.stdout)\(rerun.stderr)")
  }

  /// A write the watch refuses for what it is sent or holds (3002: a parameter; fresh-eyes fe99
  /// #5, a reminder's notes edited on the watch beyond the SDK's limit) fails the same way at
  /// every rerun: the advice is not "run it again" but to see and change what is refused, first
  /// write (nothing reached) or later (some applied).
  @Test(arguments: [6, 8])
  func aRefusedWriteIsNotAdvisedToBeRunAgain(call: Int) throws {
    let dir = try ReconcileTests.workspace()
    _ = try TSApplyBinary.run(["device", "init"], in: dir)
    let failed = try TSApplyBinary.run(["apply", "--auto-approve"], in: dir, environment: ["TSAPPLY_SIM_FAULT": "fail@\(call):3002"])
    #expect(failed.status == 1, "\(failed.stderr)")
    #expect(failed.stderr.contains("The watch refused this step (3002), so running the same apply again gets the same answer: "
                                   + "see what it writes with 'tsapply plan watch.yaml' and change what the watch refuses"), "\(failed.stderr)")
    #expect(!failed.stderr.contains("again to apply it") && !failed.stderr.contains("again to finish"), "\(failed.stderr)")
    let applied = !failed.stderr.contains("  applied:      (none)")
    #expect(failed.stderr.contains("to undo what was applied.") == applied, "\(failed.stderr)")
  }

  /// `tsapply apply … | grep -m1 Backed`: the reader goes away after the first line; the apply
  /// must still finish (no SIGPIPE death part-way).
  @Test func aClosedStandardOutputNeverStopsAnApply() throws {
    let dir = try ReconcileTests.workspace()
    _ = try TSApplyBinary.run(["device", "init"], in: dir)
    let output = Pipe()
    let (process, error) = try Self.slowApply(dir, stdout: output)
    var seen = Data()
    while !String(decoding: seen, as: UTF8.self).contains("Backed up") {
      let chunk = output.fileHandleForReading.availableData
      if chunk.isEmpty { break }
      seen += chunk
    }
    try output.fileHandleForReading.close()
    let stderr = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    #expect(process.terminationReason == .exit && process.terminationStatus == 0, "\(stderr)")
    #expect(try TSApplyBinary.run(["plan", "--detailed-exitcode"], in: dir).status == 0)
  }

  /// The lock is the kernel's: a holder killed with SIGKILL leaves nothing to unlock.
  @Test func aKilledHolderLeavesNoStaleLock() throws {
    let dir = try ReconcileTests.workspace()
    _ = try TSApplyBinary.run(["device", "init"], in: dir)
    let (process, _) = try Self.slowApply(dir)
    Thread.sleep(forTimeInterval: 1.5)
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
    let again = try TSApplyBinary.run(["apply", "--auto-approve"], in: dir)
    #expect(again.status == 0, "\(again.stderr)")
    #expect(!again.stderr.contains("locked"))
  }
}

@Suite struct SavedPlanPortabilityTests {
  /// A plan made in one checkout applies in another (a CI job handing its plan to the next):
  /// the saved plan names its manifest relative to itself and holds no absolute checkout path.
  @Test func aSavedPlanTravelsBetweenCheckouts() throws {
    let first = try ReconcileTests.workspace()
    let watch = try TSApplyBinary.temporaryDirectory().appendingPathComponent("watch.json").path
    _ = try TSApplyBinary.run(["device", "init", "--device", "sim:" + watch], in: first)
    let plan = try TSApplyBinary.run(["plan", "-out", "changes.tfplan"], in: first,
                                     environment: ["TSAPPLY_DEVICE": "sim:" + watch])
    #expect(plan.status == 0, "\(plan.stderr)")
    let saved = try String(contentsOf: first.appendingPathComponent("changes.tfplan"), encoding: .utf8)
    #expect(!saved.contains(first.path) && !saved.contains(first.resolvingSymlinksInPath().path))
    #expect(saved.contains("\"manifest_path\" : \"watch.yaml\""))
    let second = try TSApplyBinary.temporaryDirectory()
    for name in ["watch.yaml", "changes.tfplan"] {
      try FileManager.default.copyItem(at: first.appendingPathComponent(name), to: second.appendingPathComponent(name))
    }
    try FileManager.default.removeItem(at: first)
    let apply = try TSApplyBinary.run(["apply", "changes.tfplan"], in: second, environment: ["TSAPPLY_DEVICE": "sim:" + watch])
    #expect(apply.status == 0, "\(apply.stderr)")
    #expect(apply.stdout.contains("Apply complete!"))
  }

  @Test(arguments: ["watch.yaml", "notes.txt"])
  func planOutNeverReplacesAFileThatIsNotASavedPlan(_ target: String) throws {
    let dir = try ReconcileTests.workspace()
    let path = dir.appendingPathComponent(target)
    if !FileManager.default.fileExists(atPath: path.path) { try "keep me\n".write(to: path, atomically: true, encoding: .utf8) }
    let before = try Data(contentsOf: path)
    let plan = try TSApplyBinary.run(["plan", "-out", target], in: dir)
    #expect(plan.status == 1)
    #expect(plan.stderr.contains("save the plan to a new file such as changes.tfplan"), "\(plan.stderr)")
    #expect(try Data(contentsOf: path) == before)
  }

  @Test func theDefaultWatchIsAnnouncedOnceWhenCreated() throws {
    let dir = try ReconcileTests.workspace()
    let first = try TSApplyBinary.run(["plan"], in: dir)
    #expect(first.stderr == "Created the default simulated watch (profile default) at \(dir.resolvingSymlinksInPath().path)/.tsapply/device.json on first use.\n")
    #expect(first.stdout.hasPrefix("tsapply compared watch.yaml with the watch sim:\(dir.resolvingSymlinksInPath().path)/.tsapply/device.json (profile default).\n"))
    let second = try TSApplyBinary.run(["plan"], in: dir)
    #expect(second.stderr.isEmpty)
  }

  /// The default watch applied to, its file moved away: every command that opens it — `plan`,
  /// `apply`, `drift`, and `device show`, `listen`, `simulate` — says it is out of reach, exits
  /// non-zero, and makes no blank watch in its place (fresh-eyes findings: `plan` and `device
  /// show` made one, which `drift` then reported as the wearer's changes and a monitor healed).
  @Test func theDefaultWatchAppliedToAndGoneIsNeverMadeAnew() throws {
    let dir = try ReconcileTests.workspace()
    #expect(try TSApplyBinary.run(["apply", "--auto-approve"], in: dir).status == 0)
    let path = dir.resolvingSymlinksInPath().path + "/.tsapply/device.json"
    #expect(rename(path, path + ".away") == 0)
    for command in [["plan"], ["apply", "--auto-approve"], ["drift"], ["device", "show"], ["device", "listen", "--timeout", "1"],
                    ["device", "simulate", "sos"]] {
      let run = try TSApplyBinary.run(command, in: dir)
      #expect(run.status != 0, "\(command): \(run.stdout)")
      #expect(run.stderr.contains("tsapply has applied to this watch before, so it is out of reach, not new"), "\(command): \(run.stderr)")
      #expect(!run.stderr.contains("nothing has been planned or applied") && !run.stderr.contains("Created the default"), "\(command): \(run.stderr)")
      #expect(!FileManager.default.fileExists(atPath: path), "\(command) made a blank watch")
    }
  }
}
