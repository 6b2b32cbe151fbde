import Testing
import TSModel
@testable import TSPlan

/// Which changes put SOS at risk (`ResourceChange.putsSOSAtRisk`): what raises the critical
/// `sos_drift` alert. A name or a short name alone leaves every press reaching the same numbers
/// (fresh-eyes finding: an emergency contact stored on the watch without its short name raised
/// "SOS at risk: a press may reach no one").
@Suite struct SOSRiskTests {
  static let mom = Contact(name: "Mom", phoneNum: "+15550110", shortName: "M")
  static let dad = Contact(name: "Dad", phoneNum: "+15550111", shortName: "D")

  static func emergency(_ contacts: [Contact], sos: Bool = true) -> ResourceValue { .emergency(EmergencyContacts(contacts: contacts, isSosOn: sos)) }

  @Test(arguments: [
    ("short names dropped", emergency([mom, dad]), emergency([Contact(name: "Mom", phoneNum: "+15550110", shortName: ""), Contact(name: "Dad", phoneNum: "+15550111", shortName: "")]), false),
    ("a name changed", emergency([mom]), emergency([Contact(name: "Mother", phoneNum: "+15550110", shortName: "M")]), false),
    ("unchanged", emergency([mom, dad]), emergency([mom, dad]), false),
    ("a number changed", emergency([mom]), emergency([Contact(name: "Mom", phoneNum: "+15550119", shortName: "M")]), true),
    ("a contact removed", emergency([mom, dad]), emergency([mom]), true),
    ("a contact added", emergency([mom]), emergency([mom, dad]), true),
    // Compared as the planner compares the list (a multiset): an order no apply changes.
    ("the order changed", emergency([mom, dad]), emergency([dad, mom]), false),
    ("SOS switched off", emergency([mom]), emergency([mom], sos: false), true),
  ] as [(String, ResourceValue, ResourceValue, Bool)])
  func anEmergencyChange(_ what: String, _ before: ResourceValue, _ after: ResourceValue, _ atRisk: Bool) {
    let change = ResourceChange(address: .emergency, action: .update, fields: [], before: before, after: after)
    #expect(change.putsSOSAtRisk == atRisk, "\(what)")
    #expect([change].putSOSAtRisk == atRisk, "\(what)")
  }

  /// Another resource never puts SOS at risk; an emergency list not known on one side does.
  @Test func otherResourcesAndUnknownValues() {
    let contacts = ResourceChange(address: .contacts, action: .update, fields: [], before: .contacts([Self.mom]), after: .contacts([]))
    #expect(!contacts.putsSOSAtRisk)
    let unknown = ResourceChange(address: .emergency, action: .update, fields: [], before: nil, after: Self.emergency([Self.mom]))
    #expect(unknown.putsSOSAtRisk)
    #expect(![contacts].putSOSAtRisk && [contacts, unknown].putSOSAtRisk)
  }
}
