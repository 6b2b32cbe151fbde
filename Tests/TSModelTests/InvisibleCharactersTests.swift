import Testing
import TSModel

/// Which characters count as invisible (escaped in human output, refused at a name's ends), and
/// how a message names one.
@Suite struct InvisibleCharactersTests {
  /// Text and how human output shows it: a name that could pass for another is escaped; text
  /// whose joiners and selectors shape what is seen is shown as it is.
  @Test(arguments: [
    ("Mom\u{200B}", "Mom\\u{200B}"),                       // zero-width space
    ("Mo\u{200D}m", "Mo\\u{200D}m"),                       // a joiner between Latin letters does nothing visible
    ("Mo\u{200C}m", "Mo\\u{200C}m"),
    ("\u{202E}moM", "\\u{202E}moM"),                       // right-to-left override
    ("Sam\u{200F}", "Sam\\u{200F}"),                       // right-to-left mark
    ("\u{2066}Sam\u{2069}", "\\u{2066}Sam\\u{2069}"),      // isolates
    ("\u{FEFF}Kim", "\\u{FEFF}Kim"),                       // byte-order mark inside text
    ("Ki\u{00AD}m", "Ki\\u{AD}m"),                         // soft hyphen
    ("Kim\u{2060}", "Kim\\u{2060}"),                       // word joiner
    ("A\u{2009}B\u{202F}C\u{2007}D", "A\\u{2009}B\\u{202F}C\\u{2007}D"),  // thin, narrow no-break, figure spaces
    ("Line\u{2028}break", "Line\\u{2028}break"),
    ("\u{3164}", "\\u{3164}"),                             // Hangul filler, a blank that is a letter
    ("Mom\u{FE0F}", "Mom\\u{FE0F}"),                       // an emoji selector after a letter
    // Shown as they are: emoji sequences, Indic conjuncts, Persian non-joiners, CJK spaces.
    ("👨‍👩‍👧 Family", "👨‍👩‍👧 Family"),
    ("❤️ Gran", "❤️ Gran"),
    ("👍🏽", "👍🏽"),
    ("🏴󠁧󠁢󠁳󠁣󠁴󠁿", "🏴󠁧󠁢󠁳󠁣󠁴󠁿"),
    ("क्‍ष", "क्‍ष"),
    ("می‌روم", "می‌روم"),
    ("עברית Hebrew", "עברית Hebrew"),
    ("山田\u{3000}太郎", "山田\u{3000}太郎"),
  ])
  func humanOutputEscapesInvisibleCharacters(_ text: String, _ shown: String) {
    #expect(ControlCharacters.escaped(text) == shown)
  }

  @Test(arguments: [
    ("Walk ", "U+0020 SPACE", true), ("Walk\u{00A0}", "U+00A0 NO-BREAK SPACE", true),
    (" Walk", "U+0020 SPACE", false), ("\u{200B}Walk", "U+200B ZERO WIDTH SPACE", false),
    ("Walk\u{200D}", "U+200D ZERO WIDTH JOINER", true), ("Walk\u{3000}", "U+3000 IDEOGRAPHIC SPACE", true),
  ])
  func namesTheCharacterAtAnEdge(_ text: String, _ named: String, _ atEnd: Bool) throws {
    let edge = try #require(InvisibleCharacters.edge(of: text))
    #expect(InvisibleCharacters.describe(edge.scalar) == named)
    #expect(edge.atEnd == atEnd)
  }

  @Test(arguments: ["Walk", "❤️", "Gran ❤️", "👨‍👩‍👧", "李明", "a"])
  func visibleEdgesAreFine(_ text: String) {
    #expect(InvisibleCharacters.edge(of: text) == nil)
  }

  @Test(arguments: [
    ("/" as Unicode.Scalar, "\"/\""), ("\u{A0}", "U+00A0 NO-BREAK SPACE"), ("\t", "U+0009 CHARACTER TABULATION"),
    ("\u{2013}", "\"\u{2013}\""), ("\u{200B}", "U+200B ZERO WIDTH SPACE"), ("\u{1}", "U+0001"),
  ])
  func quotesWhatCanBeSeenAndNamesWhatCannot(_ scalar: Unicode.Scalar, _ expected: String) {
    #expect(InvisibleCharacters.quotedOrNamed(scalar) == expected)
  }

  /// Trimming takes off every edge `edge(of:)` finds, one at a time, judging each end by what is
  /// left (a joiner that shaped an emoji taken off is invisible next); text without one comes
  /// back unchanged.
  @Test(arguments: [
    ("Walk", "Walk"), (" Walk ", "Walk"), ("\u{200B}\u{00A0}Walk\u{3000}", "Walk"), ("  ", ""),
    ("\u{200B}", ""), ("👨\u{200D}", "👨"), ("\u{200D}👩", "👩"), ("\u{A0}\u{200D}👩", "👩"),
    ("Zoë", "Zoë"), ("Łukasz ", "Łukasz"), ("a\u{200B}b", "a\u{200B}b"), ("❤️ ", "❤️"), ("\u{FE0F}", ""),
    ("", ""),
  ])
  func trimsEveryEdge(_ text: String, _ expected: String) {
    #expect(InvisibleCharacters.trimmed(text) == expected)
    #expect(InvisibleCharacters.edge(of: expected) == nil)
  }

  /// `edge(of:)` decides an end from one byte when it is visible ASCII and from the scalar and
  /// its neighbour otherwise: the same answer as judging every scalar of the text in context.
  @Test func edgeAgreesWithJudgingEveryScalar() {
    let pieces: [String] = ["a", "Z", " ", "\u{A0}", "\u{200B}", "\u{200D}", "\u{200C}", "👨", "❤", "\u{FE0F}", "ë",
                            "\u{0301}", "\u{094D}", "क", "م", "\u{3000}", "\t", "李"]
    for first in pieces {
      for second in pieces {
        for third in ["", "a", "\u{200D}", "👩"] {
          let text = first + second + third
          let scalars = Array(text.unicodeScalars)
          var expected: (Unicode.Scalar, Bool)?
          if let head = scalars.first, let tail = scalars.last {
            if head.properties.isWhitespace || InvisibleCharacters.isInvisible(at: 0, in: scalars) {
              expected = (head, false)
            } else if tail.properties.isWhitespace || InvisibleCharacters.isInvisible(at: scalars.count - 1, in: scalars) {
              expected = (tail, true)
            }
          }
          let edge = InvisibleCharacters.edge(of: text)
          #expect(edge?.scalar == expected?.0 && edge?.atEnd == expected?.1, "\(text.unicodeScalars.map { String($0.value, radix: 16) })")
        }
      }
    }
  }
}
