import Foundation
import TSBridge
import TSDevice
import TSModel

/// The reference bridge's side of `tsapply bridge serve`: the simulated watches it serves, each
/// with a MAC-style id derived from its identity, and the bridge's own id and pairing key, kept
/// in a file so a restart keeps the pairing.
public enum ReferenceBridge {
  /// A MAC-style id for the watch `identity` names: the first 6 bytes of its SHA-256, marked
  /// locally administered and unicast (first byte `| 0x02 & ~0x01`), `AA:BB:CC:DD:EE:FF`. The
  /// same identity always gives the same id.
  public static func watchID(for identity: String) -> String {
    let hex = Array(SHA256Digest.hex(of: Array(identity.utf8)).prefix(12))
    var bytes = stride(from: 0, to: 12, by: 2).map { UInt8(String(hex[$0..<$0 + 2]), radix: 16)! }
    bytes[0] = (bytes[0] | 0x02) & 0xFE
    return bytes.map { String(format: "%02X", $0) }.joined(separator: ":")
  }

  /// The watches `specs` name (each must be `sim:PATH` of an existing watch), ready to serve.
  /// - Throws: `DeviceError` from opening a watch or reading its capabilities; 1004 for a spec
  ///   of another scheme or a watch given twice.
  public static func watches(_ specs: [String], environment: [String: String], currentDirectory: String) async throws(DeviceError) -> [ServedWatch] {
    let registry = DeviceRegistry(schemes: [SimulatorScheme()], defaultSpec: DeviceSelector.simulatorScheme + DeviceSelector.defaultPath)
    var served: [ServedWatch] = []
    for spec in specs {
      guard spec.hasPrefix(DeviceSelector.simulatorScheme) else {
        throw DeviceError(.simulator, .sdkConfigError, "the reference bridge serves simulated watches only: expected --device sim:PATH, got '\(spec)'")
      }
      let opened = try await registry.open(spec, environment: environment, currentDirectory: currentDirectory)
      let id = watchID(for: opened.device.identity)
      guard !served.contains(where: { $0.id == id }) else {
        throw DeviceError(.simulator, .sdkConfigError, "\(spec) is given twice")
      }
      served.append(ServedWatch(id: id, device: opened.device, capabilities: try await opened.device.capabilities()))
    }
    return served
  }

  /// The bridge's id and pairing key as kept between starts.
  public struct Identity: Codable, Hashable, Sendable {
    /// The bridge's id (16 lower-case hex digits when generated).
    public var bridgeID: String
    /// The pairing key, unpadded base64url.
    public var key: String

    /// The key, when the file holds a valid one.
    public var sealingKey: SealingKey? { SealingKey(base64url: key) }
  }

  /// The identity in `path`, created (directory 0700, file 0600) with a fresh id and key when
  /// the file does not exist; with `newKey`, a fresh key replaces the kept one (clients must pair again).
  /// - Throws: `SecureFileError` when it cannot be written, or used (others may read or replace
  ///   it: `SecureFile.readKey`), `PairingError` for a file that holds no valid identity.
  public static func identity(at path: String, newKey: Bool) throws -> Identity {
    if let data = try SecureFile.readKey(path) {
      guard var identity = try? JSONDecoder().decode(Identity.self, from: Data(data)), identity.sealingKey != nil,
            PairingString.isValidBridgeID(identity.bridgeID) else {
        throw PairingError("\(path) does not hold a bridge identity; remove it to make a new one")
      }
      if newKey {
        identity.key = SealingKey.random().base64url
        try write(identity, to: path)
      }
      return identity
    }
    var generator = SystemRandomNumberGenerator()
    let id = (0..<8).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    let identity = Identity(bridgeID: id, key: SealingKey.random().base64url)
    try write(identity, to: path)
    return identity
  }

  private static func write(_ identity: Identity, to path: String) throws {
    try SecureFile.write(BridgeJSON.encode(identity), to: path)
  }
}


extension ReferenceBridge {
  /// Where `tsapply bridge serve` keeps its id and key: `$XDG_CONFIG_HOME/tsapply/bridge-serve.json`
  /// when that is absolute, else `$HOME/.config/tsapply/bridge-serve.json`.
  public static func identityPath(environment: [String: String]) -> String {
    let config = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
      ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.config"
    return config + "/tsapply/bridge-serve.json"
  }

  /// Where `tsapply bridge serve` keeps the nonces it accepted (`NonceJournal`): beside the
  /// identity, `bridge-serve.nonces.0` and `.1` (0600).
  public static func noncePath(environment: [String: String]) -> String {
    (identityPath(environment: environment) as NSString).deletingPathExtension + ".nonces"
  }

  /// A running reference bridge and what a client needs to pair with it.
  public struct Running: Sendable {
    /// The server.
    public var server: BridgeServer
    /// The pairing string to show.
    public var pairing: PairingString
    /// The watches served.
    public var watches: [ServedWatch]
    /// Whether the pairing key was made by this start (no identity kept yet, or `newKey`): no
    /// client can have paired with it yet.
    public var keyIsNew = false
  }

  /// Opens the simulated watches `specs` name and serves them on `host`:`port` under the kept
  /// identity (`identityPath`; a fresh key with `newKey`), with the faults of
  /// `TSAPPLY_BRIDGE_FAULT`. `advertise` is the host put in the pairing string (default `host`).
  /// Each request is logged to `log` without any body, name or number.
  /// - Throws: `DeviceError` for a watch that cannot be opened or a malformed
  ///   `TSAPPLY_BRIDGE_FAULT`; `HTTPServerError` when the address cannot be bound; identity
  ///   file errors as `identity(at:newKey:)`; `NonceJournalError` when the nonce journal
  ///   (`noncePath`) cannot be opened or read.
  public static func start(_ specs: [String], host: String, port: UInt16, advertise: String? = nil, newKey: Bool = false,
                           environment: [String: String], currentDirectory: String,
                           log: @escaping @Sendable (String) -> Void) async throws -> Running {
    var faults = BridgeFaults()
    if let text = environment[BridgeFaults.variable], !text.isEmpty {
      guard let parsed = BridgeFaults(parsing: text) else {
        throw DeviceError(.simulator, .sdkConfigError,
                          "\(BridgeFaults.variable)='\(text)' is not drop-response@WHEN or delay@WHEN:MS (WHEN a call number, a method name, or for drop-response 'lease'), comma-separated")
      }
      faults = parsed
    }
    let served = try await watches(specs, environment: environment, currentDirectory: currentDirectory)
    let path = identityPath(environment: environment)
    let keyIsNew = newKey || !FileManager.default.fileExists(atPath: path)
    let identity = try identity(at: path, newKey: newKey)
    guard let key = identity.sealingKey else { throw PairingError("the bridge identity holds no valid key") }
    let replay = try ReplayGuard(journal: NonceJournal(path: noncePath(environment: environment)))
    let service = BridgeService(bridgeID: identity.bridgeID, key: key, watches: served, cipher: ChaCha20Poly1305(),
                                replay: replay, faults: faults, log: log)
    await service.startListening()
    let server = try BridgeServer(service: service, host: host, port: port)
    let pairing = PairingString(host: advertise ?? host, port: Int(server.port), bridgeID: identity.bridgeID, key: key)
    return Running(server: server, pairing: pairing, watches: served, keyIsNew: keyIsNew)
  }
}
