import Foundation
import TSModel

/// Renders a plan as JSON for scripts and CI (`tsapply plan --json`).
///
/// Top-level keys (sorted): `counts` `{add, change, destroy}` plus, for each contact list that
/// changes, `contacts` / `emergency_contacts` `{added, removed, renamed, changed}`, `device` (the watch's identity,
/// when known), `format_version`, `manifest`, `prior_state_digest`, `profile`,
/// `resource_changes`, `resource_drift` (changes made on the watch outside tsapply since the
/// last apply, same shape), `safety_findings` (`{kind, message, unsafe}` per destructive
/// change, see `SafetyFinding`), `unsafe` (whether the safety gate refuses an unattended apply
/// of this plan), `warnings`. Each resource change has
/// `address`, `actions` (e.g. `["create"]`), `before` and `after` (whole values with SDK field
/// names; `null` when absent), `changed` (changed field names, in order), `fields`
/// (`{field, before, after, manifest_path, source}` per change: the SDK field, its values, the
/// manifest path that asks for it, e.g. `reminders.custom[2].repeat`, and where the manifest sets
/// it, `{file, line, column}`, `null` for drift; a paired contact has both values) and, for contact lists,
/// `contact_counts` `{added, removed, renamed, changed}`. Warnings are in the one diagnostic shape
/// of `validate --json` (`JSONValue(diagnostic:file:)`: `{severity, file, line, column, field,
/// message}`, every key present). Keys are sorted at every level, so output is stable. With `redact`, every
/// `phoneNum` and every phone in a message is masked (`PhoneRedaction`).
public enum JSONPlanRenderer {
  /// Pretty-printed JSON, ending with a newline.
  public static func render(_ plan: Plan, redact: Bool, fingerprints: PhoneFingerprints? = nil) -> String {
    JSONValue.object(object(plan, redact: redact, fingerprints: fingerprints)).encoded() + "\n"
  }

  /// The plan's top-level JSON object (for documents that embed a plan: the drift report, a
  /// fleet's report). With `redact` and `fingerprints`, an object holding a masked `phoneNum`
  /// also holds `phoneNum_fingerprint` (`PhoneFingerprints.fingerprint`).
  public static func object(_ plan: Plan, redact: Bool, fingerprints: PhoneFingerprints? = nil) -> [String: JSONValue] {
    let phones = redact ? PhoneRedaction.numbers(in: plan) : []
    let counts = plan.counts
    var root: [String: JSONValue] = [
      "format_version": .string(plan.formatVersion),
      "manifest": .string(plan.manifestFile),
      "profile": .string(plan.profile),
      "prior_state_digest": .string(plan.priorStateDigest),
      "counts": .object(["add": .integer(counts.add), "change": .integer(counts.change), "destroy": .integer(counts.destroy)]
        .merging(plan.listCounts.map { ($0.list.replacingOccurrences(of: " ", with: "_"), countsJSON($0.counts)) }) { a, _ in a }),
      "resource_changes": .array(plan.resourceChanges.map(resourceChange)),
      "resource_drift": .array(plan.resourceDrift.map(resourceChange)),
      "warnings": .array(plan.warnings.map { warning($0, plan: plan, phones: phones, redact: redact) }),
      "unsafe": .bool(!plan.unsafeFindings.isEmpty),
      "safety_findings": .array(safetyFindings(for: plan).map { finding in
        .object(["kind": .string(finding.kind), "message": .string(finding.description), "unsafe": .bool(finding.isUnsafe)])
      }),
    ]
    if let device = plan.device { root["device"] = .string(device) }
    if redact {
      let known = PhoneRedaction.KnownPhones(phones)
      root = root.mapValues { $0.redactingPhones(known: known, fingerprints: fingerprints) }
    }
    return root
  }

  static func resourceChange(_ change: ResourceChange) -> JSONValue {
    var changed: [String] = []
    for field in change.fields where !changed.contains(field.field) { changed.append(field.field) }
    var object: [String: JSONValue] = [
      "address": .string(change.address.rawValue),
      "actions": .array([.string(change.action.rawValue)]),
      "before": change.before.map(JSONValue.init(encoding:)) ?? .null,
      "after": change.after.map(JSONValue.init(encoding:)) ?? .null,
      "changed": .array(changed.map(JSONValue.string)),
      "fields": .array(change.fields.map { field in
        .object(["field": .string(field.field),
                 "before": field.before.map(JSONValue.init) ?? .null,
                 "after": field.after.map(JSONValue.init) ?? .null,
                 "manifest_path": field.manifestPath.map(JSONValue.string) ?? .null,
                 "source": field.source.map(JSONValue.init(position:)) ?? .null])
      }),
    ]
    if changed.contains("contacts") { object["contact_counts"] = countsJSON(ContactCounts(change.fields)) }
    return .object(object)
  }

  private static func countsJSON(_ counts: ContactCounts) -> JSONValue {
    .object(["added": .integer(counts.added), "removed": .integer(counts.removed),
             "renamed": .integer(counts.renamed), "changed": .integer(counts.changed)])
  }

  /// A warning in the one diagnostic shape (`JSONValue(diagnostic:file:)`), its message masked
  /// with `redact`.
  private static func warning(_ diagnostic: Diagnostic, plan: Plan, phones: Set<String>, redact: Bool) -> JSONValue {
    var masked = diagnostic
    if redact { masked.message = PhoneRedaction.redactText(diagnostic.message, phones: phones) }
    return JSONValue(diagnostic: masked, file: plan.manifestFile)
  }
}

