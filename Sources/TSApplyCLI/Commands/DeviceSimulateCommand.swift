import TSDevice
import TSModel

/// `tsapply device simulate ACTION …`: a change made on the watch itself (for drift and listeners).
struct DeviceSimulateCommand: Command {
  static let name = "simulate"
  static let abstract = "Simulate a change made on the watch itself."
  static let usage = "contact-add NAME PHONE [SHORT] | contact-remove NAME | reminder-toggle ID | sos | emergency-set NAME PHONE [NAME PHONE ...] | emergency-clear"
  static let discussion = """
    Changes are written to the simulated watch and its journal; 'tsapply device listen' and the
    listeners of a running tsapply see them. 'emergency-set' also turns SOS on; 'emergency-clear'
    empties the list and turns SOS off, as the watch's own SOS switch does.
    """
  static let options: [OptionSpec] = [DeviceOption.simulatedSpec]
  /// The actions, as the first positional argument names them.
  static let actions = ["contact-add", "contact-remove", "reminder-toggle", "sos", "emergency-set", "emergency-clear"]
  static let positionals: CompletionValues = .words(actions)

  enum Action: Equatable {
    case contactAdd(Contact)
    case contactRemove(String)
    case reminderToggle(String)
    case sos
    case emergencySet([Contact])
    case emergencyClear
  }

  let action: Action
  let device: String?

  init(_ arguments: ParsedArguments) throws(UsageError) {
    device = DeviceOption.value(in: arguments)
    let words = arguments.positionals
    guard let verb = words.first else { throw UsageError("missing action: \(Self.usage)") }
    let rest = Array(words.dropFirst())
    switch (verb, rest.count) {
    case ("contact-add", 2), ("contact-add", 3):
      action = .contactAdd(Contact(name: rest[0], phoneNum: rest[1], shortName: rest.count == 3 ? rest[2] : nil))
    case ("contact-remove", 1): action = .contactRemove(rest[0])
    case ("reminder-toggle", 1): action = .reminderToggle(rest[0])
    case ("sos", 0): action = .sos
    case ("emergency-clear", 0): action = .emergencyClear
    case ("emergency-set", let n) where n >= 2 && n % 2 == 0:
      action = .emergencySet(stride(from: 0, to: n, by: 2).map { Contact(name: rest[$0], phoneNum: rest[$0 + 1]) })
    default:
      guard Self.actions.contains(verb) else {
        var message = "unknown action '\(verb)'"
        if let suggestion = closestMatch(to: verb, in: Self.actions) { message += "; did you mean '\(suggestion)'?" }
        throw UsageError(message)
      }
      throw UsageError("wrong arguments for '\(verb)': \(rest.count) given")
    }
  }

  func run(_ context: CommandContext) async throws -> ExitStatus {
    let watch = try DeviceOption.openSimulated(device, in: context)
    let done: String
    switch action {
    case .contactAdd(let contact):
      try watch.simulateContactAdd(contact)
      done = "added contact '\(ControlCharacters.escaped(contact.name))'"
    case .contactRemove(let name):
      let removed = try watch.simulateContactRemove(name: name)
      done = removed == 1 ? "removed contact '\(ControlCharacters.escaped(name))'"
        : "removed \(removed) contacts named '\(ControlCharacters.escaped(name))'"
    case .reminderToggle(let id):
      let enabled = try watch.simulateReminderToggle(id: id)
      done = "switched reminder \(ControlCharacters.escaped(id)) \(enabled ? "on" : "off")"
    case .sos:
      try watch.simulateSOSPress()
      done = "pressed SOS"
    case .emergencySet(let contacts):
      try watch.simulateEmergencyChange(contacts: contacts, sosOn: true)
      done = "set \(contacts.count) emergency contact\(contacts.count == 1 ? "" : "s"), SOS on"
    case .emergencyClear:
      try watch.simulateEmergencyChange(contacts: [], sosOn: false)
      done = "cleared the emergency contacts, SOS off"
    }
    context.stdout.write("On the watch: \(done) (change #\(try watch.snapshot().lastSequence)).\n")
    return .success
  }
}
