import Foundation
import TSApply
import TSDevice
import TSEngine
import TSManifest
import TSModel

/// `tsapply restore BACKUP` and `tsapply restore --at TIME`: puts the watch back into the state
/// saved before an apply.
package struct RestoreCommand: Command {
  package static let name = "restore"
  package static let abstract = "Put the watch back as a backup taken before an apply saved it."
  package static let usage = "[options] BACKUP | --at TIME"
  package static let positionals: CompletionValues = .files
  package static let discussion = """
    Plans the changes that return the watch to the backed-up state, shows them and asks for
    confirmation like 'apply' (only 'yes' is accepted; --auto-approve skips the question, and an
    unsafe restore needs --allow-destroy too). The backup goes back to the watch it was taken
    from unless --device or TSAPPLY_DEVICE names another. The current state is itself backed up
    first, so a restore can be undone.
    With --at TIME instead of a backup, goes back to the state before the first apply (or
    restore) after TIME, found in the watch's apply history ('tsapply history'); TIME is an ISO
    8601 time (2026-12-02T09:30:00Z), a UTC day (2026-12-02) or a duration ago (90m, 2h). A
    history that was changed other than by tsapply is refused. With --fleet, every watch of the
    fleet (--watch NAME for some) goes back, each through the safety gate.
    """
  package static let options: [OptionSpec] = ApplyRun.specs + [
    DeviceOption.spec,
    OptionSpec(["--at", "-at"], value: "TIME", help: "Go back to the state before the first apply after TIME (ISO 8601, a UTC day, or e.g. 2h ago)."),
  ] + PlanOutputOptions.specs + FleetOptions.specs

  package var file: String?
  package var at: Date?
  /// `--at` as written, for messages.
  package var atText: String?
  package var deviceSpec: String?
  package var run: ApplyRun.Settings
  package var fleet: FleetOptions

  package init(_ arguments: ParsedArguments) throws(UsageError) {
    fleet = try FleetOptions(arguments, command: Self.name)
    deviceSpec = DeviceOption.value(in: arguments)
    run = try ApplyRun.Settings(arguments, command: Self.name)
    atText = arguments.value("--at")
    if let text = atText {
      guard let time = ApplyHistory.time(text, now: Date()) else {
        throw UsageError("--at expects a time such as 2026-12-02T09:30:00Z, a day such as 2026-12-02, or a duration ago such as 2h, got '\(text)'")
      }
      at = time
      if !arguments.positionals.isEmpty { throw UsageError("give a backup file or --at TIME, not both") }
      return
    }
    if fleet.file != nil { throw UsageError("restore --fleet needs --at TIME (each watch's backup comes from its history)") }
    guard arguments.positionals.count == 1 else { throw UsageError("expected one backup file (apply prints where it wrote it), or --at TIME") }
    file = arguments.positionals[0]
  }

  package func run(_ context: CommandContext) async throws -> ExitStatus {
    if fleet.file != nil { return try await context.toolset.fleet.restore(self, context: context) }
    if let at {
      let watch = try await CLIWatch.open(deviceSpec, context: context)
      guard let (backup, file) = try Self.backup(before: at, text: atText ?? "", watch: watch.watch, context: context) else {
        // Only applies leave backups: a change made on the watch itself since is not in the
        // history, so nothing here says the watch is as it was then (fresh-eyes finding).
        context.stdout.write("Nothing to restore: no apply changed \(watch.watch.identity) after \(atText ?? ""), so no backup goes back to then. "
          + "A change made on the watch itself is not in its history: '\(watch.command("drift"))' shows what changed since the last apply.\n")
        return .success
      }
      return try await restore(backup, file: file, onto: watch, context: context)
    }
    let file = self.file ?? ""
    let backup = try Backup.read(path: context.resolve(file))
    // The backup goes back to the watch it came from, unless --device (or TSAPPLY_DEVICE) names another.
    let chosen = deviceSpec ?? context.environment[DeviceSelector.environmentVariable].flatMap { $0.isEmpty ? nil : $0 }
    let watch = try await CLIWatch.open(chosen ?? backup.device, context: context)
    if let device = backup.device, device != watch.watch.identity {
      context.stderr.write("Note: \(file) was taken from \(device); restoring it onto \(watch.watch.identity) as asked.\n")
    }
    return try await restore(backup, file: file, onto: watch, context: context)
  }

  private func restore(_ backup: Backup, file: String, onto watch: CLIWatch, context: CommandContext) async throws -> ExitStatus {
    let apply = ApplyRun(watch: watch, settings: run, context: context, command: Self.name, rerunArgument: file,
                         manifestArgument: nil, commandLine: context.commandLine)
    return try await apply.run { options throws(EngineError) in
      try await watch.watch.restore(backup, file: file, options: options)
    }
  }

  /// The backup taken before the first apply after `time` in `watch`'s history, with its path
  /// as printed (saying which entry it is); `nil` when nothing was applied after `time`.
  /// - Throws: `CommandFailure` when the history was changed other than by tsapply, or the
  ///   backup is gone or unreadable.
  package static func backup(before time: Date, text: String, watch: Watch, context: CommandContext) throws -> (Backup, String)? {
    let read = try HistoryCommand.read(watch)
    guard read.isIntact else {
      throw CommandFailure("refusing to restore from a history that was changed other than by tsapply:\n"
        + read.problems.map { "  - " + $0 }.joined(separator: "\n") + "\n  Restore a backup by name instead: 'tsapply restore BACKUP'")
    }
    guard let first = ApplyHistory.firstChange(after: time, in: read.entries), let path = first.backup else { return nil }
    // Named as `history` lists it: an apply's `started` entry is shown by the entry that ended it
    // (fresh-eyes finding: "entry 1", which the table has no row for).
    let entry = read.entries.first { $0.sequence > first.sequence && $0.backup == path && $0.result != HistoryEntry.started } ?? first
    let shown = CLIWatch.relative(path, context)
    context.stdout.write("Going back to before entry \(entry.sequence) of the history (\(entry.kind) at \(entry.time) by \(entry.user)@\(entry.host), "
      + "the first after \(text)): its backup \(shown).\n\n")
    do { return (try Backup.read(path: path), shown) } catch { throw CommandFailure("\(error) (entry \(entry.sequence) of the history)") }
  }
}
