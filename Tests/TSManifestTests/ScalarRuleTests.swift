import Testing
import TSManifest
import TSModel
import TSTestSupport

/// Times of day, durations and booleans: schema-typed scalars (TimeOfDayRule, ScalarDecoding).
@Suite struct ScalarRuleTests {
  static func medicineAt(_ value: String) -> String { "reminders:\n  medicine:\n    at: [1️⃣\(value)]\n" }

  static let validTimes: [(String, Int)] = [
    ("\"08:00\"", 480), ("\"8:00\"", 480), ("06:30", 390), ("'00:00'", 0), ("\"23:59\"", 1439),
  ]  // integers are valid with a warning: InputTrapTests.integerTimes

  @Test(arguments: validTimes)
  func validTime(_ value: String, _ minutes: Int) throws {
    let result = load(MarkedText(Self.medicineAt(value)).text)
    #expect(result.diagnostics == [])
    let schedule = try #require(result.manifest?.reminders?.medicine?.schedule?.value)
    #expect(schedule == .timePoints([try #require(MinuteOfDay(rawValue: minutes))]))
  }

  static let invalidTimes: [DiagnosticCase] = [
    ("\"24:00\"", "\"24:00\" is not a time of day (expected HH:MM, 00:00–23:59); midnight is \"00:00\", and the day's last minute \"23:59\""),
    ("\"23:60\"", "\"23:60\" is not a time of day (expected HH:MM, 00:00–23:59)"),
    ("\"12:00:00\"", "\"12:00:00\" is not a time of day (expected HH:MM, 00:00–23:59)"),
    ("7pm", "\"7pm\" is not a time of day (expected HH:MM, 00:00–23:59); write \"19:00\""),
    ("\"8:0\"", "\"8:0\" is not a time of day (expected HH:MM, 00:00–23:59)"),
    ("\"\"", "\"\" is not a time of day (expected HH:MM, 00:00–23:59)"),
    ("1440", "1440 is not a time of day (expected minutes from midnight, 0–1439, or HH:MM); write \"14:40\" if you meant hours and minutes"),
    ("-1", "-1 is not a time of day (expected minutes from midnight, 0–1439, or HH:MM)"),
    ("0630", "0630 is ambiguous; write a time as \"HH:MM\" or minutes from midnight without a leading zero: \"06:30\" if you meant hours and minutes"),
    ("[8]", "expected a time of day (HH:MM), found a list"),
  ].map { DiagnosticCase(marked: medicineAt($0.0), field: "reminders.medicine.at[0]", message: $0.1) }

  @Test(arguments: invalidTimes)
  func invalidTime(_ row: DiagnosticCase) { row.check() }

  static func drinkingEvery(_ value: String) -> String {
    "reminders:\n  drinking:\n    period: {start: \"08:00\", end: \"20:00\", every: 1️⃣\(value)}\n"
  }

  static let validDurations: [(String, Int)] = [("90m", 90), ("2h", 120), ("1h30m", 90), ("45", 45), ("12h", 720), ("5", 5)]

  @Test(arguments: validDurations)
  func validDuration(_ value: String, _ minutes: Int) throws {
    let result = load(MarkedText(Self.drinkingEvery(value)).text)
    #expect(result.diagnostics == [])
    let schedule = try #require(result.manifest?.reminders?.drinking?.schedule?.value)
    #expect(schedule == .period(start: try #require(MinuteOfDay(hour: 8, minute: 0)),
                                end: try #require(MinuteOfDay(hour: 20, minute: 0)), interval: minutes))
  }

  static let invalidDurations: [DiagnosticCase] = [
    ("5s", "\"5s\" is not a duration (expected a duration such as 90m, 2h or 1h30m, or minutes as an integer)"),
    ("1.5h", "\"1.5h\" is not a duration; write 1h30m (expected a duration such as 90m, 2h or 1h30m, or minutes as an integer)"),
    ("30m1h", "\"30m1h\" is not a duration (expected a duration such as 90m, 2h or 1h30m, or minutes as an integer)"),
    ("h", "\"h\" is not a duration (expected a duration such as 90m, 2h or 1h30m, or minutes as an integer)"),
    ("0", "every must be at least 1 minute, found 0"),
    ("0m", "every must be at least 1 minute, found 0"),
    ("721", "every is 721 minutes, longer than the period 08:00–20:00 (720 minutes)"),
    ("12h1m", "every is 721 minutes, longer than the period 08:00–20:00 (720 minutes)"),
  ].map { DiagnosticCase(marked: drinkingEvery($0.0), field: "reminders.drinking.period.every", message: $0.1) }

  @Test(arguments: invalidDurations)
  func invalidDuration(_ row: DiagnosticCase) { row.check() }

  static func enabled(_ value: String) -> String { "reminders:\n  drinking:\n    enabled: 1️⃣\(value)\n" }

  /// YAML 1.2's core schema: three spellings each.
  @Test(arguments: [("true", true), ("True", true), ("TRUE", true), ("false", false), ("False", false), ("FALSE", false)])
  func validBoolean(_ value: String, _ expected: Bool) {
    let result = load(MarkedText(Self.enabled(value)).text)
    #expect(result.diagnostics == [])
    #expect(result.manifest?.reminders?.drinking?.isEnabled?.value == expected)
  }

  static let invalidBooleans: [DiagnosticCase] = [
    ("yes", "\"yes\" is not a boolean; write true (tsapply reads only true and false)"),
    ("Yes", "\"Yes\" is not a boolean; write true (tsapply reads only true and false)"),
    ("on", "\"on\" is not a boolean; write true (tsapply reads only true and false)"),
    ("no", "\"no\" is not a boolean; write false (tsapply reads only true and false)"),
    ("OFF", "\"OFF\" is not a boolean; write false (tsapply reads only true and false)"),
    ("y", "\"y\" is not a boolean; write true (tsapply reads only true and false)"),
    ("\"true\"", "\"true\" is quoted, so it is text; write true without quotes"),
    ("'False'", "\"False\" is quoted, so it is text; write false without quotes"),
    ("tRUE", "expected true or false, found \"tRUE\"; did you mean true?"),
    ("ture", "expected true or false, found \"ture\"; did you mean true?"),
    ("flase", "expected true or false, found \"flase\"; did you mean false?"),
    ("maybe", "expected true or false, found \"maybe\""),
    ("Off", "\"Off\" is not a boolean; write false (tsapply reads only true and false)"),
    ("1", "expected true or false, found \"1\""),
    ("[true]", "expected true or false, found a list"),
  ].map { DiagnosticCase(marked: enabled($0.0), field: "reminders.drinking.enabled", message: $0.1) }

  @Test(arguments: invalidBooleans)
  func invalidBoolean(_ row: DiagnosticCase) { row.check() }
}
