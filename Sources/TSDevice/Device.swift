import TSModel

/// A TopStep watch, seen through the SDK's reminder and contact calls.
///
/// The operations mirror `TSRemindersInterface` and `TSContactInterface` (docs/platforms.md
/// "SDK calls") one for one, so a bridge to a real watch can implement this protocol
/// by forwarding each call. The SDK's synchronous limit getters (`maxSupportedCustomReminderCount`,
/// `supportMaxContacts`, `supportMaxEmergencyContacts`, `isSupportEmergencyContacts`) are part of
/// `capabilities()`, which also says which operations and fields the platform has.
///
/// Every call is asynchronous and throws `DeviceError` with the SDK's domain and code
/// (docs/platforms.md "Errors"); an operation the platform lacks throws 2004.
///
/// A device is opened from a spec by a `DeviceScheme` of a `DeviceRegistry` (`sim:PATH` for the
/// simulated watch); `identity` names the watch stably across runs, and `close()` releases what
/// the device holds (connections, listeners).
public protocol Device: AnyObject, Sendable {
  /// The watch's stable identity, the same every time it is opened, whatever the working
  /// directory: `sim:/absolute/path/device.json` for a simulated watch (every symbolic link
  /// resolved, the state file's own included), `bridge:BRIDGE-ID/AA:BB:CC:DD:EE:FF` for a watch behind a bridge.
  /// It is also a spec that opens the same watch again: saved plans and backups record it.
  var identity: String { get }

  /// Files on this machine that hold the device itself (the simulated watch's state file and
  /// its `.lock`, symbolic links resolved): no command writes an output file over them
  /// (`tsapply export -o`, `plan -out`). Empty by default (a watch behind a bridge has none).
  var storageFiles: [String] { get }

  /// A file beside the device's own storage that the engine locks (`flock`) for a whole apply,
  /// beside the lock in its state folder: a watch kept in a local file is reached by every
  /// tsapply on the machine whatever its state folder (`TSAPPLY_STATE_DIR`) or the spelling of
  /// its spec, so that lock alone does not keep two applies apart (fresh-eyes finding: two
  /// applies from two state folders both said "Apply complete!" and the watch held a mix).
  /// `nil` by default: a watch behind a bridge is kept apart by its lease (`LeasableDevice`).
  var applyLockPath: String? { get }

  /// What the platform stores and supports: limits, operations, fields and their byte limits.
  func capabilities() async throws(DeviceError) -> DeviceCapabilities

  /// Reads everything tsapply manages: every reminder, the regular contacts (where
  /// `capabilities.contacts.maxContacts > 0`) and the emergency contacts with the SOS switch
  /// (where supported). The default makes the SDK's calls one by one; a remote device may read
  /// all of it in one round trip.
  func readState(capabilities: DeviceCapabilities) async throws(DeviceError) -> DeviceState

  /// Releases what the device holds (a network session, listener registrations). Calls after
  /// `close()` may fail. The default does nothing.
  func close() async

  // MARK: Reminders (TSRemindersInterface)

  /// `createCustomReminderTemplateWithCompletion:`: a new custom reminder with a device-assigned
  /// ID and the platform's defaults. Not written to the watch.
  /// - Throws: 2004 where unsupported; 3004 (Npk, no free ID) or 3001 (Fit, slots full).
  func createCustomReminderTemplate() async throws(DeviceError) -> Reminder
  /// `fetchAllRemindersWithCompletion:`: every reminder, built-ins first, in watch order.
  func fetchAllReminders() async throws(DeviceError) -> [Reminder]
  /// `replaceAllReminders:completion:`: the watch's list becomes exactly `reminders`.
  /// - Throws: 2004 where unsupported; 3004 custom limit; 3001/3002 validation (first error).
  func replaceAllReminders(_ reminders: [Reminder]) async throws(DeviceError)
  /// `setReminder:completion:`: upsert by exact `reminderId` (replace in place, else append).
  func setReminder(_ reminder: Reminder) async throws(DeviceError)
  /// `deleteReminderWithId:completion:`.
  /// - Throws: 3001 empty id; 4001 (Npk) or 4004 (Fw) not found; 2004 where unsupported.
  func deleteReminder(id: String) async throws(DeviceError)

