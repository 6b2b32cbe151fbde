/// What a watch platform can store and do, read before planning so that capability problems
/// are found at plan time, never half-way through an apply.
///
/// Values follow the platform table in docs/platforms.md "The table" and the details in docs/platforms.md "Custom-reminder templates", "Lunch break", "Contacts".
public struct DeviceCapabilities: Hashable, Codable, Sendable {
  /// Profile name of the platform, e.g. `npk`, `fit`, `fit-basic`, `fw`, `default`.
  public var profile: String
  /// One line describing the platform, for `tsapply device profiles`.
  public var summary: String
  /// Reminder limits and operations.
  public var reminders: ReminderCapabilities
  /// Contact and emergency-contact limits and operations.
  public var contacts: ContactCapabilities

  /// Capabilities of platform `profile` (e.g. `npk`), described by the one-line `summary`.
  public init(profile: String, summary: String, reminders: ReminderCapabilities, contacts: ContactCapabilities) {
    self.profile = profile
    self.summary = summary
    self.reminders = reminders
    self.contacts = contacts
  }
}

/// The reminder operations of `TSRemindersInterface` a platform implements; others answer 2004.
public enum ReminderOperation: String, Hashable, Codable, Sendable, CaseIterable, Comparable {
  /// `fetchAllRemindersWithCompletion:`.
  case fetchAll
  /// `replaceAllReminders:completion:`.
  case replaceAll
  /// `setReminder:completion:`.
  case setReminder
  /// `deleteReminderWithId:completion:`.
  case deleteReminder
  /// `createCustomReminderTemplateWithCompletion:`.
  case createCustomTemplate

  public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

/// How a platform stores lunch-break do-not-disturb for one kind of reminder.
public enum LunchBreakSupport: String, Hashable, Codable, Sendable {
  /// Not stored; reads back off, 0, 0 (Fit-Basic drinking).
  case none
  /// Only the on/off flag; times read back 0, 0 (Fit-Basic sedentary).
  case flagOnly
  /// Flag, start and end.
  case times
}

/// What a platform stores for one kind of reminder (built-in or custom).
public struct ReminderKindCapabilities: Hashable, Codable, Sendable {
  /// The schedules the platform stores for this kind (Fit-Basic: period only).
  public var timeTypes: Set<ReminderTimeType>
  /// Whether `repeatDays` is stored (Fit-Basic reads back 127 always).
  public var storesRepeatDays: Bool
  /// Lunch-break storage.
  public var lunchBreak: LunchBreakSupport
  /// Byte limit of the stored name, UTF-8; `nil` when names are not stored.
  public var nameMaxBytes: Int?
  /// Byte limit of the stored notes, UTF-8; `nil` when notes are not stored.
  public var notesMaxBytes: Int?
  /// Whether a name longer than `nameMaxBytes` is cut by the watch (Fit, FitCloud auto-cut)
  /// rather than rejected.
  public var truncatesLongText: Bool

  /// Storage of one reminder kind; byte limits are of UTF-8, `nil` when the field is not stored.
  public init(timeTypes: Set<ReminderTimeType>, storesRepeatDays: Bool, lunchBreak: LunchBreakSupport,
              nameMaxBytes: Int?, notesMaxBytes: Int?, truncatesLongText: Bool) {
    self.timeTypes = timeTypes
    self.storesRepeatDays = storesRepeatDays
    self.lunchBreak = lunchBreak
    self.nameMaxBytes = nameMaxBytes
    self.notesMaxBytes = notesMaxBytes
    self.truncatesLongText = truncatesLongText
  }
}

/// Reminder limits of a platform.
public struct ReminderCapabilities: Hashable, Codable, Sendable {
  /// Operations implemented; a missing one answers 2004 (not supported).
  public var operations: Set<ReminderOperation>
  /// `maxSupportedCustomReminderCount`: custom reminders the watch holds; 0 = none.
  public var maxCustomReminders: Int
  /// Most time points one reminder may hold (Npk proto: 10).
  public var maxTimePoints: Int
  /// Whether `repeatDays == 0` ("once") is accepted (Fit: yes; Npk: 3002).
  public var supportsOnce: Bool
  /// Per-kind storage for the built-ins the platform has (absent = the built-in does not exist)
  /// and for custom reminders (absent when `maxCustomReminders == 0`).
  public var sedentary: ReminderKindCapabilities?
  /// The drinking built-in (ID 1); `nil` when the platform lacks it.
  public var drinking: ReminderKindCapabilities?
  /// The medicine built-in (ID 2); `nil` when the platform lacks it.
  public var medicine: ReminderKindCapabilities?
  /// Custom reminders (type 4); `nil` when `maxCustomReminders == 0`.
  public var custom: ReminderKindCapabilities?
  /// What `createCustomReminderTemplateWithCompletion:` returns, without the device-assigned
  /// ID (`reminderId` ""): the defaults a new custom reminder starts from, before the manifest's
  /// fields are laid over it. `nil` where the platform has no template call (docs/platforms.md
  /// "Custom-reminder templates").
  public var customTemplate: Reminder?

