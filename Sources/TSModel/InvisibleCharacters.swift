/// Characters a reader cannot see, or cannot tell from a plain space, or that reorder the text
/// around them: the one place that decides which they are and how a message names them.
///
/// Two names that differ only by such a character look the same in a plan (`"Mom"` and
/// `"Mom\u{200B}"`), and a right-to-left override makes text read backwards, so human output
/// escapes them (`ControlCharacters.escaped`), names may not begin or end with them
/// (`DisplayTextRule`), and messages name them by code point (`U+00A0 NO-BREAK SPACE`).
///
/// Invisible are: Unicode's default-ignorable code points (zero-width space, joiners, the
/// directional marks, embeddings, overrides and isolates, word joiner, byte-order mark, soft
/// hyphen, variation selectors, tags, Hangul fillers) and every white space other than U+0020
/// SPACE and U+3000 IDEOGRAPHIC SPACE (no-break, en, em, thin, narrow no-break spaces; line and
/// paragraph separators). Control characters are `ControlCharacters`' and are escaped there too.
///
/// Some of these shape visible text, and there they are not invisible: a zero-width joiner
/// between two emoji (👨‍👩‍👧) or after a virama (Indic conjuncts), a zero-width non-joiner after a
/// virama or between two letters of a joining script (Persian می‌روم), a variation selector after
/// the character it selects a form of (❤️), tags after a flag (🏴󠁧󠁢󠁳󠁣󠁴󠁿), Mongolian variation
/// selectors after Mongolian letters.
public enum InvisibleCharacters {
  /// Whether `scalar`, standing between `previous` and `next` (`nil` at either end of the
  /// text), is invisible in the sense above.
  public static func isInvisible(_ scalar: Unicode.Scalar, after previous: Unicode.Scalar?,
                                 before next: Unicode.Scalar?) -> Bool {
    let value = scalar.value
    // Below U+00A0 there are only visible characters and control characters (ControlCharacters').
    if value < 0xA0 || value == 0x3000 { return false }
    if scalar.properties.isWhitespace { return true }
    guard scalar.properties.isDefaultIgnorableCodePoint else { return false }
    switch value {
    case 0x200D:  // ZERO WIDTH JOINER
      return !(isVirama(previous) || (isEmojiPart(previous) && isEmoji(next)))
    case 0x200C:  // ZERO WIDTH NON-JOINER
      return !(isVirama(previous) || (isJoiningLetter(previous) && isJoiningLetter(next)))
    case 0xFE0E, 0xFE0F:  // text and emoji presentation selectors
      return !isEmoji(previous)
    case 0xFE00...0xFE0D, 0xE0100...0xE01EF:  // variation selectors
      return previous.map { $0.isASCII || $0.properties.isDefaultIgnorableCodePoint || $0.properties.isWhitespace } ?? true
    case 0xE0020...0xE007F:  // tags: a flag's subdivision (🏴 then tag letters then CANCEL TAG)
      return !(previous?.value == 0x1F3F4 || (previous.map { (0xE0020...0xE007F).contains($0.value) } ?? false))
    case 0x180B...0x180F:  // Mongolian variation selectors and vowel separator
      return !(previous.map { (0x1820...0x18AF).contains($0.value) } ?? false)
    default:
      return true
    }
  }

  /// The first invisible character of `text`, if any.
  public static func first(in text: String) -> Unicode.Scalar? {
    let scalars = Array(text.unicodeScalars)
    return scalars.indices.first { isInvisible(at: $0, in: scalars) }.map { scalars[$0] }
  }

  /// Whether the scalar at `index` of `scalars` is invisible where it stands.
  public static func isInvisible(at index: Int, in scalars: [Unicode.Scalar]) -> Bool {
    isInvisible(scalars[index], after: index > 0 ? scalars[index - 1] : nil,
                before: index + 1 < scalars.count ? scalars[index + 1] : nil)
  }

  /// The white space or invisible character that `text` begins with (`atEnd` false) or ends
  /// with (`atEnd` true); `nil` when it begins and ends with a visible character.
  public static func edge(of text: String) -> (scalar: Unicode.Scalar, atEnd: Bool)? {
    // A visible ASCII character at an end decides that end from one byte (most names); else
    // the end scalar and its one neighbour decide it.
    let utf8 = text.utf8
    guard let firstByte = utf8.first, let lastByte = utf8.last else { return nil }
    let scalars = text.unicodeScalars
    if !isVisibleASCII(firstByte) {
      var iterator = scalars.makeIterator()
      let first = iterator.next()!, next = iterator.next()
      if first.properties.isWhitespace || isInvisible(first, after: nil, before: next) { return (first, false) }
    }
    if !isVisibleASCII(lastByte) {
      let lastIndex = scalars.index(before: scalars.endIndex)
      let last = scalars[lastIndex]
      let previous = lastIndex == scalars.startIndex ? nil : scalars[scalars.index(before: lastIndex)]
      if last.properties.isWhitespace || isInvisible(last, after: previous, before: nil) { return (last, true) }
    }
    return nil
  }

