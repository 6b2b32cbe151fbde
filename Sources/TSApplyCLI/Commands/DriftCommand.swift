import Foundation
import TSEngine
import TSModel
import TSPlan

/// `tsapply drift [FILE]`: what changed on the watch since the last apply, and what the manifest
/// would still change. Read-only by construction: no lock, nothing written, and not even the
/// default simulated watch is created.
package struct DriftCommand: Command {
  package static let name = "drift"
  package static let abstract = "Show what changed on the watch since the last apply (read-only)."
  package static let usage = "[options] [FILE]"
  package static let positionals: CompletionValues = .manifests
  package static let discussion = """
    Compares the watch with what tsapply last applied to it (drift: changed on the watch itself
    or by another tool) and, separately, with the manifest (pending: changes not applied yet).
    Exit status: 0 no drift, 2 drift, 1 error; with --pending, pending changes count as 2 too.
    A watch tsapply never applied to has no record: its drift cannot be told (exit 0).
    """
  package static let options: [OptionSpec] = [
    OptionSpec(["--json", "-json"], help: "Print the report as JSON (drift in the plan's change shape)."),
    OptionSpec(["--pending"], help: "Exit 2 also when the manifest has changes not applied yet."),
    DeviceOption.spec,
  ] + PlanOutputOptions.specs + FleetOptions.specs + FleetOptions.reviewSpecs

  package var file: String
  package var json: Bool
  package var pendingCounts: Bool
  package var deviceSpec: String?
  package var output: PlanOutputOptions
  package var fleet: FleetOptions

  package init(_ arguments: ParsedArguments) throws(UsageError) {
    fleet = try FleetOptions(arguments, command: Self.name)
    file = try ManifestArgument.file(from: arguments)
    json = arguments.has("--json")
    pendingCounts = arguments.has("--pending")
    deviceSpec = DeviceOption.value(in: arguments)
    output = PlanOutputOptions(arguments)
  }

  package func run(_ context: CommandContext) async throws -> ExitStatus {
    if fleet.file != nil {
      return try await context.toolset.fleet.drift(self, context: context)
    }
    let input = try ManifestInputFile.read(file, command: Self.name, json: json, redact: output.redact, context: context)
    let document = try input.document(redact: output.redact, json: json, context: context)
    let watch = try await context.engine().open(deviceSpec, mayCreate: false)
    let result: Result<DriftReport, EngineError>
    do { result = .success(try await watch.drift(document)) } catch { result = .failure(error) }
    if case .failure(.invalid(let problems)) = result {
      try report(problems.diagnostics, source: problems.source, redact: output.redact, json: json, context: context,
                 file: input.displayName)
      throw CommandFailure("the manifest does not fit the watch")
    }
    let found = try result.get()
    // Read-only: the redaction key is used when there is one, never created here.
    let fingerprints = output.fingerprints(context, create: false)
    context.stdout.write(json
      ? DriftRenderer.json(drift: found.drift, pending: found.pending, hasRecord: found.hasRecord, redact: output.redact,
                           fingerprints: fingerprints)
      : DriftRenderer.text(drift: found.drift, pending: found.pending, hasRecord: found.hasRecord,
                           color: context.useColor(noColorFlag: output.noColor), redact: output.redact, fingerprints: fingerprints))
    let drifted = !found.drift.isEmpty || (pendingCounts && !found.pending.isEmpty)
    return drifted ? .changesPresent : .success
  }
}
