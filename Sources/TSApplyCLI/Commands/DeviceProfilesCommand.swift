import Foundation
import TSDevice
import TSModel

/// `tsapply device profiles [--json]`: every platform profile with its capabilities.
struct DeviceProfilesCommand: Command {
  static let name = "profiles"
  static let abstract = "List the simulated watch's platform profiles and their capabilities."
  static let usage = "[--json | --markdown]"
  static let discussion = "The profiles are the platform table every part of tsapply uses (docs/platforms.md)."
  static let options: [OptionSpec] = [
    OptionSpec(["--json"], help: "Print the capabilities as JSON."),
    OptionSpec(["--markdown"], help: "Print the platform table as Markdown (as in docs/platforms.md)."),
  ]
  let json: Bool
  let markdown: Bool

  init(_ arguments: ParsedArguments) throws(UsageError) {
    guard arguments.positionals.isEmpty else { throw UsageError("unexpected argument '\(arguments.positionals[0])'") }
    json = arguments.has("--json")
    markdown = arguments.has("--markdown")
    if json && markdown { throw UsageError("--json and --markdown exclude each other") }
  }

  func run(_ context: CommandContext) async throws -> ExitStatus {
    let capabilities = PlatformProfile.all.map(\.capabilities)
    if markdown {
      context.stdout.write(PlatformTable.markdownTable(capabilities))
    } else if json {
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
      context.stdout.write(String(decoding: try encoder.encode(capabilities), as: UTF8.self) + "\n")
    } else {
      context.stdout.write(capabilities.map(ProfileText.render).joined(separator: "\n"))
    }
    return .success
  }
}

/// The human form of a profile's capabilities.
enum ProfileText {
  static func render(_ caps: DeviceCapabilities) -> String {
    let r = caps.reminders, c = caps.contacts
    var lines = ["\(caps.profile): \(caps.summary)"]
    lines.append("  reminder operations: \(ReminderOperation.allCases.filter(r.operations.contains).map(\.rawValue).joined(separator: ", "))")
    lines.append("  custom reminders: \(r.maxCustomReminders == 0 ? "none" : "up to \(r.maxCustomReminders)"); time points: up to \(r.maxTimePoints); once (repeat 0): \(yes(r.supportsOnce))")
    for kind in ReminderKind.allCases {
      lines.append("  \(kind.rawValue): " + (r[kind].map(storage) ?? "not on this watch"))
    }
    lines.append("  contacts: " + (c.maxContacts == 0 ? "not supported" : "up to \(c.maxContacts)")
      + "; name \(c.nameMaxBytes) bytes, phone \(c.phoneMaxBytes) bytes; shortName stored: \(yes(c.storesShortName))")
    lines.append("  emergency contacts: " + (c.supportsEmergencyContacts ? "up to \(c.maxEmergencyContacts), with the SOS switch" : "not supported"))
    lines.append("  listeners: contacts changed \(yes(c.contactsChangedListener)), emergency changed \(yes(c.emergencyContactsChangedListener)), SOS request \(yes(c.sosRequestListener))")
    return lines.joined(separator: "\n") + "\n"
  }

  private static func storage(_ k: ReminderKindCapabilities) -> String {
    let schedules = ReminderTimeType.allCases.filter(k.timeTypes.contains).map { $0 == .period ? "period" : "time points" }
    let cut = k.truncatesLongText ? " (longer is cut)" : ""
    let name = k.nameMaxBytes.map { "name \($0) bytes\(cut)" } ?? "name not stored"
    let notes = k.notesMaxBytes.map { "notes \($0) bytes\(cut)" } ?? "notes not stored"
    let lunch = ["none": "no lunch break", "flagOnly": "lunch break on/off only", "times": "lunch break with times"][k.lunchBreak.rawValue] ?? ""
    return "\(schedules.joined(separator: " or ")); repeat days \(k.storesRepeatDays ? "stored" : "always every day"); \(name); \(notes); \(lunch)"
  }

  private static func yes(_ value: Bool) -> String { value ? "yes" : "no" }
}
