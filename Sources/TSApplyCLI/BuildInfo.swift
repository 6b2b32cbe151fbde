/// What `tsapply --version` says about the build: the version and the git commit it was built from.
///
/// The commit comes from `git archive`, which fills in the placeholder of `archivedCommit` in the
/// archive it writes (the `export-subst` attribute in `.gitattributes`). `script/package` builds
/// from such an archive of HEAD, and so does a source tarball of a tag (the Homebrew formula), so
/// their binaries name their commit with no generated file, no compiler flag and no cost at
/// start-up. A build from a work tree (`swift build`, `script/tsapply`) has no commit to name:
/// the work tree may differ from every commit, so it says `commit unknown` rather than guess.
public enum BuildInfo {
  /// The tool's version, the first word after `tsapply` in `tsapply --version`.
  public static let version = "0.1.0"

  /// The commit as `git archive` wrote it into this file, or the placeholder in a work tree.
  static let archivedCommit = "$Format:%H$"

  /// The full hash (40 hexadecimal digits) of the commit this binary was built from, or `nil`
  /// for a build from a work tree.
  public static var commit: String? { commit(archivedCommit) }

  /// `text` when it is a full commit hash (40 lowercase hexadecimal digits), else `nil`.
  static func commit(_ text: String) -> String? {
    text.utf8.count == 40 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) } ? text : nil
  }

  /// The line `tsapply --version` prints: `tsapply 0.1.0 (commit 4b5d…)`, or
  /// `tsapply 0.1.0 (commit unknown: built from a work tree)`.
  public static func versionLine(version: String = version, commit: String? = commit) -> String {
    "tsapply \(version) (commit \(commit ?? "unknown: built from a work tree"))\n"
  }
}
