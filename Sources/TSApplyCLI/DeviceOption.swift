import TSDevice
import TSModel

/// The `--device SPEC` option every command that talks to a watch accepts, and opening the
/// device it names (`DeviceSelector`: `--device`, else `TSAPPLY_DEVICE`, else
/// `sim:.tsapply/device.json`; only that default watch is created on first use, a named one
/// must exist).
public enum DeviceOption {
  /// `--device SPEC`.
  public static let spec = OptionSpec(
    ["--device"], value: "SPEC",
    help: "Watch to use: sim:PATH (default: $TSAPPLY_DEVICE, else sim:.tsapply/device.json).")

  /// The `--device` value given, if any.
  public static func value(in arguments: ParsedArguments) -> String? { arguments.value(spec.name) }

  /// The device `spec` names in `context` (the default simulated watch is created on first use).
  /// - Throws: `DeviceError` when the spec is unknown, a named watch does not exist (4001) or
  ///   the watch cannot be opened.
  public static func open(_ spec: String?, in context: CommandContext) throws(DeviceError) -> any Device {
    try DeviceSelector.open(spec: spec, environment: context.environment, currentDirectory: context.currentDirectory)
  }

  /// As `open`, typed as the simulated watch (for `tsapply device …`).
  public static func openSimulated(_ spec: String?, in context: CommandContext) throws(DeviceError) -> SimulatedDevice {
    try DeviceSelector.openSimulated(spec: spec, environment: context.environment, currentDirectory: context.currentDirectory)
  }

  /// The absolute state-file path `spec` names in `context`.
  public static func simulatorPath(_ spec: String?, in context: CommandContext) throws(DeviceError) -> String {
    try DeviceSelector.simulatorPath(spec: spec, environment: context.environment, currentDirectory: context.currentDirectory)
  }
}
