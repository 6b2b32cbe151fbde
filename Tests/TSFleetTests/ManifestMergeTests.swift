import Foundation
import Testing
import TSFleet
import TSManifest
import TSModel

/// The merge rule: a later manifest (layer, then the watch's own) wins over an earlier one at
/// the unit a section is managed by (lists by name); positions say where each value came from.
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
    Case(name: "contacts merge by name: the watch's new contacts follow the defaults'",
         defaults: "contacts:\n  - {name: Ward desk, phone: \"+15550100\"}\n  - {name: Night nurse, phone: \"+15550101\"}\n",
         own: "contacts:\n  - {name: Daughter, phone: \"+15550112\"}\n",
         merged: "contacts:\n  - {name: Ward desk, phone: \"+15550100\"}\n  - {name: Night nurse, phone: \"+15550101\"}\n  - {name: Daughter, phone: \"+15550112\"}\n"),
    Case(name: "an empty contact list of the watch clears the defaults' list",
         defaults: "contacts:\n  - {name: Ward desk, phone: \"+15550100\"}\n",
         own: "contacts: []\n",
         merged: "contacts: []\n"),
    Case(name: "contacts come from the defaults when the watch has none",
         defaults: "contacts:\n  - {name: Ward desk, phone: \"+15550100\"}\n",
         own: "reminders:\n  drinking: {enabled: true}\n",
         merged: "reminders:\n  drinking: {enabled: true}\ncontacts:\n  - {name: Ward desk, phone: \"+15550100\"}\n"),
    Case(name: "sos and the emergency contacts merge apart (sos inherited, contacts by name)",
         defaults: "emergency:\n  sos: true\n  contacts:\n    - {name: Ward desk, phone: \"+15550100\"}\n",
         own: "emergency:\n  contacts:\n    - {name: Son, phone: \"+15550114\"}\n",
         merged: "emergency:\n  sos: true\n  contacts:\n    - {name: Ward desk, phone: \"+15550100\"}\n    - {name: Son, phone: \"+15550114\"}\n"),
    Case(name: "a section neither has stays unmanaged",
         defaults: "contacts: []\n",
         own: "reminders:\n  drinking: {enabled: true}\n",
         merged: "reminders:\n  drinking: {enabled: true}\ncontacts: []\n"),
  ]

  @Test(arguments: cases)
  func merges(_ row: Case) throws {
    let merged = ManifestMerge.merge(defaults: try manifest(row.defaults, file: "defaults.yaml"),
                                     own: try manifest(row.own, file: "room.yaml"))
    #expect(merged.diagnostics.isEmpty)
    #expect(try ManifestEncoder.encode(merged.manifest) == ManifestEncoder.encode(try manifest(row.merged, file: "expected.yaml")))
    #expect(merged.manifest.file == "room.yaml over defaults.yaml")
  }

  /// Layers (bottom first, the watch's own manifest last), the merged manifest, and what the
  /// merge reports (`file:line:column: severity: field: message`, in part).
  struct LayerCase: Sendable, CustomTestStringConvertible {
    var name: String
    var layers: [String]
    /// `nil` when the merged manifest breaks a rule (it cannot be written as one manifest).
    var merged: String?
    var diagnostics: [String] = []
    var testDescription: String { name }
  }

  static let desk = "contacts:\n  - {name: Ward desk, phone: \"+15550100\"}\n"

  static let layerCases: [LayerCase] = [
    LayerCase(name: "a later layer wins over an earlier one, the watch over both, unit by unit",
              layers: ["reminders:\n  sedentary: {enabled: true}\n  drinking: {enabled: true}\n",
                       "reminders:\n  drinking: {enabled: false}\n  medicine: {enabled: true}\n",
                       "reminders:\n  medicine: {enabled: false}\n"],
              merged: "reminders:\n  sedentary: {enabled: true}\n  drinking: {enabled: false}\n  medicine: {enabled: false}\n"),
    LayerCase(name: "contacts merge by name: a later entry replaces the earlier one in its place, new names follow",
              layers: ["contacts:\n  - {name: Ward desk, phone: \"+15550100\"}\n  - {name: Night nurse, phone: \"+15550101\"}\n",
                       "contacts:\n  - {name: Daughter, phone: \"+15550112\"}\n  - {name: Ward desk, phone: \"+15550199\"}\n"],
              merged: "contacts:\n  - {name: Ward desk, phone: \"+15550199\"}\n  - {name: Night nurse, phone: \"+15550101\"}\n  - {name: Daughter, phone: \"+15550112\"}\n"),
    LayerCase(name: "a contact is removed by name; the rest is inherited",
              layers: ["contacts:\n  - {name: Ward desk, phone: \"+15550100\"}\n  - {name: Night nurse, phone: \"+15550101\"}\n",
                       "contacts:\n  - {name: Night nurse, remove: true}\n"],
              merged: desk),
    LayerCase(name: "an emergency contact is removed by name; sos is inherited",
              layers: ["emergency:\n  sos: true\n  contacts:\n    - {name: Ward desk, phone: \"+15550100\"}\n    - {name: Porter, phone: \"+15550102\"}\n",
                       "emergency:\n  contacts:\n    - {name: Porter, remove: true}\n    - {name: Son, phone: \"+15550114\"}\n"],
              merged: "emergency:\n  sos: true\n  contacts:\n    - {name: Ward desk, phone: \"+15550100\"}\n    - {name: Son, phone: \"+15550114\"}\n"),
    LayerCase(name: "a custom reminder is removed by name",
              layers: ["reminders:\n  custom:\n    - {name: Lunch, at: [\"12:00\"]}\n    - {name: Round, at: [\"08:00\"]}\n",
                       "reminders:\n  custom:\n    - {name: Lunch, remove: true}\n"],
              merged: "reminders:\n  custom:\n    - {name: Round, at: [\"08:00\"]}\n"),
    LayerCase(name: "a removal in a middle layer holds for the layers above it",
              layers: ["reminders:\n  custom:\n    - {name: Lunch, at: [\"12:00\"]}\n",
                       "reminders:\n  custom:\n    - {name: Lunch, remove: true}\n",
                       "reminders:\n  drinking: {enabled: true}\n"],
              merged: "reminders:\n  drinking: {enabled: true}\n  custom: []\n"),
    LayerCase(name: "removing a name nothing under it gives is a warning with the name meant",
              layers: ["reminders:\n  custom:\n    - {name: Lunch, at: [\"12:00\"]}\n",
                       "reminders:\n  custom:\n    - {name: Lnuch, remove: true}\n"],
              merged: "reminders:\n  custom:\n    - {name: Lunch, at: [\"12:00\"]}\n",
              diagnostics: ["layer1.yaml:3:14: warning: reminders.custom[0]: removes \"Lnuch\", but no manifest under this one gives an entry of that name in reminders.custom; nothing is removed; did you mean \"Lunch\"?"]),
    LayerCase(name: "a list of only removals over no list is a warning: it asks for none",
              layers: ["reminders:\n  drinking: {enabled: true}\n", "contacts:\n  - {name: Ward desk, remove: true}\n"],
              merged: "reminders:\n  drinking: {enabled: true}\ncontacts: []\n",
              diagnostics: ["layer1.yaml:1:1: warning: contacts: holds only removals and no manifest under it gives this list, so it asks for no contacts at all"]),
    LayerCase(name: "an emergency contact referring to a layer's contact takes its phone",
              layers: [desk, "emergency:\n  sos: true\n  contacts:\n    - {contact: Ward desk}\n"],
              merged: desk + "emergency:\n  sos: true\n  contacts:\n    - {name: Ward desk, phone: \"+15550100\"}\n"),
    LayerCase(name: "a reference is resolved for a watch with one layer and no manifest of its own",
              layers: [desk + "emergency:\n  sos: true\n  contacts:\n    - {contact: Ward desk}\n"],
              merged: desk + "emergency:\n  sos: true\n  contacts:\n    - {name: Ward desk, phone: \"+15550100\"}\n"),
    LayerCase(name: "a reference follows the last declaration of the name (the desk's new number, in both lists)",
              layers: [desk + "emergency:\n  sos: true\n  contacts:\n    - {contact: Ward desk}\n",
                       "contacts:\n  - {name: Ward desk, phone: \"+15550199\"}\n"],
              merged: "contacts:\n  - {name: Ward desk, phone: \"+15550199\"}\nemergency:\n  sos: true\n  contacts:\n    - {name: Ward desk, phone: \"+15550199\"}\n"),
    LayerCase(name: "a reference resolves even where a later layer drops the contacts list (npk stores none)",
              layers: [desk + "emergency:\n  sos: true\n  contacts:\n    - {contact: Ward desk}\n", "contacts: []\n"],
              merged: "contacts: []\nemergency:\n  sos: true\n  contacts:\n    - {name: Ward desk, phone: \"+15550100\"}\n"),
    LayerCase(name: "a reference to a name no layer declares is an error at the reference",
              layers: [desk, "emergency:\n  contacts:\n    - {contact: Ward dsek}\n"],
              merged: desk + "emergency:\n  contacts: []\n",
              diagnostics: ["layer1.yaml:3:17: error: emergency.contacts[0].contact: refers to the contact \"Ward dsek\", but none of that name is declared under contacts: in any of layer0.yaml, layer1.yaml; declare it under contacts:, or write name and phone here instead of contact:; did you mean \"Ward desk\"?"]),
    LayerCase(name: "removing every emergency contact under sos: true is an error at sos",
              layers: ["emergency:\n  sos: true\n  contacts:\n    - {name: Ward desk, phone: \"+15550100\"}\n",
                       "emergency:\n  contacts:\n    - {name: Ward desk, remove: true}\n"],
              merged: nil,
              diagnostics: ["layer0.yaml:2:8: error: emergency.sos: is true but the merged manifest of this watch (layer0.yaml under layer1.yaml) has no emergency contacts (layer1.yaml:3:14 removes \"Ward desk\")"]),
  ]

  @Test(arguments: layerCases)
  func mergesLayers(_ row: LayerCase) throws {
    let layers = try row.layers.enumerated().map { index, yaml in
      try manifest(yaml, file: "layer\(index).yaml", resolvesReferences: false)
    }
    let merged = ManifestMerge.merge(layers)
    if let expected = row.merged {
      #expect(try ManifestEncoder.encode(merged.manifest) == ManifestEncoder.encode(try manifest(expected, file: "expected.yaml")))
    }
    let reported = merged.diagnostics.map(\.description)
    #expect(reported.count == row.diagnostics.count, "\(reported)")
    for (got, expected) in zip(reported, row.diagnostics) { #expect(got.hasPrefix(expected), "\(got)") }
  }

  @Test func aReferenceInOneFileIsResolvedWhenTheFileIsRead() throws {
    let alone = try manifest(Self.desk + "emergency:\n  sos: true\n  contacts:\n    - {contact: Ward desk}\n", file: "watch.yaml")
    #expect(alone.emergency?.contacts?.value.map(\.phone.value) == ["+15550100"])
    // The phone is placed where it is declared: an edit there is the edit of both lists.
    #expect(alone.emergency?.contacts?.value.first?.phone.position.description == "watch.yaml:2:30")
    #expect(alone.emergency?.contacts?.value.first?.position.description == "watch.yaml:6:7")
  }

  @Test func withoutOwnManifestTheDefaultsAreTheManifest() throws {
    let defaults = try manifest("contacts: []\n", file: "defaults.yaml")
    #expect(ManifestMerge.merge(defaults: defaults, own: nil).manifest == defaults)
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
    let merged = ManifestMerge.merge(defaults: defaults, own: own).manifest
    let custom = try #require(merged.reminders?.custom?.value)
    #expect(custom.map { "\($0.name?.position.description ?? "")" } == ["wards/ward-a.yaml:3:14", "residents/room-12.yaml:3:14"])
    #expect(custom.map(\.path) == ["reminders.custom[0]", "reminders.custom[0]"])
    #expect(merged.contacts?.value.first?.phone.position.description == "wards/ward-a.yaml:6:30")
    #expect(ManifestMerge.surviving(defaults, in: merged) == ["contacts[0]", "contacts", "reminders.custom[0]"])
  }
}
