import Foundation

/// What a client needs to reach a bridge and seal its traffic: host, port, bridge id and the
/// pairing key, written as one line to copy (or scan as a QR code):
///
///     tsapply-bridge:v1/HOST/PORT/BRIDGE-ID/KEY
///
/// HOST an IPv4 address or host name, PORT 1–65535, BRIDGE-ID 1–64 of `a-z 0-9 -`, KEY the 32-byte
/// pairing key in unpadded base64url (43 characters). See docs/bridge-protocol.md "Pairing".
public struct PairingString: Hashable, Sendable, CustomStringConvertible {
  /// The prefix, with the protocol's major version.
  public static let prefix = "tsapply-bridge:v\(BridgeProtocol.major)/"

  /// Where the bridge listens.
  public var host: String
  /// Its port.
  public var port: Int
  /// Its id.
  public var bridgeID: String
  /// The pairing key.
  public var key: SealingKey

  /// A pairing of the bridge `bridgeID` at `host`:`port` with `key`.
  public init(host: String, port: Int, bridgeID: String, key: SealingKey) {
    self.host = host
    self.port = port
    self.bridgeID = bridgeID
    self.key = key
  }

  /// The one-line form.
  public var description: String { "\(Self.prefix)\(host)/\(port)/\(bridgeID)/\(key.base64url)" }

  /// Whether `id` is a valid bridge id: 1–64 of `a-z`, `0-9`, `-`.
  public static func isValidBridgeID(_ id: String) -> Bool {
    (1...64).contains(id.count) && id.allSatisfy { ($0.isASCII && ($0.isLowercase || $0.isNumber)) || $0 == "-" }
  }

  /// Reads a pairing string.
  /// - Throws: `PairingError` saying which part is wrong (never quoting the key).
  public init(parsing text: String) throws(PairingError) {
    let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
    if trimmed.hasPrefix("tsapply-bridge:v"), !trimmed.hasPrefix(Self.prefix) {
      let version = trimmed.dropFirst("tsapply-bridge:".count).prefix { $0 != "/" }
      throw PairingError("the pairing string is for bridge protocol \(version.prefix(8)); this tsapply speaks v\(BridgeProtocol.major): update tsapply or the bridge app")
    }
    guard trimmed.hasPrefix(Self.prefix) else {
      throw PairingError("a pairing string starts with '\(Self.prefix)' (copy it whole from 'tsapply bridge serve' or the bridge app)")
    }
    let parts = trimmed.dropFirst(Self.prefix.count).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
    guard parts.count == 4 else { throw PairingError("a pairing string has four parts after '\(Self.prefix)': HOST/PORT/BRIDGE-ID/KEY") }
    guard !parts[0].isEmpty, parts[0].count <= 253,
          parts[0].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == ":") }) else {
      throw PairingError("the pairing string's host is not an address or host name")
    }
    guard let port = Int(parts[1]), (1...65535).contains(port) else { throw PairingError("the pairing string's port is not 1–65535") }
    guard Self.isValidBridgeID(parts[2]) else { throw PairingError("the pairing string's bridge id is not 1–64 of a-z, 0-9 and '-'") }
    guard let key = SealingKey(base64url: parts[3]) else {
      throw PairingError("the pairing string's key is not 32 bytes of base64url (43 characters): copy the whole string")
    }
    self.init(host: parts[0], port: port, bridgeID: parts[2], key: key)
  }
}

/// A pairing string that cannot be read; the message never holds the key.
public struct PairingError: Error, Hashable, Sendable, CustomStringConvertible {
  /// What is wrong.
  public var message: String
  /// An error saying `message`.
  public init(_ message: String) { self.message = message }
  public var description: String { message }
}
