import TSModel
import TSManifest

/// The manifest's words for the SDK's: which manifest key a plan's field change stands for
/// (docs/manifest.md "Keys"), and the manifest path and source position each change gets at plan
/// time (`FieldChange.manifestPath`, `FieldChange.source`).
///
/// | SDK field | manifest key |
/// |---|---|
/// | `reminderName` | `name` |
/// | `isEnabled` | `enabled` |
/// | `repeatDays` | `repeat` |
/// | `timeType` | `period` or `at` (the schedule written) |
/// | `startTime`, `endTime`, `interval` | `period.start`, `period.end`, `period.every` |
/// | `timePoints` | `at` |
/// | `notes` | `notes` |
/// | `isLunchBreakDNDEnabled` | `lunch_break` |
/// | `lunchBreakDNDStartTime`, `lunchBreakDNDEndTime` | `lunch_break.start`, `lunch_break.end` |
/// | `isSosOn` | `sos` |
/// | `contacts` (one contact) | `contact`, its keys `name`, `phone`, `short_name` |
public enum ManifestWords {
  /// The manifest key of the SDK field `field` (the table above); `field` itself when it has no
  /// other name. `timeType` is `period` or `at` by its value (`schedule(_:)`).
  public static func key(_ field: String) -> String {
    keys[field] ?? field
  }

  /// The manifest key of a contact's SDK key: `phoneNum` → `phone`, `shortName` → `short_name`.
  public static func contactKey(_ key: String) -> String {
    contactKeys[key] ?? key
  }

  /// The manifest key of a schedule kind as the plan holds it (`timeType`'s `"period"` /
  /// `"point"`): `period` or `at`.
  static func schedule(_ value: FieldValue?) -> String {
    value == .string("point") ? "at" : "period"
  }

  /// A manifest value as the plan shows it: a schedule as `{start = "09:00", end = "18:00",
  /// every = 2h}` or `["08:00", "20:00"]`.
  public static func text(_ schedule: ReminderSchedule) -> String {
    switch schedule {
    case .period(let start, let end, let interval): FieldFormatter.period(start.rawValue, end.rawValue, every: interval)
    case .timePoints(let points): "[" + points.map { FieldFormatter.time($0.rawValue) }.joined(separator: ", ") + "]"
    }
  }

  /// A lunch break as the plan shows it: `{start = "12:00", end = "13:30"}`, or `true`/`false`.
  public static func text(_ lunch: LunchBreak) -> String {
    guard lunch.isEnabled, let window = lunch.window else { return String(lunch.isEnabled) }
    return "{start = \(FieldFormatter.time(window.start.rawValue)), end = \(FieldFormatter.time(window.end.rawValue))}"
  }

  /// Text as the plan shows it: double-quoted, `"` and `\` escaped, control characters escaped.
  public static func quoted(_ text: String) -> String { FieldFormatter.quoted(text) }

  /// The contact a field value of `ContactDiff.value(_:)` stands for.
  private static func contact(_ value: FieldValue) -> Contact? {
    guard case .object(let entries) = value else { return nil }
    func text(_ key: String) -> String? {
      guard case .string(let text)? = entries.first(where: { $0.key == key })?.value else { return nil }
      return text
    }
    guard let name = text("name"), let phone = text("phoneNum") else { return nil }
    return Contact(name: name, phoneNum: phone, shortName: text("shortName"))
  }

  private static let keys: [String: String] = [
    "reminderName": "name", "isEnabled": "enabled", "repeatDays": "repeat", "startTime": "period.start",
    "endTime": "period.end", "interval": "period.every", "timePoints": "at", "notes": "notes",
    "isLunchBreakDNDEnabled": "lunch_break", "lunchBreakDNDStartTime": "lunch_break.start",
    "lunchBreakDNDEndTime": "lunch_break.end", "isSosOn": "sos", "contacts": "contact",
  ]
  private static let contactKeys: [String: String] = ["phoneNum": "phone", "shortName": "short_name"]

  /// `fields` of a reminder change, each with the path under `reminder.path` and the position of
  /// the key that asks for it (`ManifestReminder.keyPositions`): `period.end` points at the
  /// `end:` line, not at the `period:` mapping's first key. A field whose own key is not written
  /// (`period.every` when the reminder switches to `at`) points at the key of the value that
  /// sets it (`period`, `at`, `lunch_break`). A lunch break at `lunchDefault` came from the
  /// manifest-wide default, so its path is `reminders.lunch_break…`. A custom reminder enabled by
  /// default (no `enabled` written) points at the entry.
  static func reminder(_ fields: [FieldChange], _ reminder: ManifestReminder, lunchDefault: SourcePosition?) -> [FieldChange] {
    fields.map { field in
      var field = field
      let key = field.field == "timeType" ? schedule(field.after) : key(field.field)
      let position: SourcePosition?
      var base = reminder.path
      var written = [key, String(key.prefix { $0 != "." })]
      switch field.field {
      case "reminderName": position = reminder.name?.position
      case "isEnabled": position = reminder.isEnabled?.position
      case "repeatDays": position = reminder.repeatDays?.position
      case "timeType", "startTime", "endTime", "interval", "timePoints":
        position = reminder.schedule?.position
        written += ["period", "at"]
      case "notes": position = reminder.notes?.position
      default:
        position = reminder.lunchBreak?.position
        if let lunchDefault, position == lunchDefault { base = "reminders" }
      }
      field.manifestPath = base + "." + key
      field.source = written.lazy.compactMap { reminder.keyPositions[$0] }.first ?? position ?? reminder.keyPosition
      return field
    }
  }

  /// `fields` of something the manifest does not list (a custom reminder deleted, a contact
  /// removed): each points at the list `path` at `position`, which leaves it out.
  static func unlisted(_ fields: [FieldChange], path: String, at position: SourcePosition) -> [FieldChange] {
    fields.map { field in
      var field = field
      field.manifestPath = path
      field.source = position
      return field
    }
  }

  /// A contact list's field changes (`ContactDiff.fieldChanges`), each pointing at the manifest
  /// contact it writes: `stored[i]` is how `contacts[i]` is written (`ContactPlanner.storedContacts`),
  /// each used once; a removed contact points at the list (`path` at `position`).
  static func contacts(_ fields: [FieldChange], manifest contacts: [ManifestContact], stored: [Contact],
                       path: String, at position: SourcePosition) -> [FieldChange] {
    // Few contacts change in most plans: each is looked up among the stored ones, compared as a
    // `Contact` (no field value is made for the list).
    var used = Set<Int>()
    return fields.map { field in
      var field = field
      if let after = field.after, let written = contact(after),
         let index = stored.indices.first(where: { !used.contains($0) && stored[$0] == written }), index < contacts.count {
        used.insert(index)
        let contact = contacts[index]
        field.manifestPath = contact.path
        // A contact added points at its entry (the `- name:` line); a changed one at the key
        // of what changes: its name for a rename, else its phone, else its short name; one
        // referred to (`{contact: NAME}`) at the phone of the contact declared, the one line
        // that sets both lists. `--explain` names each field at the same key (docs/plan.md).
        let old = field.before.flatMap { Self.contact($0) }
        field.source = contact.reference != nil ? contact.phone.position
          : field.before == nil ? contact.position
          : ContactCounts.name(field.before) != ContactCounts.name(after) ? contact.name.position
          : old == nil || old?.phoneNum != written.phoneNum ? contact.phone.position
          : contact.shortNamePosition ?? contact.phone.position
      } else {
        field.manifestPath = path
        field.source = position
      }
      return field
    }
  }
}
