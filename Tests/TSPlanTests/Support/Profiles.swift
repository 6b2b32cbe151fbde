import TSModel

/// The platform table's capability sets under the names the planner tests use, and a factory
/// state built from them (TSPlan must not depend on TSDevice, so the tests do not use the
/// simulator's profiles; the capabilities are the same `PlatformTable` values the simulator uses).
enum Profiles {
  static let roomy = PlatformTable.default
  static let npk = PlatformTable.npk
  static let fit = PlatformTable.fit
  static let fitBasic = PlatformTable.fitBasic
  static let fw = PlatformTable.fw
  static let all = PlatformTable.all

  /// A watch with the built-ins the platform has, in a plain state (off, every day, 09:00–18:00
  /// every 60 minutes), no contacts, and an empty emergency list where supported.
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
