import Foundation
import TSModel

/// Changes made on the watch itself (by the wearer), so drift and listeners can be exercised.
///
/// Each one is a transaction on the state that also appends a `WatchEvent` to the journal;
/// listeners of the same watch in this process fire at once, listeners in other processes when
/// their process sees the state file change (`ListenerHub`). These are not link calls: they are not counted, delayed or
/// failed by `SimulationOptions`.
extension SimulatedDevice {
  /// The wearer adds `contact` at the end of the regular list (stored as the platform stores it).
  /// - Throws: 2004 without regular contacts; 3004 when the list is full; 3001 when the
  ///   platform would not store the contact (e.g. a phone over 20 bytes on Fit).
  public func simulateContactAdd(_ contact: Contact) throws(DeviceError) {
    try watchSide { (profile, watch) throws(DeviceError) in
      guard let rules = profile.contacts.regular else { throw .notSupported(.contact, "Regular contacts") }
      guard watch.contacts.count < rules.limit else {
        throw DeviceError(.contact, .paramSizeError, "the watch's contact list is full (\(counted(rules.limit, "contact")))")
      }
      guard let stored = try rules.stored([SimulatedDevice.enteredOnWatch(contact)]).first else {
        throw DeviceError(.contact, .invalidParam, "the watch does not store the contact '\(contact.name)'")
      }
      watch.contacts.append(stored)
      watch.record(.contactsChanged, contacts: watch.contacts)
    }
  }

  /// A contact as the watch's own keypad or the SDK's contact factory leaves it: every character
  /// of the phone number that is not an ASCII digit or '+' removed (docs/platforms.md "Contacts", step 4),
  /// so a number typed as "+33 1 23 45" is held as "+3312345", as a real watch would hold it.
  static func enteredOnWatch(_ contact: Contact) -> Contact {
    var entered = contact
    entered.phoneNum = contact.phoneNum.filter { "0123456789+".contains($0) }
    return entered
  }

  /// The wearer removes every regular contact called `name`; returns how many were removed.
  /// - Throws: 2004 without regular contacts; 4004 when no contact has that name.
  @discardableResult
  public func simulateContactRemove(name: String) throws(DeviceError) -> Int {
    try watchSide { (profile, watch) throws(DeviceError) -> Int in
      guard profile.contacts.regular != nil else { throw .notSupported(.contact, "Regular contacts") }
      let before = watch.contacts.count
      watch.contacts.removeAll { $0.name == name }
      guard watch.contacts.count < before else {
        throw DeviceError(.contact, .dataIsEmpty, "the watch has no contact named '\(name)'")
      }
      watch.record(.contactsChanged, contacts: watch.contacts)
      return before - watch.contacts.count
    }
  }

  /// The wearer switches reminder `id` on or off; returns its new `isEnabled`.
  /// - Throws: 4004 when the watch has no reminder with that ID.
  @discardableResult
  public func simulateReminderToggle(id: String) throws(DeviceError) -> Bool {
    try watchSide { (_, watch) throws(DeviceError) -> Bool in
      guard let index = watch.reminders.firstIndex(where: { $0.reminderId == id }) else {
        throw .reminder(.dataIsEmpty, "the watch has no reminder with ID \(id)")
      }
      watch.reminders[index].isEnabled.toggle()
      let enabled = watch.reminders[index].isEnabled
      watch.record(.reminderToggled, reminderId: id, isEnabled: enabled)
      return enabled
    }
  }

  /// The wearer changes the emergency list and SOS switch (stored as the platform stores them).
  /// - Throws: 2004 without emergency contacts; the platform's errors for the list.
  public func simulateEmergencyChange(contacts: [Contact], sosOn: Bool) throws(DeviceError) {
    try watchSide { (profile, watch) throws(DeviceError) in
      guard let rules = profile.contacts.emergency else { throw .notSupported(.contact, "Emergency contacts") }
      watch.emergency = EmergencyContacts(contacts: try rules.stored(contacts.map(SimulatedDevice.enteredOnWatch)), isSosOn: sosOn)
      watch.record(.emergencyContactsChanged, contacts: watch.emergency.contacts)
    }
  }

  /// The wearer presses SOS at `time` (now by default; a test may press "earlier" on its own
  /// clock): a device→app event, nothing stored changes but the journal, whose entry keeps
  /// `time` so a listener that hears the press late (replayed on resume) still knows when it was.
  public func simulateSOSPress(at time: Date = Date()) throws(DeviceError) {
    try watchSide { (_, watch) throws(DeviceError) in _ = watch.record(.sosRequested, at: time) }
  }

  private func watchSide<T>(_ body: (PlatformProfile, inout SimulatedWatch) throws(DeviceError) -> T) throws(DeviceError) -> T {
    let (result, watch) = try store.update { (watch: inout SimulatedWatch) throws(DeviceError) -> (T, SimulatedWatch) in
      let value = try body(try profile(named: watch.profile), &watch)
      return (value, watch)
    }
    deliver(watch)
    return result
  }
}
