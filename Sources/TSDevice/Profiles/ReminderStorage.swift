import TSModel

/// How a platform's reminder operations change the stored list. One implementation per SDK
/// platform family (sdk-facts.md §1.7); each works on a copy of the list, so a thrown error
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
/// The stored form follows the platform's `ReminderKindCapabilities`: the type comes from the ID
/// (Npk derives it on read, §1.5); only the active schedule is kept (the Npk wire sends times
/// for mode 0 and start/end/interval for mode 1, §4); fields not stored read back as the
/// platform returns them (Fit-Basic: name and notes "", repeat 127, lunch times 0/0, §1.7);
/// long names and notes are cut (Fit, §2.4) or refused by the watch with 4002.
struct ReminderStorage: Sendable {
  let capabilities: ReminderCapabilities
  /// Text of the 4002 error the watch answers when it refuses a write.
  let refusal: String

  /// IDs of the built-ins the platform has, in ID order.
  var builtInIDs: [String] { ReminderKind.builtIns.filter { capabilities[$0] != nil }.compactMap(\.builtInID) }

  /// The kind stored under `id`: "0", "1", "2" are the built-ins, anything else is custom.
  func kind(ofID id: String) -> ReminderKind {
    ReminderKind.builtIns.first { $0.builtInID == id } ?? .custom
  }

  func refused(_ detail: String) -> DeviceError { .reminder(.dataSetFailed, "\(refusal): \(detail)") }

  /// `reminder` as the watch stores it under `id`.
  /// - Throws: 4002 when the kind does not exist or a field exceeds what the watch takes.
  func stored(_ reminder: Reminder, id: String) throws(DeviceError) -> Reminder {
    let kind = kind(ofID: id)
    guard let caps = capabilities[kind] else { throw refused("the watch has no \(kind.rawValue) reminder (ID \(id))") }
    var r = reminder
    r.reminderId = id
    r.reminderType = kind.reminderType
    r.reminderName = try text(r.reminderName, limit: caps.nameMaxBytes, cut: caps.truncatesLongText, field: "name", id: id)
    r.notes = try text(r.notes, limit: caps.notesMaxBytes, cut: caps.truncatesLongText, field: "notes", id: id)
    if !caps.storesRepeatDays { r.repeatDays = .everyday }
    if !caps.timeTypes.contains(r.timeType) { r.timeType = .period }
    if r.timeType == .point {
      guard r.timePoints.count <= capabilities.maxTimePoints else {
        throw refused("reminder \(id) has \(r.timePoints.count) time points, the watch holds at most \(capabilities.maxTimePoints)")
      }
      (r.startTime, r.endTime, r.interval) = (0, 0, 0)
    } else {
      r.timePoints = []
    }
    switch caps.lunchBreak {
    case .none: (r.isLunchBreakDNDEnabled, r.lunchBreakDNDStartTime, r.lunchBreakDNDEndTime) = (false, 0, 0)
    case .flagOnly: (r.lunchBreakDNDStartTime, r.lunchBreakDNDEndTime) = (0, 0)
    case .times: break
    }
    return r
  }

  private func text(_ value: String, limit: Int?, cut: Bool, field: String, id: String) throws(DeviceError) -> String {
    guard let limit else { return "" }
    guard value.utf8.count > limit else { return value }
    if cut { return TextTruncation.truncate(value, maxBytes: limit) }
    throw refused("\(field) of reminder \(id) is \(value.utf8.count) bytes, the watch stores at most \(limit)")
  }

  /// Checks a whole list before the watch stores it: every built-in present once (built-ins
  /// always exist), no ID twice, no custom ID in the reserved range 3...31 (§1.5).
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
