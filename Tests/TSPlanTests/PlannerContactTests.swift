import Testing
import TSManifest
import TSModel
import TSTestSupport
@testable import TSPlan

@Suite struct PlannerContactTests {
  static let alex = Contact(name: "Alex Doe", phoneNum: "+15550100", shortName: "A")
  static let sam = Contact(name: "Sam Roe", phoneNum: "+15550101", shortName: "S")
  static let kim = Contact(name: "Kim Li", phoneNum: "+15550102", shortName: "K")

  static let cases: [PlannerCase] = [
    PlannerCase(name: "add, remove and rename in one contacts change",
      state: States.watch(contacts: [alex, sam, kim]),
      manifest: Build.manifest(contacts: Build.contacts([("Alex Doe", "+15550100"), ("Samuel Roe", "+15550101"),
                                                          ("Lee Park", "+15550103")])),
      expected: ["~ contacts: contacts contacts contacts"]),
    PlannerCase(name: "order on the watch is not managed (fit: shortName not stored)",
      capabilities: Profiles.fit, state: States.watch(Profiles.fit, contacts: [sam, alex]),
      manifest: Build.manifest(contacts: Build.contacts([("Alex Doe", "+15550100"), ("Sam Roe", "+15550101")])),
      expected: []),
    PlannerCase(name: "shortName compared where stored",
      state: States.watch(contacts: [Contact(name: "Alex Doe", phoneNum: "+15550100", shortName: "X")]),
      manifest: Build.manifest(contacts: Build.contacts([("Alex Doe", "+15550100")])),
      expected: ["~ contacts: contacts"]),
    PlannerCase(name: "a derived short name keeps a watch contact that has none (added on the watch)",
      state: States.watch(contacts: [Contact(name: "Alex Doe", phoneNum: "+15550100", shortName: nil),
                                     Contact(name: "Sam Roe", phoneNum: "+15550101", shortName: "")]),
      manifest: Build.manifest(contacts: Build.contacts([("Alex Doe", "+15550100"), ("Sam Roe", "+15550101")])),
      expected: []),
    PlannerCase(name: "an explicit short name is written over a watch contact that has none",
      state: States.watch(contacts: [Contact(name: "Alex Doe", phoneNum: "+15550100", shortName: nil)]),
      manifest: Build.manifest(contacts: Located([Build.contact("contacts[0]", "Alex Doe", "+15550100", line: 51, shortName: "A")],
                                                 at: Build.at(50, 1))),
      expected: ["~ contacts: contacts"]),
    PlannerCase(name: "empty list clears all contacts",
      state: States.watch(contacts: [alex, sam]),
      manifest: Build.manifest(contacts: Build.contacts([])),
      expected: ["~ contacts: contacts contacts"]),
    PlannerCase(name: "contacts left out are untouched",
      state: States.watch(contacts: [alex]),
      manifest: Build.manifest(emergency: Build.emergency(sos: false)),
      expected: []),
    PlannerCase(name: "SOS turned on keeps the watch's emergency list",
      state: States.watch(emergency: EmergencyContacts(contacts: [sam], isSosOn: false)),
      manifest: Build.manifest(emergency: Build.emergency(sos: true)),
      expected: ["~ emergency: isSosOn"]),
    PlannerCase(name: "emergency list change keeps the watch's SOS",
      state: States.watch(emergency: EmergencyContacts(contacts: [sam], isSosOn: true)),
      manifest: Build.manifest(emergency: Build.emergency(contacts: [("Alex Doe", "+15550100")])),
      expected: ["~ emergency: contacts contacts"]),
    PlannerCase(name: "SOS off and emergency list cleared",
      state: States.watch(emergency: EmergencyContacts(contacts: [sam], isSosOn: true)),
      manifest: Build.manifest(emergency: Build.emergency(sos: false, contacts: [])),
      expected: ["~ emergency: isSosOn contacts"]),
    PlannerCase(name: "matching emergency section gives no change",
      capabilities: Profiles.npk,
      state: States.watch(Profiles.npk, emergency: EmergencyContacts(contacts: [sam], isSosOn: true)),
      manifest: Build.manifest(emergency: Build.emergency(sos: true, contacts: [("Sam Roe", "+15550101")])),
      expected: []),
  ]

  @Test(arguments: cases)
  func plansTheExpectedChanges(_ scenario: PlannerCase) {
    let result = Planner.plan(scenario.manifest, state: scenario.state, capabilities: scenario.capabilities)
    #expect(!result.diagnostics.hasErrors, "\(result.diagnostics)")
    #expect(States.summary(result.plan) == scenario.expected)
  }

