import Testing
@testable import TSManifest
import TSModel
import TSTestSupport

/// The byte shortcuts of the contact rules decide only what the full checks decide: a name that
/// `DisplayTextRule.isPlainlyVisible` passes passes every scalar check, and a phone that
/// `PhoneNumberRule.isStorable` accepts as written is what the full check stores, with no
/// diagnostic. Checked on every text of a small alphabet up to three characters and on seeded
/// random texts.
@Suite struct RuleShortcutTests {
  static let position = SourcePosition(file: "watch.yaml", line: 1, column: 1)

  /// Characters a shortcut must judge right: visible ASCII, spaces, controls (C0, DEL, C1 as
  /// U+0080 and U+009F, whose UTF-8 starts with 0xC2), a no-break space, invisible and
  /// directional characters, a combining mark, letters beyond ASCII, digits and phone formatting.
  static let alphabet: [String] = ["a", "Z", "1", "+", "-", ".", " ", "(", "\t", "\n", "\u{1B}", "\u{7F}", "\u{80}",
                                   "\u{9F}", "\u{A0}", "\u{A1}", "\u{C2}", "\u{200B}", "\u{202E}", "\u{301}", "é", "Ł", "李", "😀"]

  /// What phones are mostly written with, and a few characters a phone may not hold.
  static let phoneAlphabet: [String] = ["0", "1", "5", "9", "+", "-", ".", " ", "(", ")", "e", "x", "\u{A0}", "٣"]

  /// Every text of `alphabet` up to three characters, and 2,000 random ones of 4 to 24.
  static func texts(of alphabet: [String] = alphabet) -> [String] {
    var texts = [""]
    var level = [""]
    for _ in 1...3 {
      level = level.flatMap { prefix in alphabet.map { prefix + $0 } }
      texts += level
    }
    var random = SplitMix64(state: 0x5107_CA75)
    for _ in 0..<2000 {
      let count = Int.random(in: 4...24, using: &random)
      texts.append((0..<count).map { _ in alphabet.randomElement(using: &random)! }.joined())
    }
    return texts
  }

  @Test func plainlyVisibleTextPassesEveryScalarCheck() {
    var shortcuts = 0
    for text in Self.texts() {
      for isName in [true, false] {
        var fast: [Diagnostic] = [], full: [Diagnostic] = []
        let located = Located(text, at: Self.position)
        let viaShortcut = DisplayTextRule.check(located, field: "name", isName: isName, into: &fast)
        let viaScalars = DisplayTextRule.checkScalars(located, field: "name", isName: isName, into: &full)
        #expect(viaShortcut == viaScalars && fast == full, "\(text.unicodeScalars.map { String($0.value, radix: 16) })")
        if DisplayTextRule.isPlainlyVisible(text) { shortcuts += 1 }
      }
    }
    #expect(shortcuts > 1000)  // the shortcut is taken, not only the full path
  }

  @Test func storablePhonesAreWhatTheFullCheckStores() {
    var shortcuts = 0
    for text in Self.texts() + Self.texts(of: Self.phoneAlphabet) {
      for isPlain in [true, false] {
        var fast: [Diagnostic] = [], full: [Diagnostic] = []
        let located = Located(text, at: Self.position)
        let viaShortcut = PhoneNumberRule.check(located, isPlain: isPlain, field: "phone", into: &fast)
        let viaFull = PhoneNumberRule.checkFormatted(located, isPlain: isPlain, field: "phone", into: &full)
        #expect(viaShortcut == viaFull && fast == full, "\(text.debugDescription)")
        if PhoneNumberRule.isStorable(text) { shortcuts += 1 }
      }
    }
    #expect(shortcuts > 200)
  }
}
