/// Durations as people write them in tsapply's files and on its command line, in Terraform's
/// (Go's) spelling: a sequence of numbers with units `ms`, `s`, `m`, `h`, e.g. `0s`, `30s`,
/// `1m30s`, `500ms`; a bare `0` is zero. One parser for the command line (`DurationArgument`)
/// and the fleet file (`rollout: pause:`).
public enum DurationText {
  /// The longest duration accepted: one week.
  public static let maximum = Duration.seconds(7 * 24 * 3600)

  /// The duration `text` spells, or `nil` when it is not one (or is longer than `maximum`).
  public static func parse(_ text: String) -> Duration? {
    if text == "0" { return .zero }
    var total = Duration.zero
    var rest = Substring(text)
    guard !rest.isEmpty else { return nil }
    while !rest.isEmpty {
      let digits = rest.prefix { $0.isASCII && $0.isNumber }
      guard !digits.isEmpty, digits.count <= 9, let number = Int64(digits) else { return nil }
      rest = rest.dropFirst(digits.count)
      let unit = rest.prefix { $0.isASCII && $0.isLetter }
      rest = rest.dropFirst(unit.count)
      switch unit {
      case "ms": total += .milliseconds(number)
      case "s": total += .seconds(number)
      case "m": total += .seconds(number * 60)
      case "h": total += .seconds(number * 3600)
      default: return nil
      }
      if total > maximum { return nil }
    }
    return total
  }

  /// `duration` written back in the same spelling, shortest first: `10m`, `1h30m`, `45s`, `500ms`.
  public static func text(_ duration: Duration) -> String {
    let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    if milliseconds == 0 { return "0s" }
    if milliseconds % 1000 != 0 { return "\(milliseconds)ms" }
    var seconds = milliseconds / 1000
    var text = ""
    if seconds >= 3600 { text += "\(seconds / 3600)h"; seconds %= 3600 }
    if seconds >= 60 { text += "\(seconds / 60)m"; seconds %= 60 }
    if seconds > 0 { text += "\(seconds)s" }
    return text
  }
}
