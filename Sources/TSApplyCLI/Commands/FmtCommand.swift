import Foundation
import TSApply
import TSManifest
import TSModel

/// `tsapply fmt [FILE...] [--check] [--diff]`: puts manifests in canonical form, in place,
/// keeping every comment (see `ManifestFormatter` for how).
///
/// Exit status: 0 when every file is (now) formatted; 1 when a file has errors or cannot be
/// read or written, or with `--check` when a file is not formatted.
struct FmtCommand: Command {
  static let name = "fmt"
  static let abstract = "Put manifests in canonical form, keeping every comment."
  static let usage = "[FILE...] [--check] [--diff]"
  static let discussion = """
    Canonical form: times as quoted "HH:MM", phone numbers quoted, durations as 2h, 45m or
    1h30m, repeat rules as a preset (everyday, workday, weekend, once) or [mon, wed, fri], and
    keys in the reference order. Comments and blank lines are never dropped or moved: keys are
    only reordered where no comment lies among them. FILE defaults to watch.yaml; '-' formats
    standard input to standard output. A file with errors is not touched (the errors are shown).
    Files that were changed are named on standard output.
    With --check nothing is written: the files that are not formatted are named and the exit
    status is 1. --diff shows the change as a unified diff (with --check, without writing).
    """
  static let positionals: CompletionValues = .manifests
  static let options: [OptionSpec] = [
    OptionSpec(["--check"], help: "Write nothing; name the files that are not formatted and exit 1 if any."),
    OptionSpec(["--diff"], help: "Show the change as a unified diff."),
  ]

  var files: [String]
  var check: Bool
  var diff: Bool

  init(_ arguments: ParsedArguments) throws(UsageError) {
    files = arguments.positionals.isEmpty ? [ManifestArgument.defaultFile] : arguments.positionals
    check = arguments.has("--check")
    diff = arguments.has("--diff")
  }

  func run(_ context: CommandContext) async throws -> ExitStatus {
    var status = ExitStatus.success
    for file in files where !format(file, context: context) { status = .failure }
    return status
  }

  /// Formats one file; `false` when it has errors, cannot be read or written, or (with
  /// `--check`) is not formatted.
  private func format(_ file: String, context: CommandContext) -> Bool {
    let path = file == "-" ? nil : context.resolve(file)
    let bytes: [UInt8]
    switch ManifestInput.source(file, context: context).read() {
    case .success(let read): bytes = read
    case .failure(let problem):
      context.stderr.write("Error: \(ManifestInput.failureMessage(problem, command: "fmt"))\n")
      return false
    }
    let result = ManifestFormatter.format(bytes: bytes, file: file)
    guard let formatted = result.formatted else {
      ManifestInput.printDiagnostics(result.diagnostics, source: bytes, json: false, redact: false, context: context)
      context.stderr.write("\(file) was not formatted: it has errors.\n")
      return false
    }
    if diff {
      context.stdout.write(UnifiedDiff.diff(String(decoding: bytes, as: UTF8.self), String(decoding: formatted, as: UTF8.self), file: file))
    }
    guard let path else {
      if !check && !diff { context.stdout.write(String(decoding: formatted, as: UTF8.self)) }
      // Said, as for a file (fresh-eyes finding: exit 1 with nothing printed).
      if check && result.isChanged {
        context.stderr.write("\(file) is not formatted: 'tsapply fmt -' writes it formatted to standard output, 'tsapply fmt --diff -' shows the changes.\n")
      }
      return !(check && result.isChanged)
    }
    guard result.isChanged else { return true }
    if check {
      if !diff { context.stdout.write(file + "\n") }
      // With the commands that show and make the change (fresh-eyes finding: the bare sentence left the reader to find them).
      // A name that begins with "-" goes after "--", or it reads as an option (docs/git-workflow.md).
      let quoted = (file.hasPrefix("-") ? "-- " : "") + ShellWord.quoted(file)
      context.stderr.write("\(file) is not formatted: see the changes with 'tsapply fmt --check --diff \(quoted)', "
                           + "write them with 'tsapply fmt \(quoted)'.\n")
      return false
    }
    do {
      try ManifestInput.rewrite(formatted, at: path)
    } catch {
      context.stderr.write("Error: \(error.description)\n")
      return false
    }
    if !diff { context.stdout.write(file + "\n") }
    return true
  }
}
