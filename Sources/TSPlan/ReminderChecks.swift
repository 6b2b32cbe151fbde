import TSModel
import TSManifest

/// Checks one manifest reminder against what the platform stores for its kind, and builds the
/// patch in stored form. Pure: errors and warnings are returned, never thrown.
///
/// Rules (docs/platforms.md "Custom-reminder templates", "Lunch break", "The table"): `once` only where `supportsOnce`; a schedule only of a
/// stored time type, at most `maxTimePoints` points; lunch-break times only where stored
/// (`flagOnly` accepts `lunch_break: true/false`; `none` accepts only `false`); repeat days other
/// than everyday only where stored; names and notes within the byte limit (an error where the
/// platform rejects longer text, a warning showing the stored value where it cuts it, a warning
/// that they are ignored where not stored).
struct ReminderChecks {
  let capabilities: DeviceCapabilities
  let storage: ReminderKindCapabilities
  /// How messages name the reminder, e.g. `the sedentary reminder`.
  let label: String

  private var watch: String { "the watch (profile \(capabilities.profile))" }

  /// The stored-form patch and every problem found. `creating` makes a custom reminder enabled
  /// unless the manifest says otherwise.
  func patch(for reminder: ManifestReminder, creating: Bool) -> (ReminderPatch, [Diagnostic]) {
    var diagnostics: [Diagnostic] = []
    var patch = ReminderPatch()
    let path = reminder.path
    if let name = reminder.name {
      patch.name = storedText(name, maxBytes: storage.nameMaxBytes, key: key("name", of: reminder, name),
                              field: "\(path).name", what: "name", &diagnostics)
    }
    if let notes = reminder.notes {
      patch.notes = storedText(notes, maxBytes: storage.notesMaxBytes, key: key("notes", of: reminder, notes),
                               field: "\(path).notes", what: "notes", &diagnostics)
    }
    patch.isEnabled = reminder.isEnabled?.value ?? (creating && reminder.kind == .custom ? true : nil)
    if let repeatDays = reminder.repeatDays {
      patch.repeatDays = checkedRepeat(repeatDays, key: key("repeat", of: reminder, repeatDays), field: "\(path).repeat", &diagnostics)
    }
    if let schedule = reminder.schedule {
      patch.schedule = checkedSchedule(schedule, reminder: reminder, &diagnostics)
    }
    if let lunchBreak = reminder.lunchBreak {
      patch.lunchBreak = checkedLunchBreak(lunchBreak, key: key("lunch_break", of: reminder, lunchBreak),
                                           field: "\(path).lunch_break", &diagnostics)
    }
    return (patch, diagnostics)
  }

  /// Where `reminder` writes the key `key` (`ManifestReminder.keyPositions`: for a lunch break
  /// taken from the section, the section's key), else where its value is: what a capability
  /// error points at, since the key is what asks for what the platform lacks; a value out of
  /// range is reported at the value instead.
  private func key<Value>(_ key: String, of reminder: ManifestReminder, _ value: Located<Value>) -> SourcePosition {
    reminder.keyPositions[key] ?? value.position
  }

  /// Problems only the combined result shows: lunch break turned on without times while the
  /// reminder holds no valid window (SDK rule start < end, both 0...1439; docs/platforms.md "Reminder validation"),
  /// which the watch would refuse (3002); and (a warning) time points inside the reminder's
  /// lunch-break do-not-disturb window — one the manifest does not give, like the window the
  /// watch's template gives every new custom reminder (docs/platforms.md "The table"), is seen
  /// nowhere else in the plan.
  func resultDiagnostics(_ after: Reminder, reminder: ManifestReminder) -> [Diagnostic] {
    lunchTimeErrors(after, reminder: reminder) + timesInsideLunchBreak(after, reminder: reminder)
  }

  /// Time points inside the lunch break, or a period wholly inside it (a reminder that may
  /// never sound).
  private func timesInsideLunchBreak(_ after: Reminder, reminder: ManifestReminder) -> [Diagnostic] {
    let start = after.lunchBreakDNDStartTime, end = after.lunchBreakDNDEndTime
    guard storage.lunchBreak == .times, after.isLunchBreakDNDEnabled,
          let from = MinuteOfDay(rawValue: start), let to = MinuteOfDay(rawValue: end) else { return [] }
    // A create is made on the platform's template, with no ID yet.
    let origin = reminder.lunchBreak != nil ? "as the manifest gives it"
      : after.reminderId.isEmpty ? "the watch gives every new custom reminder one; the manifest gives none" : "the watch's; the manifest gives none"
    let window = "its lunch-break do-not-disturb window \(from)–\(to) (\(origin))"
    let at = reminder.schedule?.position ?? reminder.position
    switch after.timeType {
    case .point:
      let inside = Set(after.timePoints).sorted().filter { $0 >= start && $0 < end }
      guard !inside.isEmpty else { return [] }
      let times = inside.compactMap { MinuteOfDay(rawValue: $0)?.description }.joined(separator: ", ")
      return [.warning(at: at, field: "\(reminder.path).at",
        "\(label) reminds at \(times), inside \(window), when the watch may stay silent; "
          + "write `lunch_break: false` for it, or move \(inside.count == 1 ? "the time" : "those times") out of the window")]
    case .period:
      guard after.startTime >= start, after.endTime <= end, let first = MinuteOfDay(rawValue: after.startTime),
            let last = MinuteOfDay(rawValue: after.endTime) else { return [] }
      return [.warning(at: at, field: "\(reminder.path).period",
        "\(label) reminds only from \(first) to \(last), all inside \(window), so the watch may never sound it; "
          + "write `lunch_break: false` for it, or move the period out of the window")]
    }
  }

