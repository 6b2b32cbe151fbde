import TSModel

/// Every time of day is 0–1439 minutes from midnight: 00:00 through 23:59.
///
/// Source: sdk-facts.md §1.4 (the SDK validator answers 3002 for a start, end, time point or
/// lunch-break time outside 0…1439) and reminders.txt ("Time values are in minutes from
/// midnight (0-1439)"). "24:00", "23:60" and 1440 are refused.
enum TimeOfDayRule {
  /// The message for text that is not a time of day at all.
  static func notATime(_ text: String) -> String {
    "\"\(text)\" is not a time of day (expected HH:MM, 00:00–23:59)"
  }

  /// The time `hour`:`minute`, or an error at `position` when it is not on a 24-hour clock.
  static func check(hour: Int, minute: Int, text: String, at position: SourcePosition, field: String,
                    into diagnostics: inout [Diagnostic]) -> MinuteOfDay? {
    guard let time = MinuteOfDay(hour: hour, minute: minute) else {
      diagnostics.append(.error(at: position, field: field, notATime(text)))
      return nil
    }
    return time
  }

  /// The time `minutes` after midnight, or an error when outside 0–1439.
  static func check(minutes: Int, text: String, at position: SourcePosition, field: String,
                    into diagnostics: inout [Diagnostic]) -> MinuteOfDay? {
    guard let time = MinuteOfDay(rawValue: minutes) else {
      diagnostics.append(.error(at: position, field: field,
        "\(text) is not a time of day (expected minutes from midnight, 0–1439, or HH:MM)"))
      return nil
    }
    return time
  }
}
