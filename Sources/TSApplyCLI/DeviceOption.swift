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

  /// `--device SPEC` of the `tsapply device init|simulate` commands, which work on simulated
  /// watches only (same name, so `value(in:)` reads either).
  public static let simulatedSpec = OptionSpec(
    ["--device"], value: "SPEC",
    help: "Simulated watch to use: sim:PATH (default: $TSAPPLY_DEVICE, else sim:.tsapply/device.json); a bridge: watch is reached with plan, apply, drift, device show and device listen.")

  /// The `--device` value given, if any.
  public static func value(in arguments: ParsedArguments) -> String? { arguments.value(spec.name) }

  /// The simulated watch `spec` names in `context` (for `tsapply device …`, which needs its
  /// extras; the default one is created on first use, which is said once on standard error).
  public static func openSimulated(_ spec: String?, in context: CommandContext) throws(DeviceError) -> SimulatedDevice {
    let path = try simulatorPath(spec, in: context)
    let existed = FileManager.default.fileExists(atPath: path)
    // The default watch, applied to and gone, is not made anew (fresh-eyes finding: `device
    // show` made a blank one, which `drift` then called the wearer's changes, a monitor healed).
    if !existed, case let engine = context.engine(), engine.isAppliedDefault(spec) {
      throw engine.reachable(SimulatorScheme.noDefaultWatch(at: path), spec: spec)
    }
    let device: SimulatedDevice
    do {
      device = try DeviceSelector.openSimulated(spec: spec, environment: context.environment, currentDirectory: context.currentDirectory)
    } catch {
      // A watch tsapply has applied to is out of reach, not new: as every command that opens it says.
      throw context.engine().reachable(error, spec: spec)
    }
    if !existed { context.stderr.write(SimulatorScheme.createdNotice(path: device.path ?? path) + "\n") }
    return device
  }

  /// The absolute state-file path `spec` names in `context`.
  public static func simulatorPath(_ spec: String?, in context: CommandContext) throws(DeviceError) -> String {
    try DeviceSelector.simulatorPath(spec: spec, environment: context.environment, currentDirectory: context.currentDirectory)
  }
}

extension DeviceOption {
  /// A watch `tsapply device show|listen` reads: a simulated one, with its extras (its state
  /// file, its journal), or a watch of another scheme of the build (`bridge:`), through the
  /// `Device` interface alone.
  package enum AnyWatch {
    /// A `sim:` watch, opened as `openSimulated` opens it.
    case simulated(SimulatedDevice)
    /// A watch of another scheme, opened (never created) through the build's registry.
    case other(any Device)
  }

  /// The watch `spec` names in `context`, of any scheme of the build (`registry`); the opening
  /// device's notices go to standard error.
  /// - Throws: `DeviceError`: 1004 (simulator) naming every scheme for a spec of none; the
  ///   scheme's own errors (a bridge not reached, not paired, …).
  package static func open(_ spec: String?, in context: CommandContext) async throws(DeviceError) -> AnyWatch {
    let registry = registry(context.toolset)
    let chosen = registry.chosenSpec(spec, environment: context.environment)
    if try registry.resolve(chosen.spec, source: chosen.source).0 is SimulatorScheme {
      return .simulated(try openSimulated(spec, in: context))
    }
    let opened = try await registry.open(spec, environment: context.environment, currentDirectory: context.currentDirectory,
                                         mayCreate: false)
    for notice in opened.notices { context.stderr.write(notice + "\n") }
    return .other(opened.device)
  }

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
