import Foundation
import Testing
import TSApply
import TSDevice
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

  /// A key written twice (a hand edit gone wrong) is refused by every reader of records, saved
  /// plans and state files: JSONDecoder keeps one value without a word, so a watch could show
  /// no contacts while `jq` shows them all (found by a tester).
  @Test func aKeyWrittenTwiceIsRefusedEverywhere() throws {
    let backup = try Self.backupText(#"{"format_version": 1, "created_at": "2026-11-29T23:18:41Z", "profile": "default", "state": {"reminders": [], "contacts": [], "contacts": []}}"#)
    #expect(backup.hasSuffix(#"state: the key "contacts" is written twice (lines 1 and 1); JSON readers keep one or the other, so which one holds is not clear"#), "\(backup)")

    let plan = Plan(manifestFile: "watch.yaml", profile: "default", priorStateDigest: "", resourceChanges: [])
    let text = canonicalJSON(SavedPlan(manifestPath: "watch.yaml", manifestDigest: "", plan: plan))
      .replacingOccurrences(of: #""manifest_path" : "watch.yaml","#, with: "\"manifest_path\" : \"x.yaml\",\n  \"manifest_path\" : \"watch.yaml\",")
    #expect(throws: SavedPlanError.self) { try SavedPlan.parse(Array(text.utf8), path: "changes.tfplan") }
    do { _ = try SavedPlan.parse(Array(text.utf8), path: "changes.tfplan") } catch {
      #expect(error.description.contains(#"the key "manifest_path" is written twice"#), "\(error)")
    }

    let folder = try TSApplyBinary.temporaryDirectory().path
    let record = folder + "/last-applied.json"
    let device = "sim:/w/device.json"
    try canonicalJSON(LastApplied(device: device, profile: "default", state: DeviceState()))
      .replacingOccurrences(of: #""profile" : "default""#, with: #""profile" : "fw", "profile" : "default""#)
      .write(toFile: record, atomically: true, encoding: .utf8)
    #expect(throws: LastAppliedError.self) { try LastApplied.load(at: record, device: device) }
    #expect(LastApplied.read(at: record, device: device) == nil)

    let stateFile = folder + "/device.json"
    let watch = SimulatedWatch(profile: .default, state: DeviceState(contacts: [Contact(name: "Alex", phoneNum: "+15550100")]))
    let written = String(decoding: try watch.jsonData(), as: UTF8.self)
    try written.replacingOccurrences(of: #""contacts" : ["#, with: #""contacts" : [], "contacts" : ["#)
      .write(toFile: stateFile, atomically: true, encoding: .utf8)
    do {
      _ = try SimulatedDevice(path: stateFile)
      Issue.record("a state file with a key written twice was opened")
    } catch {
      #expect(error.code == .dataFormatError, "\(error)")
      #expect(error.description.contains(#"is corrupted: the key "contacts" is written twice (lines 3 and 3)"#), "\(error)")
    }
  }
}
