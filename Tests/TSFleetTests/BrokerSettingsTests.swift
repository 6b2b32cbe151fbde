import Foundation
import Testing
import TSFleet
import TSMQTT
import TSTestSupport

/// Where a broker's password comes from: `TSAPPLY_MQTT_PASSWORD`, else the first line of the
/// file `TSAPPLY_MQTT_PASSWORD_FILE` names (what a service's unit can hold, 0600), read bounded;
/// a file that cannot be read refuses every client made with the settings, saying why, rather
/// than connecting without a password (fresh-eyes finding: `monitor --fleet` took its password
/// only from the environment; the agent's `--password-file` was read whole).
@Suite struct BrokerSettingsTests {
  /// (the file's bytes, or nil for none; `TSAPPLY_MQTT_PASSWORD` too; the password; words of the problem)
  static let cases: [([UInt8]?, Bool, String?, String?)] = [
    (Array("s3cret\nignored\n".utf8), false, "s3cret", nil),
    (Array("s3cret\r\n".utf8), false, "s3cret", nil),
    (Array("from-file\n".utf8), true, "from-env", nil),
    (nil, false, nil, "TSAPPLY_MQTT_PASSWORD_FILE: "),
    ([UInt8](repeating: 0x41, count: 5000), false, nil, "TSAPPLY_MQTT_PASSWORD_FILE: "),
  ]

  @Test(arguments: cases.indices)
  func thePasswordComesFromTheEnvironmentOrItsFile(_ index: Int) throws {
    let (bytes, inEnvironment, password, problem) = Self.cases[index]
    let directory = try TSApplyBinary.temporaryDirectory().path
    if let bytes { try Data(bytes).write(to: URL(fileURLWithPath: directory + "/broker.password")) }
    var environment = ["TSAPPLY_MQTT_USERNAME": "monitor", "TSAPPLY_MQTT_PASSWORD_FILE": "broker.password"]
    if inEnvironment { environment["TSAPPLY_MQTT_PASSWORD"] = "from-env" }
    let settings = BrokerSettings(address: try MQTTAddress(parsing: "mqtt://127.0.0.1:1"), environment: environment, currentDirectory: directory)
    #expect(settings.password == password)
    if let problem {
      #expect(settings.passwordProblem?.hasPrefix(problem) == true, "\(settings.passwordProblem ?? "")")
      #expect(throws: MQTTError.self) { _ = try FleetBrokerView(settings: settings, site: "ward-a") }
    } else {
      #expect(settings.passwordProblem == nil)
    }
  }
}
