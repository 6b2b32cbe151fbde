import Testing
import TSManifest
import TSModel
import TSTestSupport

/// Input that surprised users and messages that misled them: each row is a manifest with the
/// one diagnostic it must give (position, field, message).
@Suite struct InputTrapTests {
  /// `count` contacts, one a line; the marker 1️⃣ before the name of contact `markedIndex`.
  static func contacts(_ count: Int, markedIndex: Int) -> String {
    "contacts:\n" + (0..<count).map { "  - {name: \($0 == markedIndex ? "1️⃣" : "")C\($0), phone: \"1\"}\n" }.joined()
  }

  static let nodeBounds: [DiagnosticCase] = [
    // 3 nodes (root, key, list) + 5 a contact: node 100 001 is contact 20 000's name (index 19 999).
    DiagnosticCase(marked: contacts(20_001, markedIndex: 19_999), field: "",
                   message: "the document has more than 100000 nodes (keys, values, lists and mappings), more than a manifest may hold; reading stopped"),
  ]

  @Test(arguments: nodeBounds)
  func aLongFileIsNotABillionLaughs(_ row: DiagnosticCase) { row.check() }
}
