import TSDevice
import TSManifest
import TSModel
import TSPlan

/// `tsapply validate [FILE] [--profile NAME] [--json] [--redact]`: reads a manifest and reports
/// every problem; `--redact` masks phone-like text in the output. With `--profile` the manifest is
/// also checked against that platform's capacities (how many contacts and emergency contacts,
/// custom reminders, `once`, …): it is planned against a factory-new watch of the profile
/// (`PlatformProfile.factoryState`) and the plan's diagnostics are reported — the same checks, and
/// messages, as `plan` against a real watch, without one.
///
/// Exit status 0 when the manifest is valid (warnings allowed), 1 when it has errors. Never
/// touches a watch.
struct ValidateCommand: Command {
  static let name = "validate"
  static let abstract = "Check a manifest (watch.yaml) against the format and the SDK's rules."
  static let usage = "[FILE] [--profile NAME] [--json] [--redact]"
  static let positionals: CompletionValues = .manifests
  static let discussion = """
    FILE defaults to watch.yaml in the current directory; '-' reads standard input.
    Every problem is reported, errors first, then warnings, in compiler style
    (FILE:LINE:COLUMN: error: FIELD: MESSAGE). Exit status: 0 valid (warnings allowed), 1 errors.
    With --profile NAME the watch's capacities are checked too (as plan checks them), without a
    watch: for a pre-commit hook or CI.
    """
  static let options: [OptionSpec] = [
    OptionSpec(["--profile"], value: "NAME", help: "Also check the capacities of a watch of this platform profile.",
               completion: .words(PlatformProfile.all.map(\.name))),
    OptionSpec(["--json"], help: "Print the diagnostics as JSON on standard output."),
    OptionSpec(["--redact"], help: "Mask phone numbers (all but the last two digits) in messages and source lines."),
  ]

  let file: String
  let profile: PlatformProfile?
  let json: Bool
  let redact: Bool

  init(_ arguments: ParsedArguments) throws(UsageError) {
    file = try ManifestArgument.file(from: arguments)
    if let name = arguments.value("--profile") {
      guard let named = PlatformProfile.all.first(where: { $0.name == name }) else {
        var message = "unknown profile '\(name)'; expected one of: \(PlatformProfile.all.map(\.name).joined(separator: ", "))"
        if let suggestion = closestMatch(to: name, in: PlatformProfile.all.map(\.name)) { message += "; did you mean '\(suggestion)'?" }
        throw UsageError(message)
      }
      profile = named
    } else {
      profile = nil
    }
    json = arguments.has("--json")
    redact = arguments.has("--redact")
  }

  func run(_ context: CommandContext) async throws -> ExitStatus {
    var result = ManifestInput.load(file, context: context)
    if let profile, let manifest = result.manifest {
      result.diagnostics = Self.capacityDiagnostics(manifest, profile: profile, read: result.diagnostics)
      if result.diagnostics.hasErrors { result.manifest = nil }
    }
    ManifestInput.printDiagnostics(result.diagnostics, source: result.source, json: json, redact: redact, context: context,
                                   file: file)
    let errors = result.diagnostics.filter { $0.severity == .error }.count
    let warnings = result.diagnostics.count - errors
    if !json {
      if result.manifest != nil {
        context.stdout.write("\(file) is valid\(profile.map { " for profile \($0.name)" } ?? "")\(warnings > 0 ? " (\(Self.count(warnings, "warning")))" : "").\n")
      } else {
        context.stderr.write("\(file) is not valid\(profile.map { " for profile \($0.name)" } ?? ""): \(Self.count(errors, "error"))\(warnings > 0 ? ", \(Self.count(warnings, "warning"))" : "").\n")
      }
    }
    return result.manifest != nil ? .success : .failure
  }

  /// `read` (the manifest's own diagnostics) with what planning `manifest` against a factory-new
  /// watch of `profile` finds, each once.
  static func capacityDiagnostics(_ manifest: Manifest, profile: PlatformProfile, read: [Diagnostic]) -> [Diagnostic] {
    let planned = Planner.plan(manifest, state: profile.factoryState, capabilities: profile.capabilities).diagnostics
    return (read + planned.filter { !read.contains($0) }).sortedByPosition()
  }

  private static func count(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }
}
