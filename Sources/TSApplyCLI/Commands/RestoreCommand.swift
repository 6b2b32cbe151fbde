import Foundation
import TSApply
import TSManifest
import TSModel

/// `tsapply restore BACKUP`: puts the watch back into the state saved before an apply.
struct RestoreCommand: Command {
  static let name = "restore"
  static let abstract = "Put the watch back as a backup from .tsapply/backups/ saved it."
  static let usage = "[options] BACKUP"
  static let positionals: CompletionValues = .files
  static let discussion = """
    Plans the changes that return the watch to the backed-up state, shows them and asks for
    confirmation like 'apply' (only 'yes' is accepted; --auto-approve skips the question).
    The current state is itself backed up first, so a restore can be undone.
    """
  static let options: [OptionSpec] = [ApplyRun.autoApproveSpec, DeviceOption.spec] + PlanOutputOptions.specs

  var file: String
  var autoApprove: Bool
  var deviceSpec: String?
  var output: PlanOutputOptions

  init(_ arguments: ParsedArguments) throws(UsageError) {
    guard arguments.positionals.count == 1 else { throw UsageError("expected one backup file (see .tsapply/backups/)") }
    file = arguments.positionals[0]
    autoApprove = arguments.has("--auto-approve")
    deviceSpec = DeviceOption.value(in: arguments)
    output = PlanOutputOptions(arguments)
  }

  func run(_ context: CommandContext) async throws -> ExitStatus {
    let backup = try Backup.read(path: context.resolve(file))
    // The backup goes back to the watch it came from, unless --device (or TSAPPLY_DEVICE) names another.
    let chosen = deviceSpec ?? context.environment["TSAPPLY_DEVICE"]
    let session = try await WatchSession.open(spec: chosen ?? backup.device, context: context)
    if let device = backup.device, device != session.deviceIdentity {
      context.stderr.write("Note: \(file) was taken from \(device); restoring it onto \(session.deviceIdentity) as asked.\n")
    }
    let capabilities = session.reconciler.capabilities
    guard backup.profile == capabilities.profile else {
      throw CommandFailure("\(file) was taken from a '\(backup.profile)' watch; this watch is '\(capabilities.profile)'")
    }
    let manifest = try checkedManifest(backup, capabilities: capabilities, context: context)
    let (state, result) = try await session.plan(manifest)
    guard let plan = result.plan else {
      try report(result.diagnostics, source: nil, redact: output.redact, context: context, subject: "the backup")
      return .failure
    }
    return try await ApplyRun(session: session, output: output, context: context, command: Self.name, rerunArgument: file)
      .run(plan, manifest: manifest, confirm: !autoApprove, state: state)
  }

  /// The backup as a manifest, checked with every manifest rule: a backup is a file a person can
  /// edit, so it gets no more trust than a manifest (a backup holding `repeatDays: -1` or a phone
  /// `abc` is refused, never written to the watch).
  private func checkedManifest(_ backup: Backup, capabilities: DeviceCapabilities,
                               context: CommandContext) throws -> Manifest {
    let (stated, problems) = StateManifest.manifest(for: backup.state, capabilities: capabilities, file: file)
    try report(problems, source: nil, redact: output.redact, context: context, subject: "the backup")
    let yaml = Array(try ManifestEncoder.encode(stated).utf8)
    let checked = ManifestLoader.load(bytes: yaml, file: "\(file) (as a manifest)")
    try report(checked.diagnostics.filter { $0.severity == .error }, source: yaml, redact: output.redact, context: context,
               subject: "the backup")
    guard let manifest = checked.manifest else { throw CommandFailure("\(file) cannot be restored") }
    return manifest
  }
}
