import Foundation
import TSApply
import TSEngine
import TSModel
import TSPlan

/// `tsapply plan [FILE]`: shows what `apply` would change on the watch, without changing it.
package struct PlanCommand: Command {
  package static let name = "plan"
  package static let abstract = "Show what would change on the watch to match the manifest."
  package static let usage = "[options] [FILE]"
  package static let positionals: CompletionValues = .manifests
  package static let discussion = """
    FILE defaults to watch.yaml in the current directory; '-' reads standard input.
    With --detailed-exitcode the exit status is 0 when nothing would change, 2 when something
    would, and 1 on errors. With -out the plan is saved (mode 0600) and 'tsapply apply FILE'
    applies exactly that plan, or refuses if the manifest or the watch changed since; -out never
    replaces the manifest or a file that is not a saved plan. Plans take no lock and write nothing
    (but, with --redact, the installation's redaction key the first time).
    With --fleet, -out saves every watch's plan in one file; 'tsapply apply FILE' applies each
    watch's part that is still current and refuses the stale ones. --markdown prints the plan for
    a pull-request comment or $GITHUB_STEP_SUMMARY. Each changed field is shown with the manifest's
    key and the file and line that set it; with --fleet and one --watch, --explain then lists every
    value of that watch's merged manifest with the layer that set it and the ones it overrode.
    """
  package static let options: [OptionSpec] = [
    OptionSpec(["--json", "-json"], help: "Print the plan as JSON (format_version 2)."),
    OptionSpec(["--markdown", "-markdown"], help: "Print the plan as GitHub Markdown (a pull-request comment, $GITHUB_STEP_SUMMARY)."),
    OptionSpec(["--detailed-exitcode", "-detailed-exitcode"], help: "Exit 0 for no changes, 2 for changes, 1 for errors."),
    OptionSpec(["--out", "-out"], value: "FILE", help: "Save the plan to FILE for 'tsapply apply FILE'."),
    OptionSpec(["--explain", "-explain"],
               help: "With --fleet and one --watch, list for each value the manifest that set it and the ones it overrode."),
    DeviceOption.spec,
  ] + PlanOutputOptions.specs + FleetOptions.specs + FleetOptions.reviewSpecs

  package var file: String
  package var json: Bool
  package var markdown: Bool
  package var detailedExitCode: Bool
  package var out: String?
  package var deviceSpec: String?
  package var output: PlanOutputOptions
  package var fleet: FleetOptions
  /// `--explain`: after the plan, where each value of the watch's merged manifest comes from
  /// (`ManifestExplain`); only with `--fleet` and one `--watch`.
  package var explain: Bool

  package init(_ arguments: ParsedArguments) throws(UsageError) {
    fleet = try FleetOptions(arguments, command: Self.name)
    explain = arguments.has("--explain")
    if explain {
      guard fleet.file != nil, fleet.watches.count == 1 else {
        throw UsageError("--explain tells where one watch's values come from: give --fleet FILE and one --watch NAME")
      }
      if arguments.has("--json") || arguments.has("--markdown") || arguments.has("--summary") {
        throw UsageError("--explain prints text after the plan; remove --json, --markdown or --summary (the JSON plan has each change's source)")
      }
    }
    file = try ManifestArgument.file(from: arguments)
    json = arguments.has("--json")
    markdown = arguments.has("--markdown")
    if json && markdown { throw UsageError("--json and --markdown exclude each other") }
    detailedExitCode = arguments.has("--detailed-exitcode")
    out = arguments.value("--out")
    deviceSpec = DeviceOption.value(in: arguments)
    output = PlanOutputOptions(arguments)
    if fleet.file == nil, out != nil && file == "-" { throw UsageError("-out needs a manifest file, not standard input: the saved plan is bound to the file") }
  }

  package func run(_ context: CommandContext) async throws -> ExitStatus {
    if fleet.file != nil {
      return try await context.toolset.fleet.plan(self, context: context)
    }
    if let out {
      // Refused before anything is read or printed: a plan shown and then not saved misleads.
      do { try SavedPlan.checkTarget(context.resolve(out), manifest: context.resolve(file)) } catch {
        throw CommandFailure(error.description)
      }
    }
    let input = try ManifestInputFile.read(file, command: Self.name, json: json, redact: output.redact, context: context)
    let document = try input.document(redact: output.redact, json: json, context: context)
    let watch = try await CLIWatch.open(deviceSpec, context: context)
    let result: Result<PlannedChanges, EngineError>
    do { result = .success(try await watch.watch.plan(document)) } catch { result = .failure(error) }
    if case .failure(.invalid(let problems)) = result {
      try report(problems.diagnostics, source: problems.source, redact: output.redact, json: json, context: context,
                 file: input.displayName)
      throw CommandFailure("planning failed")
    }
    let planned = try result.get()
    let plan = planned.plan
    let fingerprints = output.fingerprints(context)
    context.stdout.write(json ? JSONPlanRenderer.render(plan, redact: output.redact, fingerprints: fingerprints)
      : markdown ? MarkdownPlanRenderer(redact: output.redact, fingerprints: fingerprints).render(plan)
      : HumanPlanRenderer(color: context.useColor(noColorFlag: output.noColor), redact: output.redact, fingerprints: fingerprints)
        .render(plan))
    if let out {
      do {
        _ = try watch.watch.save(planned, document: document, to: context.resolve(out))
      } catch {
        throw CommandFailure(error.description)
      }
      if !json && !markdown {
        context.stdout.write("\nSaved the plan to: \(out)\n\nTo perform exactly these actions, run:\n    tsapply apply \(ShellWord.quoted(out))\n")
      }
    }
    return detailedExitCode && !plan.isEmpty ? .changesPresent : .success
  }
}
