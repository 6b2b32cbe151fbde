import TSModel

/// Every time of day is 0–1439 minutes from midnight: 00:00 through 23:59. A time written as
/// an integer is minutes (the SDK's unit), which surprises people (`at: [800]` is 13:20): 1–23
/// (hours, surely) is an error naming both readings, any other a warning showing the clock time
/// it is and the "HH:MM" to write.
///
/// Source: docs/platforms.md "Reminder validation" (the SDK validator answers 3002 for a start, end, time point or
/// lunch-break time outside 0…1439) and reminders.txt ("Time values are in minutes from
/// midnight (0-1439)"). "24:00", "23:60" and 1440 are refused.
enum TimeOfDayRule {
  /// The message for text that is not a time of day at all.
  /// With the spelling meant when there is one (docs/manifest.md "Common mistakes and their
  /// fixes"): curly quotes named, `8am` / `8.00` → `"08:00"`.
  /// Midnight written as 24 o'clock at the end of a period (`field` ends in `.end`) is told the
  /// day's last minute alone: "00:00" would be refused next, as a period cannot cross midnight.
  static func notATime(_ text: String, field: String = "") -> String {
    if let inner = MistakeHints.curlyQuoted(text) { return MistakeHints.curlyQuoteMessage(text, inner: inner) }
    var message = "\"\(text)\" is not a time of day (expected HH:MM, 00:00–23:59)"
    if let meant = MistakeHints.time(text) ?? (text.allSatisfy { $0.isASCII && $0.isNumber } ? MistakeHints.hoursAndMinutes(text) : nil) {
      message += "; write \"\(meant)\""
    } else if ["24:00", "24.00", "24h", "24"].contains(text) {
      message += field.hasSuffix(".end") ? "; a period ends within its day: write \"23:59\" to end it at midnight"
        : "; midnight is \"00:00\", and the day's last minute \"23:59\""
    }
    return message
  }

  /// The time `hour`:`minute`, or an error at `position` when it is not on a 24-hour clock.
  static func check(hour: Int, minute: Int, text: String, at position: SourcePosition, field: String,
                    into diagnostics: inout [Diagnostic]) -> MinuteOfDay? {
    guard let time = MinuteOfDay(hour: hour, minute: minute) else {
      diagnostics.append(.error(at: position, field: field, notATime(text, field: field)))
      return nil
    }
    return time
  }

  /// The time `minutes` after midnight, or an error when outside 0–1439 or 1–23 (hours,
  /// surely). Any other is a warning (`integerWarning`): it was written as an integer.
  static func check(minutes: Int, text: String, at position: SourcePosition, field: String,
                    into diagnostics: inout [Diagnostic]) -> MinuteOfDay? {
    guard let time = MinuteOfDay(rawValue: minutes) else {
      var message = "\(text) is not a time of day (expected minutes from midnight, 0–1439, or HH:MM)"
      if let meant = MistakeHints.hoursAndMinutes(text) { message += "; write \"\(meant)\" if you meant hours and minutes" }
      diagnostics.append(.error(at: position, field: field, message))
      return nil
    }
    if (1...23).contains(minutes), let meant = MinuteOfDay(hour: minutes, minute: 0) {
      // Hours, surely (`at: [8, 20]`): the watch would sound at 00:08 and 00:20. An error, as an
      // interval without a unit (`every: 2`) is, so an unattended apply never moves a medicine
      // reminder to just after midnight.
      diagnostics.append(.error(at: position, field: field,
        "\(minutes) is \(time) (an integer time counts minutes from midnight), most likely meant as \(spoken(meant)); "
          + "write \"\(meant)\" for \(spoken(meant)), or \"\(time)\" if you do mean \(time)"))
      return nil
    }
    diagnostics.append(.warning(at: position, field: field, integerWarning(time)))
    return time
  }

  /// The integers a time may be written as: 0, and 24–1439 (1–23 are hours, surely: an error).
  /// What the manifest schema allows (`ManifestSchema.time`).
  static let integers: [ClosedRange<Int>] = [0...0, 24...MinuteOfDay.range.upperBound]

  /// `800 is 13:20 (an integer time counts minutes from midnight); write "08:00" if you meant
  /// eight o'clock, or "13:20" to keep this time`. The other reading is the one people mean when
  /// they write an integer: hours and minutes for 100–2359 (`830` → 08:30); without one (`90`)
  /// the message only gives the "HH:MM" of the time.
  static func integerWarning(_ time: MinuteOfDay) -> String {
    let minutes = time.rawValue
    let meant: MinuteOfDay? = minutes >= 100 ? MinuteOfDay(hour: minutes / 100, minute: minutes % 100) : nil
    var message = "\(minutes) is \(time) (an integer time counts minutes from midnight); "
    if let meant, meant != time {
      message += "write \"\(meant)\" if you meant \(spoken(meant)), or \"\(time)\" to keep this time"
    } else {
      message += "write \"\(time)\" to say so"
    }
    return message
  }

  /// "eight o'clock" for a whole hour 1–12, "midnight" for 00:00, else "HH:MM" (`20:00`, `08:30`).
  private static func spoken(_ time: MinuteOfDay) -> String {
    let hours = ["midnight", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"]
    guard time.minute == 0, time.hour <= 12 else { return time.description }
    return time.hour == 0 ? hours[0] : hours[time.hour] + " o'clock"
  }
}
