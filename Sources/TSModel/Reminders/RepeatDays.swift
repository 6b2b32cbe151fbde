/// The days a reminder repeats on: the SDK's `TSRemindersRepeat` bit mask.
///
/// Monday is bit 0 (1) … Sunday is bit 6 (64), as in the SDK, the Npk wire field and FitCloud's
/// cycle (docs/platforms.md "Values and units"). Presets: `workday` = 31 (Mon–Fri), `weekend` = 96 (Sat+Sun),
/// `everyday` = 127. The empty mask (0) is "once": rejected by the SDK validator and Npk devices
/// (3002), accepted by Fit devices as a one-shot reminder (docs/platforms.md "Repeat days and once").
public struct RepeatDays: OptionSet, Hashable, Codable, Sendable, CustomStringConvertible {
  /// The SDK bit mask; only bits 0...6 are meaningful.
  public let rawValue: Int
  /// Wraps a mask as is (bits above 6 are kept so a device's odd value is shown faithfully).
  public init(rawValue: Int) { self.rawValue = rawValue }

  /// Monday: bit 0 (1).
  public static let monday = RepeatDays(rawValue: 1 << 0)
  /// Tuesday: bit 1 (2).
  public static let tuesday = RepeatDays(rawValue: 1 << 1)
  /// Wednesday: bit 2 (4).
  public static let wednesday = RepeatDays(rawValue: 1 << 2)
  /// Thursday: bit 3 (8).
  public static let thursday = RepeatDays(rawValue: 1 << 3)
  /// Friday: bit 4 (16).
  public static let friday = RepeatDays(rawValue: 1 << 4)
  /// Saturday: bit 5 (32).
  public static let saturday = RepeatDays(rawValue: 1 << 5)
  /// Sunday: bit 6 (64).
  public static let sunday = RepeatDays(rawValue: 1 << 6)

  /// Monday through Friday (31).
  public static let workday: RepeatDays = [.monday, .tuesday, .wednesday, .thursday, .friday]
  /// Saturday and Sunday (96). The pre-beta8 SDK called this `eTSReminderRepeatWeekday`.
  public static let weekend: RepeatDays = [.saturday, .sunday]
  /// All seven days (127).
  public static let everyday: RepeatDays = [.workday, .weekend]
  /// No day: a one-shot reminder (0).
  public static let once = RepeatDays([])

  /// The seven days in SDK bit order, with their three-letter lowercase names.
  public static let days: [(name: String, day: RepeatDays)] = [
    ("mon", .monday), ("tue", .tuesday), ("wed", .wednesday), ("thu", .thursday),
    ("fri", .friday), ("sat", .saturday), ("sun", .sunday),
  ]

  /// The named presets, in the spelling the manifest uses.
  public static let presets: [(name: String, days: RepeatDays)] = [
    ("everyday", .everyday), ("workday", .workday), ("weekend", .weekend), ("once", .once),
  ]

  /// The canonical manifest spelling: a preset name when one matches exactly, otherwise the
  /// three-letter day names in Monday-first order, e.g. `[mon, wed, fri]`.
  public var description: String {
    if let preset = Self.presets.first(where: { $0.days == self }) { return preset.name }
    return "[" + dayNames.joined(separator: ", ") + "]"
  }

  /// The three-letter names of the days set, Monday first.
  public var dayNames: [String] {
    Self.days.filter { contains($0.day) }.map(\.name)
  }
}
