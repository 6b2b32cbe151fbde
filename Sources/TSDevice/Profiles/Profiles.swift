import TSModel

extension PlatformProfile {
  /// `default`: a roomy demo watch for first use. 10 custom reminders, 100 contacts, 5 emergency
  /// contacts; every operation; names 32 / notes 64 bytes; `once` and lunch times stored;
  /// shortName stored; every listener. Validation as on Npk (3001/3002/3004) but `once` passes.
  public static let `default`: PlatformProfile = {
    let reminders = ReminderCapabilities(
      operations: ProfileParts.allOperations, maxCustomReminders: 10, maxTimePoints: 10, supportsOnce: true,
      sedentary: ProfileParts.kind(), drinking: ProfileParts.kind(), medicine: ProfileParts.kind(), custom: ProfileParts.kind())
    let contacts = ContactCapabilities(
      maxContacts: 100, supportsEmergencyContacts: true, maxEmergencyContacts: 5, nameMaxBytes: 32, phoneMaxBytes: 20,
      storesShortName: true, contactsChangedListener: true, emergencyContactsChangedListener: true, sosRequestListener: true)
    let storage = ReminderStorage(capabilities: reminders, refusal: "Set reminder list failed")
    return PlatformProfile(
      capabilities: DeviceCapabilities(profile: "default", summary: "Roomy demo watch: every operation, 10 custom reminders, 100 contacts, 5 emergency contacts",
                                       reminders: reminders, contacts: contacts),
      factoryState: DeviceState(reminders: ProfileParts.builtIns, contacts: [], emergency: ProfileParts.emptyEmergency()),
      reminders: ListReminders(storage: storage, allowsOnce: true, templateDefaults: ProfileParts.npkTemplate(name: "Custom reminder")),
      contacts: ContactRules(
        regular: ProfileParts.strictList(limit: 100, shortName: true, noun: "Contacts"),
        emergency: ProfileParts.strictList(limit: 5, shortName: true, noun: "Emergency contacts"),
        listenerDomain: .contact))
  }()

  /// `npk`: the new protobuf platform (sdk-facts.md §1.7 Npk, §2.6 Npk). Whole-list writes with
  /// the SDK validator; 7 custom reminders (the proto's 10-item list minus 3 built-ins); template
  /// as §1.6; `once` refused (3002). Regular contacts are a stub in SDK beta9, so they are not
  /// supported here (2004); emergency: 1 contact, extra ones silently dropped, names and phones
  /// cut to 31 bytes; every listener answers 2004 (setting domain).
  public static let npk: PlatformProfile = {
    let reminders = ReminderCapabilities(
      operations: ProfileParts.allOperations, maxCustomReminders: 7, maxTimePoints: 10, supportsOnce: false,
      sedentary: ProfileParts.kind(), drinking: ProfileParts.kind(), medicine: ProfileParts.kind(), custom: ProfileParts.kind())
    let contacts = ContactCapabilities(
      maxContacts: 0, supportsEmergencyContacts: true, maxEmergencyContacts: 1, nameMaxBytes: 31, phoneMaxBytes: 31,
      storesShortName: false, contactsChangedListener: false, emergencyContactsChangedListener: false, sosRequestListener: false)
    let storage = ReminderStorage(capabilities: reminders, refusal: "Set reminder list failed")
    let emergency = ContactListRules(limit: 1, overflow: .truncate, text: .sanitize(dropsLongPhone: false),
                                     nameMaxBytes: 31, phoneMaxBytes: 31, storesShortName: false, domain: .setting,
                                     noun: "Emergency contacts")
    return PlatformProfile(
      capabilities: DeviceCapabilities(profile: "npk", summary: "Npk (protobuf) watch: whole-list reminder writes, 7 custom reminders, no regular contacts (SDK stub), 1 emergency contact",
                                       reminders: reminders, contacts: contacts),
      factoryState: DeviceState(reminders: ProfileParts.builtIns, contacts: [], emergency: ProfileParts.emptyEmergency()),
      reminders: ListReminders(storage: storage, allowsOnce: false, templateDefaults: ProfileParts.npkTemplate(name: "自定义提醒")),
      contacts: ContactRules(regular: nil, emergency: emergency, listenerDomain: .setting))
  }()

  /// `fit`: FitCloud watches with personalized reminders (sdk-facts.md §1.7 Fit Personalized,
  /// §2.6 Fit). No replace-all; per-item writes without validation; 5 custom slots; `once`
  /// stored; names cut to 30 and notes to 60 bytes; 10 favourite contacts (70001 beyond), a phone
  /// over 20 bytes drops the contact; shortName not stored; 1 emergency contact; change listeners
  /// answer 2004, the SOS listener works.
  public static let fit: PlatformProfile = {
    let kind = ProfileParts.kind(name: 30, notes: 60, truncates: true)
    let reminders = ReminderCapabilities(
      operations: [.fetchAll, .setReminder, .deleteReminder, .createCustomTemplate], maxCustomReminders: 5,
      maxTimePoints: 10, supportsOnce: true, sedentary: kind, drinking: kind, medicine: kind, custom: kind)
    let storage = ReminderStorage(capabilities: reminders, refusal: "Set reminder failed")
    return PlatformProfile(
      capabilities: DeviceCapabilities(profile: "fit", summary: "FitCloud watch, personalized reminders: per-item writes, 5 custom slots, 10 contacts, 1 emergency contact",
                                       reminders: reminders, contacts: fitContacts),
      factoryState: DeviceState(reminders: ProfileParts.builtIns, contacts: [], emergency: ProfileParts.emptyEmergency()),
      reminders: FitPersonalizedReminders(storage: storage, templateDefaults: fitTemplate),
      contacts: fitContactRules)
  }()

