import Foundation
import TSModel

/// The vendor SDK as the companion app's adapter hands it to `SDKDevice`: each method forwards
/// to one TopStepComKit call (named in its comment, SDK 1.0.0-beta9, docs/platforms.md "The SDK
/// calls"), converting models and nothing else, and calls `done` as the SDK calls its
/// completion (on the main queue, maybe late, never or twice: `SDKDevice` copes).
public protocol WatchSDK: AnyObject, Sendable {
  /// `maxSupportedCustomReminderCount`.
  func maxSupportedCustomReminderCount() -> Int
  /// `supportMaxContacts`.
  func supportMaxContacts() -> Int
  /// `supportMaxEmergencyContacts`.
  func supportMaxEmergencyContacts() -> Int
  /// `isSupportEmergencyContacts`.
  func isSupportEmergencyContacts() -> Bool
  /// `createCustomReminderTemplateWithCompletion:`.
  func createCustomReminderTemplate(_ done: @escaping @Sendable (Result<Reminder, DeviceError>) -> Void)
  /// `fetchAllRemindersWithCompletion:`.
  func fetchAllReminders(_ done: @escaping @Sendable (Result<[Reminder], DeviceError>) -> Void)
  /// `replaceAllReminders:completion:`.
  func replaceAllReminders(_ reminders: [Reminder], _ done: @escaping @Sendable (Result<Void, DeviceError>) -> Void)
  /// `setReminder:completion:`.
  func setReminder(_ reminder: Reminder, _ done: @escaping @Sendable (Result<Void, DeviceError>) -> Void)
  /// `deleteReminderWithId:completion:`.
  func deleteReminder(id: String, _ done: @escaping @Sendable (Result<Void, DeviceError>) -> Void)
  /// `getAllContacts:`.
  func getAllContacts(_ done: @escaping @Sendable (Result<[Contact], DeviceError>) -> Void)
  /// `setAllContacts:completion:`; a contact the SDK's factory refuses (`contactWithName:phoneNum:`
  /// returns nil) is reported as 3001 without calling the SDK.
  func setAllContacts(_ contacts: [Contact], _ done: @escaping @Sendable (Result<Void, DeviceError>) -> Void)
  /// `getEmergencyContacts:`.
  func getEmergencyContacts(_ done: @escaping @Sendable (Result<EmergencyContacts, DeviceError>) -> Void)
  /// `setEmergencyContacts:sosOn:completion:`.
  func setEmergencyContacts(_ contacts: [Contact], sosOn: Bool, _ done: @escaping @Sendable (Result<Void, DeviceError>) -> Void)
  /// `registerContactsDidChangedBlock:`, `registerEmergencyContactsDidChangedBlock:`,
  /// `registerSOSRequestBlock:` for `kind`, the block converted to `report`.
  func register(_ kind: DeviceEvent.Kind, _ report: @escaping @Sendable (SDKListeners.Report) -> Void)
}

/// A watch reached through the vendor SDK (`WatchSDK`), as the companion app serves it: every
/// SDK call waits at most `timeout` and takes its completion once (`SDKCompletion`); listeners
/// go through the shared `SDKListeners` (re-registered after every reconnect, never twice);
/// capabilities are the platform's row of `PlatformTable` with the SDK's limit getters over it,
/// except where the table says the SDK only stubs a feature (npk's regular contacts: 0, and the
/// calls answer 2004 without reaching the SDK, whose stub would report an empty list and a
/// write that never happened).
///
/// Everything here is tested on Linux against a fake SDK (Tests/TSDeviceTests/SDKAdapterTests.swift);
/// only the `WatchSDK` conformance in examples/ios-bridge needs the real SDK.
public final class SDKDevice: Device, @unchecked Sendable {
  public let identity: String
  /// `npk`, `fit`, `fit-basic` or `fw` (docs/platforms.md).
  public let platform: String
  let sdk: any WatchSDK
  let listeners: SDKListeners
  /// How long each SDK call may take.
  public let timeout: Duration
  private let onStray: @Sendable (SDKCompletion.Stray) -> Void

  /// The watch `identity` (e.g. `topstep:AA:BB:CC:DD:EE:FF`) on `platform`, reached through `sdk`,
  /// its listeners kept by `listeners` (one per SDK session, shared by every `SDKDevice` made
  /// for it); `onStray` hears of completions that came late or twice.
  public init(identity: String, platform: String, sdk: any WatchSDK, listeners: SDKListeners, timeout: Duration = .seconds(15),
              onStray: @escaping @Sendable (SDKCompletion.Stray) -> Void = { _ in }) {
    self.identity = identity
    self.platform = platform
    self.sdk = sdk
    self.listeners = listeners
    self.timeout = timeout
    self.onStray = onStray
  }

