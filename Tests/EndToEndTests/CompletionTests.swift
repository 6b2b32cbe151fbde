import Foundation
import Testing
import TSTestSupport

/// `tsapply completion SHELL` and `tsapply schema` run as the built binary: golden scripts, and
/// the bash script sourced into a real bash and asked to complete.
@Suite struct CompletionTests {
  @Test(arguments: [("bash", "completion.bash"), ("zsh", "completion.zsh"), ("fish", "completion.fish")])
  func scriptMatchesGolden(_ shell: String, _ golden: String) throws {
    let result = try TSApplyBinary.run(["completion", shell])
    #expect(result.status == 0)
    #expect(result.stderr == "")
    expectGolden(result.stdout, golden)
  }

  @Test func schemaMatchesGolden() throws {
    let result = try TSApplyBinary.run(["schema"])
    #expect(result.status == 0)
    expectGolden(result.stdout, "schema.json")
  }

  @Test func unknownShellIsAUsageError() throws {
    let result = try TSApplyBinary.run(["completion", "zhs"])
    #expect(result.status == 64)
    #expect(result.stderr.contains("unknown shell 'zhs'; expected one of: bash, zsh, fish; did you mean 'zsh'?"))
  }

  static let bashCases: [(words: [String], expected: [String])] = [
    (["tsapply", "pl"], ["plan"]),
    (["tsapply", ""], ["agent", "apply", "bridge", "completion", "device", "drift", "export", "fmt", "help", "history", "monitor", "plan", "restore", "schema", "show", "status", "validate"]),
    (["tsapply", "device", ""], ["init", "listen", "profiles", "show", "simulate"]),
    (["tsapply", "device", "init", "--profile", "f"], ["fit", "fit-basic", "fw"]),
    (["tsapply", "device", "init", "--profile", ""], ["default", "fit", "fit-basic", "fw", "npk"]),
    (["tsapply", "validate", ""], ["a.yaml", "b.yml", "sub"]),
    (["tsapply", "plan", "--json", "b"], ["b.yml"]),
    (["tsapply", "plan", "--de"], ["--detailed-exitcode", "--device"]),
    (["tsapply", "plan", "--out", "c"], ["c.txt"]),
    (["tsapply", "show", "--j"], ["--json"]),
    (["tsapply", "device", "show", "--"], ["--device", "--help", "--json", "--redact"]),
    (["tsapply", "device", "simulate", "contact-"], ["contact-add", "contact-remove"]),
    (["tsapply", "completion", ""], ["bash", "fish", "zsh"]),
    (["tsapply", "plan", "--device", ""], []),
  ]

  /// Sources the generated script into bash and calls its completion function the way bash
  /// does (COMP_WORDS, COMP_CWORD), in a directory holding a.yaml, b.yml, c.txt and sub/.
  @Test(arguments: bashCases)
  func bashCompletes(_ words: [String], _ expected: [String]) throws {
    let directory = try Self.completionDirectory("bash", script: "tsapply.bash")
    defer { try? FileManager.default.removeItem(at: directory) }
    let script = "source ./tsapply.bash; COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); _tsapply; printf '%s\\n' \"${COMPREPLY[@]}\""
    let result = try TSApplyBinary.runProgram(URL(fileURLWithPath: "/bin/bash"), ["-c", script, "bash"] + words, in: directory)
    #expect(result.status == 0)
    let lines = result.stdout.split(separator: "\n").map(String.init).filter { !$0.isEmpty }
    #expect(lines.sorted() == expected)
  }

  /// A temporary directory holding a.yaml, b.yml, c.txt, sub/ and the `shell` script as `name`.
  static func completionDirectory(_ shell: String, script name: String) throws -> URL {
    let directory = try TSApplyBinary.temporaryDirectory()
    for file in ["a.yaml", "b.yml", "c.txt"] {
      _ = FileManager.default.createFile(atPath: directory.appendingPathComponent(file).path, contents: Data())
    }
    try FileManager.default.createDirectory(at: directory.appendingPathComponent("sub"), withIntermediateDirectories: false)
    let script = try TSApplyBinary.run(["completion", shell]).stdout
    try script.write(to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8)
    return directory
  }

  static let fish = "/usr/bin/fish"
  static let zsh = "/usr/bin/zsh"

  /// Runs `shell arguments` in `directory`; (status, standard output).
  static func shell(_ shell: String, _ arguments: [String], in directory: URL) throws -> (Int32, String) {
    let result = try TSApplyBinary.runProgram(URL(fileURLWithPath: shell), arguments, in: directory)
    return (result.status, result.stdout)
  }

  /// zsh parses the generated function (zsh is not installed everywhere: CI may skip this).
  @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: zsh)))
  func zshScriptParses() throws {
    let directory = try Self.completionDirectory("zsh", script: "_tsapply")
    defer { try? FileManager.default.removeItem(at: directory) }
    #expect(try Self.shell(Self.zsh, ["-n", "_tsapply"], in: directory).0 == 0)
  }

  /// fish loads the generated script and completes with it (fish may be missing: CI may skip this).
  @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: fish)),
        arguments: [("tsapply pl", ["plan"]), ("tsapply device init --profile f", ["fit", "fit-basic", "fw"]),
                    ("tsapply validate ", ["a.yaml", "b.yml", "sub/"]), ("tsapply device show --j", ["--json"])])
  func fishCompletes(_ line: String, _ expected: [String]) throws {
    let directory = try Self.completionDirectory("fish", script: "tsapply.fish")
    defer { try? FileManager.default.removeItem(at: directory) }
    let (status, output) = try Self.shell(Self.fish, ["-c", "source tsapply.fish; complete -C '\(line)'"], in: directory)
    #expect(status == 0)
    let words = output.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") }
    #expect(words.sorted() == expected)
  }
}
