import Testing
import TSModel
@testable import TSApplyCLI

/// Echoed source lines: short lines whole, long lines as a window around the column with `…`
/// on the cut sides and the caret still under the column.
@Suite struct SourceExcerptTests {
  /// The character the caret points at in the printed excerpt.
  static func pointed(_ excerpt: SourceExcerpt) -> Character? {
    let offset = excerpt.caretLine.count - 1
    let characters = Array(excerpt.line)
    return offset < characters.count ? characters[offset] : nil
  }

  @Test func shortLinesAreEchoedWhole() {
    let excerpt = SourceExcerpt(line: "  - {name: A, phone: x}", column: 22)
    #expect(excerpt.line == "  - {name: A, phone: x}")
    #expect(excerpt.caretLine == String(repeating: " ", count: 21) + "^")
  }

  /// The line is printed escaped (a tab as `\t`), so the caret counts each control character
  /// as wide as its escape, and the caret line holds no raw tab (found by the manifest fuzz
  /// target: the caret stood a tab stop away from the column).
  @Test(arguments: [("a:\tb", 4, "    ^"), ("\u{1B}x:\u{7F}y", 5, "          ^"), ("\t\tz", 3, "    ^")])
  func controlCharactersCountAsWideAsTheirEscapes(_ line: String, _ column: Int, _ caret: String) {
    let excerpt = SourceExcerpt(line: line, column: column)
    #expect(excerpt.caretLine == caret)
    let printed = Array(ControlCharacters.escaped(excerpt.line))
    #expect(printed[excerpt.caretLine.count - 1] == Array(line.unicodeScalars.map(Character.init))[column - 1])
  }

  static let long = String(repeating: "[", count: 70) + "X" + String(repeating: "]", count: 70) + String(repeating: " ", count: 100_000)

  @Test(arguments: [
    (1, "[", false, true),          // at the start: cut at the end only
    (71, "X", true, true),          // in the middle: cut on both sides
    (100_141, " ", true, false),    // at the end: cut at the start only
  ])
  func longLinesAreCutAroundTheColumn(_ column: Int, _ character: Character, _ cutBefore: Bool, _ cutAfter: Bool) {
    let excerpt = SourceExcerpt(line: Self.long, column: column)
    #expect(excerpt.line.count <= SourceExcerpt.maxWidth + 2)
    #expect(excerpt.line.hasPrefix("…") == cutBefore)
    #expect(excerpt.line.hasSuffix("…") == cutAfter)
    #expect(Self.pointed(excerpt) == character)
  }

  /// A line of control characters (a binary file) is cut by its printed width: each counts as
  /// wide as its escape, so the echo stays within `maxWidth` as printed (fresh-eyes fe106 #7:
  /// 259 characters for 160 scalars), the caret still under the column.
  @Test(arguments: [1, 150, 300])
  func aLineOfControlCharactersIsCutByItsPrintedWidth(column: Int) {
    let line = String(repeating: "\u{1}", count: 150) + "X" + String(repeating: "\u{2}", count: 150)
    let excerpt = SourceExcerpt(line: line, column: column)
    let printed = ControlCharacters.escaped(excerpt.line)
    #expect(printed.count <= SourceExcerpt.maxWidth + 2, "\(printed.count): \(printed)")
    #expect(Array(printed)[excerpt.caretLine.count - 1] == (column == 151 ? "X" : "\\"), "\(printed)\n\(excerpt.caretLine)")
  }

  @Test func aColumnPastTheEndPointsJustAfterTheLine() {
    let line = String(repeating: "a", count: 500)
    let excerpt = SourceExcerpt(line: line, column: 501)
    #expect(excerpt.line.hasPrefix("…") && !excerpt.line.hasSuffix("…"))
    #expect(excerpt.caretLine.count == excerpt.line.count + 1)
  }
}
