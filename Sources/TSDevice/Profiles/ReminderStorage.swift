import TSModel

/// How a platform's reminder operations change the stored list. One implementation per SDK
/// platform family (docs/platforms.md "Reminder writes per platform"); each works on a copy of the list, so a thrown error
/// leaves the watch unchanged. The simulated watch answers 2004 for operations missing from
/// the platform's capabilities before it calls these.
protocol ReminderBehavior: Sendable {
  /// `createCustomReminderTemplateWithCompletion:`.
  func template(from stored: [Reminder], meter: inout LinkMeter) throws(DeviceError) -> Reminder
  /// `replaceAllReminders:completion:`.
  func replaceAll(_ reminders: [Reminder], stored: inout [Reminder], meter: inout LinkMeter) throws(DeviceError)
  /// `setReminder:completion:` (upsert).
  func set(_ reminder: Reminder, stored: inout [Reminder], meter: inout LinkMeter) throws(DeviceError)
  /// `deleteReminderWithId:completion:`.
  func delete(id: String, stored: inout [Reminder], meter: inout LinkMeter) throws(DeviceError)
}

extension ReminderBehavior {
  func template(from stored: [Reminder], meter: inout LinkMeter) throws(DeviceError) -> Reminder {
    throw .notSupported(.reminder, "createCustomReminderTemplate")
  }
  func replaceAll(_ reminders: [Reminder], stored: inout [Reminder], meter: inout LinkMeter) throws(DeviceError) {
    throw .notSupported(.reminder, "replaceAllReminders")
  }
  func delete(id: String, stored: inout [Reminder], meter: inout LinkMeter) throws(DeviceError) {
    throw .notSupported(.reminder, "deleteReminder")
  }
}

/// What a watch keeps of a reminder it is sent: the shared part of every platform's storage.
///
/// The stored form is `ReminderCapabilities.storedForm(of:id:)` (TSModel), shared with the
/// planner so a plan's `after` is what the watch reads back; a refusal becomes 4002.
struct ReminderStorage: Sendable {
  let capabilities: ReminderCapabilities
  /// Text of the 4002 error the watch answers when it refuses a write.
  let refusal: String

  /// IDs of the built-ins the platform has, in ID order.
  var builtInIDs: [String] { ReminderKind.builtIns.filter { capabilities[$0] != nil }.compactMap(\.builtInID) }

  /// The kind stored under `id`: "0", "1", "2" are the built-ins, anything else is custom.
  func kind(ofID id: String) -> ReminderKind { ReminderCapabilities.kind(ofID: id) }

  func refused(_ detail: String) -> DeviceError { .reminder(.dataSetFailed, "\(refusal): \(detail)") }

  /// `reminder` as the watch stores it under `id` (`ReminderCapabilities.storedForm`, the one
  /// definition the planner shares).
  /// - Throws: 4002 when the kind does not exist or a field exceeds what the watch takes.
  func stored(_ reminder: Reminder, id: String) throws(DeviceError) -> Reminder {
    do {
      return try capabilities.storedForm(of: reminder, id: id)
    } catch {
      throw refused(error.detail)
    }
  }

  /// Checks a whole list before the watch stores it: every built-in present once (built-ins
  /// always exist), no ID twice, no custom ID in the reserved range 3...31 (docs/platforms.md "Reminder IDs").
  /// - Throws: 4002 naming the problem.
  func checkList(_ list: [Reminder]) throws(DeviceError) {
    var seen = Set<String>()
    for reminder in list {
      guard seen.insert(reminder.reminderId).inserted else { throw refused("reminder ID \(reminder.reminderId) appears twice") }
      let number = ReminderValidator.integerValue(reminder.reminderId)
      if kind(ofID: reminder.reminderId) == .custom, number < 32 || String(number) != reminder.reminderId {
        throw refused("reminder ID \(reminder.reminderId) is reserved or not a number (custom IDs are 32 and up)")
      }
    }
    if let missing = builtInIDs.first(where: { !seen.contains($0) }) {
      throw refused("built-in reminder \(missing) (\(kind(ofID: missing).rawValue)) cannot be deleted")
    }
  }

  /// Refuses to delete a built-in (brief: built-ins always exist; see docs/device.md).
  func refuseBuiltInDeletion(id: String) throws(DeviceError) {
    if builtInIDs.contains(id) {
      throw refused("built-in reminder \(id) (\(kind(ofID: id).rawValue)) cannot be deleted")
    }
  }

  /// Replaces the item with the same ID in place, or appends (upsert).
  static func upsert(_ reminder: Reminder, into list: inout [Reminder]) {
    if let index = list.firstIndex(where: { $0.reminderId == reminder.reminderId }) {
      list[index] = reminder
    } else {
      list.append(reminder)
    }
  }
}
