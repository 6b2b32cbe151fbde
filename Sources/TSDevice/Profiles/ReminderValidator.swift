import TSModel

/// The SDK's reminder validator, `+[TSRemindersModel validateReminders:]` and
/// `-[TSRemindersModel doesModelHasError]` (docs/platforms.md "Reminder validation"), with its codes and English
/// messages, in its order, stopping at the first error.
///
/// Checks that `Reminder` cannot express are skipped: a `reminderType` outside 0...4 and a
/// `timeType` other than period/point. Everything the SDK does not check (interval, name,
/// notes, number and order of time points, duplicate IDs) is not checked here either.
public enum ReminderValidator {
  /// The first error in `reminders`, or `nil` (an empty list is valid).
  /// - Parameter allowsOnce: `true` skips the "at least one repeat day" rule, for platforms that
  ///   accept `repeatDays == 0` (the roomy `default` profile); the SDK itself never skips it.
  public static func firstError(in reminders: [Reminder], allowsOnce: Bool = false) -> DeviceError? {
    for reminder in reminders {
      if let error = firstError(in: reminder, allowsOnce: allowsOnce) { return error }
    }
    return nil
  }

  /// The first error of one reminder (`doesModelHasError`), or `nil`.
  public static func firstError(in reminder: Reminder, allowsOnce: Bool = false) -> DeviceError? {
    if reminder.reminderId.isEmpty { return .reminder(.invalidParam, "Reminder ID cannot be empty") }
    if reminder.reminderType == .custom, integerValue(reminder.reminderId) <= 31 {
      return .reminder(.paramError, "Custom reminder ID must be 32 or greater")
    }
    if reminder.repeatDays.rawValue == 0, !allowsOnce {
      return .reminder(.paramError, "At least one repeat day must be selected")
    }
    if let message = scheduleError(reminder) ?? lunchError(reminder) {
      return .reminder(.paramError, message)
    }
    return nil
  }

  private static func scheduleError(_ r: Reminder) -> String? {
    let day = MinuteOfDay.range
    switch r.timeType {
    case .period:
      if !day.contains(r.startTime) { return "Start time must be between 0 and 1439 minutes" }
      if !day.contains(r.endTime) { return "End time must be between 0 and 1439 minutes" }
      if r.startTime > r.endTime { return "Start time must be earlier than end time" }
    case .point:
      if r.timePoints.isEmpty { return "Time points array cannot be empty for point time type" }
      if let bad = r.timePoints.first(where: { !day.contains($0) }) { return "Invalid time point: \(bad) minutes" }
    }
    return nil
  }

  private static func lunchError(_ r: Reminder) -> String? {
    guard r.isLunchBreakDNDEnabled else { return nil }
    let day = MinuteOfDay.range
    if !day.contains(r.lunchBreakDNDStartTime) { return "Lunch break DND start time must be between 0 and 1439 minutes" }
    if !day.contains(r.lunchBreakDNDEndTime) { return "Lunch break DND end time must be between 0 and 1439 minutes" }
    if r.lunchBreakDNDStartTime >= r.lunchBreakDNDEndTime { return "Lunch break DND start time must be earlier than end time" }
    return nil
  }

  /// `-[NSString integerValue]`: skips leading whitespace, reads an optional sign and the
  /// leading decimal digits; no digits gives 0 (so a non-numeric custom ID fails rule 2).
  public static func integerValue(_ text: String) -> Int {
    var scalars = Substring(text).drop(while: { $0 == " " || $0 == "\t" || $0 == "\n" })
    var sign = 1
    if let first = scalars.first, first == "+" || first == "-" {
      sign = first == "-" ? -1 : 1
      scalars = scalars.dropFirst()
    }
    var value = 0
    for character in scalars {
      guard let digit = character.wholeNumberValue, character.isASCII else { break }
      let (product, overflow) = value.multipliedReportingOverflow(by: 10)
      let (sum, sumOverflow) = product.addingReportingOverflow(digit)
      if overflow || sumOverflow { return sign > 0 ? Int.max : Int.min }
      value = sum
    }
    return sign * value
  }
}
