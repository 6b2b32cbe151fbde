import Testing
import TSManifest
import TSModel
import TSTestSupport

/// Rules added after a tester's report: control characters and blank names (DisplayTextRule),
/// minutes after hours in durations, phones written as YAML numbers or with a sign, explicit
/// tags, and duplicate custom names through an alias (CustomReminderNameRule).
@Suite struct HardeningRuleTests {
  static let control = "names and notes are shown on the watch and cannot hold control characters"
  static let blank = "is blank (only whitespace); a name needs at least one visible character"

  static func custom(_ name: String, notes: String? = nil) -> String {
    "reminders:\n  custom:\n    - name: \(name)\n      at: [\"08:00\"]\n" + (notes.map { "      notes: \($0)\n" } ?? "")
  }
  static func contact(name: String = "Alex", phone: String = "\"1\"", shortName: String? = nil) -> String {
    "contacts:\n  - name: \(name)\n    phone: \(phone)\n" + (shortName.map { "    short_name: \($0)\n" } ?? "")
  }

  static let displayText: [DiagnosticCase] = [
    DiagnosticCase(marked: custom("1️⃣\"a\\nb\""), field: "reminders.custom[0].name",
                   message: "contains a control character (U+000A); \(control)"),
    DiagnosticCase(marked: custom("1️⃣\"\\e[2J\\e[31mRED\""), field: "reminders.custom[0].name",
                   message: "contains a control character (U+001B); \(control)"),
    DiagnosticCase(marked: custom("1️⃣\"   \""), field: "reminders.custom[0].name", message: blank),
    DiagnosticCase(marked: custom("1️⃣\"\\u3000\""), field: "reminders.custom[0].name", message: blank),
    DiagnosticCase(marked: custom("Walk", notes: "1️⃣\"x\\ty\""), field: "reminders.custom[0].notes",
                   message: "contains a control character (U+0009); \(control)"),
    DiagnosticCase(marked: custom("Walk", notes: "1️⃣\"bell\\a\""), field: "reminders.custom[0].notes",
                   message: "contains a control character (U+0007); \(control)"),
    DiagnosticCase(marked: custom("Walk", notes: "1️⃣\"del\\x7F\""), field: "reminders.custom[0].notes",
                   message: "contains a control character (U+007F); \(control)"),
    DiagnosticCase(marked: contact(name: "1️⃣\"\\e]0;pwned\\a\""), field: "contacts[0].name",
                   message: "contains a control character (U+001B); \(control)"),
    DiagnosticCase(marked: contact(name: "1️⃣\"Al\\x9Bex\""), field: "contacts[0].name",
                   message: "contains a control character (U+009B); \(control)"),
    DiagnosticCase(marked: contact(name: "1️⃣\" \\t\""), field: "contacts[0].name",
                   message: "contains a control character (U+0009); \(control)"),
    DiagnosticCase(marked: contact(name: "1️⃣\"  \""), field: "contacts[0].name", message: blank),
    DiagnosticCase(marked: contact(shortName: "1️⃣\"\\x85\""), field: "contacts[0].short_name",
                   message: "contains a control character (U+0085); \(control)"),
    DiagnosticCase(marked: contact(shortName: "1️⃣\" \""), field: "contacts[0].short_name", message: blank),
    .valid(custom("\"Evening walk\"", notes: "\"Take the dog — ½ hour\"")),
    .valid(custom("Walk", notes: "\"   \"")),
    .valid(contact(name: "\"李明\"", shortName: "L")),
  ]

  @Test(arguments: displayText)
  func displayTextRule(_ row: DiagnosticCase) { row.check() }

  static func every(_ value: String) -> String {
    "reminders:\n  drinking:\n    period: {start: \"08:00\", end: \"20:00\", every: 1️⃣\(value)}\n"
  }
  static let expectedDuration = "expected a duration such as 90m, 2h or 1h30m, or minutes as an integer"