/// Plan values as JSON (`JSONValue`, TSModel), encoded with sorted keys.
extension JSONValue {
  /// A field value (object keys keep their names; JSON sorts them).
  init(_ value: FieldValue) {
    switch value {
    case .string(let text): self = .string(text)
    case .integer(let number): self = .integer(number)
    case .bool(let flag): self = .bool(flag)
    case .list(let items): self = .array(items.map(JSONValue.init))
    case .object(let entries): self = .object(Dictionary(entries.map { ($0.key, JSONValue($0.value)) }) { a, _ in a })
    }
  }

  /// A resource value with the SDK field names of its `Codable` form, built directly (the
  /// monitor renders a thousand contact lists at start; `JSONEncoder` and back cost ten times
  /// more). A contact without a `shortName` has no such key, as `Codable` omits it.
  init(encoding value: ResourceValue) {
    switch value {
    case .reminder(let reminder): self = JSONValue(reminder)
    case .contacts(let contacts): self = .array(contacts.map(JSONValue.init))
    case .emergency(let emergency):
      self = .object(["contacts": .array(emergency.contacts.map(JSONValue.init)), "isSosOn": .bool(emergency.isSosOn)])
    }
  }

  /// A watch state as its `Codable` form: `contacts`, `reminders` and, when the watch has
  /// emergency support, `emergency`.
  init(_ state: DeviceState) {
    var object: [String: JSONValue] = ["contacts": .array(state.contacts.map(JSONValue.init)),
                                       "reminders": .array(state.reminders.map(JSONValue.init))]
    if let emergency = state.emergency { object["emergency"] = JSONValue(encoding: .emergency(emergency)) }
    self = .object(object)
  }

  /// A contact: `name`, `phoneNum` and, when it has one, `shortName`.
  init(_ contact: Contact) {
    var object: [String: JSONValue] = ["name": .string(contact.name), "phoneNum": .string(contact.phoneNum)]
    if let shortName = contact.shortName { object["shortName"] = .string(shortName) }
    self = .object(object)
  }

  /// A reminder, field for field (enums and the repeat-day mask as their raw integers).
  init(_ reminder: Reminder) {
    self = .object([
      "reminderId": .string(reminder.reminderId),
      "reminderName": .string(reminder.reminderName),
      "isEnabled": .bool(reminder.isEnabled),
      "reminderType": .integer(reminder.reminderType.rawValue),
      "repeatDays": .integer(reminder.repeatDays.rawValue),
      "timeType": .integer(reminder.timeType.rawValue),
      "startTime": .integer(reminder.startTime),
      "endTime": .integer(reminder.endTime),
      "interval": .integer(reminder.interval),
      "timePoints": .array(reminder.timePoints.map(JSONValue.integer)),
      "notes": .string(reminder.notes),
      "isLunchBreakDNDEnabled": .bool(reminder.isLunchBreakDNDEnabled),
      "lunchBreakDNDStartTime": .integer(reminder.lunchBreakDNDStartTime),
      "lunchBreakDNDEndTime": .integer(reminder.lunchBreakDNDEndTime),
    ])
  }

  /// Every string under a `phoneNum` key masked (`PhoneRedaction.redact`), and in text that
  /// comes from the manifest or the watch (`userTextKeys`: names, notes, addresses, field values,
  /// messages, and the strings of lists under them) the `known` numbers masked by their digits
  /// and phone-like runs masked (`PhoneRedaction.redactPhoneLike`), so a number written into a
  /// name or a note is masked too.
  /// With `fingerprints`, an object with a `phoneNum` also gets its `phoneNum_fingerprint`.
  func redactingPhones(known: PhoneRedaction.KnownPhones = PhoneRedaction.KnownPhones([String]()),
                       fingerprints: PhoneFingerprints? = nil) -> JSONValue {
    redactingPhones(known: known, userText: false, fingerprints: fingerprints)
  }

  private func redactingPhones(known: PhoneRedaction.KnownPhones, userText: Bool, fingerprints: PhoneFingerprints?) -> JSONValue {
    switch self {
    case .string(let text) where userText: return .string(PhoneRedaction.redactPhoneLike(known.redact(text)))
    case .array(let items): return .array(items.map { $0.redactingPhones(known: known, userText: userText, fingerprints: fingerprints) })
    case .object(let entries):
      var object = Dictionary(uniqueKeysWithValues: entries.map { key, value in
        if key == "phoneNum", case .string(let phone) = value { return (key, JSONValue.string(PhoneRedaction.redact(phone))) }
        return (key, value.redactingPhones(known: known, userText: userTextKeys.contains(key), fingerprints: fingerprints))
      })
      if let fingerprints, case .string(let phone)? = entries["phoneNum"] {
        object["phoneNum_fingerprint"] = .string(fingerprints.fingerprint(phone))
      }
      return .object(object)
    default: return self
    }
  }

  /// Pretty-printed with sorted keys and unescaped slashes.
  func encoded() -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    guard let data = try? encoder.encode(self) else { return "null" }
    return String(decoding: data, as: UTF8.self)
  }
}

/// The JSON keys whose string values are text from the manifest or the watch, masked as free
/// text with `--redact` (digests, identities and file names are not).
private let userTextKeys: Set<String> = ["address", "addresses", "reminderName", "notes", "name", "shortName", "before",
                                         "after", "message"]
