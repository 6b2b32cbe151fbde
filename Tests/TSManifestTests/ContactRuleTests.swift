import Testing
import TSManifest
import TSModel
import TSTestSupport

/// Contacts: phone refusal, grapheme-safe name truncation, short names, duplicates, SOS
/// (PhoneNumberRule, ContactNameRule, ShortNameRule, DuplicateContactRule, SOSRule).
@Suite struct ContactRuleTests {
  /// An emergency contact written out whose name a regular contact has with another number: a
  /// warning at its phone (one of the two is likely a typo, and an SOS calls this one); the same
  /// number however spaced, another name, or a reference is fine (fresh-eyes finding: accepted
  /// silently).
  static let emergencyPhoneCases: [DiagnosticCase] = [
    DiagnosticCase(marked: "contacts:\n  - {name: Anna, phone: \"+44 7700 900123\"}\nemergency:\n  sos: true\n  contacts:\n"
                     + "    - {name: Anna, phone: 1️⃣\"+44 7700 900132\"}\n",
                   field: "emergency.contacts[0].phone",
                   message: "\"Anna\" has +447700900132 here but +447700900123 under contacts: (watch.yaml:2:25); an SOS calls this one. "
                     + "Check which is right, or write - {contact: Anna} here to use that contact's number",
                   severity: .warning),
    DiagnosticCase(marked: "contacts:\n  - {name: Anna, phone: \"+44 7700 900123\"}\nemergency:\n  sos: true\n  contacts:\n"
                     + "    - {name: anna, phone: 1️⃣\"+44 7700 900132\"}\n",
                   field: "emergency.contacts[0].phone",
                   message: "\"anna\" has +447700900132 here but +447700900123 under contacts: (watch.yaml:2:25); an SOS calls this one. "
                     + "Check which is right, or write - {contact: Anna} here to use that contact's number",
                   severity: .warning),
    .valid("contacts:\n  - {name: Anna, phone: \"+44 7700 900123\"}\nemergency:\n  sos: true\n  contacts:\n    - {name: Anna, phone: \"+447700900123\"}\n"),
    .valid("contacts:\n  - {name: Anna, phone: \"+44 7700 900123\"}\nemergency:\n  sos: true\n  contacts:\n    - {name: Ben, phone: \"+447700900132\"}\n"),
    .valid("contacts:\n  - {name: Anna, phone: \"+44 7700 900123\"}\nemergency:\n  sos: true\n  contacts:\n    - {contact: Anna}\n"),
  ]

  @Test(arguments: emergencyPhoneCases)
  func anEmergencyNumberThatDiffersFromTheContactsIsAWarning(_ row: DiagnosticCase) { row.check() }

  static func phone(_ value: String) -> String { "contacts:\n  - name: Alex\n    phone: 1️⃣\(value)\n" }

  static let validPhones: [(String, String)] = [
    ("\"+15550100\"", "+15550100"), ("+15550100", "+15550100"), ("0123456", "0123456"),
    ("\"+1 (555) 010-0100\"", "+15550100100"), ("555.010.0100", "5550100100"), ("7", "7"),
    ("\"12345678901234567890\"", "12345678901234567890"), ("\"+1234567890123456789\"", "+1234567890123456789"),
  ]

  @Test(arguments: validPhones)
  func validPhone(_ value: String, _ stored: String) throws {
    let result = load(MarkedText(Self.phone(value)).text)
    #expect(result.diagnostics == [])
    #expect(try #require(result.manifest?.contacts?.value.first).phone.value == stored)
  }

  static let invalidPhones: [DiagnosticCase] = [
    ("1-800-FLOWERS", "\"1-800-FLOWERS\" contains letters; write the number in digits only (letter numbers and extensions cannot be stored, and tsapply never guesses a number)"),
    ("\"+1 555 0100 ext. 12\"", "\"+1 555 0100 ext. 12\" contains letters; write the number in digits only (letter numbers and extensions cannot be stored, and tsapply never guesses a number)"),
    ("\"12+34\"", "\"12+34\" has a '+' after the start; '+' may only begin the number"),
    ("\"++1\"", "\"++1\" has a '+' after the start; '+' may only begin the number"),
    ("\"１２３\"", "\"１２３\" contains \"１\", which is not an ASCII digit 0–9"),
    ("\"555#1\"", "\"555#1\" contains \"#\"; a phone number holds digits 0–9, one leading '+', and spaces, dashes, dots or parentheses as formatting"),
    ("\"123456789012345678901\"", "\"123456789012345678901\" is 21 bytes without formatting; the SDK keeps at most 20 bytes of a number (it cuts a longer one), and tsapply never shortens a phone number"),
    ("\"+44 (0)7700 900456\"", "\"+44 (0)7700 900456\" has \"(0)\", the prefix dialled only inside the country: kept, it makes another number (+4407700900456); write \"+44 7700 900456\" (the international number without the 0), or the number without the country code and with the 0 (tsapply never changes a number itself)"),
    ("\"+49(0)30-1234567\"", "\"+49(0)30-1234567\" has \"(0)\", the prefix dialled only inside the country: kept, it makes another number (+490301234567); write \"+4930-1234567\" (the international number without the 0), or the number without the country code and with the 0 (tsapply never changes a number itself)"),
    ("\"+\"", "\"+\" has no digits"),
    ("\"\"", "must not be empty; write the number the watch calls, e.g. \"+44 7700 900123\", or remove the contact"),
  ].map { DiagnosticCase(marked: phone($0.0), field: "contacts[0].phone", message: $0.1) }