  static let durations: [DiagnosticCase] = [
    DiagnosticCase(marked: every("1h60m"), field: "reminders.drinking.period.every",
                   message: "\"1h60m\" is not a duration: after hours, the minutes must be 0–59 (write 2h or 120m; \(expectedDuration))"),
    DiagnosticCase(marked: every("2h90m"), field: "reminders.drinking.period.every",
                   message: "\"2h90m\" is not a duration: after hours, the minutes must be 0–59 (write 3h30m or 210m; \(expectedDuration))"),
    .valid(every("1h59m")), .valid(every("0h5m")), .valid(every("90m")), .valid(every("120m")), .valid(every("2h0m")),
  ]

  @Test(arguments: durations)
  func minutesAfterHours(_ row: DiagnosticCase) { row.check() }

  static func phone(_ value: String) -> String { "contacts:\n  - name: Alex\n    phone: 1️⃣\(value)\n" }
  static func number(_ text: String) -> String {
    "\(text) is a number in YAML, not a phone number; write the phone as text in quotes, e.g. phone: \"+15550100\""
  }

  static let phones: [DiagnosticCase] = [
    DiagnosticCase(marked: phone("-5"), field: "contacts[0].phone", message: number("-5")),
    DiagnosticCase(marked: phone("-15550100"), field: "contacts[0].phone", message: number("-15550100")),
    DiagnosticCase(marked: phone("1.5"), field: "contacts[0].phone", message: number("1.5")),
    DiagnosticCase(marked: phone("555.0100"), field: "contacts[0].phone", message: number("555.0100")),
    DiagnosticCase(marked: phone("+1.5"), field: "contacts[0].phone", message: number("+1.5")),
    DiagnosticCase(marked: phone("1e5"), field: "contacts[0].phone", message: number("1e5")),
    DiagnosticCase(marked: phone("0x1F"), field: "contacts[0].phone", message: number("0x1F")),
    DiagnosticCase(marked: phone("\"-5\""), field: "contacts[0].phone",
                   message: "\"-5\" begins with '-'; a phone number has no sign (dashes are formatting between digits only)"),
    DiagnosticCase(marked: phone("\" - 555 0100\""), field: "contacts[0].phone",
                   message: "\" - 555 0100\" begins with '-'; a phone number has no sign (dashes are formatting between digits only)"),
    DiagnosticCase(marked: phone("0o17"), field: "contacts[0].phone", message: number("0o17")),
    DiagnosticCase(marked: phone("-.inf"), field: "contacts[0].phone", message: number("-.inf")),
    DiagnosticCase(marked: phone(".NaN"), field: "contacts[0].phone", message: number(".NaN")),
    DiagnosticCase(marked: phone("+1E+5"), field: "contacts[0].phone", message: number("+1E+5")),
    // A dash or dot with no digit on one side (spaces and parentheses aside) is a typo (found by a tester).
    DiagnosticCase(marked: phone("\"1-\""), field: "contacts[0].phone",
                   message: "\"1-\" has '-' without a digit on its right; dashes and dots are formatting between digits only"),
    DiagnosticCase(marked: phone("\"(-)1\""), field: "contacts[0].phone",
                   message: "\"(-)1\" has '-' without a digit on its left; dashes and dots are formatting between digits only"),
    DiagnosticCase(marked: phone("\"+-1\""), field: "contacts[0].phone",
                   message: "\"+-1\" has '-' without a digit on its left; dashes and dots are formatting between digits only"),
    DiagnosticCase(marked: phone("\".1\""), field: "contacts[0].phone",
                   message: "\".1\" has '.' without a digit on its left; dashes and dots are formatting between digits only"),
    .valid(phone("\"+1 (555) 010-0100\"")), .valid(phone("\"555 - 0100\"")), .valid(phone("\"+44 (20) 7946.0000\"")),
    .valid(phone("5")), .valid(phone("+15550100")), .valid(phone("0123456")), .valid(phone("\"555.0100\"")),
    .valid(phone("\"555-0100\"")), .valid(phone("555-0100")), .valid(phone("555 0100")), .valid(phone("+1 555 0100")),
  ]

  @Test(arguments: phones)
  func phonesAreNotYAMLNumbers(_ row: DiagnosticCase) { row.check() }

  static func tag(_ tag: String, _ allowed: String) -> String {
    "unsupported tag \(tag); tsapply types values by their field, so only \(allowed) may be written here (remove the tag)"
  }

