import TSManifest
import TSModel

/// `tsapply validate [FILE] [--json] [--redact]`: reads a manifest and reports every problem;
/// `--redact` masks phone-like text in the output.
///
/// Exit status 0 when the manifest is valid (warnings allowed), 1 when it has errors. Never
/// touches a watch.
struct ValidateCommand: Command {
  static let name = "validate"
  static let abstract = "Check a manifest (watch.yaml) against the format and the SDK's rules."
  static let usage = "[FILE] [--json] [--redact]"
  static let positionals: CompletionValues = .manifests
  static let discussion = """
    FILE defaults to watch.yaml in the current directory; '-' reads standard input.
    Every problem is reported, errors first, then warnings, in compiler style
    (FILE:LINE:COLUMN: error: FIELD: MESSAGE). Exit status: 0 valid (warnings allowed), 1 errors.
    """
  static let options: [OptionSpec] = [
    OptionSpec(["--json"], help: "Print the diagnostics as JSON on standard output."),
    OptionSpec(["--redact"], help: "Mask phone numbers (all but the last two digits) in messages and source lines."),
  ]

  let file: String
  let json: Bool
  let redact: Bool

  init(_ arguments: ParsedArguments) throws(UsageError) {
    file = try ManifestArgument.file(from: arguments)
    json = arguments.has("--json")
    redact = arguments.has("--redact")
  }

  func run(_ context: CommandContext) async throws -> ExitStatus {
    let result = ManifestInput.load(file, context: context)
    ManifestInput.printDiagnostics(result.diagnostics, source: result.source, json: json, redact: redact, context: context,
                                   file: file)
    let errors = result.diagnostics.filter { $0.severity == .error }.count
    let warnings = result.diagnostics.count - errors
    if !json {
      if result.manifest != nil {
        context.stdout.write("\(file) is valid\(warnings > 0 ? " (\(Self.count(warnings, "warning")))" : "").\n")
      } else {
        context.stderr.write("\(file) is not valid: \(Self.count(errors, "error"))\(warnings > 0 ? ", \(Self.count(warnings, "warning"))" : "").\n")
      }
    }
    return result.manifest != nil ? .success : .failure
  }

  private static func count(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }
}
