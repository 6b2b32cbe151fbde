import Foundation
import Testing
import TSApply
import TSModel
import TSPlan
import TSTestSupport

/// A backup or saved plan that cannot be decoded is refused naming the file and the field in
/// plain words, never with a dump of Swift's `DecodingError` (found by the records fuzz target:
/// `restore` printed `DecodingError.keyNotFound … CodingKeys(stringValue: "created_at" …)`).
@Suite struct RecordDecodingTests {
  static let rawWords = ["DecodingError", "CodingKeys", "codingPath", "Debug description", "keyNotFound"]

  static func backupText(_ body: String) throws -> String {
    let path = try TSApplyBinary.temporaryDirectory().appendingPathComponent("backup.json").path
    try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    try body.write(toFile: path, atomically: true, encoding: .utf8)
    do {
      _ = try Backup.read(path: path)
      Issue.record("accepted: \(body)")
      return ""
    } catch {
      #expect(error.description.contains(path))
      return error.description
    }
  }

  @Test(arguments: [
    (#"{"tsapply_saved_plan": 1, "plan": {}}"#, "not a tsapply backup (format_version: missing)"),
    (#"{"format_version": 1, "created_at": "2026-11-29T23:18:41Z", "profile": "default", "state": {"reminders": [], "contacts": [{"name": "Alex"}]}}"#,
     "not a tsapply backup (state.contacts[0].phoneNum: missing)"),
    (#"{"format_version": 1, "created_at": 7, "profile": "default", "state": {}}"#,
     "not a tsapply backup (created_at: expected text, found a number)"),
    (#"{"format_version": 2, "layout": "new"}"#, "backup format 2 is not supported (expected 1)"),
    ("[1, 2", "not a tsapply backup (top level: not valid JSON)"),
  ])
  func backupRefusalsSayWhatIsWrong(_ body: String, _ reason: String) throws {
    let message = try Self.backupText(body)
    #expect(message.hasSuffix(reason), "\(message)")
    for word in Self.rawWords { #expect(!message.contains(word), "\(message)") }
  }

  @Test func savedPlanRefusalsSayWhatIsWrong() throws {
    let plan = Plan(manifestFile: "watch.yaml", profile: "default", priorStateDigest: "", resourceChanges: [
      ResourceChange(address: .contacts, action: .update, fields: [], before: .contacts([]), after: .contacts([])),
    ])
    let text = canonicalJSON(SavedPlan(manifestPath: "watch.yaml", manifestDigest: "", plan: plan))
      .replacingOccurrences(of: #""action" : "update""#, with: #""action" : "rename""#)
    #expect(throws: SavedPlanError.unreadable(path: "changes.tfplan",
                                              reason: #"plan.resourceChanges[0].action: "rename" is not an accepted value"#)) {
      try SavedPlan.parse(Array(text.utf8), path: "changes.tfplan")
    }
    let missing = #"{"tsapply_saved_plan": 1, "manifest_path": "watch.yaml", "manifest_sha256": ""}"#
    #expect(throws: SavedPlanError.unreadable(path: "changes.tfplan", reason: "plan: missing")) {
      try SavedPlan.parse(Array(missing.utf8), path: "changes.tfplan")
    }
  }
}