  static let tags: [DiagnosticCase] = [
    DiagnosticCase(marked: "contacts: 1️⃣!foo []\n", field: "contacts", message: tag("!foo", "!!seq")),
    DiagnosticCase(marked: "contacts:\n  - {name: A, phone: 1️⃣!!binary aGVsbG8=}\n", field: "contacts[0].phone",
                   message: tag("!!binary", "!!str")),
    DiagnosticCase(marked: "contacts:\n  - {name: 1️⃣!!int 5, phone: \"1\"}\n", field: "contacts[0].name",
                   message: tag("!!int", "!!str")),
    DiagnosticCase(marked: "emergency: 1️⃣!foo {sos: false}\n", field: "emergency", message: tag("!foo", "!!map")),
    DiagnosticCase(marked: "1️⃣!config\nemergency: {sos: false}\n", field: "", message: tag("!config", "!!map")),
    DiagnosticCase(marked: "reminders:\n  drinking:\n    enabled: 1️⃣!!str true\n", field: "reminders.drinking.enabled",
                   message: tag("!!str", "!!bool")),
    DiagnosticCase(marked: "reminders:\n  drinking:\n    repeat: 1️⃣!day mon\n", field: "reminders.drinking.repeat",
                   message: tag("!day", "!!str")),
    DiagnosticCase(marked: "reminders:\n  drinking:\n    at: [1️⃣!time \"08:00\"]\n", field: "reminders.drinking.at[0]",
                   message: tag("!time", "!!str or !!int")),
    DiagnosticCase(marked: "version: 1️⃣!v 1\ncontacts: []\n", field: "version", message: tag("!v", "!!int")),
    DiagnosticCase(marked: "1️⃣!k contacts: []\n", field: "", message: tag("!k", "!!str")),
    .valid("contacts: !!seq []\n"), .valid("contacts:\n  - {name: !!str 5, phone: !!str 0123}\n"),
    .valid("version: !!int 1\nreminders:\n  drinking: !!map {enabled: !!bool true, at: [!!str \"08:00\"], notes: !!str x}\n"),
    // An integer time may carry !!int; it is valid, with the warning every integer time gets.
    DiagnosticCase(marked: "reminders:\n  drinking: {at: [1️⃣!!int 480]}\n", field: "reminders.drinking.at[0]",
                   message: "480 is 08:00 (an integer time counts minutes from midnight); write \"08:00\" to say so", severity: .warning),
  ]

  @Test(arguments: tags)
  func explicitTags(_ row: DiagnosticCase) { row.check() }

  static let aliases: [DiagnosticCase] = [
    DiagnosticCase(marked: "reminders:\n  custom:\n    - &x {name: A, at: [\"00:01\"]}\n    - 1️⃣*x\n", field: "reminders.custom[1].name",
                   message: "duplicate custom reminder name \"A\": this alias repeats the name used on line 3, column 17 (names identify custom reminders)"),
    DiagnosticCase(marked: "reminders:\n  custom:\n    - {name: &n A, at: [\"00:01\"]}\n    - {name: 1️⃣*n, at: [\"00:02\"]}\n",
                   field: "reminders.custom[1].name",
                   message: "duplicate custom reminder name \"A\": also used on line 3, column 14 (names identify custom reminders)"),
    DiagnosticCase(marked: "contacts:\n  - &c {name: A, phone: \"1\"}\n  - 1️⃣*c\n", field: "contacts[1]",
                   message: "duplicate contact \"A\" 1: also listed on line 2, column 5"),
  ]

  @Test(arguments: aliases)
  func duplicatesThroughAnAliasPointAtTheAlias(_ row: DiagnosticCase) { row.check() }

  /// An alias to no anchor is one error: the empty value that stands for it is not reported
  /// again as a missing value.
  @Test(arguments: [
    DiagnosticCase(marked: "contacts:\n  - {name: 1️⃣*nobody, phone: \"1\"}\n", field: "contacts[0].name",
                   message: "alias *nobody refers to no anchor &nobody defined before it"),
    DiagnosticCase(marked: "emergency:\n  sos: 1️⃣*nothing\n", field: "emergency.sos",
                   message: "alias *nothing refers to no anchor &nothing defined before it"),
  ])
  func anUndefinedAliasIsOneError(_ row: DiagnosticCase) { row.check() }
}
