import Foundation
import Testing
import TSEngine
import TSModel
import TSTestSupport

/// The redaction key: created on first use, 0600, the same fingerprints afterwards, and a file
/// that is not a key refused (never replaced).
@Suite struct RedactionKeyTests {
  @Test func createdOnceAndPrivate() throws {
    let root = try TSApplyBinary.temporaryDirectory().path + "/state"
    #expect(try RedactionKey.fingerprints(root: root, create: false) == nil)
    #expect(!FileManager.default.fileExists(atPath: RedactionKey.path(root: root)), "a read-only use creates nothing")
    let first = try #require(try RedactionKey.fingerprints(root: root))
    let path = RedactionKey.path(root: root)
    let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
    #expect(mode == 0o600)
    let second = try RedactionKey.fingerprints(root: root, create: false)
    #expect(first.fingerprint("+15550100") == second?.fingerprint("+15550100"))
    let other = try RedactionKey.fingerprints(root: try TSApplyBinary.temporaryDirectory().path + "/state")
    #expect(other?.fingerprint("+15550100") != first.fingerprint("+15550100"))
  }

  @Test(arguments: ["", "not a key\n", String(repeating: "g", count: 64), String(repeating: "a", count: 62)])
  func aFileThatIsNotAKeyIsRefusedAndKept(_ content: String) throws {
    let root = try TSApplyBinary.temporaryDirectory().path
    try content.write(toFile: RedactionKey.path(root: root), atomically: true, encoding: .utf8)
    #expect(throws: SecureFileError.self) { try RedactionKey.fingerprints(root: root) }
    #expect(try String(contentsOfFile: RedactionKey.path(root: root), encoding: .utf8) == content)
  }
}
