import TSModel

/// A watch platform the simulated watch can be: what it can do (`capabilities`), what it holds
/// when new (`factoryState`) and how it answers each call (its behaviour rules).
///
/// The five profiles follow docs/platforms.md "The table" and the per-platform details in docs/platforms.md "Custom-reminder templates", "Lunch break" and
/// docs/platforms.md "Contacts", "Listeners"; numbers that no source gives are tsapply's choices, listed in docs/device.md.
public struct PlatformProfile: Sendable {
  /// Profile name: `default`, `npk`, `fit`, `fit-basic` or `fw`.
  public var name: String { capabilities.profile }
  /// Limits, operations and stored fields, as the planner reads them.
  public let capabilities: DeviceCapabilities
  /// A factory-fresh watch: the platform's built-ins (IDs "0", "1", "2" where it has them), no
  /// contacts, no emergency contacts, SOS off.
  public let factoryState: DeviceState
  let reminders: any ReminderBehavior
  let contacts: ContactRules

  init(capabilities: DeviceCapabilities, factoryState: DeviceState, reminders: any ReminderBehavior, contacts: ContactRules) {
    self.capabilities = capabilities
    self.factoryState = factoryState
    self.reminders = reminders
    self.contacts = contacts
  }

  /// Every profile, the default first.
  public static let all: [PlatformProfile] = [.default, .npk, .fit, .fitBasic, .fw]

  /// The profile called `name`.
  /// - Throws: `DeviceError` (simulator domain, 1004) naming the known profiles.
  public static func named(_ name: String) throws(DeviceError) -> PlatformProfile {
    guard let profile = all.first(where: { $0.name == name }) else {
      let names = all.map(\.name).joined(separator: ", ")
      throw .simulator(.sdkConfigError, "unknown device profile '\(name)'; expected one of: \(names)")
    }
    return profile
  }

  /// The name of the default profile, used for a new watch.
  public static let defaultName = "default"

  /// This profile on a watch without emergency-contact support (`isSupportEmergencyContacts`
  /// answers NO, which the SDK pages allow on any platform): no emergency list, and its calls
  /// and change listener answer 2004; everything else as the profile. Chosen with
  /// `TSAPPLY_SIM_NO_EMERGENCY_CONTACTS=1` (`SimulationOptions`).
  public func withoutEmergencyContacts() -> PlatformProfile {
    var capabilities = self.capabilities
    capabilities.summary += " (without emergency contacts)"
    capabilities.contacts.supportsEmergencyContacts = false
    capabilities.contacts.maxEmergencyContacts = 0
    capabilities.contacts.emergencyContactsChangedListener = false
    return PlatformProfile(capabilities: capabilities, factoryState: factoryState, reminders: reminders,
                           contacts: ContactRules(regular: contacts.regular, emergency: nil, listenerDomain: contacts.listenerDomain))
  }
}

/// Building blocks shared by the profile definitions.
enum ProfileParts {
  /// The built-ins of a new watch (names from the Example app, docs/platforms.md "Reminder IDs"; times are tsapply's choice).
  static let sedentary = Reminder(
    reminderId: "0", reminderName: "Sedentary Reminder", reminderType: .sedentary, repeatDays: .workday,
    startTime: 540, endTime: 1080, interval: 60, isLunchBreakDNDEnabled: true,
    lunchBreakDNDStartTime: 720, lunchBreakDNDEndTime: 840)
  static let drinking = Reminder(
    reminderId: "1", reminderName: "Drink Water Reminder", reminderType: .drinking, repeatDays: .everyday,
    startTime: 480, endTime: 1320, interval: 120)
  static let medicine = Reminder(
    reminderId: "2", reminderName: "Take Medicine Reminder", reminderType: .takeMedicine, repeatDays: .everyday,
    timeType: .point, timePoints: [480, 1200])

  static let builtIns = [sedentary, drinking, medicine]

  static func emptyEmergency() -> EmergencyContacts { EmergencyContacts(contacts: [], isSosOn: false) }

  /// A contact list rule refusing bad items (3001/3004) and, by default, extra items (3004);
  /// limits from the platform table.
  static func strictList(_ contacts: ContactCapabilities, emergency: Bool,
                         overflow: ContactListRules.Overflow = .reject(.contact, .paramSizeError)) -> ContactListRules {
    ContactListRules(limit: emergency ? contacts.maxEmergencyContacts : contacts.maxContacts, overflow: overflow,
                     text: .reject, nameMaxBytes: contacts.nameMaxBytes, phoneMaxBytes: contacts.phoneMaxBytes,
                     storesShortName: contacts.storesShortName, domain: .contact,
                     noun: emergency ? "Emergency contacts" : "Contacts")
  }

  /// FitCloud lists: names cut to the byte limit, a phone over its limit drops the contact
  /// (docs/platforms.md "Contacts").
  static func fitCloudList(_ contacts: ContactCapabilities, limit: Int, overflow: ContactListRules.Overflow,
                           noun: String) -> ContactListRules {
    ContactListRules(limit: limit, overflow: overflow, text: .sanitize(dropsLongPhone: true),
                     nameMaxBytes: contacts.nameMaxBytes, phoneMaxBytes: contacts.phoneMaxBytes,
                     storesShortName: contacts.storesShortName, domain: .contact, noun: noun)
  }
}
