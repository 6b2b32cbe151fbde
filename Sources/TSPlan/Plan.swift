import TSModel

/// The changes that make a watch match a manifest: data, rendered separately as text or JSON and
/// executed by TSApply.
///
/// Made by the pure planner from (Manifest, DeviceState, DeviceCapabilities). Resource changes are
/// sorted by address. A plan with no resource changes means the watch already matches.
public struct Plan: Hashable, Codable, Sendable {
  /// Version of the plan's JSON form; adding fields does not change it (Terraform's rule).
  /// docs/plan.md "Format versions" lists what each version brought (2: each field change's
  /// `manifest_path` and `source`).
  public static let currentFormatVersion = "2"

  /// `format_version` in JSON.
  public var formatVersion: String
  /// The manifest file as named on the command line.
  public var manifestFile: String
  /// Platform profile of the watch the plan was made for (e.g. `npk`).
  public var profile: String
  /// Identity of the watch the plan was made for (`Device.identity`, e.g.
  /// `sim:/abs/.tsapply/device.json`), shown in the plan's header; `nil` when not known.
  public var device: String?
  /// SHA-256 of the watch state the plan was made from (canonical JSON of `DeviceState`),
  /// computed on first read for a plan made from a state (`init(…priorState:…)`).
  @DeferredDigest public var priorStateDigest: String
  /// Changes, sorted by address.
  public var resourceChanges: [ResourceChange]
  /// Warnings found while planning (e.g. a name the watch will cut). Errors never reach a plan.
  public var warnings: [Diagnostic]
  /// Drift: changes made on the watch outside tsapply since the last apply, each with `before` =
  /// what the last apply left and `after` = what the watch holds now (Terraform's
  /// `resource_drift`). Informational: the plan's own changes already account for it.
  public var resourceDrift: [ResourceChange] = []

  /// A plan for the manifest `manifestFile` and a `profile` watch whose state hashes to
  /// `priorStateDigest`; `resourceChanges` are sorted by address, `resourceDrift` starts empty.
  public init(manifestFile: String, profile: String, priorStateDigest: String,
              resourceChanges: [ResourceChange], warnings: [Diagnostic] = []) {
    self.init(manifestFile: manifestFile, profile: profile, digest: DeferredDigest(wrappedValue: priorStateDigest),
              resourceChanges: resourceChanges, warnings: warnings)
  }

  /// A plan made from the watch state `priorState`: `priorStateDigest` is its fingerprint,
  /// computed when first read.
  public init(manifestFile: String, profile: String, priorState: DeviceState,
              resourceChanges: [ResourceChange], warnings: [Diagnostic] = []) {
    self.init(manifestFile: manifestFile, profile: profile, digest: DeferredDigest(of: priorState),
              resourceChanges: resourceChanges, warnings: warnings)
  }

  private init(manifestFile: String, profile: String, digest: DeferredDigest,
               resourceChanges: [ResourceChange], warnings: [Diagnostic]) {
    self.formatVersion = Self.currentFormatVersion
    self.manifestFile = manifestFile
    self.profile = profile
    _priorStateDigest = digest
    self.resourceChanges = resourceChanges.sorted { $0.address < $1.address }
    self.warnings = warnings
  }

  /// True when nothing would change.
  public var isEmpty: Bool { resourceChanges.isEmpty }
}

/// What happens to one resource.
public enum Action: String, Hashable, Codable, Sendable {
  /// A new resource is written (`+`).
  case create
  /// An existing resource is rewritten with changed fields (`~`).
  case update
  /// The resource is removed from the watch (`-`).
  case delete

  /// Terraform's symbol: `+` create, `~` update, `-` delete.
  public var symbol: String {
    switch self {
    case .create: "+"
    case .update: "~"
    case .delete: "-"
    }
  }
}

/// A stable resource address, e.g. `reminder.sedentary`, `reminder.custom["Evening walk"]`,
/// `contacts`, `emergency`. Used in output, JSON and saved plans.
public struct ResourceAddress: Hashable, Codable, Sendable, Comparable, CustomStringConvertible {
  /// The address text.
  public var rawValue: String
  public init(rawValue: String) { self.rawValue = rawValue }

