import Testing
import TSModel
@testable import TSPlan

@Suite struct SafetyFindingTests {
  static let a = Contact(name: "A", phoneNum: "+15550100")
  static let b = Contact(name: "B", phoneNum: "+15550101")
  static let c = Contact(name: "C", phoneNum: "+15550102")

  static func contactsChange(_ old: [Contact], _ new: [Contact]) -> ResourceChange {
    ResourceChange(address: .contacts, action: .update, fields: ContactDiff(from: old, to: new).fieldChanges,
                   before: .contacts(old), after: .contacts(new))
  }
  static func emergencyChange(_ old: EmergencyContacts, _ new: EmergencyContacts) -> ResourceChange {
    ResourceChange(address: .emergency, action: .update, fields: ContactDiff(from: old.contacts, to: new.contacts).fieldChanges,
                   before: .emergency(old), after: .emergency(new))
  }
  static func deleteCustom(_ name: String) -> ResourceChange {
    ReminderPlanner.delete(States.custom(40, name), at: .custom(name), list: SourcePosition(file: "watch.yaml", line: 3, column: 3))
  }
  static let renamed = Contact(name: "Bee", phoneNum: "+15550101")

  static let cases: [(String, [ResourceChange], [SafetyFinding])] = [
    ("nothing destructive", [contactsChange([a], [a, b])], []),
    ("clears all contacts", [contactsChange([a, b, c], [])], [.clearsAllContacts(count: 3)]),
    ("removes some contacts", [contactsChange([a, b, c], [a])], [.removesContacts(count: 2, of: 3)]),
    ("a rename is not a removal", [contactsChange([a, b], [a, renamed])], []),
    ("deleted custom reminders, sorted", [deleteCustom("Walk"), deleteCustom("Yoga")],
     [.deletesCustomReminders([.custom("Walk"), .custom("Yoga")])]),
    ("SOS turned off", [emergencyChange(EmergencyContacts(contacts: [a], isSosOn: true), EmergencyContacts(contacts: [a], isSosOn: false))],
     [.disablesSOS]),
    ("SOS turned on is safe", [emergencyChange(EmergencyContacts(contacts: [a], isSosOn: false), EmergencyContacts(contacts: [a], isSosOn: true))],
     []),
    ("emergency list cleared and SOS off", [emergencyChange(EmergencyContacts(contacts: [a, b], isSosOn: true),
                                                           EmergencyContacts(contacts: [], isSosOn: false))],
     [.clearsEmergencyContacts(count: 2), .disablesSOS]),
    ("an emergency contact removed", [emergencyChange(EmergencyContacts(contacts: [a, b], isSosOn: true),
                                                      EmergencyContacts(contacts: [a], isSosOn: true))],
     [.removesEmergencyContacts(count: 1)]),
    ("an emergency contact renamed", [emergencyChange(EmergencyContacts(contacts: [a, b], isSosOn: true),
                                                      EmergencyContacts(contacts: [a, renamed], isSosOn: true))],
     [.changesEmergencyContacts(count: 1)]),
    ("an emergency contact's number changed",
     [emergencyChange(EmergencyContacts(contacts: [a], isSosOn: true),
                      EmergencyContacts(contacts: [Contact(name: "A", phoneNum: "+15550199")], isSosOn: true))],
     [.changesEmergencyContacts(count: 1)]),
    ("an emergency contact added is safe", [emergencyChange(EmergencyContacts(contacts: [a], isSosOn: true),
                                                            EmergencyContacts(contacts: [a, b], isSosOn: true))], []),
    ("all at once, in fixed order", [deleteCustom("Walk"), contactsChange([a], []),
                                     emergencyChange(EmergencyContacts(contacts: [a], isSosOn: true), EmergencyContacts(contacts: [], isSosOn: false))],
     [.clearsAllContacts(count: 1), .deletesCustomReminders([.custom("Walk")]), .clearsEmergencyContacts(count: 1), .disablesSOS]),
  ]

  @Test(arguments: cases)
  func findings(_ name: String, _ changes: [ResourceChange], _ expected: [SafetyFinding]) {
    let plan = Plan(manifestFile: "watch.yaml", profile: "default", priorStateDigest: "", resourceChanges: changes)
    #expect(safetyFindings(for: plan) == expected, "\(name)")
  }

  @Test(arguments: [
    (SafetyFinding.clearsAllContacts(count: 3), "clears all 3 contacts"),
    (.clearsAllContacts(count: 1), "clears the only contact"),
    (.removesContacts(count: 1, of: 4), "removes 1 contact"),
    (.deletesCustomReminders([.custom("A"), .custom("B")]), #"deletes 2 custom reminders: reminder.custom["A"], reminder.custom["B"]"#),
    (.disablesSOS, "turns SOS off"),
    (.clearsEmergencyContacts(count: 2), "clears all 2 emergency contacts"),
  ])
  func descriptions(_ finding: SafetyFinding, _ text: String) {
    #expect(finding.description == text)
  }

  /// The safety gate's rule: every finding is unsafe except removing at most a third of the contacts.
  @Test(arguments: [
    (SafetyFinding.clearsAllContacts(count: 1), true),
    (.removesContacts(count: 1, of: 3), false),
    (.removesContacts(count: 3, of: 9), false),
    (.removesContacts(count: 4, of: 9), true),
    (.removesContacts(count: 1, of: 2), true),
    (.deletesCustomReminders([.custom("A")]), true),
    (.disablesSOS, true),
    (.clearsEmergencyContacts(count: 1), true),
    (.removesEmergencyContacts(count: 1), true),
    (.changesEmergencyContacts(count: 1), true),
  ])
  func unsafeFindings(_ finding: SafetyFinding, _ unsafe: Bool) {
    #expect(finding.isUnsafe == unsafe, "\(finding)")
  }
}
