import Foundation
import Testing
import TSApply
@testable import TSDevice
import TSEngine
import TSModel
import TSPlan

/// What `drift --pending`, statuses and the page count as pending (`DriftReport.unapplied`,
/// docs/plan.md "Drift"): every change the manifest itself asks for that the last apply did not
/// make — also of a resource that drifted — and never a change that only undoes drift.
@Suite struct PendingTests {
  static let applied = """
    contacts:
      - {name: Ann, phone: "+15550100"}
      - {name: Bob, phone: "+15550111"}
    reminders:
      sedentary: {enabled: true}
      drinking: {enabled: true}

    """

  /// A change the wearer makes on the watch.
  typealias Wearer = @Sendable (inout SimulatedWatch) -> Void

  static let toggleDrinking: Wearer = { watch in
    if let index = watch.reminders.firstIndex(where: { $0.kind == .drinking }) { watch.reminders[index].isEnabled.toggle() }
  }
  /// Sedentary off, and its hours moved (a field the manifest does not set).
  static let sedentaryOffAndMoved: Wearer = { watch in
    if let index = watch.reminders.firstIndex(where: { $0.kind == .sedentary }) {
      watch.reminders[index].isEnabled = false
      watch.reminders[index].startTime += 60
    }
  }
  static let addZed: Wearer = { watch in watch.contacts.append(Contact(name: "Zed", phoneNum: "+15550199", shortName: "")) }

  /// (name, the wearer's change, the manifest as edited since the apply, the resources pending
  /// as the manifest's own, whether the watch holds the manifest)
  static let cases: [(String, Wearer, String, [String], Bool)] = [
    ("the manifest unchanged: only undoing the wearer's toggle", toggleDrinking, applied, [], true),
    ("the manifest unchanged: undoing a reminder changed in a field it does not set too", sedentaryOffAndMoved, applied, [], true),
    ("the manifest sets the drifted reminder's hours", sedentaryOffAndMoved,
     applied.replacingOccurrences(of: "sedentary: {enabled: true}", with: "sedentary: {enabled: true, period: {start: \"10:00\", end: \"18:00\", every: 1h}}"),
     ["reminder.sedentary"], false),
    ("the manifest changes a number in the contacts the wearer added to", addZed,
     applied.replacingOccurrences(of: "+15550111", with: "+15550112"), ["contacts"], false),
    ("the manifest changes another resource", addZed,
     applied.replacingOccurrences(of: "drinking: {enabled: true}", with: "drinking: {enabled: false}"), ["reminder.drinking"], false),
    ("the manifest asks what the wearer did", toggleDrinking,
     applied.replacingOccurrences(of: "drinking: {enabled: true}", with: "drinking: {enabled: false}"), [], true),
  ]

  @Test(arguments: 0..<cases.count) func pendingIsTheManifestsOwnChanges(_ index: Int) async throws {
    let (name, wearer, edited, pending, holds) = Self.cases[index]
    let space = try Workspace()
    _ = try await space.open().apply(try space.document(Self.applied), options: Workspace.automatic(true))
    let device = try SimulatedDevice(path: space.directory + "/watch.json")
    try device.store.update { (watch: inout SimulatedWatch) throws(DeviceError) in wearer(&watch) }
    let report = try await space.open().drift(try space.document(edited))
    #expect(!report.drift.isEmpty, "\(name): no drift")
    #expect(report.unapplied.map(\.address.rawValue) == pending, "\(name): \(report.unapplied.map(\.address.rawValue))")
    #expect(report.holdsManifest == holds, "\(name)")
    // The renderers count the same.
    let json = DriftRenderer.json(drift: report.drift, pending: report.pending, hasRecord: true, redact: false, own: report.own)
    #expect(json.contains("\"pending\" : \(pending.count)\n"), "\(name): \(json)")
    let text = DriftRenderer.text(drift: report.drift, pending: report.pending, hasRecord: true, color: false, redact: false, own: report.own)
    #expect(text.contains("Pending: ") == !pending.isEmpty, "\(name): \(text)")
  }

  /// A contact name the platform keeps shorter than the manifest rules' 32 bytes (npk's
  /// emergency contacts: 31) is warned of once, with what this watch keeps, not also as "stored
  /// as … (32 bytes)" (fresh-eyes fe96 #7: two warnings at one name saying two things).
  @Test func aNameThePlatformCutsShorterIsWarnedOfOnceWithWhatItKeeps() async throws {
    let space = try Workspace(profile: try PlatformProfile.named("npk"))
    let yaml = "emergency:\n  sos: true\n  contacts:\n    - {name: \"Großmutter Ästrid-Ölschläger xy\", phone: \"+4915112345678\"}\n"
    let plan = try await space.open().plan(try space.document(yaml)).plan
    let atName = plan.warnings.filter { $0.field == "emergency.contacts[0].name" }
    #expect(atName.count == 1 && atName.first?.message.hasSuffix("so it will be stored as \"Großmutter Ästrid-Ölschläge\" (31 bytes)") == true,
            "\(atName.map(\.message))")
  }

  /// A custom reminder whose name the platform cuts (fit: 30 bytes) switched on the watch: the
  /// drift names it in the manifest's words, as the plan does, so undoing it is not a change of
  /// the manifest's own, the manifest states it, and adopting it finds it (fresh-eyes fe96 #1:
  /// drift named "…on she", the plan "…on sheet", and drift called the undo pending).
  @Test func driftOfAReminderWhoseNameTheWatchCutsIsInTheManifestsWords() async throws {
    let space = try Workspace(profile: .fit)
    let yaml = "reminders:\n  custom:\n    - {name: Physiotherapy exercises on sheet, enabled: true, at: [\"15:00\"]}\n"
    _ = try await space.open().apply(try space.document(yaml), options: Workspace.automatic(true))
    let device = try SimulatedDevice(path: space.directory + "/watch.json")
    try device.store.update { (watch: inout SimulatedWatch) throws(DeviceError) in
      if let index = watch.reminders.firstIndex(where: { $0.kind == .custom }) { watch.reminders[index].isEnabled.toggle() }
    }
    let document = try space.document(yaml)
    let report = try await space.open().drift(document)
    let address = ResourceAddress.custom("Physiotherapy exercises on sheet")
    #expect(report.drift.map(\.address) == [address])
    #expect(report.pending.resourceChanges.map(\.address) == [address])
    #expect(report.unapplied.isEmpty && report.holdsManifest, "\(report.unapplied.map(\.address))")
    let text = DriftRenderer.text(drift: report.drift, pending: report.pending, hasRecord: true, color: false, redact: false, own: report.own)
    #expect(!text.contains("on she\"") && !text.contains("Pending: "), "\(text)")
    let adopted = try await space.open().adoption(of: report, manifest: Array(yaml.utf8), file: "watch.yaml")
    #expect(adopted.adopted.map(\.address) == [address] && String(decoding: adopted.text, as: UTF8.self).contains("enabled: false"),
            "\(adopted.notAdopted)")
  }
}
