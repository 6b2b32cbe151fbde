import Foundation
import TSDevice
import TSModel

/// `tsapply device …`: create, inspect and drive the simulated watch.
struct DeviceCommand: Command {
  static let name = "device"
  static let abstract = "Create, show and drive the simulated watch."
  static let usage = "<subcommand> [options]"
  static let discussion = """
    The simulated watch is the default device: its state lives in .tsapply/device.json under the
    current directory unless --device sim:PATH or TSAPPLY_DEVICE names another file.
    See docs/device.md.
    """
  static let options: [OptionSpec] = []
  static let subcommands: [any Command.Type] = [
    DeviceInitCommand.self, DeviceShowCommand.self, DeviceProfilesCommand.self,
    DeviceSimulateCommand.self, DeviceListenCommand.self,
  ]

  init(_ arguments: ParsedArguments) throws(UsageError) {
    throw UsageError("'tsapply device' needs a subcommand")
  }

  func run(_ context: CommandContext) async throws -> ExitStatus { .usage }
}

/// `tsapply device init [--profile NAME] [--force]`: creates or resets a simulated watch.
struct DeviceInitCommand: Command {
  static let name = "init"
  static let abstract = "Create a factory-fresh simulated watch (or reset one with --force)."
  static let usage = "[--profile NAME] [--force] [--device SPEC]"
  static let discussion = "Profiles: \(PlatformProfile.all.map(\.name).joined(separator: ", ")) (see 'tsapply device profiles')."
  static let options: [OptionSpec] = [
    OptionSpec(["--profile"], value: "NAME", help: "Platform profile (default: default).",
               completion: .words(PlatformProfile.all.map(\.name))),
    OptionSpec(["--force"], help: "Replace an existing simulated watch."),
    DeviceOption.simulatedSpec,
  ]
  let profileName: String
  let force: Bool
  let device: String?

  /// The profile `name` given to `--profile`, or the usage error naming the known ones.
  static func profile(named name: String) throws(UsageError) -> PlatformProfile {
    guard let profile = PlatformProfile.all.first(where: { $0.name == name }) else {
      var message = "unknown profile '\(name)'; expected one of: \(PlatformProfile.all.map(\.name).joined(separator: ", "))"
      if let suggestion = closestMatch(to: name, in: PlatformProfile.all.map(\.name)) { message += "; did you mean '\(suggestion)'?" }
      throw UsageError(message)
    }
    return profile
  }

  init(_ arguments: ParsedArguments) throws(UsageError) {
    guard arguments.positionals.isEmpty else { throw UsageError("unexpected argument '\(arguments.positionals[0])'") }
    profileName = try Self.profile(named: arguments.value("--profile") ?? PlatformProfile.defaultName).name
    force = arguments.has("--force")
    device = DeviceOption.value(in: arguments)
  }

  func run(_ context: CommandContext) async throws -> ExitStatus {
    let path = try DeviceOption.simulatorPath(device, in: context)
    let spec = try DeviceSelector.adviceSpec(spec: device, environment: context.environment, currentDirectory: context.currentDirectory)
    let profile = try PlatformProfile.named(profileName)
    let existed = FileManager.default.fileExists(atPath: path)
    try SimulatedDevice.create(path: path, profile: profile, force: force, spec: spec)
    context.stdout.write("\(existed ? "Reset" : "Created") a simulated \(profile.name) watch at \(path).\n")
    return .success
  }
}
