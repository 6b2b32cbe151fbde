import TSManifest
import TSModel

/// The merge rule of a fleet (docs/fleet.md "The merge rule"): a section of a watch's own
/// manifest replaces the same section of the fleet's `defaults`, at the granularity a section
/// is managed:
///
/// | section | unit replaced |
/// |---|---|
/// | `reminders.sedentary`, `.drinking`, `.medicine` | one built-in reminder, whole |
/// | `reminders.custom` | one custom reminder, by name; the watch's new names are added after the defaults'; `custom: []` drops them all |
/// | `contacts` | the whole list |
/// | `emergency` | the whole block (`sos` and `contacts` together) |
///
/// A section neither manifest has stays unmanaged. The merge works on decoded manifests and
/// keeps every value's position, so a problem found later (at plan time, on the watch) names the
/// file and line the value came from, the defaults' included. Each manifest was validated when
/// read; merging whole units keeps every rule true (custom names stay unique, an emergency block
/// keeps its SOS check), so the merged manifest needs no check of its own.
public enum ManifestMerge {
  /// `own` over `defaults`. The merged manifest is named after both, `residents/room-12.yaml
  /// over wards/ward-a.yaml` (what a plan says the watch was compared with), else after the one
  /// there is.
  public static func merge(defaults: Manifest?, own: Manifest?) -> Manifest {
    guard let defaults else { return own ?? Manifest(file: "-") }
    guard let own else { return defaults }
    var merged = Manifest(file: "\(own.file) over \(defaults.file)", version: own.version)
    merged.reminders = reminders(defaults: defaults.reminders, own: own.reminders)
    merged.contacts = own.contacts ?? defaults.contacts
    merged.emergency = own.emergency ?? defaults.emergency
    return merged
  }

  private static func reminders(defaults: ManifestReminders?, own: ManifestReminders?) -> ManifestReminders? {
    guard let defaults else { return own }
    guard let own else { return defaults }
    var merged = ManifestReminders(position: own.position)
    merged.sedentary = own.sedentary ?? defaults.sedentary
    merged.drinking = own.drinking ?? defaults.drinking
    merged.medicine = own.medicine ?? defaults.medicine
    merged.custom = custom(defaults: defaults.custom, own: own.custom)
    return merged
  }

  private static func custom(defaults: Located<[ManifestReminder]>?, own: Located<[ManifestReminder]>?) -> Located<[ManifestReminder]>? {
    guard let defaults else { return own }
    guard let own else { return defaults }
    // `custom: []` says "no custom reminders": the way a watch that has none (fw, fit-basic)
    // drops the defaults' list, as the error for such a watch advises.
    if own.value.isEmpty { return own }
    let byName = Dictionary(own.value.compactMap { reminder in reminder.name.map { ($0.value, reminder) } }) { first, _ in first }
    var list = defaults.value.map { reminder in reminder.name.flatMap { byName[$0.value] } ?? reminder }
    let defaultNames = Set(defaults.value.compactMap { $0.name?.value })
    list += own.value.filter { reminder in !defaultNames.contains(reminder.name?.value ?? "") }
    return Located(list, at: own.position)
  }

  /// The field paths of `defaults` that survive in `merged` (`contacts`, `reminders.custom[2]`, …),
  /// so only the defaults' warnings about values a watch really gets are shown with it.
  public static func surviving(_ defaults: Manifest, in merged: Manifest) -> [String] {
    var paths: [String] = []
    if let contacts = merged.contacts, contacts == defaults.contacts { paths.append("contacts") }
    if let emergency = merged.emergency, emergency == defaults.emergency { paths.append("emergency") }
    if let reminders = merged.reminders {
      for kind in ReminderKind.builtIns {
        if let reminder = reminders[builtIn: kind], reminder == defaults.reminders?[builtIn: kind] { paths.append(reminder.path) }
      }
      let defaultCustom = defaults.reminders?.custom?.value ?? []
      for reminder in reminders.custom?.value ?? [] where defaultCustom.contains(reminder) { paths.append(reminder.path) }
    }
    return paths
  }

  /// Whether `field` (a diagnostic's field path) lies under one of `paths`.
  public static func field(_ field: String, isUnder paths: [String]) -> Bool {
    paths.contains { path in
      field == path || field.hasPrefix(path + ".") || field.hasPrefix(path + "[")
    }
  }
}
