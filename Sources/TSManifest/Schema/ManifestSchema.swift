import Foundation
import TSModel

/// The JSON Schema (draft 2020-12) of the manifest, format version 1, for editors (the YAML
/// language server shows the descriptions as hover help and flags what the schema rejects).
///
/// Built from the constants the validator uses (`MinuteOfDay.range`, `TimePointsRule.maxCount`,
/// `ReminderTextRule`, `PhoneNumberRule`, `RepeatDays.presets`, the decoder's key lists), so the
/// schema and `tsapply validate` agree on every rule the schema can express. Rules it cannot
/// express stay with the validator, which is authoritative: period start before end and `every`
/// at most end − start, lunch-break start before end, unique custom names and (name, phone)
/// pairs, byte limits of non-ASCII text (maxLength counts characters), the same time or day
/// written two ways, and YAML details (quoted booleans, `0630`).
public enum ManifestSchema {
  /// The JSON Schema dialect the schema declares.
  public static let dialect = "https://json-schema.org/draft/2020-12/schema"

  /// The schema as a value.
  public static var schema: JSONSchema {
    var root = object(
      title: "tsapply manifest (watch.yaml), format version \(ManifestDecoder.currentVersion)",
      description: "What a TopStep watch should hold. Sections are opt-in: a section left out is unmanaged; a section written is authoritative. See docs/manifest.md.",
      keys: ManifestDecoder.rootKeys, properties: rootProperties)
    root.schemaDialect = dialect
    root.defs = scalarDefinitions.merging(["reminder": reminder, "contact": contact, "removal": removal,
                                           "contactReference": contactReference]) { first, _ in first }
    return root
  }

