import Foundation
import Testing
import TSTestSupport

/// examples/git/pre-commit run in a throwaway git repository with the built binary: invalid
/// staged manifests are refused, the staged content is what is checked, other YAML is ignored.
@Suite struct GitHookTests {
  static let hook = TSApplyBinary.packageRoot.appendingPathComponent("examples/git/pre-commit")

  struct Repository {
    let url: URL

    init() throws {
      url = try TSApplyBinary.temporaryDirectory()
      try run("git", "init", "-q")
    }

    @discardableResult
    func run(_ arguments: String...) throws -> (status: Int32, stderr: String) {
      let result = try TSApplyBinary.runProgram(URL(fileURLWithPath: "/usr/bin/env"), arguments, in: url,
                                                environment: ["TSAPPLY": TSApplyBinary.url.path])
      return (result.status, result.stderr)
    }

    func write(_ name: String, _ text: String) throws {
      try text.write(to: url.appendingPathComponent(name), atomically: true, encoding: .utf8)
    }

    func hook() throws -> (status: Int32, stderr: String) { try run("bash", GitHookTests.hook.path) }

    /// Writes and stages `files` (name → content) in a fresh repository, runs the hook, and
    /// removes the repository.
    static func hook(staging files: KeyValuePairs<String, String>) throws -> (status: Int32, stderr: String) {
      let repo = try Repository()
      defer { try? FileManager.default.removeItem(at: repo.url) }
      for (name, text) in files {
        try repo.write(name, text)
        try repo.run("git", "add", "--", name)
      }
      return try repo.hook()
    }
  }

  @Test func hookIsExecutable() {
    #expect(FileManager.default.isExecutableFile(atPath: Self.hook.path))
  }

  @Test func refusesAnInvalidStagedManifest() throws {
    let result = try Repository.hook(staging: ["watch.yaml": "contacts:\n"])
    #expect(result.status == 1)
    #expect(result.stderr.contains("watch.yaml:1:10: error: contacts: has no value"))
    #expect(result.stderr.contains("pre-commit: watch.yaml is not valid"))
  }

  @Test func checksTheStagedContentNotTheWorkingCopy() throws {
    let repo = try Repository()
    defer { try? FileManager.default.removeItem(at: repo.url) }
    try repo.write("watch.yaml", "contacts:\n")
    try repo.run("git", "add", "watch.yaml")
    try repo.write("watch.yaml", "contacts: []\n")
    let result = try repo.hook()
    #expect(result.status == 1)
    #expect(result.stderr.contains("pre-commit: the staged version of watch.yaml is not valid"))
  }

  @Test func leavesOtherYAMLAlone() throws {
    let repo = try Repository()
    defer { try? FileManager.default.removeItem(at: repo.url) }
    try repo.write("docker-compose.yml", "services: {}\n")
    try repo.write("notes.txt", "contacts:\n")
    try repo.run("git", "add", "docker-compose.yml", "notes.txt")
    let result = try repo.hook()
    #expect(result.status == 0)
    #expect(result.stderr == "")
  }

  @Test func validFormattedManifestPasses() throws {
    let result = try Repository.hook(staging: ["watch.yaml": "contacts: []\n"])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stderr == "")
  }

  @Test func validButUnformattedManifestIsRefusedWithTheFix() throws {
    let result = try Repository.hook(staging: ["watch.yaml": "reminders:\n  medicine:\n    at: [8:00]\n"])
    #expect(result.status != 0)
    #expect(result.stderr.contains("pre-commit: watch.yaml is not formatted; run:\n    tsapply fmt -- watch.yaml && git add -- watch.yaml\n"))
  }

  @Test func invalidManifestIsReportedOnceAndNotAsUnformatted() throws {
    let result = try Repository.hook(staging: ["watch.yaml": "contacts:\n"])
    #expect(result.status == 1)
    #expect(result.stderr.components(separatedBy: "contacts: has no value").count == 2, "\(result.stderr)")
    #expect(!result.stderr.contains("not formatted"))
  }

  @Test func manifestWithABOMAndOneKeyIsChecked() throws {
    let result = try Repository.hook(staging: ["watch.yaml": "\u{FEFF}contacts:\n"])
    #expect(result.status == 1)
    #expect(result.stderr.contains("pre-commit: watch.yaml is not valid"))
  }

  @Test func fileNameStartingWithADashIsAFileNotAnOption() throws {
    let result = try Repository.hook(staging: ["-n.yaml": "reminders:\n  medicine:\n    at: [8:00]\n"])
    #expect(result.status == 1)
    #expect(result.stderr.contains("pre-commit: -n.yaml is not formatted; run:\n    tsapply fmt -- -n.yaml && git add -- -n.yaml\n"), "\(result.stderr)")
  }

  @Test func unformattedStagedVersionGetsAQuotedCommand() throws {
    let repo = try Repository()
    defer { try? FileManager.default.removeItem(at: repo.url) }
    try repo.write("my watch.yaml", "reminders:\n  medicine:\n    at: [8:00]\n")
    try repo.run("git", "add", "my watch.yaml")
    try repo.write("my watch.yaml", "contacts: []\n")
    let result = try repo.hook()
    #expect(result.status == 1)
    #expect(result.stderr.contains("pre-commit: the staged version of my watch.yaml is not formatted; run:\n    tsapply fmt -- my\\ watch.yaml && git add -- my\\ watch.yaml\n"), "\(result.stderr)")
    #expect(result.stderr.contains("differs from the staged version"))
  }
}