  /// The platform's row of `PlatformTable` with the SDK's getters over it.
  /// - Throws: 1004 (`sdkConfigError`) for a platform the table does not know.
  public func capabilities() async throws(DeviceError) -> DeviceCapabilities {
    guard var capabilities = PlatformTable.named(platform) else {
      throw DeviceError(.bleConnect, .sdkConfigError, "unknown platform '\(platform)'; expected one of \(PlatformTable.all.map(\.profile).joined(separator: ", "))")
    }
    capabilities.reminders.maxCustomReminders = sdk.maxSupportedCustomReminderCount()
    if capabilities.contacts.maxContacts > 0 { capabilities.contacts.maxContacts = sdk.supportMaxContacts() }
    capabilities.contacts.supportsEmergencyContacts = sdk.isSupportEmergencyContacts()
    capabilities.contacts.maxEmergencyContacts = capabilities.contacts.supportsEmergencyContacts ? sdk.supportMaxEmergencyContacts() : 0
    return capabilities
  }

  /// One SDK call awaited by `SDKCompletion`; `reads`: it only reads the watch.
  private func call<T: Sendable>(_ name: String, _ domain: DeviceError.Domain, reads: Bool = false,
                                 _ start: (@escaping @Sendable (Result<T, DeviceError>) -> Void) -> Void) async throws(DeviceError) -> T {
    try await SDKCompletion.wait(name, domain: domain, timeout: timeout, reads: reads, onStray: onStray, start)
  }

  // MARK: Reminders

  public func createCustomReminderTemplate() async throws(DeviceError) -> Reminder {
    try await call("createCustomReminderTemplateWithCompletion:", .reminder, reads: true) { sdk.createCustomReminderTemplate($0) }
  }

  public func fetchAllReminders() async throws(DeviceError) -> [Reminder] {
    try await call("fetchAllRemindersWithCompletion:", .reminder, reads: true) { sdk.fetchAllReminders($0) }
  }

  public func replaceAllReminders(_ reminders: [Reminder]) async throws(DeviceError) {
    try await call("replaceAllReminders:completion:", .reminder) { sdk.replaceAllReminders(reminders, $0) }
  }

  public func setReminder(_ reminder: Reminder) async throws(DeviceError) {
    try await call("setReminder:completion:", .reminder) { sdk.setReminder(reminder, $0) }
  }

  public func deleteReminder(id: String) async throws(DeviceError) {
    try await call("deleteReminderWithId:completion:", .reminder) { sdk.deleteReminder(id: id, $0) }
  }

  // MARK: Contacts

  /// npk's regular contacts: the SDK's stub would answer without reaching the watch.
  private var contactsStubbed: Bool { PlatformTable.named(platform)?.contacts.maxContacts == 0 }

  private func stub(_ name: String) -> DeviceError {
    DeviceError(.contact, .notSupport, "\(name) is a stub on \(platform) watches in the SDK (it never reaches the watch); regular contacts are not supported there")
  }

  public func getAllContacts() async throws(DeviceError) -> [Contact] {
    if contactsStubbed { throw stub("getAllContacts:") }
    return try await call("getAllContacts:", .contact, reads: true) { sdk.getAllContacts($0) }
  }

  public func setAllContacts(_ contacts: [Contact]) async throws(DeviceError) {
    if contactsStubbed { throw stub("setAllContacts:completion:") }
    try await call("setAllContacts:completion:", .contact) { sdk.setAllContacts(contacts, $0) }
  }

  public func getEmergencyContacts() async throws(DeviceError) -> EmergencyContacts {
    try await call("getEmergencyContacts:", .contact, reads: true) { sdk.getEmergencyContacts($0) }
  }

  public func setEmergencyContacts(_ contacts: [Contact], sosOn: Bool) async throws(DeviceError) {
    try await call("setEmergencyContacts:sosOn:completion:", .contact) { sdk.setEmergencyContacts(contacts, sosOn: sosOn, $0) }
  }

  // MARK: Listeners

  public func registerContactsDidChange(_ handler: @escaping @Sendable (Result<[Contact], DeviceError>) -> Void) async {
    listeners.add(.contactsChanged, owner: self) { handler(Self.contacts($0)) }
  }

  public func registerEmergencyContactsDidChange(_ handler: @escaping @Sendable (Result<[Contact], DeviceError>) -> Void) async {
    listeners.add(.emergencyContactsChanged, owner: self) { handler(Self.contacts($0)) }
  }

  public func registerSOSRequest(_ handler: @escaping @Sendable (DeviceError?) -> Void) async {
    listeners.add(.sosRequested, owner: self) { report in
      if case .failed(let error) = report { handler(error) } else { handler(nil) }
    }
  }

  /// Drops this device's listener handlers (the SDK registrations stay for the next device).
  public func close() async {
    listeners.removeHandlers(of: self)
  }

  static func contacts(_ report: SDKListeners.Report) -> Result<[Contact], DeviceError> {
    switch report {
    case .contacts(let list): .success(list)
    case .failed(let error): .failure(error)
    case .sos: .success([])
    }
  }
}
