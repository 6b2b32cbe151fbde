import TSModel

/// The reminder fields a plan compares, in the fixed order they are shown, each with the rule
/// that says whether a patch manages it and the canonical value compared.
///
/// Canonical values: times and intervals in minutes, `repeatDays` as the mask, `timePoints` as
/// a sorted set (order and duplicates on the watch do not count), `timeType` as `period`/`point`.
/// Period fields are compared only when the manifest gives a period, time points only when it
/// gives time points, lunch times only when it gives a lunch window.
struct ReminderField: Sendable {
  let name: String
  let isManaged: @Sendable (ReminderPatch) -> Bool
  let value: @Sendable (Reminder) -> FieldValue

  /// Every compared field, in display order.
  static let all: [ReminderField] = [
    ReminderField(name: "reminderName", isManaged: { $0.name != nil }) { .string($0.reminderName) },
    ReminderField(name: "isEnabled", isManaged: { $0.isEnabled != nil }) { .bool($0.isEnabled) },
    ReminderField(name: "repeatDays", isManaged: { $0.repeatDays != nil }) { .integer($0.repeatDays.rawValue) },
    ReminderField(name: "timeType", isManaged: { $0.schedule != nil }) {
      .string($0.timeType == .point ? "point" : "period")
    },
    ReminderField(name: "startTime", isManaged: isPeriod) { .integer($0.startTime) },
    ReminderField(name: "endTime", isManaged: isPeriod) { .integer($0.endTime) },
    ReminderField(name: "interval", isManaged: isPeriod) { .integer($0.interval) },
    ReminderField(name: "timePoints", isManaged: isTimePoints) {
      .list(Set($0.timePoints).sorted().map(FieldValue.integer))
    },
    ReminderField(name: "notes", isManaged: { $0.notes != nil }) { .string($0.notes) },
    ReminderField(name: "isLunchBreakDNDEnabled", isManaged: { $0.lunchBreak != nil }) {
      .bool($0.isLunchBreakDNDEnabled)
    },
    ReminderField(name: "lunchBreakDNDStartTime", isManaged: hasLunchWindow) { .integer($0.lunchBreakDNDStartTime) },
    ReminderField(name: "lunchBreakDNDEndTime", isManaged: hasLunchWindow) { .integer($0.lunchBreakDNDEndTime) },
  ]

  private static let isPeriod: @Sendable (ReminderPatch) -> Bool = {
    if case .period? = $0.schedule { return true }
    return false
  }
  private static let isTimePoints: @Sendable (ReminderPatch) -> Bool = {
    if case .timePoints? = $0.schedule { return true }
    return false
  }
  private static let hasLunchWindow: @Sendable (ReminderPatch) -> Bool = { $0.lunchBreak?.window != nil }

  /// The managed fields whose canonical values differ between `before` and `after`.
  static func changes(from before: Reminder, to after: Reminder, managedBy patch: ReminderPatch) -> [FieldChange] {
    all.compactMap { field in
      guard field.isManaged(patch) else { return nil }
      let old = field.value(before), new = field.value(after)
      return old == new ? nil : FieldChange(field: field.name, before: old, after: new)
    }
  }

  /// The fields shown for a reminder being deleted (no value after): what it was — name, switch,
  /// repeat days, its schedule (period or time points), notes when it has any — as Terraform
  /// shows every attribute of a resource it destroys.
  static func deleted(_ before: Reminder) -> [FieldChange] {
    let shown: Set<String> = before.timeType == .point
      ? ["reminderName", "isEnabled", "repeatDays", "timeType", "timePoints", "notes"]
      : ["reminderName", "isEnabled", "repeatDays", "timeType", "startTime", "endTime", "interval", "notes"]
    return all.compactMap { field in
      guard shown.contains(field.name), !(field.name == "notes" && before.notes.isEmpty) else { return nil }
      return FieldChange(field: field.name, before: field.value(before), after: nil)
    }
  }

  /// What a reminder being created (`after`) gets from the watch's custom-reminder template,
  /// `given` being the fields the manifest sets: its switch, repeat days, schedule (period or
  /// time points), notes when it has any and lunch break (with its window when on), each not in
  /// `given`, in display order — so a plan shows everything the new reminder will hold
  /// (docs/platforms.md "Custom-reminder templates"). Only for display: the plan's fields stay
  /// what the manifest asks for.
  static func template(_ after: Reminder, given: Set<String>) -> [FieldChange] {
    var shown: Set<String> = after.timeType == .point
      ? ["isEnabled", "repeatDays", "timeType", "timePoints", "isLunchBreakDNDEnabled"]
      : ["isEnabled", "repeatDays", "timeType", "startTime", "endTime", "interval", "isLunchBreakDNDEnabled"]
    if !after.notes.isEmpty { shown.insert("notes") }
    if after.isLunchBreakDNDEnabled { shown.formUnion(["lunchBreakDNDStartTime", "lunchBreakDNDEndTime"]) }
    // A schedule the manifest gives is shown whole from it.
    if given.contains("timeType") { shown.subtract(["timeType", "startTime", "endTime", "interval", "timePoints"]) }
    return all.compactMap { field in
      shown.contains(field.name) && !given.contains(field.name) ? FieldChange(field: field.name, before: nil, after: field.value(after)) : nil
    }
  }

  /// `fields` in display order (`all`'s).
  static func ordered(_ fields: [FieldChange]) -> [FieldChange] {
    let rank = Dictionary(uniqueKeysWithValues: all.enumerated().map { ($1.name, $0) })
    return fields.enumerated().sorted { (rank[$0.element.field] ?? Int.max, $0.offset) < (rank[$1.element.field] ?? Int.max, $1.offset) }.map(\.element)
  }

  /// Every managed field of a reminder being created (no value before).
  static func created(_ after: Reminder, managedBy patch: ReminderPatch) -> [FieldChange] {
    all.compactMap { field in
      field.isManaged(patch) ? FieldChange(field: field.name, before: nil, after: field.value(after)) : nil
    }
  }
}

extension ResourceChange {
  /// The update of one custom reminder (one ID) from `before` to `after`, every compared field
  /// (`ReminderField.all`) in display order; `nil` when none differs. For drift of a reminder no
  /// manifest can name (a second one of a name, `ResourceAddress.customDuplicate`): both values
  /// are the watch's, so a field the platform does not store is equal on both sides.
  public static func reminderUpdate(_ address: ResourceAddress, from before: Reminder, to after: Reminder) -> ResourceChange? {
    let fields = ReminderField.all.compactMap { field -> FieldChange? in
      let old = field.value(before), new = field.value(after)
      return old == new ? nil : FieldChange(field: field.name, before: old, after: new)
    }
    return fields.isEmpty ? nil : ResourceChange(address: address, action: .update, fields: fields, before: .reminder(before), after: .reminder(after))
  }
}
