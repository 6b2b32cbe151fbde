import Testing
@testable import TSManifest
import TSModel
import TSTestSupport

/// The fast path for contact lists (`ContactListCapture.swift`): a list read from libyaml's
/// events, put back as nodes, is the tree read without capturing, and a manifest loads to the
/// same result (manifest and every diagnostic) either way; lists of the plain shape are
/// captured, and every other shape is read through the tree.
@Suite struct ContactListCaptureTests {
  static let file = "watch.yaml"

  /// Reads `text` both ways and checks the two agree; returns the captured read.
  @discardableResult
  static func checkBothWays(_ text: String, limits: YAMLLimits = .default,
                            sourceLocation: SourceLocation = #_sourceLocation) -> YAMLReadResult {
    let bytes = Array(text.utf8)
    let captured = YAMLReader.read(bytes: bytes, file: file, limits: limits, capturesContactLists: true)
    let tree = YAMLReader.read(bytes: bytes, file: file, limits: limits)
    let expanded = captured.expandingCapturedLists()
    #expect(expanded.root == tree.root, "the captured lists put back are the tree", sourceLocation: sourceLocation)
    #expect(expanded.diagnostics == tree.diagnostics, sourceLocation: sourceLocation)
    if limits == .default {
      let fast = ManifestLoader.load(bytes: bytes, file: file)
      let slow = ManifestLoader.load(bytes: bytes, file: file, capturesContactLists: false)
      #expect(fast.manifest == slow.manifest, sourceLocation: sourceLocation)
      #expect(fast.diagnostics == slow.diagnostics, sourceLocation: sourceLocation)
    }
    return captured
  }

  /// How many items the captured lists hold, in total.
  static func capturedItems(_ result: YAMLReadResult) -> Int {
    result.capturedContactLists.values.reduce(0) { $0 + $1.count }
  }

  struct Case: CustomTestStringConvertible, Sendable {
    var label: String
    var text: String
    /// Items of the lists captured to their end (a list whose capture was abandoned counts none,
    /// and a document that could not be read has none).
    var captured: Int
    var testDescription: String { label }
  }

  static let cases: [Case] = [
    Case(label: "block items", text: "contacts:\n  - name: Alex\n    phone: \"+15550100\"\n  - name: Zoë\n    phone: '555 0101'\n    short_name: Z\n", captured: 2),
    Case(label: "flow items in a flow list", text: "contacts: [{name: Alex, phone: '+1555'}, {phone: 555, name: \"B\"}]\n", captured: 2),
    Case(label: "emergency contacts", text: "emergency:\n  sos: true\n  contacts:\n    - {name: Mum, phone: \"+15550100\"}\n", captured: 1),
    Case(label: "both lists", text: "contacts:\n  - {name: A, phone: '1'}\nemergency:\n  contacts:\n    - {name: B, phone: '2'}\n", captured: 2),
    Case(label: "an empty list", text: "contacts: []\n", captured: 0),
    Case(label: "null values are read and reported", text: "contacts:\n  - name: ~\n    phone:\n  - name: null\n    phone: ''\n", captured: 2),
    Case(label: "missing keys are reported", text: "contacts:\n  - name: A\n  - {}\n", captured: 2),
    Case(label: "values of every style", text: "contacts:\n  - name: |\n      A\n    phone: >-\n      555\n      0100\n", captured: 1),
    Case(label: "rule errors", text: "contacts:\n  - {name: \"\\e[31m\", phone: 12-ab}\n  - {name: '', phone: '+1+2'}\n  - {name: A, phone: '1'}\n  - {name: A, phone: '1'}\n", captured: 4),
    Case(label: "an unknown key", text: "contacts:\n  - name: A\n    phone: '1'\n  - name: B\n    phnoe: '2'\n", captured: 0),
    Case(label: "a quoted key", text: "contacts:\n  - name: A\n    \"phone\": '1'\n", captured: 0),
    Case(label: "a key written twice", text: "contacts:\n  - name: A\n    phone: '1'\n    name: B\n", captured: 0),
    Case(label: "a merge key", text: "base: &b {phone: '1'}\ncontacts:\n  - name: A\n    <<: *b\n", captured: 0),
    Case(label: "an alias item", text: "x: &c {name: A, phone: '1'}\ncontacts:\n  - {name: B, phone: '2'}\n  - *c\n", captured: 0),
    Case(label: "an alias value", text: "x: &p '1'\ncontacts:\n  - {name: B, phone: *p}\n", captured: 0),
    Case(label: "an anchored item", text: "contacts:\n  - {name: B, phone: '2'}\n  - &c {name: A, phone: '1'}\nemergency:\n  contacts: [*c]\n", captured: 0),
    Case(label: "an anchored value", text: "contacts:\n  - {name: &n B, phone: '2'}\n", captured: 0),
    Case(label: "a tagged value", text: "contacts:\n  - {name: !!str B, phone: !!int 2}\n", captured: 0),
    Case(label: "a tagged item", text: "contacts:\n  - !!map {name: B, phone: '2'}\n", captured: 0),
    Case(label: "a list value", text: "contacts:\n  - {name: [B], phone: '2'}\n  - {name: C, phone: '3'}\n", captured: 0),
    Case(label: "a mapping value", text: "contacts:\n  - name: A\n    phone: {x: 1}\n", captured: 0),
    Case(label: "a scalar item", text: "contacts:\n  - {name: A, phone: '1'}\n  - Alex\n  - {name: C, phone: '3'}\n", captured: 0),
    Case(label: "a list item", text: "contacts:\n  - [A, '1']\n", captured: 0),
    Case(label: "an anchored list", text: "contacts: &all\n  - {name: A, phone: '1'}\nemergency:\n  contacts: *all\n", captured: 0),
    Case(label: "a tagged list", text: "contacts: !!seq\n  - {name: A, phone: '1'}\n", captured: 0),
    Case(label: "an anchored root", text: "&r\ncontacts:\n  - {name: A, phone: '1'}\n", captured: 0),
    Case(label: "an anchored emergency mapping", text: "emergency: &e\n  contacts:\n    - {name: A, phone: '1'}\n", captured: 0),
    Case(label: "a list elsewhere", text: "reminders:\n  contacts:\n    - {name: A, phone: '1'}\n", captured: 0),
    Case(label: "a list under a merge key", text: "<<: {contacts: [{name: A, phone: '1'}]}\n", captured: 0),
    Case(label: "contacts written twice", text: "contacts:\n  - {name: A, phone: '1'}\ncontacts:\n  - {name: B, phone: '2'}\n", captured: 2),
    Case(label: "a list that is not closed", text: "contacts:\n  - {name: A, phone: '1'}\n  - {name: B, phone: '2'\n", captured: 0),
    Case(label: "a second document", text: "contacts:\n  - {name: A, phone: '1'}\n---\ncontacts: []\n", captured: 0),
  ]

