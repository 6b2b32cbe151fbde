import Foundation
import TSApply
import TSPlan

/// `tsapply show PLANFILE`: prints a saved plan, as text or JSON, without touching the watch.
struct ShowCommand: Command {
  static let name = "show"
  static let abstract = "Show a saved plan (from 'tsapply plan -out FILE')."
  static let usage = "[options] PLANFILE"
  static let positionals: CompletionValues = .files
  static let options: [OptionSpec] = [
    OptionSpec(["--json", "-json"], help: "Print the plan as JSON."),
  ] + PlanOutputOptions.specs

  var file: String
  var json: Bool
  var output: PlanOutputOptions

  init(_ arguments: ParsedArguments) throws(UsageError) {
    guard arguments.positionals.count == 1 else { throw UsageError("expected one saved plan file") }
    file = arguments.positionals[0]
    json = arguments.has("--json")
    output = PlanOutputOptions(arguments)
  }

  func run(_ context: CommandContext) async throws -> ExitStatus {
    if case .success(let bytes) = ManifestInput.source(file, context: context).read(),
       let fleetPlan = try SavedFleetPlan.parse(bytes, path: file) {
      return try await context.toolset.fleet.show(fleetPlan, json: json, output: output, context: context)
    }
    let saved = try readSavedPlan(file, context: context)
    context.stdout.write(json ? JSONPlanRenderer.render(saved.plan, redact: output.redact)
                              : output.renderer(context).render(saved.plan))
    return .success
  }
}

/// Reads `file` as a saved plan; fails with a plain message when it is not one.
func readSavedPlan(_ file: String, context: CommandContext) throws -> SavedPlan {
  let bytes: [UInt8]
  switch ManifestInput.source(file, context: context).read(noun: "saved plan") {
  case .success(let read): bytes = read
  case .failure(let problem): throw CommandFailure(problem.description)
  }
  guard let saved = try SavedPlan.parse(bytes, path: file) else {
    throw CommandFailure("\(file) is not a saved plan (make one with 'tsapply plan -out changes.tfplan MANIFEST', then 'tsapply show changes.tfplan')")
  }
  return saved
}
