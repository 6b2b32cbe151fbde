import Foundation
import Testing
import TSApply
import TSModel
import TSPlan
import TSTestSupport

/// A fleet's saved plan: written 0600 and read back equal; told apart from a single watch's
/// (neither reader takes the other's); refused, saying what is wrong, when of another format,
/// damaged or edited.
@Suite struct SavedFleetPlanTests {
  static let plan = Plan(manifestFile: "residents/r.yaml over wards/w.yaml", profile: "default", priorStateDigest: "abc", resourceChanges: [
    ResourceChange(address: .contacts, action: .update, fields: [], before: .contacts([]), after: .contacts([])),
  ])
  static let saved = SavedFleetPlan(fleetPath: "fleet.yaml", watches: [
    SavedFleetPlan.Part(name: "room-1", device: "sim:watches/room-1.json", manifestsDigest: "d1", plan: plan),
  ], unplanned: ["room-3"])

  @Test func roundTripsAndIsNotASingleWatchsPlan() throws {
    let bytes = Array(canonicalJSON(Self.saved).utf8)
    #expect(try SavedFleetPlan.parse(bytes, path: "fleet.tfplan") == Self.saved)
    #expect(try SavedPlan.parse(bytes, path: "fleet.tfplan") == nil)
    let single = Array(canonicalJSON(SavedPlan(manifestPath: "watch.yaml", manifestDigest: "", plan: Self.plan)).utf8)
    #expect(try SavedFleetPlan.parse(single, path: "changes.tfplan") == nil)
    #expect(try SavedFleetPlan.parse(Array("contacts: []\n".utf8), path: "watch.yaml") == nil)
  }

  @Test func writtenPrivateAndNeverOverTheFleetFile() throws {
    let folder = try TSApplyBinary.temporaryDirectory().path
    try "watches: {}\n".write(toFile: folder + "/fleet.yaml", atomically: true, encoding: .utf8)
    try Self.saved.write(to: folder + "/fleet.tfplan")
    let mode = try FileManager.default.attributesOfItem(atPath: folder + "/fleet.tfplan")[.posixPermissions] as? Int
    #expect(mode == 0o600)
    #expect(throws: SecureFileError.self) { try Self.saved.write(to: folder + "/fleet.yaml") }
    #expect(try String(contentsOfFile: folder + "/fleet.yaml", encoding: .utf8) == "watches: {}\n")
  }

  @Test(arguments: [
    (#""tsapply_saved_fleet_plan" : 1"#, #""tsapply_saved_fleet_plan" : 2"#, "is a saved plan of format 2"),
    (#""tsapply_saved_fleet_plan" : 1"#, #""tsapply_saved_fleet_plan" : "one""#, "must be the format number 1"),
    (#""fleet_path" : "fleet.yaml""#, #""fleet_path" : "x.yaml", "fleet_path" : "fleet.yaml""#, #"the key "fleet_path" is written twice"#),
    (#""action" : "update""#, #""action" : "rename""#, #"watches[0].plan.resourceChanges[0].action: "rename" is not an accepted value"#),
    (#""manifests_sha256" : "d1","#, "", "watches[0].manifests_sha256: missing"),
  ])
  func refusalsSayWhatIsWrong(_ original: String, _ edited: String, _ reason: String) throws {
    let text = canonicalJSON(Self.saved)
    #expect(text.contains(original))
    do {
      _ = try SavedFleetPlan.parse(Array(text.replacingOccurrences(of: original, with: edited).utf8), path: "fleet.tfplan")
      Issue.record("accepted")
    } catch {
      #expect(error.description.contains(reason), "\(error)")
    }
  }
}
