import TSModel
import TSManifest

/// Plans the `reminders:` section: each managed built-in, then the custom list.
///
/// Built-ins are updated (or created when the watch lacks one its platform has) and never
/// deleted. Custom reminders are matched by their stored name (docs/platforms.md "Contacts" truncation);
/// watch customs not in a present `custom:` list are deleted; when the watch holds several
/// customs with one name, the first in watch order is matched and the rest deleted, with a warning.
enum ReminderPlanner {
  /// The reminder a create's `after` is computed on: the platform's custom-reminder template
  /// from the platform table (`ReminderCapabilities.customTemplate`), with an empty ID. The
  /// applier overlays the same patch on the template the watch hands out.
  static func customTemplate(_ capabilities: DeviceCapabilities) -> Reminder {
    capabilities.reminders.customTemplate ?? Reminder(reminderId: "", reminderType: .custom)
  }

  static func plan(_ reminders: ManifestReminders, state: DeviceState, capabilities: DeviceCapabilities) -> PlanPart {
    var part = PlanPart()
    for kind in ReminderKind.builtIns {
      if let reminder = reminders[builtIn: kind] {
        let own = withLunchBreak(reminders, reminder, storage: capabilities.reminders[kind])
        part.merge(builtIn(kind, own, state: state, capabilities: capabilities, lunchDefault: reminders.lunchBreak?.position))
      }
    }
    if let custom = reminders.custom {
      let storage = capabilities.reminders.custom
      let list = Located(custom.value.map { withLunchBreak(reminders, $0, storage: storage) }, at: custom.position)
      part.merge(CustomReminderPlanner.plan(list, state: state, capabilities: capabilities,
                                            lunchDefault: reminders.lunchBreak?.position))
    }
    return part
  }

  /// `reminder` with the section's `lunch_break` (`ManifestReminders.lunchBreak`) when it sets
  /// none: as written where the platform stores the times for its kind, only on/off where it
  /// stores a flag, not at all where the kind has no lunch break (a default is for the reminders
  /// that can have one; docs/manifest.md "One lunch break for every reminder"). The position is
  /// the default's, and so are its keys' (`ManifestReminders.lunchBreakKeys`), so a problem and
  /// a plan line point at the line that set it.
  static func withLunchBreak(_ section: ManifestReminders, _ reminder: ManifestReminder,
                             storage: ReminderKindCapabilities?) -> ManifestReminder {
    guard reminder.lunchBreak == nil, let lunch = section.lunchBreak, let storage else { return reminder }
    var reminder = reminder
    if storage.lunchBreak != .none { reminder.keyPositions.merge(section.lunchBreakKeys) { own, _ in own } }
    switch storage.lunchBreak {
    case .times: reminder.lunchBreak = lunch
    case .flagOnly: reminder.lunchBreak = Located(LunchBreak(isEnabled: lunch.value.isEnabled), at: lunch.position)
    case .none: break
    }
    return reminder
  }

  /// `lunchDefault`: the position of the manifest-wide lunch break (`ManifestWords.reminder`).
  static func builtIn(_ kind: ReminderKind, _ reminder: ManifestReminder, state: DeviceState,
                      capabilities: DeviceCapabilities, lunchDefault: SourcePosition? = nil) -> PlanPart {
    var part = PlanPart()
    guard let storage = capabilities.reminders[kind], let id = kind.builtInID else {
      part.diagnostics.append(.error(at: reminder.keyPosition, field: reminder.path,
        "the watch (profile \(capabilities.profile)) has no \(kind.rawValue) reminder; remove `\(reminder.path)`"))
      return part
    }
    guard let existing = state.builtIn(kind) else {
      // The SDK has no call that creates a built-in; planning a create would fail at apply time forever.
      part.diagnostics.append(.error(at: reminder.position, field: reminder.path,
        "the watch holds no \(kind.rawValue) reminder (ID \(id)), although its platform (profile \(capabilities.profile)) always has one; "
          + "the SDK cannot create built-in reminders, so tsapply cannot add it. Reset the watch to its factory settings "
          + "(a simulated one with 'tsapply device init --force'), or remove `\(reminder.path)` from the manifest"))
      return part
    }
    let checks = ReminderChecks(capabilities: capabilities, storage: storage, label: "the \(kind.rawValue) reminder")
    let (patch, diagnostics) = checks.patch(for: reminder, creating: false)
    part.diagnostics = diagnostics
    part.diagnostics += checks.resultDiagnostics(patch.applying(to: existing), reminder: reminder)
    part.changes = change(.builtIn(kind), existing: existing, base: existing, patch: patch, capabilities: capabilities,
                          reminder: reminder, lunchDefault: lunchDefault).map { [$0] } ?? []
    return part
  }

  /// An update of `existing` (nil when nothing managed differs) or a create on `base`. `after`
  /// is in the stored form (`ReminderCapabilities.storedForm`): exactly what the watch reads
  /// back after the apply, the device-assigned ID of a create aside. Each field change names the
  /// manifest path and position of `reminder`'s value that asks for it (`ManifestWords.reminder`).
  static func change(_ address: ResourceAddress, existing: Reminder?, base: Reminder,
                     patch: ReminderPatch, capabilities: DeviceCapabilities,
                     reminder: ManifestReminder, lunchDefault: SourcePosition?) -> ResourceChange? {
    let written = patch.applying(to: base)
    let after = (try? capabilities.reminders.storedForm(of: written, id: written.reminderId)) ?? written
    guard let existing else {
      let fields = ManifestWords.reminder(ReminderField.created(after, managedBy: patch), reminder, lunchDefault: lunchDefault)
      return ResourceChange(address: address, action: .create, fields: fields,
                            before: nil, after: .reminder(after), patch: patch)
    }
    let fields = ManifestWords.reminder(ReminderField.changes(from: existing, to: after, managedBy: patch), reminder,
                                        lunchDefault: lunchDefault)
    guard !fields.isEmpty else { return nil }
    return ResourceChange(address: address, action: .update, fields: fields,
                          before: .reminder(existing), after: .reminder(after), patch: patch)
  }

  /// A delete of a watch reminder at `address`, which the custom list at `list` leaves out.
  static func delete(_ reminder: Reminder, at address: ResourceAddress, list: SourcePosition) -> ResourceChange {
    ResourceChange(address: address, action: .delete,
                   fields: ManifestWords.unlisted(ReminderField.deleted(reminder), path: "reminders.custom", at: list),
                   before: .reminder(reminder), after: nil)
  }
}
