import TSModel

/// Fit Personalized reminder behaviour (docs/platforms.md "Custom-reminder templates", "Reminder writes per platform" "Fit Personalized"): no
/// replace-all; each reminder is written alone, without the SDK validator.
///
/// - `set`: empty ID → 3001; built-ins are addressed by type (1 → "0", 2 → "1", 3 → "2"),
///   custom reminders by slot (TS ID ≤ 99 → slot ID − 32, else ID − 100; stored back as
///   32 + slot); a slot outside the watch's custom slots or type 0 → 4002 (tsapply's choice:
///   the SDK hands FitCloud an object it cannot store). Repeat days are masked to 7 bits, so
///   0 ("once") is stored; long names and notes are cut (30/60 bytes).
/// - `template`: first free slot in `0..<max`, none → 3001 (log "custom reminders full").
/// - `delete`: empty ID → 3001; built-ins refused (4002); not found → 4001 (tsapply's choice).
struct FitPersonalizedReminders: ReminderBehavior {
  let storage: ReminderStorage

  func template(from stored: [Reminder], meter: inout LinkMeter) throws(DeviceError) -> Reminder {
    meter.fetchReminders(stored)
    let used = Set(stored.map { ReminderValidator.integerValue($0.reminderId) - 32 }.filter { $0 >= 0 })
    let max = storage.capabilities.maxCustomReminders
    guard let slot = (0..<max).first(where: { !used.contains($0) }) else {
      throw .reminder(.invalidParam, "Parameter does not exist: custom reminders full, max \(max)")
    }
    guard var reminder = storage.capabilities.customTemplate else {
      throw .notSupported(.reminder, "createCustomReminderTemplate")
    }
    reminder.reminderId = String(32 + slot)
    return reminder
  }

  func set(_ reminder: Reminder, stored: inout [Reminder], meter: inout LinkMeter) throws(DeviceError) {
    guard !reminder.reminderId.isEmpty else { throw .reminder(.invalidParam, "Parameter does not exist: reminder ID is empty") }
    let id = try storedID(reminder)
    var item = reminder
    item.repeatDays = RepeatDays(rawValue: reminder.repeatDays.rawValue & 0x7F)
    let value = try storage.stored(item, id: id)
    meter.set(body: WireSize.reminder(value))
    ReminderStorage.upsert(value, into: &stored)
  }

  private func storedID(_ reminder: Reminder) throws(DeviceError) -> String {
    if reminder.reminderType != .custom {
      guard let kind = ReminderKind(reminder.reminderType), let id = kind.builtInID else {
        throw storage.refused("unsupported reminderType \(reminder.reminderType.rawValue)")
      }
      return id
    }
    let number = ReminderValidator.integerValue(reminder.reminderId)
    let slot = number <= 99 ? number - 32 : number - 100
    guard number < 256, (0..<storage.capabilities.maxCustomReminders).contains(slot) else {
      throw storage.refused("no custom reminder slot for ID \(reminder.reminderId) (slots 32–\(31 + storage.capabilities.maxCustomReminders))")
    }
    return String(32 + slot)
  }

  func delete(id: String, stored: inout [Reminder], meter: inout LinkMeter) throws(DeviceError) {
    guard !id.isEmpty else { throw .reminder(.invalidParam, "Parameter does not exist: reminder ID is empty") }
    meter.set(body: WireSize.integer(ReminderValidator.integerValue(id)) + 2)
    try storage.refuseBuiltInDeletion(id: id)
    guard let index = stored.firstIndex(where: { $0.reminderId == id }) else {
      throw .reminder(.dataGetFailed, "Reminder with ID \(id) not found")
    }
    stored.remove(at: index)
  }
}

/// Fit Basic reminder behaviour (docs/platforms.md "Reminder writes per platform" "Fit Basic"): only sedentary ("0") and
/// drinking ("1"); `set` accepts type 1 or 2 (others → 2004) and addresses by type; what is not
/// stored reads back fixed (repeat 127, period, name and notes "", sedentary lunch flag only,
/// drinking no lunch). Replace-all, template and delete answer 2004.
struct FitBasicReminders: ReminderBehavior {
  let storage: ReminderStorage

  func set(_ reminder: Reminder, stored: inout [Reminder], meter: inout LinkMeter) throws(DeviceError) {
    let id: String
    switch reminder.reminderType {
    case .sedentary: id = "0"
    case .drinking: id = "1"
    default: throw .notSupported(.reminder, "setReminder for reminder type \(reminder.reminderType.rawValue)")
    }
    let value = try storage.stored(reminder, id: id)
    meter.set(body: WireSize.reminder(value))
    ReminderStorage.upsert(value, into: &stored)
  }
}

/// Fw (Persimwear) reminder behaviour (docs/platforms.md "Reminder writes per platform" "Fw"): built-ins "0"–"2" only; `set`
/// and `replaceAll` with any other ID → 3001; template → 2004; delete rewrites the list, not
/// found → 4004 ("找不到对应的提醒", given here in English); built-ins refused (4002).
struct FwReminders: ReminderBehavior {
  let storage: ReminderStorage

  private func checkID(_ id: String) throws(DeviceError) {
    guard storage.builtInIDs.contains(id) else {
      throw .reminder(.invalidParam, "Parameter does not exist: reminder ID \(id.isEmpty ? "(empty)" : id) (the watch has reminders \(storage.builtInIDs.joined(separator: ", ")) only)")
    }
  }

  func set(_ reminder: Reminder, stored: inout [Reminder], meter: inout LinkMeter) throws(DeviceError) {
    try checkID(reminder.reminderId)
    let value = try storage.stored(reminder, id: reminder.reminderId)
    meter.set(body: WireSize.reminder(value))
    ReminderStorage.upsert(value, into: &stored)
  }

  func replaceAll(_ reminders: [Reminder], stored: inout [Reminder], meter: inout LinkMeter) throws(DeviceError) {
    for reminder in reminders { try checkID(reminder.reminderId) }
    meter.sendReminders(reminders)
    try storage.checkList(reminders)
    var list: [Reminder] = []
    for reminder in reminders { list.append(try storage.stored(reminder, id: reminder.reminderId)) }
    stored = list
  }

  func delete(id: String, stored: inout [Reminder], meter: inout LinkMeter) throws(DeviceError) {
    guard !id.isEmpty else { throw .reminder(.invalidParam, "Parameter does not exist: reminder ID is empty") }
    meter.fetchReminders(stored)
    guard stored.contains(where: { $0.reminderId == id }) else {
      throw .reminder(.dataIsEmpty, "No matching reminder found (ID \(id))")
    }
    try storage.refuseBuiltInDeletion(id: id)
    stored.removeAll { $0.reminderId == id }
    meter.sendReminders(stored)
  }
}
