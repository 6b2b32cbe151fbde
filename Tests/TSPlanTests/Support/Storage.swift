import TSModel
@testable import TSPlan

/// Mimics how a platform stores what it is given (docs/platforms.md "Reminder writes per platform", "Contacts"): names and
/// notes cut to the byte limit or dropped where not stored, repeat days read back as every day
/// where not stored, lunch times read back 0 where only the flag is stored, shortName dropped
/// where not stored. Time points and contacts come back in reverse order, to prove that order is
/// never compared.
enum Storage {
  static func stored(_ state: DeviceState, capabilities: DeviceCapabilities) -> DeviceState {
    var state = state
    state.reminders = state.reminders.map { stored($0, capabilities: capabilities) }
    state.contacts = state.contacts.reversed().map { stored($0, capabilities: capabilities) }
    if var emergency = state.emergency {
      emergency.contacts = emergency.contacts.reversed().map { stored($0, capabilities: capabilities) }
      state.emergency = emergency
    }
    return state
  }

  static func stored(_ reminder: Reminder, capabilities: DeviceCapabilities) -> Reminder {
    guard let kind = reminder.kind, let storage = capabilities.reminders[kind] else { return reminder }
    var result = reminder
    result.reminderName = storage.nameMaxBytes.map { TextTruncation.truncate(reminder.reminderName, maxBytes: $0) } ?? ""
    result.notes = storage.notesMaxBytes.map { TextTruncation.truncate(reminder.notes, maxBytes: $0) } ?? ""
    if !storage.storesRepeatDays { result.repeatDays = .everyday }
    switch storage.lunchBreak {
    case .none:
      result.isLunchBreakDNDEnabled = false
      result.lunchBreakDNDStartTime = 0
      result.lunchBreakDNDEndTime = 0
    case .flagOnly:
      result.lunchBreakDNDStartTime = 0
      result.lunchBreakDNDEndTime = 0
    case .times:
      break
    }
    result.timePoints.reverse()
    return result
  }

  static func stored(_ contact: Contact, capabilities: DeviceCapabilities) -> Contact {
    capabilities.contacts.storesShortName ? contact : Contact(name: contact.name, phoneNum: contact.phoneNum, shortName: nil)
  }

  /// Writes each change's `after` the way the applier does: custom creates overlay the patch on
  /// a template with a fresh ID and defaults unlike the planner's, then the platform stores it.
  static func apply(_ plan: Plan, to state: DeviceState, capabilities: DeviceCapabilities) -> DeviceState {
    var state = state
    var nextID = 32 + state.reminders.count + 7
    for change in plan.resourceChanges {
      switch (change.action, change.before, change.after) {
      case (.create, _, .reminder(let after)?):
        if after.reminderType == .custom, let patch = change.patch {
          let template = Reminder(reminderId: String(nextID), reminderName: "template", isEnabled: false,
                                  reminderType: .custom, repeatDays: .workday, timeType: .point, timePoints: [123],
                                  notes: "default", isLunchBreakDNDEnabled: false)
          nextID += 1
          state.reminders.append(patch.applying(to: template))
        } else {
          state.reminders.append(after)
        }
      case (.update, _, .reminder(let after)?):
        state.reminders = state.reminders.map { $0.reminderId == after.reminderId ? after : $0 }
      case (.delete, .reminder(let before)?, _):
        state.reminders.removeAll { $0.reminderId == before.reminderId }
      case (.update, _, .contacts(let contacts)?):
        state.contacts = contacts
      case (.update, _, .emergency(let emergency)?):
        state.emergency = emergency
      default:
        break
      }
    }
    return stored(state, capabilities: capabilities)
  }
}
