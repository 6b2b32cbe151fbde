import TSDevice
import TSModel
import TSPlan

/// `tsapply device show [--json] [--redact]`: the watch's whole state — a simulated watch's
/// from its state file, any other watch's (`bridge:`) as one `readState` reads it.
struct DeviceShowCommand: Command {
  static let name = "show"
  static let abstract = "Print the watch's whole state."
  static let usage = "[--json] [--redact] [--device SPEC]"
  static let options: [OptionSpec] = [
    OptionSpec(["--json"], help: "Print JSON: a simulated watch's state file (profile, reminders, contacts, emergency, journal); another watch's device, profile and lists."),
    OptionSpec(["--redact"], help: "Mask phone numbers (all but the last two digits), contacts and journal alike."),
    DeviceOption.spec,
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

  /// `--json` for a watch that is not simulated: the watch as read, with the device it was read from.
  struct ReadWatch: Encodable {
    /// The device's identity, `bridge:BRIDGE-ID/WATCH-ID`.
    var device: String
    /// Its platform profile's name.
    var profile: String
    var reminders: [Reminder]
    var contacts: [Contact]
    /// `null` when the watch has no emergency support.
    var emergency: EmergencyContacts?
  }

  func run(_ context: CommandContext) async throws -> ExitStatus {
    let device: SimulatedDevice
    switch try await DeviceOption.open(self.device, in: context) {
    case .simulated(let simulated): device = simulated
    case .other(let watch):
      let read: Result<(DeviceCapabilities, DeviceState), DeviceError>
      do throws(DeviceError) {
        let capabilities = try await watch.capabilities()
        read = .success((capabilities, try await watch.readState(capabilities: capabilities)))
      } catch {
        read = .failure(error)
      }
      await watch.close()
      let (capabilities, state) = try read.get()
      let shown = redact ? WatchText.redacted(state) : state
      context.stdout.write(json
        ? canonicalJSON(ReadWatch(device: watch.identity, profile: capabilities.profile, reminders: shown.reminders,
                                  contacts: shown.contacts, emergency: shown.emergency))
        : WatchText.render(shown, capabilities: capabilities, heading: "Watch: \(watch.identity)"))
      return .success
    }
    let stored = try device.snapshot()
    let watch = redact ? WatchText.redacted(stored) : stored
    if json {
      context.stdout.write(String(decoding: try watch.jsonData(), as: UTF8.self))
    } else {
      // What the simulator makes of the profile (`TSAPPLY_SIM_NO_EMERGENCY_CONTACTS`: a watch
      // without emergency contacts), as every other command sees the watch.
      let capabilities = try await device.capabilities()
      context.stdout.write(WatchText.render(watch, capabilities: capabilities, path: device.path ?? "(in memory)"))
    }
    return .success
  }
}

/// The human form of a simulated watch's state, for `tsapply device show`. Text the watch holds
/// (names, notes, phones, short names) has its control characters escaped (`ControlCharacters`).
enum WatchText {
  static func render(_ watch: SimulatedWatch, capabilities: DeviceCapabilities, path: String) -> String {
    let emergency = capabilities.contacts.supportsEmergencyContacts ? watch.emergency : nil
    var lines = sections(heading: "Simulated watch: \(path)", capabilities: capabilities,
                      state: DeviceState(reminders: watch.reminders, contacts: watch.contacts, emergency: emergency))
    if let last = watch.journal.last {
      lines.append("Watch-side changes: \(watch.lastSequence) (latest #\(last.sequence): \(last.kind.rawValue))")
    } else {
      lines.append("Watch-side changes: none")
    }
    return lines.joined(separator: "\n") + "\n"
  }

  /// A watch that is not simulated (`bridge:`) as `readState` read it, in the same form; no
  /// journal (the watch keeps none that the `Device` interface reads).
  static func render(_ state: DeviceState, capabilities: DeviceCapabilities, heading: String) -> String {
    sections(heading: heading, capabilities: capabilities, state: state).dropLast().joined(separator: "\n") + "\n"
  }

