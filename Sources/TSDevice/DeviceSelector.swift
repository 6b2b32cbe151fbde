import Foundation
import TSModel

/// Chooses the watch a command talks to (every command that reads or writes a watch uses this).
///
/// The spec comes from `--device`, else the `TSAPPLY_DEVICE` environment variable, else
/// `sim:.tsapply/device.json` under the current directory. The only form today is `sim:PATH`, a
/// simulated watch whose state lives in the JSON file PATH (relative to the current directory).
/// Only the default watch is created on first use (the `default` profile, its directory created
/// 0700, the file 0600); a watch named by `--device` or `TSAPPLY_DEVICE` must exist (a typo
/// never creates a new watch; `tsapply device init` creates one).
/// A bridge to a real watch will add another scheme here.
public enum DeviceSelector {
  /// Environment variable naming the device when `--device` is not given.
  public static let environmentVariable = "TSAPPLY_DEVICE"
  /// The state file of the default simulated watch, relative to the current directory.
  public static let defaultPath = ".tsapply/device.json"
  /// The `sim:` scheme prefix.
  public static let simulatorScheme = "sim:"

  /// The device `spec` (or the environment, or the default) names, with simulation options from
  /// `TSAPPLY_SIM_LATENCY` and `TSAPPLY_SIM_FAULT`.
  /// - Throws: `DeviceError` (simulator domain) for an unknown scheme, a bad option value, or a
  ///   state file that cannot be created or read.
  public static func open(spec: String?, environment: [String: String], currentDirectory: String) throws(DeviceError) -> any Device {
    try openSimulated(spec: spec, environment: environment, currentDirectory: currentDirectory)
  }

  /// As `open`, typed as the simulated watch (for `tsapply device …`, which needs its extras).
  /// - Throws: as `open`; 4001 (simulator) "no simulated watch at PATH; create one with
  ///   'tsapply device init --device sim:PATH'" when a named watch does not exist, or "PATH is a
  ///   directory" when it names one.
  public static func openSimulated(spec: String?, environment: [String: String],
                                   currentDirectory: String) throws(DeviceError) -> SimulatedDevice {
    let options = try SimulationOptions(environment: environment)
    let path = try simulatorPath(spec: spec, environment: environment, currentDirectory: currentDirectory)
    guard let named = try adviceSpec(spec: spec, environment: environment, currentDirectory: currentDirectory) else {
      return try SimulatedDevice.openOrCreate(path: path, options: options)
    }
    try StateFile.refuseDirectory(path)
    guard FileManager.default.fileExists(atPath: path) else {
      throw .simulator(.dataGetFailed, "no simulated watch at \(path); create one with '\(WatchName(spec: named).initCommand(force: false))'")
    }
    return try SimulatedDevice(path: path, options: options, spec: named)
  }

  /// Whether neither `spec` nor `TSAPPLY_DEVICE` names a watch, so the default one is used (and
  /// created on first use).
  public static func isDefault(spec: String?, environment: [String: String]) -> Bool {
    spec == nil && (environment[environmentVariable] ?? "").isEmpty
  }

  /// The `--device` value to quote in advice about this watch: `sim:` and the absolute path
  /// for a named watch, `nil` for the default one (commands need no option for it).
  /// - Throws: as `simulatorPath`.
  public static func adviceSpec(spec: String?, environment: [String: String], currentDirectory: String) throws(DeviceError) -> String? {
    let path = try simulatorPath(spec: spec, environment: environment, currentDirectory: currentDirectory)
    return isDefault(spec: spec, environment: environment) ? nil : simulatorScheme + path
  }

  /// The absolute state-file path a spec names.
  /// - Throws: `DeviceError` (simulator, 1004) for a spec that is not `sim:PATH`, saying where
  ///   it came from and, for a bare path (`watches/alice.json`), suggesting `sim:watches/alice.json`.
  public static func simulatorPath(spec: String?, environment: [String: String], currentDirectory: String) throws(DeviceError) -> String {
    let fromEnvironment = environment[environmentVariable].flatMap { $0.isEmpty ? nil : $0 }
    let chosen = spec ?? fromEnvironment ?? simulatorScheme + defaultPath
    guard chosen.hasPrefix(simulatorScheme), chosen.count > simulatorScheme.count else {
      let source = spec == nil ? "\(environmentVariable)='\(chosen)'" : "--device '\(chosen)'"
      throw .simulator(.sdkConfigError, unknownSpecMessage(chosen, source: source))
    }
    let path = String(chosen.dropFirst(simulatorScheme.count))
    return path.hasPrefix("/") ? path : (currentDirectory as NSString).appendingPathComponent(path)
  }

  /// "unknown device …; expected sim:PATH …", with the spec the user probably meant.
  static func unknownSpecMessage(_ chosen: String, source: String) -> String {
    var message = "unknown device \(source): expected sim:PATH, the path of a simulated watch's state file"
    if chosen == simulatorScheme {
      message += ", with the path after 'sim:' (e.g. sim:\(defaultPath))"
    } else if let meant = meantSpec(chosen) {
      message += "; did you mean '\(meant)'?"
    }
    return message
  }

  /// `sim:PATH` for a bare path (no scheme before the first `/`) or a scheme spelt `SIM:`.
  static func meantSpec(_ chosen: String) -> String? {
    let scheme = chosen.prefix { $0 != ":" && $0 != "/" }
    if scheme.count == chosen.count || chosen.dropFirst(scheme.count).hasPrefix("/") {
      return simulatorScheme + chosen
    }
    if scheme.lowercased() == "sim", chosen.count > simulatorScheme.count {
      return simulatorScheme + chosen.dropFirst(simulatorScheme.count)
    }
    return nil
  }
}
