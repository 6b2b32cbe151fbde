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

  /// Below this, an interval written as an integer is a warning: `every: 2` is 2 minutes, and
  /// was most likely meant as hours.
  static let integerIntervalWarningBelow = 5

  /// A warning for `every` written as an integer under `integerIntervalWarningBelow` (1–4):
  /// `every: 2 is 2 minutes (an integer interval counts minutes); write 2h for two hours, or 2m
  /// to keep 2 minutes`. Other values are left to `check`.
  static func checkInteger(every: Located<Int>, field: String, into diagnostics: inout [Diagnostic]) {
    guard (1..<integerIntervalWarningBelow).contains(every.value) else { return }
    let n = every.value, words = ["", "one hour", "two hours", "three hours", "four hours"]
    let minutes = "\(n) minute\(n == 1 ? "" : "s")"
    diagnostics.append(.warning(at: every.position, field: field,
      "every: \(n) is \(minutes) (an integer interval counts minutes); write \(n)h for \(words[n]), or \(n)m to keep \(minutes)"))
  }
}
