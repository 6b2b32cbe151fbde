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
}
