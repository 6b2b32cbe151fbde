/// Where a broker listens: `mqtt://HOST[:PORT]` (plain TCP, port 1883 by default) or
/// `mqtts://HOST[:PORT]` (TLS, port 8883 by default). An IPv6 host is written in brackets:
/// `mqtt://[::1]:1883`.
public struct MQTTAddress: Hashable, Sendable, CustomStringConvertible {
  /// The host name or address, without brackets.
  public var host: String
  /// The TCP port.
  public var port: Int
  /// Whether the connection uses TLS (`mqtts://`).
  public var usesTLS: Bool

  /// An address from its parts.
  public init(host: String, port: Int, usesTLS: Bool = false) {
    self.host = host
    self.port = port
    self.usesTLS = usesTLS
  }

  /// The address `text` spells.
  /// - Throws: `MQTTError.invalidAddress` saying what is wrong (another scheme, no host, a
  ///   port that is not 1–65535, a path or credentials in the URL).
  public init(parsing text: String) throws(MQTTError) {
    let schemes: [(String, Bool, Int)] = [("mqtt://", false, 1883), ("mqtts://", true, 8883)]
    guard let (prefix, tls, defaultPort) = schemes.first(where: { text.hasPrefix($0.0) }) else {
      throw .invalidAddress("'\(text)' is not a broker address; expected mqtt://HOST:PORT or mqtts://HOST:PORT")
    }
    var rest = Substring(text.dropFirst(prefix.count))
    if rest.hasSuffix("/") { rest = rest.dropLast() }
    guard !rest.contains("/"), !rest.contains("@"), !rest.contains("?") else {
      throw .invalidAddress("'\(text)': a broker address is only a host and a port (credentials go in a password file, not the URL)")
    }
    var host: Substring
    var portText: Substring?
    if rest.hasPrefix("[") {
      guard let close = rest.firstIndex(of: "]") else { throw .invalidAddress("'\(text)': an IPv6 address needs its closing ']'") }
      host = rest[rest.index(after: rest.startIndex)..<close]
      let after = rest[rest.index(after: close)...]
      if !after.isEmpty {
        guard after.hasPrefix(":") else { throw .invalidAddress("'\(text)': expected ':PORT' after the address") }
        portText = after.dropFirst()
      }
    } else if let colon = rest.lastIndex(of: ":") {
      host = rest[..<colon]
      portText = rest[rest.index(after: colon)...]
    } else {
      host = rest
    }
    guard !host.isEmpty else { throw .invalidAddress("'\(text)' names no host") }
    var port = defaultPort
    if let portText {
      guard let value = Int(portText), (1...65535).contains(value) else {
        throw .invalidAddress("'\(text)': the port must be a number from 1 to 65535")
      }
      port = value
    }
    self.init(host: String(host), port: port, usesTLS: tls)
  }

  /// `mqtt://HOST:PORT` (or `mqtts://…`).
  public var description: String {
    let shownHost = host.contains(":") ? "[\(host)]" : host
    return "\(usesTLS ? "mqtts" : "mqtt")://\(shownHost):\(port)"
  }
}

/// What went wrong talking to a broker.
public enum MQTTError: Error, Hashable, Sendable, CustomStringConvertible {
  /// A broker address that cannot be used.
  case invalidAddress(String)
  /// libmosquitto refused a call (`mosquitto_strerror`'s text, and what was being done).
  case library(String)
  /// The broker refused the connection (bad credentials, not authorised): its CONNACK reason.
  case refused(String)
  /// TLS failed (the broker's certificate is not trusted, or this client's is refused).
  case tls(String)
  /// The operation did not finish because the connection is closed or was closed meanwhile.
  case notConnected
  /// The operation did not finish in time.
  case timedOut(String)

  public var description: String {
    switch self {
    case .invalidAddress(let text): text
    case .library(let text): text
    case .refused(let reason): "the broker refused the connection: \(reason)"
    case .tls(let reason): "TLS failed \(reason)"
    case .notConnected: "not connected to the broker"
    case .timedOut(let what): "timed out \(what)"
    }
  }
}