  @Test(arguments: invalidPhones)
  func invalidPhone(_ row: DiagnosticCase) { row.check() }

  static func name(_ value: String) -> String { "contacts:\n  - phone: \"1\"\n    name: 1️⃣\(value)\n" }

  /// (name, stored name): names over 32 bytes are cut at a grapheme-cluster boundary, and a
  /// space the cut leaves at the end goes too (a manifest name never ends with one).
  static let names: [(String, String)] = [
    (String(repeating: "a", count: 32), String(repeating: "a", count: 32)),
    (String(repeating: "a", count: 33), String(repeating: "a", count: 32)),
    (String(repeating: "é", count: 17), String(repeating: "é", count: 16)),
    (String(repeating: "e\u{301}", count: 11), String(repeating: "e\u{301}", count: 10)),
    (String(repeating: "🇫🇷", count: 5), String(repeating: "🇫🇷", count: 4)),
    ("👨‍👩‍👧‍👦👨‍👩‍👧‍👦", "👨‍👩‍👧‍👦"),
    ("李明" + String(repeating: "明", count: 10), "李明" + String(repeating: "明", count: 8)),
    ("Anna merge👨‍👩‍👧ncy 0", "Anna merge👨‍👩‍👧ncy"),
    (String(repeating: "a", count: 28) + " \u{A0}  bc", String(repeating: "a", count: 28)),
    (String(repeating: "a", count: 31) + " b", String(repeating: "a", count: 31)),
  ]

  @Test(arguments: names)
  func nameIsStoredCutAtAGraphemeBoundary(_ written: String, _ stored: String) throws {
    let text = MarkedText(Self.name("\"\(written)\""))
    let result = load(text.text)
    #expect(try #require(result.manifest?.contacts?.value.first).name.value == stored)
    let bytes = written.utf8.count
    let expected: [Diagnostic] = bytes <= 32 ? [] : [.warning(at: text.position("1️⃣"), field: "contacts[0].name",
      "is \(bytes) bytes; the watch stores at most 32, so it will be stored as \"\(stored)\" (\(stored.utf8.count) bytes)")]
    #expect(result.diagnostics == expected)
  }

  static let invalidNames: [DiagnosticCase] = [
    DiagnosticCase(marked: name("\"\""), field: "contacts[0].name", message: "must not be empty"),
    DiagnosticCase(marked: name("1️⃣[Alex]"), field: "contacts[0].name", message: "expected text, found a list"),
    DiagnosticCase(marked: "contacts:\n  - 1️⃣{phone: \"1\"}\n", field: "contacts[0]", message: "name is required"),
    DiagnosticCase(marked: "contacts:\n  - 1️⃣{name: A}\n", field: "contacts[0]", message: "phone is required"),
    DiagnosticCase(marked: "contacts:\n  - {name: A, phone: \"1\", 1️⃣phone_number: \"2\"}\n", field: "contacts[0].phone_number",
                   message: "unknown key \"phone_number\" (expected one of: name, phone, short_name)"),
  ]

  @Test(arguments: invalidNames)
  func invalidName(_ row: DiagnosticCase) { row.check() }

  @Test(arguments: [("李明", "L"), ("Émile", "E"), ("123", "#"), ("Жанна", "Z"), ("(alex)", "A"),
                    ("😀", "#"), ("42 Óscar", "O"), ("No", "N"), ("김민", "G")])
  func shortNameIsDerivedFromTheFirstLetter(_ name: String, _ shortName: String) throws {
    let result = load("contacts:\n  - {name: \"\(name)\", phone: \"1\"}\n")
    let contact = try #require(result.manifest?.contacts?.value.first)
    #expect(contact.shortName == shortName)
    #expect(!contact.shortNameIsExplicit)
  }

