import Testing
@testable import TSManifest

/// `YAMLWriter`: characters outside the Basic Multilingual Plane are written as they are (libyaml
/// escapes them: an exported name read `"Enkel Max \U0001F600"`, fresh-eyes finding), and
/// everything written reads back as the same text — also a private-use character the document
/// already holds, and text that spells an escape.
@Suite struct YAMLWriterTests {
  @Test(arguments: [
    ("Enkel Max 😀", "name: Enkel Max 😀\n"),
    ("Dr. Ramírez 🩺", "name: Dr. Ramírez 🩺\n"),
    ("👨‍👩‍👧", "name: 👨‍👩‍👧\n"),
    ("王芳", "name: 王芳\n"),
  ])
  func charactersOutsideTheBMPAreWrittenAsTheyAre(name: String, written: String) throws {
    let text = try YAMLWriter.write(.mapping([(key: "name", value: .scalar(name, .plain))], flow: false))
    #expect(text == written)
    #expect(Self.readBack(text) == [name])
  }

  @Test(arguments: ["a 😀 \u{E000} b", "\\U0001F600 😀", "😀: x", "- 😀", "😀\n😀", "\u{E000}\u{E001}😀🩺"])
  func whatIsWrittenReadsBackTheSame(text: String) throws {
    let written = try YAMLWriter.write(.sequence([.scalar(text, .plain), .scalar(text, .doubleQuoted)], flow: false))
    #expect(!written.contains("\\U0001") || text.contains("\\U"), "no escape: \(written)")
    #expect(Self.readBack(written) == [text, text], "\(written)")
  }

  /// Characters a reader cannot see, or that reorder the text around them (`InvisibleCharacters`),
  /// are written as escapes in a double-quoted scalar, whatever style was asked for: an exported
  /// name with a right-to-left override read backwards in a review of the file (fresh-eyes fe98).
  /// Those that shape visible text (a joiner inside an emoji) stay as they are. It reads back the same.
  @Test(arguments: [
    ("Mom\u{202E}dad", .plain, "- \"Mom\\u202Edad\"\n"),
    ("Mom\u{200B}", .plain, "- \"Mom\\u200B\"\n"),
    ("\u{00A0}Ann", .singleQuoted, "- \"\\u00A0Ann\"\n"),
    ("Ann\u{2066}x\u{2069} 😀", .literal, "- \"Ann\\u2066x\\u2069 😀\"\n"),
    ("Tag\u{E0041}", .plain, "- \"Tag\\U000E0041\"\n"),
    ("👨‍👩‍👧", .plain, "- 👨‍👩‍👧\n"),
  ] as [(String, YAMLScalar.Style, String)])
  func invisibleCharactersAreWrittenAsEscapes(text: String, style: YAMLScalar.Style, written: String) throws {
    let output = try YAMLWriter.write(.sequence([.scalar(text, style)], flow: false))
    #expect(output == written)
    #expect(Self.readBack(output) == [text], "\(output)")
  }

  /// A key holding one is quoted too, and the document's other texts are left as they were.
  @Test func aKeyWithAnInvisibleCharacterIsQuoted() throws {
    let output = try YAMLWriter.write(.mapping([(key: "na\u{200B}me", value: .scalar("Ann", .plain)), (key: "b", value: .scalar("😀", .plain))], flow: false))
    #expect(output == "\"na\\u200Bme\": Ann\nb: 😀\n")
  }

  /// The scalars of the document `text`, in order.
  static func readBack(_ text: String) -> [String] {
    guard let root = YAMLReader.read(bytes: Array(text.utf8), file: "t.yaml").root else { return [] }
    var values: [String] = []
    func walk(_ node: YAMLNode) {
      switch node.content {
      case .scalar(let scalar): values.append(scalar.value)
      case .mapping(let entries): for entry in entries { walk(entry.value) }
      case .sequence(let items): items.forEach(walk)
      }
    }
    walk(root)
    return values
  }
}
