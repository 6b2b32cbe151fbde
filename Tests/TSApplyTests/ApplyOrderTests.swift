import Testing
import TSApply
import TSModel
import TSPlan

/// Capabilities that differ only in whether replace-all exists.
private func capabilities(replaceAll: Bool) -> DeviceCapabilities {
  let kind = ReminderKindCapabilities(timeTypes: [.period, .point], storesRepeatDays: true, lunchBreak: .times,
                                      nameMaxBytes: 32, notesMaxBytes: 64, truncatesLongText: false)
  var operations: Set<ReminderOperation> = [.fetchAll, .setReminder, .deleteReminder, .createCustomTemplate]
  if replaceAll { operations.insert(.replaceAll) }
  return DeviceCapabilities(
    profile: replaceAll ? "with-replace-all" : "per-item", summary: "test",
    reminders: ReminderCapabilities(operations: operations, maxCustomReminders: 2, maxTimePoints: 10, supportsOnce: false,
                                    sedentary: kind, drinking: kind, medicine: kind, custom: kind),
    contacts: ContactCapabilities(maxContacts: 10, supportsEmergencyContacts: true, maxEmergencyContacts: 1,
                                  nameMaxBytes: 32, phoneMaxBytes: 20, storesShortName: false,
                                  contactsChangedListener: false, emergencyContactsChangedListener: false, sosRequestListener: true))
}

private let sedentary = Reminder(reminderId: "0", isEnabled: true, reminderType: .sedentary, repeatDays: .everyday)
private let drinking = Reminder(reminderId: "1", isEnabled: true, reminderType: .drinking, repeatDays: .everyday)
private let walk = Reminder(reminderId: "32", reminderName: "Walk", isEnabled: true, reminderType: .custom, repeatDays: .weekend)
private let state = DeviceState(reminders: [sedentary, drinking, walk], contacts: [], emergency: EmergencyContacts(contacts: [], isSosOn: false))

private func disabled(_ reminder: Reminder) -> Reminder {
  var copy = reminder
  copy.isEnabled = false
  return copy
}

private func update(_ kind: ReminderKind, _ before: Reminder) -> ResourceChange {
  ResourceChange(address: .builtIn(kind), action: .update, fields: [], before: .reminder(before), after: .reminder(disabled(before)))
}

private let deleteWalk = ResourceChange(address: .custom("Walk"), action: .delete, fields: [], before: .reminder(walk), after: nil)
private func create(_ name: String) -> ResourceChange {
  var change = ResourceChange(address: .custom(name), action: .create, fields: [], before: nil,
                              after: .reminder(Reminder(reminderId: "", reminderName: name, reminderType: .custom)))
  change.patch = ReminderPatch(name: name)
  return change
}
private let createRead = create("Read")
private let contactsChange = ResourceChange(address: .contacts, action: .update, fields: [], before: .contacts([]),
                                            after: .contacts([Contact(name: "Ann", phoneNum: "+15550100")]))

struct OrderCase: Sendable, CustomTestStringConvertible {
  let id: String
  let replaceAll: Bool
  let changes: [ResourceChange]
  let expected: [String]
  var customOrder: [String] = []
  var testDescription: String { id }
}

@Suite struct ApplyOrderTests {
  static let cases: [OrderCase] = [
    OrderCase(id: "two updates, replace-all platform: one call", replaceAll: true,
              changes: [update(.sedentary, sedentary), update(.drinking, drinking)],
              expected: ["replaceAll[0,1,32]"]),
    OrderCase(id: "two updates, per-item platform: one set each, in address order", replaceAll: false,
              changes: [update(.sedentary, sedentary), update(.drinking, drinking)],
              expected: ["set 1", "set 0"]),
    OrderCase(id: "one update, replace-all platform: a single set", replaceAll: true,
              changes: [update(.drinking, drinking)], expected: ["set 1"]),
    OrderCase(id: "delete and update fold into replace-all, deleted reminder left out", replaceAll: true,
              changes: [deleteWalk, update(.sedentary, sedentary)], expected: ["replaceAll[0,1]"]),
    OrderCase(id: "deletes come before creates so full slots are freed", replaceAll: false,
              changes: [createRead, deleteWalk], expected: ["delete 32", "create Read"]),
    OrderCase(id: "a create carries the other reminder changes in its replace-all", replaceAll: true,
              changes: [createRead, deleteWalk, update(.drinking, drinking)],
              expected: ["replaceAll[0,1]+create Read"]),
    OrderCase(id: "a create alone is template + set", replaceAll: true,
              changes: [createRead], expected: ["create Read"]),
    OrderCase(id: "new custom reminders in the manifest's order, not the plan's (address) order", replaceAll: false,
              changes: [create("Lunch"), create("Medicine round")], expected: ["create Medicine round", "create Lunch"],
              customOrder: ["Medicine round", "Lunch"]),
    OrderCase(id: "a name the manifest order lacks comes last", replaceAll: false,
              changes: [create("A"), create("B"), create("C")], expected: ["create C", "create A", "create B"],
              customOrder: ["C"]),
    OrderCase(id: "the first in the manifest's order rides the replace-all", replaceAll: true,
              changes: [create("Lunch"), create("Medicine round"), update(.drinking, drinking)],
              expected: ["replaceAll[0,1,32]+create Medicine round", "create Lunch"], customOrder: ["Medicine round", "Lunch"]),
    OrderCase(id: "contacts last, after reminders", replaceAll: false,
              changes: [contactsChange, update(.drinking, drinking)], expected: ["set 1", "contacts 1"]),
  ]

  @Test(arguments: cases)
  func orders(_ c: OrderCase) {
    let plan = Plan(manifestFile: "watch.yaml", profile: "test", priorStateDigest: state.fingerprint, resourceChanges: c.changes)
    let steps = ApplyOrder.steps(for: plan, state: state, capabilities: capabilities(replaceAll: c.replaceAll), customOrder: c.customOrder)
    #expect(steps.map(describe) == c.expected)
  }

  @Test func replaceAllKeepsWatchOrderAndWritesTheUpdatedValues() throws {
    let plan = Plan(manifestFile: "w", profile: "t", priorStateDigest: "",
                    resourceChanges: [update(.sedentary, sedentary), update(.drinking, drinking)])
    let steps = ApplyOrder.steps(for: plan, state: state, capabilities: capabilities(replaceAll: true))
    guard case .replaceAllReminders(let list, let covering)? = steps.first else {
      Issue.record("expected replace-all, got \(steps)")
      return
    }
    #expect(list == [disabled(sedentary), disabled(drinking), walk])
    #expect(Set(covering) == [.builtIn(.sedentary), .builtIn(.drinking)])
  }
}

private func describe(_ step: ApplyStep) -> String {
  switch step {
  case .replaceAllReminders(let list, _): "replaceAll[\(list.map(\.reminderId).joined(separator: ","))]"
  case .setReminder(let reminder, _): "set \(reminder.reminderId)"
  case .deleteReminder(let id, _): "delete \(id)"
  case .createCustomReminder(let patch, _): "create \(patch.name ?? "?")"
  case .replaceAllCreating(let base, let patch, _, _):
    "replaceAll[\(base.map(\.reminderId).joined(separator: ","))]+create \(patch.name ?? "?")"
  case .setAllContacts(let contacts): "contacts \(contacts.count)"
  case .setEmergencyContacts(let emergency): "emergency \(emergency.contacts.count)"
  }
}
