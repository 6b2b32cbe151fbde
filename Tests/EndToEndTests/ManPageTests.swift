import Foundation
import Testing
import TSTestSupport

/// The man pages `tsapply man-pages DIR` writes (and `script/package` installs) against the help
/// the built binary prints: one page per command the help lists, and every line of a command's
/// help in its rendered page, so the two never disagree.
@Suite struct ManPageTests {
  static let groff = "/usr/bin/groff"

  /// Every command path the help lists: `[]` for `tsapply` itself, then each command of
  /// `tsapply --help` and, recursively, the SUBCOMMANDS of each `tsapply help PATH`.
  static func commandPaths() throws -> [[String]] {
    var paths: [[String]] = [[]]
    var queue = try rows(after: "COMMANDS:", in: TSApplyBinary.run(["--help"]).stdout).map { [$0] }
    while !queue.isEmpty {
      let path = queue.removeFirst()
      paths.append(path)
      let help = try TSApplyBinary.run(["help"] + path)
      #expect(help.status == 0, "tsapply help \(path.joined(separator: " "))")
      queue += rows(after: "SUBCOMMANDS:", in: help.stdout).map { path + [$0] }
    }
    return paths
  }

  /// The first words of the indented rows under `heading` up to the next blank line.
  static func rows(after heading: String, in text: String) -> [String] {
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    guard let start = lines.firstIndex(where: { $0 == heading }) else { return [] }
    return lines[(start + 1)...].prefix { !$0.isEmpty }.compactMap { $0.split(separator: " ").first.map(String.init) }
  }

  /// Whitespace runs (line breaks, indentation, the padding of option rows) as one space.
  static func normalized(_ text: some StringProtocol) -> String {
    text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
  }

  /// The lines of help text a page must hold: every non-blank line, without the section labels
  /// (`OVERVIEW:`, `USAGE:`) and the section headings.
  static func helpLines(_ help: String) -> [String] {
    help.split(separator: "\n").compactMap { line in
      var text = normalized(line)
      if ["OPTIONS:", "SUBCOMMANDS:", "COMMANDS:", ""].contains(text) { return nil }
      for label in ["OVERVIEW: ", "USAGE: "] where text.hasPrefix(label) { text.removeFirst(label.count) }
      return text
    }
  }

  @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: groff), "groff is not installed (script/bootstrap installs groff-base)"))
  func everyCommandsPageHoldsItsHelp() throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let written = try TSApplyBinary.run(["man-pages", directory.path])
    #expect(written.status == 0, "\(written.stderr)")

    let paths = try Self.commandPaths()
    #expect(paths.count > 20)
    let expected = Set(paths.map { (["tsapply"] + $0).joined(separator: "-") + ".1" })
    let files = Set(try FileManager.default.contentsOfDirectory(atPath: directory.path))
    #expect(files == expected, "pages without a command: \(files.subtracting(expected).sorted()), commands without a page: \(expected.subtracting(files).sorted())")

    for path in paths {
      let page = directory.appendingPathComponent((["tsapply"] + path).joined(separator: "-") + ".1")
      guard FileManager.default.fileExists(atPath: page.path) else { continue }
      let rendered = try TSApplyBinary.runProgram(URL(fileURLWithPath: Self.groff), ["-k", "-man", "-Tutf8", "-P-cbou", page.path],
                                                  environment: ["LC_ALL": "C.UTF-8"])
      #expect(rendered.status == 0 && rendered.stderr.isEmpty, "groff \(page.lastPathComponent): \(rendered.stderr)")
      let text = Self.normalized(rendered.stdout)
      let help = try TSApplyBinary.run(path.isEmpty ? ["--help"] : ["help"] + path).stdout
      let lines = Self.helpLines(help)
      #expect(lines.count >= 3)
      for line in lines {
        #expect(text.contains(line), "\(page.lastPathComponent) lacks the help line: \(line)")
      }
    }
  }

  @Test func manPagesIsHiddenFromHelpAndCompletion() throws {
    #expect(try !TSApplyBinary.run(["--help"]).stdout.contains("man-pages"))
    for shell in ["bash", "zsh", "fish"] {
      #expect(try !TSApplyBinary.run(["completion", shell]).stdout.contains("man-pages"), "\(shell)")
    }
    let usage = try TSApplyBinary.run(["man-pages"])
    #expect(usage.status == 64)
    #expect(usage.stderr.contains("expected one directory"))
  }
}
