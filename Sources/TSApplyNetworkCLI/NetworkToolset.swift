import TSApplyCLI
import TSBridgeClient

extension Toolset {
  /// The network build's (`tsapply-net`): `bridge:` devices, the `bridge`, `monitor`, `agent`
  /// and `status` commands, and fleets (docs/performance.md "Two executables").
  package static let network = Toolset(
    commands: [(StatusCommand.self, "drift"), (AgentCommand.self, "status"), (MonitorCommand.self, "agent"),
               (BridgeCommand.self, "device")],
    schemes: [BridgeScheme()],
    fleet: NetworkFleet())
}

/// `plan|apply|drift --fleet` over `FleetSession`.
struct NetworkFleet: FleetCommands {
  func plan(_ command: PlanCommand, context: CommandContext) async throws -> ExitStatus {
    try await FleetSession.load(command.fleet, redact: command.output.redact, json: command.json, context: context)
      .plan(detailedExitCode: command.detailedExitCode, output: command.output)
  }

  func apply(_ command: ApplyCommand, context: CommandContext) async throws -> ExitStatus {
    try await FleetSession.load(command.fleet, redact: command.run.output.redact, json: command.fleet.json, context: context)
      .apply(command.run)
  }

  func drift(_ command: DriftCommand, context: CommandContext) async throws -> ExitStatus {
    try await FleetSession.load(command.fleet, redact: command.output.redact, json: command.json, context: context)
      .drift(pendingCounts: command.pendingCounts, output: command.output)
  }

  func validate(_ command: ValidateCommand, context: CommandContext) async throws -> ExitStatus {
    try FleetSession.load(command.fleet, redact: command.redact, json: false, context: context).validate()
  }
}
