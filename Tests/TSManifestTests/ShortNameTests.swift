import Testing
@testable import TSManifest
import TSModel

/// A derived `short_name` is the ASCII capital that readers of the name's first letter file it
/// under (`ShortNameRule`, docs/manifest.md "Contacts").
@Suite struct ShortNameTests {
  /// (script, name, short name): first letters from 12 scripts.
  static let firstLetters: [(String, String, String)] = [
    ("Latin", "Łukasz", "L"), ("Latin", "łucja", "L"), ("Latin", "Øyvind", "O"), ("Latin", "Ærø", "A"),
    ("Latin", "Đorđe", "D"), ("Latin", "ßlock", "S"), ("Latin", "Þór", "T"), ("Latin", "Émile", "E"),
    ("Latin", "e\u{301}lodie", "E"), ("Latin", "Åsa", "A"), ("Latin", "Ñuñez", "N"), ("Latin", "Çelik", "C"),
    ("Latin", "İlker", "I"), ("Latin", "ılık", "I"), ("Latin", "Œdipe", "O"), ("Latin", "Ħamrun", "H"),
    ("Latin", "Ǆemal", "D"), ("Latin", "Ɔkɔ", "#"), ("Latin", "42 Óscar", "O"), ("Latin", "alex", "A"),
    ("Cyrillic", "Жанна", "Z"), ("Cyrillic", "Щукин", "S"), ("Cyrillic", "Юлия", "U"), ("Cyrillic", "Ђорђе", "D"),
    ("Cyrillic", "Љиљана", "L"), ("Greek", "Ωμέγα", "O"), ("Greek", "Φώτης", "P"), ("Greek", "Θεά", "T"),
    ("Greek", "Έλενα", "E"), ("Hangul", "김민", "G"), ("Hangul", "박지성", "B"), ("Hangul", "최", "C"),
    ("Han", "李明", "L"), ("Han", "王芳", "W"), ("Han", "张三", "Z"), ("Han", "陈", "C"),
    ("Hiragana", "さくら", "S"), ("Katakana", "ソラ", "S"), ("Arabic", "محمد", "M"), ("Hebrew", "שרה", "S"),
    ("Devanagari", "राम", "R"), ("Thai", "สมชาย", "S"), ("Armenian", "Արամ", "A"), ("Georgian", "გიორგი", "G"),
    ("none", "123", "#"), ("none", "😀", "#"), ("none", "", "#"),
  ]

  @Test(arguments: firstLetters)
  func shortNameIsDerivedFromTheFirstLetter(_ script: String, _ name: String, _ shortName: String) {
    #expect(ShortNameRule.derive(from: name) == shortName, "\(script): \(name)")
  }

  @Test func aLoadedContactWithoutShortNameGetsTheDerivedOne() throws {
    let result = load("contacts:\n  - {name: Łukasz, phone: \"1\"}\n  - {name: Øyvind, phone: \"2\", short_name: Y}\n")
    let contacts = try #require(result.manifest?.contacts?.value)
    #expect(contacts.map(\.shortName) == ["L", "Y"])
    #expect(contacts.map(\.shortNameIsExplicit) == [false, true])
  }

  /// Latin letters are folded without ICU; each block's letters get ICU's answer, and every
  /// letter of Latin-1 and Latin Extended-A is answered without ICU.
  static let latinBlocks: [(String, ClosedRange<UInt32>, Bool)] = [
    ("Basic Latin", 0x41...0x7A, true), ("Latin-1 Supplement", 0xC0...0xFF, true),
    ("Latin Extended-A", 0x100...0x17F, true), ("Latin Extended-B", 0x180...0x24F, false),
    ("Latin Extended Additional", 0x1E00...0x1EFF, false), ("Fullwidth Latin", 0xFF21...0xFF5A, false),
  ]

  @Test(arguments: latinBlocks)
  func latinLettersAreFoldedAsICUFoldsThem(_ block: String, _ range: ClosedRange<UInt32>, _ isComplete: Bool) {
    let letters = range.compactMap(Unicode.Scalar.init).map(Character.init).filter(\.isLetter)
    #expect(!letters.isEmpty)
    for letter in letters {
      let folded = ShortNameRule.latinCapital(letter)
      if isComplete { #expect(folded != nil, "\(block): \(letter) needs ICU") }
      if let folded {
        #expect(folded == ShortNameRule.transliteratedCapital(letter), "\(block): \(letter)")
      }
    }
  }

  @Test(arguments: ["Жанна", "李明", "Ωμέγα", "김민", "😀"])
  func otherScriptsAreLeftToICU(_ name: String) {
    #expect(ShortNameRule.latinCapital(name.first!) == nil)
  }
}
