import Foundation
import Testing
import TSTestSupport

/// examples/git/github-workflow.yml: the plan step's script, run with a stand-in `tsapply` that
/// exits with each status, passes only on 0 and 2; the install steps install what README lists.
@Suite struct WorkflowTests {
  static let workflow = TSApplyBinary.packageRoot.appendingPathComponent("examples/git/github-workflow.yml")

  /// The `run: |` script of the step with `id: plan`, dedented.
  static func planScript() throws -> String {
    let lines = try String(contentsOf: workflow, encoding: .utf8).components(separatedBy: "\n")
    let id = try #require(lines.firstIndex { $0.trimmingCharacters(in: .whitespaces) == "id: plan" })
    let run = try #require(lines[id...].firstIndex { $0.trimmingCharacters(in: .whitespaces) == "run: |" })
    let indent = lines[run].prefix { $0 == " " }.count + 2
    let body = lines[(run + 1)...].prefix { $0.isEmpty || $0.prefix { $0 == " " }.count >= indent }
    return body.map { String($0.dropFirst(min(indent, $0.count))) }.joined(separator: "\n")
  }

  @Test(arguments: [(0, true), (2, true), (1, false), (64, false), (132, false), (134, false), (139, false)])
  func planStepPassesOnlyOnZeroAndTwo(_ status: Int, _ passes: Bool) throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    let script = "tsapply() { return \(status); }\n" + (try Self.planScript())
    let result = try TSApplyBinary.runProgram(URL(fileURLWithPath: "/usr/bin/env"), ["bash", "-e", "-c", script], in: directory,
                                              environment: ["GITHUB_OUTPUT": directory.appendingPathComponent("out").path, "MANIFEST": "watch.yaml"])
    #expect((result.status == 0) == passes, "exit \(status) gave \(result.status): \(result.stderr)")
    let output = try String(contentsOf: directory.appendingPathComponent("out"), encoding: .utf8)
    #expect(output == "exitcode=\(status)\n")
  }

  @Test func installStepsInstallEveryPackageTheREADMENames() throws {
    let text = try String(contentsOf: Self.workflow, encoding: .utf8)
    let installs = text.components(separatedBy: "\n").filter { $0.contains("apt-get install") }
    #expect(installs.count == 2)
    for line in installs {
      for package in ["libyaml-dev", "libssl-dev", "pkg-config"] { #expect(line.contains(package), "\(line)") }
    }
  }
}
