import TSManifest
import TSModel
import TSPlan

/// Turns a watch's state into a manifest that states all of it, for `tsapply restore` (and later
/// `tsapply export`): planning that manifest against any watch state gives the changes that put
/// the watch back into `state`.
///
/// Every section the platform has is present and every stored field is set; fields the platform
/// does not store are left out (so they are never compared). Positions point at line 1, column 1
/// of `file`, since the manifest has no source text.
public enum StateManifest {
  /// The manifest for `state` on a platform with `capabilities`, and problems that make part of
  /// the state impossible to state (times outside 0...1439: left out and reported as errors).
  ///
  /// Custom reminders that share a name on the watch (names identify custom reminders): with
  /// `renamingDuplicates` (`tsapply export`) the later ones get distinct names (`Walk (2)`, cut
  /// to the platform's name limit) and a warning each; without it (`tsapply restore`, which must
  /// give the exact state back) the later ones are left out and reported as errors.
  ///
  /// With `differingFrom` (drift), only the sections whose state differs from it are stated —
  /// each built-in reminder, the custom reminders, the contacts, the emergency section — and the
  /// others left unmanaged: planning the manifest against `differingFrom` gives the same changes
  /// as planning the whole of it, without comparing what is equal. A contact the watch holds
  /// more than once is stated as often as it is held there: no person reads this manifest, and
  /// drift must show a copy added on the watch (a manifest written by a person cannot hold one).
  public static func manifest(for state: DeviceState, capabilities: DeviceCapabilities, file: String,
                              renamingDuplicates: Bool = false, differingFrom other: DeviceState? = nil) -> (Manifest, [Diagnostic]) {
    var renamed: [String: Reminder] = [:]
    return manifest(for: state, capabilities: capabilities, file: file, renamingDuplicates: renamingDuplicates, differingFrom: other, renamed: &renamed)
  }

  /// Drift's manifest: `state`'s sections that differ from `other` (`manifest(for:…differingFrom:)`),
  /// with a custom reminder whose name another one on the watch already has stated under a name
  /// of its own (as `renamingDuplicates` gives it), so a second "Walk" added on the watch is
  /// drift, not left out (fresh-eyes fe99 #2); `renamed`: each such name → the reminder as the
  /// watch holds it, so drift names it as the plan does (`ResourceAddress.customDuplicate`).
  static func drift(_ state: DeviceState, differingFrom other: DeviceState, capabilities: DeviceCapabilities)
    -> (manifest: Manifest, renamed: [String: Reminder]) {
    var renamed: [String: Reminder] = [:]
    let (manifest, _) = manifest(for: state, capabilities: capabilities, file: "watch", renamingDuplicates: true, differingFrom: other, renamed: &renamed)
    return (manifest, renamed)
  }

  private static func manifest(for state: DeviceState, capabilities: DeviceCapabilities, file: String,
                               renamingDuplicates: Bool, differingFrom other: DeviceState?,
                               renamed: inout [String: Reminder]) -> (Manifest, [Diagnostic]) {
    let origin = SourcePosition(file: file, line: 1, column: 1)
    var diagnostics: [Diagnostic] = []
    var reminders = ManifestReminders(position: origin)
    for kind in ReminderKind.builtIns {
      guard let stored = capabilities.reminders[kind], let reminder = state.builtIn(kind) else { continue }
      if let other, other.builtIn(kind) == reminder { continue }
      let item = manifestReminder(reminder, kind: kind, stored: stored, path: "reminders.\(kind.rawValue)",
                                  origin: origin, diagnostics: &diagnostics)
      switch kind {
      case .sedentary: reminders.sedentary = item
      case .drinking: reminders.drinking = item
      case .medicine: reminders.medicine = item
      case .custom: break
      }
    }
    if let stored = capabilities.reminders.custom, capabilities.reminders.maxCustomReminders > 0,
       other.map({ $0.customReminders != state.customReminders }) ?? true {
      var names = UniqueNames(taken: Set(state.customReminders.map(\.reminderName)), maxBytes: stored.nameMaxBytes)
      var items: [ManifestReminder] = []
      for reminder in state.customReminders {
        let path = "reminders.custom[\(items.count)]"
        var item = manifestReminder(reminder, kind: .custom, stored: stored, path: path, origin: origin, diagnostics: &diagnostics)
        let unique = names.claim(reminder.reminderName)
        if unique != reminder.reminderName && !renamingDuplicates {
          diagnostics.append(.error(at: origin, field: path, "the watch holds two custom reminders named \"\(reminder.reminderName)\" (IDs include \(reminder.reminderId)); names must be unique"))
          continue
        }
        if unique != reminder.reminderName {
          item.name = Located(unique, at: origin)
          renamed[unique] = reminder
          diagnostics.append(.warning(at: origin, field: "\(path).name", "the watch holds more than one custom reminder named \"\(reminder.reminderName)\"; the one with ID \(reminder.reminderId) is written as \"\(unique)\" (names identify custom reminders; applying renames it on the watch)"))
        }
        items.append(item)
      }
      reminders.custom = Located(items, at: origin)
    }
    var manifest = Manifest(file: file, reminders: reminders)
    let copies: ContactCopies = other != nil ? .kept : renamingDuplicates ? .dropped : .refused
    if capabilities.contacts.maxContacts > 0, other.map({ $0.contacts != state.contacts }) ?? true {
      manifest.contacts = Located(contacts(state.contacts, path: "contacts", origin: origin, copies: copies, diagnostics: &diagnostics), at: origin)
    }
    if capabilities.contacts.supportsEmergencyContacts, let emergency = state.emergency, other?.emergency != emergency {
      manifest.emergency = ManifestEmergency(
        position: origin, isSosOn: Located(emergency.isSosOn, at: origin),
        contacts: Located(contacts(emergency.contacts, path: "emergency.contacts", origin: origin,
                                   copies: copies, diagnostics: &diagnostics), at: origin))
    }
    return (manifest, diagnostics)
  }

