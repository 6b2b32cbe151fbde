import TSModel
import TSPlan

/// One unit of work for the watch: one device call, or two for a custom reminder create
/// (template, then set). Steps are atomic on the watch: each either happened or did not.
public enum ApplyStep: Hashable, Sendable {
  /// `replaceAllReminders:` with the whole list; covers several reminder updates and deletes.
  case replaceAllReminders([Reminder], covering: [ResourceAddress])
  /// `setReminder:` (upsert by ID) for one reminder update.
  case setReminder(Reminder, address: ResourceAddress)
  /// `deleteReminderWithId:` for one custom reminder.
  case deleteReminder(id: String, address: ResourceAddress)
  /// `createCustomReminderTemplateWithCompletion:` then `setReminder:` with the patch applied to the template.
  case createCustomReminder(ReminderPatch, address: ResourceAddress)
  /// `createCustomReminderTemplateWithCompletion:` then one `replaceAllReminders:` writing `base`
  /// (the watch's list with updates and deletes applied) plus the new reminder: a create and
  /// several other reminder changes in two calls.
  case replaceAllCreating(base: [Reminder], patch: ReminderPatch, address: ResourceAddress, covering: [ResourceAddress])
  /// `setAllContacts:` with the whole list, in manifest order.
  case setAllContacts([Contact])
  /// `setEmergencyContacts:sosOn:` with the list and the switch together.
  case setEmergencyContacts(EmergencyContacts)

  /// The resources this step changes.
  public var addresses: [ResourceAddress] {
    switch self {
    case .replaceAllReminders(_, let covering): covering
    case .replaceAllCreating(_, _, let address, let covering): covering + [address]
    case .setReminder(_, let address), .deleteReminder(_, let address), .createCustomReminder(_, let address): [address]
    case .setAllContacts: [.contacts]
    case .setEmergencyContacts: [.emergency]
    }
  }

  /// Device calls the step makes.
  public var deviceCalls: Int {
    switch self {
    case .createCustomReminder, .replaceAllCreating: 2
    default: 1
    }
  }

  /// Whether the step creates a custom reminder (its first call fetches the device's template).
  public var createsCustomReminder: Bool {
    switch self {
    case .createCustomReminder, .replaceAllCreating: true
    default: false
    }
  }

  /// The IDs of the reminders the step writes (a set, a delete, a creation from `template`), for
  /// the check before the next reminder write (`Applier`); `nil` when it writes the whole list.
  func touchedReminders(template: Reminder?) -> Set<String>? {
    switch self {
    case .setReminder(let reminder, _): [reminder.reminderId]
    case .deleteReminder(let id, _): [id]
    case .createCustomReminder: template.map { [$0.reminderId] } ?? []
    default: nil
    }
  }

  /// Whether the step writes reminders (so verification must read them back).
  public var writesReminders: Bool {
    switch self {
    case .setAllContacts, .setEmergencyContacts: false
    default: true
    }
  }
}

/// Orders a plan's changes into device calls for the platform: a pure function.
///
/// Rules (issue 4, "fewest device calls for the platform"):
///
/// | situation | steps |
/// |---|---|
/// | replace-all supported, creates and 1+ updates/deletes | template, then one `replaceAllReminders` with the watch's list (updates applied, deletes removed) plus the first new reminder; other creates as below |
/// | replace-all supported, 2+ reminder updates/deletes | one `replaceAllReminders` with the watch's list, updates applied, deletes removed, order kept |
/// | otherwise | one `deleteReminder` per delete, then one `setReminder` per update |
/// | custom reminder creates | after all deletes (so full slots are freed first): template + set, each, in the manifest's order (the watch numbers them in the order they come) |
/// | contacts differ | one `setAllContacts` |
/// | emergency list or SOS differ | one `setEmergencyContacts` (list and switch together) |
public enum ApplyOrder {
  /// The steps that carry out `plan` on a watch holding `state` with `capabilities`; new custom
  /// reminders are made in the order of `customOrder` (the manifest's custom reminder names;
  /// a name not in it comes after, by address).
  public static func steps(for plan: Plan, state: DeviceState, capabilities: DeviceCapabilities,
                           customOrder: [String] = []) -> [ApplyStep] {
    var deletes: [(id: String, address: ResourceAddress)] = []
    var updates: [(reminder: Reminder, address: ResourceAddress)] = []
    var steps: [ApplyStep] = []
    var creates: [ApplyStep] = []
    var tail: [ApplyStep] = []
    for change in plan.resourceChanges {
      switch (change.action, change.before, change.after) {
      case (.delete, .reminder(let reminder)?, _):
        deletes.append((reminder.reminderId, change.address))
      case (.update, _, .reminder(let reminder)?):
        updates.append((reminder, change.address))
      case (.create, _, .reminder):
        if let patch = change.patch { creates.append(.createCustomReminder(patch, address: change.address)) }
      case (_, _, .contacts(let contacts)?):
        tail.append(.setAllContacts(contacts))
      case (_, _, .emergency(let emergency)?):
        tail.append(.setEmergencyContacts(emergency))
      default:
        break
      }
    }
    if !customOrder.isEmpty {
      let rank = Dictionary(customOrder.enumerated().map { (ResourceAddress.custom($0.element), $0.offset) }) { first, _ in first }
      let ranked = creates.enumerated().map { (index, step) -> (Int, Int, ApplyStep) in
        guard case .createCustomReminder(_, let address) = step else { return (Int.max, index, step) }
        return (rank[address] ?? Int.max, index, step)
      }
      creates = ranked.sorted { ($0.0, $0.1) < ($1.0, $1.1) }.map(\.2)
    }
    let replaceAllSupported = capabilities.reminders.operations.contains(.replaceAll)
    if replaceAllSupported, deletes.count + updates.count >= 1,
       case .createCustomReminder(let patch, let address)? = creates.first,
       case .replaceAllReminders(let base, let covering) = replaceAll(state: state, deletes: deletes, updates: updates) {
      steps.append(.replaceAllCreating(base: base, patch: patch, address: address, covering: covering))
      creates.removeFirst()
    } else if replaceAllSupported && deletes.count + updates.count >= 2 {
      steps.append(replaceAll(state: state, deletes: deletes, updates: updates))
    } else {
      steps += deletes.map { ApplyStep.deleteReminder(id: $0.id, address: $0.address) }
      steps += updates.map { ApplyStep.setReminder($0.reminder, address: $0.address) }
    }
    return steps + creates + tail
  }

  private static func replaceAll(state: DeviceState, deletes: [(id: String, address: ResourceAddress)],
                                 updates: [(reminder: Reminder, address: ResourceAddress)]) -> ApplyStep {
    let deleted = Set(deletes.map(\.id))
    var updated: [String: Reminder] = [:]
    for update in updates { updated[update.reminder.reminderId] = update.reminder }
    let list = state.reminders.compactMap { reminder -> Reminder? in
      deleted.contains(reminder.reminderId) ? nil : (updated[reminder.reminderId] ?? reminder)
    }
    return .replaceAllReminders(list, covering: deletes.map(\.address) + updates.map(\.address))
  }
}
