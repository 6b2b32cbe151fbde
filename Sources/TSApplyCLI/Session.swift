import Foundation
import TSApply
import TSDevice
import TSManifest
import TSModel
import TSPlan

/// Options shared by the commands that show plans: output form and redaction.
struct PlanOutputOptions: Sendable {
  static let specs: [OptionSpec] = [
    OptionSpec(["--no-color", "-no-color"], help: "Never colour the output (also: NO_COLOR set, or not a terminal)."),
    OptionSpec(["--redact"], help: "Mask phone numbers (all but the last two digits) in every output."),
  ]

  var noColor: Bool
  var redact: Bool

  init(_ arguments: ParsedArguments) {
    noColor = arguments.has("--no-color")
    redact = arguments.has("--redact")
  }

  /// The human renderer for `context`.
  func renderer(_ context: CommandContext) -> HumanPlanRenderer {
    HumanPlanRenderer(color: context.useColor(noColorFlag: noColor), redact: redact)
  }
}

/// A manifest read for a command: its bytes (for the saved-plan hash), the load result, and
/// the path it came from.
struct ManifestInputFile {
  /// The file as the user named it.
  var displayName: String
  /// Absolute path; `nil` for standard input.
  var path: String?
  var bytes: [UInt8]
  var result: ManifestLoadResult

  /// Reads `file` (`-` = standard input) and loads it as a manifest.
  static func read(_ file: String, context: CommandContext) throws(CommandFailure) -> ManifestInputFile {
    let source = ManifestInput.source(file, context: context)
    let bytes: [UInt8]
    switch source.read() {
    case .success(let read): bytes = read
    case .failure(let problem): throw CommandFailure(ManifestInput.failureMessage(problem, command: "plan"))
    }
    return ManifestInputFile(displayName: source.displayName, path: file == "-" ? nil : context.resolve(file), bytes: bytes,
                             result: ManifestLoader.load(bytes: bytes, file: source.displayName))
  }
}

/// One connected watch for a command: the device, its reconciler, and where backups go.
///
/// What tsapply keeps about a watch lives beside the watch's state file, not in the working
/// directory: `backups/` and `last-applied/` in the same directory (`.tsapply/` for the default
/// watch), so running from another directory finds the same backups and drift record.
struct WatchSession {
  var reconciler: Reconciler
  /// `backups/` beside the watch's state file.
  var backupDirectory: String
  /// `last-applied/` beside the watch's state file: what the last apply left, for drift.
  var lastAppliedDirectory: String
  /// The device's identity, e.g. `sim:/abs/path/.tsapply/device.json`; recorded in saved plans
  /// and backups so they go back to the same watch.
  var deviceIdentity: String
  /// `--device sim:PATH` to paste into a hint, or "" for the default watch.
  var deviceArgument: String

  /// Opens the watch named by `--device`, `TSAPPLY_DEVICE`, or the default simulated watch.
  static func open(spec: String?, context: CommandContext) async throws -> WatchSession {
    let device = try DeviceOption.open(spec, in: context)
    var reconciler = try await Reconciler.connect(device)
    let path = try DeviceOption.simulatorPath(spec, in: context)
    let directory = (path as NSString).deletingLastPathComponent
    let identity = "sim:" + path
    reconciler.deviceIdentity = identity
    let isDefault = DeviceSelector.isDefault(spec: spec, environment: context.environment)
    return WatchSession(reconciler: reconciler, backupDirectory: directory + "/backups",
                        lastAppliedDirectory: directory + "/last-applied", deviceIdentity: identity,
                        deviceArgument: isDefault ? "" : " --device " + shellQuoted("sim:" + ApplyRun.relative(path, context)))
  }

  /// What the last successful apply left on this watch, if recorded for this platform.
  func lastApplied() -> DeviceState? {
    guard let record = LastApplied.read(for: deviceIdentity, in: lastAppliedDirectory),
          record.profile == reconciler.capabilities.profile else { return nil }
    return record.state
  }

  /// Plans `manifest` against the watch, with drift since the last apply.
  func plan(_ manifest: Manifest) async throws -> (state: DeviceState, result: PlanResult) {
    try await reconciler.plan(manifest, lastApplied: lastApplied())
  }

  /// Records `state` as what the last apply left (for the next plan's drift). A failure to
  /// record is reported as a warning: the apply itself succeeded.
  func recordApplied(_ state: DeviceState, context: CommandContext) {
    do {
      try LastApplied(device: deviceIdentity, profile: reconciler.capabilities.profile, state: state)
        .write(in: lastAppliedDirectory)
    } catch {
      context.stderr.write("Warning: could not record the applied state for drift detection: \(error)\n")
    }
  }
}

/// A manifest read, checked and planned against a watch: what `plan` and `apply` share.
struct PlannedManifest {
  var input: ManifestInputFile
  var manifest: Manifest
  var session: WatchSession
  /// The watch state the plan was made from.
  var state: DeviceState
  var plan: Plan

  /// Reads `file`, prints its diagnostics, opens the watch and plans. The watch is opened only
  /// when the manifest has no errors, and never written.
  /// - Throws: `CommandFailure` for manifest or capability errors; device errors as they come.
  ///
  /// Warnings (the manifest's and the planner's) travel in the plan (`Plan.warnings`), so the
  /// human plan and `--json` both show them, once; diagnostics are printed here only when
  /// reading or planning fails — as JSON on standard output with `json`.
  static func make(_ file: String, deviceSpec: String?, redact: Bool, json: Bool = false,
                   context: CommandContext) async throws -> PlannedManifest {
    let input = try ManifestInputFile.read(file, context: context)
    guard let manifest = input.result.manifest else {
      try report(input.result.diagnostics, source: input.bytes, redact: redact, json: json, context: context)
      throw CommandFailure("the manifest could not be read")
    }
    let session = try await WatchSession.open(spec: deviceSpec, context: context)
    let (state, result) = try await session.plan(manifest)
    guard var plan = result.plan else {
      let all = input.result.diagnostics + result.diagnostics
      try report(all, source: input.bytes, redact: redact, json: json, context: context)
      throw CommandFailure("planning failed")
    }
    plan.warnings = (input.result.diagnostics.filter { $0.severity == .warning } + plan.warnings).sortedByPosition()
    return PlannedManifest(input: input, manifest: manifest, session: session, state: state, plan: plan)
  }
}

/// Prints diagnostics (phone-like text masked with `redact`) and fails when any is an error;
/// `subject` names what they are about in the failure ("the manifest", "the backup").
func report(_ diagnostics: [Diagnostic], source: [UInt8]?, redact: Bool, json: Bool = false, context: CommandContext,
            subject: String = "the manifest") throws(CommandFailure) {
  ManifestInput.printDiagnostics(diagnostics, source: source, json: json, redact: redact, context: context)
  let errors = diagnostics.filter { $0.severity == .error }.count
  if errors > 0 {
    throw CommandFailure("\(errors) error\(errors == 1 ? "" : "s") in \(subject); the watch was not touched")
  }
}

/// `text` quoted for a POSIX shell when it holds anything but safe characters, so a printed
/// command can be pasted.
func shellQuoted(_ text: String) -> String {
  let safe = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@+%,")
  guard !text.isEmpty, !text.allSatisfy({ safe.contains($0) }) else { return text.isEmpty ? "''" : text }
  return "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
}