  /// One reminder of a `capabilities` watch as a manifest states it (as in
  /// `manifest(for:capabilities:file:renamingDuplicates:)`); `nil` when the platform does not
  /// store reminders of `kind`. Values outside what a manifest can state are left out.
  public static func reminder(_ reminder: Reminder, kind: ReminderKind, capabilities: DeviceCapabilities) -> ManifestReminder? {
    guard let stored = kind == .custom ? capabilities.reminders.custom : capabilities.reminders[kind] else { return nil }
    var ignored: [Diagnostic] = []
    return manifestReminder(reminder, kind: kind, stored: stored, path: "", origin: SourcePosition(file: "watch", line: 1, column: 1),
                            diagnostics: &ignored)
  }

  /// One contact as a manifest states it (as in `manifest(for:capabilities:file:renamingDuplicates:)`).
  public static func contact(_ contact: Contact) -> ManifestContact {
    let origin = SourcePosition(file: "watch", line: 1, column: 1)
    return ManifestContact(position: origin, path: "", name: Located(contact.name, at: origin),
                           phone: Located(PhoneFormatting.removed(from: contact.phoneNum), at: origin), shortName: contact.shortName ?? "",
                           shortNameIsExplicit: !(contact.shortName ?? "").isEmpty)
  }

  private static func manifestReminder(_ reminder: Reminder, kind: ReminderKind, stored: ReminderKindCapabilities,
                                       path: String, origin: SourcePosition, diagnostics: inout [Diagnostic]) -> ManifestReminder {
    var item = ManifestReminder(kind: kind, position: origin, path: path)
    let at = { (value: String) in Located(value, at: origin) }
    if kind == .custom { item.name = at(reminder.reminderName) }
    item.isEnabled = Located(reminder.isEnabled, at: origin)
    if !(0...RepeatDays.everyday.rawValue).contains(reminder.repeatDays.rawValue) {
      diagnostics.append(.error(at: origin, field: path + ".repeat",
        "the state holds repeatDays \(reminder.repeatDays.rawValue), outside the SDK's 0–127 (Monday = 1 … Sunday = 64); it is left out"))
    } else if stored.storesRepeatDays {
      item.repeatDays = Located(reminder.repeatDays, at: origin)
    }
    if let schedule = schedule(of: reminder, stored: stored) {
      item.schedule = Located(schedule, at: origin)
    } else if stored.timeTypes.contains(reminder.timeType) {
      diagnostics.append(.error(at: origin, field: path, "the watch holds a schedule outside 00:00–23:59 (start \(reminder.startTime), end \(reminder.endTime), timePoints \(reminder.timePoints)); it is left out"))
    }
    switch stored.lunchBreak {
    case .none: break
    case .flagOnly: item.lunchBreak = Located(LunchBreak(isEnabled: reminder.isLunchBreakDNDEnabled), at: origin)
    case .times: item.lunchBreak = Located(lunchBreak(of: reminder), at: origin)
    }
    if stored.notesMaxBytes != nil { item.notes = at(reminder.notes) }
    return item
  }

