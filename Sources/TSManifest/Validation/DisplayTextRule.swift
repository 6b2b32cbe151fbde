import TSModel

/// Text the watch shows (reminder names and notes, contact names and short names) holds no
/// control characters, and a name is not blank and neither begins nor ends with white space or
/// an invisible character.
///
/// Source: docs/platforms.md "Capacity" and docs/platforms.md "Contacts" (names and notes are shown on the watch's screen; the SDK
/// passes them on unchecked). A control character (C0, DEL, C1; `ControlCharacters`) has no
/// glyph on the watch and, echoed by a tool, can drive a terminal (ESC sequences), so it is an
/// error naming the character. A name of only whitespace shows as nothing, so it is an error too.
/// The watch keeps a name exactly as written, so `"Walk "` and `"Walk"` are two reminders (and
/// turning one into the other deletes and recreates it) that look the same everywhere: a space,
/// a no-break space or a zero-width character at either end of a name is an error naming it
/// (`InvisibleCharacters`). Inside a name such characters are allowed and shown escaped. A name
/// that begins with a combining mark (U+0301 …) has no letter for it to sit on: an error too.
enum DisplayTextRule {
  /// The text, or an error for a control character or (when `isName`) a blank name or one that
  /// begins or ends with white space or an invisible character.
  static func check(_ text: Located<String>, field: @autoclosure () -> String, isName: Bool,
                    into diagnostics: inout [Diagnostic]) -> Located<String>? {
    if isPlainlyVisible(text.value) { return text }
    return checkScalars(text, field: field(), isName: isName, into: &diagnostics)
  }

  /// `check` without the byte shortcut (`isPlainlyVisible`): each rule on the text's scalars. The
  /// tests compare the two.
  static func checkScalars(_ text: Located<String>, field: @autoclosure () -> String, isName: Bool,
                           into diagnostics: inout [Diagnostic]) -> Located<String>? {
    if let scalar = ControlCharacters.first(in: text.value) {
      diagnostics.append(.error(at: text.position, field: field(),
        "contains a control character (\(ControlCharacters.codePoint(scalar))); names and notes are shown on the watch and cannot hold control characters"))
      return nil
    }
    if isName, let edge = InvisibleCharacters.edge(of: text.value) {
      let trimmed = InvisibleCharacters.trimmed(text.value)
      if trimmed.isEmpty {
        let what = text.value.allSatisfy(\.isWhitespace) ? "only whitespace" : "only white space and invisible characters"
        diagnostics.append(.error(at: text.position, field: field(),
          "is blank (\(what)); a name needs at least one visible character"))
      } else {
        diagnostics.append(.error(at: text.position, field: field(),
          "\"\(text.value)\" \(edge.atEnd ? "ends" : "begins") with \(InvisibleCharacters.describe(edge.scalar)); remove it (the watch keeps it, so \"\(text.value)\" and \"\(trimmed)\" would be different names)"))
      }
      return nil
    }
    if isName, let first = text.value.unicodeScalars.first, Self.isCombiningMark(first) {
      diagnostics.append(.error(at: text.position, field: field(),
        "\"\(text.value)\" begins with \(InvisibleCharacters.describe(first)), a combining mark with no letter before it to sit on; the watch would show it on its own or drop it"))
      return nil
    }
    return text
  }

  /// Whether `text` passes every check here, decided from its bytes in one pass (most names and
  /// notes): no control character, and both ends a visible ASCII character (U+0021 … U+007E),
  /// which is neither white space, nor invisible, nor a combining mark.
  static func isPlainlyVisible(_ text: String) -> Bool {
    var text = text
    return text.withUTF8 { bytes in
      guard let first = bytes.first, let last = bytes.last, first > 0x20, first < 0x7F, last > 0x20, last < 0x7F else {
        return false
      }
      return !ControlCharacters.mayHoldOne(bytes)
    }
  }

  /// A mark that combines with the character before it (general categories Mn, Mc, Me).
  static func isCombiningMark(_ scalar: Unicode.Scalar) -> Bool {
    guard !scalar.isASCII else { return false }  // no ASCII character is a mark (and most names start with one)
    return switch scalar.properties.generalCategory {
    case .nonspacingMark, .spacingMark, .enclosingMark: true
    default: false
    }
  }
}
