import Foundation
import TSApply
import TSDevice
import TSEngine
import TSManifest
import TSModel
import TSPlan

/// Options shared by the commands that show plans: output form and redaction.
package struct PlanOutputOptions: Sendable {
  static let specs: [OptionSpec] = [
    OptionSpec(["--no-color", "-no-color"], help: "Never colour the output (also: NO_COLOR set, or not a terminal)."),
    OptionSpec(["--redact"], help: "Mask phone numbers (all but the last two digits) in every output."),
  ]

  package var noColor: Bool
  package var redact: Bool

  init(_ arguments: ParsedArguments) {
    noColor = arguments.has("--no-color")
    redact = arguments.has("--redact")
  }

  /// The human renderer for `context` (with `--redact`, the installation's fingerprints).
  package func renderer(_ context: CommandContext) -> HumanPlanRenderer {
    HumanPlanRenderer(color: context.useColor(noColorFlag: noColor), redact: redact, fingerprints: fingerprints(context))
  }

  /// With `--redact`, the fingerprints shown beside masked numbers: the key in the state root
  /// (`RedactionKey`, created on first use). When it cannot be read or made, a warning on
  /// standard error says why and numbers are masked without fingerprints. `nil` without
  /// `--redact`.
  /// `create`: false for a read-only command (`drift`), which uses the key only if it exists.
  package func fingerprints(_ context: CommandContext, create: Bool = true) -> PhoneFingerprints? {
    Self.fingerprints(redact: redact, context: context, create: create)
  }

  /// `fingerprints(_:)` for a command that knows only whether it redacts.
  package static func fingerprints(redact: Bool, context: CommandContext, create: Bool = true) -> PhoneFingerprints? {
    guard redact else { return nil }
    let root = WatchHome.root(environment: context.environment, currentDirectory: context.currentDirectory)
    do {
      return try RedactionKey.fingerprints(root: root, create: create)
    } catch {
      context.stderr.write("Warning: masked phone numbers are shown without fingerprints: cannot use the redaction key: \(error)\n")
      return nil
    }
  }
}

/// A manifest read for a command: its bytes (for the saved-plan hash), the load result, and
/// the path it came from.
package struct ManifestInputFile {
  /// The file as the user named it.
  var displayName: String
  /// Absolute path; `nil` for standard input.
  var path: String?
  var bytes: [UInt8]
  var result: ManifestLoadResult

  /// Reads `file` (`-` = standard input) and loads it as a manifest, for `command`.
  ///
  /// A file that cannot be read fails with the reader's message (`Error: cannot read …`); with
  /// `json`, the same JSON diagnostics document as for an invalid manifest is printed on
  /// standard output first (`validate --json`'s shape, masked with `redact`), so a script
  /// reading `plan --json` or `drift --json` always gets JSON.
  package static func read(_ file: String, command: String, json: Bool = false, redact: Bool = false,
                           context: CommandContext) throws(CommandFailure) -> ManifestInputFile {
    let source = ManifestInput.source(file, context: context)
    let bytes: [UInt8]
    switch source.read() {
    case .success(let read): bytes = read
    case .failure(let problem):
      if json {
        ManifestInput.printDiagnostics([problem.diagnostic], source: nil, json: true, redact: redact, context: context,
                                       file: source.displayName)
      }
      throw CommandFailure(ManifestInput.failureMessage(problem, command: command))
    }
    return ManifestInputFile(displayName: source.displayName, path: file == "-" ? nil : context.resolve(file), bytes: bytes,
                             result: ManifestInput.namingSavedPlan(ManifestLoader.load(bytes: bytes, file: source.displayName), file: source.displayName))
  }

  /// The engine's document; prints the diagnostics and fails when the manifest has errors.
  package func document(redact: Bool, json: Bool = false, context: CommandContext) throws(CommandFailure) -> ManifestDocument {
    guard let manifest = result.manifest else {
      try report(result.diagnostics, source: bytes, redact: redact, json: json, context: context, file: displayName)
      throw CommandFailure("the manifest could not be read")
    }
    return ManifestDocument(manifest: manifest, warnings: result.diagnostics.filter { $0.severity == .warning },
                            bytes: bytes, path: path)
  }
}

