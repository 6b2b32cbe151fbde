import Foundation
import TSDevice
import TSModel

/// The methods of `POST /v1/watches/{id}/call`: exactly the `Device` operations
/// (Sources/TSDevice/Device.swift), plus `readState`, everything tsapply manages in one round trip.
public enum BridgeMethod: String, CaseIterable, Codable, Sendable {
  /// `capabilities()` → `DeviceCapabilities`.
  case capabilities
  /// `readState(capabilities:)` → `DeviceState` (the bridge makes the SDK's read calls).
  case readState
  /// `createCustomReminderTemplate()` → `Reminder`.
  case createCustomReminderTemplate
  /// `fetchAllReminders()` → `[Reminder]`.
  case fetchAllReminders
  /// `replaceAllReminders(_:)`, args `{reminders}` → `null`.
  case replaceAllReminders
  /// `setReminder(_:)`, args `{reminder}` → `null`.
  case setReminder
  /// `deleteReminder(id:)`, args `{id}` → `null`.
  case deleteReminder
  /// `getAllContacts()` → `[Contact]`.
  case getAllContacts
  /// `setAllContacts(_:)`, args `{contacts}` → `null`.
  case setAllContacts
  /// `getEmergencyContacts()` → `EmergencyContacts`.
  case getEmergencyContacts
  /// `setEmergencyContacts(_:sosOn:)`, args `{contacts, sosOn}` → `null`.
  case setEmergencyContacts

  /// Whether the method changes the watch: such a call is refused (409) while another client
  /// holds the watch's lease, and is never retried by a client.
  public var writes: Bool {
    switch self {
    case .replaceAllReminders, .setReminder, .deleteReminder, .setAllContacts, .setEmergencyContacts: true
    default: false
    }
  }

  /// The SDK error domain of the method's module (a timeout of this call is 6001 in it).
  public var domain: DeviceError.Domain {
    switch self {
    case .capabilities, .readState, .createCustomReminderTemplate, .fetchAllReminders, .replaceAllReminders,
         .setReminder, .deleteReminder: .reminder
    case .getAllContacts, .setAllContacts, .getEmergencyContacts, .setEmergencyContacts: .contact
    }
  }
}

/// Arguments of the methods that take some (the `args` object).
public enum BridgeArgs {
  /// `replaceAllReminders`: `{"reminders": [Reminder]}`.
  public struct Reminders: Codable, Sendable {
    /// The whole new list.
    public var reminders: [Reminder]
    /// The arguments.
    public init(reminders: [Reminder]) { self.reminders = reminders }
  }
  /// `setReminder`: `{"reminder": Reminder}`.
  public struct OneReminder: Codable, Sendable {
    /// The reminder to upsert by `reminderId`.
    public var reminder: Reminder
    /// The arguments.
    public init(reminder: Reminder) { self.reminder = reminder }
  }
  /// `deleteReminder`: `{"id": "32"}`.
  public struct ReminderID: Codable, Sendable {
    /// The `reminderId` to delete.
    public var id: String
    /// The arguments.
    public init(id: String) { self.id = id }
  }
  /// `setAllContacts`: `{"contacts": [Contact]}`.
  public struct Contacts: Codable, Sendable {
    /// The whole new list, in order.
    public var contacts: [Contact]
    /// The arguments.
    public init(contacts: [Contact]) { self.contacts = contacts }
  }
  /// `setEmergencyContacts`: `{"contacts": [Contact], "sosOn": true}`.
  public struct Emergency: Codable, Sendable {
    /// The emergency list.
    public var contacts: [Contact]
    /// The SOS switch.
    public var sosOn: Bool
    /// The arguments.
    public init(contacts: [Contact], sosOn: Bool) {
      self.contacts = contacts
      self.sosOn = sosOn
    }
  }
}

/// The body of `POST /v1/watches/{id}/call` (the plaintext of its seal).
public struct CallRequest<Args: Codable & Sendable>: Codable, Sendable {
  /// The method's name (`BridgeMethod.rawValue`).
  public var method: String
  /// Its arguments; `{}` or absent for methods without.
  public var args: Args?
  /// The caller's lease token, for every call (reads too) while it holds the watch's lease.
  public var lease: String?
  /// The call's number under `lease` (1, 2, … in the order the caller makes them, one at a
  /// time; protocol 1.2): the bridge refuses a write numbered below a call of the same lease it
  /// has already seen — the write was held back on the way past the calls its sender made
  /// after giving up on it (docs/bridge-protocol.md "Leases"). Absent: not checked.
  public var sequence: Int?