  /// A built-in reminder: `reminder.sedentary`, `reminder.drinking`, `reminder.medicine`.
  public static func builtIn(_ kind: ReminderKind) -> ResourceAddress { ResourceAddress(rawValue: "reminder.\(kind.rawValue)") }
  /// A custom reminder by name: `reminder.custom["Evening walk"]` (quotes and backslashes escaped).
  public static func custom(_ name: String) -> ResourceAddress {
    var escaped = ""
    for character in name {
      if character == "\\" || character == "\"" { escaped.append("\\") }
      escaped.append(character)
    }
    return ResourceAddress(rawValue: "reminder.custom[\"\(escaped)\"]")
  }
  /// The regular contact list.
  public static let contacts = ResourceAddress(rawValue: "contacts")
  /// The emergency contacts and the SOS switch.
  public static let emergency = ResourceAddress(rawValue: "emergency")

  /// A second custom reminder on the watch with the same name as one already matched, told apart
  /// by its device ID: `reminder.custom["Walk"]#33`. Only ever deleted.
  public static func customDuplicate(_ name: String, reminderId: String) -> ResourceAddress {
    ResourceAddress(rawValue: custom(name).rawValue + "#" + reminderId)
  }

  /// Whether this is a custom reminder's address (`custom`, `customDuplicate`).
  public var isCustomReminder: Bool { rawValue.hasPrefix("reminder.custom") }
  public var description: String { rawValue }
  public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

/// One resource's change: action, the fields that change, and the whole values before and after.
///
/// | action | before | after |
/// |---|---|---|
/// | create | nil | the value to write (custom reminder: `reminderId` empty, assigned by the template call) |
/// | update | the watch's value | the value to write |
/// | delete | the watch's value | nil |
public struct ResourceChange: Hashable, Codable, Sendable {
  /// The resource that changes, e.g. `reminder.sedentary`.
  public var address: ResourceAddress
  /// Create, update or delete.
  public var action: Action
  /// Only the fields that change, in a fixed order per resource kind.
  public var fields: [FieldChange]
  /// The resource as the watch holds it now.
  public var before: ResourceValue?
  /// The resource as it will be written.
  public var after: ResourceValue?
  /// For reminders: the manifest fields to overlay, the same overlay that made `after`.
  /// A custom-reminder create overlays it onto the device's template (`ReminderPatch.applying(to:)`);
  /// `nil` for deletes, contacts and emergency.
  public var patch: ReminderPatch?

  /// A change; `patch` only for reminder creates and updates.
  public init(address: ResourceAddress, action: Action, fields: [FieldChange],
              before: ResourceValue?, after: ResourceValue?, patch: ReminderPatch? = nil) {
    self.address = address
    self.action = action
    self.fields = fields
    self.before = before
    self.after = after
    self.patch = patch
  }
}

extension ResourceChange {
  /// The change with no manifest path and no source on its fields: what drift holds (no
  /// manifest asked for it) and what a plan of format version 1 held.
  public var withoutOrigins: ResourceChange {
    var change = self
    change.fields = fields.map { FieldChange(field: $0.field, before: $0.before, after: $0.after) }
    return change
  }

  /// Whether this change alters whom an SOS press reaches: a change of the emergency list's SOS
  /// switch (`isSosOn`) or of the numbers it holds (one added, removed or renumbered), or an
  /// emergency list whose value is not known on both sides. A change of a name or a `shortName`
  /// only, or of the list's order, leaves every press reaching the same numbers: drift, not "SOS
  /// at risk" (docs/monitor.md "Alerts"). The numbers are compared as a multiset, as the planner
  /// compares the list (`EmergencyPlanner`): an alert no apply could end would never recover.
  public var putsSOSAtRisk: Bool {
    guard address == .emergency else { return false }
    guard case .emergency(let was)? = before, case .emergency(let now)? = after else { return true }
    return was.isSosOn != now.isSosOn || was.contacts.map(\.phoneNum).sorted() != now.contacts.map(\.phoneNum).sorted()
  }
}

extension Sequence<ResourceChange> {
  /// Whether any of these changes alters whom an SOS press reaches (`ResourceChange.putsSOSAtRisk`).
  public var putSOSAtRisk: Bool { contains(where: \.putsSOSAtRisk) }
}

extension ResourceAddress {
  /// Whether drift at `addresses` (`ResourceAddress` text) is taken to put SOS at risk when only
  /// the addresses are known (an agent or a monitor older than `sos_at_risk`): the emergency
  /// list among them.
  public static func mayPutSOSAtRisk(_ addresses: [String]) -> Bool { addresses.contains(emergency.rawValue) }
}

/// A resource's whole value, as written to or read from the watch.
public enum ResourceValue: Hashable, Codable, Sendable {
  /// One reminder (built-in or custom).
  case reminder(Reminder)
  /// The whole regular contact list, in watch order.
  case contacts([Contact])
  /// The emergency contacts and the SOS switch.
  case emergency(EmergencyContacts)
}

/// One field that changes, with SDK field names (`repeatDays`, `timePoints`, `isSosOn`, …), the
/// manifest path that asks for it and where the manifest sets it.
public struct FieldChange: Hashable, Codable, Sendable {
  /// Field name, e.g. `repeatDays`, or for contacts the contact it concerns.
  public var field: String
  /// Value before; `nil` when the field is being added.
  public var before: FieldValue?
  /// Value after; `nil` when the field is being removed.
  public var after: FieldValue?
  /// The manifest path of what asks for the change, in the manifest's keys:
  /// `reminders.custom[2].repeat`, `reminders.drinking.period.every`, `contacts[1]`,
  /// `emergency.sos`; for something the manifest leaves out (a reminder or a contact it does
  /// not list), the list that leaves it out (`reminders.custom`, `contacts`). `nil` for drift
  /// and for changes made before format version 2.
  public var manifestPath: String?
  /// Where the manifest sets the value: the position of the key's value (a fleet's layer file
  /// when a layer set it), else of the entry or list that leaves it out. `nil` for drift.
  public var source: SourcePosition?

