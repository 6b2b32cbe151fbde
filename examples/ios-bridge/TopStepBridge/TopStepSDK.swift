// `WatchSDK` (Sources/TSDevice/SDKDevice.swift) over TopStepComKit, the vendor's iOS SDK:
// each method is one SDK call with the models converted field for field and the SDK's NSError
// passed through unchanged. Everything above it (timeouts, completions taken once, listeners
// re-registered after a reconnect, capabilities, npk's contact stub) is the package's
// `SDKDevice`, tested on Linux against a fake SDK.
//
// Written against TopStepComKit 1.0.0-beta9, htangsmart/TopStepComKit commit b4e3d53 (the
// headers in TopStepInterfaceKit.xcframework: TSRemindersInterface.h, TSContactInterface.h,
// TSRemindersModel.h, TopStepContactModel.h, TSKitBaseInterface.h). Names, block signatures,
// nullability and enum raw types are read from those headers; this file has not been compiled
// (CI has no iOS SDK): the Swift spellings below are what Swift's importer makes of them.
import Foundation
import TopStepComKit
import TSDevice
import TSModel

/// The SDK's reminder and contact interfaces of `TopStepComKit.sharedInstance()`.
final class TopStepSDK: WatchSDK, @unchecked Sendable {
  private let kit: TopStepComKit

  init(kit: TopStepComKit = TopStepComKit.sharedInstance()) {
    self.kit = kit
  }

  /// `kit.reminder` / `kit.contact` are nil until `initSDKWithConfigOptions:completion:` finished.
  private func notReady(_ domain: DeviceError.Domain) -> DeviceError {
    DeviceError(domain, .notReady, "the SDK is not initialised (no reminder or contact interface)")
  }

  // MARK: Synchronous getters (NSInteger → Int, BOOL → Bool)

  func maxSupportedCustomReminderCount() -> Int { kit.reminder?.maxSupportedCustomReminderCount() ?? 0 }
  func supportMaxContacts() -> Int { kit.contact?.supportMaxContacts() ?? 0 }
  func supportMaxEmergencyContacts() -> Int { kit.contact?.supportMaxEmergencyContacts() ?? 0 }
  func isSupportEmergencyContacts() -> Bool { kit.contact?.isSupportEmergencyContacts() ?? false }

  // MARK: Reminders (TSRemindersInterface)

  func createCustomReminderTemplate(_ done: @escaping @Sendable (Result<Reminder, DeviceError>) -> Void) {
    guard let reminders = kit.reminder else { return done(.failure(notReady(.reminder))) }
    // - createCustomReminderTemplateWithCompletion:(void (^)(TSRemindersModel * _Nullable, NSError * _Nullable))
    reminders.createCustomReminderTemplate { model, error in
      done(Self.result(model.map(Reminder.init), error, .reminder))
    }
  }

  func fetchAllReminders(_ done: @escaping @Sendable (Result<[Reminder], DeviceError>) -> Void) {
    guard let reminders = kit.reminder else { return done(.failure(notReady(.reminder))) }
    // - fetchAllRemindersWithCompletion:(void (^)(NSArray<TSRemindersModel *> * _Nullable, NSError * _Nullable))
    reminders.fetchAllReminders { models, error in
      done(Self.result(models.map { $0.map(Reminder.init) }, error, .reminder))
    }
  }

  func replaceAllReminders(_ list: [Reminder], _ done: @escaping @Sendable (Result<Void, DeviceError>) -> Void) {
    guard let reminders = kit.reminder else { return done(.failure(notReady(.reminder))) }
    // - replaceAllReminders:(NSArray<TSRemindersModel *> *) completion:(TSCompletionBlock)
    reminders.replaceAllReminders(list.map(TSRemindersModel.make)) { isSuccess, error in
      done(Self.outcome(isSuccess, error, .reminder))
    }
  }

  func setReminder(_ reminder: Reminder, _ done: @escaping @Sendable (Result<Void, DeviceError>) -> Void) {
    guard let reminders = kit.reminder else { return done(.failure(notReady(.reminder))) }
    // - setReminder:(TSRemindersModel *) completion:(TSCompletionBlock)
    reminders.setReminder(TSRemindersModel.make(reminder)) { isSuccess, error in
      done(Self.outcome(isSuccess, error, .reminder))
    }
  }

  func deleteReminder(id: String, _ done: @escaping @Sendable (Result<Void, DeviceError>) -> Void) {
    guard let reminders = kit.reminder else { return done(.failure(notReady(.reminder))) }
    // - deleteReminderWithId:(NSString *) completion:(TSCompletionBlock)
    reminders.deleteReminder(withId: id) { isSuccess, error in
      done(Self.outcome(isSuccess, error, .reminder))
    }
  }

  // MARK: Contacts (TSContactInterface)

