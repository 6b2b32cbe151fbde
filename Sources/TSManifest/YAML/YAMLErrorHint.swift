/// Hints beside libyaml's syntax errors for the mistakes people make most, worked out from the
/// source line the error points at.
enum YAMLErrorHint {
  /// For an unquoted value holding `": "` (`name: Walk: park`): libyaml stops at the second
  /// colon, with "mapping values are not allowed in this context" (block) or "did not find
  /// expected ',' or '}'" (flow). Returns `a value that holds ": " must be quoted: name: "Walk:
  /// park"` when `column` (1-based, Unicode scalars) of `line` is such a colon after a `key: `
  /// on the same line and the value is not quoted already; `nil` otherwise.
  static func quoteValue(line: String, column: Int) -> String? {
    let scalars = Array(line.unicodeScalars)
    let colon = column - 1
    guard colon > 0, colon < scalars.count, scalars[colon] == ":",
          colon + 1 == scalars.count || isBlank(scalars[colon + 1]) else { return nil }
    // The key's colon: the last ": " before the error on this line.
    guard let keyColon = (0..<colon).last(where: { scalars[$0] == ":" && isBlank(scalars[$0 + 1]) }) else { return nil }
    var keyStart = keyColon
    while keyStart > 0, !isBlank(scalars[keyStart - 1]), !"{[,".unicodeScalars.contains(scalars[keyStart - 1]) { keyStart -= 1 }
    guard keyStart < keyColon else { return nil }
    var before = keyStart
    while before > 0, isBlank(scalars[before - 1]) { before -= 1 }
    let inFlow = before > 0 && "{,".unicodeScalars.contains(scalars[before - 1])
    var valueStart = keyColon + 1
    while valueStart < colon, isBlank(scalars[valueStart]) { valueStart += 1 }
    guard valueStart < colon, scalars[valueStart] != "\"", scalars[valueStart] != "'" else { return nil }
    var valueEnd = scalars.count
    for index in colon..<scalars.count {
      let ends = inFlow ? ",}]".unicodeScalars.contains(scalars[index])
                        : scalars[index] == "#" && isBlank(scalars[index - 1])
      if ends { valueEnd = index; break }
    }
    while valueEnd > valueStart, isBlank(scalars[valueEnd - 1]) { valueEnd -= 1 }
    let key = text(scalars[keyStart..<keyColon]), value = text(scalars[valueStart..<valueEnd])
    return "a value that holds \": \" must be quoted: \(key): \(quoted(value))"
  }

  /// For a key indented further than the `key: value` line above it (`enabled: true` then
  /// `     at: [...]` one space deeper): libyaml reads it as more of that value, and stops at its
  /// colon. Returns `this line is indented further than "enabled: true" above, so it reads as
  /// part of that value: start it at column 5, as enabled:`; `nil` otherwise. The line above may
  /// begin a list item (`- name: Tom` then `     phone: …`): its key starts after the `- `.
  static func overIndented(line: String, above: String) -> String? {
    let indent = line.prefix { $0 == " " }.count
    var keyIndent = above.prefix { $0 == " " }.count
    var trimmedAbove = above.dropFirst(keyIndent)
    while trimmedAbove.hasPrefix("- ") {
      let dash = 1 + trimmedAbove.dropFirst().prefix { $0 == " " }.count
      trimmedAbove = trimmedAbove.dropFirst(dash)
      keyIndent += dash
    }
    guard indent > keyIndent, let colon = trimmedAbove.range(of: ": "),
          !trimmedAbove[colon.upperBound...].allSatisfy(\.isWhitespace) else { return nil }
    let key = trimmedAbove[..<colon.lowerBound]
    return "this line is indented further than \"\(trimmedAbove.trimmingCharacters(in: .whitespaces))\" above, so it reads as part of "
      + "that value: start it at column \(keyIndent + 1), as \(key): is"
  }

  /// The 1-based column (Unicode scalars) of a quote that opens a value on `line` — after a
  /// `key: `, a `- `, or `[`, `{`, `,` in a flow — and is not closed on it (`notes: "Take pills`);
  /// `nil` when every quoted value on the line closes. YAML carries such a value on over the
  /// next lines until a closing quote, so libyaml's error comes lines later, where it reads as
  /// an indentation mistake (fresh-eyes finding).
  static func unclosedQuote(line: String) -> Int? {
    let scalars = Array(line.unicodeScalars)
    var index = 0
    while index < scalars.count {
      let scalar = scalars[index]
      if scalar == "#", index == 0 || isBlank(scalars[index - 1]) { return nil }
      guard scalar == "\"" || scalar == "'" else { index += 1; continue }
      // A quote inside a plain value (`it's`) opens nothing.
      var before = index
      while before > 0, isBlank(scalars[before - 1]) { before -= 1 }
      let opensValue = before == 0 || ":-[{,".unicodeScalars.contains(scalars[before - 1])
      guard opensValue else { index += 1; continue }
      var close = index + 1
      var closed = false
      while close < scalars.count {
        if scalar == "\"", scalars[close] == "\\" { close += 2; continue }
        if scalars[close] == scalar {
          // `''` inside a single-quoted value is one quote.
          if scalar == "'", close + 1 < scalars.count, scalars[close + 1] == "'" { close += 2; continue }
          closed = true
          break
        }
        close += 1
      }
      guard closed else { return index + 1 }
      index = close + 1
    }
    return nil
  }

  private static func isBlank(_ scalar: Unicode.Scalar) -> Bool { scalar == " " || scalar == "\t" }

  private static func text(_ scalars: ArraySlice<Unicode.Scalar>) -> String {
    var view = String.UnicodeScalarView()
    view.append(contentsOf: scalars)
    return String(view)
  }

  /// Double-quoted, or single-quoted when the value holds a double quote or a backslash (which
  /// a double-quoted YAML string would read as escapes).
  private static func quoted(_ value: String) -> String {
    if value.contains("\"") || value.contains("\\") { return "'" + value.replacingOccurrences(of: "'", with: "''") + "'" }
    return "\"" + value + "\""
  }
}
