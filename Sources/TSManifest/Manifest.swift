import TSModel

/// The desired state of a watch, decoded and validated from a YAML manifest (watch.yaml).
///
/// Sections are opt-in: a section that is `nil` is unmanaged and tsapply never touches it; a
/// section that is present is authoritative for what it covers (the `custom` list is the
/// complete set of custom reminders; an empty `contacts` list means "no contacts"). Inside one
/// reminder, a field that is `nil` keeps whatever the watch has. Every field keeps the position
/// it was read from, so later checks (capabilities at plan time) can point at it.
public struct Manifest: Hashable, Sendable {
  /// The file as the user named it (`-` for standard input).
  public var file: String
  /// Manifest format version; only 1 exists.
  public var version: Int
  /// Reminders section; `nil` when absent (unmanaged).
  public var reminders: ManifestReminders?
  /// Regular contacts; `nil` when absent (unmanaged). The position is the `contacts` key's.
  public var contacts: Located<[ManifestContact]>?
  /// Emergency contacts and SOS; `nil` when absent (unmanaged).
  public var emergency: ManifestEmergency?
  /// The list entries this manifest removes by name (`- {name: Lunch, remove: true}`), in the
  /// order written. They are not in the lists above: in a manifest of its own a removed entry is
  /// simply not wanted (each list is authoritative); in a fleet it also drops the entry of that
  /// name a layer under it gives (docs/fleet.md "The merge rule").
  public var removals: [ManifestRemoval] = []

  /// A manifest read from `file`; every section defaults to `nil` (unmanaged).
  public init(file: String, version: Int = 1, reminders: ManifestReminders? = nil,
              contacts: Located<[ManifestContact]>? = nil, emergency: ManifestEmergency? = nil) {
    self.file = file
    self.version = version
    self.reminders = reminders
    self.contacts = contacts
    self.emergency = emergency
  }
}

/// The `reminders:` section. A built-in left out, or `custom` left out, is unmanaged.
public struct ManifestReminders: Hashable, Sendable {
  /// Position of the `reminders` key.
  public var position: SourcePosition
  /// `sedentary`: the built-in sedentary reminder (ID 0); `nil` leaves it unmanaged.
  public var sedentary: ManifestReminder?
  /// `drinking`: the built-in drink-water reminder (ID 1); `nil` leaves it unmanaged.
  public var drinking: ManifestReminder?
  /// `medicine`: the built-in medicine reminder (ID 2); `nil` leaves it unmanaged.
  public var medicine: ManifestReminder?
  /// The complete set of custom reminders when present (names unique); position of the `custom` key.
  public var custom: Located<[ManifestReminder]>?
  /// `lunch_break` of the section: the lunch break of every reminder here that sets none of its
  /// own, as far as the watch stores one for it (applied at plan time, `ReminderPlanner`;
  /// docs/manifest.md "One lunch break for every reminder").
  public var lunchBreak: Located<LunchBreak>?
  /// Where the section's `lunch_break` keys are written, by path: `lunch_break`, and
  /// `lunch_break.start`, `lunch_break.end` when written (`ManifestReminder.keyPositions`).
  public var lunchBreakKeys: [String: SourcePosition] = [:]

  /// The section at `position`; every reminder defaults to `nil` (unmanaged).
  public init(position: SourcePosition, sedentary: ManifestReminder? = nil, drinking: ManifestReminder? = nil,
              medicine: ManifestReminder? = nil, custom: Located<[ManifestReminder]>? = nil) {
    self.position = position
    self.sedentary = sedentary
    self.drinking = drinking
    self.medicine = medicine
    self.custom = custom
  }

  /// The built-in reminder of `kind`; `nil` for `.custom` or when not managed.
  public subscript(builtIn kind: ReminderKind) -> ManifestReminder? {
    switch kind {
    case .sedentary: sedentary
    case .drinking: drinking
    case .medicine: medicine
    case .custom: nil
    }
  }
}

/// One reminder as the manifest states it. A `nil` field is unmanaged: the watch's value stays.
public struct ManifestReminder: Hashable, Sendable {
  /// Built-in kind, or `.custom`.
  public var kind: ReminderKind
  /// Position of the reminder's mapping (for custom reminders, the list item).
  public var position: SourcePosition
  /// Where the reminder is written: the position of its key (`drinking:`) for a built-in, of its
  /// list item for a custom reminder (`position`). What a plan or `--explain` names for the
  /// reminder as a whole.
  public var keyPosition: SourcePosition
  /// Where each field is written: the position of its key, by its path under the reminder
  /// (`enabled`, `at`, `period`, `period.start`, `lunch_break.end`, …). A block mapping's value
  /// starts on the line after its key, so `period`'s value position is its first key's: plans
  /// and `--explain` name a field by its key's line from here (docs/plan.md "Where a value is
  /// set"). Empty for a reminder not read from a file.
  public var keyPositions: [String: SourcePosition] = [:]
  /// Manifest field path prefix, e.g. `reminders.sedentary` or `reminders.custom[1]`.
  public var path: String
  /// Name (custom reminders: required and unique; at most 32 bytes of UTF-8).
  public var name: Located<String>?
  /// `enabled`; custom reminders default to `true` when created.
  public var isEnabled: Located<Bool>?
  /// `repeat`, as the SDK mask.
  public var repeatDays: Located<RepeatDays>?
  /// `at` (time points) or `period` (start, end, every).
  public var schedule: Located<ReminderSchedule>?
  /// `lunch_break`.
  public var lunchBreak: Located<LunchBreak>?
  /// `notes`, at most 64 bytes of UTF-8.
  public var notes: Located<String>?

