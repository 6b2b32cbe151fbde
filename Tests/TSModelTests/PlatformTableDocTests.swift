import Foundation
import Testing
import TSModel
import TSTestSupport

/// docs/platforms.md shows the platform table; this keeps the page in step with the code.
@Suite struct PlatformTableDocTests {
  @Test func docsShowTheTableTheCodeHas() throws {
    let page = try String(contentsOf: TSApplyBinary.packageRoot.appendingPathComponent("docs/platforms.md"), encoding: .utf8)
    let begin = try #require(page.range(of: "<!-- platform-table:begin -->\n"))
    let end = try #require(page.range(of: "<!-- platform-table:end -->"))
    let shown = String(page[begin.upperBound..<end.lowerBound])
    #expect(shown == PlatformTable.markdownTable(),
            "docs/platforms.md is out of date: replace its table with the output of 'tsapply device profiles --markdown'")
  }

  @Test func everyProfileHasItsCustomTemplateWhereItCreatesCustomReminders() {
    for platform in PlatformTable.all {
      let creates = platform.reminders.operations.contains(.createCustomTemplate)
      #expect((platform.reminders.customTemplate != nil) == creates, "\(platform.profile)")
      #expect((platform.reminders.custom != nil) == (platform.reminders.maxCustomReminders > 0), "\(platform.profile)")
    }
  }
}

/// Comments and docs cite files a clone has: nothing points at the notes outside the repository.
@Suite struct CitationTests {
  @Test func nothingCitesFilesOutsideTheRepository() throws {
    let root = TSApplyBinary.packageRoot
    var offenders: [String] = []
    for folder in ["Sources", "Tests", "docs", "examples", "script"] {
      guard let files = FileManager.default.enumerator(atPath: root.appendingPathComponent(folder).path) else { continue }
      for case let file as String in files where [".swift", ".md", ".yml", ".yaml", ".sh", ""].contains(where: file.hasSuffix) {
        let path = root.appendingPathComponent(folder).appendingPathComponent(file).path
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { continue }
        // Spelled in two parts so this test does not cite them itself.
        for needle in ["sdk-facts" + ".md", "../" + "shared/", "/work/" + "shared"] where text.contains(needle) {
          offenders.append("\(folder)/\(file): \(needle)")
        }
      }
    }
    let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
    if readme.contains("sdk-facts" + ".md") { offenders.append("README.md") }
    #expect(offenders.isEmpty, "\(offenders)")
  }
}
