/// The one table of platform facts: what each of the five watch platforms tsapply knows stores
/// and does, as `DeviceCapabilities` values.
///
/// The planner reads these (through the capabilities a device reports), the simulated watch is
/// built on them (its behaviour rules take their limits from here), the tests use them, and
/// docs/platforms.md shows them (a test keeps the page's table equal to `markdownTable()`).
/// Where the SDK documentation gives no number, the value is tsapply's choice; docs/platforms.md
/// lists each such choice.
public enum PlatformTable {
  /// Every platform, `default` first: `default`, `npk`, `fit`, `fit-basic`, `fw`.
  public static let all: [DeviceCapabilities] = [`default`, npk, fit, fitBasic, fw]

  /// The platform called `profile`, or `nil`.
  public static func named(_ profile: String) -> DeviceCapabilities? {
    all.first { $0.profile == profile }
  }

  /// `default`: a roomy demo watch for first use. Every reminder operation; 10 custom
  /// reminders; names 32 / notes 64 bytes (longer refused); `once` stored; 100 contacts with
  /// short names; 5 emergency contacts; every listener. Template as Npk's, named "Custom reminder".
  public static let `default` = DeviceCapabilities(
    profile: "default",
    summary: "Roomy demo watch: every operation, 10 custom reminders, 100 contacts, 5 emergency contacts",
    reminders: ReminderCapabilities(
      operations: Set(ReminderOperation.allCases), maxCustomReminders: 10, maxTimePoints: 10, supportsOnce: true,
      sedentary: kind(), drinking: kind(), medicine: kind(), custom: kind(),
      customTemplate: npkTemplate(name: "Custom reminder")),
    contacts: ContactCapabilities(
      maxContacts: 100, supportsEmergencyContacts: true, maxEmergencyContacts: 5, nameMaxBytes: 32, phoneMaxBytes: 20,
      storesShortName: true, contactsChangedListener: true, emergencyContactsChangedListener: true,
      sosRequestListener: true))

  /// `npk`: the protobuf platform. Whole-list reminder writes checked by the SDK validator; 7
  /// custom reminders (the 10-item list minus the 3 built-ins); `once` refused (3002); template
  /// with the SDK's defaults ("自定义提醒", every day, 08:00–20:00 every 60 min, lunch break on
  /// 12:00–14:00). Regular contacts are a stub in the SDK, so none; 1 emergency contact, names
  /// and phones up to 31 bytes; every listener answers 2004.
  public static let npk = DeviceCapabilities(
    profile: "npk",
    summary: "Npk (protobuf) watch: whole-list reminder writes, 7 custom reminders, no regular contacts (SDK stub), 1 emergency contact",
    reminders: ReminderCapabilities(
      operations: Set(ReminderOperation.allCases), maxCustomReminders: 7, maxTimePoints: 10, supportsOnce: false,
      sedentary: kind(), drinking: kind(), medicine: kind(), custom: kind(),
      customTemplate: npkTemplate(name: "自定义提醒")),
    contacts: ContactCapabilities(
      maxContacts: 0, supportsEmergencyContacts: true, maxEmergencyContacts: 1, nameMaxBytes: 31, phoneMaxBytes: 31,
      storesShortName: false, contactsChangedListener: false, emergencyContactsChangedListener: false,
      sosRequestListener: false))

  /// `fit`: FitCloud watches with personalized reminders. No replace-all; 5 custom slots; `once`
  /// stored; names cut to 30 and notes to 60 bytes; template (tsapply's choice: FitCloud keeps its
  /// defaults in a closed binary) enabled, every day, 08:00–20:00 every 60 min, lunch break off
  /// with the recommended window 12:00–14:00; 10 contacts, 1 emergency contact, no short names;
  /// only the SOS listener works.
  public static let fit = DeviceCapabilities(
    profile: "fit",
    summary: "FitCloud watch, personalized reminders: per-item writes, 5 custom slots, 10 contacts, 1 emergency contact",
    reminders: ReminderCapabilities(
      operations: [.fetchAll, .setReminder, .deleteReminder, .createCustomTemplate], maxCustomReminders: 5,
      maxTimePoints: 10, supportsOnce: true,
      sedentary: fitKind, drinking: fitKind, medicine: fitKind, custom: fitKind,
      customTemplate: Reminder(
        reminderId: "", reminderName: "", isEnabled: true, reminderType: .custom, repeatDays: .everyday,
        startTime: 480, endTime: 1200, interval: 60, isLunchBreakDNDEnabled: false,
        lunchBreakDNDStartTime: 720, lunchBreakDNDEndTime: 840)),
    contacts: fitContacts)

