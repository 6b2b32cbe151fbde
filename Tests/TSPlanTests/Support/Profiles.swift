import TSModel

/// Capability sets resembling the simulated watch's platform profiles (issue 3; sdk-facts.md §6).
/// Made here because TSPlan must not depend on TSDevice.
enum Profiles {
  static func kind(_ types: Set<ReminderTimeType> = [.period, .point], repeatDays: Bool = true,
                   lunch: LunchBreakSupport = .times, name: Int? = 32, notes: Int? = 64,
                   truncates: Bool = false) -> ReminderKindCapabilities {
    ReminderKindCapabilities(timeTypes: types, storesRepeatDays: repeatDays, lunchBreak: lunch,
                             nameMaxBytes: name, notesMaxBytes: notes, truncatesLongText: truncates)
  }

  static func contacts(max: Int, emergency: Int, name: Int = 32, phone: Int = 20, shortName: Bool) -> ContactCapabilities {
    ContactCapabilities(maxContacts: max, supportsEmergencyContacts: emergency > 0, maxEmergencyContacts: emergency,
                        nameMaxBytes: name, phoneMaxBytes: phone, storesShortName: shortName,
                        contactsChangedListener: false, emergencyContactsChangedListener: false, sosRequestListener: false)
  }

  static let roomy = DeviceCapabilities(
    profile: "default", summary: "roomy demo watch",
    reminders: ReminderCapabilities(operations: Set(ReminderOperation.allCases), maxCustomReminders: 10, maxTimePoints: 10,
                                    supportsOnce: true, sedentary: kind(), drinking: kind(), medicine: kind(), custom: kind()),
    contacts: contacts(max: 100, emergency: 5, shortName: true))

  static let npk = DeviceCapabilities(
    profile: "npk", summary: "protobuf platform",
    reminders: ReminderCapabilities(operations: Set(ReminderOperation.allCases), maxCustomReminders: 4, maxTimePoints: 10,
                                    supportsOnce: false, sedentary: kind(), drinking: kind(), medicine: kind(), custom: kind()),
    contacts: contacts(max: 14, emergency: 1, name: 31, phone: 31, shortName: false))

  static let fit = DeviceCapabilities(
    profile: "fit", summary: "FitCloud personalized",
    reminders: ReminderCapabilities(operations: [.fetchAll, .setReminder, .deleteReminder, .createCustomTemplate],
                                    maxCustomReminders: 3, maxTimePoints: 10, supportsOnce: true,
                                    sedentary: kind(name: 30, notes: 60, truncates: true),
                                    drinking: kind(name: 30, notes: 60, truncates: true),
                                    medicine: kind(name: 30, notes: 60, truncates: true),
                                    custom: kind(name: 30, notes: 60, truncates: true)),
    contacts: contacts(max: 10, emergency: 1, shortName: false))

  static let fitBasic = DeviceCapabilities(
    profile: "fit-basic", summary: "FitCloud basic",
    reminders: ReminderCapabilities(operations: [.fetchAll, .setReminder], maxCustomReminders: 0, maxTimePoints: 10,
                                    supportsOnce: false,
                                    sedentary: kind([.period], repeatDays: false, lunch: .flagOnly, name: nil, notes: nil),
                                    drinking: kind([.period], repeatDays: false, lunch: .none, name: nil, notes: nil),
                                    medicine: nil, custom: nil),
    contacts: contacts(max: 10, emergency: 1, shortName: false))

  static let fw = DeviceCapabilities(
    profile: "fw", summary: "Persimwear",
    reminders: ReminderCapabilities(operations: [.fetchAll, .replaceAll, .setReminder, .deleteReminder],
                                    maxCustomReminders: 0, maxTimePoints: 10, supportsOnce: false,
                                    sedentary: kind(), drinking: kind(), medicine: kind(), custom: nil),
    contacts: contacts(max: 20, emergency: 2, shortName: true))

  static let all = [roomy, npk, fit, fitBasic, fw]

  /// A watch with the three built-ins (or those the profile has) in their factory state.
  static func factoryState(_ capabilities: DeviceCapabilities) -> DeviceState {
    let reminders = ReminderKind.builtIns.compactMap { kind -> Reminder? in
      guard capabilities.reminders[kind] != nil, let id = kind.builtInID else { return nil }
      return Reminder(reminderId: id, reminderName: "", isEnabled: false, reminderType: kind.reminderType,
                      repeatDays: .everyday, timeType: .period, startTime: 540, endTime: 1080, interval: 60)
    }
    let emergency = capabilities.contacts.supportsEmergencyContacts ? EmergencyContacts(contacts: [], isSosOn: false) : nil
    return DeviceState(reminders: reminders, contacts: [], emergency: emergency)
  }
}
