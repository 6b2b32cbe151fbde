import Foundation
import Testing
import TSApplyCLI
import TSTestSupport

/// The confirmation question of `apply` and `restore`, answered through an in-process terminal.
@Suite struct ConfirmationTests {
  struct Answer: Sendable, CustomTestStringConvertible {
    let typed: String?
    let applies: Bool
    var testDescription: String { typed.map { "answer \"\($0)\"" } ?? "end of input" }
  }

  static let answers: [Answer] = [
    Answer(typed: "yes", applies: true),
    Answer(typed: "  yes ", applies: true),
    Answer(typed: "y", applies: false),
    Answer(typed: "YES", applies: false),
    Answer(typed: "no", applies: false),
    Answer(typed: "", applies: false),
    Answer(typed: nil, applies: false),
  ]

  @Test(arguments: answers)
  func onlyYesApproves(_ answer: Answer) async throws {
    let dir = try TSApplyBinary.temporaryDirectory()
    let manifest = TSApplyBinary.packageRoot.appendingPathComponent("examples/minimal.yaml").path
    let out = BufferOutput(), err = BufferOutput()
    let typed = answer.typed
    let context = CommandContext(stdout: out, stderr: err, readLine: { typed }, stdoutIsTerminal: false,
                                 stdinIsTerminal: true, environment: ["TSAPPLY_STATE_DIR": dir.path + "/state"],
                                 currentDirectory: dir.path)
    let status = await CLI.run(["apply", manifest], context: context)
    #expect(out.text.contains("Only 'yes' will be accepted to approve."))
    let watches = dir.appendingPathComponent("state/watches").path
    let backups = (try? FileManager.default.contentsOfDirectory(atPath: watches))?.flatMap { folder in
      (try? FileManager.default.contentsOfDirectory(atPath: watches + "/" + folder + "/backups")) ?? []
    } ?? []
    let created = "Created the default simulated watch (profile default) at \(dir.path)/.tsapply/device.json on first use.\n"
    if answer.applies {
      #expect(status == .success, "\(err.text)")
      #expect(out.text.contains("Apply complete!"))
      #expect(backups.count == 1)
      #expect(err.text == created)
    } else {
      #expect(status == .failure)
      #expect(err.text == created + "Error: Apply cancelled: the watch was not touched.\n")
      #expect(backups.isEmpty)
    }
  }
}

/// `drift --adopt` asks as `apply` does: only 'yes' rewrites the manifest.
@Suite struct AdoptConfirmationTests {
  @Test(arguments: ConfirmationTests.answers)
  func onlyYesWritesTheManifest(_ answer: ConfirmationTests.Answer) async throws {
    let dir = try TSApplyBinary.temporaryDirectory()
    let manifest = dir.appendingPathComponent("watch.yaml")
    try FileManager.default.copyItem(at: TSApplyBinary.packageRoot.appendingPathComponent("examples/family.yaml"), to: manifest)
    let original = try String(contentsOf: manifest, encoding: .utf8)
    let environment = ["TSAPPLY_STATE_DIR": dir.path + "/state"]
    func run(_ arguments: [String], typed: String? = nil) async -> (TSApplyCLI.ExitStatus, String, String) {
      let out = BufferOutput(), err = BufferOutput()
      let context = CommandContext(stdout: out, stderr: err, readLine: { typed }, stdoutIsTerminal: false,
                                   stdinIsTerminal: true, environment: environment, currentDirectory: dir.path)
      return (await CLI.run(arguments, context: context), out.text, err.text)
    }
    #expect(await run(["apply", "--auto-approve"]).0 == .success)
    #expect(await run(["device", "simulate", "emergency-set", "Anna (daughter)", "+447700900111"]).0 == .success)
    let (status, out, err) = await run(["drift", "--adopt"], typed: answer.typed)
    let old = "    - {name: Anna (daughter), phone: \"+44 7700 900123\"}", new = "    - {name: Anna (daughter), phone: \"+447700900111\"}"
    #expect(out.contains("-\(old)\n+\(new)\n"), "\(out)\(err)")
    #expect(out.contains("Do you want to write these changes into watch.yaml?\n  Only 'yes' will be accepted to approve."))
    let text = try String(contentsOf: manifest, encoding: .utf8)
    if answer.applies {
      #expect(status == .success, "\(err)")
      #expect(text == original.replacingOccurrences(of: old, with: new))
      #expect(await run(["plan", "--detailed-exitcode"]).0 == .success)
    } else {
      #expect(status == .failure)
      #expect(err.contains("Error: adoption declined: watch.yaml was not changed"), "\(err)")
      #expect(text == original)
    }
  }
}
