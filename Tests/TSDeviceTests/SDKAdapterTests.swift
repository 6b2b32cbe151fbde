import Foundation
import Testing
import TSDevice
import TSModel

/// The companion app's SDK-independent logic (examples/ios-bridge) against a fake SDK that
/// behaves as the SDK pages say and worse: completions on its own serial queue (the SDK's main
/// queue), late, never, twice, failing after the write landed; listeners that die with the
/// connection, or that the SDK wrongly keeps; a 2004 listener as on npk.
@Suite(.timeLimit(.minutes(1))) struct SDKAdapterTests {
  /// How the fake SDK calls a completion.
  enum Behaviour: Sendable, CustomStringConvertible {
    case answers(Int)
    case fails(TSErrorCode)
    case late(Int, afterMilliseconds: Int)
    case never
    case twice(Int, Int)
    case failsThenAnswers(TSErrorCode, Int)

    var description: String {
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

  /// What the caller gets: a value or an error code.
  enum Outcome: Equatable, Sendable {
    case value(Int)
    case error(TSErrorCode)
  }

  /// (behaviour, what the caller gets, stray completions reported).
  static let completions: [(Behaviour, Outcome, [SDKCompletion.Stray])] = [
    (.answers(7), .value(7), []),
    (.fails(.requestCancelledByDisconnect), .error(.requestCancelledByDisconnect), []),
    (.late(7, afterMilliseconds: 400), .error(.timeout), [SDKCompletion.Stray(call: "call", repeated: false)]),
    (.never, .error(.timeout), []),
    (.twice(1, 2), .value(1), [SDKCompletion.Stray(call: "call", repeated: true)]),
    // A write that lands on the watch but reports an error: the error is what the caller hears.
    (.failsThenAnswers(.dataSetFailed, 3), .error(.dataSetFailed), [SDKCompletion.Stray(call: "call", repeated: true)]),
  ]

  @Test(arguments: completions)
  func aCompletionIsTakenOnceAndInTime(_ behaviour: Behaviour, _ expected: Outcome, _ strays: [SDKCompletion.Stray]) async throws {
    let sdk = FakeSDK()
    let seen = Recorder<SDKCompletion.Stray>()
    let result: Outcome
    do {
      let value: Int = try await SDKCompletion.wait("call", domain: .contact, timeout: .milliseconds(150), onStray: { seen.add($0) }) { finish in
        sdk.complete(behaviour) { finish($0) }
      }
      result = .value(value)
    } catch {
      #expect(error.domain == .contact)
      result = .error(error.code)
    }
    #expect(result == expected)
    try await Task.sleep(for: .milliseconds(500))  // past every late or second completion
    #expect(seen.all == strays)
  }

  @Test func listenersAreRegisteredOncePerConnectionAndReRegisteredAfterAReconnect() async throws {
    for keepsBlocks in [false, true] {
      let sdk = FakeSDK(keepsBlocksAcrossReconnects: keepsBlocks)
      let listeners = SDKListeners(register: sdk.register)
      let service = Owner()
      let heard = Recorder<SDKListeners.Report>()
      listeners.add(.sosRequested, owner: service) { heard.add($0) }
      #expect(listeners.registrations(of: .sosRequested) == 0, "nothing is registered before the watch connects")
      listeners.connected()
      listeners.add(.contactsChanged, owner: service) { heard.add($0) }
      #expect(listeners.registrations(of: .sosRequested) == 1 && listeners.registrations(of: .contactsChanged) == 1)
      await sdk.fire(.sosRequested, .sos)
      #expect(heard.all == [.sos])

      // The link drops and comes back: the SDK lost its blocks (or wrongly kept them).
      listeners.disconnected()
      sdk.disconnect()
      listeners.connected()
      #expect(listeners.registrations(of: .sosRequested) == 2, "keepsBlocks \(keepsBlocks)")
      await sdk.fire(.sosRequested, .sos)
      await sdk.fire(.contactsChanged, .contacts([Contact(name: "Ann", phoneNum: "1")]))
      #expect(heard.all == [.sos, .sos, .contacts([Contact(name: "Ann", phoneNum: "1")])],
              "one delivery per event after a reconnect (keepsBlocks \(keepsBlocks))")
    }
  }

  @Test func aNewOwnerOnTheSameConnectionRegistersNothingTwice() async throws {
    // A new pairing key makes a new bridge service on the same watch connection.
    let sdk = FakeSDK()
    let listeners = SDKListeners(register: sdk.register)
    listeners.connected()
    let old = Owner(), new = Owner()
    let oldHeard = Recorder<SDKListeners.Report>(), newHeard = Recorder<SDKListeners.Report>()
    for kind in DeviceEvent.Kind.allCases { listeners.add(kind, owner: old) { oldHeard.add($0) } }
    listeners.removeHandlers(of: old)
    for kind in DeviceEvent.Kind.allCases { listeners.add(kind, owner: new) { newHeard.add($0) } }
    for kind in DeviceEvent.Kind.allCases { #expect(listeners.registrations(of: kind) == 1, "\(kind)") }
    await sdk.fire(.sosRequested, .sos)
    #expect(oldHeard.all.isEmpty && newHeard.all == [.sos])
  }

  @Test func aListenerThePlatformRefusesReportsItsErrorOnce() async throws {
    // npk: the emergency-contacts listener answers 2004 when registered.
    let sdk = FakeSDK(refusing: [.emergencyContactsChanged: DeviceError(.contact, .notSupport, "not supported")])
    let listeners = SDKListeners(register: sdk.register)
    let heard = Recorder<SDKListeners.Report>()
    listeners.add(.emergencyContactsChanged, owner: Owner()) { heard.add($0) }
    listeners.connected()
    await sdk.drain()
    #expect(heard.all == [.failed(DeviceError(.contact, .notSupport, "not supported"))])
  }
}

/// Stands for a bridge service owning handlers.
private final class Owner {}

/// A fake of the vendor SDK's callback behaviour: everything is called back on `queue`, its main queue.
final class FakeSDK: @unchecked Sendable {
  let queue = DispatchQueue(label: "fake-sdk-main")
  private let lock = NSLock()
  private var blocks: [(DeviceEvent.Kind, @Sendable (SDKListeners.Report) -> Void)] = []
  private let keepsBlocks: Bool
  private let refusing: [DeviceEvent.Kind: DeviceError]

  init(keepsBlocksAcrossReconnects: Bool = false, refusing: [DeviceEvent.Kind: DeviceError] = [:]) {
    keepsBlocks = keepsBlocksAcrossReconnects
    self.refusing = refusing
  }

  /// `register…Block:`: keeps the block until the link drops; a refused listener is called
  /// back at once with its error.
  var register: SDKListeners.Register {
    { [self] kind, block in
      if let error = refusing[kind] {
        queue.async { block(.failed(error)) }
        return
      }
      lock.withLock { blocks.append((kind, block)) }
    }
  }

  /// The link dropped: blocks die (unless this fake keeps them, as a buggy SDK could).
  func disconnect() {
    if !keepsBlocks { lock.withLock { blocks = [] } }
  }

  /// The watch reports `report` to every block of `kind`; returns once they ran.
  func fire(_ kind: DeviceEvent.Kind, _ report: SDKListeners.Report) async {
    for (blockKind, block) in lock.withLock({ blocks }) where blockKind == kind { queue.async { block(report) } }
    await drain()
  }

  /// Returns once everything queued on the main queue so far ran.
  func drain() async {
    await withCheckedContinuation { done in queue.async { done.resume() } }
  }

  /// Calls `completion` as `behaviour` says.
  func complete(_ behaviour: SDKAdapterTests.Behaviour, _ completion: @escaping @Sendable (Result<Int, DeviceError>) -> Void) {
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
}

/// Values recorded from any thread, in order.
final class Recorder<T: Sendable>: @unchecked Sendable {
  private let lock = NSLock()
  private var values: [T] = []
  func add(_ value: T) { lock.withLock { values.append(value) } }
  var all: [T] { lock.withLock { values } }
}

/// `SDKDevice` (the app's `Device`) over a fake `WatchSDK`.
@Suite(.timeLimit(.minutes(1))) struct SDKDeviceTests {
  /// A fake `WatchSDK`: a contact list it keeps, getters it is told, and for each call how it
  /// completes (default: at once, on its main queue).
  final class FakeWatch: WatchSDK, @unchecked Sendable {
    let main = FakeSDK()
    private let lock = NSLock()
    var contacts: [Contact] = []
    var emergency = EmergencyContacts(contacts: [], isSosOn: false)
    var calls: [String] = []
    /// How the next calls of a name complete, consumed in order.
    var scripted: [String: [SDKAdapterTests.Behaviour]] = [:]
    var maxContacts = 20
    var supportsEmergency = true

    private func run<T: Sendable>(_ name: String, _ value: @escaping @Sendable () -> T,
                                  _ done: @escaping @Sendable (Result<T, DeviceError>) -> Void) {
      let behaviour = lock.withLock { () -> SDKAdapterTests.Behaviour in
        calls.append(name)
        return scripted[name]?.isEmpty == false ? scripted[name]!.removeFirst() : .answers(0)
      }
      main.complete(behaviour) { result in done(result.map { _ in value() }) }
    }

    func maxSupportedCustomReminderCount() -> Int { 7 }
    func supportMaxContacts() -> Int { maxContacts }
    func supportMaxEmergencyContacts() -> Int { 3 }
    func isSupportEmergencyContacts() -> Bool { supportsEmergency }
    func createCustomReminderTemplate(_ done: @escaping @Sendable (Result<Reminder, DeviceError>) -> Void) {
      run("template", { Reminder(reminderId: "32", reminderName: "", isEnabled: true, reminderType: .custom, repeatDays: .everyday) }, done)
    }
    func fetchAllReminders(_ done: @escaping @Sendable (Result<[Reminder], DeviceError>) -> Void) { run("fetch", { [] }, done) }
    func replaceAllReminders(_ reminders: [Reminder], _ done: @escaping @Sendable (Result<Void, DeviceError>) -> Void) { run("replace", {}, done) }
    func setReminder(_ reminder: Reminder, _ done: @escaping @Sendable (Result<Void, DeviceError>) -> Void) { run("set", {}, done) }
    func deleteReminder(id: String, _ done: @escaping @Sendable (Result<Void, DeviceError>) -> Void) { run("delete", {}, done) }
    func getAllContacts(_ done: @escaping @Sendable (Result<[Contact], DeviceError>) -> Void) {
      run("getAllContacts", { [self] in lock.withLock { contacts } }, done)
    }
    func setAllContacts(_ list: [Contact], _ done: @escaping @Sendable (Result<Void, DeviceError>) -> Void) {
      // The write lands before the completion says anything (also when it reports an error).
      lock.withLock { contacts = list }
      run("setAllContacts", {}, done)
    }
    func getEmergencyContacts(_ done: @escaping @Sendable (Result<EmergencyContacts, DeviceError>) -> Void) {
      run("getEmergencyContacts", { [self] in lock.withLock { emergency } }, done)
    }
    func setEmergencyContacts(_ list: [Contact], sosOn: Bool, _ done: @escaping @Sendable (Result<Void, DeviceError>) -> Void) {
      lock.withLock { emergency = EmergencyContacts(contacts: list, isSosOn: sosOn) }
      run("setEmergencyContacts", {}, done)
    }
    func register(_ kind: DeviceEvent.Kind, _ report: @escaping @Sendable (SDKListeners.Report) -> Void) {
      main.register(kind, report)
    }
    func script(_ name: String, _ behaviours: SDKAdapterTests.Behaviour...) { lock.withLock { scripted[name, default: []] += behaviours } }
    var callNames: [String] { lock.withLock { calls } }
  }

  static func device(_ platform: String, _ sdk: FakeWatch, timeout: Duration = .seconds(5)) -> SDKDevice {
    SDKDevice(identity: "topstep:02:00:00:00:00:01", platform: platform, sdk: sdk, listeners: SDKListeners(register: sdk.register),
              timeout: timeout)
  }

  @Test func capabilitiesFollowThePlatformTableWhereTheSDKStubsAFeature() async throws {
    let sdk = FakeWatch()
    let npk = try await Self.device("npk", sdk).capabilities()
    #expect(npk.contacts.maxContacts == 0, "npk's regular contacts are an SDK stub, whatever supportMaxContacts says")
    #expect(npk.contacts.maxEmergencyContacts == 3 && npk.reminders.maxCustomReminders == 7)
    let fit = try await Self.device("fit", sdk).capabilities()
    #expect(fit.contacts.maxContacts == 20)
    sdk.supportsEmergency = false
    let without = try await Self.device("fit", sdk).capabilities()
    #expect(!without.contacts.supportsEmergencyContacts && without.contacts.maxEmergencyContacts == 0)
    await #expect(throws: DeviceError.self) { _ = try await Self.device("nokia", sdk).capabilities() }

    // The stubbed calls answer 2004 and never reach the SDK.
    let device = Self.device("npk", sdk)
    await #expect(throws: DeviceError.self) { _ = try await device.getAllContacts() }
    do { try await device.setAllContacts([Contact(name: "A", phoneNum: "1")]) } catch { #expect(error.code == .notSupport) }
    #expect(sdk.callNames.isEmpty)
  }

  @Test func callsTimeOutFailAndLandAsTheSDKReports() async throws {
    let sdk = FakeWatch()
    let device = Self.device("fit", sdk, timeout: .milliseconds(200))
    let ann = [Contact(name: "Ann", phoneNum: "1")]
    // Never answered: 6001 in the contact domain after the timeout.
    sdk.script("setAllContacts", .never)
    do { try await device.setAllContacts(ann); Issue.record("no timeout") } catch {
      #expect(error.domain == .contact && error.code == .timeout)
    }
    // Disconnected mid-call: the SDK's 9310 as it is.
    sdk.script("getAllContacts", .fails(.requestCancelledByDisconnect))
    do { _ = try await device.getAllContacts(); Issue.record("no error") } catch { #expect(error.code == .requestCancelledByDisconnect) }
    // A write that lands but reports an error: the caller hears the error; a read shows the write.
    sdk.script("setAllContacts", .failsThenAnswers(.dataSetFailed, 0))
    let bob = [Contact(name: "Bob", phoneNum: "2")]
    do { try await device.setAllContacts(bob); Issue.record("no error") } catch { #expect(error.code == .dataSetFailed) }
    #expect(try await device.getAllContacts() == bob)
  }

  @Test func closingADeviceDropsItsListenersButNotTheSessions() async throws {
    let sdk = FakeWatch()
    let listeners = SDKListeners(register: sdk.register)
    listeners.connected()
    let first = SDKDevice(identity: "topstep:x", platform: "fit", sdk: sdk, listeners: listeners)
    let heard = Recorder<String>()
    await first.registerSOSRequest { _ in heard.add("first") }
    await first.close()
    let second = SDKDevice(identity: "topstep:x", platform: "fit", sdk: sdk, listeners: listeners)
    await second.registerSOSRequest { _ in heard.add("second") }
    await sdk.main.fire(.sosRequested, .sos)
    #expect(heard.all == ["second"])
    #expect(listeners.registrations(of: .sosRequested) == 1)
  }
}
