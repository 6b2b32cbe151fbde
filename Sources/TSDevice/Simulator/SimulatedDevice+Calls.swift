import TSModel

/// The SDK calls of the simulated watch; the platform rules live in the profile
/// (`ReminderBehavior`, `ContactRules`).
extension SimulatedDevice {
  public func capabilities() async throws(DeviceError) -> DeviceCapabilities {
    try profile().capabilities
  }

  // MARK: Reminders

  private func reminderCall<T>(_ operation: String, _ required: ReminderOperation,
                               _ body: (any ReminderBehavior, inout [Reminder], inout LinkMeter) throws(DeviceError) -> T)
    async throws(DeviceError) -> T {
    try await linkCall(operation, domain: .reminder) { (profile, watch, meter) throws(DeviceError) -> T in
      guard profile.capabilities.reminders.operations.contains(required) else {
        throw .notSupported(.reminder, operation)
      }
      return try body(profile.reminders, &watch.reminders, &meter)
    }
  }

  public func createCustomReminderTemplate() async throws(DeviceError) -> Reminder {
    try await reminderCall("createCustomReminderTemplate", .createCustomTemplate) { (rules, list, meter) throws(DeviceError) in
      try rules.template(from: list, meter: &meter)
    }
  }

  public func fetchAllReminders() async throws(DeviceError) -> [Reminder] {
    try await reminderCall("fetchAllReminders", .fetchAll) { (_, list, meter) throws(DeviceError) in
      meter.fetchReminders(list)
      return list
    }
  }

  public func replaceAllReminders(_ reminders: [Reminder]) async throws(DeviceError) {
    try await reminderCall("replaceAllReminders", .replaceAll) { (rules, list, meter) throws(DeviceError) in
      try rules.replaceAll(reminders, stored: &list, meter: &meter)
    }
  }

  public func setReminder(_ reminder: Reminder) async throws(DeviceError) {
    try await reminderCall("setReminder", .setReminder) { (rules, list, meter) throws(DeviceError) in
      try rules.set(reminder, stored: &list, meter: &meter)
    }
  }

  public func deleteReminder(id: String) async throws(DeviceError) {
    try await reminderCall("deleteReminder", .deleteReminder) { (rules, list, meter) throws(DeviceError) in
      try rules.delete(id: id, stored: &list, meter: &meter)
    }
  }

  // MARK: Contacts

  public func getAllContacts() async throws(DeviceError) -> [Contact] {
    try await linkCall("getAllContacts", domain: .contact) { (profile, watch, meter) throws(DeviceError) in
      guard profile.contacts.regular != nil else { throw .notSupported(.contact, "getAllContacts") }
      meter.get(answer: WireSize.contactList(watch.contacts))
      return watch.contacts
    }
  }

  public func setAllContacts(_ contacts: [Contact]) async throws(DeviceError) {
    try await linkCall("setAllContacts", domain: .contact) { (profile, watch, meter) throws(DeviceError) in
      guard let rules = profile.contacts.regular else { throw .notSupported(.contact, "setAllContacts") }
      let stored = try rules.stored(contacts)
      meter.set(body: WireSize.contactList(stored))
      watch.contacts = stored
    }
  }

  public func getEmergencyContacts() async throws(DeviceError) -> EmergencyContacts {
    try await linkCall("getEmergencyContacts", domain: .contact) { (profile, watch, meter) throws(DeviceError) in
      guard profile.contacts.emergency != nil else { throw .notSupported(.contact, "getEmergencyContacts") }
      meter.get(answer: WireSize.emergency(watch.emergency.contacts, sosOn: watch.emergency.isSosOn))
      return watch.emergency
    }
  }

  public func setEmergencyContacts(_ contacts: [Contact], sosOn: Bool) async throws(DeviceError) {
    try await linkCall("setEmergencyContacts", domain: .contact) { (profile, watch, meter) throws(DeviceError) in
      guard let rules = profile.contacts.emergency else { throw .notSupported(.contact, "setEmergencyContacts") }
      let stored = try rules.stored(contacts)
      meter.set(body: WireSize.emergency(stored, sosOn: sosOn))
      watch.emergency = EmergencyContacts(contacts: stored, isSosOn: sosOn)
    }
  }

  // MARK: Listeners

  public func registerContactsDidChange(_ handler: @escaping @Sendable (Result<[Contact], DeviceError>) -> Void) async {
    register("registerContactsDidChangedBlock", supported: \.contactsChangedListener,
             refuse: { error in handler(.failure(error)) }, add: { $0.addContacts(handler) })
  }

  public func registerEmergencyContactsDidChange(_ handler: @escaping @Sendable (Result<[Contact], DeviceError>) -> Void) async {
    register("registerEmergencyContactsDidChangedBlock", supported: \.emergencyContactsChangedListener,
             refuse: { error in handler(.failure(error)) }, add: { $0.addEmergency(handler) })
  }

  public func registerSOSRequest(_ handler: @escaping @Sendable (DeviceError?) -> Void) async {
    register("registerSOSRequestBlock", supported: \.sosRequestListener,
             refuse: { error in handler(error) }, add: { $0.addSOS(handler) })
  }

  /// Adds a listener, or, where the platform never reports the event, answers once,
  /// asynchronously, with 2004 (sdk-facts.md §2.6, §2.8). A watch that cannot be read answers
  /// with that error instead.
  private func register(_ operation: String, supported: KeyPath<ContactCapabilities, Bool>,
                        refuse: @escaping @Sendable (DeviceError) -> Void, add: (ListenerHub) -> Void) {
    let profile: PlatformProfile
    do {
      profile = try self.profile()
    } catch {
      Task { refuse(error) }
      return
    }
    guard profile.capabilities.contacts[keyPath: supported] else {
      let error = DeviceError.notSupported(profile.contacts.listenerDomain, operation)
      Task { refuse(error) }
      return
    }
    let hub = hub()
    add(hub)
    hub.startPolling(store)
  }
}
