import Testing
import TSManifest
import TSModel
import TSTestSupport

/// The cheaper paths of loading give the answers of the general ones: duplicate keys in large
/// mappings (looked up in an index past 12 entries), field paths built only for diagnostics,
/// phones filtered by bytes or by characters, duplicate contacts found through one table by phone.
@Suite struct LoadPathTests {
  /// (number of keys written before the repeated one, repeated key): scans and index alike.
  @Test(arguments: [(1, "k0"), (11, "k3"), (12, "k11"), (13, "k0"), (40, "k39"), (40, "k12")])
  func duplicateKeysAreFoundInMappingsOfAnySize(_ count: Int, _ repeated: String) {
    let written = (0..<count).map { "k\($0): \($0)\n" }.joined()
    let text = MarkedText("outer:\n  - " + written.split(separator: "\n").joined(separator: "\n    ")
                          + "\n    1️⃣\(repeated): again\n")
    let result = YAMLReader.read(bytes: Array(text.text.utf8), file: "watch.yaml")
    let line = 2 + Int(repeated.dropFirst())!
    #expect(result.diagnostics == [.error(at: text.position("1️⃣"), field: "outer[0].\(repeated)",
      "duplicate key \"\(repeated)\": it is already defined on line \(line), column 5")])
    guard case .sequence(let items)? = result.root?.content.mappingValue(for: "outer"),
          case .mapping(let entries) = items.first?.content else {
      Issue.record("no list under outer")
      return
    }
    #expect(entries.map(\.keyText) == (0..<count).map { "k\($0)" })
  }

  @Test func pathsOfNestedItemsNameEveryLevel() {
    let text = MarkedText("a:\n  - [x, {b: 1, 1️⃣b: 2}]\n")
    #expect(YAMLReader.read(bytes: Array(text.text.utf8), file: "watch.yaml").diagnostics == [
      .error(at: text.position("1️⃣"), field: "a[0][1].b", "duplicate key \"b\": it is already defined on line 2, column 10"),
    ])
  }

  /// (phone as written, as stored): formatting removed from ASCII and non-ASCII text alike.
  @Test(arguments: [("\"+1 (555) 010-0100\"", "+15550100100"), ("\"+15550100\"", "+15550100"), ("555.010.0100", "5550100100"),
                    ("\"(0)12 34\"", "01234")])
  func phonesLoseTheirFormatting(_ written: String, _ stored: String) throws {
    let result = load("contacts:\n  - {name: Łukasz, phone: \(written)}\n")
    #expect(try #require(result.manifest?.contacts?.value.first).phone.value == stored)
  }

  @Test func aNonASCIIPhoneIsRefusedNamingTheCharacter() {
    DiagnosticCase(marked: "contacts:\n  - {name: A, phone: 1️⃣\"+1 555 ０１\"}\n", field: "contacts[0].phone",
                   message: "\"+1 555 ０１\" contains \"０\", which is not an ASCII digit 0–9").check()
  }

  /// Several contacts with one phone: each repeat of a (name, phone) is an error naming the first
  /// listing of that pair, each other name a warning naming the first contact with the phone.
  @Test func contactsSharingAPhoneAreComparedByNameInListOrder() {
    let text = MarkedText("""
      contacts:
        - {name: A, phone: "1"}
        - {name: B, phone: 1️⃣"1"}
        - 2️⃣{name: B, phone: "1"}
        - 3️⃣{name: A, phone: "1"}
        - {name: C, phone: 4️⃣"1"}
        - {name: C, phone: "2"}

      """)
    #expect(load(text.text).diagnostics == [
      .warning(at: text.position("1️⃣"), field: "contacts[1].phone", "1 is also the phone of \"A\" on line 2"),
      .error(at: text.position("2️⃣"), field: "contacts[2]", "duplicate contact \"B\" 1: also listed on line 3, column 5"),
      .error(at: text.position("3️⃣"), field: "contacts[3]", "duplicate contact \"A\" 1: also listed on line 2, column 5"),
      .warning(at: text.position("4️⃣"), field: "contacts[4].phone", "1 is also the phone of \"A\" on line 2"),
    ])
  }

  /// Unreadable inputs are diagnostics without a position; the loader reads nothing further.
  @Test func theLoaderReportsTheReaderError() {
    #expect(ManifestLoader.load(.file(path: "/dev/zero", displayName: "zero.yaml")).diagnostics == [
      .error(at: nil, field: "", "cannot read zero.yaml: it is a device file (a character device, such as a terminal or /dev/zero), not a manifest file"),
    ])
  }
}

extension YAMLNode.Content {
  /// The value under `key` when this is a mapping.
  fileprivate func mappingValue(for key: String) -> YAMLNode.Content? {
    guard case .mapping(let entries) = self else { return nil }
    return entries.first { $0.keyText == key }?.value.content
  }
}
