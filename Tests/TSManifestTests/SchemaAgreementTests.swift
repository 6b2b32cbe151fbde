import Foundation
import Testing
@testable import TSManifest
import TSModel
import TSTestSupport

/// One manifest and whether it is valid: checked through the real validator (`ManifestLoader`)
/// and through the JSON Schema (`tsapply schema`, applied to the YAML as an editor reads it).
struct SchemaRow: Sendable, CustomTestStringConvertible {
  var yaml: String
  var valid: Bool
  var testDescription: String { "\(valid ? "valid" : "invalid"): \(yaml.debugDescription)" }

  static func medicineAt(_ value: String, _ valid: Bool) -> SchemaRow {
    SchemaRow(yaml: "reminders:\n  medicine:\n    at: [\(value)]\n", valid: valid)
  }
  static func every(_ value: String, _ valid: Bool) -> SchemaRow {
    SchemaRow(yaml: "reminders:\n  drinking:\n    period: {start: \"08:00\", end: \"20:00\", every: \(value)}\n", valid: valid)
  }
  static func repeatRule(_ value: String, _ valid: Bool) -> SchemaRow {
    SchemaRow(yaml: "reminders:\n  medicine:\n    repeat: \(value)\n", valid: valid)
  }
  static func phone(_ value: String, _ valid: Bool) -> SchemaRow {
    SchemaRow(yaml: "contacts:\n  - {name: Alex, phone: \(value)}\n", valid: valid)
  }
  static func customName(_ value: String, _ valid: Bool) -> SchemaRow {
    SchemaRow(yaml: "reminders:\n  custom:\n    - {name: \(value), at: [\"08:00\"]}\n", valid: valid)
  }
  static func notes(_ value: String, _ valid: Bool) -> SchemaRow {
    SchemaRow(yaml: "reminders:\n  sedentary:\n    notes: \(value)\n", valid: valid)
  }
  static func yaml(_ text: String, _ valid: Bool) -> SchemaRow { SchemaRow(yaml: text, valid: valid) }

  /// The validator's verdict (warnings allowed).
  var validatorAccepts: Bool { ManifestLoader.load(bytes: Array(yaml.utf8), file: "watch.yaml").manifest != nil }

  /// The schema's errors for this manifest as an editor sees it.
  func schemaErrors(_ validator: JSONSchemaValidator) -> [String] {
    guard let instance = YAMLInstance.from(yaml) else { return ["not YAML"] }
    return validator.errors(instance)
  }
}

/// The schema and the validator agree on every rule they share: ranges, enums, lengths,
/// required keys, unknown keys. Each row goes through both and must get the same verdict.
@Suite struct SchemaAgreementTests {
  static let validator: JSONSchemaValidator? = try? JSONSchemaValidator.manifest()

  static let times: [SchemaRow] = [
    .medicineAt("\"08:00\"", true), .medicineAt("\"8:00\"", true), .medicineAt("06:30", true), .medicineAt("'00:00'", true),
    .medicineAt("\"23:59\"", true), .medicineAt("\"9:05\"", true), .medicineAt("0", true), .medicineAt("1439", true),
    .medicineAt("8", false), .medicineAt("23", false), .medicineAt("24", true), .medicineAt("800", true), .medicineAt("480", true),
    .medicineAt("390", true), .medicineAt("\"24:00\"", false), .medicineAt("\"23:60\"", false), .medicineAt("\"12:00:00\"", false),
    .medicineAt("7pm", false), .medicineAt("\"8:0\"", false), .medicineAt("\"\"", false), .medicineAt("1440", false),
    .medicineAt("-1", false), .medicineAt("\"630\"", false), .medicineAt("\"08:00 \"", false), .medicineAt("\"８:００\"", false),
    .medicineAt("[8]", false), .medicineAt("~", false), .medicineAt("\"-1:30\"", false), .medicineAt("\"123:00\"", false),
  ]

  static let durations: [SchemaRow] = [
    .every("90m", true), .every("2h", true), .every("1h30m", true), .every("45", true), .every("12h", true), .every("1", false), .every("5", true), .every("1m", true),
    .every("0h5m", true), .every("720m", true), .every("\"90\"", false), .every("90s", false), .every("1.5h", false),
    .every("h", false), .every("m", false), .every("-5", false), .every("0", false), .every("2H", false),
    .every("\"1h 30m\"", false), .every("1441", false), .every("[2h]", false), .every("~", false), .every("1m30h", false),
    .every("1234567m", false), .every("1h60m", false), .every("1h59m", true), .every("2h05m", true), .every("1h120m", false),
  ]