  func getAllContacts(_ done: @escaping @Sendable (Result<[Contact], DeviceError>) -> Void) {
    guard let contacts = kit.contact else { return done(.failure(notReady(.contact))) }
    // - getAllContacts:(void (^)(NSArray<TopStepContactModel *> * _Nullable, NSError * _Nullable))
    contacts.getAllContacts { models, error in
      done(Self.result(models.map { $0.map(Contact.init) }, error, .contact))
    }
  }

  func setAllContacts(_ list: [Contact], _ done: @escaping @Sendable (Result<Void, DeviceError>) -> Void) {
    guard let contacts = kit.contact else { return done(.failure(notReady(.contact))) }
    let models: [TopStepContactModel]
    do { models = try TopStepContactModel.make(list) } catch { return done(.failure(error)) }
    // - setAllContacts:(NSArray<TopStepContactModel *> * _Nullable) completion:(TSCompletionBlock)
    contacts.setAllContacts(models) { isSuccess, error in
      done(Self.outcome(isSuccess, error, .contact))
    }
  }

  func getEmergencyContacts(_ done: @escaping @Sendable (Result<EmergencyContacts, DeviceError>) -> Void) {
    guard let contacts = kit.contact else { return done(.failure(notReady(.contact))) }
    // - getEmergencyContacts:(void (^)(NSArray<TopStepContactModel *> * _Nullable, BOOL isSosOn, NSError * _Nullable))
    contacts.getEmergencyContacts { models, isSosOn, error in
      done(Self.result(models.map { EmergencyContacts(contacts: $0.map(Contact.init), isSosOn: isSosOn) }, error, .contact))
    }
  }

  func setEmergencyContacts(_ list: [Contact], sosOn: Bool, _ done: @escaping @Sendable (Result<Void, DeviceError>) -> Void) {
    guard let contacts = kit.contact else { return done(.failure(notReady(.contact))) }
    let models: [TopStepContactModel]
    do { models = try TopStepContactModel.make(list) } catch { return done(.failure(error)) }
    // - setEmergencyContacts:(NSArray<TopStepContactModel *> * _Nullable) sosOn:(BOOL) completion:(TSCompletionBlock)
    contacts.setEmergencyContacts(models, sosOn: sosOn) { isSuccess, error in
      done(Self.outcome(isSuccess, error, .contact))
    }
  }

  // MARK: Listeners

  func register(_ kind: DeviceEvent.Kind, _ report: @escaping @Sendable (SDKListeners.Report) -> Void) {
    guard let contacts = kit.contact else { return report(.failed(notReady(.contact))) }
    switch kind {
    case .contactsChanged:
      // - registerContactsDidChangedBlock:(void (^)(NSArray<TopStepContactModel *> * _NullableallContacts, NSError * _Nullable))
      // The header's missing space makes `_NullableallContacts` the parameter's name, so the
      // array is nonnull (NS_ASSUME_NONNULL) in Swift: `[TopStepContactModel]`.
      contacts.registerContactsDidChangedBlock { models, error in
        report(error.map { .failed(DeviceError($0)) } ?? .contacts(models.map(Contact.init)))
      }
    case .emergencyContactsChanged:
      // - registerEmergencyContactsDidChangedBlock:(void (^)(NSArray<TopStepContactModel *> * _Nullable, NSError * _Nullable))
      contacts.registerEmergencyContactsDidChangedBlock { models, error in
        report(error.map { .failed(DeviceError($0)) } ?? .contacts((models ?? []).map(Contact.init)))
      }
    case .sosRequested:
      // - registerSOSRequestBlock:(void (^)(NSError * _Nullable))
      contacts.registerSOSRequestBlock { error in
        report(error.map { .failed(DeviceError($0)) } ?? .sos)
      }
    }
  }

  // MARK: Completion shapes

  /// A value-or-error completion: the error when there is one, else the value, else 4001.
  static func result<T>(_ value: T?, _ error: Error?, _ domain: DeviceError.Domain) -> Result<T, DeviceError> {
    if let error { return .failure(DeviceError(error)) }
    guard let value else { return .failure(DeviceError(domain, .dataGetFailed, "the SDK answered with neither a value nor an error")) }
    return .success(value)
  }

  /// `TSCompletionBlock` is `(BOOL isSuccess, NSError * _Nullable error)` (TSKitBaseInterface.h;
  /// one SDK doc page shows an error-only form, which the headers do not have).
  static func outcome(_ isSuccess: Bool, _ error: Error?, _ domain: DeviceError.Domain) -> Result<Void, DeviceError> {
    if let error { return .failure(DeviceError(error)) }
    return isSuccess ? .success(()) : .failure(DeviceError(domain, .unknown, "the SDK reported a failure without an error"))
  }
}