  /// `fit-basic`: older FitCloud firmware. Only sedentary and drinking, period only, repeat always
  /// every day, no names or notes; sedentary stores only the lunch-break flag, drinking none; no
  /// custom reminders, no template. Contacts as `fit`.
  public static let fitBasic = DeviceCapabilities(
    profile: "fit-basic",
    summary: "FitCloud watch, basic reminders: sedentary and drinking only, no names or notes, 10 contacts, 1 emergency contact",
    reminders: ReminderCapabilities(
      operations: [.fetchAll, .setReminder], maxCustomReminders: 0, maxTimePoints: 0, supportsOnce: false,
      sedentary: kind([.period], repeat: false, lunch: .flagOnly, name: nil, notes: nil),
      drinking: kind([.period], repeat: false, lunch: .none, name: nil, notes: nil),
      medicine: nil, custom: nil),
    contacts: fitContacts)

  /// `fw`: Persimwear watches. Built-ins only (no custom reminders, no template); replace-all;
  /// names 32 / notes 64 bytes, cut; `once` stored; 50 contacts with short names; 3 emergency
  /// contacts; the contact-change and SOS listeners work, the emergency one answers 2004.
  public static let fw = DeviceCapabilities(
    profile: "fw",
    summary: "Persimwear watch: built-in reminders only, 50 contacts with short names, 3 emergency contacts",
    reminders: ReminderCapabilities(
      operations: [.fetchAll, .replaceAll, .setReminder, .deleteReminder], maxCustomReminders: 0, maxTimePoints: 10,
      supportsOnce: true, sedentary: kind(truncates: true), drinking: kind(truncates: true),
      medicine: kind(truncates: true), custom: nil),
    contacts: ContactCapabilities(
      maxContacts: 50, supportsEmergencyContacts: true, maxEmergencyContacts: 3, nameMaxBytes: 32, phoneMaxBytes: 20,
      storesShortName: true, contactsChangedListener: true, emergencyContactsChangedListener: false,
      sosRequestListener: true))

  // MARK: Parts

  private static func kind(_ timeTypes: Set<ReminderTimeType> = [.period, .point], repeat storesRepeat: Bool = true,
                           lunch: LunchBreakSupport = .times, name: Int? = 32, notes: Int? = 64,
                           truncates: Bool = false) -> ReminderKindCapabilities {
    ReminderKindCapabilities(timeTypes: timeTypes, storesRepeatDays: storesRepeat, lunchBreak: lunch,
                             nameMaxBytes: name, notesMaxBytes: notes, truncatesLongText: truncates)
  }

  private static let fitKind = kind(name: 30, notes: 60, truncates: true)

  private static let fitContacts = ContactCapabilities(
    maxContacts: 10, supportsEmergencyContacts: true, maxEmergencyContacts: 1, nameMaxBytes: 32, phoneMaxBytes: 20,
    storesShortName: false, contactsChangedListener: false, emergencyContactsChangedListener: false,
    sosRequestListener: true)

  /// The Npk template defaults (docs/platforms.md "Custom-reminder templates") with `name`.
  private static func npkTemplate(name: String) -> Reminder {
    Reminder(reminderId: "", reminderName: name, isEnabled: true, reminderType: .custom, repeatDays: .everyday,
             startTime: 480, endTime: 1200, interval: 60, isLunchBreakDNDEnabled: true,
             lunchBreakDNDStartTime: 720, lunchBreakDNDEndTime: 840)
  }
}