  static let repeats: [SchemaRow] = [
    .repeatRule("everyday", true), .repeatRule("EVERYDAY", true), .repeatRule("Workday", true), .repeatRule("weekend", true),
    .repeatRule("once", true), .repeatRule("mon", true), .repeatRule("Monday", true), .repeatRule("SUN", true),
    .repeatRule("[mon, wed, fri]", true), .repeatRule("[Saturday]", true), .repeatRule("[MON, tue]", true),
    .repeatRule("[mon, tue, wed, thu, fri, sat, sun]", true), .repeatRule("weekday", false), .repeatRule("weekdays", false),
    .repeatRule("daily", false), .repeatRule("[]", false), .repeatRule("[mon, mon]", false), .repeatRule("[mon, Funday]", false),
    .repeatRule("5", false), .repeatRule("\"[mon]\"", false), .repeatRule("[[mon]]", false), .repeatRule("~", false),
    .repeatRule("true", false), .repeatRule("[everyday]", false), .repeatRule("mo", false), .repeatRule("[mon, tue, wed, thu, fri, sat, sun, mon]", false),
  ]

  static let phones: [SchemaRow] = [
    .phone("\"+15550100\"", true), .phone("+15550100", true), .phone("0123456", true), .phone("\"+1 (555) 010-0100\"", true),
    .phone("\"555.010.0102\"", true), .phone("\"12345678901234567890\"", true), .phone("\"+1234567890123456789\"", true),
    .phone("12345678901234567890", true), .phone("\"+12345678901234567890\"", false), .phone("\"123456789012345678901\"", false),
    .phone("123456789012345678901", false), .phone("\"1-800-FLOWERS\"", false), .phone("\"+1 555 0100 ext 2\"", false),
    .phone("\"1+555\"", false), .phone("\"１２３\"", false), .phone("\"\"", false), .phone("\"+\"", false), .phone("\"()\"", false),
    .phone("~", false), .phone("true", false), .phone("[\"+15550100\"]", false), .phone("\"++1555\"", false),
    .phone("-5", false), .phone("1.5", false), .phone("\"-5\"", false), .phone("\" -555 0100\"", false), .phone("\"555-0100\"", true),
  ]

  static let texts: [SchemaRow] = [
    .customName("Walk", true), .customName("No", true), .customName("123", true), .customName("true", true),
    .customName(String(repeating: "a", count: 32), true), .customName(String(repeating: "a", count: 33), false),
    .customName("\"\"", false), .customName("~", false), .customName("[a]", false), .customName("\"Évening\"", true),
    .notes(String(repeating: "n", count: 64), true), .notes(String(repeating: "n", count: 65), false), .notes("\"\"", true),
    .notes("{a: 1}", false),
    .yaml("contacts:\n  - {name: \(String(repeating: "c", count: 40)), phone: \"1\"}\n", true),
    .yaml("contacts:\n  - {name: \"\", phone: \"1\"}\n", false),
    .yaml("contacts:\n  - {name: A, phone: \"1\", short_name: J}\n", true),
    .yaml("contacts:\n  - {name: A, phone: \"1\", short_name: \"\"}\n", false),
  ]

  static let structure: [SchemaRow] = [
    .yaml("version: 1\ncontacts: []\n", true), .yaml("version: 2\ncontacts: []\n", false), .yaml("version: \"1\"\n", false),
    .yaml("reminders: {}\n", true), .yaml("contact: []\n", false), .yaml("contacts:\n", false), .yaml("reminders: ~\n", false),
    .yaml("", false), .yaml("- contacts\n", false), .yaml("contacts: {name: A}\n", false),
    .yaml("reminders:\n  sedentry: {enabled: true}\n", false), .yaml("reminders:\n  drinking:\n    lunch: false\n", false),
    .yaml("reminders:\n  sedentary:\n", false), .yaml("reminders:\n  custom: []\n", true),
    .yaml("reminders:\n  custom:\n    - {at: [\"08:00\"]}\n", false), .yaml("reminders:\n  sedentary: {name: Sit}\n", true),
    .yaml("contacts:\n  - {name: A}\n", false), .yaml("contacts:\n  - {phone: \"1\"}\n", false),
    .yaml("contacts:\n  - {name: A, phone: \"1\", email: a@b}\n", false),
    .yaml("reminders:\n  drinking:\n    period: {start: \"08:00\", end: \"20:00\"}\n", false),
    .yaml("reminders:\n  drinking:\n    period: {start: \"08:00\", end: \"20:00\", every: 1h, step: 2}\n", false),
    .yaml("reminders:\n  drinking:\n    period: {start: \"08:00\", end: \"20:00\", every: 1h}\n    at: [\"09:00\"]\n", false),
    .yaml("reminders:\n  drinking:\n    lunch_break: true\n", true), .yaml("reminders:\n  drinking:\n    lunch_break: false\n", true),
    .yaml("reminders:\n  drinking:\n    lunch_break: {start: \"12:00\", end: \"13:00\"}\n", true),
    .yaml("reminders:\n  drinking:\n    lunch_break: {start: \"12:00\"}\n", false),
    .yaml("reminders:\n  drinking:\n    lunch_break: yes\n", false), .yaml("reminders:\n  drinking:\n    lunch_break: \"12:00\"\n", false),
    .yaml("reminders:\n  drinking:\n    enabled: true\n", true), .yaml("reminders:\n  drinking:\n    enabled: \"true\"\n", false),
    .yaml("reminders:\n  drinking:\n    enabled: True\n", true), .yaml("reminders:\n  drinking:\n    enabled: FALSE\n", true),
    .yaml("reminders:\n  drinking:\n    enabled: yes\n", false), .yaml("reminders:\n  drinking:\n    enabled: 1\n", false),
    .yaml("reminders:\n  medicine:\n    at: []\n", false),
    .yaml("reminders:\n  medicine:\n    at: [\(Array(30..<40).map(String.init).joined(separator: ", "))]\n", true),
    .yaml("reminders:\n  medicine:\n    at: [\(Array(30..<41).map(String.init).joined(separator: ", "))]\n", false),
    .yaml("reminders:\n  medicine:\n    at: [\"08:00\", \"08:00\"]\n", false),
    .yaml("emergency:\n  sos: true\n", false), .yaml("emergency:\n  sos: true\n  contacts: []\n", false),
    .yaml("emergency:\n  sos: true\n  contacts: [{name: A, phone: \"1\"}]\n", true), .yaml("emergency:\n  sos: false\n", true),
    .yaml("emergency:\n  contacts: []\n", true), .yaml("emergency:\n  sos: on\n  contacts: [{name: A, phone: \"1\"}]\n", false),
    .yaml("emergency:\n  sms: true\n", false), .yaml("emergency:\n", false),
    .yaml("contacts:\n  - {name: A, phone: \"1\"}\n  - {name: A, phone: \"1\"}\n", false),
    .yaml("contacts:\n  - {name: A, phone: \"1\"}\n  - {name: B, phone: \"1\"}\n", true),
    .yaml("reminders:\n  custom:\n    - {name: W, at: [\"08:00\"]}\n    - {name: W, at: [\"08:00\"]}\n", false),
    .yaml("base: &b {enabled: true}\nreminders:\n  drinking: *b\n", false),
    .yaml("reminders:\n  drinking: &b {enabled: true}\n  custom:\n    - {<<: *b, name: W, at: [\"08:00\"]}\n", true),
  ]

