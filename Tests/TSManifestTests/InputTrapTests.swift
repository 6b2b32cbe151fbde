import Testing
import TSManifest
import TSModel
import TSTestSupport

/// Input that surprised users and messages that misled them: each row is a manifest with the
/// one diagnostic it must give (position, field, message).
@Suite struct InputTrapTests {
  /// `count` contacts, one a line; the marker 1️⃣ before the name of contact `markedIndex`.
  static func contacts(_ count: Int, markedIndex: Int) -> String {
    "contacts:\n" + (0..<count).map { "  - {name: \($0 == markedIndex ? "1️⃣" : "")C\($0), phone: \"1\"}\n" }.joined()
  }

  static let nodeBounds: [DiagnosticCase] = [
    // 3 nodes (root, key, list) + 5 a contact: node 100 001 is contact 20 000's name (index 19 999).
    DiagnosticCase(marked: contacts(20_001, markedIndex: 19_999), field: "",
                   message: "the document has more than 100000 nodes (keys, values, lists and mappings), more than a manifest may hold; reading stopped"),
  ]

  static func phone(_ value: String) -> String { "contacts:\n  - name: Alex\n    phone: 1️⃣\(value)\n" }
  static let phoneFormatting = "a phone number holds digits 0–9, one leading '+', and spaces, dashes, dots or parentheses as formatting"

  /// A character one cannot see in a phone is named by code point; one that can be seen is quoted.
  static let invisibleInPhones: [DiagnosticCase] = [
    ("\"+1\u{00A0}555 0100\"", "\"+1\u{00A0}555 0100\" contains U+00A0 NO-BREAK SPACE; \(phoneFormatting)"),
    ("\"+1\\t555\"", "\"+1\t555\" contains U+0009 CHARACTER TABULATION; \(phoneFormatting)"),
    ("\"555\u{200B}0100\"", "\"555\u{200B}0100\" contains U+200B ZERO WIDTH SPACE; \(phoneFormatting)"),
    ("\"555\u{202F}0100\"", "\"555\u{202F}0100\" contains U+202F NARROW NO-BREAK SPACE; \(phoneFormatting)"),
    ("\"555\u{2010}0100\"", "\"555\u{2010}0100\" contains \"\u{2010}\"; \(phoneFormatting)"),
    ("\"555/0100\"", "\"555/0100\" contains \"/\"; \(phoneFormatting)"),
  ].map { DiagnosticCase(marked: phone($0.0), field: "contacts[0].phone", message: $0.1) }

  @Test(arguments: invisibleInPhones)
  func invisibleCharactersInPhonesAreNamed(_ row: DiagnosticCase) { row.check() }

  @Test(arguments: nodeBounds)
  func aLongFileIsNotABillionLaughs(_ row: DiagnosticCase) { row.check() }
}