  // MARK: Contacts (TSContactInterface)

  /// `getAllContacts:`: regular contacts in watch order.
  func getAllContacts() async throws(DeviceError) -> [Contact]
  /// `setAllContacts:completion:`: overwrites the whole list, keeping the given order.
  func setAllContacts(_ contacts: [Contact]) async throws(DeviceError)
  /// `getEmergencyContacts:`: the emergency list and the SOS switch.
  func getEmergencyContacts() async throws(DeviceError) -> EmergencyContacts
  /// `setEmergencyContacts:sosOn:completion:`: list and switch in one call.
  func setEmergencyContacts(_ contacts: [Contact], sosOn: Bool) async throws(DeviceError)

  // MARK: Listeners

  /// `registerContactsDidChangedBlock:`: called with the new list when contacts change on the
  /// watch; called once with 2004 where the platform never reports changes.
  func registerContactsDidChange(_ handler: @escaping @Sendable (Result<[Contact], DeviceError>) -> Void) async
  /// `registerEmergencyContactsDidChangedBlock:`: as above, for the emergency list.
  func registerEmergencyContactsDidChange(_ handler: @escaping @Sendable (Result<[Contact], DeviceError>) -> Void) async
  /// `registerSOSRequestBlock:`: called with `nil` when the wearer triggers SOS; with 2004 where unsupported.
  func registerSOSRequest(_ handler: @escaping @Sendable (DeviceError?) -> Void) async

  /// Listens for the watch-side events of `kinds` (`DeviceEvent.Kind`) with one handler, each
  /// event with the device's id for it. With `lastHandled`, the events after it that the device
  /// still holds come first, in order (those a caller that stopped or was killed did not hear),
  /// then each new one; without it, only new events, after a `resumePoint` naming where they
  /// start. Where the device keeps no history (the default, built on the three listeners above)
  /// events have no id and nothing is replayed. Each event reaches a handler once per
  /// registration; a caller resuming after an event it handled does not hear it again. Returns
  /// once the listener hears the watch (a change made after it returns is announced): `true`;
  /// or once that failed (reported to the handler) or took too long (a bridge: its timeout, at
  /// most 5 s; it goes on trying): `false`.
  @discardableResult
  func listen(to kinds: Set<DeviceEvent.Kind>, after lastHandled: DeviceEventID?,
              _ handler: @escaping @Sendable (ListenerReport) -> Void) async -> Bool
}

/// A device that counts its calls and the bytes they move, for apply summaries and benchmarks
/// (the simulated watch; a bridge client counts round trips).
public protocol DeviceAccounting: Sendable {
  /// Calls made through this instance so far and the bytes they moved over the link (estimated).
  func statistics() async -> DeviceStatistics
}

/// Counts of device calls and link bytes, for progress lines, apply summaries and benchmarks.
public struct DeviceStatistics: Hashable, Codable, Sendable {
  /// Number of calls per operation name (e.g. `setReminder`: 3).
  public var calls: [String: Int]
  /// Bytes sent to the watch (estimated, including packet headers).
  public var bytesSent: Int
  /// Bytes received from the watch (estimated, including packet headers).
  public var bytesReceived: Int
  /// 20-byte packets sent to the watch (estimated; see `LinkMeter`).
  public var packetsSent: Int
  /// 20-byte packets received from the watch (estimated).
  public var packetsReceived: Int

  /// Statistics with the given counts; all zero by default.
  public init(calls: [String: Int] = [:], bytesSent: Int = 0, bytesReceived: Int = 0,
              packetsSent: Int = 0, packetsReceived: Int = 0) {
    self.calls = calls
    self.bytesSent = bytesSent
    self.bytesReceived = bytesReceived
    self.packetsSent = packetsSent
    self.packetsReceived = packetsReceived
  }

