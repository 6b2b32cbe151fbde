import Foundation
import Testing
import TSTestSupport

/// `tsapply --version` names the version and the commit; the commit is written into the source
/// by `git archive` (export-subst), which is how `script/package` and source tarballs build.
@Suite struct VersionTests {
  /// `tsapply X.Y.Z (commit <40 hex digits>)`, or `(commit unknown: built from a work tree)`.
  static var shape: Regex<(Substring, Substring, Substring)> { #/tsapply (\d+\.\d+\.\d+) \(commit ([0-9a-f]{40}|unknown: built from a work tree)\)\n/# }

  @Test func versionNamesVersionAndCommit() throws {
    let result = try TSApplyBinary.run(["--version"])
    #expect(result.status == 0)
    #expect(result.stderr == "")
    let match = try #require(result.stdout.wholeMatch(of: Self.shape), "\(result.stdout)")
    // The tests build from a work tree, a source archive names its commit (export-subst).
    let root = TSApplyBinary.packageRoot.path
    let inWorkTree = FileManager.default.fileExists(atPath: root + "/.git")
    #expect((match.2 == "unknown: built from a work tree") == inWorkTree, "\(result.stdout)")
  }

  /// The core hands nothing to tsapply-net for --version, and both builds say the same.
  @Test func networkBuildSaysTheSame() throws {
    let core = try TSApplyBinary.run(["--version"]).stdout
    let net = try TSApplyBinary.runProgram(TSApplyBinary.url.deletingLastPathComponent().appendingPathComponent("tsapply-net"), ["--version"])
    #expect(net.stdout == core)
  }

  /// `git archive HEAD` (what script/package builds from) writes HEAD's hash into BuildInfo.swift.
  @Test(.enabled(if: FileManager.default.fileExists(atPath: TSApplyBinary.packageRoot.path + "/.git")
                 && FileManager.default.isExecutableFile(atPath: "/usr/bin/git"), "not a git work tree, or git is missing"))
  func gitArchiveWritesTheCommit() throws {
    let root = TSApplyBinary.packageRoot
    let git = URL(fileURLWithPath: "/usr/bin/git")
    let head = try TSApplyBinary.runProgram(git, ["-C", root.path, "rev-parse", "HEAD"]).stdout
      .trimmingCharacters(in: .whitespacesAndNewlines)
    #expect(head.count == 40)
    let script = "git -C \"$1\" archive --format=tar HEAD -- Sources/TSApplyCLI/BuildInfo.swift | tar -xO"
    let archived = try TSApplyBinary.runProgram(URL(fileURLWithPath: "/bin/bash"), ["-c", script, "bash", root.path])
    #expect(archived.status == 0, "\(archived.stderr)")
    #expect(archived.stdout.contains("static let archivedCommit = \"\(head)\""))
  }
}
