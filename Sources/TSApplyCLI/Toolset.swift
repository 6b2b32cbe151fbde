import Foundation
import TSApply
import TSDevice
import TSModel

/// What a build of the command line can do beyond its core.
///
/// tsapply ships as two executables built from one command line. `tsapply` is the core —
/// manifests, plans, applies, drift, restore, export, fmt, simulated watches — linked as one
/// static executable so it starts like a native tool (docs/performance.md). `tsapply-net` adds
/// what needs the network libraries, whose loading alone costs several times a core command
/// (libcurl, libmicrohttpd, libmosquitto): watches behind a bridge, the
/// bridge server, the monitor, fleets and MQTT agents. The core hands any such command line to
/// `tsapply-net` unchanged (`NetworkBuild`), as git hands https remotes to `git-remote-https`.
/// `CommandContext.toolset` carries the build's toolset to the commands.
package struct Toolset: Sendable {
  /// Top-level commands beyond the core ones (`bridge`, `monitor`, `agent`, `status`), each
  /// with its place in `tsapply --help`: after the core command of `position`'s name.
  package var commands: [(command: any Command.Type, after: String)]
  /// Device schemes beyond `sim:` (`bridge:`).
  package var schemes: [any DeviceScheme]
  /// Runs `plan`, `apply` and `drift` with `--fleet`.
  package var fleet: any FleetCommands

  /// A toolset of these parts.
  package init(commands: [(command: any Command.Type, after: String)], schemes: [any DeviceScheme], fleet: any FleetCommands) {
    self.commands = commands
    self.schemes = schemes
    self.fleet = fleet
  }

  /// The static core's: a `bridge:` device (named by a saved plan or a backup) and `--fleet`
  /// hand the command line to `tsapply-net`.
  package static let core = Toolset(commands: [], schemes: [NetworkBuild.DelegatingScheme(name: "bridge")],
                                    fleet: NetworkBuild.DelegatingFleet())
}

/// `plan|apply|drift --fleet FILE`, provided by the network build.
package protocol FleetCommands: Sendable {
  /// `plan --fleet`.
  func plan(_ command: PlanCommand, context: CommandContext) async throws -> ExitStatus
  /// `apply --fleet`.
  func apply(_ command: ApplyCommand, context: CommandContext) async throws -> ExitStatus
  /// `drift --fleet`.
  func drift(_ command: DriftCommand, context: CommandContext) async throws -> ExitStatus
  /// `history --fleet`.
  func history(_ command: HistoryCommand, context: CommandContext) async throws -> ExitStatus
  /// `restore --fleet --at TIME`.
  func restore(_ command: RestoreCommand, context: CommandContext) async throws -> ExitStatus
  /// `apply PLANFILE` with a fleet's saved plan (`plan --fleet -out`), read from `path`
  /// (absolute) as named on the command line (`command.file`).
  func applySaved(_ command: ApplyCommand, plan: SavedFleetPlan, path: String, context: CommandContext) async throws -> ExitStatus
  /// `show PLANFILE` with a fleet's saved plan: its watches' plans as `plan --fleet` reviews them
  /// (or its JSON report with `json`).
  func show(_ plan: SavedFleetPlan, json: Bool, output: PlanOutputOptions, context: CommandContext) async throws -> ExitStatus
  /// `validate --fleet`: each watch's merged manifest, checked against its declared profile.
  func validate(_ command: ValidateCommand, context: CommandContext) async throws -> ExitStatus
}