  /// All calls, over every operation.
  public var totalCalls: Int { calls.values.reduce(0, +) }
}

extension Device {
  /// Reads everything tsapply manages in as few calls as the SDK allows: fetch all reminders,
  /// get all contacts (when supported), get emergency contacts (when supported).
  public func readState(capabilities: DeviceCapabilities) async throws(DeviceError) -> DeviceState {
    try await readStateByCalls(capabilities: capabilities)
  }

  /// `readState(capabilities:)` made of the SDK's calls one by one (fetch all reminders, get
  /// all contacts, get emergency contacts; only those the platform supports): the default, and
  /// what a device serving a remote `readState` does on its side.
  public func readStateByCalls(capabilities: DeviceCapabilities) async throws(DeviceError) -> DeviceState {
    let reminders = try await fetchAllReminders()
    let contacts = capabilities.contacts.maxContacts > 0 ? try await getAllContacts() : []
    let emergency = capabilities.contacts.supportsEmergencyContacts ? try await getEmergencyContacts() : nil
    return DeviceState(reminders: reminders, contacts: contacts, emergency: emergency)
  }

  /// Does nothing: most devices hold nothing to release.
  public func close() async {}

  /// None: most devices keep nothing in local files.
  public var storageFiles: [String] { [] }

  /// None: most devices keep nothing in local files.
  public var applyLockPath: String? { nil }
}

/// A device that other machines can also reach (a watch behind a bridge), offering a lease: the
/// engine holds one for a whole apply, beside its local lock, so two laptops cannot apply to one
/// watch at once. A lease expires after its time to live unless renewed, so a holder that died
/// frees the watch.
public protocol LeasableDevice: Device {
  /// Takes the lease for `holder` for `timeToLive` seconds.
  /// - Throws: `LeaseRefusal.held` with the current holder while another lease is live;
  ///   `.device` when the lease cannot be asked for.
  func acquireLease(holder: LockHolder, timeToLive seconds: Int) async throws(LeaseRefusal) -> DeviceLease
  /// Extends `lease` by `seconds` from now.
  /// - Throws: `LeaseRefusal` when the lease was lost (expired and taken) or cannot be renewed.
  func renewLease(_ lease: DeviceLease, timeToLive seconds: Int) async throws(LeaseRefusal)
  /// Gives `lease` back; errors are ignored (it expires anyway).
  func releaseLease(_ lease: DeviceLease) async
}

/// A lease a `LeasableDevice` granted.
public struct DeviceLease: Hashable, Codable, Sendable {
  /// The lease's token, shown back to renew and release it.
  public var token: String
  /// Seconds it lives from the moment it was granted or last renewed.
  public var timeToLive: Int
  /// A lease with `token`, living `timeToLive` seconds.
  public init(token: String, timeToLive: Int) {
    self.token = token
    self.timeToLive = timeToLive
  }
}

/// What a call that got no answer (a timeout, a connection lost under it) did to the watch, as
/// its error message says it: a read changed nothing; a write may or may not have reached the
/// watch, which the engine reads back to find out (docs/apply.md "When a write's answer is lost").
public enum UnansweredCall {
  /// `it only reads, so the watch is unchanged by it`, or `the call may or may not have reached the watch`.
  public static func outcome(reads: Bool) -> String {
    reads ? "it only reads, so the watch is unchanged by it" : "the call may or may not have reached the watch"
  }
}

/// Why a lease was not granted.
public enum LeaseRefusal: Error, Hashable, Sendable, CustomStringConvertible {
  /// Another holder has a live lease (`nil` when the device did not say who), which lives
  /// `expiresIn` more seconds unless its holder renews it (`nil` when the device did not say).
  case held(by: LockHolder?, expiresIn: Int? = nil)
  /// The device could not be asked.
  case device(DeviceError)

  public var description: String {
    switch self {
    case .held(let holder?, _): "the watch is leased by \(holder)"
    case .held(nil, _): "the watch is leased by another client"
    case .device(let error): "cannot lease the watch: \(error)"
    }
  }
}
