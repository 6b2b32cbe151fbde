import Testing
@testable import TSApplyCLI

/// The commit `git archive` writes into BuildInfo is recognised; anything else (the placeholder
/// of a work tree, a short or odd hash) is no commit.
@Suite struct BuildInfoTests {
  static let cases: [(text: String, commit: String?)] = [
    ("4b5d239a8f0c1e2d3b4a5968778695a4b3c2d1e0", "4b5d239a8f0c1e2d3b4a5968778695a4b3c2d1e0"),
    ("$" + "Format:%H$", nil),
    ("4b5d239", nil),
    ("4B5D239A8F0C1E2D3B4A5968778695A4B3C2D1E0", nil),
    ("4b5d239a8f0c1e2d3b4a5968778695a4b3c2d1e0\n", nil),
    ("", nil),
  ]

  @Test(arguments: cases)
  func recognisesFullHashesOnly(_ text: String, _ commit: String?) {
    #expect(BuildInfo.commit(text) == commit)
  }

  @Test func versionLineNamesTheCommitOrSaysUnknown() {
    #expect(BuildInfo.versionLine(version: "1.2.3", commit: "4b5d239a8f0c1e2d3b4a5968778695a4b3c2d1e0")
            == "tsapply 1.2.3 (commit 4b5d239a8f0c1e2d3b4a5968778695a4b3c2d1e0)\n")
    #expect(BuildInfo.versionLine(version: "1.2.3", commit: nil) == "tsapply 1.2.3 (commit unknown: built from a work tree)\n")
  }
}
