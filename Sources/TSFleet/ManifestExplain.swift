import TSManifest
import TSModel
import TSPlan

/// `tsapply plan --fleet FILE --watch NAME --explain`: for each value a watch's merged manifest
/// holds, the manifest (layer or the watch's own) that set it and the ones under it that it
/// overrode; and each value a layer gives that the watch does not get, with what dropped it
/// (docs/fleet.md "Explain").
///
/// Values are named by path with list entries by name, as the merge matches them
/// (`contacts["Ward A desk"].phone`, `reminders.custom["Walk"].repeat`), and written as the plan
/// writes them (`ManifestWords`). The merge rule is `ManifestMerge`'s: a later manifest wins a
/// unit (a built-in reminder, a custom reminder or contact by name, the lunch-break default, the
/// SOS switch) whole, so a field a lower manifest gives inside a unit a later one replaces is not
/// kept even when the later one leaves that field out.
public enum ManifestExplain {
  /// One value, kept or not.
  public struct Line: Hashable, Sendable {
    /// Its path, e.g. `reminders.drinking.period`, `contacts["Ward A desk"].phone`.
    public var path: String
    /// As the plan writes it (`"+1 555 0100"`, `workday`, `{start = …}`); `nil` for an entry
    /// removed whole (`remove: true`, an empty list).
    public var value: String?
    /// Where it is set: for a kept value, the winner; else the lower manifest that gave it.
    public var source: SourcePosition
    /// Kept values: the lower manifests that set the same path, top first, with their values.
    public var overrides: [Override] = []
    /// Values not kept: why (`replaced whole by residents/room-12.yaml:3`,
    /// `removed by residents/room-12.yaml:8`, `dropped by the empty list at …`).
    public var dropped: String?
  }

  /// A value a kept one overrides: where it was set, and what it was.
  public struct Override: Hashable, Sendable {
    /// Where the lower manifest sets it.
    public var source: SourcePosition
    /// As the plan writes it.
    public var value: String
  }

  /// One unit of the merge (`ManifestMerge`'s table) as one manifest gives it.
  struct Unit {
    var key: String
    var position: SourcePosition
    var fields: [(key: String, value: String, position: SourcePosition)]
  }

  /// The lines for `manifests`, the first at the bottom (as `ManifestMerge.merge` takes them):
  /// the kept values in the order of the units of the top-most manifest that gives them, then
  /// the values not kept.
  public static func explain(_ manifests: [Manifest]) -> [Line] {
    let units = manifests.map(Self.units)
    var order: [String] = []
    for list in units.reversed() { for unit in list where !order.contains(unit.key) { order.append(unit.key) } }
    var kept: [Line] = [], dropped: [Line] = []
    for key in order {
      // Every manifest that gives the unit, top first.
      let givers = units.indices.reversed().compactMap { index in units[index].first { $0.key == key }.map { (index, $0) } }
      guard let (top, winner) = givers.first else { continue }
      // What above the winner drops it: a removal by name, or an empty list.
      if let removal = Self.removal(of: key, above: top, in: manifests) {
        for (_, unit) in givers { dropped += unit.fields.map { Line(path: key + $0.key, value: $0.value, source: $0.position, dropped: removal) } }
        continue
      }
      for field in winner.fields {
        var line = Line(path: key + field.key, value: field.value, source: field.position)
        for (_, lower) in givers.dropFirst() {
          if let same = lower.fields.first(where: { $0.key == field.key }) { line.overrides.append(Override(source: same.position, value: same.value)) }
        }
        kept.append(line)
      }
      let winnerKeys = Set(winner.fields.map(\.key))
      for (_, lower) in givers.dropFirst() {
        for field in lower.fields where !winnerKeys.contains(field.key) {
          dropped.append(Line(path: key + field.key, value: field.value, source: field.position,
                              dropped: "\(key) is replaced whole by \(place(winner.position)), which leaves it out"))
        }
      }
    }
    return kept + dropped
  }

  /// The text of `lines` for `watch` over `files` (its manifests' names, the top first), ending
  /// with a newline. With `redact`, phone numbers are masked (`PhoneRedaction`).
  public static func text(_ lines: [Line], watch: String, files: [String], redact: Bool) -> String {
    let mask = PhoneRedaction.Mask(redact: redact)
    var out = "Where the values of \(ControlCharacters.escaped(watch))'s manifest come from (the first file wins):\n"
    out += files.map { "  " + ControlCharacters.escaped($0) + "\n" }.joined() + "\n"
    let texts = lines.map { ControlCharacters.escaped($0.path) + ($0.value.map { " = " + mask.text($0) } ?? "") }
    // The comments in one column, as in the plan (`HumanPlanRenderer.commentColumn`).
    let column = HumanPlanRenderer.commentColumn(texts.map(\.count))
    for (line, text) in zip(lines, texts) {
      out += text + HumanPlanRenderer.commentGap(after: text.count, column: column) + "# " + place(line.source)
      if let dropped = line.dropped {
        out += ", not kept: \(dropped)\n"
      } else {
        out += "\n" + line.overrides.map { "    overrides \(place($0.source)): \(mask.text($0.value))\n" }.joined()
      }
    }
    return out
  }

  /// `file:line`, control characters escaped.
  static func place(_ position: SourcePosition) -> String {
    ControlCharacters.escaped(position.file) + ":\(position.line)"
  }

