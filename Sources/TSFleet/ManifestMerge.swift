import TSManifest
import TSModel

/// The merge rule of a fleet (docs/fleet.md "The merge rule"): a watch's manifests — its layers
/// in the order the fleet file lists them, then its own manifest — are merged bottom to top, a
/// later manifest winning over an earlier one at the granularity a section is managed:
///
/// | section | unit |
/// |---|---|
/// | `reminders.sedentary`, `.drinking`, `.medicine` | one built-in reminder, whole |
/// | `reminders.custom` | one custom reminder, by name |
/// | `reminders.lunch_break` | the default, whole |
/// | `contacts` | one contact, by name |
/// | `emergency.sos` | the switch |
/// | `emergency.contacts` | one contact, by name |
///
/// In a list merged by name, a later manifest's entries of a name replace every earlier entry of
/// that name, in the place of the first; its new names follow the earlier ones; `- {name: X,
/// remove: true}` drops the earlier entries named X (`Manifest.removals`); an empty list written
/// as `[]` (no entry, no removal) drops them all. Emergency contacts written as references
/// (`- {contact: NAME}`) are resolved once every manifest is merged, against the contacts every
/// one of them declares (`ContactReferences`), so a contact declared once, in one layer, reaches
/// both lists of every watch.
///
/// A section no manifest has stays unmanaged. Every value keeps its position, so a problem
/// found later (at plan time, on the watch) names the file and line the value came from. Each
/// manifest was validated when read; what only the merge can break (SOS on with no emergency
/// contact left, a reference to a contact nobody declares) is checked here.
public enum ManifestMerge {
  /// What merging produced: the manifest, and what only the merged manifest can get wrong
  /// (errors) or what a manifest asked for that did nothing (warnings: a removal of a name no
  /// earlier manifest gives).
  public struct Result: Sendable {
    /// The merged manifest, named after every manifest merged (`own over layer`); it holds no removals.
    public var manifest: Manifest
    /// Problems found by merging, with the positions of the values involved.
    public var diagnostics: [Diagnostic]
  }

  /// `manifests` merged, the first at the bottom. An empty list gives an empty manifest (`-`).
  public static func merge(_ manifests: [Manifest]) -> Result {
    guard var merged = manifests.first else { return Result(manifest: Manifest(file: "-"), diagnostics: []) }
    var diagnostics = ManifestRemoval.onlyRemovalsWarnings(merged, lists: Set(ManifestRemoval.List.allCases),
                                                          scope: "no manifest under it gives this list")
    // The first manifest's own removals remove nothing; in a manifest of its own they only say an
    // entry is not wanted, which its lists already say.
    merged.removals = []
    for layer in manifests.dropFirst() {
      // A list of only removals with no list under it to remove from.
      var bare: Set<ManifestRemoval.List> = []
      if merged.contacts == nil { bare.insert(.contacts) }
      if merged.emergency?.contacts == nil { bare.insert(.emergencyContacts) }
      if merged.reminders?.custom == nil { bare.insert(.customReminders) }
      diagnostics += ManifestRemoval.onlyRemovalsWarnings(layer, lists: bare, scope: "no manifest under it gives this list")
      var next = Manifest(file: layer.file, version: layer.version)
      next.reminders = reminders(merged.reminders, layer.reminders, removals: layer.removals, &diagnostics)
      next.contacts = list(merged.contacts, layer.contacts, removals: layer.removals, of: .contacts, &diagnostics)
      next.emergency = emergency(merged.emergency, layer.emergency, removals: layer.removals, &diagnostics)
      merged = next
    }
    // Resolved even for one manifest (a watch with one layer and none of its own): its
    // references were left open when it was read.
    let declared = manifests.flatMap { $0.contacts?.value ?? [] }
    diagnostics += ContactReferences.resolve(&merged, declared: declared,
                                             scope: "under contacts: in any of \(manifests.map(\.file).joined(separator: ", "))")
    // Named after every manifest merged, top first (`residents/room-12.yaml over
    // wards/ward-a.yaml`): what a plan says the watch was compared with.
    merged.file = manifests.reversed().map(\.file).joined(separator: " over ")
    if let emergency = merged.emergency, let sos = emergency.isSosOn, sos.value, emergency.contacts?.value.isEmpty ?? true {
      // The removals that emptied the list are named where they are written: the error sits at
      // the `sos:` that needs a contact, often in another file.
      let removed = manifests.dropFirst().flatMap { $0.removals.filter { $0.list == .emergencyContacts } }
      let because = removed.isEmpty ? ""
        : " (" + removed.map { "\($0.name.position.file):\($0.name.position.line):\($0.name.position.column) removes \"\($0.name.value)\"" }
          .joined(separator: "; ") + ")"
      diagnostics.append(.error(at: sos.position, field: "emergency.sos",
        "is true but the merged manifest of this watch (\(manifests.map(\.file).joined(separator: " under "))) has no emergency contacts\(because); keep at least one under emergency.contacts, or set sos: false"))
    }
    return Result(manifest: merged, diagnostics: diagnostics)
  }

  /// `own` over `defaults` (the one-layer fleet): `merge([defaults, own])`.
  public static func merge(defaults: Manifest?, own: Manifest?) -> Result {
    merge([defaults, own].compactMap { $0 })
  }

