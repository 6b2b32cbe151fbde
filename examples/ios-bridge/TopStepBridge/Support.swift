// App helpers: the bridge identity in the Keychain, the phone's Wi-Fi address for the pairing
// string, and the watch session (SDK start, binding, login, reconnect, listener connections).
import Foundation
import Security
import TopStepComKit
import TSBridge
import TSDevice
import TSModel

/// The bridge's id and pairing key, created once and kept in the Keychain (this device only).
enum Keychain {
  private static let service = "tsapply.bridge"

  static func bridgeIdentity() -> (bridgeID: String, key: SealingKey) {
    let id = read("bridge-id").map { String(decoding: $0, as: UTF8.self) } ?? {
      let fresh = (0..<8).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
      write("bridge-id", Data(fresh.utf8))
      return fresh
    }()
    let key = read("pairing-key").flatMap { SealingKey(bytes: Array($0)) } ?? {
      let fresh = SealingKey.random()
      write("pairing-key", Data(fresh.bytes))
      return fresh
    }()
    return (id, key)
  }

  /// A fresh key: every laptop paired before must pair again.
  static func replaceKey() { write("pairing-key", Data(SealingKey.random().bytes)) }

  private static func read(_ account: String) -> Data? {
    var item: CFTypeRef?
    let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                                kSecAttrAccount as String: account, kSecReturnData as String: true]
    return SecItemCopyMatching(query as CFDictionary, &item) == errSecSuccess ? item as? Data : nil
  }

  private static func write(_ account: String, _ data: Data) {
    let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                                kSecAttrAccount as String: account]
    SecItemDelete(query as CFDictionary)
    var item = query
    item[kSecValueData as String] = data
    item[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
    SecItemAdd(item as CFDictionary, nil)
  }
}

/// The phone's IPv4 address on Wi-Fi (`en0`), for the pairing string.
enum LocalAddress {
  static func wifi() -> String? {
    var list: UnsafeMutablePointer<ifaddrs>?
    guard getifaddrs(&list) == 0, let first = list else { return nil }
    defer { freeifaddrs(list) }
    for entry in sequence(first: first, next: { $0.pointee.ifa_next }) {
      let interface = entry.pointee
      guard String(cString: interface.ifa_name) == "en0", interface.ifa_addr.pointee.sa_family == UInt8(AF_INET) else { continue }
      var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
      getnameinfo(interface.ifa_addr, socklen_t(interface.ifa_addr.pointee.sa_len), &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST)
      return String(cString: host)
    }
    return nil
  }
}

/// The watch connection through the SDK's `bleConnector` (TSBleConnectInterface.h, SDK
/// 1.0.0-beta9): the SDK initialised for the platform chosen in the app, binding a new watch
/// (scan, then connect with the persistent user id and the code the watch shows), logging in to
/// the bound one on later launches, and reconnecting with backoff (1 s doubling to 60 s, the
/// package's `Backoff`) whenever the link drops. Every `eTSBleStateConnected` starts a new
/// connection for the listeners (`SDKListeners.connected()`: the SDK's listeners die with the
/// link, so they are registered again, once), every drop ends one.
///
/// The connect completion is called several times (connecting 1, authenticating 2, preparing
/// data 3, connected 4; disconnected 0 with an error on failure or when the link drops), always
/// on the main queue. `TSBleConnectionState` and `TSSDKType` are NSUInteger enums; their raw
/// values are compared (`UInt`), so nothing depends on how Swift spells their cases.
@MainActor
final class WatchSession {
  enum State: Equatable {
    case notInitialised(String)
    case needsBinding
    case connecting
    case connected(mac: String, platform: String)
    case disconnected(String)
  }

  /// `TSBleConnectionState` raw values (TSBleConnectDefines.h).
  static let stateDisconnected: UInt = 0
  static let stateConnected: UInt = 4
  /// `TSSDKType` raw values (TSComEnumDefines.h): FIT 1, FW 2, TPB 6 (the vendor's sample app
  /// labels TPB "NPK"); SJ 3, CRP 4 and UTE 5 have no row in tsapply's platform table.
  static let platforms: [UInt: String] = [1: "fit", 2: "fw", 6: "npk"]

  let kit = TopStepComKit.sharedInstance()
  let sdk: TopStepSDK
  /// Shared by every `SDKDevice` made for this session (one per bridge service).
  let listeners: SDKListeners
  var onChange: ((State) -> Void)?
  private(set) var state = State.needsBinding { didSet { if state != oldValue { onChange?(state) } } }
  private var backoff = Backoff(Backoff.Policy(initial: .seconds(1), maximum: .seconds(60)))
  private var reconnecting: Task<Void, Never>?
  private let defaults = UserDefaults.standard

  init() {
    let sdk = TopStepSDK(kit: kit)
    self.sdk = sdk
    // The SDK is called on the main queue, as its sample app does (a service may register from a task).
    listeners = SDKListeners(register: { kind, report in DispatchQueue.main.async { sdk.register(kind, report) } })
  }

