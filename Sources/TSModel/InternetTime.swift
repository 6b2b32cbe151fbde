import Foundation

/// Times as tsapply writes them in its files and on the wire: ISO 8601 in UTC with
/// milliseconds, `2026-12-01T09:30:00.123Z` (the monitor's events, a simulated watch's journal,
/// a bridge's events). One writer and one reader for every layer, from the simulator up.
public enum InternetTime {
  /// `time` as ISO 8601 in UTC with milliseconds: `2026-12-01T09:30:00.123Z` (rounded to the
  /// nearest millisecond).
  public static func text(_ time: Date) -> String {
    let total = Int64((time.timeIntervalSince1970 * 1000).rounded())
    var (whole, milliseconds) = total.quotientAndRemainder(dividingBy: 1000)
    if milliseconds < 0 { (whole, milliseconds) = (whole - 1, milliseconds + 1000) }
    var seconds = time_t(whole)
    var parts = tm()
    gmtime_r(&seconds, &parts)
    // Digits put in place, not `String(format:)`: every event, record and status line is timed
    // here, and Foundation's formatting cost a thousand-watch monitor's start 2 % of its CPU.
    var text = ""
    text.reserveCapacity(24)
    func digits(_ value: Int, _ width: Int) {
      let written = String(value)
      if written.count < width { text += String(repeating: "0", count: width - written.count) }
      text += written
    }
    digits(Int(parts.tm_year) + 1900, 4)
    text += "-"
    digits(Int(parts.tm_mon) + 1, 2)
    text += "-"
    digits(Int(parts.tm_mday), 2)
    text += "T"
    digits(Int(parts.tm_hour), 2)
    text += ":"
    digits(Int(parts.tm_min), 2)
    text += ":"
    digits(Int(parts.tm_sec), 2)
    text += "."
    digits(Int(milliseconds), 3)
    return text + "Z"
  }

  /// The time `text` names: ISO 8601 with seconds, `Z` or an offset, fractional seconds
  /// allowed (`text(_:)`'s form, `2026-12-02T09:30:00Z`, `2026-12-02T10:30:00.5+01:00`); `nil`
  /// for anything else (never a guess).
  public static func date(_ text: String) -> Date? {
    guard text.utf8.count <= 64 else { return nil }
    let bytes = Array(text.utf8)
    if isWrittenForm(bytes) { return written(bytes) }
    return lock.withLock { fractional.date(from: text) ?? plain.date(from: text) }
  }

  /// Whether `bytes` are laid out as `text(_:)` writes: `YYYY-MM-DDTHH:MM:SS.mmmZ`.
  private static func isWrittenForm(_ bytes: [UInt8]) -> Bool {
    bytes.count == 24 && bytes[4] == UInt8(ascii: "-") && bytes[7] == UInt8(ascii: "-") && bytes[10] == UInt8(ascii: "T")
      && bytes[13] == UInt8(ascii: ":") && bytes[16] == UInt8(ascii: ":") && bytes[19] == UInt8(ascii: ".")
      && bytes[23] == UInt8(ascii: "Z")
  }

  /// A time in `text(_:)`'s own form, read without a formatter (listeners read one per event)
  /// and strictly: a date or hour that does not exist (Feb 29 of a common year, 24:00, which
  /// the formatters let through) is `nil`.
  private static func written(_ bytes: [UInt8]) -> Date? {
    func number(_ range: Range<Int>) -> Int? {
      var value = 0
      for index in range {
        guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) else { return nil }
        value = value * 10 + Int(bytes[index] - UInt8(ascii: "0"))
      }
      return value
    }
    guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), let hour = number(11..<13),
          let minute = number(14..<16), let second = number(17..<19), let milliseconds = number(20..<23),
          (1...12).contains(month), hour < 24, minute < 60, second < 60 else { return nil }
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    let monthDays = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    guard (1...monthDays[month - 1]).contains(day) else { return nil }
    // Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
    let shifted = month <= 2 ? year - 1 : year
    let era = (shifted >= 0 ? shifted : shifted - 399) / 400
    let yearOfEra = shifted - era * 400
    let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    let days = era * 146_097 + dayOfEra - 719_468
    let seconds = ((days * 24 + hour) * 60 + minute) * 60 + second
    return Date(timeIntervalSince1970: Double(seconds * 1000 + milliseconds) / 1000)
  }

  private static let lock = NSLock()
  nonisolated(unsafe) private static let fractional: ISO8601DateFormatter = {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return formatter
  }()
  nonisolated(unsafe) private static let plain: ISO8601DateFormatter = {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime]
    return formatter
  }()
}
