import TSManifest
import TSModel
import TSTestSupport
@testable import TSPlan

extension Generator {
  // MARK: Watch states

  mutating func state() -> DeviceState {
    var state = Profiles.factoryState(capabilities)
    for index in state.reminders.indices {
      guard let kind = state.reminders[index].kind, let storage = capabilities.reminders[kind] else { continue }
      state.reminders[index] = randomReminder(base: state.reminders[index], storage: storage)
    }
    if let storage = capabilities.reminders.custom {
      for offset in 0..<count(min(capabilities.reminders.maxCustomReminders, 4)) {
        let base = Reminder(reminderId: String(32 + offset), reminderType: .custom)
        state.reminders.append(randomReminder(base: base, storage: storage))
      }
    }
    state.contacts = contacts(max: min(capabilities.contacts.maxContacts, 5))
    if capabilities.contacts.supportsEmergencyContacts {
      let list = contacts(max: capabilities.contacts.maxEmergencyContacts)
      state.emergency = EmergencyContacts(contacts: list, isSosOn: !list.isEmpty && chance(50))
    }
    return Storage.stored(state, capabilities: capabilities)
  }

  mutating func randomReminder(base: Reminder, storage: ReminderKindCapabilities) -> Reminder {
    let patch = ReminderPatch(name: name(for: storage), isEnabled: chance(50), repeatDays: repeatDays(for: storage),
                              schedule: schedule(for: storage), lunchBreak: lunch(for: storage), notes: note(for: storage))
    return patch.applying(to: base)
  }

  mutating func contacts(max: Int) -> [Contact] {
    (0..<count(max)).map { _ in
      let name = pick(Self.people)
      return Contact(name: name, phoneNum: pick(Self.phones), shortName: chance(70) ? String(name.prefix(1)) : "#")
    }
  }
}
