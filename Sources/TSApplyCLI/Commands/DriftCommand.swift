import Foundation
import TSEngine
import TSModel
import TSPlan

/// `tsapply drift [FILE]`: what changed on the watch since the last apply, and what the manifest
/// would still change. Read-only by construction: no lock, nothing written, and not even the
/// default simulated watch is created. With `--adopt` (`DriftAdoptRun`), the drift is written
/// into the manifest instead, after showing the diff and asking.
package struct DriftCommand: Command {
  package static let name = "drift"
  package static let abstract = "Show what changed on the watch since the last apply; --adopt writes it into the manifest."
  package static let usage = "[options] [FILE]"
  package static let positionals: CompletionValues = .manifests
  package static let discussion = """
    Compares the watch with what tsapply last applied to it (drift: changed on the watch itself
    or by another tool) and, separately, with the manifest (pending: changes not applied yet).
    Exit status: 0 no drift, 2 drift, 1 error; with --pending, pending changes count as 2 too.
    A watch tsapply never applied to has no record: its drift cannot be told (exit 0).
    With --adopt, the drift is written into the manifest FILE instead (with --fleet and one
    --watch, into that watch's own manifest): each change made on the watch becomes the
    manifest's value, comments and order kept; changes the manifest asks for that are not
    applied yet stay as they are. The diff of the file is shown and only 'yes' is accepted;
    --auto-approve skips the question, and without a terminal it refuses. Exit status: 0 when
    adopted (or nothing to adopt), 1 when refused, declined, or part of the drift could not be
    adopted (each such change is named).
    """
  package static let options: [OptionSpec] = [
    OptionSpec(["--json", "-json"], help: "Print the report as JSON (drift in the plan's change shape)."),
    OptionSpec(["--pending"], help: "Exit 2 also when the manifest has changes not applied yet."),
    OptionSpec(["--adopt"], help: "Write the changes made on the watch into the manifest (shows the diff, asks)."),
    OptionSpec(["--auto-approve", "-auto-approve"], help: "With --adopt, write without asking for confirmation."),
    DeviceOption.spec,
  ] + PlanOutputOptions.specs + FleetOptions.specs + FleetOptions.reviewSpecs

  package var file: String
  package var json: Bool
  package var pendingCounts: Bool
  /// `--adopt`, and `--auto-approve` with it.
  package var adopt: (requested: Bool, autoApprove: Bool)
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
    adopt = (arguments.has("--adopt"), arguments.has("--auto-approve"))
    if adopt.autoApprove && !adopt.requested { throw UsageError("--auto-approve only matters with --adopt (drift alone writes nothing)") }
    if adopt.requested {
      if json { throw UsageError("--adopt shows a diff and asks; it has no --json form") }
      if pendingCounts { throw UsageError("--pending only matters without --adopt (adopting never takes pending changes)") }
      if fleet.file != nil && fleet.watches.count != 1 {
        throw UsageError("drift --fleet --adopt writes one watch's manifest: name it with one --watch NAME")
      }
      if fleet.file == nil && file == ManifestInput.standardInputName {
        throw UsageError("--adopt rewrites the manifest: name its file, not '-' (standard input)")
      }
    }
  }

  package func run(_ context: CommandContext) async throws -> ExitStatus {
    if fleet.file != nil {
      return try await context.toolset.fleet.drift(self, context: context)
    }
    let input = try ManifestInputFile.read(file, command: Self.name, json: json, redact: output.redact, context: context)
    let document = try input.document(redact: output.redact, json: json, context: context)
    let watch = try await context.engine().open(deviceSpec, mayCreate: false)
    let found = try await Self.drift(document, on: watch, file: input.displayName, json: json, redact: output.redact, context: context)
    if adopt.requested, let path = input.path {
      return try await DriftAdoptRun(watch: watch, autoApprove: adopt.autoApprove, redact: output.redact, context: context,
                                     commandLine: "tsapply drift --adopt \(file)")
        .run(found, manifest: (path: path, displayName: input.displayName, bytes: input.bytes))
    }
    // Read-only: the redaction key is used when there is one, never created here.
    let fingerprints = output.fingerprints(context, create: false)
    context.stdout.write(json
      ? DriftRenderer.json(drift: found.drift, pending: found.pending, hasRecord: found.hasRecord, redact: output.redact,
                           fingerprints: fingerprints, own: found.own)
      : DriftRenderer.text(drift: found.drift, pending: found.pending, hasRecord: found.hasRecord,
                           color: context.useColor(noColorFlag: output.noColor), redact: output.redact, fingerprints: fingerprints,
                           own: found.own))
    let drifted = !found.drift.isEmpty || (pendingCounts && !found.unapplied.isEmpty)
    return drifted ? .changesPresent : .success
  }

  /// The drift report of `document` on `watch`; a manifest that does not fit the watch is
  /// reported (as the plan reports it, naming `file`) and fails.
  package static func drift(_ document: ManifestDocument, on watch: Watch, file: String, json: Bool, redact: Bool,
                            context: CommandContext) async throws -> DriftReport {
    let result: Result<DriftReport, EngineError>
    do { result = .success(try await watch.drift(document)) } catch { result = .failure(error) }
    if case .failure(.invalid(let problems)) = result {
      try report(problems.diagnostics, source: problems.source, redact: redact, json: json, context: context, file: file)
      throw CommandFailure("the manifest does not fit the watch")
    }
    return try result.get()
  }
}
