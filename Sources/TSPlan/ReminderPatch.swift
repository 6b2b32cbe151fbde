import TSModel

/// The manifest's fields for one reminder, already in the form the watch stores them: the one
/// overlay used both to compute a plan's `after` value and, by the applier, to fill in the
/// device's custom-reminder template.
///
/// A `nil` field is left as the reminder holds it (unmanaged, or not stored by the platform).
/// `name` and `notes` are already cut to the platform's byte limit (code-point truncation as the
/// SDK's `truncateToMaxBytes:`, docs/platforms.md "Contacts"), so writing them and reading back gives the
/// same text.
public struct ReminderPatch: Hashable, Codable, Sendable {
  /// `reminderName`, as stored.
  public var name: String?
  /// `isEnabled`; a custom reminder being created gets `true` when the manifest leaves it out.
  public var isEnabled: Bool?
  /// `repeatDays` mask (Monday = bit 0).
  public var repeatDays: RepeatDays?
  /// Time points (sets `timeType` point and `timePoints`, sorted) or a period (sets `timeType`
  /// period, `startTime`, `endTime`, `interval` in minutes).
  public var schedule: ReminderSchedule?
  /// Lunch-break do-not-disturb; a `nil` window keeps the reminder's times.
  public var lunchBreak: LunchBreak?
  /// `notes`, as stored.
  public var notes: String?

  /// A patch; every field left `nil` is unmanaged.
  public init(name: String? = nil, isEnabled: Bool? = nil, repeatDays: RepeatDays? = nil,
              schedule: ReminderSchedule? = nil, lunchBreak: LunchBreak? = nil, notes: String? = nil) {
    self.name = name
    self.isEnabled = isEnabled
    self.repeatDays = repeatDays
    self.schedule = schedule
    self.lunchBreak = lunchBreak
    self.notes = notes
  }

  /// `reminder` with every non-nil field of the patch written over it; every other field,
  /// including `reminderId` and `reminderType`, is kept. Time points are written sorted
  /// ascending (minutes from midnight); a period leaves `timePoints` alone and time points leave
  /// `startTime`/`endTime`/`interval` alone, as the SDK ignores the fields of the other time type.
  public func applying(to reminder: Reminder) -> Reminder {
    var result = reminder
    if let name { result.reminderName = name }
    if let isEnabled { result.isEnabled = isEnabled }
    if let repeatDays { result.repeatDays = repeatDays }
    switch schedule {
    case .timePoints(let points)?:
      result.timeType = .point
      result.timePoints = points.map(\.rawValue).sorted()
    case let .period(start, end, interval)?:
      result.timeType = .period
      result.startTime = start.rawValue
      result.endTime = end.rawValue
      result.interval = interval
    case nil:
      break
    }
    if let lunchBreak {
      result.isLunchBreakDNDEnabled = lunchBreak.isEnabled
      if let window = lunchBreak.window {
        result.lunchBreakDNDStartTime = window.start.rawValue
        result.lunchBreakDNDEndTime = window.end.rawValue
      }
    }
    if let notes { result.notes = notes }
    return result
  }
}
