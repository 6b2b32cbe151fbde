// The `Device` protocol (tsapply's Sources/TSDevice/Device.swift) over TopStepComKit, one SDK
// call per operation, the SDK's NSError domain and code passed through unchanged.
//
// A thin mapping on purpose: everything that can be tested lives in the tsapply package and is
// tested there against the simulated watch. CI cannot build this file (it needs the SDK).
import Foundation
import TopStepComKit
import TSDevice
import TSModel

/// One watch, reached through the SDK's reminder and contact interfaces
/// (`[device getInterface:@"TSRemindersInterface"]`, `@"TSContactInterface"`).
final class TopStepDevice: Device, @unchecked Sendable {
  /// `bridge:` identities are made by the bridge from the MAC; this is the app-local name.
  let identity: String
  let reminders: any TSRemindersInterface
  let contacts: any TSContactInterface
  let platform: String

  /// `platform` is the engine's name for the SDK platform the watch runs (`npk`, `fit`,
  /// `fit-basic`, `fw`); its capability row comes from the package's one table.
  init(mac: String, platform: String, reminders: any TSRemindersInterface, contacts: any TSContactInterface) {
    identity = "topstep:" + mac
    self.platform = platform
    self.reminders = reminders
    self.contacts = contacts
  }

  // MARK: Capabilities

  /// The platform's row of `PlatformTable`, with the SDK's own limit getters over it.
  func capabilities() async throws(DeviceError) -> DeviceCapabilities {
    guard var capabilities = PlatformTable.named(platform) else {
      throw DeviceError(.reminder, .notSupport, "unknown platform \(platform)")
    }
    capabilities.reminders.maxCustomReminders = reminders.supportMaxCustomeReminders()
    capabilities.contacts.maxContacts = contacts.supportMaxContacts()
    capabilities.contacts.maxEmergencyContacts = contacts.supportMaxEmergencyContacts()
    capabilities.contacts.supportsEmergencyContacts = contacts.isSupportEmergencyContacts()
    return capabilities
  }

  // MARK: Reminders (TSRemindersInterface)

  func createCustomReminderTemplate() async throws(DeviceError) -> Reminder {
    try await sdk { done in
      self.reminders.createCustomReminderTemplate { model, error in done(model.map(Reminder.init), error) }
    }
  }

  func fetchAllReminders() async throws(DeviceError) -> [Reminder] {
    try await sdk { done in
      self.reminders.getAllReminders { models, error in done(models.map(Reminder.init), error) }
    }
  }

  func replaceAllReminders(_ list: [Reminder]) async throws(DeviceError) {
    try await sdkDone { done in self.reminders.setReminders(list.map(TSRemindersModel.init), completion: done) }
  }

  func setReminder(_ reminder: Reminder) async throws(DeviceError) {
    try await sdkDone { done in self.reminders.updateReminder(TSRemindersModel(reminder), completion: done) }
  }

  func deleteReminder(id: String) async throws(DeviceError) {
    try await sdkDone { done in self.reminders.deleteReminder(withId: id, completion: done) }
  }

  // MARK: Contacts (TSContactInterface)

  func getAllContacts() async throws(DeviceError) -> [Contact] {
    try await sdk { done in
      self.contacts.getAllContacts { models, error in done((models ?? []).map(Contact.init), error) }
    }
  }

  func setAllContacts(_ list: [Contact]) async throws(DeviceError) {
    try await sdkDone { done in
      self.contacts.setAllContacts(list.map(TopStepContactModel.init)) { _, error in done(error) }
    }
  }

  func getEmergencyContacts() async throws(DeviceError) -> EmergencyContacts {
    try await sdk { done in
      self.contacts.getEmergencyContacts { models, isSosOn, error in
        done(EmergencyContacts(contacts: (models ?? []).map(Contact.init), isSosOn: isSosOn), error)
      }
    }
  }

  func setEmergencyContacts(_ list: [Contact], sosOn: Bool) async throws(DeviceError) {
    try await sdkDone { done in
      self.contacts.setEmergencyContacts(list.map(TopStepContactModel.init), sosOn: sosOn) { _, error in done(error) }
    }
  }

  // MARK: Listeners

  func registerContactsDidChange(_ handler: @escaping @Sendable (Result<[Contact], DeviceError>) -> Void) async {
    contacts.registerContactsDidChangedBlock { models, error in
      handler(error.map { .failure(DeviceError($0)) } ?? .success((models ?? []).map(Contact.init)))
    }
  }

