import Testing
import TSManifest
import TSModel
import TSTestSupport

/// `repeat`: presets, day names, lists, and the `weekday` trap (RepeatDaysRule, docs/platforms.md "Values and units").
@Suite struct RepeatDaysRuleTests {
  static func drinkingRepeat(_ value: String) -> String { "reminders:\n  drinking:\n    repeat: \(value)\n" }

  static let valid: [(String, Int)] = [
    ("everyday", 127), ("workday", 31), ("weekend", 96), ("once", 0), ("Everyday", 127),
    ("monday", 1), ("SUN", 64), ("[mon, wed, fri]", 21), ("[Saturday, sunday]", 96),
    ("[tue]", 2), ("[mon, tue, wed, thu, fri, sat, sun]", 127), ("\"workday\"", 31),
  ]

  @Test(arguments: valid)
  func validRepeat(_ value: String, _ mask: Int) {
    let result = load(Self.drinkingRepeat(value))
    #expect(result.diagnostics == [])
    #expect(result.manifest?.reminders?.drinking?.repeatDays?.value == RepeatDays(rawValue: mask))
  }

  static let weekdayMessage = "\"weekday\" is ambiguous: the SDK's eTSReminderRepeatWeekday means Saturday+Sunday; write workday (Monday–Friday) or weekend (Saturday+Sunday)"

  static let invalid: [DiagnosticCase] = [
    DiagnosticCase(marked: drinkingRepeat("1️⃣weekday"), field: "reminders.drinking.repeat", message: weekdayMessage),
    DiagnosticCase(marked: drinkingRepeat("[mon, 1️⃣weekday]"), field: "reminders.drinking.repeat[1]", message: weekdayMessage),
    DiagnosticCase(marked: drinkingRepeat("1️⃣workdays"), field: "reminders.drinking.repeat",
      message: "\"workdays\" is not a repeat rule; did you mean \"workday\"? (expected everyday, workday, weekend, once, a day name, or a list of days such as [mon, wed, fri])"),
    DiagnosticCase(marked: drinkingRepeat("1️⃣daily"), field: "reminders.drinking.repeat",
      message: "\"daily\" is not a repeat rule; write everyday (expected everyday, workday, weekend, once, a day name, or a list of days such as [mon, wed, fri])"),
    DiagnosticCase(marked: drinkingRepeat("1️⃣[]"), field: "reminders.drinking.repeat",
      message: "the list of days is empty; list at least one day, or write once"),
    DiagnosticCase(marked: drinkingRepeat("[mon, 1️⃣Mon]"), field: "reminders.drinking.repeat[1]",
      message: "\"Mon\" is listed twice (first on line 3, column 14)"),
    DiagnosticCase(marked: drinkingRepeat("[mon, 1️⃣workday]"), field: "reminders.drinking.repeat[1]",
      message: "\"workday\" is not a day name (expected mon…sun or monday…sunday)"),
    DiagnosticCase(marked: "reminders:\n  drinking:\n    repeat:1️⃣\n", field: "reminders.drinking.repeat",
      message: "expected everyday, workday, weekend, once, a day name, or a list of days such as [mon, wed, fri], found nothing (null)"),
    DiagnosticCase(marked: drinkingRepeat("[mon, 1️⃣[tue]]"), field: "reminders.drinking.repeat[1]",
      message: "expected text, found a list"),
  ]

  @Test(arguments: invalid)
  func invalidRepeat(_ row: DiagnosticCase) { row.check() }
}
