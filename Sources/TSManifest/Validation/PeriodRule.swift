import TSModel

/// A period reminder fires every `every` minutes from `start` to `end` on the same day.
///
/// Sources: docs/platforms.md "Reminder validation" (start must not be after end; the SDK lets start == end pass, but a
/// period of zero length never fires, so tsapply requires start strictly before end, as the
/// Example app's editor does, docs/platforms.md "The example app's editor"; no crossing midnight) and docs/platforms.md "The example app's editor" (interval > 0 and
/// interval ≤ end − start). The SDK itself does not check the interval (docs/platforms.md "Reminder validation"), so this rule is
/// what keeps a reminder from never firing.
enum PeriodRule {
  /// The period schedule, or errors at the offending field.
  static func check(start: Located<MinuteOfDay>, end: Located<MinuteOfDay>, every: Located<Int>, field: String,
                    into diagnostics: inout [Diagnostic]) -> ReminderSchedule? {
    // The order of start and end and the interval's lower bound are separate mistakes, both
    // reported; the interval's upper bound needs a valid period.
    let isOrdered = start.value < end.value
    if !isOrdered {
      diagnostics.append(.error(at: end.position, field: "\(field).end",
        "end \(end.value) must be later than start \(start.value) (a period cannot cross midnight)"))
    }
    guard every.value >= 1 else {
      diagnostics.append(.error(at: every.position, field: "\(field).every",
        "every must be at least 1 minute, found \(every.value)"))
      return nil
    }
    guard isOrdered else { return nil }
    let length = end.value.rawValue - start.value.rawValue
    guard every.value <= length else {
      diagnostics.append(.error(at: every.position, field: "\(field).every",
        "every is \(counted(every.value, "minute")), longer than the period \(start.value)–\(end.value) (\(counted(length, "minute")))"))
      return nil
    }
    return .period(start: start.value, end: end.value, interval: every.value)
  }

  /// Below this, an interval written as an integer is an error: `every: 2` is 2 minutes, and
  /// was most likely meant as hours, so the unit must be written.
  static let integerIntervalUnitBelow = 5

  /// An error for `every` written as an integer under `integerIntervalUnitBelow` (1–4):
  /// `every: 2 without a unit is 2 minutes, most likely meant as hours; write 2h for two hours,
  /// or 5m or more with the unit for minutes (2m if you do mean 2 minutes)`. Other values are
  /// left to `check`.
  static func checkInteger(every: Located<Int>, field: String, into diagnostics: inout [Diagnostic]) {
    guard (1..<integerIntervalUnitBelow).contains(every.value) else { return }
    let n = every.value, words = ["", "one hour", "two hours", "three hours", "four hours"]
    let minutes = "\(n) minute\(n == 1 ? "" : "s")"
    diagnostics.append(.error(at: every.position, field: field,
      "every: \(n) without a unit is \(minutes), most likely meant as hours; write \(n)h for \(words[n]), or write minutes with their unit, such as 5m (\(n)m if you do mean \(minutes))"))
  }
}
