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
///
/// `validate --fleet FILE [--watch NAME …]` checks every watch of a fleet file: its merged
/// manifest (layers and its own), and, when the watch declares `profile:`, that platform's
/// capacities — without opening a watch (docs/fleet.md "Layers and labels").
package struct ValidateCommand: Command {
  package static let name = "validate"
  package static let abstract = "Check a manifest (watch.yaml) against the format and the SDK's rules."
  package static let usage = "[FILE] [--profile NAME] [--json] [--redact] | --fleet FILE [--watch NAME …]"
  package static let positionals: CompletionValues = .manifests
  package static let discussion = """
    FILE defaults to watch.yaml in the current directory; '-' reads standard input.
    Every problem is reported, errors first, then warnings, in compiler style
    (FILE:LINE:COLUMN: error: FIELD: MESSAGE). Exit status: 0 valid (warnings allowed), 1 errors.
    With --profile NAME the watch's capacities are checked too (as plan checks them), without a
    watch: for a pre-commit hook or CI.
    """
  package static let options: [OptionSpec] = [
    OptionSpec(["--profile"], value: "NAME", help: "Also check the capacities of a watch of this platform profile.",
               completion: .words(PlatformProfile.all.map(\.name))),
    FleetOptions.fleetSpec,
    OptionSpec(["--watch", "-watch"], value: "NAME", help: "With --fleet, only the watch NAME (repeatable)."),
    OptionSpec(["--json"], help: "Print the diagnostics as JSON on standard output."),
    OptionSpec(["--redact"], help: "Mask phone numbers (all but the last two digits) in messages and source lines."),
  ]

  let file: String
  /// `--profile`: the platform whose capacities are checked too.
  package let profile: PlatformProfile?
  /// `--fleet` and `--watch`.
  package let fleet: FleetOptions
  let json: Bool
  /// `--redact`.
  package let redact: Bool

  package init(_ arguments: ParsedArguments) throws(UsageError) {
    fleet = try FleetOptions(arguments, command: Self.name)
    if fleet.file != nil {
      if arguments.value("--profile") != nil {
        throw UsageError("with --fleet, each watch is checked against the profile: it declares in the fleet file; remove --profile")
      }
      if arguments.has("--json") { throw UsageError("validate --fleet prints text only; remove --json") }
    }
    file = try ManifestArgument.file(from: arguments)
    profile = try arguments.value("--profile").map { (name) throws(UsageError) in try DeviceInitCommand.profile(named: name) }
    json = arguments.has("--json")
    redact = arguments.has("--redact")
  }

  package func run(_ context: CommandContext) async throws -> ExitStatus {
    if fleet.file != nil { return try await context.toolset.fleet.validate(self, context: context) }
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
  package static func capacityDiagnostics(_ manifest: Manifest, profile: PlatformProfile, read: [Diagnostic]) -> [Diagnostic] {
    let planned = Planner.plan(manifest, state: profile.factoryState, capabilities: profile.capabilities).diagnostics
    return Planner.diagnostics(read: read, planned: planned)
  }

  package static func count(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }
}