  private static func schedule(of reminder: Reminder, stored: ReminderKindCapabilities) -> ReminderSchedule? {
    guard stored.timeTypes.contains(reminder.timeType) else { return nil }
    switch reminder.timeType {
    case .point:
      let points = reminder.timePoints.compactMap(MinuteOfDay.init(rawValue:))
      guard points.count == reminder.timePoints.count, !points.isEmpty else { return nil }
      return .timePoints(Array(Set(points)).sorted())
    case .period:
      guard let start = MinuteOfDay(rawValue: reminder.startTime), let end = MinuteOfDay(rawValue: reminder.endTime) else { return nil }
      return .period(start: start, end: end, interval: reminder.interval)
    }
  }

  private static func lunchBreak(of reminder: Reminder) -> LunchBreak {
    guard reminder.isLunchBreakDNDEnabled,
          let start = MinuteOfDay(rawValue: reminder.lunchBreakDNDStartTime),
          let end = MinuteOfDay(rawValue: reminder.lunchBreakDNDEndTime) else {
      return LunchBreak(isEnabled: reminder.isLunchBreakDNDEnabled)
    }
    return LunchBreak(isEnabled: true, window: .init(start: start, end: end))
  }

  /// What becomes of a contact a list holds more than once (the same name and phone).
  private enum ContactCopies {
    /// Left out, with a warning (export: applying it then removes them, which the plan shows).
    case dropped
    /// Left out, as errors (restore: a manifest a person can read cannot state them).
    case refused
    /// Stated again (drift: planned, never read by a person).
    case kept
  }

  /// The contacts of a list; copies as `copies` says. Messages name the contact, never its
  /// phone number.
  private static func contacts(_ contacts: [Contact], path: String, origin: SourcePosition, copies: ContactCopies,
                               diagnostics: inout [Diagnostic]) -> [ManifestContact] {
    var seen: Set<ContactKey> = []
    var result: [ManifestContact] = []
    for contact in contacts {
      let itemPath = "\(path)[\(result.count)]"
      guard copies == .kept || seen.insert(ContactKey(contact)).inserted else {
        let text = "the watch holds the contact \"\(contact.name)\" with the same phone number more than once"
        diagnostics.append(copies == .dropped
          ? .warning(at: origin, field: path, text + "; the manifest lists it once (applying it removes the copies)")
          : .error(at: origin, field: path, text + "; a manifest cannot state duplicates"))
        continue
      }
      if PhoneFormatting.removed(from: contact.phoneNum) != contact.phoneNum {
        diagnostics.append(.warning(at: origin, field: itemPath,
          "the watch holds the contact \"\(contact.name)\" with formatting (spaces, dashes, dots or parentheses) in its phone number; a manifest states a number without it, so applying this writes the number as its digits alone"))
      }
      result.append(ManifestContact(position: origin, path: itemPath, name: Located(contact.name, at: origin),
                                    phone: Located(contact.phoneNum, at: origin), shortName: contact.shortName ?? "",
                                    shortNameIsExplicit: !(contact.shortName ?? "").isEmpty))
    }
    return result
  }
}

/// Hands out custom reminder names that are unique: a name already handed out gets the first
/// free suffix ` (2)`, ` (3)`, …, with the base cut at a grapheme boundary so the result fits
/// `maxBytes` (the platform's name limit, docs/platforms.md "Capacity", "The example app's editor").
struct UniqueNames {
  /// Every name in use (on the watch and handed out).
  var taken: Set<String>
  var maxBytes: Int?
  private var handedOut: Set<String> = []

  init(taken: Set<String>, maxBytes: Int?) {
    self.taken = taken
    self.maxBytes = maxBytes
  }

  /// `name` the first time it is claimed, else a new unique name derived from it.
  mutating func claim(_ name: String) -> String {
    if handedOut.insert(name).inserted { return name }
    var number = 2
    while true {
      let suffix = " (\(number))"
      let base = maxBytes.map { TextTruncation.truncate(name, maxBytes: max(0, $0 - suffix.utf8.count)) } ?? name
      let candidate = base + suffix
      if !taken.contains(candidate), handedOut.insert(candidate).inserted {
        taken.insert(candidate)
        return candidate
      }
      number += 1
    }
  }
}