/// Handing a command line to `tsapply-net`, the build with the network libraries.
package enum NetworkBuild {
  /// The network build's executable name, looked for beside this executable.
  package static let executableName = "tsapply-net"

  /// The top-level commands only the network build has.
  package static let commands: Set<String> = ["bridge", "monitor", "agent", "status"]

  /// The core's commands that list every command of both builds: with no network build beside
  /// it, the core answers them with its own commands.
  package static let listings: Set<String> = ["help", "completion", ManPagesCommand.name]

  /// Whether `arguments` (without the program name) and `environment` need the network build:
  /// one of its commands; `--fleet`; a `bridge:` device (in an argument or `TSAPPLY_DEVICE`);
  /// or the command list, completion scripts and man pages (`tsapply`, `--help`, `help`,
  /// `completion`, `man-pages`), which cover every command of both builds.
  package static func isNeeded(_ arguments: [String], environment: [String: String]) -> Bool {
    let command = arguments.first { !$0.hasPrefix("-") }
    if arguments.isEmpty || arguments == ["--help"] || arguments == ["-h"] { return true }
    if let command, commands.contains(command) || listings.contains(command), command == arguments.first {
      return true
    }
    if environment[DeviceRegistry.environmentVariable]?.hasPrefix("bridge:") == true { return true }
    return arguments.contains { argument in
      ["--fleet", "-fleet"].contains(argument) || argument.hasPrefix("--fleet=") || argument.hasPrefix("-fleet=")
        || argument.hasPrefix("bridge:") || argument.hasPrefix("--device=bridge:")
    }
  }

  /// The network build beside this executable (`/proc/self/exe` on Linux, else the program
  /// path), or `nil` when it is not there.
  package static func executable() -> String? {
    var candidates: [String] = []
    if let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { candidates.append(link) }
    candidates.append(URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().path)
    for program in candidates {
      let path = (program as NSString).deletingLastPathComponent + "/" + executableName
      if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    return nil
  }

  /// Replaces this process with the network build running this process's command line, with
  /// the same environment, working directory and file descriptors. Returns only when it cannot:
  /// the failure to throw, saying what needs the network build and how to get it.
  package static func handOver(_ reason: String) -> CommandFailure {
    guard let path = executable() else {
      return CommandFailure("\(reason) needs \(executableName), the build of tsapply with the network libraries, "
        + "beside \(CommandLine.arguments[0]); build both with script/tsapply (or 'swift build')")
    }
    var words = [path] + CommandLine.arguments.dropFirst()
    let arguments = words.map { strdup($0) } + [nil]
    defer { for argument in arguments { free(argument) } }
    execv(path, arguments)
    words.removeAll()
    return CommandFailure("\(reason): cannot start \(path): \(String(cString: strerror(errno)))")
  }

  /// A scheme of the network build seen from the core: opening it hands the command line over.
  package struct DelegatingScheme: DeviceScheme {
    package let name: String
    package var form: String { "\(name):…, a watch reached through the network build" }
    package var example: String { "\(name):home" }
    package var summary: String { "handled by \(NetworkBuild.executableName)" }
    package init(name: String) { self.name = name }
    package func open(_ location: String, spec: String, context: DeviceOpenContext) async throws(DeviceError) -> OpenedDevice {
      let failure = NetworkBuild.handOver("the device \(spec)")
      throw DeviceError(.simulator, .sdkConfigError, failure.message)
    }
  }

  /// `--fleet` seen from the core: hands the command line over.
  package struct DelegatingFleet: FleetCommands {
    package init() {}
    package func plan(_ command: PlanCommand, context: CommandContext) async throws -> ExitStatus { throw NetworkBuild.handOver("--fleet") }
    package func apply(_ command: ApplyCommand, context: CommandContext) async throws -> ExitStatus { throw NetworkBuild.handOver("--fleet") }
    package func drift(_ command: DriftCommand, context: CommandContext) async throws -> ExitStatus { throw NetworkBuild.handOver("--fleet") }
    package func history(_ command: HistoryCommand, context: CommandContext) async throws -> ExitStatus { throw NetworkBuild.handOver("--fleet") }
    package func restore(_ command: RestoreCommand, context: CommandContext) async throws -> ExitStatus { throw NetworkBuild.handOver("--fleet") }
    package func applySaved(_ command: ApplyCommand, plan: SavedFleetPlan, path: String, context: CommandContext) async throws -> ExitStatus {
      throw NetworkBuild.handOver("a fleet's saved plan")
    }
    package func show(_ plan: SavedFleetPlan, json: Bool, output: PlanOutputOptions, context: CommandContext) async throws -> ExitStatus {
      throw NetworkBuild.handOver("a fleet's saved plan")
    }
    package func validate(_ command: ValidateCommand, context: CommandContext) async throws -> ExitStatus { throw NetworkBuild.handOver("--fleet") }
  }
}
