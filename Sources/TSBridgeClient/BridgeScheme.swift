import TSBridge
import TSDevice
import TSModel

/// The `bridge:NAME[/WATCH-ID]` scheme: the watch WATCH-ID (its MAC, `AA:BB:CC:DD:EE:FF`)
/// behind the bridge paired as NAME (`tsapply bridge pair STRING --name NAME`; a bridge id
/// works too, so a `bridge:BRIDGE-ID/MAC` identity reopens its watch). WATCH-ID may be left out
/// when the bridge serves exactly one watch. `TSAPPLY_BRIDGE_TIMEOUT` sets the seconds to wait
/// for each answer (default 10).
public struct BridgeScheme: DeviceScheme {
  /// `bridge`.
  public let name = "bridge"
  /// `bridge:`, the start of every spec and identity of this scheme.
  public static let prefix = "bridge:"
  /// For help and errors.
  public let form = "bridge:NAME[/WATCH-ID], a watch behind a paired bridge (tsapply bridge pair)"
  /// An example.
  public let example = "bridge:home"
  /// For help.
  public let summary = "a real watch, through the companion app on its phone (or tsapply bridge serve)"

  /// Environment variable: seconds to wait for each answer of the bridge.
  public static let timeoutVariable = "TSAPPLY_BRIDGE_TIMEOUT"
  /// Accepted `TSAPPLY_BRIDGE_TIMEOUT` values, in seconds.
  public static let timeoutRange = 0.1...600.0

  /// The scheme; stateless.
  public init() {}

  /// `bridge:BRIDGE-ID/WATCH-ID` (the watch ID in capitals: the bridge matches it ignoring
  /// case), or `bridge:BRIDGE-ID` when no watch ID is given, with NAME looked up in the stored
  /// pairings (no network), so `bridge:home/aa:bb:…` and `bridge:BRIDGE-ID/AA:BB:…` compare
  /// equal; `nil` when NAME is not paired (opening it fails anyway).
  public func canonicalSpec(_ location: String, context: DeviceOpenContext) -> String? {
    let parts = location.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
    guard let pairing = try? BridgePairings(environment: context.environment).find(parts[0]) else { return nil }
    let watchID = parts.count > 1 && !parts[1].isEmpty ? "/" + parts[1].uppercased() : ""
    return "bridge:\(pairing.bridgeID)\(watchID)"
  }

  /// Connects to the bridge and opens the watch.
  /// - Throws: `DeviceError`: 1004 (tsapply.bridge) for an unknown pairing, a malformed
  ///   `TSAPPLY_BRIDGE_TIMEOUT` or a watch the bridge does not serve; the link errors of `BridgeDevice`.
  public func open(_ location: String, spec: String, context: DeviceOpenContext) async throws(DeviceError) -> OpenedDevice {
    let parts = location.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
    let pairing = try BridgePairings(environment: context.environment).find(parts[0])
    guard let string = pairing.pairingString else {
      throw DeviceError(BridgeProtocol.errorDomain, .sdkConfigError,
                        "the pairing '\(pairing.name)' holds no valid key; pair again with 'tsapply bridge pair STRING --name \(pairing.name)'")
    }
    var timeout = BridgeDevice.defaultTimeout
    if let text = context.environment[Self.timeoutVariable], !text.isEmpty {
      guard let value = Double(text), Self.timeoutRange.contains(value) else {
        throw DeviceError(BridgeProtocol.errorDomain, .sdkConfigError,
                          "\(Self.timeoutVariable)='\(ControlCharacters.escaped(text))' is not a number of seconds from 0.1 to 600")
      }
      timeout = value
    }
    let watchID = parts.count > 1 && !parts[1].isEmpty ? parts[1] : nil
    let device: BridgeDevice
    do {
      device = try await BridgeDevice.connect(string, watchID: watchID, timeout: timeout)
    } catch {
      // Advice to pair again names the pairing used.
      var named = error
      named.message = error.message.replacingOccurrences(of: "--name \(BridgeCaller.pairingPlaceholder)'", with: "--name \(pairing.name)'")
      throw named
    }
    return OpenedDevice(device: device, adviceSpec: "bridge:\(parts[0])/\(device.watchID)")
  }
}