  private static func reminders(_ below: ManifestReminders?, _ above: ManifestReminders?, removals: [ManifestRemoval],
                                _ diagnostics: inout [Diagnostic]) -> ManifestReminders? {
    guard let below else { return above }
    guard let above else { return below }
    var merged = ManifestReminders(position: above.position)
    merged.sedentary = above.sedentary ?? below.sedentary
    merged.drinking = above.drinking ?? below.drinking
    merged.medicine = above.medicine ?? below.medicine
    merged.lunchBreak = above.lunchBreak ?? below.lunchBreak
    merged.lunchBreakKeys = above.lunchBreak != nil ? above.lunchBreakKeys : below.lunchBreakKeys
    merged.custom = list(below.custom, above.custom, removals: removals, of: .customReminders, &diagnostics)
    return merged
  }

  private static func emergency(_ below: ManifestEmergency?, _ above: ManifestEmergency?, removals: [ManifestRemoval],
                                _ diagnostics: inout [Diagnostic]) -> ManifestEmergency? {
    guard let below else { return above }
    guard let above else { return below }
    var merged = ManifestEmergency(position: above.position)
    merged.isSosOn = above.isSosOn ?? below.isSosOn
    merged.contacts = list(below.contacts, above.contacts, removals: removals, of: .emergencyContacts, &diagnostics)
    return merged
  }

  /// `above` merged over `below` by name (see the type's rule).
  private static func list<Entry: NamedEntry>(_ below: Located<[Entry]>?, _ above: Located<[Entry]>?,
                                              removals: [ManifestRemoval], of kind: ManifestRemoval.List,
                                              _ diagnostics: inout [Diagnostic]) -> Located<[Entry]>? {
    let removed = removals.filter { $0.list == kind }
    guard let above else { return below }
    guard let below else { return above }
    // `[]` as written says "none": the way a watch without custom reminders (fw, fit-basic)
    // drops a layer's list.
    if above.value.isEmpty, removed.isEmpty { return above }
    let removedNames = Set(removed.map(\.name.value))
    let belowNames = Set(below.value.map(\.entryName))
    for removal in removed where !belowNames.contains(removal.name.value) {
      var message = "removes \"\(removal.name.value)\", but no manifest under this one gives an entry of that name in \(kind.rawValue); nothing is removed"
      if let meant = Suggestion.closest(to: removal.name.value, in: below.value.map(\.entryName)) { message += "; did you mean \"\(meant)\"?" }
      diagnostics.append(.warning(at: removal.name.position, field: removal.path, message))
    }
    // The later entries that replace earlier ones, by name, and those that are new (most of a
    // watch's own list), in one pass.
    var byName: [String: [Entry]] = [:]
    var added: [Entry] = []
    added.reserveCapacity(above.value.count)
    for entry in above.value {
      if belowNames.contains(entry.entryName) { byName[entry.entryName, default: []].append(entry) } else { added.append(entry) }
    }
    var placed: Set<String> = []
    var merged: [Entry] = []
    merged.reserveCapacity(below.value.count + above.value.count)
    for entry in below.value where removedNames.isEmpty || !removedNames.contains(entry.entryName) {
      guard let replacements = byName[entry.entryName] else {
        merged.append(entry)
        continue
      }
      if placed.insert(entry.entryName).inserted { merged += replacements }
    }
    merged += added
    return Located(merged, at: above.position)
  }

  /// The field paths of `layer` (one manifest merged into `merged`) whose values survive in
  /// `merged` (`contacts[0]`, `reminders.custom[2]`, `emergency.sos`, …), so only a layer's
  /// warnings about values a watch really gets are shown with it.
  public static func surviving(_ layer: Manifest, in merged: Manifest) -> [String] {
    var paths: [String] = []
    if let contacts = merged.contacts {
      paths += (layer.contacts?.value ?? []).filter(contacts.value.contains).map(\.path)
      if contacts.position == layer.contacts?.position { paths.append("contacts") }
    }
    if let emergency = merged.emergency {
      if let sos = emergency.isSosOn, sos == layer.emergency?.isSosOn { paths.append("emergency.sos") }
      if let contacts = emergency.contacts {
        paths += (layer.emergency?.contacts?.value ?? []).filter(contacts.value.contains).map(\.path)
        if contacts.position == layer.emergency?.contacts?.position { paths.append("emergency.contacts") }
      }
    }
    if let reminders = merged.reminders {
      if let lunch = reminders.lunchBreak, lunch == layer.reminders?.lunchBreak { paths.append("reminders.lunch_break") }
      for kind in ReminderKind.builtIns {
        if let reminder = reminders[builtIn: kind], reminder == layer.reminders?[builtIn: kind] { paths.append(reminder.path) }
      }
      let layerCustom = layer.reminders?.custom?.value ?? []
      for reminder in reminders.custom?.value ?? [] where layerCustom.contains(reminder) { paths.append(reminder.path) }
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

/// An entry of a list merged by name.
protocol NamedEntry: Hashable {
  /// The name it is merged by (a custom reminder without a name, already an error, merges as "").
  var entryName: String { get }
}

extension ManifestContact: NamedEntry {
  var entryName: String { name.value }
}

extension ManifestReminder: NamedEntry {
  var entryName: String { name?.value ?? "" }
}
