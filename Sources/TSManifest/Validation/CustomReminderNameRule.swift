import TSModel

/// Custom reminders are identified by name, so each name appears once in `custom:`.
///
/// Source: the manifest format (issue 2, "Custom reminders are identified by `name`, which must
/// be unique"); the SDK identifies them by device-assigned IDs (sdk-facts.md §1.5), which a
/// manifest cannot know, so the name is the plan's address (`reminder.custom["Evening walk"]`).
enum CustomReminderNameRule {
  /// Reports every custom reminder whose name was already used, naming both lines.
  static func check(_ reminders: [ManifestReminder], into diagnostics: inout [Diagnostic]) {
    var seen: [String: SourcePosition] = [:]
    for reminder in reminders {
      guard let name = reminder.name else { continue }
      if let first = seen[name.value] {
        diagnostics.append(.error(at: name.position, field: "\(reminder.path).name",
          "duplicate custom reminder name \"\(name.value)\": also used on line \(first.line), column \(first.column) (names identify custom reminders)"))
      } else {
        seen[name.value] = name.position
      }
    }
  }
}