  /// Reminder limits; `nil` per-kind storage means the platform lacks that kind; `customTemplate`
  /// is the template call's answer without its ID.
  public init(operations: Set<ReminderOperation>, maxCustomReminders: Int, maxTimePoints: Int, supportsOnce: Bool,
              sedentary: ReminderKindCapabilities?, drinking: ReminderKindCapabilities?,
              medicine: ReminderKindCapabilities?, custom: ReminderKindCapabilities?,
              customTemplate: Reminder? = nil) {
    self.operations = operations
    self.maxCustomReminders = maxCustomReminders
    self.maxTimePoints = maxTimePoints
    self.supportsOnce = supportsOnce
    self.sedentary = sedentary
    self.drinking = drinking
    self.medicine = medicine
    self.custom = custom
    self.customTemplate = customTemplate
  }

  /// Storage for `kind`; `nil` when the platform does not have that kind of reminder.
  public subscript(kind: ReminderKind) -> ReminderKindCapabilities? {
    switch kind {
    case .sedentary: sedentary
    case .drinking: drinking
    case .medicine: medicine
    case .custom: custom
    }
  }
}

/// Contact limits of a platform.
public struct ContactCapabilities: Hashable, Codable, Sendable {
  /// `supportMaxContacts`; 0 means regular contacts are not supported.
  public var maxContacts: Int
  /// `isSupportEmergencyContacts`.
  public var supportsEmergencyContacts: Bool
  /// `supportMaxEmergencyContacts`.
  public var maxEmergencyContacts: Int
  /// Byte limit of a stored contact name (32; Npk emergency 31).
  public var nameMaxBytes: Int
  /// Byte limit of a stored phone number (20 on Fit; 31 on Npk).
  public var phoneMaxBytes: Int
  /// Whether `shortName` is stored (Fw) or reads back `nil` (Fit, Npk).
  public var storesShortName: Bool
  /// Whether `registerContactsDidChangedBlock:` ever fires (else 2004).
  public var contactsChangedListener: Bool
  /// Whether `registerEmergencyContactsDidChangedBlock:` ever fires (else 2004).
  public var emergencyContactsChangedListener: Bool
  /// Whether `registerSOSRequestBlock:` is supported (else 2004).
  public var sosRequestListener: Bool

  /// Contact limits; counts are items, `…MaxBytes` are bytes of UTF-8.
  public init(maxContacts: Int, supportsEmergencyContacts: Bool, maxEmergencyContacts: Int,
              nameMaxBytes: Int, phoneMaxBytes: Int, storesShortName: Bool,
              contactsChangedListener: Bool, emergencyContactsChangedListener: Bool, sosRequestListener: Bool) {
    self.maxContacts = maxContacts
    self.supportsEmergencyContacts = supportsEmergencyContacts
    self.maxEmergencyContacts = maxEmergencyContacts
    self.nameMaxBytes = nameMaxBytes
    self.phoneMaxBytes = phoneMaxBytes
    self.storesShortName = storesShortName
    self.contactsChangedListener = contactsChangedListener
    self.emergencyContactsChangedListener = emergencyContactsChangedListener
    self.sosRequestListener = sosRequestListener
  }
}