  /// A reminder of `kind` read at `position` under field path `path`; fields default to `nil`
  /// (unmanaged: the watch's value stays), `keyPosition` to `position`.
  public init(kind: ReminderKind, position: SourcePosition, path: String, name: Located<String>? = nil,
              isEnabled: Located<Bool>? = nil, repeatDays: Located<RepeatDays>? = nil,
              schedule: Located<ReminderSchedule>? = nil, lunchBreak: Located<LunchBreak>? = nil,
              notes: Located<String>? = nil) {
    self.kind = kind
    self.position = position
    self.keyPosition = position
    self.path = path
    self.name = name
    self.isEnabled = isEnabled
    self.repeatDays = repeatDays
    self.schedule = schedule
    self.lunchBreak = lunchBreak
    self.notes = notes
  }
}

/// One contact as the manifest states it, already normalised to what the watch will store.
///
/// `name` is the stored value (cut to 32 bytes at a grapheme boundary, with a warning, when
/// longer); `phone` has its formatting (spaces, dashes, dots, parentheses) removed; `shortName`
/// is the explicit `short_name` or one derived from the name's first letter.
public struct ManifestContact: Hashable, Sendable {
  /// Position of the contact's list item.
  public var position: SourcePosition
  /// Field path prefix, e.g. `contacts[2]` or `emergency.contacts[0]`.
  public var path: String
  /// Name as the watch will store it.
  public var name: Located<String>
  /// Phone number: ASCII digits with at most one leading '+', 1–20 bytes.
  public var phone: Located<String>
  /// Short name as stored where the platform stores it.
  public var shortName: String
  /// Whether `short_name` was written in the manifest (else derived).
  public var shortNameIsExplicit: Bool
  /// Where `short_name` is written, when it is; `nil` for a derived short name.
  public var shortNamePosition: SourcePosition?
  /// For an emergency contact written as a reference (`- {contact: Ward A desk}`), the name it
  /// refers to, where it is written. Once resolved (`ContactReferences.resolve`), `name`,
  /// `phone` and `shortName` are those of the contact of that name declared under `contacts:`
  /// (with that declaration's positions); before, `name` is the name referred to and `phone` is
  /// empty. `nil` for a contact written out.
  public var reference: Located<String>?

  /// A contact already normalised (name cut, phone stripped, short name derived or explicit).
  public init(position: SourcePosition, path: String, name: Located<String>, phone: Located<String>,
              shortName: String, shortNameIsExplicit: Bool) {
    self.position = position
    self.path = path
    self.name = name
    self.phone = phone
    self.shortName = shortName
    self.shortNameIsExplicit = shortNameIsExplicit
  }
}

/// The `emergency:` section: the SOS switch and the emergency contacts, written together.
public struct ManifestEmergency: Hashable, Sendable {
  /// Position of the `emergency` key.
  public var position: SourcePosition
  /// `sos`; `nil` keeps the watch's switch.
  public var isSosOn: Located<Bool>?
  /// `contacts`; `nil` keeps the watch's list.
  public var contacts: Located<[ManifestContact]>?

  /// The section at `position`; a `nil` part keeps the watch's value.
  public init(position: SourcePosition, isSosOn: Located<Bool>? = nil, contacts: Located<[ManifestContact]>? = nil) {
    self.position = position
    self.isSosOn = isSosOn
    self.contacts = contacts
  }
}

/// An entry a manifest removes by name from one of its lists (`- {name: Lunch, remove: true}`
/// under `reminders.custom`, `contacts` or `emergency.contacts`).
public struct ManifestRemoval: Hashable, Sendable {
  /// The lists an entry can be removed from, by their field paths.
  public enum List: String, Hashable, Sendable, CaseIterable {
    /// `contacts`.
    case contacts = "contacts"
    /// `emergency.contacts`.
    case emergencyContacts = "emergency.contacts"
    /// `reminders.custom`.
    case customReminders = "reminders.custom"
  }

  /// The list it is written in.
  public var list: List
  /// The name of the entry removed, where it is written.
  public var name: Located<String>
  /// Field path of the item, e.g. `contacts[2]`.
  public var path: String

  /// The warnings for lists of `manifest` that hold only removals and nothing under them to remove
  /// from: such a list is empty, so it asks for no entries at all (each list is authoritative) —
  /// every one on the watch would be deleted, which is not what a removal says. `scope` names what
  /// is not under the list (`"this file stands alone"`, `"no layer under it gives this list"`).
  public static func onlyRemovalsWarnings(_ manifest: Manifest, lists: Set<List>, scope: String) -> [Diagnostic] {
    var warnings: [Diagnostic] = []
    for list in List.allCases where lists.contains(list) {
      let written: Located<[String]>?
      switch list {
      case .contacts: written = manifest.contacts.map { Located($0.value.map(\.name.value), at: $0.position) }
      case .emergencyContacts: written = manifest.emergency?.contacts.map { Located($0.value.map(\.name.value), at: $0.position) }
      case .customReminders: written = manifest.reminders?.custom.map { Located($0.value.compactMap { $0.name?.value }, at: $0.position) }
      }
      guard let written, written.value.isEmpty, manifest.removals.contains(where: { $0.list == list }) else { continue }
      let what = list == .customReminders ? "custom reminders" : list == .contacts ? "contacts" : "emergency contacts"
      warnings.append(.warning(at: written.position, field: list.rawValue,
        "holds only removals and \(scope), so it asks for no \(what) at all: every one on the watch will be deleted; list the ones to keep, or leave \(list.rawValue) out to leave them unmanaged"))
    }
    return warnings
  }

  /// The removal of `name` from `list`, written as the item `path`.
  public init(list: List, name: Located<String>, path: String) {
    self.list = list
    self.name = name
    self.path = path
  }
}