  @Test(arguments: times + durations + repeats + phones + texts + structure)
  func schemaAndValidatorAgree(_ row: SchemaRow) throws {
    let validator = try #require(Self.validator)
    let errors = row.schemaErrors(validator)
    #expect(row.validatorAccepts == row.valid, "validator")
    #expect(errors.isEmpty == row.valid, "schema: \(errors)")
  }

  /// Every "H:MM" and "HH:MM" from 0:00 to 25:61, and every integer from -2 to 1441.
  @Test func everyClockTimeGetsTheSameVerdict() throws {
    let validator = try #require(Self.validator)
    var values = (-2...1441).map(String.init)
    for hour in 0...25 {
      for minute in 0...61 {
        let mm = minute < 10 ? "0\(minute)" : "\(minute)"
        values.append("\"\(hour):\(mm)\"")
        if hour < 10 { values.append("\"0\(hour):\(mm)\"") }
      }
    }
    var disagreements: [String] = []
    for value in values {
      let row = SchemaRow.medicineAt(value, true)
      if row.validatorAccepts != row.schemaErrors(validator).isEmpty { disagreements.append(value) }
    }
    #expect(disagreements == [])
    #expect(values.count > 3000)
  }

  /// Rules the schema cannot express: the schema accepts these and the validator, which is
  /// authoritative, refuses them (or the reverse, marked). Listed so a change on either side is
  /// noticed and docs/editor-and-ci.md stays true.
  static let validatorOnly: [SchemaRow] = [
    .yaml("reminders:\n  drinking:\n    period: {start: \"20:00\", end: \"08:00\", every: 1h}\n", false),  // start before end
    .every("721", false),                                  // every ≤ end − start
    .every("0m", false),                                   // every ≥ 1 in the text form
    .yaml("reminders:\n  drinking:\n    lunch_break: {start: \"13:00\", end: \"12:00\"}\n", false),
    .medicineAt("\"8:00\", \"08:00\"", false),             // the same time written two ways
    .repeatRule("[mon, monday]", false),                   // the same day written two ways
    .yaml("reminders:\n  custom:\n    - {name: W, at: [\"08:00\"]}\n    - {name: W, at: [\"09:00\"]}\n", false),
    .yaml("contacts:\n  - {name: A, phone: \"1 2\"}\n  - {name: A, phone: \"12\"}\n", false),
    .customName(String(repeating: "李", count: 11), false),  // 33 bytes, 11 characters
    .customName("\"Walk \"", false),                      // white space at an end of a name
    .yaml("contacts:\n  - {name: \"\u{00A0}Alex\", phone: \"1\"}\n", false),
    .notes(String(repeating: "é", count: 33), false),       // 66 bytes, 33 characters
    .medicineAt("0630", false),                            // an integer to YAML 1.2, ambiguous to tsapply
    .yaml("version: 1.0\n", false),
    .phone("0x1F", false),
    .phone("+12345678901234567890", false),                // the integer form loses the '+'
  ]

  @Test(arguments: validatorOnly)
  func validatorOnlyRules(_ row: SchemaRow) throws {
    let validator = try #require(Self.validator)
    #expect(!row.validatorAccepts)
    #expect(row.schemaErrors(validator) == [])
  }
}