/// The command line's side of one watch: the engine's `Watch`, and how commands name it.
package struct CLIWatch {
  package let watch: Watch
  package let context: CommandContext
  /// The fleet file and watch name when the watch is one of a fleet's: advice to plan or apply
  /// it again then names the fleet (`--fleet fleet.yaml --watch room-12`), which merges its defaults.
  package var fleet: (file: String, watch: String)? = nil

  /// The command line's side of `watch`, one of the fleet `fleet` (file, watch name) or none.
  package init(watch: Watch, context: CommandContext, fleet: (file: String, watch: String)? = nil) {
    self.watch = watch
    self.context = context
    self.fleet = fleet
  }

  /// Opens the watch `spec` names (else `TSAPPLY_DEVICE`, else the default one) through the
  /// engine, printing its notices (e.g. the default watch was created on first use) to stderr.
  static func open(_ spec: String?, context: CommandContext) async throws -> CLIWatch {
    let watch = try await context.engine().open(spec)
    for notice in watch.notices { context.stderr.write(notice + "\n") }
    return CLIWatch(watch: watch, context: context)
  }

  /// ` --device SPEC` to paste into a suggested command, or "" for the default watch.
  var deviceArgument: String {
    watch.adviceSpec.map(deviceArgument(for:)) ?? ""
  }

  /// ` --device SPEC` for the watch `spec` names (a `--device` value or an identity), its path
  /// as advice names paths (`relativeSpec`), quoted for a shell (`ShellWord.quoted`).
  func deviceArgument(for spec: String) -> String {
    " --device " + ShellWord.quoted(Self.relativeSpec(spec, context))
  }

  /// How advice names this watch in prose: its `--device` value (`sim:watches/alice.json`), or
  /// its identity for the default watch.
  var shownSpec: String { Self.relativeSpec(watch.adviceSpec ?? watch.identity, context) }

  /// `tsapply WORDS --device SPEC FILE`: a complete command to paste, for advice; about this
  /// watch, or with `device` about the watch that identity or spec names (a saved plan's own).
  package func command(_ words: String, _ file: String? = nil, device: String? = nil) -> String {
    if device == nil, let fleet, ["plan", "apply", "drift", "drift --adopt"].contains(words) {
      return "tsapply \(words) --fleet \(ShellWord.quoted(fleet.file)) --watch \(ShellWord.quoted(fleet.watch))"
    }
    return "tsapply \(words)\(device.map(deviceArgument(for:)) ?? deviceArgument)" + (file.map { " " + ShellWord.quoted($0) } ?? "")
  }

  /// `path` relative to the working directory when it is inside it.
  func relative(_ path: String) -> String { CLIWatch.relative(path, context) }

  /// The absolute `path` as advice names it (docs/device.md): relative to the working
  /// directory when it lies inside it, absolute otherwise. A path spelled with `.` or `..` (a
  /// saved plan's `../m.yaml` made absolute: `/work/sub/../m.yaml`) is first named as the
  /// kernel finds it (`FilePaths.undotted`), so `..` never leaves the directory in a "relative" path.
  package static func relative(_ path: String, _ context: CommandContext) -> String {
    let named = FilePaths.undotted(path)
    let prefix = context.currentDirectory.hasSuffix("/") ? context.currentDirectory : context.currentDirectory + "/"
    return named.hasPrefix(prefix) ? String(named.dropFirst(prefix.count)) : named
  }

  /// A `sim:` spec with its path made relative to the working directory when inside it.
  static func relativeSpec(_ spec: String, _ context: CommandContext) -> String {
    guard spec.hasPrefix(DeviceSelector.simulatorScheme) else { return spec }
    return DeviceSelector.simulatorScheme + relative(String(spec.dropFirst(DeviceSelector.simulatorScheme.count)), context)
  }
}

/// Prints diagnostics (phone-like text masked with `redact`) and fails when any is an error;
/// `subject` names what they are about in the failure ("the manifest", "the backup").
func report(_ diagnostics: [Diagnostic], source: [UInt8]?, redact: Bool, json: Bool = false, context: CommandContext,
            subject: String = "the manifest", file: String? = nil) throws(CommandFailure) {
  ManifestInput.printDiagnostics(diagnostics, source: source, json: json, redact: redact, context: context, file: file)
  let errors = diagnostics.filter { $0.severity == .error }.count
  if errors > 0 {
    throw CommandFailure("\(errors) error\(errors == 1 ? "" : "s") in \(subject); the watch was not touched")
  }
}