  /// A call of `method` with `args`, under `lease` as its call number `sequence`.
  public init(method: BridgeMethod, args: Args?, lease: String? = nil, sequence: Int? = nil) {
    self.method = method.rawValue
    self.args = args
    self.lease = lease
    self.sequence = sequence
  }
}

/// JSON as the protocol writes it: UTF-8, keys sorted, `/` not escaped.
public enum BridgeJSON {
  /// The encoder.
  public static func encode<T: Encodable>(_ value: T) -> [UInt8] {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return (try? Array(encoder.encode(value))) ?? Array("null".utf8)
  }

  /// The value of type `T` in `bytes`; `nil` for anything else.
  public static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) -> T? {
    try? JSONDecoder().decode(type, from: Data(bytes))
  }
}

/// A call request read on the bridge side: its method, the lease it carries and its number under it.
struct CallHeader: Decodable {
  var method: String
  var lease: String?
  var sequence: Int?
}

/// Why a call could not be dispatched (nothing reached the watch).
enum DispatchRefusal: Error {
  /// The body is not JSON of the call's shape, or its `args` do not fit the method (400).
  case badRequest(String)
}

extension BridgeMethod {
  /// Runs this method on `device` with the arguments in `body` (the whole call request) and
  /// returns the encoded answer: `{"result": …}` or `{"error": …}` with the SDK's error.
  /// - Throws: `DispatchRefusal.badRequest` when `args` do not decode; the device is not called.
  func dispatch(_ body: [UInt8], to device: any Device, capabilities: DeviceCapabilities) async throws(DispatchRefusal) -> (answer: [UInt8], error: DeviceError?) {
    func args<A: Codable & Sendable>(_ type: A.Type) throws(DispatchRefusal) -> A {
      guard let call = BridgeJSON.decode(CallRequest<A>.self, from: body), let args = call.args else {
        throw .badRequest("the arguments of \(rawValue) are missing or malformed (see docs/bridge-protocol.md \"Methods\")")
      }
      return args
    }
    func run<R: Codable & Sendable>(_ body: () async throws(DeviceError) -> R?) async -> ([UInt8], DeviceError?) {
      do {
        return (BridgeJSON.encode(Answer(result: try await body())), nil)
      } catch {
        return (BridgeJSON.encode(Answer<Empty>(error: WireError(error))), error)
      }
    }
    switch self {
    case .capabilities: return await run { () throws(DeviceError) in try await device.capabilities() }
    case .readState: return await run { () throws(DeviceError) in try await device.readState(capabilities: capabilities) }
    case .createCustomReminderTemplate: return await run { () throws(DeviceError) in try await device.createCustomReminderTemplate() }
    case .fetchAllReminders: return await run { () throws(DeviceError) in try await device.fetchAllReminders() }
    case .replaceAllReminders:
      let list = try args(BridgeArgs.Reminders.self).reminders
      return await run { () throws(DeviceError) -> Empty? in try await device.replaceAllReminders(list); return nil }
    case .setReminder:
      let reminder = try args(BridgeArgs.OneReminder.self).reminder
      return await run { () throws(DeviceError) -> Empty? in try await device.setReminder(reminder); return nil }
    case .deleteReminder:
      let id = try args(BridgeArgs.ReminderID.self).id
      return await run { () throws(DeviceError) -> Empty? in try await device.deleteReminder(id: id); return nil }
    case .getAllContacts: return await run { () throws(DeviceError) in try await device.getAllContacts() }
    case .setAllContacts:
      let contacts = try args(BridgeArgs.Contacts.self).contacts
      return await run { () throws(DeviceError) -> Empty? in try await device.setAllContacts(contacts); return nil }
    case .getEmergencyContacts: return await run { () throws(DeviceError) in try await device.getEmergencyContacts() }
    case .setEmergencyContacts:
      let emergency = try args(BridgeArgs.Emergency.self)
      return await run { () throws(DeviceError) -> Empty? in
        try await device.setEmergencyContacts(emergency.contacts, sosOn: emergency.sosOn)
        return nil
      }
    }
  }
}
