import Foundation
import TSBridge
import TSModel

/// A bridge this user paired with (`tsapply bridge pair`), as stored in
/// `$XDG_CONFIG_HOME/tsapply/bridges/NAME.json` (else `~/.config/tsapply/bridges/`; the
/// directory 0700, the file 0600: it holds the pairing key).
public struct BridgePairing: Codable, Hashable, Sendable {
  /// The name the user gave it (`bridge:NAME` specs); the bridge id when none was given.
  public var name: String
  /// The bridge's id.
  public var bridgeID: String
  /// Where it listens.
  public var host: String
  /// Its port.
  public var port: Int
  /// The pairing key, unpadded base64url.
  public var key: String
  /// When it was paired, ISO 8601 UTC.
  public var pairedAt: String

  /// A pairing named `name` from `string`, paired at `date`.
  public init(name: String, string: PairingString, date: Date = Date()) {
    self.name = name
    bridgeID = string.bridgeID
    host = string.host
    port = string.port
    key = string.key.base64url
    pairedAt = Self.timeFormat.string(from: date)
  }

  /// `pairedAt`'s form: ISO 8601 UTC with milliseconds (which pairing came last: `BridgePairings.find`).
  private static var timeFormat: ISO8601DateFormatter {
    let format = ISO8601DateFormatter()
    format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return format
  }

  /// When it was paired (`pairedAt`, with or without fractions of a second); `.distantPast` when unreadable.
  public var pairedDate: Date {
    Self.timeFormat.date(from: pairedAt) ?? ISO8601DateFormatter().date(from: pairedAt) ?? .distantPast
  }

  /// The pairing string it came from, when its key is valid.
  public var pairingString: PairingString? {
    SealingKey(base64url: key).map { PairingString(host: host, port: port, bridgeID: bridgeID, key: $0) }
  }
}

/// The stored pairings of one user.
public struct BridgePairings: Sendable {
  /// The directory holding them.
  public var directory: String

  /// The pairings directory for `environment`: `$XDG_CONFIG_HOME/tsapply/bridges` when that is
  /// an absolute path, else `$HOME/.config/tsapply/bridges`.
  public init(environment: [String: String]) {
    let config: String
    if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
      config = xdg
    } else {
      config = (environment["HOME"] ?? NSHomeDirectory()) + "/.config"
    }
    directory = config + "/tsapply/bridges"
  }

  /// Whether `name` may name a pairing: 1–64 of letters, digits, `.`, `_`, `-`, not starting with `.` or `-`.
  public static func isValidName(_ name: String) -> Bool {
    guard let first = name.first, (1...64).contains(name.count), first != ".", first != "-" else { return false }
    return name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "_" || $0 == "-") }
  }

  /// The file of pairing `name`.
  public func path(of name: String) -> String { directory + "/" + name + ".json" }

  /// Stores `pairing` (replacing one of the same name). Returns the other pairings of the same
  /// bridge that hold another key or address: a bridge has one key at a time, so one of them is
  /// stale (said by `tsapply bridge pair`; none is changed, as the string given may be the old one).
  /// - Throws: `SecureFileError` when the directory or file cannot be written.
  @discardableResult
  public func save(_ pairing: BridgePairing) throws(SecureFileError) -> [BridgePairing] {
    try SecureFile.write(BridgeJSON.encode(pairing), to: path(of: pairing.name))
    // A folder others may write to (made so before tsapply): stored, but said now, as it would
    // be refused when used (`find`).
    _ = try SecureFile.readKey(path(of: pairing.name))
    return all().filter { other in
      other.name != pairing.name && other.bridgeID == pairing.bridgeID
        && (other.key != pairing.key || other.host != pairing.host || other.port != pairing.port)
    }
  }

  /// Every stored pairing, by name; a file `SecureFile.readKey` refuses (others may read or
  /// replace it) is left out.
  public func all() -> [BridgePairing] {
    let files = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    return files.filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }.sorted().compactMap { file in
      (try? SecureFile.readKey(directory + "/" + file)).flatMap { $0 }.flatMap { BridgeJSON.decode(BridgePairing.self, from: $0) }
    }
  }

  /// The pairing named `name`, else the one with bridge id `name` (an identity `bridge:ID/…`).
  /// - Throws: `DeviceError` (tsapply.bridge, 1004) naming the pairings there are and how to
  ///   pair, or why the pairing's file is not used (others may read or replace it:
  ///   `SecureFile.readKey`; fresh-eyes fe98 #3).
  public func find(_ name: String) throws(DeviceError) -> BridgePairing {
    var named: BridgePairing?
    if Self.isValidName(name) {
      let bytes: [UInt8]?
      do { bytes = try SecureFile.readKey(path(of: name)) } catch {
        throw DeviceError(BridgeProtocol.errorDomain, .sdkConfigError, "the pairing '\(name)' is not used: \(error)")
      }
      named = bytes.flatMap { BridgeJSON.decode(BridgePairing.self, from: $0) }
    }
    // A name the user gave, for another bridge than one of that id: that pairing.
    if let named, named.bridgeID != name { return named }
    // A bridge id (a saved plan's, a backup's, a record's watch identity; or a pairing named
    // after its bridge by default): the pairing of that bridge paired last, which holds its
    // current key when it was re-paired under another name (fresh-eyes fe101 #1: a saved plan
    // went to the stale pairing named after the bridge, beside a working `dad`).
    let all = all()
    if let pairing = all.filter({ $0.bridgeID == name }).max(by: { ($0.pairedDate, $0.name) < ($1.pairedDate, $1.name) }) ?? named { return pairing }
    let known = all.isEmpty ? "no bridge is paired yet" : "paired: " + all.map(\.name).joined(separator: ", ")
    throw DeviceError(BridgeProtocol.errorDomain, .sdkConfigError,
                      "no bridge is paired as '\(ControlCharacters.escaped(name))' (\(known)); pair one with 'tsapply bridge pair STRING --name NAME', STRING as 'tsapply bridge serve' or the bridge app shows it")
  }
}
