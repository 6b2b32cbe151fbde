import Foundation
import Testing
import TSDevice
import TSModel
import TSTestSupport

/// The companion app's SDK-independent logic (examples/ios-bridge) against a fake SDK that
/// behaves as the SDK pages say and worse: completions on its own serial queue (the SDK's main
/// queue), late, never, twice, failing after the write landed; listeners that die with the
/// connection, or that the SDK wrongly keeps; a 2004 listener as on npk.
@Suite(.timeLimit(.minutes(1))) struct SDKAdapterTests {
  typealias Behaviour = FakeSDK.Behaviour

  /// What the caller gets: a value or an error code.
  enum Outcome: Equatable, Sendable {
    case value(Int)
    case error(TSErrorCode)
  }

  /// (behaviour, what the caller gets, stray completions reported).
  static let completions: [(Behaviour, Outcome, [SDKCompletion.Stray])] = [
    (.answers(7), .value(7), []),
    (.fails(.requestCancelledByDisconnect), .error(.requestCancelledByDisconnect), []),
    // Late by far more than the 150 ms timeout: on a loaded machine (a CI run beside builds) the
    // timeout's task ran after an answer 400 ms late, and the test failed.
    (.late(7, afterMilliseconds: 2_000), .error(.timeout), [SDKCompletion.Stray(call: "call", repeated: false)]),
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
    try await Task.sleep(for: .milliseconds(2_500))  // past every late or second completion
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

/// Values recorded from any thread, in order.
final class Recorder<T: Sendable>: @unchecked Sendable {
  private let lock = NSLock()
  private var values: [T] = []
  func add(_ value: T) { lock.withLock { values.append(value) } }
  var all: [T] { lock.withLock { values } }
}

/// `SDKDevice` (the app's `Device`) over a fake `WatchSDK`.
@Suite(.timeLimit(.minutes(1))) struct SDKDeviceTests {
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
      #expect(error.message.hasSuffix("the call may or may not have reached the watch"), "\(error)")
    }
    // A read never answered changed nothing, and says so.
    for (name, read) in [("getAllContacts", { _ = try await device.getAllContacts() }),
                         ("getEmergencyContacts", { _ = try await device.getEmergencyContacts() }),
                         ("fetch", { _ = try await device.fetchAllReminders() })] as [(String, () async throws -> Void)] {
      sdk.script(name, .never)
      do { try await read(); Issue.record("\(name): no timeout") } catch let error as DeviceError {
        #expect(error.code == .timeout && error.message.hasSuffix("it only reads, so the watch is unchanged by it"), "\(name): \(error)")
      }
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
