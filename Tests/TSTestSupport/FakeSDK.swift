import Foundation
import TSDevice
import TSModel

// The vendor SDK faked as the SDK pages and the platform table say it behaves, and worse, for
// the companion app's logic above the thin SDK adapter (examples/ios-bridge): Tests/TSDeviceTests
// (SDKAdapterTests, SDKDeviceTests) and Tests/TSBridgeTests (the app's bridge over it).

/// A fake of the vendor SDK's callback behaviour: everything is called back on `queue`, its main queue.
public final class FakeSDK: @unchecked Sendable {
  /// The SDK's main queue: every block and completion runs on it.
  public let queue = DispatchQueue(label: "fake-sdk-main")
  private let lock = NSLock()
  private var blocks: [(DeviceEvent.Kind, @Sendable (SDKListeners.Report) -> Void)] = []
  private let keepsBlocks: Bool
  private let refusing: [DeviceEvent.Kind: DeviceError]

  /// A fake whose listener blocks die on `disconnect()` (unless `keepsBlocksAcrossReconnects`)
  /// and that refuses the listeners in `refusing` with their error.
  public init(keepsBlocksAcrossReconnects: Bool = false, refusing: [DeviceEvent.Kind: DeviceError] = [:]) {
    keepsBlocks = keepsBlocksAcrossReconnects
    self.refusing = refusing
  }

  /// `register…Block:`: keeps the block until the link drops; a refused listener is called
  /// back at once with its error.
  public var register: SDKListeners.Register {
    { [self] kind, block in
      if let error = refusing[kind] {
        queue.async { block(.failed(error)) }
        return
      }
      lock.withLock { blocks.append((kind, block)) }
    }
  }

  /// The link dropped: blocks die (unless this fake keeps them, as a buggy SDK could).
  public func disconnect() {
    if !keepsBlocks { lock.withLock { blocks = [] } }
  }

  /// The watch reports `report` to every block of `kind`; returns once they ran.
  public func fire(_ kind: DeviceEvent.Kind, _ report: SDKListeners.Report) async {
    for (blockKind, block) in lock.withLock({ blocks }) where blockKind == kind { queue.async { block(report) } }
    await drain()
  }

  /// Returns once everything queued on the main queue so far ran.
  public func drain() async {
    await withCheckedContinuation { done in queue.async { done.resume() } }
  }

  /// Calls `completion` as `behaviour` says.
  public func complete(_ behaviour: FakeSDK.Behaviour, _ completion: @escaping @Sendable (Result<Int, DeviceError>) -> Void) {
    @Sendable func error(_ code: TSErrorCode) -> DeviceError { DeviceError(.contact, code, "SDK error \(code.rawValue)") }
    switch behaviour {
    case .answers(let value): queue.async { completion(.success(value)) }
    case .fails(let code): queue.async { completion(.failure(error(code))) }
    case .late(let value, let ms): queue.asyncAfter(deadline: .now() + .milliseconds(ms)) { completion(.success(value)) }
    case .never: break
    case .twice(let first, let second):
      queue.async { completion(.success(first)); completion(.success(second)) }
    case .failsThenAnswers(let code, let value):
      queue.async { completion(.failure(error(code))); completion(.success(value)) }
    }
  }

  /// How the fake SDK calls a completion.
  public enum Behaviour: Sendable, CustomStringConvertible {
    case answers(Int)
    case fails(TSErrorCode)
    case late(Int, afterMilliseconds: Int)
    case never
    case twice(Int, Int)
    case failsThenAnswers(TSErrorCode, Int)

    public var description: String {
      switch self {
      case .answers(let value): "answers \(value)"
      case .fails(let code): "fails \(code.rawValue)"
      case .late(let value, let ms): "answers \(value) after \(ms) ms"
      case .never: "never answers"
      case .twice(let first, let second): "answers \(first) then \(second)"
      case .failsThenAnswers(let code, let value): "fails \(code.rawValue) then answers \(value)"
      }
    }
  }
}

