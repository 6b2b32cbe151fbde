import TSModel

/// The SDK calls of the simulated watch; the platform rules live in the profile
/// (`ReminderBehavior`, `ContactRules`).
extension SimulatedDevice {
  /// The profile's capabilities. Not a link call: not counted, delayed or faulted.
  /// - Throws: `DeviceError` (simulator domain) when the state file cannot be read.
  public func capabilities() async throws(DeviceError) -> DeviceCapabilities {
    try profile().capabilities
  }

  // MARK: Reminders

  private func reminderCall<T>(_ operation: String, _ required: ReminderOperation, reads: Bool = false,
                               _ body: (any ReminderBehavior, inout [Reminder], inout LinkMeter) throws(DeviceError) -> T)
    async throws(DeviceError) -> T {
    try await linkCall(operation, domain: .reminder, reads: reads) { (profile, watch, meter) throws(DeviceError) -> T in
      guard profile.capabilities.reminders.operations.contains(required) else {
        throw .notSupported(.reminder, operation)
      }
      return try body(profile.reminders, &watch.reminders, &meter)
    }
  }

  /// Simulates `createCustomReminderTemplateWithCompletion:`: the profile's template with the
  /// next free ID and defaults (docs/platforms.md "Custom-reminder templates"); nothing is written to the watch.
  /// - Throws: 2004 where unsupported (Fit-Basic, Fw); 3004 (Npk) or 3001 (Fit) when full.
  public func createCustomReminderTemplate() async throws(DeviceError) -> Reminder {
    try await reminderCall("createCustomReminderTemplate", .createCustomTemplate, reads: true) { (rules, list, meter) throws(DeviceError) in
      try rules.template(from: list, meter: &meter)
    }
  }

  /// Simulates `fetchAllRemindersWithCompletion:`: the stored reminders in watch order.
  /// - Throws: 2004 where unsupported; injected faults; 2003 after a simulated disconnect.
  public func fetchAllReminders() async throws(DeviceError) -> [Reminder] {
    try await reminderCall("fetchAllReminders", .fetchAll, reads: true) { (_, list, meter) throws(DeviceError) in
      meter.fetchReminders(list)
      return list
    }
  }

  /// Simulates `replaceAllReminders:completion:`: the list becomes `reminders`, as the platform stores them.
  /// - Throws: 2004 where unsupported (Fit, Fit-Basic); 3004 custom limit; 3001/3002 validation
  ///   (first error); 4002 when the watch refuses a long name or notes.
  public func replaceAllReminders(_ reminders: [Reminder]) async throws(DeviceError) {
    try await reminderCall("replaceAllReminders", .replaceAll) { (rules, list, meter) throws(DeviceError) in
      try rules.replaceAll(reminders, stored: &list, meter: &meter)
    }
  }

  /// Simulates `setReminder:completion:`: upsert by exact `reminderId` (Npk re-validates the list).
  /// - Throws: 2004 where unsupported (Fit-Basic: custom, medicine); 3001/3002/3004 validation
  ///   (Fw: an ID other than 0–2 → 3001); 4002 where Fit has no such slot.
  public func setReminder(_ reminder: Reminder) async throws(DeviceError) {
    try await reminderCall("setReminder", .setReminder) { (rules, list, meter) throws(DeviceError) in
      try rules.set(reminder, stored: &list, meter: &meter)
    }
  }

  /// Simulates `deleteReminderWithId:completion:` (exact ID match).
  /// - Throws: 3001 empty id; 4001 (Npk, Fit) or 4004 (Fw) not found; 4002 (Fit) for a built-in;
  ///   2004 where unsupported.
  public func deleteReminder(id: String) async throws(DeviceError) {
    try await reminderCall("deleteReminder", .deleteReminder) { (rules, list, meter) throws(DeviceError) in
      try rules.delete(id: id, stored: &list, meter: &meter)
    }
  }

  // MARK: Contacts

  /// Simulates `getAllContacts:`: the regular contacts in watch order (`shortName` `nil`
  /// where the platform does not store it).
  /// - Throws: 2004 where regular contacts are unsupported (Npk).
  public func getAllContacts() async throws(DeviceError) -> [Contact] {
    try await linkCall("getAllContacts", domain: .contact, reads: true) { (profile, watch, meter) throws(DeviceError) in
      guard profile.contacts.regular != nil else { throw .notSupported(.contact, "getAllContacts") }
      meter.get(answer: WireSize.contactList(watch.contacts))
      return watch.contacts
    }
  }

  /// Simulates `setAllContacts:completion:`: overwrites the list with `contacts` as the platform
  /// stores them (cut, dropped or refused per `ContactRules`, docs/platforms.md "Contacts").
  /// - Throws: 2004 where unsupported; 3001/3004 or the overflow error (e.g. FitCloud 70001).
  public func setAllContacts(_ contacts: [Contact]) async throws(DeviceError) {
    try await linkCall("setAllContacts", domain: .contact) { (profile, watch, meter) throws(DeviceError) in
      guard let rules = profile.contacts.regular else { throw .notSupported(.contact, "setAllContacts") }
      let stored = try rules.stored(contacts)
      meter.set(body: WireSize.contactList(stored))
      watch.contacts = stored
    }
  }

  /// Simulates `getEmergencyContacts:`: the emergency list and the SOS switch.
  /// - Throws: 2004 where emergency contacts are unsupported.
  public func getEmergencyContacts() async throws(DeviceError) -> EmergencyContacts {
    try await linkCall("getEmergencyContacts", domain: .contact, reads: true) { (profile, watch, meter) throws(DeviceError) in
      guard profile.contacts.emergency != nil else { throw .notSupported(.contact, "getEmergencyContacts") }
      meter.get(answer: WireSize.emergency(watch.emergency.contacts, sosOn: watch.emergency.isSosOn))
      return watch.emergency
    }
  }