  /// `text` without the white space and invisible characters at its ends (`edge(of:)`, applied
  /// again to what is left until it finds none); `text` itself when there are none.
  public static func trimmed(_ text: String) -> String {
    guard edge(of: text) != nil else { return text }
    let scalars = Array(text.unicodeScalars)
    var range = 0..<scalars.count
    while let edge = edge(of: scalars, in: range) {
      range = edge.atEnd ? range.lowerBound..<(range.upperBound - 1) : (range.lowerBound + 1)..<range.upperBound
    }
    var view = String.UnicodeScalarView()
    view.append(contentsOf: scalars[range])
    return String(view)
  }

  /// `edge(of:)` for the text `scalars[range]`: its neighbours outside `range` do not count.
  private static func edge(of scalars: [Unicode.Scalar], in range: Range<Int>) -> (scalar: Unicode.Scalar, atEnd: Bool)? {
    guard let firstIndex = range.first, let lastIndex = range.last else { return nil }
    func invisible(_ index: Int) -> Bool {
      isInvisible(scalars[index], after: index > range.lowerBound ? scalars[index - 1] : nil,
                  before: index < lastIndex ? scalars[index + 1] : nil)
    }
    let first = scalars[firstIndex], last = scalars[lastIndex]
    if first.properties.isWhitespace || invisible(firstIndex) { return (first, false) }
    if last.properties.isWhitespace || invisible(lastIndex) { return (last, true) }
    return nil
  }

  /// A printable ASCII character other than the space (U+0021 … U+007E).
  private static func isVisibleASCII(_ byte: UInt8) -> Bool { byte > 0x20 && byte < 0x7F }

  /// `U+00A0 NO-BREAK SPACE`: the code point and the Unicode name (for a control character, its
  /// common name where it has one: `U+0009 CHARACTER TABULATION`; else the code point alone).
  public static func describe(_ scalar: Unicode.Scalar) -> String {
    let code = ControlCharacters.codePoint(scalar)
    guard let name = scalar.properties.name ?? controlNames[scalar.value] else { return code }
    return code + " " + name
  }

  /// `"/"` for a character one can see, `U+00A0 NO-BREAK SPACE` for a white space other than
  /// U+0020, an invisible or a control character: how a message quotes one character.
  public static func quotedOrNamed(_ scalar: Unicode.Scalar) -> String {
    let hidden = ControlCharacters.isControl(scalar) || (scalar != " " && scalar.properties.isWhitespace)
      || scalar.properties.isDefaultIgnorableCodePoint
    return hidden ? describe(scalar) : "\"\(scalar)\""
  }

  /// Names of the control characters a manifest most often holds by mistake (Unicode gives
  /// control characters no `name`, only these aliases).
  private static let controlNames: [UInt32: String] = [
    0x00: "NULL", 0x07: "BELL", 0x08: "BACKSPACE", 0x09: "CHARACTER TABULATION", 0x0A: "LINE FEED",
    0x0B: "LINE TABULATION", 0x0C: "FORM FEED", 0x0D: "CARRIAGE RETURN", 0x1B: "ESCAPE", 0x7F: "DELETE",
    0x85: "NEXT LINE", 0x9B: "CONTROL SEQUENCE INTRODUCER",
  ]

  /// A virama (canonical combining class 9): joiners after it choose an Indic conjunct's form.
  private static func isVirama(_ scalar: Unicode.Scalar?) -> Bool {
    scalar?.properties.canonicalCombiningClass == .virama
  }

  /// An emoji other than the ASCII digits, `#` and `*` (which Unicode counts as emoji too).
  private static func isEmoji(_ scalar: Unicode.Scalar?) -> Bool {
    guard let scalar else { return false }
    return !scalar.isASCII && scalar.properties.isEmoji
  }

  /// What may stand before a joiner inside an emoji sequence: an emoji, its presentation
  /// selector, or a skin-tone modifier.
  private static func isEmojiPart(_ scalar: Unicode.Scalar?) -> Bool {
    guard let scalar else { return false }
    return isEmoji(scalar) || scalar.value == 0xFE0F || scalar.properties.isEmojiModifier
  }

  /// A letter or mark of a script whose letters join (Arabic, Syriac, N'Ko, Mongolian and their
  /// supplements), where a non-joiner visibly breaks the join.
  private static func isJoiningLetter(_ scalar: Unicode.Scalar?) -> Bool {
    guard let scalar else { return false }
    switch scalar.value {
    case 0x0600...0x08FF, 0x1800...0x18AF, 0xA840...0xA877, 0xFB50...0xFDFF, 0xFE70...0xFEFC,
         0x10AC0...0x10AFF, 0x10F30...0x10F6F:
      return scalar.properties.isAlphabetic || scalar.properties.generalCategory == .nonspacingMark
    default:
      return false
    }
  }
}
