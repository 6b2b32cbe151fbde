// Small app helpers: the bridge identity in the Keychain, the phone's Wi-Fi address for the
// pairing string, and the SDK session (connecting a watch is the vendor's flow).
import Foundation
import Security
import TopStepComKit
import TSBridge

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

/// What the app needs of the SDK's connected-device object, `[device getInterface:@"…"]` (make
/// the vendor's device class conform in an extension).
protocol SDKInterfaceProvider {
  func getInterface(_ name: String) -> Any?
}

/// The watch the SDK is connected to. Connecting (scan, bind, reconnect) follows the vendor's
/// sample app; this only reads the result: the device object, its MAC (from the SDK's peripheral
/// info, never the phone-local UUID) and which SDK platform it runs.
struct TopStepSession {
  /// The SDK's connected-device object.
  let device: any SDKInterfaceProvider
  let mac: String
  /// `npk`, `fit`, `fit-basic` or `fw`: the SDK path the watch uses (docs/platforms.md).
  let platform: String

  static func connectedWatch() async -> TopStepSession? {
    // Vendor-specific: return the SDK's connected device, its MAC in AA:BB:CC:DD:EE:FF form and
    // its platform (see the vendor's connection guide).
    nil
  }

  /// Calls `handler` with `true`/`false` when the SDK reports the link up or down.
  func onConnectionChange(_ handler: @escaping @Sendable (Bool) -> Void) {
    // Vendor-specific: forward the SDK's connection-state callback.
  }
}