  /// Why a unit `key` given under manifest `index` is not kept: a manifest above it removes it by
  /// name, or writes its list empty; `nil` when none does.
  static func removal(of key: String, above index: Int, in manifests: [Manifest]) -> String? {
    for manifest in manifests[(index + 1)...] {
      for removal in manifest.removals where key == entry(removal.list.rawValue, removal.name.value) {
        return "removed by \(place(removal.name.position))"
      }
      let lists: [(String, Located<[String]>?)] = [
        ("contacts", manifest.contacts.map { Located($0.value.map(\.name.value), at: $0.position) }),
        ("emergency.contacts", manifest.emergency?.contacts.map { Located($0.value.map(\.name.value), at: $0.position) }),
        ("reminders.custom", manifest.reminders?.custom.map { Located($0.value.compactMap { $0.name?.value }, at: $0.position) }),
      ]
      for (list, names) in lists where key.hasPrefix(list + "[") {
        if let names, names.value.isEmpty, !manifest.removals.contains(where: { $0.list.rawValue == list }) {
          return "dropped by the empty list at \(place(names.position))"
        }
      }
    }
    return nil
  }

  /// `list["name"]`, the name quoted as the plan quotes text.
  static func entry(_ list: String, _ name: String) -> String {
    list + "[" + ManifestWords.quoted(name) + "]"
  }

  /// The units `manifest` gives, each with its fields (keys with their leading `.`; empty for a
  /// unit that is one value).
  static func units(_ manifest: Manifest) -> [Unit] {
    var units: [Unit] = []
    if let reminders = manifest.reminders {
      if let lunch = reminders.lunchBreak {
        let position = reminders.lunchBreakKeys["lunch_break"] ?? lunch.position
        units.append(Unit(key: "reminders.lunch_break", position: position,
                          fields: [("", ManifestWords.text(lunch.value), position)]))
      }
      for kind in ReminderKind.builtIns {
        if let reminder = reminders[builtIn: kind] { units.append(unit("reminders.\(kind.rawValue)", reminder)) }
      }
      for reminder in reminders.custom?.value ?? [] {
        units.append(unit(entry("reminders.custom", reminder.name?.value ?? ""), reminder))
      }
    }
    for contact in manifest.contacts?.value ?? [] { units.append(unit(entry("contacts", contact.name.value), contact)) }
    if let emergency = manifest.emergency {
      if let sos = emergency.isSosOn {
        units.append(Unit(key: "emergency.sos", position: sos.position, fields: [("", String(sos.value), sos.position)]))
      }
      for contact in emergency.contacts?.value ?? [] {
        units.append(unit(entry("emergency.contacts", contact.name.value), contact))
      }
    }
    return units
  }

  /// A reminder's unit: each field at its key's line (`ManifestReminder.keyPositions`, as the
  /// plan names it), the unit at the reminder's key or list item.
  private static func unit(_ key: String, _ reminder: ManifestReminder) -> Unit {
    var fields: [(key: String, value: String, position: SourcePosition)] = []
    func add(_ field: String, _ value: String, _ position: SourcePosition) {
      fields.append(("." + field, value, reminder.keyPositions[field] ?? position))
    }
    if let name = reminder.name, reminder.kind != .custom { add("name", ManifestWords.quoted(name.value), name.position) }
    if let enabled = reminder.isEnabled { add("enabled", String(enabled.value), enabled.position) }
    if let days = reminder.repeatDays { add("repeat", days.value.description, days.position) }
    if let schedule = reminder.schedule {
      let key = if case .timePoints = schedule.value { "at" } else { "period" }
      add(key, ManifestWords.text(schedule.value), schedule.position)
    }
    if let lunch = reminder.lunchBreak { add("lunch_break", ManifestWords.text(lunch.value), lunch.position) }
    if let notes = reminder.notes { add("notes", ManifestWords.quoted(notes.value), notes.position) }
    // A custom reminder named and nothing else is still given: its name is its key.
    if fields.isEmpty { fields.append(("", "{}", reminder.keyPosition)) }
    return Unit(key: key, position: reminder.keyPosition, fields: fields)
  }

  private static func unit(_ key: String, _ contact: ManifestContact) -> Unit {
    var fields: [(key: String, value: String, position: SourcePosition)] = []
    if let reference = contact.reference {
      fields.append((".contact", ManifestWords.quoted(reference.value), reference.position))
    } else {
      fields.append((".phone", ManifestWords.quoted(contact.phone.value), contact.phone.position))
      if contact.shortNameIsExplicit {
        fields.append((".short_name", ManifestWords.quoted(contact.shortName), contact.shortNamePosition ?? contact.position))
      }
    }
    return Unit(key: key, position: contact.position, fields: fields)
  }
}

extension FleetLoader {
  /// The manifests merged for `watch` of `fleet`, the first at the bottom (its layers in order,
  /// then its own), each as read (references unresolved, as the merge takes them), with their
  /// display names; `nil` for a file that cannot be read (its problems are the plan's to show).
  public static func manifests(of watch: FleetWatch, in fleet: FleetFile) -> [(name: String, manifest: Manifest)]? {
    var written = fleet.layers(for: watch).map(\.manifest.value)
    if let own = watch.manifest { written.append(own.value) }
    var manifests: [(name: String, manifest: Manifest)] = []
    for path in written {
      let name = fleet.displayPath(path)
      guard let manifest = ManifestLoader.load(path: fleet.absolutePath(path), displayName: name, resolvesReferences: false).manifest
      else { return nil }
      manifests.append((name, manifest))
    }
    return manifests
  }
}
