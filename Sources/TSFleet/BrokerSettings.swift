import TSModel
import TSMQTT

/// How `tsapply agent` and `tsapply apply|status --fleet` reach a fleet's broker: its address,
/// and the credentials the broker asks for. Secrets never come from the command line (other
/// users see it in `ps`): the password comes from a file or the environment.
///
/// | variable | meaning |
/// |---|---|
/// | `TSAPPLY_MQTT_USERNAME` | user name |
/// | `TSAPPLY_MQTT_PASSWORD` | password (or `--password-file` for the agent) |
/// | `TSAPPLY_MQTT_PASSWORD_FILE` | a file whose first line is the password, when `TSAPPLY_MQTT_PASSWORD` is not set (a service's unit names a 0600 file) |
/// | `TSAPPLY_MQTT_CA_FILE` | CA certificates (PEM) that sign the broker's certificate, for `mqtts://` |
/// | `TSAPPLY_MQTT_CERT_FILE`, `TSAPPLY_MQTT_KEY_FILE` | a client certificate and its key |
public struct BrokerSettings: Sendable {
  /// Environment variables read by `init(address:environment:)`.
  public static let usernameVariable = "TSAPPLY_MQTT_USERNAME"
  /// The password's variable.
  public static let passwordVariable = "TSAPPLY_MQTT_PASSWORD"
  /// The password file's variable.
  public static let passwordFileVariable = "TSAPPLY_MQTT_PASSWORD_FILE"
  /// The most bytes a password file may have.
  public static let passwordFileMaxBytes = 4096
  /// The CA file's variable.
  public static let caFileVariable = "TSAPPLY_MQTT_CA_FILE"
  /// The client certificate's variable.
  public static let certificateVariable = "TSAPPLY_MQTT_CERT_FILE"
  /// The client key's variable.
  public static let keyVariable = "TSAPPLY_MQTT_KEY_FILE"

  /// The broker.
  public var address: MQTTAddress
  /// User name, if the broker asks for one.
  public var username: String?
  /// Password for `username`.
  public var password: String?
  /// TLS files (used with an `mqtts://` address).
  public var tls: MQTTClient.TLS
  /// Why the password file (`TSAPPLY_MQTT_PASSWORD_FILE`) could not be read; every client made
  /// with these settings is refused with it (`configuration`), rather than connecting without
  /// a password and being told only "not authorised".
  public var passwordProblem: String?

  /// Settings from their parts.
  public init(address: MQTTAddress, username: String? = nil, password: String? = nil, tls: MQTTClient.TLS = MQTTClient.TLS()) {
    self.address = address
    self.username = username
    self.password = password
    self.tls = tls
  }

  /// Settings for `address` from the `TSAPPLY_MQTT_…` variables of `environment`; a relative
  /// `TSAPPLY_MQTT_PASSWORD_FILE` is taken from `currentDirectory`.
  public init(address: MQTTAddress, environment: [String: String], currentDirectory: String? = nil) {
    func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
    self.init(address: address, username: value(Self.usernameVariable), password: value(Self.passwordVariable),
              tls: MQTTClient.TLS(caFile: value(Self.caFileVariable), certificateFile: value(Self.certificateVariable),
                                  keyFile: value(Self.keyVariable)))
    if password == nil, let file = value(Self.passwordFileVariable) {
      let path = file.hasPrefix("/") || currentDirectory == nil ? file : currentDirectory! + "/" + file
      switch Self.password(fromFile: path, displayName: file) {
      case .success(let text): password = text
      case .failure(let problem): passwordProblem = "\(Self.passwordFileVariable): \(problem)"
      }
    }
  }

  /// The first line of the password file at `path` (named `displayName`), read bounded
  /// (`passwordFileMaxBytes`), or why it cannot be read.
  public static func password(fromFile path: String, displayName: String) -> Result<String, ManifestReadError> {
    ManifestSource.file(path: path, displayName: displayName).read(maxBytes: passwordFileMaxBytes, noun: "password file")
      .map { bytes in String(decoding: bytes.prefix { $0 != 0x0A && $0 != 0x0D }, as: UTF8.self) }
  }

  /// A client configuration with these credentials.
  /// - Throws: `MQTTError.refused` when the password file could not be read (`passwordProblem`).
  func configuration(clientID: String, cleanSession: Bool, subscriptions: [String], subscriptionQoS: Int = 1,
                     will: MQTTClient.Will? = nil, keepAlive: Int = 30) throws(MQTTError) -> MQTTClient.Configuration {
    if let passwordProblem { throw .refused(passwordProblem) }
    return MQTTClient.Configuration(clientID: clientID, cleanSession: cleanSession, subscriptions: subscriptions,
                                    subscriptionQoS: subscriptionQoS, keepAlive: keepAlive,
                                    will: will, username: username, password: password, tls: address.usesTLS ? tls : nil)
  }
}
