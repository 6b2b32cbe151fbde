import TSModel

/// A period reminder fires every `every` minutes from `start` to `end` on the same day.
///
/// Sources: sdk-facts.md §1.4 (start must not be after end; the SDK lets start == end pass, but a
/// period of zero length never fires, so tsapply requires start strictly before end, as the
/// Example app's editor does, §1.12; no crossing midnight) and §1.12 (interval > 0 and
/// interval ≤ end − start). The SDK itself does not check the interval (§1.4), so this rule is
/// what keeps a reminder from never firing.
enum PeriodRule {
  /// The period schedule, or errors at the offending field.
  static func check(start: Located<MinuteOfDay>, end: Located<MinuteOfDay>, every: Located<Int>, field: String,
                    into diagnostics: inout [Diagnostic]) -> ReminderSchedule? {
    guard start.value < end.value else {
      diagnostics.append(.error(at: end.position, field: "\(field).end",
        "end \(end.value) must be later than start \(start.value) (a period cannot cross midnight)"))
      return nil
    }
    let length = end.value.rawValue - start.value.rawValue
    guard every.value >= 1 else {
      diagnostics.append(.error(at: every.position, field: "\(field).every",
        "every must be at least 1 minute, found \(every.value)"))
      return nil
    }
    guard every.value <= length else {
      diagnostics.append(.error(at: every.position, field: "\(field).every",
        "every is \(every.value) minutes, longer than the period \(start.value)–\(end.value) (\(length) minutes)"))
      return nil
    }
    return .period(start: start.value, end: end.value, interval: every.value)
  }
}
