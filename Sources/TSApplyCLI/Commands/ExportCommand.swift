import Foundation
import TSApply
import TSEngine
import TSModel

/// `tsapply export [-o FILE] [--force] [--device SPEC]`: reads the watch and writes a complete
/// manifest in canonical form (standard output, or FILE created 0600: it holds contacts).
struct ExportCommand: Command {
  static let name = "export"
  static let abstract = "Write the watch's current state as a complete manifest."
  static let usage = "[-o FILE] [--force] [--device SPEC]"
  static let discussion = """
    The manifest states everything the watch holds, in canonical form (see 'tsapply fmt'):
    applying it back to the same watch changes nothing. Fields the platform does not store are
    left out; custom reminders that share a name get distinct names, with a warning.
    Without -o (or with -o -) the manifest goes to standard output. With -o FILE it is written
    with mode 0600 (it holds phone numbers); an existing FILE (a dangling symbolic link too) is
    only replaced with --force, and FILE's directory must exist. FILE is never the state file
    of the watch being exported (or its lock), nor inside tsapply's records, even with --force.
    The header's date is today's (UTC), or SOURCE_DATE_EPOCH's (integer seconds since 1970,
    up to the year 9999) when that is set.
    """
  static let options: [OptionSpec] = [
    OptionSpec(["--output", "-o"], value: "FILE", help: "Write the manifest to FILE (mode 0600) instead of standard output."),
    OptionSpec(["--force"], help: "Replace FILE when it exists."),
    DeviceOption.spec,
  ]

  var output: String?
  var force: Bool
  var deviceSpec: String?

  init(_ arguments: ParsedArguments) throws(UsageError) {
    guard arguments.positionals.isEmpty else {
      throw UsageError("unexpected argument '\(arguments.positionals[0])'; write the file with -o FILE")
    }
    output = arguments.value("--output").flatMap { $0 == "-" ? nil : $0 }
    force = arguments.has("--force")
    deviceSpec = DeviceOption.value(in: arguments)
    if force && output == nil { throw UsageError("--force needs -o FILE") }
  }

  func run(_ context: CommandContext) async throws -> ExitStatus {
    if let output { try Self.checkDestination(output, force: force, context: context) }
    let date = try Self.date(context)
    let watch = try await CLIWatch.open(deviceSpec, context: context).watch
    if let output {
      do { try watch.refuseOutput(at: context.resolve(output)) } catch { throw CommandFailure(error.description) }
    }
    let export = try await watch.export(date: date)
    ManifestInput.printDiagnostics(export.diagnostics, source: nil, json: false, redact: false, context: context)
    // Values a manifest cannot state (errors): each error says what the text holds instead (the
    // part left out, or written as the watch holds it); the text is still written, and the exit
    // status says it is incomplete.
    let errors = export.diagnostics.filter { $0.severity == .error }.count
    let status: ExitStatus = errors == 0 ? .success : .failure
    if errors > 0 {
      context.stderr.write("The export is incomplete: \(errors) part\(errors == 1 ? "" : "s") of the watch cannot be stated in a manifest; each error above says what was written instead.\n")
    }
    guard let output else {
      context.stdout.write(export.text)
      return status
    }
    do {
      try SecureFile.write(Array(export.text.utf8), to: context.resolve(output), overwrite: force)
    } catch {
      throw CommandFailure(error.description)
    }
    // The watch named as it was read (a "default watch" would read as the default one).
    context.stderr.write("Wrote \(output) from \(watch.identity) (platform profile \(watch.capabilities.profile)).\n")
    return status
  }

  /// Refuses `-o FILE` when FILE exists (`lstat`: a dangling symbolic link counts) without
  /// `--force`, or when FILE's directory does not exist (it is never created).
  private static func checkDestination(_ output: String, force: Bool, context: CommandContext) throws {
    let path = context.resolve(output)
    if !force, SecureFile.exists(path) {
      throw CommandFailure("\(output) already exists; use --force to replace it")
    }
    let directory = (path as NSString).deletingLastPathComponent
    var isDirectory: ObjCBool = false
    guard directory.isEmpty || (FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) && isDirectory.boolValue) else {
      throw CommandFailure("cannot write \(output): its directory \((output as NSString).deletingLastPathComponent) does not exist")
    }
  }

  /// The latest `SOURCE_DATE_EPOCH` accepted: 9999-12-31T23:59:59Z.
  static let maximumEpoch = 253_402_300_799

  /// Now, or `SOURCE_DATE_EPOCH` (integer seconds since 1970, the reproducible-builds
  /// convention; set but empty counts as unset). Throws `CommandFailure` when it is set but not
  /// an integer from 0 to `maximumEpoch`.
  static func date(_ context: CommandContext) throws -> Date {
    guard let text = context.environment["SOURCE_DATE_EPOCH"], !text.isEmpty else { return Date() }
    guard let epoch = Int(text), (0...maximumEpoch).contains(epoch) else {
      throw CommandFailure("SOURCE_DATE_EPOCH must be whole seconds since 1970 (0 to \(maximumEpoch)), got '\(text)'")
    }
    return Date(timeIntervalSince1970: TimeInterval(epoch))
  }
}
