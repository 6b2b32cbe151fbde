import Testing
import TSModel

/// Escaping control characters for human output, and finding them for validation.
@Suite struct ControlCharactersTests {
  @Test(arguments: [
    ("Evening walk", "Evening walk"),
    ("\u{1B}[2J\u{1B}[31mRED", "\\e[2J\\e[31mRED"),
    ("a\nb\rc\td", "a\\nb\\rc\\td"),
    ("\u{1B}]0;pwned\u{07}", "\\e]0;pwned\\u{7}"),
    ("del\u{7F} csi\u{9B} nel\u{85}", "del\\u{7F} csi\\u{9B} nel\\u{85}"),
    ("李明 Émile 山田\u{3000}太郎", "李明 Émile 山田\u{3000}太郎"),
    // Invisible characters (InvisibleCharacters) are escaped like control characters.
    ("Alex\u{00A0}Doe", "Alex\\u{A0}Doe"),
  ])
  func escapesEveryControlCharacter(_ text: String, _ expected: String) {
    let escaped = ControlCharacters.escaped(text)
    #expect(escaped == expected)
    #expect(ControlCharacters.first(in: escaped) == nil)
    #expect(InvisibleCharacters.first(in: escaped) == nil)
  }

  /// The byte pre-check agrees with the scalar rule for every scalar up to U+07FF (every one- and
  /// two-byte UTF-8 sequence, C1 controls and their neighbours included), alone and between text.
  @Test func firstControlCharacterAgreesWithTheScalarRule() {
    for value in UInt32(0)...0x7FF {
      guard let scalar = Unicode.Scalar(value) else { continue }
      let expected: Unicode.Scalar? = ControlCharacters.isControl(scalar) ? scalar : nil
      for text in [String(scalar), "é" + String(scalar) + "x", "\u{C2}" + String(scalar)] {
        #expect(ControlCharacters.first(in: text) == expected, "U+\(String(value, radix: 16))")
      }
    }
  }

  @Test(arguments: [("ok", nil), ("a\u{1B}b", "U+001B"), ("x\u{9F}", "U+009F"), ("\u{0}", "U+0000")] as [(String, String?)])
  func namesTheFirstControlCharacter(_ text: String, _ expected: String?) {
    #expect(ControlCharacters.first(in: text).map(ControlCharacters.codePoint) == expected)
  }
}
