import Foundation
import Testing
import TSFleet
import TSManifest
import TSModel

/// The merge rule: a section of a watch's own manifest replaces the same section of the
/// defaults, at the unit a section is managed by; positions say where each value came from.
@Suite struct ManifestMergeTests {
  struct Case: Sendable, CustomTestStringConvertible {
    var name: String
    var defaults: String
    var own: String
    var merged: String
    var testDescription: String { name }
  }

  static let cases: [Case] = [
    Case(name: "a built-in of the watch replaces the defaults' one whole (notes are not inherited)",
         defaults: "reminders:\n  sedentary: {enabled: true, repeat: workday, notes: Stand up}\n",
         own: "reminders:\n  sedentary: {enabled: false}\n",
         merged: "reminders:\n  sedentary: {enabled: false}\n"),
    Case(name: "built-ins the watch does not name come from the defaults",
         defaults: "reminders:\n  sedentary: {enabled: true}\n  drinking: {enabled: true}\n",
         own: "reminders:\n  medicine: {enabled: true, at: [\"08:00\"]}\n",
         merged: "reminders:\n  sedentary: {enabled: true}\n  drinking: {enabled: true}\n  medicine: {enabled: true, at: [\"08:00\"]}\n"),
    Case(name: "custom reminders merge by name: the watch's replace, its new ones follow the defaults'",
         defaults: "reminders:\n  custom:\n    - {name: Lunch, at: [\"12:00\"]}\n    - {name: Round, at: [\"08:00\"]}\n",
         own: "reminders:\n  custom:\n    - {name: Round, at: [\"09:00\"], notes: Late}\n    - {name: Walk, at: [\"19:30\"]}\n",
         merged: "reminders:\n  custom:\n    - {name: Lunch, at: [\"12:00\"]}\n    - {name: Round, at: [\"09:00\"], notes: Late}\n    - {name: Walk, at: [\"19:30\"]}\n"),
    Case(name: "a watch turns a default custom reminder off by naming it",
         defaults: "reminders:\n  custom:\n    - {name: Lunch, at: [\"12:00\"]}\n",
         own: "reminders:\n  custom:\n    - {name: Lunch, enabled: false}\n",
         merged: "reminders:\n  custom:\n    - {name: Lunch, enabled: false}\n"),
    Case(name: "an empty custom list of the watch drops the defaults' custom reminders (a watch without them, e.g. fw)",
         defaults: "reminders:\n  drinking: {enabled: true}\n  custom:\n    - {name: Lunch, at: [\"12:00\"]}\n",
         own: "reminders:\n  custom: []\n",
         merged: "reminders:\n  drinking: {enabled: true}\n  custom: []\n"),
    Case(name: "custom reminders only in the defaults stay when the watch has other reminders",
         defaults: "reminders:\n  custom:\n    - {name: Lunch, at: [\"12:00\"]}\n",
         own: "reminders:\n  drinking: {enabled: true}\n",
         merged: "reminders:\n  drinking: {enabled: true}\n  custom:\n    - {name: Lunch, at: [\"12:00\"]}\n"),
    Case(name: "the contact list is replaced as a whole",
         defaults: "contacts:\n  - {name: Ward desk, phone: \"+15550100\"}\n  - {name: Night nurse, phone: \"+15550101\"}\n",
         own: "contacts:\n  - {name: Daughter, phone: \"+15550112\"}\n",
         merged: "contacts:\n  - {name: Daughter, phone: \"+15550112\"}\n"),
    Case(name: "an empty contact list of the watch clears the defaults' list",
         defaults: "contacts:\n  - {name: Ward desk, phone: \"+15550100\"}\n",
         own: "contacts: []\n",
         merged: "contacts: []\n"),
    Case(name: "contacts come from the defaults when the watch has none",
         defaults: "contacts:\n  - {name: Ward desk, phone: \"+15550100\"}\n",
         own: "reminders:\n  drinking: {enabled: true}\n",
         merged: "reminders:\n  drinking: {enabled: true}\ncontacts:\n  - {name: Ward desk, phone: \"+15550100\"}\n"),
    Case(name: "the emergency block is replaced as a whole (sos is not inherited)",
         defaults: "emergency:\n  sos: true\n  contacts:\n    - {name: Ward desk, phone: \"+15550100\"}\n",
         own: "emergency:\n  contacts:\n    - {name: Son, phone: \"+15550114\"}\n",
         merged: "emergency:\n  contacts:\n    - {name: Son, phone: \"+15550114\"}\n"),
    Case(name: "a section neither has stays unmanaged",
         defaults: "contacts: []\n",
         own: "reminders:\n  drinking: {enabled: true}\n",
         merged: "reminders:\n  drinking: {enabled: true}\ncontacts: []\n"),
  ]

  @Test(arguments: cases)
  func merges(_ row: Case) throws {
    let merged = ManifestMerge.merge(defaults: try manifest(row.defaults, file: "defaults.yaml"),
                                     own: try manifest(row.own, file: "room.yaml"))
    #expect(try ManifestEncoder.encode(merged) == ManifestEncoder.encode(try manifest(row.merged, file: "expected.yaml")))
    #expect(merged.file == "room.yaml over defaults.yaml")
  }

  @Test func withoutOwnManifestTheDefaultsAreTheManifest() throws {
    let defaults = try manifest("contacts: []\n", file: "defaults.yaml")
    #expect(ManifestMerge.merge(defaults: defaults, own: nil) == defaults)
  }

  @Test func everyMergedValueKeepsTheFileAndLineItCameFrom() throws {
    let defaults = try manifest("""
      reminders:
        custom:
          - {name: Lunch, at: ["12:00"]}
          - {name: Round, at: ["08:00"]}
      contacts:
        - {name: Ward desk, phone: "+15550100"}

      """, file: "wards/ward-a.yaml")
    let own = try manifest("""
      reminders:
        custom:
          - {name: Round, at: ["09:00"]}

      """, file: "residents/room-12.yaml")
    let merged = ManifestMerge.merge(defaults: defaults, own: own)
    let custom = try #require(merged.reminders?.custom?.value)
    #expect(custom.map { "\($0.name?.position.description ?? "")" } == ["wards/ward-a.yaml:3:14", "residents/room-12.yaml:3:14"])
    #expect(custom.map(\.path) == ["reminders.custom[0]", "reminders.custom[0]"])
    #expect(merged.contacts?.value.first?.phone.position.description == "wards/ward-a.yaml:6:30")
    #expect(ManifestMerge.surviving(defaults, in: merged) == ["contacts", "reminders.custom[0]"])
  }
}
