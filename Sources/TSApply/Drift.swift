import Foundation
import TSManifest
import TSModel
import TSPlan

/// Drift: what changed on the watch outside tsapply (on the watch itself, or from another tool)
/// since the last successful apply.
///
/// Computed with the planner, so it compares exactly what plans compare: the current state,
/// stated as a manifest (`StateManifest`), is planned against the state the last apply left. The
/// resulting changes have `before` = last applied and `after` = now. Pure.
public enum Drift {
  /// The drifted resources; empty when the watch still holds what the last apply left. No
  /// manifest asked for them, so their fields have no manifest path and no source.
  public static func changes(since lastApplied: DeviceState, current: DeviceState,
                             capabilities: DeviceCapabilities) -> [ResourceChange] {
    guard lastApplied != current else { return [] }
    // Planned whatever a manifest's checks say of the watch's values (notes or a phone past a
    // manifest's limits): they are what the watch holds, and an error must not hide the rest
    // (fresh-eyes fe99 #1: SOS switched off was "No drift").
    let (manifest, renamed) = StateManifest.drift(current, differingFrom: lastApplied, capabilities: capabilities)
    let changes = Planner.changes(manifest, state: lastApplied, capabilities: capabilities).map { planned in
      var change = planned.withoutOrigins
      // A second reminder of one name, stated under a name of its own: named as the plan names
      // it, and as the watch holds it.
      guard !renamed.isEmpty, change.action == .create,
            let reminder = renamed.first(where: { ResourceAddress.custom($0.key) == change.address })?.value else { return change }
      change.address = .customDuplicate(reminder.reminderName, reminderId: reminder.reminderId)
      change.after = .reminder(reminder)
      change.fields = change.fields.map { field in
        field.field == "reminderName" ? FieldChange(field: field.field, before: field.before, after: .string(reminder.reminderName)) : field
      }
      return change
    }
    // Such a reminder held in the record too is deleted (by ID) and created again (under its
    // own name) by the plan: one update of it, or nothing when it did not change.
    guard !renamed.isEmpty else { return changes }
    let both = Set(changes.filter { $0.action == .delete }.map(\.address)).intersection(changes.filter { $0.action == .create }.map(\.address))
    guard !both.isEmpty else { return changes }
    return changes.compactMap { change in
      guard both.contains(change.address) else { return change }
      guard change.action == .create, case .reminder(let after)? = change.after,
            case .reminder(let before)? = changes.first(where: { $0.address == change.address && $0.action == .delete })?.before else { return nil }
      return .reminderUpdate(change.address, from: before, to: after)
    }
  }

  /// `manifest` planned against `state`, with the drift since `record` (what tsapply last left
  /// on the watch) listed before the plan's actions (`Plan.resourceDrift`), named in the
  /// manifest's words as its actions are (`Manifest.naming(_:capabilities:)`).
  public static func plan(_ manifest: Manifest, state: DeviceState, since record: LastApplied?,
                          capabilities: DeviceCapabilities) -> PlanResult {
    var result = Planner.plan(manifest, state: state, capabilities: capabilities)
    if let record, record.state != state {
      result.plan?.resourceDrift = manifest.naming(changes(since: record, current: state, capabilities: capabilities), capabilities: capabilities)
    }
    return result
  }

  /// What the last apply left, as `current` (the watch now) shows it: `record.state`, or —
  /// when the record holds a write whose outcome is unknown (`LastApplied.unconfirmed`: an apply
  /// killed or cut off after it) and the watch holds what that write would have left in every
  /// resource it changes — that write's state. Drift already counts such a landed write as
  /// tsapply's (`changes(since:current:capabilities:)`); what is planned "as the last apply
  /// left it" must too, or it undoes the write (a monitor's heal holding a rollout back).
  public static func left(by record: LastApplied, current: DeviceState, capabilities: DeviceCapabilities) -> DeviceState {
    guard let unconfirmed = record.unconfirmed else { return record.state }
    let written = Set(changes(since: record.state, current: unconfirmed, capabilities: capabilities).map(\.address))
    guard !written.isEmpty else { return record.state }
    let differing = Set(changes(since: unconfirmed, current: current, capabilities: capabilities).map(\.address))
    return written.isDisjoint(with: differing) ? unconfirmed : record.state
  }

