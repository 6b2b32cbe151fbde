import Foundation
import TSModel

/// The `sim:PATH` scheme: a simulated watch whose state lives in the JSON file PATH (relative
/// to the working directory). Only the registry's default spec creates its watch on first use,
/// with the `default` profile, and says so once (`OpenedDevice.notices`); a named watch must
/// exist (`tsapply device init` creates one), so a mistyped path never creates a watch.
/// Simulation options come from `TSAPPLY_SIM_LATENCY` and `TSAPPLY_SIM_FAULT`.
public struct SimulatorScheme: DeviceScheme {
  /// `sim`.
  public let name = "sim"
  /// `sim:PATH, …`.
  public let form = "sim:PATH, the path of a simulated watch's state file"
  /// `sim:.tsapply/device.json`.
  public let example = DeviceSelector.simulatorScheme + DeviceSelector.defaultPath
  /// For help.
  public let summary = "a simulated watch whose state lives in the JSON file PATH"

  /// The scheme; stateless.
  public init() {}

  /// What is said, once, when the default watch is created on first use.
  public static func createdNotice(path: String) -> String {
    "Created the default simulated watch (profile \(PlatformProfile.defaultName)) at \(path) on first use."
  }

  /// `sim:` and the canonical path of `location` (`SimulatedDevice.canonical`, relative to the
  /// context's working directory): the identity the watch has once opened, whether or not its
  /// state file exists yet.
  public func canonicalSpec(_ location: String, context: DeviceOpenContext) -> String? {
    DeviceSelector.simulatorScheme
      + SimulatedDevice.canonical(DeviceSelector.absolutePath(location, currentDirectory: context.currentDirectory))
  }

  /// How the error for a directory's default watch not created yet ends (`no simulated watch at
  /// PATH` before it): read-only commands do not create it. The engine words it otherwise for a
  /// watch its records say it applied to (`Engine.outOfReach`).
  public static let nothingYet = " yet: nothing has been planned or applied with the default watch in this directory"

  /// The error for a directory's default watch at `path` not there (4001, `tsapply.simulator`).
  public static func noDefaultWatch(at path: String) -> DeviceError { .simulator(.dataGetFailed, "no simulated watch at \(path)" + nothingYet) }

  /// Opens (the default spec: creates on first use) the simulated watch at `location`.
  /// - Throws: as `DeviceSelector.openSimulated(spec:environment:currentDirectory:)`.
  public func open(_ location: String, spec: String, context: DeviceOpenContext) async throws(DeviceError) -> OpenedDevice {
    let path = DeviceSelector.absolutePath(location, currentDirectory: context.currentDirectory)
    let options = try SimulationOptions(environment: context.environment)
    if context.isDefault && !context.mayCreate && !FileManager.default.fileExists(atPath: path) {
      throw Self.noDefaultWatch(at: path)
    }
    guard !context.isDefault else {
      let existed = FileManager.default.fileExists(atPath: path)
      let device = try SimulatedDevice.openOrCreate(path: path, options: options)
      let notices = existed ? [] : [Self.createdNotice(path: device.path ?? path)]
      return OpenedDevice(device: device, adviceSpec: nil, notices: notices)
    }
    let device = try DeviceSelector.openNamed(path: path, options: options)
    return OpenedDevice(device: device, adviceSpec: DeviceSelector.simulatorScheme + path)
  }
}
