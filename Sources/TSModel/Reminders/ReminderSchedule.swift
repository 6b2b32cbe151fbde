/// When a reminder fires: a list of time points, or a period with an interval.
///
/// SDK: `timeType` point (1) uses `timePoints`; period (0) uses `startTime`, `endTime` and
/// `interval` (reminders.txt, TSRemindersModel). Time points are held sorted and without
/// duplicates, so two schedules that fire at the same times compare equal.
public enum ReminderSchedule: Hashable, Codable, Sendable {
  /// Fires at each time; sorted ascending, no duplicates, 1...10 entries after validation.
  case timePoints([MinuteOfDay])
  /// Fires every `interval` minutes from `start` to `end` (start < end; no crossing midnight).
  case period(start: MinuteOfDay, end: MinuteOfDay, interval: Int)

  /// The SDK time type that stores this schedule.
  public var timeType: ReminderTimeType {
    switch self {
    case .timePoints: .point
    case .period: .period
    }
  }
}

/// Lunch-break do-not-disturb as the manifest states it.
///
/// SDK fields `isLunchBreakDNDEnabled`, `lunchBreakDNDStartTime`, `lunchBreakDNDEndTime`
/// (start < end strictly when enabled; docs/platforms.md "Reminder validation", "Lunch break"). `window == nil` with
/// `isEnabled == true` means "on, keep the watch's times" (needed for Fit-Basic, which stores
/// only the on/off flag).
public struct LunchBreak: Hashable, Codable, Sendable {
  /// Whether do-not-disturb applies during the lunch break.
  public var isEnabled: Bool
  /// The lunch window when the manifest gives one; `nil` leaves the watch's times alone.
  public var window: Window?

  /// The start and end of the lunch break, start strictly before end.
  public struct Window: Hashable, Codable, Sendable {
    /// Start of the lunch break, minutes since midnight.
    public var start: MinuteOfDay
    /// End of the lunch break, minutes since midnight; after `start`.
    public var end: MinuteOfDay
    /// A window from `start` to `end`; the order is checked by validation, not here.
    public init(start: MinuteOfDay, end: MinuteOfDay) {
      self.start = start
      self.end = end
    }
  }

  /// Lunch break on or off, with an optional window (`nil` keeps the watch's times).
  public init(isEnabled: Bool, window: Window? = nil) {
    self.isEnabled = isEnabled
    self.window = window
  }

  /// Lunch break off.
  public static let off = LunchBreak(isEnabled: false)
}
