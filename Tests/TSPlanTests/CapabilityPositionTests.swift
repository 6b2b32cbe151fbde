import Testing
import TSManifest
import TSModel
import TSTestSupport
@testable import TSPlan

/// A manifest read from YAML that asks a platform for what it lacks: each capability problem
/// points at the key that asks for it (1️⃣), not at its section, its value's first line or 1:1
/// (`ReminderChecks`, `ReminderPlanner`, `ContactPlanner`; docs/platforms.md "The table").
@Suite struct CapabilityPositionTests {
  struct Row: Sendable, CustomTestStringConvertible {
    var profile: DeviceCapabilities
    var marked: String
    var field: String
    var severity: Diagnostic.Severity = .error
    var testDescription: String { "\(profile.profile) \(field): \(marked.debugDescription)" }
  }

  static let rows: [Row] = [
    Row(profile: Profiles.fitBasic, marked: "reminders:\n  1️⃣medicine:\n    enabled: true\n", field: "reminders.medicine"),
    Row(profile: Profiles.fitBasic, marked: "reminders:\n  1️⃣medicine: {enabled: true}\n", field: "reminders.medicine"),
    Row(profile: Profiles.fitBasic, marked: "reminders:\n  1️⃣custom:\n    - {name: Walk, at: [\"19:30\"]}\n", field: "reminders.custom"),
    Row(profile: Profiles.fw, marked: "reminders:\n  1️⃣custom: [{name: Walk, at: [\"19:30\"]}]\n", field: "reminders.custom"),
    Row(profile: Profiles.fitBasic, marked: "reminders:\n  drinking:\n    enabled: true\n    1️⃣at:\n      - \"08:00\"\n",
        field: "reminders.drinking.at"),
    Row(profile: Profiles.fitBasic, marked: "reminders:\n  drinking: {enabled: true, 1️⃣at: [\"08:00\"]}\n", field: "reminders.drinking.at"),
    Row(profile: Profiles.fitBasic, marked: "reminders:\n  drinking:\n    1️⃣lunch_break: true\n", field: "reminders.drinking.lunch_break"),
    Row(profile: Profiles.fitBasic, marked: "reminders:\n  sedentary:\n    1️⃣lunch_break:\n      start: \"12:00\"\n      end: \"13:00\"\n",
        field: "reminders.sedentary.lunch_break"),
    Row(profile: Profiles.fitBasic, marked: "reminders:\n  sedentary:\n    1️⃣repeat:\n      - mon\n      - tue\n",
        field: "reminders.sedentary.repeat"),
    Row(profile: Profiles.fitBasic, marked: "reminders:\n  sedentary: {1️⃣repeat: workday}\n", field: "reminders.sedentary.repeat"),
    Row(profile: Profiles.fitBasic, marked: "reminders:\n  sedentary:\n    1️⃣notes: Stand up\n", field: "reminders.sedentary.notes",
        severity: .warning),
    Row(profile: Profiles.fit, marked: "contacts:\n  - name: Ann\n    phone: \"+15550100\"\n    short_name: 1️⃣X\n",
        field: "contacts[0].short_name", severity: .warning),
    Row(profile: Profiles.npk, marked: "reminders:\n  sedentary: {repeat: 1️⃣once}\n", field: "reminders.sedentary.repeat"),
  ]

  @Test(arguments: rows)
  func pointsAtTheKey(_ row: Row) throws {
    let text = MarkedText(row.marked)
    let loaded = ManifestLoader.load(bytes: Array(text.text.utf8), file: "watch.yaml")
    let manifest = try #require(loaded.manifest, "\(loaded.diagnostics)")
    let result = Planner.plan(manifest, state: Profiles.factoryState(row.profile), capabilities: row.profile)
    let expected = text.position("1️⃣")
    #expect(result.diagnostics.map { "\($0.severity) \($0.field) \($0.position?.line ?? 0):\($0.position?.column ?? 0)" }
            == ["\(row.severity) \(row.field) \(expected.line):\(expected.column)"])
  }
}
