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