  /// A change of `field` from `before` to `after` (`nil` = absent), asked for at `manifestPath`,
  /// set at `source`.
  public init(field: String, before: FieldValue?, after: FieldValue?, manifestPath: String? = nil,
              source: SourcePosition? = nil) {
    self.field = field
    self.before = before
    self.after = after
    self.manifestPath = manifestPath
    self.source = source
  }
}

/// A JSON-like value shown in a plan: what a field holds before or after.
public indirect enum FieldValue: Hashable, Codable, Sendable {
  /// Text (names, notes, phone numbers).
  case string(String)
  /// A number (e.g. the `repeatDays` mask, times in minutes since midnight, `interval` in minutes).
  case integer(Int)
  /// A switch (e.g. `isEnabled`, `isSosOn`).
  case bool(Bool)
  /// Values in order (e.g. `timePoints`).
  case list([FieldValue])
  /// Keys in the order given (rendered in that order).
  case object([KeyValue])

  /// One entry of an `object`.
  public struct KeyValue: Hashable, Codable, Sendable {
    /// The entry's key, e.g. `name` or `phoneNum`.
    public var key: String
    /// The entry's value.
    public var value: FieldValue
    /// An entry `key`: `value`.
    public init(_ key: String, _ value: FieldValue) {
      self.key = key
      self.value = value
    }
  }
}

/// How many resources a plan adds, changes and destroys (Terraform's summary counts): creates
/// count as add, updates as change, deletes as destroy. `contacts` and `emergency` are single
/// resources, so a contact list change counts as one change.
public struct PlanCounts: Hashable, Codable, Sendable {
  /// Creates (custom reminders; built-ins are never created).
  public var add: Int
  /// Updates, including each changed contact list.
  public var change: Int
  /// Deletes (custom reminders only).
  public var destroy: Int

  /// Counts as given.
  public init(add: Int, change: Int, destroy: Int) {
    self.add = add
    self.change = change
    self.destroy = destroy
  }

  /// None.
  public static let zero = PlanCounts(add: 0, change: 0, destroy: 0)

  /// Every change counted: `add + change + destroy`.
  public var total: Int { add + change + destroy }

  /// Both counted together, action by action (an unattended retry's changes over all its
  /// attempts at one revision: docs/fleet.md "What an agent does").
  public static func + (lhs: PlanCounts, rhs: PlanCounts) -> PlanCounts {
    PlanCounts(add: lhs.add + rhs.add, change: lhs.change + rhs.change, destroy: lhs.destroy + rhs.destroy)
  }

  /// Action by action, the larger of these and `other`: a revision's changes when an earlier
  /// attempt planned these and what it reached is not known (a killed agent), and the attempt
  /// that finished it made `other` (docs/fleet.md "What an agent does").
  public func atLeast(_ other: PlanCounts) -> PlanCounts {
    PlanCounts(add: max(add, other.add), change: max(change, other.change), destroy: max(destroy, other.destroy))
  }

