import Foundation
import Testing
@testable import TSBridge
import TSDevice
import TSModel
import TSTestSupport

/// The companion app's bridge (examples/ios-bridge, `BridgeApp`) on Linux: a `BridgeService`
/// over an `SDKDevice` whose listeners the watch session keeps (`SDKListeners`), against the
/// fake SDK (Tests/TSTestSupport/FakeSDK.swift).
@Suite(.timeLimit(.minutes(1))) struct AppBridgeTests {
  static let mac = "02:00:00:00:00:01"

  /// What the app does when it serves the watch: a device over the session's listeners, a
  /// service over the device, listening.
  static func serve(_ sdk: FakeWatch, _ listeners: SDKListeners) async throws -> (BridgeService, SDKDevice) {
    let device = SDKDevice(identity: "topstep:" + mac, platform: "fit", sdk: sdk, listeners: listeners)
    let service = BridgeService(bridgeID: "app", key: .random(),
                                watches: [ServedWatch(id: mac, device: device, capabilities: try await device.capabilities())],
                                cipher: ChaCha20Poly1305())
    await service.startListening()
    return (service, device)
  }

  /// The kinds of the events `log` holds now, oldest first.
  static func held(_ log: EventLog) async -> [BridgeEvent.Kind] {
    // A marker appended now is the newest event: everything before it is what the log held.
    log.append(BridgeEvent(type: .connectionState, connection: .connected))
    var marker: String?
    for await entry in log.subscribe(after: nil) {
      marker = entry.id
      break
    }
    var kinds: [BridgeEvent.Kind] = []
    for await entry in log.subscribe(after: "from-another-start") {
      if entry.id == marker { break }
      if ![.connectionState, .replayFrom].contains(entry.event.type) { kinds.append(entry.event.type) }
    }
    return kinds
  }

  /// The watch reconnects (the SDK's blocks die with the link), then the key is rotated (a new
  /// service on the same connection): each SOS reaches the serving bridge's event log once, the
  /// old service hears nothing more, and the SDK's listeners are registered once per connection.
  @Test func anSOSAfterAReconnectAndAfterANewKeyReachesTheServingBridgeOnce() async throws {
    let sdk = FakeWatch()
    let listeners = SDKListeners(register: sdk.register)
    listeners.connected()
    let (first, firstDevice) = try await Self.serve(sdk, listeners)
    let firstLog = try #require(first.logs[Self.mac])

    // The link drops and comes back (WatchSession: every eTSBleStateConnected is a new connection).
    listeners.disconnected()
    sdk.main.disconnect()
    listeners.connected()
    await sdk.main.fire(.sosRequested, .sos)
    #expect(await Self.held(firstLog) == [.sosRequested])

    // A new pairing key (BridgeApp.rotateKey): the old service's device closes, a new service
    // serves the same connection.
    await firstDevice.close()
    let (second, _) = try await Self.serve(sdk, listeners)
    let secondLog = try #require(second.logs[Self.mac])
    await sdk.main.fire(.sosRequested, .sos)
    #expect(await Self.held(secondLog) == [.sosRequested])
    #expect(await Self.held(firstLog) == [.sosRequested], "the old service hears nothing more")
    for kind in DeviceEvent.Kind.allCases {
      #expect(listeners.registrations(of: kind) == 2, "\(kind): once per connection, not again for the new key")
    }
  }
}
