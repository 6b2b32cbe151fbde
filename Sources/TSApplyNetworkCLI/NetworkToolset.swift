import TSApplyCLI
import TSApply
import TSBridgeClient
import TSFleet
import TSPlan

extension Toolset {
  /// The network build's (`tsapply-net`): `bridge:` devices, the `bridge`, `monitor`, `agent`
  /// and `status` commands, and fleets (docs/performance.md "Two executables").
  package static let network = Toolset(
    commands: [(StatusCommand.self, "drift"), (AgentCommand.self, "status"), (MonitorCommand.self, "agent"),
               (BridgeCommand.self, "device")],
    schemes: [BridgeScheme()],
    fleet: NetworkFleet())
}

/// `plan|apply|drift|history|restore --fleet` over `FleetSession`.
struct NetworkFleet: FleetCommands {
  func plan(_ command: PlanCommand, context: CommandContext) async throws -> ExitStatus {
    try await FleetSession.load(command.fleet, redact: command.output.redact, json: command.json, noColor: command.output.noColor,
                                context: context)
      .plan(detailedExitCode: command.detailedExitCode, output: command.output, out: command.out, markdown: command.markdown,
            explain: command.explain)
  }

  func apply(_ command: ApplyCommand, context: CommandContext) async throws -> ExitStatus {
    try await FleetSession.load(command.fleet, redact: command.run.output.redact, json: command.fleet.json,
                                noColor: command.run.output.noColor, context: context)
      .apply(command.run)
  }

  func applySaved(_ command: ApplyCommand, plan: SavedFleetPlan, path: String, context: CommandContext) async throws -> ExitStatus {
    var options = command.fleet
    options.file = CLIWatch.relative(plan.fleetLocation(planPath: path), context)
    return try await FleetSession.load(options, redact: command.run.output.redact, json: false, noColor: command.run.output.noColor,
                                       context: context)
      .applySaved(plan, planFile: command.file, settings: command.run)
  }

  func show(_ plan: SavedFleetPlan, json: Bool, output: PlanOutputOptions, context: CommandContext) async throws -> ExitStatus {
    let fingerprints = output.fingerprints(context)
    let rows = plan.watches.map { part in
      FleetWatchReport(name: part.name, device: part.device, verdict: part.plan.isEmpty ? .noChanges : .changes(part.plan.counts),
                       elapsed: .zero, details: ["plan": .object(JSONPlanRenderer.object(part.plan, redact: output.redact, fingerprints: fingerprints))],
                       plan: part.plan)
    } + plan.unplanned.map { name in
      FleetWatchReport(name: name, device: "-", verdict: .pending("it could not be planned; the saved plan has no plan for it"), elapsed: .zero)
    }
    let report = FleetReport(operation: "plan", fleetFile: plan.fleetPath, watches: rows)
    context.stdout.write(json ? report.json()
      : report.review(renderer: HumanPlanRenderer(color: context.useColor(noColorFlag: output.noColor), redact: output.redact,
                                                  fingerprints: fingerprints)))
    return .success
  }

  func drift(_ command: DriftCommand, context: CommandContext) async throws -> ExitStatus {
    let session = try FleetSession.load(command.fleet, redact: command.output.redact, json: command.json, noColor: command.output.noColor,
                                        createsKey: false, context: context)
    if command.adopt.requested { return try await session.adopt(autoApprove: command.adopt.autoApprove) }
    return try await session.drift(pendingCounts: command.pendingCounts, output: command.output)
  }

  func history(_ command: HistoryCommand, context: CommandContext) async throws -> ExitStatus {
    try await FleetSession.load(command.fleet, redact: false, json: command.json, context: context).history()
  }

  func restore(_ command: RestoreCommand, context: CommandContext) async throws -> ExitStatus {
    guard let at = command.at else { throw CommandFailure("restore --fleet needs --at TIME") }
    return try await FleetSession.load(command.fleet, redact: command.run.output.redact, json: false, context: context)
      .restore(at: at, text: command.atText ?? "", settings: command.run)
  }

  func validate(_ command: ValidateCommand, context: CommandContext) async throws -> ExitStatus {
    try FleetSession.load(command.fleet, redact: command.redact, json: false, context: context).validate()
  }
}
