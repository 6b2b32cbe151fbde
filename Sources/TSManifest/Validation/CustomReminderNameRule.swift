import TSModel

/// Custom reminders are identified by name, so each name appears once in `custom:`.
///
/// Source: the manifest format (issue 2, "Custom reminders are identified by `name`, which must
/// be unique"); the SDK identifies them by device-assigned IDs (docs/platforms.md "Reminder IDs"), which a
/// manifest cannot know, so the name is the plan's address (`reminder.custom["Evening walk"]`).
enum CustomReminderNameRule {
  /// Reports every custom reminder whose name was already used, naming both places. Each
  /// reminder comes with the position of the alias it was written as (`- *walk`), if any: an
  /// alias's copy keeps its anchor's positions, so the alias is where that use is reported.
  static func check(_ reminders: [(reminder: ManifestReminder, alias: SourcePosition?)],
                    into diagnostics: inout [Diagnostic]) {
    var seen: [String: SourcePosition] = [:]
    for (reminder, alias) in reminders {
      guard let name = reminder.name else { continue }
      let use = alias ?? name.position
      if let first = seen[name.value] {
        let repeated = alias == nil ? "also used" : "this alias repeats the name used"
        diagnostics.append(.error(at: use, field: "\(reminder.path).name",
          "duplicate custom reminder name \"\(name.value)\": \(repeated) on line \(first.line), column \(first.column) (names identify custom reminders)"))
      } else {
        seen[name.value] = use
      }
    }
  }
}