  /// The id the watch binds to; made once and kept, so a later launch logs in instead of binding again.
  var userID: String {
    if let id = defaults.string(forKey: "tsapply.userId") { return id }
    let id = UUID().uuidString
    defaults.set(id, forKey: "tsapply.userId")
    return id
  }

  /// The MAC of the bound watch, `AA:BB:CC:DD:EE:FF` (from the SDK's peripheral info, never
  /// the phone-local CoreBluetooth UUID).
  var boundMAC: String? { defaults.string(forKey: "tsapply.mac") }

  /// tsapply's platform name for the SDK type the SDK was initialised with; on FitCloud
  /// watches, `fit-basic` when the watch takes no custom reminders (tsapply's rule: the SDK
  /// names no flag for the basic firmware).
  var platform: String? {
    guard let type = kit.kitOption?.sdkType.rawValue, let name = Self.platforms[type] else { return nil }
    return name == "fit" && sdk.maxSupportedCustomReminderCount() == 0 ? "fit-basic" : name
  }

  /// Initialises the SDK for `sdkType` (a `TSSDKType` raw value) with the vendor's licence,
  /// then logs in to the bound watch, if any.
  func start(sdkType: UInt, license: String) {
    let options = TSKitConfigOptions.defaultOption()
    guard let type = TSSDKType(rawValue: sdkType) else { return state = .notInitialised("unknown SDK type \(sdkType)") }
    options.sdkType = type
    options.license = license
    // - initSDKWithConfigOptions:(TSKitConfigOptions *) completion:(TSCompletionBlock)
    kit.initSDK(withConfigOptions: options) { [weak self] isSuccess, error in
      Task { @MainActor in
        guard let self else { return }
        guard isSuccess, error == nil else {
          return self.state = .notInitialised(error?.localizedDescription ?? "the SDK did not start")
        }
        if self.boundMAC != nil { self.reconnect() } else { self.state = .needsBinding }
      }
    }
  }

  /// Scans for `seconds`, handing each watch found to `found` (main queue).
  func scan(seconds: TimeInterval = 15, found: @escaping @MainActor (TSPeripheral) -> Void) {
    // - startSearchPeripheral:(NSTimeInterval) discoverPeripheral:(TSScanDiscoveryBlock) completion:(TSScanCompletionBlock)
    // (The SDK calls back on the main queue.)
    kit.bleConnector?.startSearchPeripheral(seconds, discoverPeripheral: { peripheral in
      MainActor.assumeIsolated { found(peripheral) }
    }, completion: { _, _ in })
  }

  /// Binds `peripheral` with the code the watch shows (`authCode`) and the persistent user id.
  func bind(_ peripheral: TSPeripheral, authCode: String) {
    kit.bleConnector?.stopSearchPeripheral()
    let param = TSPeripheralConnectParam(userId: userID)
    param.authCode = authCode
    connect(peripheral, param)
  }

  /// Logs in to the bound watch again (as the vendor's sample app does: a peripheral carrying
  /// only the saved MAC, and the same user id).
  func reconnect() {
    guard let mac = boundMAC else { return state = .needsBinding }
    let peripheral = TSPeripheral()
    peripheral.systemInfo?.mac = mac
    connect(peripheral, TSPeripheralConnectParam(userId: userID))
  }

  private func connect(_ peripheral: TSPeripheral, _ param: TSPeripheralConnectParam) {
    reconnecting?.cancel()
    state = .connecting
    // - connectWithPeripheral:(TSPeripheral *) param:(TSPeripheralConnectParam *) completion:(TSBleConnectionCompletionBlock)
    kit.bleConnector?.connect(with: peripheral, param: param) { [weak self] connectionState, error in
      let raw = connectionState.rawValue
      Task { @MainActor in self?.handle(raw, error) }
    }
  }

  /// One report of the connect completion.
  private func handle(_ raw: UInt, _ error: Error?) {
    switch raw {
    case Self.stateConnected:
      backoff.reset()
      guard let mac = kit.connectedPeripheral?.systemInfo?.mac, let platform else {
        return state = .disconnected("connected, but the SDK gave no MAC or a platform tsapply does not know")
      }
      defaults.set(mac.uppercased(), forKey: "tsapply.mac")
      listeners.connected()
      state = .connected(mac: mac.uppercased(), platform: platform)
    case Self.stateDisconnected:
      listeners.disconnected()
      state = .disconnected(error?.localizedDescription ?? "the watch disconnected")
      scheduleReconnect()
    default:
      if case .connected = state { listeners.disconnected() }
      state = .connecting
    }
  }

  private func scheduleReconnect() {
    guard boundMAC != nil else { return }
    let delay = backoff.next()
    reconnecting?.cancel()
    reconnecting = Task { [weak self] in
      try? await Task.sleep(for: delay)
      guard !Task.isCancelled else { return }
      self?.reconnect()
    }
  }
}