  /// What an apply that has not finished (or stopped part-way) leaves as "what tsapply last left"
  /// on the watch: `holds` — the state its plan was made from (`planned`) with its writes so far
  /// in it — for each part the apply wrote (a reminder by ID, the contacts, the emergency list),
  /// and what the last apply left (`recorded`) for every part it did not write. A change made on
  /// the watch before this apply therefore stays drift until an apply writes over it and finishes:
  /// a heal or an apply that fails before it writes that part does not make it "what tsapply
  /// left" (docs/apply.md "The last-applied record"). Without a record, `holds`.
  public static func left(holding holds: DeviceState, plannedFrom planned: DeviceState, recorded: DeviceState?) -> DeviceState {
    guard let recorded else { return holds }
    var left = recorded
    if holds.contacts != planned.contacts { left.contacts = holds.contacts }
    if holds.emergency != planned.emergency { left.emergency = holds.emergency }
    if holds.reminders != planned.reminders {
      let before = Dictionary(planned.reminders.map { ($0.reminderId, $0) }) { first, _ in first }
      let after = Set(holds.reminders.map(\.reminderId))
      // Deleted by this apply: gone from the record too.
      left.reminders.removeAll { before[$0.reminderId] != nil && !after.contains($0.reminderId) }
      for reminder in holds.reminders where before[reminder.reminderId] != reminder {
        // Written (changed or created) by this apply: as written.
        if let index = left.reminders.firstIndex(where: { $0.reminderId == reminder.reminderId }) {
          left.reminders[index] = reminder
        } else {
          left.reminders.append(reminder)
        }
      }
    }
    return left
  }

  /// What an apply whose read-back (`read`) does not give what it planned leaves as its record:
  /// the contacts and the emergency list as it wrote them (`wrote`, from the state its plan was
  /// made from, `planned`) where they read back otherwise — changed on the watch while it wrote
  /// — and as the last apply left them (`recorded`) where it did not write them; so a wearer's
  /// change made during the apply is drift, not tsapply's own write (docs/apply.md "The
  /// last-applied record"). Reminders as read back: the watch assigns their IDs.
  public static func recorded(readBack read: DeviceState, wrote: DeviceState, plannedFrom planned: DeviceState,
                              recorded: DeviceState?) -> DeviceState {
    var state = read
    if wrote.contacts != planned.contacts {
      if read.contacts != wrote.contacts { state.contacts = wrote.contacts }
    } else if let recorded {
      state.contacts = recorded.contacts
    }
    if wrote.emergency != planned.emergency {
      if read.emergency != wrote.emergency { state.emergency = wrote.emergency }
    } else if let recorded {
      state.emergency = recorded.emergency
    }
    return state
  }

  /// The resources changed since `record`: those that differ from the recorded state and, when
  /// the record holds a write whose outcome is unknown (`LastApplied.unconfirmed`), from the
  /// state that write would have left too. A resource holding what tsapply wrote is never drift;
  /// one that differs from both is said against the nearer of the two.
  public static func changes(since record: LastApplied, current: DeviceState,
                             capabilities: DeviceCapabilities) -> [ResourceChange] {
    let drift = changes(since: record.state, current: current, capabilities: capabilities)
    guard let unconfirmed = record.unconfirmed, !drift.isEmpty else { return drift }
    let fromUnconfirmed = Dictionary(changes(since: unconfirmed, current: current, capabilities: capabilities).map { ($0.address, $0) }) { a, _ in a }
    // Changed since both: said against the nearer of the two (fewer field changes; the state
    // before the write when as near), so a write that landed is not shown as the wearer's.
    return drift.compactMap { change in
      guard let other = fromUnconfirmed[change.address] else { return nil }
      return other.fields.count < change.fields.count ? other : change
    }
  }
}

/// What tsapply last left on one watch, kept so the next plan can show drift. Written before
/// each write of an apply (with the write as `unconfirmed`), after it, and refreshed by an apply
/// that finds nothing to change, so drift never reports tsapply's own writes.
///
/// Stored as JSON in the watch's state folder (`last-applied.json`, mode 0600: it holds
/// contacts; the engine's `WatchHome` keeps one folder per watch identity).
public struct LastApplied: Hashable, Codable, Sendable {
  /// Version of the last-applied record's format.
  public static let currentFormatVersion = 1

  /// `format_version` in JSON; always `currentFormatVersion` when written.
  public var formatVersion: Int
  /// The device the state belongs to (e.g. `sim:/abs/path/.tsapply/device.json`).
  public var device: String
  /// Platform profile; a record from another platform is ignored.
  public var profile: String
  /// What tsapply last left on the watch: the state read back after its last apply or, when an
  /// apply stopped part-way (or died), the state the plan was made from with every write that
  /// reached the watch in it.
  public var state: DeviceState
  /// The state the watch holds if a write whose answer never came (a lost answer that could not
  /// be read back, or a process killed during the call) landed; `nil` when every write tsapply
  /// sent is accounted for in `state`. Drift compares with both (`Drift.changes(since:current:capabilities:)`).
  public var unconfirmed: DeviceState?
  /// When tsapply last wrote to the watch (ISO 8601 UTC with milliseconds, as the apply history
  /// writes times): set by an apply that writes,
  /// kept when an apply that finds nothing to change refreshes the record, so it is what
  /// `status --fleet` shows as "Last applied". `nil` in a record written before tsapply kept it,
  /// and in one first written by an apply that found nothing to change.
  public var appliedAt: String?

