import TSModel

/// Manifest → YAML: writes a `Manifest` in canonical form (see `CanonicalForm`) through
/// libyaml's emitter (`YAMLWriter`). Used by `tsapply export`, and by tests as a position-free
/// rendering of a manifest.
///
/// Every section and field that is set is written; `nil` (unmanaged) ones are left out.
/// Reading the output back with `ManifestLoader` gives the same manifest apart from positions.
/// `short_name` is written only when it was explicit and differs from the one derived from the
/// name (docs/platforms.md "Contacts" derivation in `ShortNameRule`), since an equal one states nothing more.
public enum ManifestEncoder {
  /// The YAML text of `manifest`.
  /// - Throws: `YAMLWriteError` when libyaml's emitter fails (out of memory).
  public static func encode(_ manifest: Manifest) throws(YAMLWriteError) -> String {
    try YAMLWriter.write(node(manifest))
  }

  /// The YAML tree of `manifest`, keys in canonical order.
  public static func node(_ manifest: Manifest) -> YAMLOutputNode {
    var entries: [(key: String, value: YAMLOutputNode)] = [("version", .scalar(String(manifest.version), .plain))]
    if let reminders = manifest.reminders { entries.append(("reminders", node(reminders))) }
    if let contacts = manifest.contacts { entries.append(("contacts", contactList(contacts.value))) }
    if let emergency = manifest.emergency {
      var fields: [(key: String, value: YAMLOutputNode)] = []
      if let sos = emergency.isSosOn { fields.append(("sos", bool(sos.value))) }
      if let contacts = emergency.contacts { fields.append(("contacts", contactList(contacts.value))) }
      entries.append(("emergency", .mapping(fields, flow: false)))
    }
    return .mapping(entries, flow: false)
  }

  private static func node(_ reminders: ManifestReminders) -> YAMLOutputNode {
    var entries: [(key: String, value: YAMLOutputNode)] = []
    if let lunch = reminders.lunchBreak?.value { entries.append(("lunch_break", node(lunch))) }
    for kind in ReminderKind.builtIns {
      if let reminder = reminders[builtIn: kind] { entries.append((kind.rawValue, node(reminder))) }
    }
    if let custom = reminders.custom { entries.append(("custom", .sequence(custom.value.map(node), flow: false))) }
    return .mapping(entries, flow: false)
  }

  /// `{start, end}` when on with times, else `true` / `false`.
  private static func node(_ lunch: LunchBreak) -> YAMLOutputNode {
    if let window = lunch.window, lunch.isEnabled {
      return .mapping([("start", time(window.start)), ("end", time(window.end))], flow: true)
    }
    return bool(lunch.isEnabled)
  }

  private static func node(_ reminder: ManifestReminder) -> YAMLOutputNode {
    .mapping(entries(of: reminder), flow: false)
  }

  /// The entries of a reminder's mapping, in canonical order: `name`, `enabled`, `repeat`,
  /// `period` or `at`, `lunch_break`, `notes` (those set).
  package static func entries(of reminder: ManifestReminder) -> [(key: String, value: YAMLOutputNode)] {
    var entries: [(key: String, value: YAMLOutputNode)] = []
    if let name = reminder.name { entries.append(("name", text(name.value))) }
    if let enabled = reminder.isEnabled { entries.append(("enabled", bool(enabled.value))) }
    if let days = reminder.repeatDays { entries.append(("repeat", CanonicalForm.repeatNode(days.value))) }
    switch reminder.schedule?.value {
    case .period(let start, let end, let interval):
      entries.append(("period", .mapping([("start", time(start)), ("end", time(end)),
                                          ("every", .scalar(CanonicalForm.duration(interval), .plain))], flow: true)))
    case .timePoints(let points):
      entries.append(("at", .sequence(points.map(time), flow: true)))
    case nil:
      break
    }
    if let lunch = reminder.lunchBreak?.value { entries.append(("lunch_break", node(lunch))) }
    if let notes = reminder.notes { entries.append(("notes", text(notes.value))) }
    return entries
  }

  private static func contactList(_ contacts: [ManifestContact]) -> YAMLOutputNode {
    .sequence(contacts.map { node($0) }, flow: false)
  }

  /// One contact as a flow mapping: `{name, phone[, short_name]}`.
  package static func node(_ contact: ManifestContact) -> YAMLOutputNode {
    var fields: [(key: String, value: YAMLOutputNode)] = [
      ("name", text(contact.name.value)), ("phone", .scalar(contact.phone.value, .doubleQuoted)),
    ]
    if contact.shortNameIsExplicit, contact.shortName != ShortNameRule.derive(from: contact.name.value) {
      fields.append(("short_name", text(contact.shortName)))
    }
    return .mapping(fields, flow: true)
  }

  private static func time(_ time: MinuteOfDay) -> YAMLOutputNode { .scalar(CanonicalForm.time(time), .doubleQuoted) }
  package static func bool(_ value: Bool) -> YAMLOutputNode { .scalar(value ? "true" : "false", .plain) }
  private static func text(_ value: String) -> YAMLOutputNode { .scalar(value, CanonicalForm.textStyle(value)) }
}
