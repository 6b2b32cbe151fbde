/// A snapshot of everything tsapply manages on a watch: what the planner compares the manifest with.
///
/// Read through the `Device` interface (fetch all reminders, get all contacts, get emergency
/// contacts); it is plain data, so the planner can be pure.
public struct DeviceState: Hashable, Codable, Sendable {
  /// Every reminder on the watch, built-ins and custom, in watch order.
  public var reminders: [Reminder]
  /// Regular contacts in watch order (order is not managed; compared as a set).
  public var contacts: [Contact]
  /// Emergency contacts and SOS switch; `nil` when the watch has no emergency support.
  public var emergency: EmergencyContacts?

  /// A snapshot; empty lists and no emergency support by default.
  public init(reminders: [Reminder] = [], contacts: [Contact] = [], emergency: EmergencyContacts? = nil) {
    self.reminders = reminders
    self.contacts = contacts
    self.emergency = emergency
  }

  /// The built-in reminder of `kind` (by its fixed ID), if the watch has it.
  public func builtIn(_ kind: ReminderKind) -> Reminder? {
    guard let id = kind.builtInID else { return nil }
    return reminders.first { $0.reminderId == id }
  }

  /// Custom reminders (type 4) in watch order.
  public var customReminders: [Reminder] {
    reminders.filter { $0.reminderType == .custom }
  }
}
