import Foundation
import Testing
import TSManifest
import TSTestSupport

/// examples/git/github-workflow.yml: its structure (self-hosted runner, a persistent watch,
/// plans and applies never in one concurrency group, the apply applying the reviewed plan), and
/// its step scripts run for real with the built tsapply: a plan kept in one checkout applies in
/// another, and a stale one is refused.
@Suite struct WorkflowTests {
  static let workflow = TSApplyBinary.packageRoot.appendingPathComponent("examples/git/github-workflow.yml")

  static func root(_ workflow: URL = workflow) throws -> YAMLNode {
    let bytes = Array(try Data(contentsOf: workflow))
    let read = YAMLReader.read(bytes: bytes, file: workflow.lastPathComponent)
    return try #require(read.root, "\(read.diagnostics)")
  }

  /// The value at `path` (mapping keys; a number indexes a sequence).
  static func node(_ node: YAMLNode, _ path: String...) -> YAMLNode? {
    var current: YAMLNode? = node
    for key in path {
      switch current?.content {
      case .mapping(let entries)?: current = entries.first { $0.key.scalar?.value == key }?.value
      case .sequence(let items)?: current = Int(key).flatMap { items.indices.contains($0) ? items[$0] : nil }
      default: return nil
      }
    }
    return current
  }

  static func texts(_ node: YAMLNode?) -> [String] {
    switch node?.content {
    case .scalar(let scalar)?: [scalar.value]
    case .sequence(let items)?: items.compactMap(\.scalar?.value)
    default: []
    }
  }

  /// The `run` script of the step with `id`.
  static func script(_ id: String, in workflow: URL = workflow) throws -> String {
    let jobs = try #require(node(try root(workflow), "jobs"))
    guard case .mapping(let entries) = jobs.content else { throw ScriptMissing(id: id) }
    for job in entries {
      guard case .sequence(let steps)? = node(job.value, "steps")?.content else { continue }
      if let step = steps.first(where: { node($0, "id")?.scalar?.value == id }), let run = node(step, "run")?.scalar {
        return run.value
      }
    }
    throw ScriptMissing(id: id)
  }

  struct ScriptMissing: Error { var id: String }

  @Test func runsOnTheWatchesRunnerWithSeparateConcurrencyForPlansAndApplies() throws {
    let root = try Self.root()
    #expect(Self.node(root, "concurrency") == nil, "one workflow-wide group lets a queued plan cancel a pending apply")
    #expect(Self.texts(Self.node(root, "env", "TSAPPLY_DEVICE")) == ["${{ vars.TSAPPLY_DEVICE }}"])
    for job in ["plan", "apply"] {
      #expect(Self.texts(Self.node(root, "jobs", job, "runs-on")).contains("self-hosted"), "\(job)")
    }
    #expect(Self.texts(Self.node(root, "jobs", "plan", "concurrency", "cancel-in-progress")) == ["true"])
    #expect(Self.texts(Self.node(root, "jobs", "plan", "concurrency", "group")).first?.contains("pull_request.number") == true)
    #expect(Self.node(root, "jobs", "apply", "concurrency") == nil, "a pending apply must never be cancelled")
    let apply = try Self.script("apply")
    #expect(apply.contains("tsapply apply -lock-timeout=15m --redact --no-color changes.tfplan"))
    #expect(!apply.contains("--auto-approve"), "the apply must apply the reviewed plan, not the manifest again")
  }

  @Test(arguments: [(0, true), (2, true), (1, false), (64, false), (132, false), (134, false), (139, false)])
  func planStepPassesOnlyOnZeroAndTwo(_ status: Int, _ passes: Bool) throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    let script = "tsapply() { return \(status); }\n" + (try Self.script("plan"))
    let result = try TSApplyBinary.runProgram(URL(fileURLWithPath: "/usr/bin/env"), ["bash", "-e", "-c", script], in: directory,
                                              environment: ["GITHUB_OUTPUT": directory.appendingPathComponent("out").path, "MANIFEST": "watch.yaml"])
    #expect((result.status == 0) == passes, "exit \(status) gave \(result.status): \(result.stderr)")
    let output = try String(contentsOf: directory.appendingPathComponent("out"), encoding: .utf8)
    #expect(output == "exitcode=\(status)\n")
  }

  @Test func installStepsUseTheRepositorysSetUpScripts() throws {
    let text = try String(contentsOf: Self.workflow, encoding: .utf8)
    #expect(text.components(separatedBy: "\n").filter { $0.contains("tsapply-src/script/tsapply --version") }.count == 2)
    #expect(!text.contains("apt-get install"), "the package list lives in script/bootstrap only")
  }

  /// The pull-request job's plan and keep steps in one checkout, the merge job's apply step in
  /// another: the reviewed plan travels through the runner's plan folder and applies; a plan
  /// made before the watch changed is refused, nothing written.
  @Test(arguments: [false, true])
  func theReviewedPlanIsAppliedInTheMergeJob(_ watchChangesMeanwhile: Bool) throws {
    let runner = try TSApplyBinary.temporaryDirectory()
    let watch = runner.appendingPathComponent("watch.json").path
    _ = try TSApplyBinary.run(["device", "init", "--device", "sim:" + watch], in: runner)
    let environment = [
      "TSAPPLY_DEVICE": "sim:" + watch, "TSAPPLY_PLANS": runner.appendingPathComponent("plans").path,
      "MANIFEST": "watch.yaml", "GITHUB_OUTPUT": runner.appendingPathComponent("output").path,
      "GITHUB_STEP_SUMMARY": runner.appendingPathComponent("summary").path,
      "PATH": TSApplyBinary.url.deletingLastPathComponent().path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
    ]
    func step(_ id: String, in checkout: URL) throws -> ProcessResult {
      try TSApplyBinary.runProgram(URL(fileURLWithPath: "/usr/bin/env"), ["bash", "-e", "-c", try Self.script(id)],
                                   in: checkout, environment: environment)
    }
    let pullRequest = try ReconcileTests.workspace()
    #expect(try step("plan", in: pullRequest).status == 0)
    let kept = try step("keep", in: pullRequest)
    #expect(kept.status == 0, "\(kept.stderr)")
    if watchChangesMeanwhile {
      _ = try TSApplyBinary.run(["device", "simulate", "contact-add", "Zed", "+15550199", "--device", "sim:" + watch], in: runner)
    }
    let before = try Data(contentsOf: URL(fileURLWithPath: watch))
    let merged = try ReconcileTests.workspace()
    let apply = try step("apply", in: merged)
    if watchChangesMeanwhile {
      #expect(apply.status == 1)
      #expect(apply.stderr.contains("the saved plan is stale: the watch changed since the plan was made"), "\(apply.stderr)")
      #expect(try Data(contentsOf: URL(fileURLWithPath: watch)) == before)
    } else {
      #expect(apply.status == 0, "\(apply.stderr)")
      let plan = try TSApplyBinary.run(["plan", "--detailed-exitcode"], in: merged, environment: ["TSAPPLY_DEVICE": "sim:" + watch])
      #expect(plan.status == 0, "\(plan.stdout)")
      // The plan was used up; the next merge without a pull request finds none.
      let again = try step("apply", in: merged)
      #expect(again.status == 1 && again.stderr.contains("No reviewed plan for watch.yaml"))
    }
  }
}