// MARK: Models

extension DeviceError {
  /// The SDK's NSError as it is: its domain, its code (TSErrorCode), its localized description.
  init(_ error: Error) {
    let error = error as NSError
    self.init(Domain(rawValue: error.domain), TSErrorCode(error.code), error.localizedDescription)
  }
}

extension Reminder {
  /// `TSRemindersModel`, field for field. The enums are NSInteger-backed (`TSReminderType`,
  /// `TSRemindersRepeat` (NS_OPTIONS), `TSReminderTimeType`), so raw values are `Int` on both sides.
  init(_ model: TSRemindersModel) {
    self.init(reminderId: model.reminderId, reminderName: model.reminderName, isEnabled: model.isEnabled,
              reminderType: ReminderType(rawValue: model.reminderType.rawValue) ?? .unknown,
              repeatDays: RepeatDays(rawValue: model.repeatDays.rawValue),
              timeType: ReminderTimeType(rawValue: model.timeType.rawValue) ?? .period,
              startTime: model.startTime, endTime: model.endTime, interval: model.interval,
              timePoints: model.timePoints.map(\.intValue), notes: model.notes,
              isLunchBreakDNDEnabled: model.isLunchBreakDNDEnabled,
              lunchBreakDNDStartTime: model.lunchBreakDNDStartTime, lunchBreakDNDEndTime: model.lunchBreakDNDEndTime)
  }
}

extension TSRemindersModel {
  /// A model carrying `reminder`'s fields. The ID comes from the watch (a template's or a read
  /// reminder's), as the SDK requires: tsapply never invents one. (`enabled` has the getter
  /// `isEnabled`, which is its Swift name.)
  static func make(_ reminder: Reminder) -> TSRemindersModel {
    let model = TSRemindersModel()
    model.reminderId = reminder.reminderId
    model.reminderName = reminder.reminderName
    model.isEnabled = reminder.isEnabled
    model.reminderType = TSReminderType(rawValue: reminder.reminderType.rawValue) ?? .unknown
    model.repeatDays = TSRemindersRepeat(rawValue: reminder.repeatDays.rawValue)
    model.timeType = TSReminderTimeType(rawValue: reminder.timeType.rawValue) ?? .period
    model.startTime = reminder.startTime
    model.endTime = reminder.endTime
    model.interval = reminder.interval
    model.timePoints = reminder.timePoints.map { NSNumber(value: $0) }
    model.notes = reminder.notes
    model.isLunchBreakDNDEnabled = reminder.isLunchBreakDNDEnabled
    model.lunchBreakDNDStartTime = reminder.lunchBreakDNDStartTime
    model.lunchBreakDNDEndTime = reminder.lunchBreakDNDEndTime
    return model
  }
}

extension Contact {
  /// `TopStepContactModel`, field for field (`shortName` is nonnull in the header but nil when
  /// the 2-argument factory made the model; Swift bridges a nil NSString to "").
  init(_ model: TopStepContactModel) {
    let short = model.shortName
    self.init(name: model.name, phoneNum: model.phoneNum, shortName: short.isEmpty ? nil : short)
  }
}

extension TopStepContactModel {
  /// The SDK's models for `contacts`, made by its factories, which clean and cut as the watch
  /// would: `+contactWithName:phoneNum:` and `+contactWithName:phoneNum:shortName:`, imported as
  /// the class methods `contact(withName:phoneNum:)` and `contact(withName:phoneNum:shortName:)`
  /// (not initializers: the selector does not start with the class name's last word).
  /// - Throws: 3001 for a contact the factory refuses (it returns nil for an empty name, or a
  ///   phone with no digit or `+`, although the header declares the result nonnull), naming its
  ///   position, never its name or number.
  static func make(_ contacts: [Contact]) throws(DeviceError) -> [TopStepContactModel] {
    var models: [TopStepContactModel] = []
    for (index, contact) in contacts.enumerated() {
      let refused = DeviceError(.contact, .invalidParam, "contact \(index + 1): the SDK refuses an empty name or a phone number without digits")
      guard !contact.name.isEmpty, contact.phoneNum.contains(where: { "0123456789+".contains($0) }) else { throw refused }
      let made = contact.shortName.map { TopStepContactModel.contact(withName: contact.name, phoneNum: contact.phoneNum, shortName: $0) }
        ?? TopStepContactModel.contact(withName: contact.name, phoneNum: contact.phoneNum)
      guard let model = present(made) else { throw refused }
      models.append(model)
    }
    return models
  }
}

/// `object` as an optional the optimizer cannot assume present: the factories are declared
/// nonnull but return nil for input they refuse, and a Swift nil test on a nonnull import could
/// be folded away.
@_optimize(none)
private func present(_ object: TopStepContactModel?) -> TopStepContactModel? { object }