  func registerEmergencyContactsDidChange(_ handler: @escaping @Sendable (Result<[Contact], DeviceError>) -> Void) async {
    contacts.registerEmergencyContactsDidChangedBlock { models, error in
      handler(error.map { .failure(DeviceError($0)) } ?? .success((models ?? []).map(Contact.init)))
    }
  }

  func registerSOSRequest(_ handler: @escaping @Sendable (DeviceError?) -> Void) async {
    contacts.registerSOSRequestBlock { error in handler(error.map(DeviceError.init)) }
  }

  // MARK: Completion blocks to async

  /// Waits for an SDK completion giving a value or an error.
  private func sdk<T>(_ call: (@escaping (T?, Error?) -> Void) -> Void) async throws(DeviceError) -> T {
    let result: Result<T, DeviceError> = await withCheckedContinuation { continuation in
      call { value, error in
        if let error { continuation.resume(returning: .failure(DeviceError(error))) }
        else if let value { continuation.resume(returning: .success(value)) }
        else { continuation.resume(returning: .failure(DeviceError(.reminder, .dataGetFailed, "the SDK returned nothing"))) }
      }
    }
    return try result.get()
  }

  /// Waits for an SDK completion giving only an error.
  private func sdkDone(_ call: (@escaping (Error?) -> Void) -> Void) async throws(DeviceError) {
    let error: DeviceError? = await withCheckedContinuation { continuation in
      call { error in continuation.resume(returning: error.map(DeviceError.init)) }
    }
    if let error { throw error }
  }
}

// MARK: Models

extension DeviceError {
  /// The SDK's NSError as is: its domain, its code (TSErrorCode), its localized description.
  init(_ error: Error) {
    let error = error as NSError
    self.init(Domain(rawValue: error.domain), TSErrorCode(error.code), error.localizedDescription)
  }
}

extension Reminder {
  /// `TSRemindersModel`, field for field.
  init(_ model: TSRemindersModel) {
    self.init(reminderId: model.reminderId, reminderName: model.reminderName ?? "", isEnabled: model.isEnabled,
              reminderType: ReminderType(rawValue: Int(model.reminderType.rawValue)) ?? .unknown,
              repeatDays: RepeatDays(rawValue: Int(model.repeatDays.rawValue)),
              timeType: ReminderTimeType(rawValue: Int(model.timeType.rawValue)) ?? .period,
              startTime: model.startTime, endTime: model.endTime, interval: model.interval,
              timePoints: (model.timePoints ?? []).map(\.intValue), notes: model.notes ?? "",
              isLunchBreakDNDEnabled: model.isLunchBreakDNDEnabled,
              lunchBreakDNDStartTime: model.lunchBreakDNDStartTime, lunchBreakDNDEndTime: model.lunchBreakDNDEndTime)
  }
}

extension TSRemindersModel {
  /// A model carrying `reminder`'s fields. The ID comes from the watch (a template's or a read
  /// reminder's), as the SDK requires: tsapply never invents one.
  convenience init(_ reminder: Reminder) {
    self.init()
    reminderId = reminder.reminderId
    reminderName = reminder.reminderName
    isEnabled = reminder.isEnabled
    reminderType = TSReminderType(rawValue: UInt(reminder.reminderType.rawValue)) ?? .unknown
    repeatDays = TSReminderDays(rawValue: UInt(reminder.repeatDays.rawValue))
    timeType = TSReminderTimeType(rawValue: UInt(reminder.timeType.rawValue)) ?? .period
    startTime = reminder.startTime
    endTime = reminder.endTime
    interval = reminder.interval
    timePoints = reminder.timePoints.map { NSNumber(value: $0) }
    notes = reminder.notes
    isLunchBreakDNDEnabled = reminder.isLunchBreakDNDEnabled
    lunchBreakDNDStartTime = reminder.lunchBreakDNDStartTime
    lunchBreakDNDEndTime = reminder.lunchBreakDNDEndTime
  }
}

extension Contact {
  /// `TopStepContactModel`, field for field.
  init(_ model: TopStepContactModel) {
    self.init(name: model.name ?? "", phoneNum: model.phoneNum ?? "", shortName: model.shortName)
  }
}

extension TopStepContactModel {
  /// The SDK's factory (which truncates and cleans as the watch would), with `shortName` when given.
  static func from(_ contact: Contact) -> TopStepContactModel {
    if let shortName = contact.shortName {
      return TopStepContactModel(name: contact.name, phoneNum: contact.phoneNum, shortName: shortName)
    }
    return TopStepContactModel(name: contact.name, phoneNum: contact.phoneNum)
  }

  convenience init(_ contact: Contact) {
    let made = TopStepContactModel.from(contact)
    self.init()
    name = made.name
    phoneNum = made.phoneNum
    shortName = made.shortName
  }
}
