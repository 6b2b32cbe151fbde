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

  static func custom(_ name: String) -> String { "reminders:\n  custom:\n    - name: 1️⃣\(name)\n      at: [\"08:00\"]\n" }
  static func contact(_ name: String, list: String = "contacts") -> String {
    let indent = list == "contacts" ? "" : "  "
    return (list == "contacts" ? "contacts:\n" : "emergency:\n  contacts:\n") + "\(indent)  - name: 1️⃣\(name)\n\(indent)    phone: \"1\"\n"
  }
  static func edge(_ written: String, _ edge: String, _ character: String, _ trimmed: String) -> String {
    "\"\(written)\" \(edge) with \(character); remove it (the watch keeps it, so \"\(written)\" and \"\(trimmed)\" would be different names)"
  }

  /// A name that begins or ends with white space or an invisible character is refused, naming it.
  static let namesWithEdges: [DiagnosticCase] = [
    DiagnosticCase(marked: custom("\"Walk \""), field: "reminders.custom[0].name", message: edge("Walk ", "ends", "U+0020 SPACE", "Walk")),
    DiagnosticCase(marked: custom("\"  Walk\""), field: "reminders.custom[0].name", message: edge("  Walk", "begins", "U+0020 SPACE", "Walk")),
    DiagnosticCase(marked: custom("\"Walk\u{00A0}\""), field: "reminders.custom[0].name",
                   message: edge("Walk\u{00A0}", "ends", "U+00A0 NO-BREAK SPACE", "Walk")),
    DiagnosticCase(marked: custom("\"Walk\u{200B}\""), field: "reminders.custom[0].name",
                   message: edge("Walk\u{200B}", "ends", "U+200B ZERO WIDTH SPACE", "Walk")),
    DiagnosticCase(marked: custom("\"\u{202E}Walk\""), field: "reminders.custom[0].name",
                   message: edge("\u{202E}Walk", "begins", "U+202E RIGHT-TO-LEFT OVERRIDE", "Walk")),
    DiagnosticCase(marked: "reminders:\n  drinking:\n    name: 1️⃣\"Drink \"\n", field: "reminders.drinking.name",
                   message: edge("Drink ", "ends", "U+0020 SPACE", "Drink")),
    DiagnosticCase(marked: contact("\"Mom \""), field: "contacts[0].name", message: edge("Mom ", "ends", "U+0020 SPACE", "Mom")),
    DiagnosticCase(marked: contact("\"\u{3000}李明\""), field: "contacts[0].name",
                   message: edge("\u{3000}李明", "begins", "U+3000 IDEOGRAPHIC SPACE", "李明")),
    DiagnosticCase(marked: contact("\"Sam\u{2009}\"", list: "emergency"), field: "emergency.contacts[0].name",
                   message: edge("Sam\u{2009}", "ends", "U+2009 THIN SPACE", "Sam")),
    DiagnosticCase(marked: "contacts:\n  - {name: Al, phone: \"1\", short_name: 1️⃣\" A\"}\n", field: "contacts[0].short_name",
                   message: edge(" A", "begins", "U+0020 SPACE", "A")),
    DiagnosticCase(marked: custom("\"\u{200B}\""), field: "reminders.custom[0].name",
                   message: "is blank (only white space and invisible characters); a name needs at least one visible character"),
    .valid("reminders:\n  custom:\n    - name: \"Evening walk\"\n      at: [\"08:00\"]\n"),
    .valid("contacts:\n  - {name: \"Gran ❤️\", phone: \"1\"}\n  - {name: 👨‍👩‍👧, phone: \"2\"}\n  - {name: \"山田\u{3000}太郎\", phone: \"3\"}\n"),
  ]

  @Test(arguments: namesWithEdges)
  func namesMayNotBeginOrEndWithWhiteSpace(_ row: DiagnosticCase) { row.check() }

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
