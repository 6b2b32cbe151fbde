/// A reminder as the watch holds it: the SDK's `TSRemindersModel`, field for field.
///
/// Fields are raw SDK values (integers in minutes, a bit mask), not validated types, because a
/// watch can hold values a manifest never could, and the simulated watch must answer invalid
/// writes the way the SDK does (e.g. 3002 for `startTime` 1500). Units: every time is minutes
/// since midnight; `interval` is minutes.
public struct Reminder: Hashable, Codable, Sendable {
  /// Device-assigned ID as a decimal string: "0", "1", "2" for built-ins; 32 and up for custom
  /// reminders on Npk (docs/platforms.md "Reminder IDs").
  public var reminderId: String
  /// The name; some platforms cut it (Fit: 30 bytes) or do not store it (Fit-Basic).
  public var reminderName: String
  /// Whether the reminder is active (SDK getter `isEnabled`).
  public var isEnabled: Bool
  /// The SDK type (1 sedentary, 2 drinking, 3 medicine, 4 custom).
  public var reminderType: ReminderType
  /// Repeat days bit mask, Monday = bit 0.
  public var repeatDays: RepeatDays
  /// Whether `timePoints` (point) or `startTime`/`endTime`/`interval` (period) apply.
  public var timeType: ReminderTimeType
  /// Period start, minutes since midnight.
  public var startTime: Int
  /// Period end, minutes since midnight.
  public var endTime: Int
  /// Period interval, minutes.
  public var interval: Int
  /// Time points, minutes since midnight, in the order the watch holds them.
  public var timePoints: [Int]
  /// Free-text notes; Npk allows 64 bytes, Fit stores 60.
  public var notes: String
  /// Lunch-break do-not-disturb on/off.
  public var isLunchBreakDNDEnabled: Bool
  /// Lunch-break start, minutes since midnight.
  public var lunchBreakDNDStartTime: Int
  /// Lunch-break end, minutes since midnight.
  public var lunchBreakDNDEndTime: Int

  /// Creates a reminder; every field has the SDK's zero default except `reminderId` and type.
  public init(
    reminderId: String, reminderName: String = "", isEnabled: Bool = false,
    reminderType: ReminderType, repeatDays: RepeatDays = [], timeType: ReminderTimeType = .period,
    startTime: Int = 0, endTime: Int = 0, interval: Int = 0, timePoints: [Int] = [],
    notes: String = "", isLunchBreakDNDEnabled: Bool = false,
    lunchBreakDNDStartTime: Int = 0, lunchBreakDNDEndTime: Int = 0
  ) {
    self.reminderId = reminderId
    self.reminderName = reminderName
    self.isEnabled = isEnabled
    self.reminderType = reminderType
    self.repeatDays = repeatDays
    self.timeType = timeType
    self.startTime = startTime
    self.endTime = endTime
    self.interval = interval
    self.timePoints = timePoints
    self.notes = notes
    self.isLunchBreakDNDEnabled = isLunchBreakDNDEnabled
    self.lunchBreakDNDStartTime = lunchBreakDNDStartTime
    self.lunchBreakDNDEndTime = lunchBreakDNDEndTime
  }

  /// The manifest kind of this reminder; `nil` for type `unknown`.
  public var kind: ReminderKind? { ReminderKind(reminderType) }
}
