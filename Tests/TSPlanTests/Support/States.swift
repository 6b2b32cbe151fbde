import TSModel
@testable import TSPlan

/// Watch states and plan summaries used by several suites.
enum States {
  static func custom(_ id: Int, _ name: String, enabled: Bool = true, points: [Int] = [1170], notes: String = "",
                     repeatDays: RepeatDays = .weekend) -> Reminder {
    Reminder(reminderId: String(id), reminderName: name, isEnabled: enabled, reminderType: .custom,
             repeatDays: repeatDays, timeType: .point, startTime: 480, endTime: 1200, interval: 60,
             timePoints: points, notes: notes, isLunchBreakDNDEnabled: true,
             lunchBreakDNDStartTime: 720, lunchBreakDNDEndTime: 840)
  }

  /// The factory state of `capabilities` with `customs`, `contacts` and emergency added.
  static func watch(_ capabilities: DeviceCapabilities = Profiles.roomy, customs: [Reminder] = [],
                    contacts: [Contact] = [], emergency: EmergencyContacts? = nil) -> DeviceState {
    var state = Profiles.factoryState(capabilities)
    state.reminders += customs
    state.contacts = contacts
    if let emergency { state.emergency = emergency }
    return state
  }

  /// One line per change: `~ reminder.sedentary: repeatDays startTime`.
  static func summary(_ plan: Plan?) -> [String] {
    (plan?.resourceChanges ?? []).map { change in
      "\(change.action.symbol) \(change.address): " + change.fields.map(\.field).joined(separator: " ")
    }
  }
}