/// A fake `WatchSDK`: a contact list it keeps, getters it is told, and for each call how it
/// completes (default: at once, on its main queue).
public final class FakeWatch: WatchSDK, @unchecked Sendable {
  /// The SDK's callback side: its main queue and listener blocks.
  public let main = FakeSDK()
  private let lock = NSLock()
  /// The regular contacts it holds.
  public var contacts: [Contact] = []
  /// The emergency list and SOS switch it holds.
  public var emergency = EmergencyContacts(contacts: [], isSosOn: false)
  private var calls: [String] = []
  /// How the next calls of a name complete, consumed in order.
  private var scripted: [String: [FakeSDK.Behaviour]] = [:]
  /// What `supportMaxContacts` answers.
  public var maxContacts = 20
  /// What `isSupportEmergencyContacts` answers.
  public var supportsEmergency = true

  private func run<T: Sendable>(_ name: String, _ value: @escaping @Sendable () -> T,
                                _ done: @escaping @Sendable (Result<T, DeviceError>) -> Void) {
    let behaviour = lock.withLock { () -> FakeSDK.Behaviour in
      calls.append(name)
      return scripted[name]?.isEmpty == false ? scripted[name]!.removeFirst() : .answers(0)
    }
    main.complete(behaviour) { result in done(result.map { _ in value() }) }
  }

  public func maxSupportedCustomReminderCount() -> Int { 7 }
  public func supportMaxContacts() -> Int { maxContacts }
  public func supportMaxEmergencyContacts() -> Int { 3 }
  public func isSupportEmergencyContacts() -> Bool { supportsEmergency }
  public func createCustomReminderTemplate(_ done: @escaping @Sendable (Result<Reminder, DeviceError>) -> Void) {
    run("template", { Reminder(reminderId: "32", reminderName: "", isEnabled: true, reminderType: .custom, repeatDays: .everyday) }, done)
  }
  public func fetchAllReminders(_ done: @escaping @Sendable (Result<[Reminder], DeviceError>) -> Void) { run("fetch", { [] }, done) }
  public func replaceAllReminders(_ reminders: [Reminder], _ done: @escaping @Sendable (Result<Void, DeviceError>) -> Void) { run("replace", {}, done) }
  public func setReminder(_ reminder: Reminder, _ done: @escaping @Sendable (Result<Void, DeviceError>) -> Void) { run("set", {}, done) }
  public func deleteReminder(id: String, _ done: @escaping @Sendable (Result<Void, DeviceError>) -> Void) { run("delete", {}, done) }
  public func getAllContacts(_ done: @escaping @Sendable (Result<[Contact], DeviceError>) -> Void) {
    run("getAllContacts", { [self] in lock.withLock { contacts } }, done)
  }
  public func setAllContacts(_ list: [Contact], _ done: @escaping @Sendable (Result<Void, DeviceError>) -> Void) {
    // The write lands before the completion says anything (also when it reports an error).
    lock.withLock { contacts = list }
    run("setAllContacts", {}, done)
  }
  public func getEmergencyContacts(_ done: @escaping @Sendable (Result<EmergencyContacts, DeviceError>) -> Void) {
    run("getEmergencyContacts", { [self] in lock.withLock { emergency } }, done)
  }
  public func setEmergencyContacts(_ list: [Contact], sosOn: Bool, _ done: @escaping @Sendable (Result<Void, DeviceError>) -> Void) {
    lock.withLock { emergency = EmergencyContacts(contacts: list, isSosOn: sosOn) }
    run("setEmergencyContacts", {}, done)
  }
  public func register(_ kind: DeviceEvent.Kind, _ report: @escaping @Sendable (SDKListeners.Report) -> Void) {
    main.register(kind, report)
  }
  /// The next calls named `name` complete as `behaviours` say, in order (later ones at once).
  public func script(_ name: String, _ behaviours: FakeSDK.Behaviour...) { lock.withLock { scripted[name, default: []] += behaviours } }
  /// The calls made so far, by name, in order.
  public var callNames: [String] { lock.withLock { calls } }

  /// A watch holding no contacts (`supportMaxContacts` 20, emergency contacts supported).
  public init() {}
}
