/// A time of day as minutes since local midnight, 0...1439 (SDK: `startTime`, `endTime`,
/// `timePoints`, `lunchBreakDNDStartTime`; reminders.txt "Time values are in minutes from
/// midnight (0-1439)").
public struct MinuteOfDay: RawRepresentable, Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
  /// The valid range of minutes, 0 (00:00) through 1439 (23:59).
  public static let range = 0...1439

  /// Minutes since midnight, always within `range`.
  public let rawValue: Int

  /// Returns `nil` when `rawValue` is outside 0...1439.
  public init?(rawValue: Int) {
    guard Self.range.contains(rawValue) else { return nil }
    self.rawValue = rawValue
  }

  /// Returns `nil` unless `hour` is 0...23 and `minute` is 0...59.
  public init?(hour: Int, minute: Int) {
    guard (0...23).contains(hour), (0...59).contains(minute) else { return nil }
    self.rawValue = hour * 60 + minute
  }

  /// The hour, 0...23.
  public var hour: Int { rawValue / 60 }
  /// The minute within the hour, 0...59.
  public var minute: Int { rawValue % 60 }

  /// Zero-padded 24-hour form, `"HH:MM"` (e.g. `"06:30"`).
  public var description: String {
    let h = hour < 10 ? "0\(hour)" : "\(hour)"
    let m = minute < 10 ? "0\(minute)" : "\(minute)"
    return "\(h):\(m)"
  }

  public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

  public init(from decoder: any Decoder) throws {
    let value = try decoder.singleValueContainer().decode(Int.self)
    guard let minute = MinuteOfDay(rawValue: value) else {
      throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
        debugDescription: "\(value) is not a minute of the day (0...1439)"))
    }
    self = minute
  }

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(rawValue)
  }
}
