import Foundation
import Testing
import TSTestSupport

/// examples/git/fleet-workflow.yml: its structure, and its plan, keep and apply steps run for
/// real with the built tsapply in two git checkouts of one fleet repository: the reviewed plan
/// applies in the merge job; a watch changed since the review is refused (not touched) while
/// the others are applied.
@Suite struct FleetWorkflowTests {
  static let workflow = TSApplyBinary.packageRoot.appendingPathComponent("examples/git/fleet-workflow.yml")

  @Test func appliesTheReviewedPlanAndNeverTheManifestsAgain() throws {
    let root = try WorkflowTests.root(Self.workflow)
    #expect(WorkflowTests.node(root, "concurrency") == nil)
    #expect(WorkflowTests.node(root, "jobs", "apply", "concurrency") == nil, "a pending apply must never be cancelled")
    #expect(WorkflowTests.texts(WorkflowTests.node(root, "jobs", "plan", "permissions", "pull-requests")) == ["write"])
    let plan = try WorkflowTests.script("plan", in: Self.workflow)
    #expect(plan.contains("tsapply plan --fleet \"$FLEET\" --detailed-exitcode --redact --markdown -out fleet.tfplan > plan.md"))
    let apply = try WorkflowTests.script("apply", in: Self.workflow)
    #expect(apply.contains("tsapply apply -lock-timeout=15m --redact --no-color fleet.tfplan"))
    #expect(!apply.contains("--auto-approve") && !apply.contains("--fleet"), "the apply must apply the reviewed plan")
  }

  /// A checkout (a git repository) of the fleet: two residents under ward defaults, their
  /// watches (absolute `sim:` paths) on the runner.
  static func checkout(runner: URL, interval: String) throws -> URL {
    let directory = try TSApplyBinary.temporaryDirectory()
    func write(_ name: String, _ text: String) throws {
      let url = directory.appendingPathComponent(name)
      try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
      try text.write(to: url, atomically: true, encoding: .utf8)
    }
    try write("wards/ward-a.yaml", "reminders:\n  drinking: {enabled: true, repeat: everyday, period: {start: \"08:00\", end: \"20:00\", every: \(interval)}}\n")
    try write("residents/room-1.yaml", "contacts:\n  - {name: Daughter, phone: \"+15550111\"}\n")
    try write("fleet.yaml", """
      defaults: wards/ward-a.yaml
      watches:
        room-1: {device: "sim:\(runner.path)/room-1.json", manifest: residents/room-1.yaml}
        room-2: {device: "sim:\(runner.path)/room-2.json"}

      """)
    for command in [["init", "-q"], ["add", "."], ["-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "fleet"]] {
      #expect(try TSApplyBinary.runProgram(URL(fileURLWithPath: "/usr/bin/git"), command, in: directory).status == 0)
    }
    return directory
  }

  @Test(arguments: [false, true])
  func theReviewedPlanIsAppliedPerWatchInTheMergeJob(_ room2ChangesMeanwhile: Bool) throws {
    let runner = try TSApplyBinary.temporaryDirectory()
    for room in ["room-1", "room-2"] {
      _ = try TSApplyBinary.run(["device", "init", "--device", "sim:\(runner.path)/\(room).json"], in: runner)
    }
    let environment = [
      "TSAPPLY_PLANS": runner.appendingPathComponent("plans").path, "FLEET": "fleet.yaml",
      "TSAPPLY_STATE_DIR": runner.appendingPathComponent("state").path,
      "GITHUB_OUTPUT": runner.appendingPathComponent("output").path,
      "GITHUB_STEP_SUMMARY": runner.appendingPathComponent("summary").path,
      "PATH": TSApplyBinary.url.deletingLastPathComponent().path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
    ]
    func step(_ id: String, in checkout: URL) throws -> ProcessResult {
      try TSApplyBinary.runProgram(URL(fileURLWithPath: "/usr/bin/env"), ["bash", "-e", "-c", try WorkflowTests.script(id, in: Self.workflow)],
                                   in: checkout, environment: environment)
    }
    let pullRequest = try Self.checkout(runner: runner, interval: "3h")
    let plan = try step("plan", in: pullRequest)
    #expect(plan.status == 0, "\(plan.stderr)")
    #expect(plan.stdout.hasPrefix("### tsapply plan --fleet fleet.yaml: 2 watches: 2 with changes."), "\(plan.stdout)")
    #expect(!plan.stdout.contains("5550111"), "--redact: \(plan.stdout)")
    #expect(try String(contentsOf: runner.appendingPathComponent("summary"), encoding: .utf8).hasPrefix("### tsapply plan --fleet"))
    #expect(try step("keep", in: pullRequest).status == 0)
    if room2ChangesMeanwhile {
      _ = try TSApplyBinary.run(["device", "simulate", "contact-add", "Zed", "+15550199", "--device", "sim:\(runner.path)/room-2.json"],
                                in: runner)
    }
    let room2 = try Data(contentsOf: runner.appendingPathComponent("room-2.json"))
    let merged = try Self.checkout(runner: runner, interval: "3h")
    let apply = try step("apply", in: merged)
    let check = try TSApplyBinary.run(["plan", "--fleet", "fleet.yaml", "--detailed-exitcode", "--watch", "room-1"], in: merged,
                                      environment: ["TSAPPLY_STATE_DIR": environment["TSAPPLY_STATE_DIR"]!])
    #expect(check.status == 0, "room-1 is applied either way: \(check.stdout)")
    if room2ChangesMeanwhile {
      #expect(apply.status == 1)
      #expect(apply.stdout.contains("the saved plan is stale: the watch changed since the plan was made"), "\(apply.stdout)")
      #expect(apply.stderr.contains("1 of 2 watches refused: room-2 (its part of the saved plan no longer applies, so nothing was written to it"), "\(apply.stderr)")
      #expect(apply.stdout.contains("2 watches: 1 applied, 1 refused."), "\(apply.stdout)")
      #expect(try Data(contentsOf: runner.appendingPathComponent("room-2.json")) == room2, "room-2 was touched")
    } else {
      #expect(apply.status == 0, "\(apply.stdout)\(apply.stderr)")
      let again = try step("apply", in: merged)
      #expect(again.status == 1 && again.stderr.contains("No reviewed plan for these fleet files"), "\(again.stderr)")
    }
  }
}
