import Testing
import TSManifest
import TSModel
import TSTestSupport

/// Period, time points, lunch break, names and notes, custom reminder identity
/// (PeriodRule, TimePointsRule, LunchBreakRule, ReminderTextRule, CustomReminderNameRule).
@Suite struct ReminderRuleTests {
  static func sedentary(_ body: String) -> String { "reminders:\n  sedentary:\n    \(body)\n" }

  /// An inverted period and a zero interval are two mistakes, both reported at once.
  @Test func anInvertedPeriodAndAZeroIntervalAreBothReported() {
    let text = MarkedText(Self.sedentary("period: {start: \"18:00\", end: 1️⃣\"09:00\", every: 2️⃣0m}"))
    #expect(load(text.text).diagnostics == [
      .error(at: text.position("1️⃣"), field: "reminders.sedentary.period.end",
             "end 09:00 must be later than start 18:00 (a period cannot cross midnight)"),
      .error(at: text.position("2️⃣"), field: "reminders.sedentary.period.every", "every must be at least 1 minute, found 0"),
    ])
  }

  static let period: [DiagnosticCase] = [
    .valid(sedentary("period: {start: \"09:00\", end: \"18:00\", every: 60m}")),
    .valid(sedentary("period: {start: \"09:00\", end: \"09:01\", every: 1m}")),
    .valid(sedentary("period: {start: \"00:00\", end: \"23:59\", every: 1439}")),
    DiagnosticCase(marked: sedentary("period: {start: \"18:00\", end: 1️⃣\"09:00\", every: 60m}"),
                   field: "reminders.sedentary.period.end",
                   message: "end 09:00 must be later than start 18:00 (a period cannot cross midnight)"),
    DiagnosticCase(marked: sedentary("period: {start: \"09:00\", end: 1️⃣\"09:00\", every: 60m}"),
                   field: "reminders.sedentary.period.end",
                   message: "end 09:00 must be later than start 09:00 (a period cannot cross midnight)"),
    DiagnosticCase(marked: sedentary("period: {start: \"09:00\", end: \"09:30\", every: 1️⃣31m}"),
                   field: "reminders.sedentary.period.every",
                   message: "every is 31 minutes, longer than the period 09:00–09:30 (30 minutes)"),
    DiagnosticCase(marked: sedentary("period: {start: \"09:00\", end: \"09:01\", every: 1️⃣2m}"),
                   field: "reminders.sedentary.period.every",
                   message: "every is 2 minutes, longer than the period 09:00–09:01 (1 minute)"),
    DiagnosticCase(marked: sedentary("period: 1️⃣{start: \"09:00\", end: \"18:00\"}"), field: "reminders.sedentary.period",
                   message: "every is required (e.g. every: 60m)"),
    DiagnosticCase(marked: sedentary("period: 1️⃣{end: \"18:00\", every: 1h}"), field: "reminders.sedentary.period",
                   message: "start is required (e.g. start: \"12:00\")"),
    DiagnosticCase(marked: sedentary("period: {start: \"09:00\", end: \"18:00\", every: 1h, 1️⃣evry: 2h}"),
                   field: "reminders.sedentary.period.evry", message: "unknown key \"evry\"; did you mean \"every\"?"),
    DiagnosticCase(marked: sedentary("period: 1️⃣60m"), field: "reminders.sedentary.period",
                   message: "expected a mapping with keys start, end, every, found text"),
  ]

  @Test(arguments: period)
  func periodRule(_ row: DiagnosticCase) { row.check() }

  static let elevenTimes = (0..<11).map { "\"\(10 + $0):00\"" }.joined(separator: ", ")
  static let tenTimes = (0..<10).map { "\"\(10 + $0):00\"" }.joined(separator: ", ")

  static let timePoints: [DiagnosticCase] = [
    .valid(sedentary("at: [\(tenTimes)]")),
    .valid(sedentary("at: [\"20:00\", \"08:00\"]")),
    DiagnosticCase(marked: sedentary("at: 1️⃣[\(elevenTimes)]"), field: "reminders.sedentary.at",
                   message: "holds 11 times; a reminder holds at most 10"),
    DiagnosticCase(marked: sedentary("at: 1️⃣[]"), field: "reminders.sedentary.at",
                   message: "needs at least one time (e.g. at: [\"08:00\"])"),
    DiagnosticCase(marked: sedentary("at: [\"08:00\", 1️⃣\"8:00\"]"), field: "reminders.sedentary.at[1]",
                   message: "08:00 is listed twice (first on line 3, column 10)"),
    DiagnosticCase(marked: sedentary("at: 1️⃣\"08:00\""), field: "reminders.sedentary.at",
                   message: "expected a list of times, e.g. [\"08:00\", \"20:00\"], found text"),
    DiagnosticCase(marked: sedentary("period: {start: \"00:01\", end: \"00:02\", every: 1m}\n    1️⃣at: [\"08:00\"]"), field: "reminders.sedentary.at",
                   message: "a reminder has either period or at (time points), not both"),
  ]

  @Test(arguments: timePoints)
  func timePointsRule(_ row: DiagnosticCase) { row.check() }

  @Test func timePointsAreHeldSorted() throws {
    let result = load(Self.sedentary("at: [\"20:00\", \"08:00\", \"12:30\"]"))
    let schedule = try #require(result.manifest?.reminders?.sedentary?.schedule?.value)
    #expect(schedule == .timePoints([480, 750, 1200].compactMap(MinuteOfDay.init(rawValue:))))
  }

  static let lunchBreaks: [(String, LunchBreak)] = [
    ("false", .off),
    ("true", LunchBreak(isEnabled: true)),
    ("{start: \"12:00\", end: \"13:30\"}",
     LunchBreak(isEnabled: true, window: .init(start: MinuteOfDay(rawValue: 720)!, end: MinuteOfDay(rawValue: 810)!))),
  ]

  @Test(arguments: lunchBreaks)
  func validLunchBreak(_ value: String, _ expected: LunchBreak) {
    let result = load(Self.sedentary("lunch_break: \(value)"))
    #expect(result.diagnostics == [])
    #expect(result.manifest?.reminders?.sedentary?.lunchBreak?.value == expected)
  }

  static let invalidLunchBreaks: [DiagnosticCase] = [
    DiagnosticCase(marked: sedentary("lunch_break: {start: \"14:00\", end: 1️⃣\"12:00\"}"),
                   field: "reminders.sedentary.lunch_break.end",
                   message: "end 12:00 must be later than start 14:00 (a lunch break cannot cross midnight)"),
    DiagnosticCase(marked: sedentary("lunch_break: 1️⃣{start: \"12:00\"}"), field: "reminders.sedentary.lunch_break",
                   message: "end is required (e.g. end: \"12:00\")"),
    DiagnosticCase(marked: sedentary("lunch_break: 1️⃣off"), field: "reminders.sedentary.lunch_break",
                   message: "\"off\" is not a boolean; write false (tsapply reads only true and false)"),
    DiagnosticCase(marked: sedentary("lunch_break: 1️⃣[]"), field: "reminders.sedentary.lunch_break",
                   message: "expected true, false or {start: \"12:00\", end: \"14:00\"}, found a list"),
  ]

  @Test(arguments: invalidLunchBreaks)
  func invalidLunchBreak(_ row: DiagnosticCase) { row.check() }

  static let texts: [DiagnosticCase] = [
    .valid(sedentary("name: \(String(repeating: "a", count: 32))")),
    .valid(sedentary("notes: \(String(repeating: "n", count: 64))")),
    .valid(sedentary("notes: \"\"")),
    DiagnosticCase(marked: sedentary("name: 1️⃣\(String(repeating: "a", count: 33))"), field: "reminders.sedentary.name",
                   message: "is 33 bytes; a reminder name may be at most 32 bytes of UTF-8: shorten it, e.g. to \"\(String(repeating: "a", count: 32))\""),
    DiagnosticCase(marked: sedentary("name: 1️⃣\(String(repeating: "药", count: 11))"), field: "reminders.sedentary.name",
                   message: "is 33 bytes (11 characters: characters outside A–Z, such as ä, ß or an emoji, take 2 to 4 bytes each); "
                     + "a reminder name may be at most 32 bytes of UTF-8: shorten it, e.g. to \"\(String(repeating: "药", count: 10))\""),
    DiagnosticCase(marked: sedentary("name: 1️⃣\"Größere Pause machen, Füße hoch\""), field: "reminders.sedentary.name",
                   message: "is 35 bytes (31 characters: characters outside A–Z, such as ä, ß or an emoji, take 2 to 4 bytes each); "
                     + "a reminder name may be at most 32 bytes of UTF-8: shorten it, e.g. to \"Größere Pause machen, Füße h\""),
    DiagnosticCase(marked: sedentary("name: 1️⃣\"\""), field: "reminders.sedentary.name", message: "must not be empty"),
    DiagnosticCase(marked: sedentary("notes: 1️⃣\(String(repeating: "n", count: 65))"), field: "reminders.sedentary.notes",
                   message: "is 65 bytes; notes may be at most 64 bytes of UTF-8: shorten it, e.g. to \"\(String(repeating: "n", count: 64))\""),
  ]

  @Test(arguments: texts)
  func nameAndNotesRule(_ row: DiagnosticCase) { row.check() }

  static func custom(_ items: String) -> String { "reminders:\n  custom:\n\(items)" }

  static let customReminders: [DiagnosticCase] = [
    .valid(custom("    - {name: Walk, at: [\"19:30\"]}\n    - {name: walk, at: [\"19:30\"]}\n")),
    .valid("reminders:\n  custom: []\n"),
    DiagnosticCase(marked: custom("    - {name: Walk, at: [\"19:30\"]}\n    - {name: 1️⃣Walk, at: [\"20:30\"]}\n"),
                   field: "reminders.custom[1].name",
                   message: "duplicate custom reminder name \"Walk\": also used on line 3, column 14 (names identify custom reminders)"),
    DiagnosticCase(marked: custom("    - 1️⃣{at: [\"19:30\"]}\n"), field: "reminders.custom[0]",
                   message: "name is required (names identify custom reminders)"),
    DiagnosticCase(marked: "reminders:\n  custom:1️⃣\n", field: "reminders.custom",
                   message: "has no value; remove the key to leave custom reminders unmanaged, or write custom: [] to delete them all"),
    DiagnosticCase(marked: "reminders:\n  custom: 1️⃣{name: Walk}\n", field: "reminders.custom",
                   message: "expected a list of reminders, e.g. - {name: Walk, at: [\"19:30\"]}, found a mapping"),
  ]

  @Test(arguments: customReminders)
  func customReminderRule(_ row: DiagnosticCase) { row.check() }
}
