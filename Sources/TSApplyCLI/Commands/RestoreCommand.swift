import Foundation
import TSApply
import TSDevice
import TSEngine
import TSManifest
import TSModel

/// `tsapply restore BACKUP`: puts the watch back into the state saved before an apply.
struct RestoreCommand: Command {
  static let name = "restore"
  static let abstract = "Put the watch back as a backup taken before an apply saved it."
  static let usage = "[options] BACKUP"
  static let positionals: CompletionValues = .files
  static let discussion = """
    Plans the changes that return the watch to the backed-up state, shows them and asks for
    confirmation like 'apply' (only 'yes' is accepted; --auto-approve skips the question, and an
    unsafe restore needs --allow-destroy too). The backup goes back to the watch it was taken
    from unless --device or TSAPPLY_DEVICE names another. The current state is itself backed up
    first, so a restore can be undone.
    """
  static let options: [OptionSpec] = ApplyRun.specs + [DeviceOption.spec] + PlanOutputOptions.specs

  var file: String
  var deviceSpec: String?
  var run: ApplyRun.Settings

  init(_ arguments: ParsedArguments) throws(UsageError) {
    guard arguments.positionals.count == 1 else { throw UsageError("expected one backup file (apply prints where it wrote it)") }
    file = arguments.positionals[0]
    deviceSpec = DeviceOption.value(in: arguments)
    run = try ApplyRun.Settings(arguments, command: Self.name)
  }

  func run(_ context: CommandContext) async throws -> ExitStatus {
    let backup = try Backup.read(path: context.resolve(file))
    // The backup goes back to the watch it came from, unless --device (or TSAPPLY_DEVICE) names another.
    let chosen = deviceSpec ?? context.environment[DeviceSelector.environmentVariable].flatMap { $0.isEmpty ? nil : $0 }
    let watch = try await CLIWatch.open(chosen ?? backup.device, context: context)
    if let device = backup.device, device != watch.watch.identity {
      context.stderr.write("Note: \(file) was taken from \(device); restoring it onto \(watch.watch.identity) as asked.\n")
    }
    let apply = ApplyRun(watch: watch, settings: run, context: context, command: Self.name, rerunArgument: file,
                         manifestArgument: nil, commandLine: "tsapply restore \(file)")
    return try await apply.run { options throws(EngineError) in
      try await watch.watch.restore(backup, file: file, options: options)
    }
  }
}