  /// Simulates `setEmergencyContacts:sosOn:completion:`: list and switch in one write, the list
  /// as the platform stores it (Npk/Fw keep the first `limit` silently; Npk cuts at 31 bytes).
  /// - Throws: 2004 where unsupported; 3001/3004 where the platform refuses the list.
  public func setEmergencyContacts(_ contacts: [Contact], sosOn: Bool) async throws(DeviceError) {
    try await linkCall("setEmergencyContacts", domain: .contact) { (profile, watch, meter) throws(DeviceError) in
      guard let rules = profile.contacts.emergency else { throw .notSupported(.contact, "setEmergencyContacts") }
      let stored = try rules.stored(contacts)
      meter.set(body: WireSize.emergency(stored, sosOn: sosOn))
      watch.emergency = EmergencyContacts(contacts: stored, isSosOn: sosOn)
    }
  }

  // MARK: Listeners

  /// Simulates `registerContactsDidChangedBlock:`: `handler` gets each watch-side change (other
  /// processes' changes when the state file changes, `ListenerHub`); where the platform never reports, one
  /// asynchronous 2004. Not a link call.
  public func registerContactsDidChange(_ handler: @escaping @Sendable (Result<[Contact], DeviceError>) -> Void) async {
    register("registerContactsDidChangedBlock", supported: \.contactsChangedListener,
             refuse: { error in handler(.failure(error)) }, add: { $0.addContacts(handler) })
  }

  /// Simulates `registerEmergencyContactsDidChangedBlock:`: as `registerContactsDidChange(_:)`,
  /// for the emergency list (one asynchronous 2004 where unsupported, e.g. Npk in domain setting).
  public func registerEmergencyContactsDidChange(_ handler: @escaping @Sendable (Result<[Contact], DeviceError>) -> Void) async {
    register("registerEmergencyContactsDidChangedBlock", supported: \.emergencyContactsChangedListener,
             refuse: { error in handler(.failure(error)) }, add: { $0.addEmergency(handler) })
  }

  /// Simulates `registerSOSRequestBlock:`: `handler(nil)` each time the wearer triggers SOS
  /// watch-side; one asynchronous 2004 where unsupported. Not a link call.
  public func registerSOSRequest(_ handler: @escaping @Sendable (DeviceError?) -> Void) async {
    register("registerSOSRequestBlock", supported: \.sosRequestListener,
             refuse: { error in handler(error) }, add: { $0.addSOS(handler) })
  }

  /// One listener for `kinds` that resumes: its events' ids are the journal's sequence numbers,
  /// and the journal (its newest `SimulatedWatch.journalLimit` entries) is the history replayed
  /// after `lastHandled`. An id newer than the journal's newest (the watch was reset since) or
  /// not a sequence number replays every entry held. Without `lastHandled`, the newest sequence
  /// number now is the `resumePoint`. A kind the platform never reports is refused as the SDK's
  /// registration refuses it (one asynchronous 2004); a watch that cannot be read, with its error.
  @discardableResult
  public func listen(to kinds: Set<DeviceEvent.Kind>, after lastHandled: DeviceEventID?,
                     _ handler: @escaping @Sendable (ListenerReport) -> Void) async -> Bool {
    let watch: SimulatedWatch, profile: PlatformProfile
    do {
      watch = try snapshot()
      profile = try self.profile(named: watch.profile)
    } catch {
      for kind in kinds { Task { handler(.failed(kind, error)) } }
      return false
    }
    var heard = Set<DeviceEvent.Kind>()
    for kind in DeviceEvent.Kind.allCases where kinds.contains(kind) {
      let (operation, supported) = Self.listener(kind)
      if profile.capabilities.contacts[keyPath: supported] {
        heard.insert(kind)
      } else {
        let error = DeviceError.notSupported(profile.contacts.listenerDomain, operation)
        Task { handler(.failed(kind, error)) }
      }
    }
    guard !heard.isEmpty else { return false }
    let start: Int
    if let lastHandled {
      let resumed = watch.resume(after: lastHandled)
      start = resumed.heard
      if let before = resumed.missedBefore { handler(.missed(after: lastHandled, before: before)) }
    } else {
      start = watch.lastSequence
      handler(.resumePoint(watch.eventID(start)))
    }
    let hub = hub()
    hub.addResumable(kinds: heard, after: ListenerHub.Position(after: start, in: watch.journal), epoch: watch.journalEpoch, handler)
    // Read again after adding: a change made in between reaches the listener too.
    if let now = try? store.read() { hub.deliver(now) }
    hub.startWatching(store)
    return true
  }

  /// The SDK registration that hears `kind`, and the capability saying whether it fires.
  static func listener(_ kind: DeviceEvent.Kind) -> (operation: String, supported: KeyPath<ContactCapabilities, Bool>) {
    switch kind {
    case .contactsChanged: ("registerContactsDidChangedBlock", \.contactsChangedListener)
    case .emergencyContactsChanged: ("registerEmergencyContactsDidChangedBlock", \.emergencyContactsChangedListener)
    case .sosRequested: ("registerSOSRequestBlock", \.sosRequestListener)
    }
  }

  /// Adds a listener, or, where the platform never reports the event, answers once,
  /// asynchronously, with 2004 (docs/platforms.md "Contacts", "Listeners"). A watch that cannot be read answers
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
    hub.startWatching(store)
  }
}