  /// The lines every watch shows: heading, profile, reminders, contacts, emergency contacts
  /// (or that the watch has none), each section followed by an empty line.
  private static func sections(heading: String, capabilities: DeviceCapabilities, state: DeviceState) -> [String] {
    var lines = [heading, "Profile: \(capabilities.profile) (\(capabilities.summary))", ""]
    lines.append("Reminders (\(state.reminders.count)):")
    lines += state.reminders.map { "  " + reminder($0) }
    lines.append("")
    if capabilities.contacts.maxContacts > 0 {
      lines.append("Contacts (\(state.contacts.count) of \(capabilities.contacts.maxContacts)):")
      lines += state.contacts.isEmpty ? ["  (none)"] : state.contacts.map { "  " + contact($0) }
    } else {
      lines.append("Contacts: not supported on this platform")
    }
    lines.append("")
    if let emergency = state.emergency {
      lines.append("Emergency contacts (\(emergency.contacts.count) of \(capabilities.contacts.maxEmergencyContacts)), SOS \(emergency.isSosOn ? "on" : "off"):")
      lines += emergency.contacts.isEmpty ? ["  (none)"] : emergency.contacts.map { "  " + contact($0) }
    } else {
      lines.append("Emergency contacts: not supported on this watch")
    }
    lines.append("")
    return lines
  }

  /// `watch` with every phone number (contacts, emergency contacts, journal entries) masked by
  /// `PhoneRedaction.redact(_:)` (all digits but the last two become `*`), and names, short
  /// names and notes masked as free text (`PhoneRedaction.Mask.text`): a number written into a
  /// name or a note is masked too, as in every other output of `--redact`.
  static func redacted(_ watch: SimulatedWatch) -> SimulatedWatch {
    let free = mask(numbers: watch.contacts + watch.emergency.contacts + watch.journal.flatMap { $0.contacts ?? [] })
    var result = watch
    result.contacts = mask(watch.contacts, free)
    result.emergency.contacts = mask(watch.emergency.contacts, free)
    result.reminders = mask(watch.reminders, free)
    for index in result.journal.indices {
      result.journal[index].contacts = result.journal[index].contacts.map { mask($0, free) }
    }
    return result
  }

  /// `state` (a watch that is not simulated, as read) masked as `redacted(_:)` masks a simulated watch.
  static func redacted(_ state: DeviceState) -> DeviceState {
    let free = mask(numbers: state.contacts + (state.emergency?.contacts ?? []))
    var result = state
    result.contacts = mask(state.contacts, free)
    result.emergency?.contacts = mask(state.emergency?.contacts ?? [], free)
    result.reminders = mask(state.reminders, free)
    return result
  }

  /// The free-text mask of `--redact` knowing the phone numbers of `contacts`.
  private static func mask(numbers contacts: [Contact]) -> PhoneRedaction.Mask {
    PhoneRedaction.Mask(redact: true, numbers: contacts.map(\.phoneNum))
  }

  /// `contacts` with names and short names masked as free text and phone numbers redacted.
  private static func mask(_ contacts: [Contact], _ free: PhoneRedaction.Mask) -> [Contact] {
    contacts.map { contact in
      var masked = contact
      masked.name = free.text(contact.name)
      masked.shortName = contact.shortName.map(free.text)
      masked.phoneNum = PhoneRedaction.redact(contact.phoneNum)
      return masked
    }
  }

  /// `reminders` with names and notes masked as free text.
  private static func mask(_ reminders: [Reminder], _ free: PhoneRedaction.Mask) -> [Reminder] {
    reminders.map { reminder in
      var masked = reminder
      masked.reminderName = free.text(reminder.reminderName)
      masked.notes = free.text(reminder.notes)
      return masked
    }
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