  /// The record of `state` on the `profile` watch named `device`, with `unconfirmed` when the
  /// outcome of the last write is unknown and `appliedAt` when tsapply last wrote to it.
  public init(device: String, profile: String, state: DeviceState, unconfirmed: DeviceState? = nil, appliedAt: String? = nil) {
    self.formatVersion = Self.currentFormatVersion
    self.device = device
    self.profile = profile
    self.state = state
    self.unconfirmed = unconfirmed
    self.appliedAt = appliedAt
  }

  enum CodingKeys: String, CodingKey {
    case formatVersion = "format_version", device, profile, state, unconfirmed, appliedAt = "applied_at"
  }

  /// The record at `path` for `device`, or `nil` when there is none or it cannot be used
  /// (another format or device): drift is a courtesy, never a reason to fail a plan.
  public static func read(at path: String, device: String) -> LastApplied? {
    (try? load(at: path, device: device)) ?? nil
  }

  /// The record at `path` for `device`; `nil` only when there is no file. `tsapply drift`
  /// uses this: asked for drift on purpose, a record that exists but cannot be used is an
  /// error, not a silent "no record" (a cron check would report "no drift" forever).
  /// - Throws: `LastAppliedError` when the file cannot be read, is not a last-applied record
  ///   (the field in plain words, `DecodingProblem`), is of another format version, or was
  ///   recorded for another device.
  public static func load(at path: String, device: String) throws(LastAppliedError) -> LastApplied? {
    let data: Data
    switch ManifestSource.file(path: path, displayName: path).read(maxBytes: ManifestSource.maxRecordBytes, noun: "last-applied record") {
    case .success(let bytes): data = Data(bytes)
    case .failure(let error) where error.reason == .notFound: return nil
    case .failure(let error): throw LastAppliedError(path: path, reason: error.explanation)
    }
    let record: LastApplied
    do {
      record = try RecordFile.decode(LastApplied.self, from: data, currentVersion: currentFormatVersion, kind: "last-applied record")
    } catch {
      throw LastAppliedError(path: path, reason: error.reason)
    }
    guard record.device == device else {
      throw LastAppliedError(path: path, reason: "it was recorded for \(record.device), not \(device)")
    }
    return record
  }

  /// Writes the record to `path` (0600), replacing the previous one; fsynced unless it holds an
  /// `unconfirmed` write (written before each write of an apply, and replaced moments later).
  public func write(to path: String) throws(SecureFileError) {
    try SecureFile.write(Array(canonicalJSON(self).utf8), to: path, durable: unconfirmed == nil)
  }
}

/// A last-applied record that exists but cannot be used (`LastApplied.load`).
public struct LastAppliedError: Error, Hashable, Sendable, CustomStringConvertible {
  /// The record's path.
  public var path: String
  /// What is wrong, in plain words.
  public var reason: String

  /// The refusal of the record at `path` for `reason`.
  public init(path: String, reason: String) {
    self.path = path
    self.reason = reason
  }

  /// `the last-applied record PATH cannot be used: REASON; …` with what to do.
  public var description: String {
    "the last-applied record \(path) cannot be used: \(reason); drift cannot be told from it. "
      + "Remove it and run 'tsapply apply' to record the watch again"
  }
}

/// Reading the record without `JSONDecoder` when it is in the form tsapply writes (`JSONReader`;
/// `RecordFile` falls back to `JSONDecoder` for anything else).
extension LastApplied: VersionedRecord {
  public init(json reader: inout JSONReader) throws(JSONReader.Miss) {
    var formatVersion: Int?, device: String?, profile: String?, state: DeviceState?, unconfirmed: DeviceState?, appliedAt: String?
    try reader.object { (key, reader) throws(JSONReader.Miss) in
      switch key {
      case "format_version": try reader.field(&formatVersion)
      case "device": try reader.field(&device)
      case "profile": try reader.field(&profile)
      case "state": try reader.field(&state)
      case "unconfirmed": try reader.field(&unconfirmed)
      case "applied_at": try reader.field(&appliedAt)
      default: throw JSONReader.Miss()
      }
    }
    guard let formatVersion, let device, let profile, let state else { throw JSONReader.Miss() }
    self.formatVersion = formatVersion
    self.device = device
    self.profile = profile
    self.state = state
    self.unconfirmed = unconfirmed
    self.appliedAt = appliedAt
  }
}
