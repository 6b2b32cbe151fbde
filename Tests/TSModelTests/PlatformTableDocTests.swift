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
