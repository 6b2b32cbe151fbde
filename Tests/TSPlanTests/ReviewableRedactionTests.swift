import Foundation
import Testing
import TSModel
import TSTestSupport
@testable import TSPlan

/// `--redact` with fingerprints: a masked number still shows that it changed and which numbers
/// are equal, in the human plan, the Markdown and the JSON, and still leaks no number.
@Suite struct ReviewableRedactionTests {
  static let fingerprints = PhoneFingerprints(key: Array(repeating: 7, count: 32))

  @Test(arguments: [
    ("+44 7700 900456", "+447700900456", true),
    ("+44 (0) 7700-900456", "+4407700900456", true),
    ("+44 7700 900456", "+44 7700 960456", false),
    ("+15550100", "+15550101", false),
  ])
  func equalNumbersHaveEqualFingerprints(_ a: String, _ b: String, _ equal: Bool) {
    #expect((Self.fingerprints.fingerprint(a) == Self.fingerprints.fingerprint(b)) == equal)
  }

  /// Letters only (never read as digits by a mask), six of them, and another key gives others.
  @Test func fingerprintsAreSixLettersAndKeyed() {
    let print = Self.fingerprints.fingerprint("+447700900456")
    #expect(print.count == PhoneFingerprints.length && print.allSatisfy { $0.isLetter && $0.isLowercase })
    #expect(PhoneFingerprints(key: Array(repeating: 8, count: 32)).fingerprint("+447700900456") != print)
    #expect(Self.fingerprints.tag("+447700900456") == "‹\(print)›")
  }

  /// Without fingerprints (no redaction key yet: `drift` never makes one), two numbers that
  /// mask alike still read as a change, not `"+**23" -> "+**23"` (fresh-eyes fe106 #2); numbers
  /// that mask apart, and no --redact, are left as they were.
  @Test func numbersThatMaskAlikeWithoutFingerprintsSayTheyDiffer() {
    let formatter = FieldFormatter(redact: true)
    let (a, b) = (FieldValue.string("+447700900123"), FieldValue.string("+447700911123"))
    #expect(formatter.formatChange(a, b, field: "phoneNum") == #""+**********23" -> "+**********23" (another number, alike once masked)"#)
    let contact = { (phone: FieldValue) in FieldValue.object([.init("name", .string("Anna")), .init("phoneNum", phone)]) }
    #expect(formatter.formatChange(contact(a), contact(b), field: "contacts")
            == #"{name = "Anna", phone = "+**********23" -> "+**********23" (another number, alike once masked)}"#)
    #expect(!formatter.formatChange(a, .string("+447700900124"), field: "phoneNum").contains("alike"))
    #expect(!FieldFormatter(redact: true, fingerprints: Self.fingerprints).formatChange(a, b, field: "phoneNum").contains("alike"))
    #expect(!FieldFormatter(redact: false).formatChange(a, b, field: "phoneNum").contains("alike"))
  }

  @Test func theHumanPlanShowsThatTheNumberChanged() throws {
    let scenario = try #require(Scenarios.all.first { $0.name == "emergency-number-change" })
    let plan = try #require(scenario.result.plan)
    let text = HumanPlanRenderer(color: false, redact: true, fingerprints: Self.fingerprints).render(plan)
    expectGolden(text, "emergency-number-change-fingerprints.txt")
    for phone in PhoneRedaction.phones(in: plan) { #expect(!text.contains(PhoneRedaction.digits(of: phone).dropLast(2))) }
    // Without --redact nothing is added.
    #expect(!HumanPlanRenderer(color: false, redact: false, fingerprints: Self.fingerprints).render(plan).contains("‹"))
  }

  @Test func theJSONCarriesTheFingerprintBesideTheMask() throws {
    let scenario = try #require(Scenarios.all.first { $0.name == "emergency-number-change" })
    let plan = try #require(scenario.result.plan)
    let json = JSONPlanRenderer.render(plan, redact: true, fingerprints: Self.fingerprints)
    #expect(json.contains("\"phoneNum_fingerprint\" : \""))
    for phone in PhoneRedaction.phones(in: plan) {
      #expect(json.contains("\"phoneNum_fingerprint\" : \"\(Self.fingerprints.fingerprint(phone))\""))
      #expect(!json.contains(PhoneRedaction.digits(of: phone).dropLast(2)))
    }
  }

  /// A drift report shows the fingerprints too, in text and JSON.
  @Test func driftReportsCarryFingerprints() throws {
    let scenario = try #require(Scenarios.all.first { $0.name == "emergency-number-change" })
    let plan = try #require(scenario.result.plan)
    let own = Set(plan.resourceChanges.map(\.address))
    let text = DriftRenderer.text(drift: plan.resourceChanges, pending: plan, hasRecord: true, color: false, redact: true,
                                  fingerprints: Self.fingerprints, own: own)
    let json = DriftRenderer.json(drift: plan.resourceChanges, pending: plan, hasRecord: true, redact: true, fingerprints: Self.fingerprints,
                                  own: own)
    for phone in PhoneRedaction.phones(in: plan) {
      #expect(text.contains(Self.fingerprints.tag(phone)) && json.contains(Self.fingerprints.fingerprint(phone)))
      #expect(!text.contains(PhoneRedaction.digits(of: phone).dropLast(2)) && !json.contains(PhoneRedaction.digits(of: phone).dropLast(2)))
    }
  }

  @Test func markdownOfASingleWatch() throws {
    let scenario = try #require(Scenarios.all.first { $0.name == "emergency-number-change" })
    let plan = try #require(scenario.result.plan)
    expectGolden(MarkdownPlanRenderer(redact: true, fingerprints: Self.fingerprints).render(plan), "emergency-number-change.md")
    let empty = try #require(Scenarios.all.first { $0.name == "empty" }?.result.plan)
    expectGolden(MarkdownPlanRenderer(redact: false).render(empty), "empty.md")
  }

  /// Text in Markdown cannot end a code span or block early, or open HTML.
  @Test(arguments: [
    ("a`b", "``a`b``"),
    ("``x", "``` ``x ```"),
    ("plain", "`plain`"),
  ])
  func codeSpansOutlastTheirText(_ text: String, _ expected: String) {
    #expect(Markdown.code(text) == expected)
  }

  @Test func detailsFenceOutlastsTheBody() {
    let block = Markdown.details(summary: "<b>x</b> & *y*", body: "```\nnot the end\n````\n", open: false)
    #expect(block.hasPrefix("<details><summary>&lt;b&gt;x&lt;/b&gt; &amp; *y*</summary>\n\n`````text\n```\nnot the end\n````\n`````\n"))
  }
}
