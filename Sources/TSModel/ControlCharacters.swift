/// Control characters in text that came from a manifest or a watch: finding them (validation)
/// and escaping them (human output), so such text can never drive a terminal.
///
/// A control character is a C0 control (U+0000–U+001F), DEL (U+007F) or a C1 control
/// (U+0080–U+009F): the Unicode general category Cc. Terminals act on them (ESC starts an
/// escape sequence, BEL rings, CR overwrites the line), so names and notes may not hold them
/// (the manifest rules) and human output escapes any that a watch still holds. Human output
/// escapes invisible characters the same way (`InvisibleCharacters`: zero-width and directional
/// characters, spaces other than U+0020), so one name cannot pass for another.
public enum ControlCharacters {
  /// Whether `scalar` is a C0 control, DEL or a C1 control.
  public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
    scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
  }

  /// The first control character in `text`, if any.
  public static func first(in text: String) -> Unicode.Scalar? {
    // By bytes first: in UTF-8 a control character is a byte below 0x20, 0x7F, or 0xC2 followed
    // by 0x80–0x9F (C1); text without any is decoded no further.
    var text = text
    return text.withUTF8(mayHoldOne) ? text.unicodeScalars.first(where: isControl) : nil
  }

  /// Whether the UTF-8 `bytes` may hold a control character: a byte below 0x20, 0x7F, or 0xC2
  /// followed by 0x80–0x9F (C1). `false` means they hold none; `true` is decided by `first(in:)`.
  public static func mayHoldOne(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    var previous: UInt8 = 0
    for byte in bytes {
      if byte < 0x20 || byte == 0x7F || (previous == 0xC2 && byte < 0xA0) { return true }
      previous = byte
    }
    return false
  }

  /// `U+001B` for a scalar: the form messages use to name a character.
  public static func codePoint(_ scalar: Unicode.Scalar) -> String {
    let hex = String(scalar.value, radix: 16, uppercase: true)
    return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
  }

  /// `text` with every control character written as an escape: `\n`, `\r`, `\t`, `\e` (ESC),
  /// and `\u{7F}`-style for the rest; every invisible character (`InvisibleCharacters`) as
  /// `\u{200B}`, `\u{202E}`, `\u{A0}`. Text without either is returned unchanged.
  public static func escaped(_ text: String) -> String {
    guard text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value >= 0x7F }) else { return text }
    let scalars = Array(text.unicodeScalars)
    var result = String.UnicodeScalarView()
    for (index, scalar) in scalars.enumerated() {
      guard isControl(scalar) || InvisibleCharacters.isInvisible(at: index, in: scalars) else {
        result.append(scalar)
        continue
      }
      let escape = switch scalar {
      case "\n": "\\n"
      case "\r": "\\r"
      case "\t": "\\t"
      case "\u{1B}": "\\e"
      default: "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
      }
      result.append(contentsOf: escape.unicodeScalars)
    }
    return String(result)
  }
}
