import TSModel

/// Text the watch shows (reminder names and notes, contact names and short names) holds no
/// control characters, and a name is not blank.
///
/// Source: sdk-facts.md §1.9 and §2.3 (names and notes are shown on the watch's screen; the SDK
/// passes them on unchecked). A control character (C0, DEL, C1; `ControlCharacters`) has no
/// glyph on the watch and, echoed by a tool, can drive a terminal (ESC sequences), so it is an
/// error naming the character. A name of only whitespace shows as nothing, so it is an error too.
enum DisplayTextRule {
  /// The text, or an error for a control character or (when `isName`) a blank name.
  static func check(_ text: Located<String>, field: String, isName: Bool,
                    into diagnostics: inout [Diagnostic]) -> Located<String>? {
    if let scalar = ControlCharacters.first(in: text.value) {
      diagnostics.append(.error(at: text.position, field: field,
        "contains a control character (\(ControlCharacters.codePoint(scalar))); names and notes are shown on the watch and cannot hold control characters"))
      return nil
    }
    if isName, !text.value.isEmpty, text.value.allSatisfy(\.isWhitespace) {
      diagnostics.append(.error(at: text.position, field: field,
        "is blank (only whitespace); a name needs at least one visible character"))
      return nil
    }
    return text
  }
}