  @Test(arguments: cases)
  func readsTheSameEitherWay(_ testCase: Case) {
    let captured = Self.checkBothWays(testCase.text)
    #expect(Self.capturedItems(captured) == testCase.captured)
  }

  /// A document too large or too deep stops at the same event, with the same message.
  @Test(arguments: [YAMLLimits(maxNodes: 9), YAMLLimits(maxNodes: 12), YAMLLimits(maxNodes: 14), YAMLLimits(maxDepth: 2),
                    YAMLLimits(maxDepth: 3), YAMLLimits(maxDepth: 4)])
  func boundsStopAtTheSamePlace(_ limits: YAMLLimits) {
    let text = "contacts:\n  - {name: A, phone: '1'}\n  - {name: B, phone: '2'}\nemergency:\n  contacts:\n    - {name: C, phone: '3'}\n"
    let result = Self.checkBothWays(text, limits: limits)
    #expect(result.root == nil || Self.capturedItems(result) == 3)
  }

  /// Manifests of many contacts in random shapes, most of which break the capture somewhere.
  @Test func randomListsReadTheSameEitherWay() {
    var random = SplitMix64(state: 0x5EED_CA97)
    let keys = ["name", "phone", "short_name", "phnoe", "\"name\"", "<<"]
    let values = ["Alex", "'+1555 0100'", "\"Zoë\"", "~", "", "!!str x", "&a y", "*a", "[1]", "{p: 2}", "12-34", "|\n        z"]
    for _ in 0..<300 {
      var text = Bool.random(using: &random) ? "contacts:\n" : "emergency:\n  contacts:\n"
      let indent = text.hasPrefix("e") ? "    " : "  "
      for _ in 0..<Int.random(in: 0...6, using: &random) {
        let pairs = Int.random(in: 0...4, using: &random)
        if pairs == 0 {
          text += indent + "- " + values.randomElement(using: &random)! + "\n"
          continue
        }
        for pair in 0..<pairs {
          // Mostly the keys and values of a valid contact, so captures get some way in.
          let key = Int.random(in: 0..<8, using: &random) < 7 ? keys[pair % 3] : keys.randomElement(using: &random)!
          let value = Int.random(in: 0..<8, using: &random) < 6 ? values[pair % 3] : values.randomElement(using: &random)!
          text += indent + (pair == 0 ? "- " : "  ") + key + ": " + value + "\n"
        }
      }
      Self.checkBothWays(text)
    }
  }
}