  private func lunchTimeErrors(_ after: Reminder, reminder: ManifestReminder) -> [Diagnostic] {
    guard storage.lunchBreak == .times, let lunch = reminder.lunchBreak, lunch.value.isEnabled,
          lunch.value.window == nil, after.isLunchBreakDNDEnabled else { return [] }
    let start = after.lunchBreakDNDStartTime, end = after.lunchBreakDNDEndTime
    guard !(MinuteOfDay.range.contains(start) && MinuteOfDay.range.contains(end) && start < end) else { return [] }
    return [.error(at: lunch.position, field: "\(reminder.path).lunch_break",
      "\(label) on the watch has no valid lunch-break times (\(start)–\(end) minutes); give them: `lunch_break: {start: \"12:00\", end: \"14:00\"}`")]
  }

  private func storedText(_ text: Located<String>, maxBytes: Int?, key: SourcePosition, field: String, what: String,
                          _ diagnostics: inout [Diagnostic]) -> String? {
    guard let maxBytes else {
      diagnostics.append(.warning(at: key, field: field,
        "\(watch) does not store \(what) for \(label); the value is ignored"))
      return nil
    }
    let bytes = text.value.utf8.count
    guard bytes > maxBytes else { return text.value }
    guard storage.truncatesLongText else {
      diagnostics.append(.error(at: text.position, field: field,
        "\"\(text.value)\" is \(bytes) bytes, but \(watch) stores at most \(maxBytes) bytes of \(what) for \(label)"))
      // Kept beside the error, which stops a plan: a manifest made from the watch's own state
      // (drift, `Planner.changes`) holds what the watch holds, and its change must show.
      return text.value
    }
    // tsapply cuts the text itself, at a grapheme boundary (a name also without the spaces the
    // cut leaves at its end), and writes what fits: the SDK's own cut works on UTF-16 units and
    // could leave half an emoji or a lone ZWJ, which no manifest (and so no export) can state.
    let stored = what == "name" ? TextTruncation.cutName(text.value, maxBytes: maxBytes)
      : TextTruncation.truncateAtGraphemes(text.value, maxBytes: maxBytes)
    diagnostics.append(.warning(at: text.position, field: field,
      "\"\(text.value)\" is \(bytes) bytes; \(watch) stores at most \(maxBytes) bytes and will keep \"\(stored)\""))
    return stored
  }

  private func checkedRepeat(_ days: Located<RepeatDays>, key: SourcePosition, field: String,
                             _ diagnostics: inout [Diagnostic]) -> RepeatDays? {
    if days.value == .once && !capabilities.reminders.supportsOnce {
      diagnostics.append(.error(at: days.position, field: field,
        "`once` (no repeat day) is not supported by \(watch); choose at least one day"))
      return nil
    }
    guard storage.storesRepeatDays else {
      if days.value != .everyday {
        diagnostics.append(.error(at: key, field: field,
          "\(watch) repeats \(label) every day and stores no repeat days; remove `repeat` or write `everyday`"))
      }
      return nil
    }
    return days.value
  }

  private func checkedSchedule(_ schedule: Located<ReminderSchedule>, reminder: ManifestReminder,
                               _ diagnostics: inout [Diagnostic]) -> ReminderSchedule? {
    let path = reminder.path
    switch schedule.value {
    case .timePoints(let points):
      let field = "\(path).at"
      guard storage.timeTypes.contains(.point) else {
        diagnostics.append(.error(at: key("at", of: reminder, schedule), field: field,
          "\(watch) stores only a period for \(label); use `period: {start, end, every}` instead of `at`"))
        return nil
      }
      let limit = capabilities.reminders.maxTimePoints
      guard points.count <= limit else {
        diagnostics.append(.error(at: schedule.position, field: field,
          "\(points.count) time points, but \(watch) holds at most \(limit) per reminder: remove \(points.count - limit)"
            + (path.hasPrefix("reminders.custom") ? ", or split them between two custom reminders" : ", or use `period: {start, end, every}` for times evenly spaced")))
        return nil
      }
    case .period:
      guard storage.timeTypes.contains(.period) else {
        diagnostics.append(.error(at: key("period", of: reminder, schedule), field: "\(path).period",
          "\(watch) stores only time points for \(label); use `at: [...]` instead of `period`"))
        return nil
      }
    }
    return schedule.value
  }

  private func checkedLunchBreak(_ lunch: Located<LunchBreak>, key: SourcePosition, field: String,
                                 _ diagnostics: inout [Diagnostic]) -> LunchBreak? {
    switch storage.lunchBreak {
    case .none where lunch.value.isEnabled || lunch.value.window != nil:
      diagnostics.append(.error(at: key, field: field,
        "\(watch) has no lunch break for \(label); remove `lunch_break`"))
      return nil
    case .flagOnly where lunch.value.window != nil:
      diagnostics.append(.error(at: key, field: field,
        "\(watch) stores only whether the lunch break is on for \(label), not its times; write `lunch_break: true` or `false`"))
      return nil
    default:
      return lunch.value
    }
  }
}
