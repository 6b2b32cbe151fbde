/// Random identifiers as tsapply writes them in records and events.
public enum RandomHex {
  /// 64 bits from the system's random source as 16 lower-case hex digits, zero-padded
  /// (`5e1b7a90c4d2e6f1`): event ids, publication tokens, record epochs. Built without
  /// `String(format:)`, which costs more than the random bits (a thousand-watch monitor's start
  /// makes thousands).
  public static func sixteenDigits() -> String {
    var generator = SystemRandomNumberGenerator()
    let hex = String(generator.next() as UInt64, radix: 16)
    return String(repeating: "0", count: 16 - hex.count) + hex
  }
}
