import TSModel

/// A source line as a diagnostic echoes it: the whole line when it is short, otherwise a window
/// of `maxWidth` characters around the column with `…` on each cut side, so a diagnostic on a
/// 100 KB single-line file prints about one terminal line, not the file.
struct SourceExcerpt {
  /// Longest line echoed whole, in characters as printed (a control character as wide as its
  /// escape, `\u{1}`: a binary line of 160 scalars printed 259 wide, fe106 #7).
  static let maxWidth = 160
  /// Characters (as printed) kept before the column when the line is cut.
  static let before = 60

  /// The line to print (possibly cut, with `…`).
  var line: String
  /// Spaces and a `^` under the column of `line` as printed: the line is printed with its
  /// control characters escaped (`ControlCharacters.escaped`: a tab as `\t`), so each one
  /// before the column counts as wide as its escape.
  var caretLine: String

  /// The excerpt of `line` for 1-based `column` (Unicode scalars, as diagnostics count).
  init(line: String, column: Int) {
    self.init(scalars: Array(line.unicodeScalars), column: column)
  }

  /// As `init(line:column:)`, for a line already split into scalars (a line shown under many
  /// diagnostics is split once).
  init(scalars: [Unicode.Scalar], column: Int) {
    let index = min(max(0, column - 1), scalars.count)
    var start = 0, end = scalars.count
    let width = { (scalar: Unicode.Scalar) in ControlCharacters.isControl(scalar) ? ControlCharacters.escaped(String(scalar)).count : 1 }
    // (Wider than `maxWidth` when it has more scalars; a shorter one is measured, 160 at most.)
    if scalars.count > Self.maxWidth || scalars.reduce(0, { $0 + width($1) }) > Self.maxWidth {
      // Up to `before` wide before the column, then on to `maxWidth` in all; near the line's
      // end, the room left goes before the column.
      var used = 0
      start = index
      while start > 0, used + width(scalars[start - 1]) <= Self.before { start -= 1; used += width(scalars[start]) }
      end = start
      used = 0
      while end < scalars.count, used + width(scalars[end]) <= Self.maxWidth { used += width(scalars[end]); end += 1 }
      while end == scalars.count, start > 0, used + width(scalars[start - 1]) <= Self.maxWidth { start -= 1; used += width(scalars[start]) }
    }
    let head = start > 0 ? "…" : "", tail = end < scalars.count ? "…" : ""
    var text = String.UnicodeScalarView()
    text.append(contentsOf: scalars[start..<end])
    self.line = head + String(text) + tail
    let indent = scalars[start..<index].map { scalar in
      ControlCharacters.isControl(scalar) ? String(repeating: " ", count: ControlCharacters.escaped(String(scalar)).count) : " "
    }.joined()
    caretLine = (head.isEmpty ? "" : " ") + indent + "^"
  }
}