  /// Action by action, the smaller of these and `other`: what earlier attempts reached and what
  /// the last one changed, counted once where the last one wrote again what an earlier one
  /// wrote (the wearer undid part of it meanwhile), bounded by the larger of the plans.
  public func atMost(_ other: PlanCounts) -> PlanCounts {
    PlanCounts(add: min(add, other.add), change: min(change, other.change), destroy: min(destroy, other.destroy))
  }
}

extension Plan {
  /// The contact-list items behind the resource counts: per list resource that changes
  /// (`contacts` as "contacts", `emergency` as "emergency contacts"), its added, removed,
  /// renamed and changed contacts. Lists whose contacts do not change (SOS only) are left out.
  public var listCounts: [(list: String, counts: ContactCounts)] {
    resourceChanges.compactMap { change in
      let counts = ContactCounts(change.fields)
      guard !counts.isEmpty else { return nil }
      return (change.address == .emergency ? "emergency contacts" : "contacts", counts)
    }
  }

  /// The summary counts of this plan.
  public var counts: PlanCounts {
    PlanCounts(add: resourceChanges.filter { $0.action == .create }.count,
               change: resourceChanges.filter { $0.action == .update }.count,
               destroy: resourceChanges.filter { $0.action == .delete }.count)
  }
}

extension Plan {
  /// The resources of `drift` (changes made on the watch since the last apply) that this plan,
  /// made against the watch, changes back: a field both change (a reminder's `enabled`, the
  /// emergency list's `sos`), or a contact both touch (same name or number, as `ContactDiff`
  /// pairs them); a resource created or deleted on either side counts whole. A drifted resource
  /// the plan changes elsewhere only (the manifest's own edit: a contact it adds, a reminder's
  /// times) is not undone: the wearer's change stays. Sorted. The one rule for what applying
  /// undoes: the plan's words, refusals, records and agents' statuses all use it.
  public func undoing(_ drift: [ResourceChange]) -> [ResourceAddress] {
    let drifted = Dictionary(drift.map { ($0.address, $0) }) { first, _ in first }
    return resourceChanges.compactMap { change -> ResourceAddress? in
      guard let wearer = drifted[change.address] else { return nil }
      let planned = Set(change.fields.flatMap(\.touched)), changed = Set(wearer.fields.flatMap(\.touched))
      let whole = change.action != .update || wearer.action != .update || planned.isEmpty || changed.isEmpty
      return whole || !planned.isDisjoint(with: changed) ? change.address : nil
    }.sorted()
  }
}

extension Plan {
  /// The fields of `drift` (one resource changed on the watch since the last apply) this plan
  /// leaves as the watch has them: none when it undoes the whole change (`undoing`), every one
  /// when it does not change the resource, else those it does not touch (the manifest changes a
  /// reminder's times, the wearer switched it off: `isEnabled` stays).
  public func leaves(_ drift: ResourceChange) -> [FieldChange] {
    guard let change = resourceChanges.first(where: { $0.address == drift.address }) else { return drift.fields }
    let planned = Set(change.fields.flatMap(\.touched))
    if change.action != .update || drift.action != .update || planned.isEmpty { return [] }
    return drift.fields.filter { Set($0.touched).isDisjoint(with: planned) }
  }

  /// `drift` split by what applying this plan does to it: `undone`, each resource it changes
  /// back (`undoing`) with the fields it changes back, and `kept`, each resource it leaves in
  /// whole or in part with the fields it leaves (`leaves`). A resource undone in part is in both
  /// (the apply removed the emergency contact the wearer added and left the short name the
  /// wearer emptied: "1 added" undone, "1 changed" kept).
  public func splitting(_ drift: [ResourceChange]) -> (undone: [ResourceChange], kept: [ResourceChange]) {
    let undone = Set(undoing(drift))
    var back: [ResourceChange] = [], left: [ResourceChange] = []
    for change in drift {
      guard undone.contains(change.address) else { left.append(change); continue }
      let leftFields = leaves(change)
      guard !leftFields.isEmpty else { back.append(change); continue }
      var part = change
      part.fields = change.fields.filter { !leftFields.contains($0) }
      back.append(part)
      part.fields = leftFields
      left.append(part)
    }
    return (back, left)
  }
}

extension FieldChange {
  /// What this change touches: its field, or for a list entry (a contact: an object value) the
  /// entry's name and number before and after.
  var touched: [String] {
    let entries = [before, after].compactMap { value -> [FieldValue.KeyValue]? in
      guard case .object(let entries)? = value else { return nil }
      return entries
    }
    guard !entries.isEmpty else { return [field] }
    return entries.flatMap { $0 }.compactMap { entry in
      guard entry.key == "name" || entry.key == "phoneNum", case .string(let text) = entry.value else { return nil }
      return "\(field) \(entry.key) \(text)"
    }
  }
}
