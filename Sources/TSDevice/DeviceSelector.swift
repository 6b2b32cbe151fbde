import Foundation
import TSModel

/// Chooses the watch a command talks to (every command that reads or writes a watch uses this).
///
/// The simulated watch's side of device selection, for the commands that work only with a
/// simulated watch (`tsapply device init|show|simulate`) and for `SimulatorScheme`: the spec
/// comes from `--device`, else `TSAPPLY_DEVICE`, else `sim:.tsapply/device.json` under the
/// current directory (`DeviceRegistry.chosenSpec`), and must be `sim:PATH`. Only the default
/// watch is created on first use (the `default` profile, its directory created 0700, the file
/// 0600); a watch named by `--device` or `TSAPPLY_DEVICE` must exist (a typo never creates a
/// new watch; `tsapply device init` creates one). Other commands open devices of every scheme
/// through a `DeviceRegistry`.
public enum DeviceSelector {
  /// Environment variable naming the device when `--device` is not given.
  public static let environmentVariable = DeviceRegistry.environmentVariable
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
    guard isDefault(spec: spec, environment: environment) else { return try openNamed(path: path, options: options) }
    return try SimulatedDevice.openOrCreate(path: path, options: options)
  }

  /// The existing simulated watch at the absolute `path`, named by `--device sim:PATH` in advice.
  /// - Throws: 4001 "no simulated watch at PATH; create one with …" when there is none, or
  ///   when `path` is a directory; otherwise as `SimulatedDevice.init(path:options:spec:)`.
  static func openNamed(path: String, options: SimulationOptions) throws(DeviceError) -> SimulatedDevice {
    let named = simulatorScheme + path
    // One look at the path: a missing watch must not get a lock file made beside it.
    var info = stat()
    guard stat(path, &info) == 0 else {
      throw .simulator(.dataGetFailed, "no simulated watch at \(path); create one with '\(WatchName(spec: named).initCommand(force: false))'")
    }
    if info.st_mode & S_IFMT == S_IFDIR { try StateFile.refuseDirectory(path) }
    return try SimulatedDevice(path: path, options: options, spec: named)
  }

  /// `path` made absolute against `currentDirectory`, without `.` and `..` components
  /// (`FilePaths.undotted`): `sim:../sp/s.json` is the watch at `/home/ana/sp/s.json`, and
  /// messages and advice name it so.
  static func absolutePath(_ path: String, currentDirectory: String) -> String {
    FilePaths.undotted(path.hasPrefix("/") ? path : (currentDirectory as NSString).appendingPathComponent(path))
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
    let registry = DeviceRegistry(schemes: [SimulatorScheme()], defaultSpec: simulatorScheme + defaultPath)
    let chosen = registry.chosenSpec(spec, environment: environment)
    let (_, location) = try registry.resolve(chosen.spec, source: chosen.source)
    return absolutePath(location, currentDirectory: currentDirectory)
  }
}
