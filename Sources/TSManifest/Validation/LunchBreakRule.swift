import TSModel

/// A lunch-break window starts strictly before it ends, within one day.
///
/// Source: docs/platforms.md "Reminder validation" (when lunch-break do-not-disturb is enabled, start and end are
/// 0…1439 and `start >= end` is refused with 3002; no wrap past midnight) and docs/platforms.md "Lunch break".
enum LunchBreakRule {
  /// The window, or an error at `end`.
  static func check(start: Located<MinuteOfDay>, end: Located<MinuteOfDay>, field: String,
                    into diagnostics: inout [Diagnostic]) -> LunchBreak.Window? {
    guard start.value < end.value else {
      diagnostics.append(.error(at: end.position, field: "\(field).end",
        "end \(end.value) must be later than start \(start.value) (a lunch break cannot cross midnight)"))
      return nil
    }
    return LunchBreak.Window(start: start.value, end: end.value)
  }
}
