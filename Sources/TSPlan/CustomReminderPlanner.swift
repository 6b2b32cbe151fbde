import TSModel
import TSManifest

/// Plans a present `custom:` list: the complete set of custom reminders.
///
/// Matching is by stored name: the manifest name cut the way the platform stores it
/// (docs/platforms.md "Contacts"), compared with the name the watch holds. Capacity counts the final state:
/// exactly the manifest's list (docs/platforms.md "Capacity" `maxSupportedCustomReminderCount`).
enum CustomReminderPlanner {
  /// `lunchDefault`: the position of the manifest-wide lunch break (`ManifestWords.reminder`).
  static func plan(_ list: Located<[ManifestReminder]>, state: DeviceState, capabilities: DeviceCapabilities,
                   lunchDefault: SourcePosition? = nil) -> PlanPart {
    var part = PlanPart()
    part.diagnostics = capacityErrors(list, capabilities: capabilities)
    guard let storage = capabilities.reminders.custom, part.diagnostics.isEmpty else {
      return part
    }
    var unmatched = Dictionary(grouping: state.customReminders, by: \.reminderName)
    var storedNames: [String: ManifestReminder] = [:]
    for reminder in list.value {
      let name = reminder.name?.value ?? ""
      let checks = ReminderChecks(capabilities: capabilities, storage: storage, label: "custom reminder \"\(name)\"")
      let existing = unmatched[storedName(name, storage: storage)]?.first
      let (patch, diagnostics) = checks.patch(for: reminder, creating: existing == nil)
      part.diagnostics += diagnostics
      guard let stored = patch.name else { continue }
      if let other = storedNames[stored] {
        part.diagnostics.append(.error(at: reminder.name?.position ?? reminder.position, field: "\(reminder.path).name",
          "\"\(name)\" and \"\(other.name?.value ?? "")\" (\(other.path)) are both stored as \"\(stored)\" on the watch (profile \(capabilities.profile)); make them differ within the first \(storage.nameMaxBytes ?? 0) bytes"))
        continue
      }
      storedNames[stored] = reminder
      if let matches = unmatched.removeValue(forKey: stored), matches.count > 1 {
        part.diagnostics.append(duplicateWarning(matches, reminder: reminder))
        part.changes += matches.dropFirst().map {
          ReminderPlanner.delete($0, at: .customDuplicate(stored, reminderId: $0.reminderId), list: list.position)
        }
      }
      let base = existing ?? ReminderPlanner.customTemplate(capabilities)
      part.diagnostics += checks.resultDiagnostics(patch.applying(to: base), reminder: reminder)
      if let change = ReminderPlanner.change(.custom(name), existing: existing, base: base, patch: patch,
                                             capabilities: capabilities, reminder: reminder, lunchDefault: lunchDefault) {
        part.changes.append(change)
      }
    }
    part.changes += deletes(of: unmatched, avoiding: Set(part.changes.map(\.address)), list: list.position)
    return part
  }

  /// The name as tsapply writes it where the platform cuts names: cut first, on whole characters
  /// and without a space left at its end (`TextTruncation.cutName`), so the watch has nothing
  /// to cut; unchanged where the name fits or is not stored.
  static func storedName(_ name: String, storage: ReminderKindCapabilities) -> String {
    guard let limit = storage.nameMaxBytes, storage.truncatesLongText else { return name }
    return TextTruncation.cutName(name, maxBytes: limit)
  }

  private static func capacityErrors(_ list: Located<[ManifestReminder]>, capabilities: DeviceCapabilities) -> [Diagnostic] {
    let count = list.value.count
    let limit = capabilities.reminders.maxCustomReminders
    let watch = "the watch (profile \(capabilities.profile))"
    guard count > 0 else { return [] }
    guard let storage = capabilities.reminders.custom, limit > 0 else {
      return [.error(at: list.position, field: "reminders.custom",
        "\(watch) has no custom reminders; remove the custom list or write `custom: []`")]
    }
    if storage.nameMaxBytes == nil {
      return [.error(at: list.position, field: "reminders.custom",
        "\(watch) does not store custom reminder names, so tsapply cannot match them")]
    }
    guard count <= limit else {
      return [.error(at: list.position, field: "reminders.custom",
        "\(count) custom reminders, but \(watch) holds at most \(limit): remove \(count - limit), or join reminders that repeat alike "
          + "into one with several times (`at: [\"08:00\", \"20:00\"]`)")]
    }
    return []
  }

  private static func duplicateWarning(_ matches: [Reminder], reminder: ManifestReminder) -> Diagnostic {
    let ids = matches.map(\.reminderId).joined(separator: ", ")
    let kept = matches.first?.reminderId ?? ""
    return .warning(at: reminder.name?.position ?? reminder.position, field: "\(reminder.path).name",
      "the watch holds \(matches.count) custom reminders named \"\(matches.first?.reminderName ?? "")\" (IDs \(ids)); tsapply keeps ID \(kept) and deletes the others")
  }

  /// Deletes of every watch custom left unmatched; addresses made unique with the device ID.
  private static func deletes(of unmatched: [String: [Reminder]], avoiding used: Set<ResourceAddress>,
                              list: SourcePosition) -> [ResourceChange] {
    var used = used
    var changes: [ResourceChange] = []
    for name in unmatched.keys.sorted() {
      for reminder in unmatched[name] ?? [] {
        var address = ResourceAddress.custom(name)
        if used.contains(address) { address = .customDuplicate(name, reminderId: reminder.reminderId) }
        used.insert(address)
        changes.append(ReminderPlanner.delete(reminder, at: address, list: list))
      }
    }
    return changes
  }
}

extension Manifest {
  /// `changes` (drift: planned without this manifest, so named as the watch holds them) with
  /// each custom reminder this manifest states named in its words, as its plan names it: where
  /// the platform cuts names (fit: 30 bytes, docs/platforms.md), `reminder.custom["Physiotherapy
  /// exercises on she"]` is the manifest's `reminder.custom["Physiotherapy exercises on sheet"]`.
  /// Drift and the plan then meet on one address: what is pending, what the manifest states,
  /// what `drift --adopt` finds. Other changes are returned as they are.
  public func naming(_ changes: [ResourceChange], capabilities: DeviceCapabilities) -> [ResourceChange] {
    guard let storage = capabilities.reminders.custom, let list = reminders?.custom?.value else { return changes }
    var words: [ResourceAddress: ResourceAddress] = [:]
    for reminder in list {
      guard let name = reminder.name?.value else { continue }
      let stored = CustomReminderPlanner.storedName(name, storage: storage)
      if stored != name, words[.custom(stored)] == nil { words[.custom(stored)] = .custom(name) }
    }
    guard !words.isEmpty else { return changes }
    return changes.map { change in
      var named = change
      if let address = words[change.address] { named.address = address }
      return named
    }
  }
}