  @Test func explicitShortNameIsKept() throws {
    let contact = try #require(load("contacts:\n  - {name: 李明, phone: \"1\", short_name: M}\n").manifest?.contacts?.value.first)
    #expect(contact.shortName == "M")
    #expect(contact.shortNameIsExplicit)
    DiagnosticCase(marked: "contacts:\n  - {name: A, phone: \"1\", short_name: 1️⃣\"\"}\n", field: "contacts[0].short_name",
                   message: "must not be empty; leave short_name out to derive it from the name").check()
  }

  static let duplicates: [DiagnosticCase] = [
    .valid("contacts:\n  - {name: Alex, phone: \"1\"}\n  - {name: Alex, phone: \"2\"}\n"),
    DiagnosticCase(marked: "contacts:\n  - {name: Alex, phone: \"1\"}\n  - 1️⃣{name: Alex, phone: \"1\"}\n", field: "contacts[1]",
                   message: "duplicate contact \"Alex\" 1: also listed on line 2, column 5"),
    DiagnosticCase(marked: "contacts:\n  - {name: Alex, phone: \"+1 555\"}\n  - 1️⃣{name: Alex, phone: \"+1555\"}\n",
                   field: "contacts[1]", message: "duplicate contact \"Alex\" +1555: also listed on line 2, column 5"),
    DiagnosticCase(marked: "contacts:\n  - {name: Alex, phone: \"1\"}\n  - {name: Sam, phone: 1️⃣\"1\"}\n",
                   field: "contacts[1].phone", message: "1 is also the phone of \"Alex\" on line 2", severity: .warning),
  ]

  @Test(arguments: duplicates)
  func duplicateContactRule(_ row: DiagnosticCase) { row.check() }

  /// Two names written differently that the watch keeps alike (cut to the same 32 bytes), with
  /// different phones: a warning at the later one beside each cut's own (fresh-eyes fe96 #6); the
  /// same name written twice is not warned of (two people may share a name).
  @Test func namesCutAlikeAreWarnedOf() throws {
    let first = "Anna Maria Josefina Rodriguez Garcia", second = "Anna Maria Josefina Rodriguez Garcia II"
    let yaml = "contacts:\n  - {name: \(first), phone: \"1\"}\n  - {name: \(second), phone: \"2\"}\n  - {name: Alex, phone: \"3\"}\n  - {name: Alex, phone: \"4\"}\n"
    let result = load(yaml)
    #expect(result.manifest != nil)
    let alike = result.diagnostics.filter { $0.message.contains("are both stored as") }
    #expect(alike.map(\.field) == ["contacts[1].name"], "\(result.diagnostics)")
    #expect(alike.first?.message == "\"\(second)\" and \"\(first)\" (line 2) are both stored as \"Anna Maria Josefina Rodriguez Ga\", "
      + "so the watch, its plans and drift tell them apart only by phone number; make them differ within the first 32 bytes", "\(alike)")
    #expect(alike.first?.severity == .warning)
  }

  static let sos: [DiagnosticCase] = [
    .valid("emergency:\n  sos: true\n  contacts: [{name: Sam, phone: \"1\"}]\n"),
    .valid("emergency:\n  sos: false\n  contacts: []\n"),
    .valid("emergency:\n  contacts: []\n"),
    DiagnosticCase(marked: "emergency:\n  sos: 1️⃣true\n  contacts: []\n", field: "emergency.sos",
                   message: "is true but no emergency contacts are given; add at least one under emergency.contacts, or set sos: false"),
    DiagnosticCase(marked: "emergency:\n  sos: 1️⃣true\n", field: "emergency.sos",
                   message: "is true but no emergency contacts are given; add at least one under emergency.contacts, or set sos: false"),
    DiagnosticCase(marked: "emergency:\n  sos: true\n  contacts:1️⃣\n", field: "emergency.contacts",
                   message: "has no value; remove the key to leave the watch's emergency contacts unmanaged, or write contacts: [] to remove them all"),
    // A contact that is given but wrong is its own error, not "no emergency contacts".
    DiagnosticCase(marked: "emergency:\n  sos: true\n  contacts: [{name: Sam, phone: 1️⃣\"abc\"}]\n", field: "emergency.contacts[0].phone",
                   message: "\"abc\" contains letters; write the number in digits only (letter numbers and extensions cannot be stored, and tsapply never guesses a number)"),
    DiagnosticCase(marked: "emergency:\n  sos: 1️⃣on\n  contacts: [{name: Sam, phone: \"1\"}]\n", field: "emergency.sos",
                   message: "\"on\" is not a boolean; write true (tsapply reads only true and false)"),
  ]

  @Test(arguments: sos)
  func sosRule(_ row: DiagnosticCase) { row.check() }
}
