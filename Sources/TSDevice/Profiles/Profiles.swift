import TSModel

extension PlatformProfile {
  /// `default`: a roomy demo watch for first use. 10 custom reminders, 100 contacts, 5 emergency
  /// contacts; every operation; names 32 / notes 64 bytes; `once` and lunch times stored;
  /// shortName stored; every listener. Validation as on Npk (3001/3002/3004) but `once` passes.
  public static let `default`: PlatformProfile = {
    let capabilities = PlatformTable.default
    let storage = ReminderStorage(capabilities: capabilities.reminders, refusal: "Set reminder list failed")
    return PlatformProfile(
      capabilities: capabilities,
      factoryState: DeviceState(reminders: ProfileParts.builtIns, contacts: [], emergency: ProfileParts.emptyEmergency()),
      reminders: ListReminders(storage: storage, allowsOnce: true),
      contacts: ContactRules(
        regular: ProfileParts.strictList(capabilities.contacts, emergency: false),
        emergency: ProfileParts.strictList(capabilities.contacts, emergency: true),
        listenerDomain: .contact))
  }()

  /// `npk`: the new protobuf platform (docs/platforms.md "Reminder writes per platform" Npk, docs/platforms.md "Contacts" Npk). Whole-list writes with
  /// the SDK validator; 7 custom reminders (the proto's 10-item list minus 3 built-ins); template
  /// as docs/platforms.md "Custom-reminder templates"; `once` refused (3002). Regular contacts are a stub in SDK beta9, so they are not
  /// supported here (2004); emergency: 1 contact, extra ones silently dropped, names and phones
  /// cut to 31 bytes; every listener answers 2004 (setting domain).
  public static let npk: PlatformProfile = {
    let capabilities = PlatformTable.npk
    let storage = ReminderStorage(capabilities: capabilities.reminders, refusal: "Set reminder list failed")
    let contacts = capabilities.contacts
    let emergency = ContactListRules(limit: contacts.maxEmergencyContacts, overflow: .truncate, text: .sanitize(dropsLongPhone: false),
                                     nameMaxBytes: contacts.nameMaxBytes, phoneMaxBytes: contacts.phoneMaxBytes,
                                     storesShortName: contacts.storesShortName, domain: .setting, noun: "Emergency contacts")
    return PlatformProfile(
      capabilities: capabilities,
      factoryState: DeviceState(reminders: ProfileParts.builtIns, contacts: [], emergency: ProfileParts.emptyEmergency()),
      reminders: ListReminders(storage: storage, allowsOnce: false),
      contacts: ContactRules(regular: nil, emergency: emergency, listenerDomain: .setting))
  }()

  /// `fit`: FitCloud watches with personalized reminders (docs/platforms.md "Reminder writes per platform" Fit Personalized,
  /// docs/platforms.md "Contacts" Fit). No replace-all; per-item writes without validation; 5 custom slots; `once`
  /// stored; names cut to 30 and notes to 60 bytes; 10 favourite contacts (70001 beyond), a phone
  /// over 20 bytes drops the contact; shortName not stored; 1 emergency contact; change listeners
  /// answer 2004, the SOS listener works.
  public static let fit: PlatformProfile = {
    let capabilities = PlatformTable.fit
    let storage = ReminderStorage(capabilities: capabilities.reminders, refusal: "Set reminder failed")
    return PlatformProfile(
      capabilities: capabilities,
      factoryState: DeviceState(reminders: ProfileParts.builtIns, contacts: [], emergency: ProfileParts.emptyEmergency()),
      reminders: FitPersonalizedReminders(storage: storage),
      contacts: fitContactRules(capabilities.contacts))
  }()

  /// `fit-basic`: older FitCloud firmware (docs/platforms.md "Reminder writes per platform" Fit Basic): only sedentary ("0")
  /// and drinking ("1"), period only, repeat always 127, names and notes not stored, sedentary
  /// has a lunch-break on/off flag (times read 0/0), drinking none; no custom reminders;
  /// replace-all, template and delete answer 2004. Contacts as on `fit`.
  public static let fitBasic: PlatformProfile = {
    let capabilities = PlatformTable.fitBasic
    let storage = ReminderStorage(capabilities: capabilities.reminders, refusal: "Set reminder failed")
    let builtIns = [ProfileParts.sedentary, ProfileParts.drinking].map { reminder in
      (try? storage.stored(reminder, id: reminder.reminderId)) ?? reminder
    }
    return PlatformProfile(
      capabilities: capabilities,
      factoryState: DeviceState(reminders: builtIns, contacts: [], emergency: ProfileParts.emptyEmergency()),
      reminders: FitBasicReminders(storage: storage),
      contacts: fitContactRules(capabilities.contacts))
  }()

  /// `fw`: Persimwear watches (docs/platforms.md "Reminder writes per platform" Fw, docs/platforms.md "Contacts" Fw): built-ins "0"–"2" only, replace-all
  /// supported, template 2004, other IDs 3001, delete not found 4004; 50 contacts with shortName
  /// stored; 3 emergency contacts, extra ones dropped; the contact change listener works, the
  /// emergency change listener answers 2004, the SOS listener works.
  public static let fw: PlatformProfile = {
    let capabilities = PlatformTable.fw
    let storage = ReminderStorage(capabilities: capabilities.reminders, refusal: "Set reminder failed")
    return PlatformProfile(
      capabilities: capabilities,
      factoryState: DeviceState(reminders: ProfileParts.builtIns, contacts: [], emergency: ProfileParts.emptyEmergency()),
      reminders: FwReminders(storage: storage),
      contacts: ContactRules(
        regular: ProfileParts.strictList(capabilities.contacts, emergency: false),
        emergency: ProfileParts.strictList(capabilities.contacts, emergency: true, overflow: .truncate),
        listenerDomain: .contact))
  }()

  /// FitCloud's lists: 70001 beyond the favourite-contact limit, 3004 beyond the emergency one.
  private static func fitContactRules(_ contacts: ContactCapabilities) -> ContactRules {
    ContactRules(
      regular: ProfileParts.fitCloudList(contacts, limit: contacts.maxContacts,
                                         overflow: .reject(.fitCloud, .fitCloudContactLimit), noun: "Contacts"),
      emergency: ProfileParts.fitCloudList(contacts, limit: contacts.maxEmergencyContacts,
                                           overflow: .reject(.contact, .paramSizeError), noun: "Emergency contacts"),
      listenerDomain: .contact)
  }
}
