import Foundation
import Testing
import TSTestSupport

/// Interactive `apply --fleet`: Ctrl-C after answering 'yes' stops between device calls as it
/// does with `--auto-approve`; Ctrl-C while planning cancels without asking.
@Suite struct FleetInterruptTests {
  /// A direct fleet of `count` simulated watches, each with two contacts to write.
  static func fleet(_ count: Int) throws -> URL {
    let dir = try TSApplyBinary.temporaryDirectory().resolvingSymlinksInPath()
    var text = "watches:\n"
    for index in 1...count {
      let room = "room-\(index)"
      try FileManager.default.createDirectory(at: dir.appendingPathComponent("residents"), withIntermediateDirectories: true)
      try "contacts:\n  - {name: Daughter, phone: \"+1555011\(index)\"}\n  - {name: Son, phone: \"+1555012\(index)\"}\n"
        .write(to: dir.appendingPathComponent("residents/\(room).yaml"), atomically: true, encoding: .utf8)
      text += "  \(room): {device: \"sim:watches/\(room).json\", manifest: residents/\(room).yaml}\n"
      #expect(try TSApplyBinary.run(["device", "init", "--device", "sim:watches/\(room).json"], in: dir).status == 0)
    }
    try text.write(to: dir.appendingPathComponent("fleet.yaml"), atomically: true, encoding: .utf8)
    return dir
  }

  /// Every call takes 300 ms, so each watch's apply takes seconds: Ctrl-C lands mid-apply.
  static let slow = ["TSAPPLY_SIM_LATENCY": "300,0"]

  /// Whether the first watch's apply has backed it up (it is writing now): a backup in the
  /// state folder `state`.
  static func backedUp(_ state: URL) -> Bool {
    let watches = (try? FileManager.default.contentsOfDirectory(atPath: state.path + "/watches")) ?? []
    return watches.contains { !((try? FileManager.default.contentsOfDirectory(atPath: state.path + "/watches/\($0)/backups")) ?? []).isEmpty }
  }

  @Test func ctrlCAfterYesStopsBetweenDeviceCalls() throws {
    let dir = try Self.fleet(4)
    let state = ["TSAPPLY_STATE_DIR": dir.path + "/state"]
    let run = try TSApplyBinary.startInteractive(["apply", "--fleet", "fleet.yaml", "-parallelism", "1"], in: dir,
                                                 environment: Self.slow.merging(state) { a, _ in a })
    #expect(run.read(until: "Enter a value:").contains("Do you want to perform these actions on 4 watches?"))
    run.type("yes\n")
    _ = run.read(until: "Applying 4 watches of fleet.yaml")
    let deadline = Date().addingTimeInterval(30)
    while !Self.backedUp(dir.appendingPathComponent("state")), Date() < deadline { usleep(20_000) }
    run.running.send(SIGINT)
    let result = run.wait(limit: 30)
    #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
    #expect(result.stderr.contains("Interrupt received. Finishing the watches being changed"), "\(result.stderr)")
    // Stopped: not every watch was applied.
    let plan = try TSApplyBinary.run(["plan", "--fleet", "fleet.yaml", "--detailed-exitcode"], in: dir, environment: state)
    #expect(plan.status == 2, "\(plan.stdout)\(plan.stderr)")
  }

  @Test func ctrlCWhilePlanningCancelsWithoutAsking() throws {
    let dir = try Self.fleet(4)
    let run = try TSApplyBinary.startInteractive(["apply", "--fleet", "fleet.yaml", "-parallelism", "1"], in: dir,
                                                 environment: Self.slow)
    _ = run.read(until: "Planning 4 watches of fleet.yaml")
    run.running.send(SIGINT)
    let result = run.wait(limit: 30)
    #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
    #expect(!result.stdout.contains("Enter a value:"), "\(result.stdout)")
    #expect(result.stderr.contains("Apply cancelled while planning: no watch was touched."), "\(result.stderr)")
    let plan = try TSApplyBinary.run(["plan", "--fleet", "fleet.yaml", "--detailed-exitcode"], in: dir)
    #expect(plan.status == 2, "\(plan.stdout)")
  }
}
