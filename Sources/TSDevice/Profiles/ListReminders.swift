import TSModel

/// Npk reminder behaviour (docs/platforms.md "Custom-reminder templates", "Reminder writes per platform" "Npk"), also used by the roomy `default`
/// profile: the watch holds one list and every write sends the whole list.
///
/// - `replaceAll`: custom count over the limit → 3004 "Custom reminders exceed limit"; then the
///   SDK validator (docs/platforms.md "Reminder validation", first error as is); then the list is stored whole.
/// - `set`: validates the one reminder, fetches the list, replaces the same ID in place or
///   appends, and sends the merged list through `replaceAll` (so every other reminder is
///   validated again).
/// - `delete`: empty ID → 3001; fetch; not found → 4001 "Reminder with ID %@ not found";
///   sends the rest. The Npk SDK does not protect built-ins; the simulated watch refuses
///   (4002), because built-ins always exist (docs/device.md).
/// - `template`: fetches, takes the smallest free ID ≥ 32 (none up to `maxCustomID` → 3004
///   "No available reminder ID"), fills the defaults; no count check, nothing written.
struct ListReminders: ReminderBehavior {
  let storage: ReminderStorage
  /// Whether `repeatDays == 0` passes validation (`default`: yes; Npk: no).
  let allowsOnce: Bool
  /// Highest custom ID the template call hands out. The SDK's bound is not known; 255 is
  /// tsapply's choice (UInt8 range, as Fit's TS IDs), see docs/device.md.
  static let maxCustomID = 255

  func template(from stored: [Reminder], meter: inout LinkMeter) throws(DeviceError) -> Reminder {
    meter.fetchReminders(stored)
    let used = Set(stored.map(\.reminderId))
    guard let id = (32...Self.maxCustomID).first(where: { !used.contains(String($0)) }) else {
      throw .reminder(.paramSizeError, "No available reminder ID")
    }
    guard var reminder = storage.capabilities.customTemplate else {
      throw .notSupported(.reminder, "createCustomReminderTemplate")
    }
    reminder.reminderId = String(id)
    return reminder
  }

  func replaceAll(_ reminders: [Reminder], stored: inout [Reminder], meter: inout LinkMeter) throws(DeviceError) {
    let custom = reminders.filter { $0.reminderType == .custom }.count
    let limit = storage.capabilities.maxCustomReminders
    if limit >= 1, custom > limit { throw .reminder(.paramSizeError, "Custom reminders exceed limit") }
    if let error = ReminderValidator.firstError(in: reminders, allowsOnce: allowsOnce) { throw error }
    meter.sendReminders(reminders)
    try storage.checkList(reminders)
    var list: [Reminder] = []
    for reminder in reminders { list.append(try storage.stored(reminder, id: reminder.reminderId)) }
    stored = list
  }

  func set(_ reminder: Reminder, stored: inout [Reminder], meter: inout LinkMeter) throws(DeviceError) {
    if let error = ReminderValidator.firstError(in: reminder, allowsOnce: allowsOnce) { throw error }
    meter.fetchReminders(stored)
    var merged = stored
    ReminderStorage.upsert(reminder, into: &merged)
    try replaceAll(merged, stored: &stored, meter: &meter)
  }

  func delete(id: String, stored: inout [Reminder], meter: inout LinkMeter) throws(DeviceError) {
    guard !id.isEmpty else { throw .reminder(.invalidParam, "Reminder ID cannot be empty") }
    meter.fetchReminders(stored)
    guard let index = stored.firstIndex(where: { $0.reminderId == id }) else {
      throw .reminder(.dataGetFailed, "Reminder with ID \(id) not found")
    }
    var rest = stored
    rest.remove(at: index)
    meter.sendReminders(rest)
    try storage.refuseBuiltInDeletion(id: id)
    stored = rest
  }
}
