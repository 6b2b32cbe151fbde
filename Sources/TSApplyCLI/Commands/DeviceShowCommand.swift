import TSDevice
import TSModel
import TSPlan

/// `tsapply device show [--json] [--redact]`: the simulated watch's whole state.
struct DeviceShowCommand: Command {
  static let name = "show"
  static let abstract = "Print the simulated watch's whole state."
  static let usage = "[--json] [--redact] [--device SPEC]"
  static let options: [OptionSpec] = [
    OptionSpec(["--json"], help: "Print the state file's JSON (profile, reminders, contacts, emergency, journal)."),
    OptionSpec(["--redact"], help: "Mask phone numbers (all but the last two digits), contacts and journal alike."),
    DeviceOption.simulatedSpec,
  ]
  let json: Bool
  let redact: Bool
  let device: String?

  init(_ arguments: ParsedArguments) throws(UsageError) {
    guard arguments.positionals.isEmpty else { throw UsageError("unexpected argument '\(arguments.positionals[0])'") }
    json = arguments.has("--json")
    redact = arguments.has("--redact")
    device = DeviceOption.value(in: arguments)
  }

  func run(_ context: CommandContext) async throws -> ExitStatus {
    let device = try DeviceOption.openSimulated(device, in: context)
    let stored = try device.snapshot()
    let watch = redact ? WatchText.redacted(stored) : stored
    if json {
      context.stdout.write(String(decoding: try watch.jsonData(), as: UTF8.self))
    } else {
      let profile = try PlatformProfile.named(watch.profile)
      context.stdout.write(WatchText.render(watch, profile: profile, path: device.path ?? "(in memory)"))
    }
    return .success
  }
}

/// The human form of a simulated watch's state, for `tsapply device show`. Text the watch holds
/// (names, notes, phones, short names) has its control characters escaped (`ControlCharacters`).
enum WatchText {
  static func render(_ watch: SimulatedWatch, profile: PlatformProfile, path: String) -> String {
    var lines = ["Simulated watch: \(path)", "Profile: \(profile.name) (\(profile.capabilities.summary))", ""]
    lines.append("Reminders (\(watch.reminders.count)):")
    lines += watch.reminders.map { "  " + reminder($0) }
    lines.append("")
    if profile.capabilities.contacts.maxContacts > 0 {
      lines.append("Contacts (\(watch.contacts.count) of \(profile.capabilities.contacts.maxContacts)):")
      lines += watch.contacts.isEmpty ? ["  (none)"] : watch.contacts.map { "  " + contact($0) }
    } else {
      lines.append("Contacts: not supported on this platform")
    }
    lines.append("")
    lines.append("Emergency contacts (\(watch.emergency.contacts.count) of \(profile.capabilities.contacts.maxEmergencyContacts)), SOS \(watch.emergency.isSosOn ? "on" : "off"):")
    lines += watch.emergency.contacts.isEmpty ? ["  (none)"] : watch.emergency.contacts.map { "  " + contact($0) }
    lines.append("")
    if let last = watch.journal.last {
      lines.append("Watch-side changes: \(watch.lastSequence) (latest #\(last.sequence): \(last.kind.rawValue))")
    } else {
      lines.append("Watch-side changes: none")
    }
    return lines.joined(separator: "\n") + "\n"
  }

  /// `watch` with every phone number (contacts, emergency contacts, journal entries) masked by
  /// `PhoneRedaction.redact(_:)` (all digits but the last two become `*`), and names, short
  /// names and notes masked as free text (`PhoneRedaction.Mask.text`): a number written into a
  /// name or a note is masked too, as in every other output of `--redact`.
  static func redacted(_ watch: SimulatedWatch) -> SimulatedWatch {
    let everyContact = watch.contacts + watch.emergency.contacts + watch.journal.flatMap { $0.contacts ?? [] }
    let free = PhoneRedaction.Mask(redact: true, numbers: everyContact.map(\.phoneNum))
    func mask(_ contacts: [Contact]) -> [Contact] {
      contacts.map { contact in
        var masked = contact
        masked.name = free.text(contact.name)
        masked.shortName = contact.shortName.map(free.text)
        masked.phoneNum = PhoneRedaction.redact(contact.phoneNum)
        return masked
      }
    }
    var result = watch
    result.contacts = mask(watch.contacts)
    result.emergency.contacts = mask(watch.emergency.contacts)
    for index in result.reminders.indices {
      result.reminders[index].reminderName = free.text(watch.reminders[index].reminderName)
      result.reminders[index].notes = free.text(watch.reminders[index].notes)
    }
    for index in result.journal.indices {
      result.journal[index].contacts = result.journal[index].contacts.map(mask)
    }
    return result
  }

  static func reminder(_ r: Reminder) -> String {
    let kind = r.kind?.rawValue ?? "unknown"
    var text = "\(r.reminderId.padding(toLength: 3, withPad: " ", startingAt: 0)) \(kind.padding(toLength: 9, withPad: " ", startingAt: 0)) \(r.isEnabled ? "on " : "off")"
    text += " \"\(ControlCharacters.escaped(r.reminderName))\" \(r.repeatDays)"
    switch r.timeType {
    case .period: text += " \(time(r.startTime))–\(time(r.endTime)) every \(r.interval)m"
    case .point: text += " at " + r.timePoints.map(time).joined(separator: ", ")
    }
    if r.isLunchBreakDNDEnabled {
      text += " lunch break " + (r.lunchBreakDNDStartTime == 0 && r.lunchBreakDNDEndTime == 0
        ? "on" : "\(time(r.lunchBreakDNDStartTime))–\(time(r.lunchBreakDNDEndTime))")
    }
    if !r.notes.isEmpty { text += " notes: \"\(ControlCharacters.escaped(r.notes))\"" }
    return text
  }

  static func contact(_ c: Contact) -> String {
    var text = "\(ControlCharacters.escaped(c.name))  \(ControlCharacters.escaped(c.phoneNum))"
    if let short = c.shortName, !short.isEmpty { text += "  [\(ControlCharacters.escaped(short))]" }
    return text
  }

  /// "HH:MM" for 0...1439; the raw number with "min" otherwise (a watch may hold odd values).
  static func time(_ minutes: Int) -> String {
    MinuteOfDay(rawValue: minutes)?.description ?? "\(minutes)min"
  }
}