  /// `fit-basic`: older FitCloud firmware (sdk-facts.md §1.7 Fit Basic): only sedentary ("0")
  /// and drinking ("1"), period only, repeat always 127, names and notes not stored, sedentary
  /// has a lunch-break on/off flag (times read 0/0), drinking none; no custom reminders;
  /// replace-all, template and delete answer 2004. Contacts as on `fit`.
  public static let fitBasic: PlatformProfile = {
    let sedentary = ProfileParts.kind([.period], repeat: false, lunch: .flagOnly, name: nil, notes: nil)
    let drinking = ProfileParts.kind([.period], repeat: false, lunch: .none, name: nil, notes: nil)
    let reminders = ReminderCapabilities(
      operations: [.fetchAll, .setReminder], maxCustomReminders: 0, maxTimePoints: 0, supportsOnce: false,
      sedentary: sedentary, drinking: drinking, medicine: nil, custom: nil)
    let storage = ReminderStorage(capabilities: reminders, refusal: "Set reminder failed")
    let builtIns = [ProfileParts.sedentary, ProfileParts.drinking].map { reminder in
      (try? storage.stored(reminder, id: reminder.reminderId)) ?? reminder
    }
    return PlatformProfile(
      capabilities: DeviceCapabilities(profile: "fit-basic", summary: "FitCloud watch, basic reminders: sedentary and drinking only, no names or notes, 10 contacts, 1 emergency contact",
                                       reminders: reminders, contacts: fitContacts),
      factoryState: DeviceState(reminders: builtIns, contacts: [], emergency: ProfileParts.emptyEmergency()),
      reminders: FitBasicReminders(storage: storage),
      contacts: fitContactRules)
  }()

  /// `fw`: Persimwear watches (sdk-facts.md §1.7 Fw, §2.6 Fw): built-ins "0"–"2" only, replace-all
  /// supported, template 2004, other IDs 3001, delete not found 4004; 50 contacts with shortName
  /// stored; 3 emergency contacts, extra ones dropped; the contact change listener works, the
  /// emergency change listener answers 2004, the SOS listener works.
  public static let fw: PlatformProfile = {
    let kind = ProfileParts.kind(truncates: true)
    let reminders = ReminderCapabilities(
      operations: [.fetchAll, .replaceAll, .setReminder, .deleteReminder], maxCustomReminders: 0, maxTimePoints: 10,
      supportsOnce: true, sedentary: kind, drinking: kind, medicine: kind, custom: nil)
    let contacts = ContactCapabilities(
      maxContacts: 50, supportsEmergencyContacts: true, maxEmergencyContacts: 3, nameMaxBytes: 32, phoneMaxBytes: 20,
      storesShortName: true, contactsChangedListener: true, emergencyContactsChangedListener: false, sosRequestListener: true)
    let storage = ReminderStorage(capabilities: reminders, refusal: "Set reminder failed")
    return PlatformProfile(
      capabilities: DeviceCapabilities(profile: "fw", summary: "Persimwear watch: built-in reminders only, 50 contacts with short names, 3 emergency contacts",
                                       reminders: reminders, contacts: contacts),
      factoryState: DeviceState(reminders: ProfileParts.builtIns, contacts: [], emergency: ProfileParts.emptyEmergency()),
      reminders: FwReminders(storage: storage),
      contacts: ContactRules(
        regular: ProfileParts.strictList(limit: 50, shortName: true, noun: "Contacts"),
        emergency: ProfileParts.strictList(limit: 3, overflow: .truncate, shortName: true, noun: "Emergency contacts"),
        listenerDomain: .contact))
  }()

  private static let fitContacts = ContactCapabilities(
    maxContacts: 10, supportsEmergencyContacts: true, maxEmergencyContacts: 1, nameMaxBytes: 32, phoneMaxBytes: 20,
    storesShortName: false, contactsChangedListener: false, emergencyContactsChangedListener: false, sosRequestListener: true)

  private static let fitContactRules = ContactRules(
    regular: ProfileParts.fitCloudList(limit: 10, overflow: .reject(.fitCloud, .fitCloudContactLimit), noun: "Contacts"),
    emergency: ProfileParts.fitCloudList(limit: 1, overflow: .reject(.contact, .paramSizeError), noun: "Emergency contacts"),
    listenerDomain: .contact)

  /// The Fit template's defaults live in the closed FitCloudKit binary (§1.6); these are
  /// tsapply's choice: enabled, every day, 08:00–20:00 every 60 minutes, no name, lunch break
  /// off but with the SDK's recommended window 12:00–14:00 (720–840, reminders.txt), so turning
  /// it on (`lunch_break: true`) gives a window the watch accepts.
  static let fitTemplate = Reminder(
    reminderId: "", reminderName: "", isEnabled: true, reminderType: .custom, repeatDays: .everyday,
    startTime: 480, endTime: 1200, interval: 60, isLunchBreakDNDEnabled: false,
    lunchBreakDNDStartTime: 720, lunchBreakDNDEndTime: 840)
}
