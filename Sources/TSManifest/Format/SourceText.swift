import TSModel

/// A manifest's text as Unicode scalars with a line table, so a `SourcePosition` (1-based line
/// and column, columns in Unicode scalars, as libyaml counts them) maps to an offset, and
/// replacements at offsets can be applied.
///
/// Line breaks are the ones libyaml knows: LF, CRLF (one break), CR, NEL, LS and PS.
struct SourceText {
  let scalars: [Unicode.Scalar]
  /// Offset of the first scalar of each line.
  private(set) var lineStarts: [Int] = [0]
  /// The file's line end: CRLF when its first line break is CRLF, else LF.
  private(set) var lineEnding = "\n"

  init(_ text: String) {
    scalars = Array(text.unicodeScalars)
    var index = 0
    var sawBreak = false
    while index < scalars.count {
      let scalar = scalars[index]
      index += 1
      switch scalar {
      case "\r":
        let crlf = index < scalars.count && scalars[index] == "\n"
        if crlf { index += 1 }
        if !sawBreak { lineEnding = crlf ? "\r\n" : "\n" }
      case "\n", "\u{85}", "\u{2028}", "\u{2029}":
        break
      default:
        continue
      }
      sawBreak = true
      lineStarts.append(index)
    }
  }

  /// Whether `scalar` is one of the line breaks libyaml knows (CRLF is CR then LF).
  static func isLineBreak(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar {
    case "\n", "\r", "\u{85}", "\u{2028}", "\u{2029}": true
    default: false
    }
  }

  /// The offset of `position`, clamped to the text.
  func offset(_ position: SourcePosition) -> Int {
    let line = min(max(position.line, 1), lineStarts.count)
    return min(lineStarts[line - 1] + max(position.column - 1, 0), scalars.count)
  }

  /// The text of `range`.
  func text(_ range: Range<Int>) -> String {
    var result = String.UnicodeScalarView()
    result.append(contentsOf: scalars[range.clamped(to: 0..<scalars.count)])
    return String(result)
  }

  /// Where a node's own text starts: after any `&anchor` and `!tag` properties libyaml counts
  /// as part of the node.
  func contentStart(_ start: Int, end: Int) -> Int {
    var index = start
    while index < end, scalars[index] == "&" || scalars[index] == "!" {
      while index < end, !scalars[index].properties.isWhitespace { index += 1 }
      while index < end, scalars[index] == " " || scalars[index] == "\t" { index += 1 }
    }
    return index
  }

  /// The text of `range` with `edits` (sorted, non-overlapping) applied; edits outside `range`
  /// are ignored, and an edit that overlaps an earlier one is skipped (its text stays as written)
  /// rather than trusted.
  func text(_ range: Range<Int>, applying edits: [TextEdit]) -> String {
    var result = ""
    var cursor = range.lowerBound
    for edit in edits where edit.range.lowerBound >= cursor && edit.range.upperBound <= range.upperBound {
      result += text(cursor..<edit.range.lowerBound) + edit.replacement
      cursor = edit.range.upperBound
    }
    return result + text(cursor..<range.upperBound)
  }
}

/// One replacement of source text: `range` (scalar offsets) becomes `replacement`.
struct TextEdit: Hashable {
  var range: Range<Int>
  var replacement: String
}