  @Test func renameIsOneChangeAndAfterIsTheManifestOrder() throws {
    let state = States.watch(contacts: [Self.kim, Self.alex])
    let manifest = Build.manifest(contacts: Build.contacts([("Alexander Doe", "+15550100"), ("Kim Li", "+15550102")]))
    let change = try #require(Planner.plan(manifest, state: state, capabilities: Profiles.roomy).plan?.resourceChanges.first)
    #expect(ContactCounts(change.fields) == ContactCounts(renamed: 1))
    #expect(change.after == .contacts([Contact(name: "Alexander Doe", phoneNum: "+15550100", shortName: "A"),
                                       Contact(name: "Kim Li", phoneNum: "+15550102", shortName: "K")]))
    #expect(change.before == .contacts([Self.kim, Self.alex]))
  }

  @Test func unmanagedSOSKeepsTheWatchValueInAfter() throws {
    let state = States.watch(emergency: EmergencyContacts(contacts: [Self.sam], isSosOn: true))
    let manifest = Build.manifest(emergency: Build.emergency(contacts: [("Sam Roe", "+15550101"), ("Kim Li", "+15550102")]))
    let change = try #require(Planner.plan(manifest, state: state, capabilities: Profiles.roomy).plan?.resourceChanges.first)
    guard case .emergency(let after)? = change.after else { Issue.record("no emergency after"); return }
    #expect(after.isSosOn)
    #expect(after.contacts.map(\.phoneNum) == ["+15550101", "+15550102"])
  }

  /// Emergency contacts given without `sos:` on a watch whose SOS is off: the switch stays off,
  /// which a warning says with the fix (fresh-eyes fe101 #3: the plan showed only the contact,
  /// and SOS stayed off); with SOS on, or `sos:` written, nothing is said.
  @Test(arguments: [(false, nil, true), (true, nil, false), (false, false, false), (false, true, false)] as [(Bool, Bool?, Bool)])
  func contactsWithoutTheSOSSwitchOnAWatchWithSOSOffAreWarnedOf(_ watchOn: Bool, _ sos: Bool?, _ warned: Bool) throws {
    let state = States.watch(emergency: EmergencyContacts(contacts: [], isSosOn: watchOn))
    let manifest = Build.manifest(emergency: Build.emergency(sos: sos, contacts: [("Sam Roe", "+15550101")]))
    let result = Planner.plan(manifest, state: state, capabilities: Profiles.roomy)
    let warnings = result.diagnostics.filter { $0.severity == .warning && $0.field == "emergency.sos" }.map(\.message)
    #expect(warnings == (warned ? ["emergency contacts are given but `sos:` is not, so the watch keeps its SOS switch, which is off: "
      + "a long press calls none of them; add `sos: true` to switch it on (or `sos: false` to say it stays off)"] : []), "\(result.diagnostics)")
    #expect(result.plan != nil)
  }

  static let mom = Contact(name: "Mom", phoneNum: "+15550100")
  static let momNewNumber = Contact(name: "Mom", phoneNum: "+15550199")

  @Test(arguments: [
    ([alex, sam], [alex, sam], ContactCounts()),
    ([alex, sam], [sam], ContactCounts(removed: 1)),
    ([alex], [Contact(name: "A. Doe", phoneNum: "+15550100"), kim], ContactCounts(added: 1, renamed: 1)),
    // A new number for the same name is one change, not a removal and an addition.
    ([mom], [momNewNumber], ContactCounts(changed: 1)),
    // Name first: Mom keeps her identity even when her old number now belongs to someone else.
    ([mom], [momNewNumber, Contact(name: "Dad", phoneNum: "+15550100")], ContactCounts(added: 1, changed: 1)),
    // Duplicates pair one for one (a multiset): the second Mom is removed.
    ([mom, mom], [momNewNumber], ContactCounts(removed: 1, changed: 1)),
    ([mom], [mom, mom], ContactCounts(added: 1)),
    // A short name of its own is a change of the same contact.
    ([Contact(name: "Mom", phoneNum: "+15550100", shortName: "M")], [Contact(name: "Mom", phoneNum: "+15550100", shortName: "Z")],
     ContactCounts(changed: 1)),
  ])
  func contactDiffCounts(_ old: [Contact], _ new: [Contact], _ expected: ContactCounts) {
    #expect(ContactCounts(ContactDiff(from: old, to: new).fieldChanges) == expected)
  }

  /// 90 contacts with 9 new numbers: 9 changes, nothing added or removed (once "13 added, 13 removed").
  @Test func numberChangesKeepTheContacts() throws {
    let old = (0..<90).map { Contact(name: "Person \($0)", phoneNum: "+1555\(100_000 + $0)") }
    var new = old
    for index in stride(from: 0, to: 90, by: 10) { new[index].phoneNum = "+1666\(100_000 + index)" }
    #expect(ContactCounts(ContactDiff(from: old, to: new).fieldChanges) == ContactCounts(changed: 9))
  }
}
