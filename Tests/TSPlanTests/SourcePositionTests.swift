import Testing
import TSManifest
import TSModel
import TSTestSupport
@testable import TSPlan

/// Each field change of a plan names the line of the key that sets it (docs/plan.md "Where a
/// value is set"), in block style as in flow style: a nested key (`period.end`,
/// `lunch_break.end`) its own line, not the line of its mapping's first key; a contact's
/// `short_name` its own line; a contact added its entry.
@Suite struct SourcePositionTests {
  struct Case: Sendable, CustomTestStringConvertible {
    var name: String
    var yaml: String
    /// Manifest path → the line its field changes must name.
    var lines: [String: Int]
    var testDescription: String { name }
  }

  static let block = """
    version: 1
    reminders:
      lunch_break:
        start: "12:10"
        end: "13:20"
      sedentary:
        enabled: true
        repeat: [mon, wed]
        period:
          start: "09:10"
          end: "17:20"
          every: 45m
        lunch_break:
          start: "12:00"
          end: "13:15"
        notes: Stand up
      medicine:
        enabled: true
        at:
          - "08:00"
          - "20:00"
      drinking:
        enabled: true
      custom:
        - name: Walk
          enabled: false
          at: ["19:30"]
    contacts:
      - name: Bob
        phone: "+15550111"
        short_name: Z
      - name: Nurse
        phone: "+15550122"
    emergency:
      sos: true
      contacts:
        - contact: Bob

    """

  static let flow = """
    version: 1
    reminders:
      lunch_break: {start: "12:10",
                    end: "13:20"}
      sedentary: {enabled: true, repeat: [mon, wed],
                  period: {start: "09:10",
                           end: "17:20", every: 45m},
                  lunch_break: {start: "12:00",
                                end: "13:15"}, notes: Stand up}
      medicine: {enabled: true, at: ["08:00", "20:00"]}
      drinking: {enabled: true}
      custom:
        - {name: Walk,
           enabled: false, at: ["19:30"]}
    contacts:
      - {name: Bob, phone: "+15550111",
         short_name: Z}
      - {name: Nurse, phone: "+15550122"}
    emergency: {sos: true,
                contacts: [{contact: Bob}]}

    """

  static let cases: [Case] = [
    Case(name: "block style", yaml: block, lines: [
      "reminders.sedentary.enabled": 7, "reminders.sedentary.repeat": 8,
      "reminders.sedentary.period.start": 10, "reminders.sedentary.period.end": 11, "reminders.sedentary.period.every": 12,
      "reminders.sedentary.lunch_break": 13, "reminders.sedentary.lunch_break.start": 14,
      "reminders.sedentary.lunch_break.end": 15, "reminders.sedentary.notes": 16,
      "reminders.medicine.enabled": 18, "reminders.medicine.at": 19,
      "reminders.drinking.enabled": 23, "reminders.lunch_break": 3, "reminders.lunch_break.start": 4,
      "reminders.lunch_break.end": 5,
      "reminders.custom[0].name": 25, "reminders.custom[0].enabled": 26, "reminders.custom[0].at": 27,
      "contacts[0]": 31, "contacts[1]": 32, "emergency.sos": 35, "emergency.contacts[0]": 30,
    ]),
    Case(name: "flow style", yaml: flow, lines: [
      "reminders.sedentary.enabled": 5, "reminders.sedentary.repeat": 5,
      "reminders.sedentary.period.start": 6, "reminders.sedentary.period.end": 7, "reminders.sedentary.period.every": 7,
      "reminders.sedentary.lunch_break": 8, "reminders.sedentary.lunch_break.start": 8,
      "reminders.sedentary.lunch_break.end": 9, "reminders.sedentary.notes": 9,
      "reminders.medicine.enabled": 10, "reminders.medicine.at": 10,
      "reminders.drinking.enabled": 11, "reminders.lunch_break": 3, "reminders.lunch_break.start": 3,
      "reminders.lunch_break.end": 4,
      "reminders.custom[0].name": 13, "reminders.custom[0].enabled": 14, "reminders.custom[0].at": 14,
      "contacts[0]": 17, "contacts[1]": 18, "emergency.sos": 19, "emergency.contacts[0]": 16,
    ]),
  ]

  /// Every field change names its key's line, and every line of the table is named.
  @Test(arguments: cases)
  func eachFieldNamesItsKeysLine(_ row: Case) throws {
    let loaded = ManifestLoader.load(bytes: Array(row.yaml.utf8), file: "watch.yaml")
    let manifest = try #require(loaded.manifest, "\(loaded.diagnostics)")
    // Bob is on the watch with another short name; Nurse is not.
    let state = States.watch(Profiles.roomy, contacts: [Contact(name: "Bob", phoneNum: "+15550111", shortName: "B")])
    let result = Planner.plan(manifest, state: state, capabilities: Profiles.roomy)
    #expect(!result.diagnostics.hasErrors, "\(result.diagnostics)")
    let fields = try #require(result.plan).resourceChanges.flatMap(\.fields)
    var named: [String: Int] = [:]
    for field in fields {
      let path = try #require(field.manifestPath)
      named[path] = field.source?.line
      if let line = row.lines[path] {
        #expect(field.source?.line == line, "\(path) (\(field.field)) names line \(field.source?.line ?? 0), expected \(line)")
      }
    }
    #expect(Set(named.keys).isSuperset(of: row.lines.keys), "not in the plan: \(Set(row.lines.keys).subtracting(named.keys).sorted())")
  }
}