  /// The schema as JSON text: pretty-printed, keys sorted, ending with a newline.
  public static func json() -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    // Encoding a tree of strings, numbers and booleans cannot fail.
    guard let data = try? encoder.encode(schema) else { return "{}\n" }
    return String(decoding: data, as: UTF8.self) + "\n"
  }

  /// An object schema with exactly `keys` (the decoder's list for that mapping): unknown keys are
  /// refused, as the validator refuses them.
  static func object(title: String? = nil, description: String, keys: [String],
                     properties: [String: JSONSchema], required: [String]? = nil) -> JSONSchema {
    var schema = JSONSchema(type: [.object], description: description)
    schema.title = title
    schema.properties = properties.filter { keys.contains($0.key) }
    schema.required = required
    schema.additionalProperties = false
    return schema
  }

  static var rootProperties: [String: JSONSchema] {
    var version = JSONSchema(type: [.integer], description: "The manifest format version; optional, and only \(ManifestDecoder.currentVersion) exists.")
    version.const = .integer(ManifestDecoder.currentVersion)
    return [
      "version": version,
      "reminders": reminders,
      "contacts": contactList("The watch's contacts; the complete list (contacts: [] removes them all). Leave the key out to leave contacts unmanaged."),
      "emergency": emergency,
    ]
  }

  static var reminders: JSONSchema {
    var custom = JSONSchema(type: [.array], description: "The complete set of custom reminders: the watch's custom reminders not listed here are deleted (custom: [] deletes them all). Names identify them and must be unique.")
    var item = JSONSchema.reference("reminder", description: "A custom reminder; name is required.")
    item.required = ["name"]
    var either = JSONSchema(description: "A custom reminder, or the removal of one of that name ({name, remove: true}).")
    either.anyOf = [item, .reference("removal", description: "Removes the custom reminder of this name (in a fleet, one a layer gives).")]
    custom.items = either
    custom.uniqueItems = true
    var lunch = lunchBreak
    lunch.description = "The lunch break of every reminder here that sets none of its own (as far as the watch stores one for it): false, true or {start, end}."
    var properties: [String: JSONSchema] = ["custom": custom, "lunch_break": lunch]
    for kind in ReminderKind.builtIns {
      properties[kind.rawValue] = .reference("reminder",
        description: "The built-in \(kind.rawValue) reminder (never deleted). Fields left out keep the watch's values.")
    }
    return object(description: "Reminders: the three built-ins and the custom list. A reminder left out is unmanaged.",
                  keys: ManifestDecoder.reminderSectionKeys, properties: properties)
  }

  static var reminder: JSONSchema {
    var at = JSONSchema(type: [.array], description: "Time points: 1–\(TimePointsRule.maxCount) times, no time twice; held sorted. Use period or at, not both.")
    at.items = .reference("time", description: "A time point.")
    at.minItems = 1
    at.maxItems = TimePointsRule.maxCount
    at.uniqueItems = true
    var enabled = JSONSchema(type: [.boolean], description: "Whether the reminder is on: true or false (yes/no/on/off are errors).")
    enabled.examples = [.bool(true), .bool(false)]
    var schema = object(description: "A reminder. Every field is optional: a field left out keeps the watch's value.",
      keys: ManifestDecoder.reminderKeys, properties: [
        "name": text("The reminder's name: non-empty; required for custom reminders, which it identifies.",
                     minLength: 1, maxBytes: ReminderTextRule.maxNameBytes),
        "enabled": enabled,
        "repeat": .reference("repeat", description: "The days the reminder repeats on: everyday, workday, weekend, once, a day name, or a list such as [mon, wed, fri]."),
        "period": period,
        "at": at,
        "lunch_break": lunchBreak,
        "notes": text("Notes shown with the reminder.", maxBytes: ReminderTextRule.maxNotesBytes),
      ])
    var both = JSONSchema()
    both.required = ["period", "at"]
    schema.not = both
    return schema
  }

  static var period: JSONSchema {
    object(description: "Fire every `every` from start to end on the same day: start before end (no crossing midnight), 1 ≤ every ≤ end − start. Use period or at, not both.",
      keys: ManifestDecoder.periodKeys, properties: [
        "start": .reference("time", description: "When the period starts (before end)."),
        "end": .reference("time", description: "When the period ends (after start; a period cannot cross midnight)."),
        "every": .reference("duration", description: "How often it fires, e.g. 60m, 2h, 1h30m, or minutes."),
      ], required: ManifestDecoder.periodKeys)
  }

  static var lunchBreak: JSONSchema {
    let off = JSONSchema(type: [.boolean], description: "false: lunch-break do-not-disturb off; true: on, keeping the watch's times.")
    let window = object(description: "Lunch-break do-not-disturb on, from start to end (start before end).",
      keys: ManifestDecoder.lunchBreakKeys, properties: [
        "start": .reference("time", description: "When the lunch break starts."),
        "end": .reference("time", description: "When the lunch break ends (after start)."),
      ], required: ManifestDecoder.lunchBreakKeys)
    var schema = JSONSchema(description: "Lunch-break do-not-disturb: false (off), true (on, keeping the watch's times) or {start, end}.")
    schema.anyOf = [off, window]
    return schema
  }

  static var contact: JSONSchema {
    object(description: "A contact: name and phone are required.", keys: ManifestDecoder.contactKeys, properties: [
      "name": text("The contact's name, non-empty. The watch stores at most \(ContactNameRule.maxBytes) bytes of UTF-8; a longer name is stored cut at a character boundary, with a warning.", minLength: 1),
      "phone": .reference("phone", description: "The phone number, e.g. \"+1 555 0100\": digits, one leading '+', formatting removed."),
      "short_name": text("The index letter the watch sorts by; non-empty. Left out, it is derived from the name's first letter (李明 → L, Émile → E).", minLength: 1),
    ], required: ["name", "phone"])
  }

  static func contactList(_ description: String, referencesContacts: Bool = false) -> JSONSchema {
    var schema = JSONSchema(type: [.array], description: description)
    var item = JSONSchema(description: referencesContacts
      ? "A contact ({name, phone}, optionally short_name), a reference to one declared under contacts ({contact: NAME}), or the removal of one ({name, remove: true})."
      : "A contact ({name, phone}, optionally short_name), or the removal of one ({name, remove: true}).")
    item.anyOf = [.reference("contact", description: "A contact: {name, phone}, optionally short_name."),
                  .reference("removal", description: "Removes the contact of this name (in a fleet, one a layer gives).")]
    if referencesContacts {
      item.anyOf?.append(.reference("contactReference", description: "The contact of this name declared under contacts: (in a fleet, by any layer)."))
    }
    schema.items = item
    schema.uniqueItems = true
    return schema
  }

  /// `{name, remove: true}`: removes the entry of that name (docs/manifest.md "Removing an inherited entry").
  static var removal: JSONSchema {
    var isTrue = JSONSchema(type: [.boolean], description: "true: the entry of this name is removed.")
    isTrue.const = .bool(true)
    return object(description: "The removal of the entry of this name: in a fleet, drops the entry a layer under this manifest gives; in a manifest of its own, the entry is simply not wanted.",
                  keys: ["name", "remove"], properties: [
                    "name": text("The name of the entry removed.", minLength: 1),
                    "remove": isTrue,
                  ], required: ["name", "remove"])
  }

  /// `{contact: NAME}`: an emergency contact that is a contact of `contacts:` (docs/manifest.md "One contact in both lists").
  static var contactReference: JSONSchema {
    object(description: "The contact of this name declared under contacts: (its name, phone and short name), so one edit changes both lists.",
           keys: ["contact"], properties: ["contact": text("The name of a contact declared under contacts: (in a fleet, by any of the watch's manifests).", minLength: 1)],
           required: ["contact"])
  }

  static var emergency: JSONSchema {
    var sos = JSONSchema(type: [.boolean], description: "The SOS switch; true needs at least one emergency contact.")
    sos.examples = [.bool(true), .bool(false)]
    var schema = object(description: "Emergency contacts and the SOS switch, written to the watch together. How many emergency contacts the watch holds is checked at plan time.",
      keys: ManifestDecoder.emergencyKeys, properties: [
        "sos": sos,
        "contacts": contactList("The emergency contacts: the complete list (same rules as contacts).", referencesContacts: true),
      ])
    var sosOn = JSONSchema()
    var isTrue = JSONSchema()
    isTrue.const = .bool(true)
    sosOn.properties = ["sos": isTrue]
    sosOn.required = ["sos"]
    var needsContacts = JSONSchema()
    var nonEmpty = JSONSchema(description: "With sos: true, at least one emergency contact.")
    nonEmpty.minItems = 1
    needsContacts.properties = ["contacts": nonEmpty]
    needsContacts.required = ["contacts"]
    schema.if = sosOn
    schema.then = needsContacts
    return schema
  }
}
