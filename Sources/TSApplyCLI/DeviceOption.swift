import Foundation
import TSDevice
import TSEngine
import TSModel

/// The `--device SPEC` option every command that talks to a watch accepts, and opening the
/// device it names (`DeviceSelector`: `--device`, else `TSAPPLY_DEVICE`, else
/// `sim:.tsapply/device.json`; only that default watch is created on first use, a named one
/// must exist).
public enum DeviceOption {
  /// `--device SPEC`.
  public static let spec = OptionSpec(
    ["--device"], value: "SPEC",
    help: "Watch to use: sim:PATH or bridge:NAME[/WATCH-ID] (default: $TSAPPLY_DEVICE, else sim:.tsapply/device.json).")

  /// `--device SPEC` of the `tsapply device …` commands, which work on simulated watches only
  /// (same name, so `value(in:)` reads either).
  public static let simulatedSpec = OptionSpec(
    ["--device"], value: "SPEC",
    help: "Simulated watch to use: sim:PATH (default: $TSAPPLY_DEVICE, else sim:.tsapply/device.json); a bridge: watch is reached with plan, apply and drift.")

  /// The `--device` value given, if any.
  public static func value(in arguments: ParsedArguments) -> String? { arguments.value(spec.name) }

  /// The simulated watch `spec` names in `context` (for `tsapply device …`, which needs its
  /// extras; the default one is created on first use, which is said once on standard error).
  public static func openSimulated(_ spec: String?, in context: CommandContext) throws(DeviceError) -> SimulatedDevice {
    let path = try simulatorPath(spec, in: context)
    let existed = FileManager.default.fileExists(atPath: path)
    let device = try DeviceSelector.openSimulated(spec: spec, environment: context.environment, currentDirectory: context.currentDirectory)
    if !existed { context.stderr.write(SimulatorScheme.createdNotice(path: device.path ?? path) + "\n") }
    return device
  }

  /// The absolute state-file path `spec` names in `context`.
  public static func simulatorPath(_ spec: String?, in context: CommandContext) throws(DeviceError) -> String {
    try DeviceSelector.simulatorPath(spec: spec, environment: context.environment, currentDirectory: context.currentDirectory)
  }
}

extension DeviceOption {
  /// The device schemes of the build whose toolset is `toolset`: `sim:PATH` and the toolset's
  /// (`bridge:NAME[/WATCH-ID]`); the default spec is the simulated watch `sim:.tsapply/device.json`
  /// under the working directory.
  package static func registry(_ toolset: Toolset) -> DeviceRegistry {
    DeviceRegistry(schemes: [SimulatorScheme()] + toolset.schemes,
                   defaultSpec: DeviceSelector.simulatorScheme + DeviceSelector.defaultPath)
  }
}

extension CommandContext {
  /// The engine for this context's environment, working directory and build.
  package func engine() -> Engine {
    Engine(registry: DeviceOption.registry(toolset), environment: environment, currentDirectory: currentDirectory)
  }
}
