import Foundation
import TSEngine
import TSModel

/// `tsapply history`: the watch's apply history — every apply and restore, who ran it, from
/// which manifest and commit, how it ended, the backup before it — checked for tampering
/// (docs/apply.md "History").
package struct HistoryCommand: Command {
  package static let name = "history"
  package static let abstract = "List every apply and restore of the watch, checking the history was not changed."
  package static let usage = "[options]"
  package static let discussion = """
    Reads the watch's history from tsapply's records (nothing is read from the watch but its
    identity): time, kind (apply or restore), result, changes (what reached the watch: for a
    failed apply, '2 of 4 applied (+0 ~2 -0); failed: contacts'), user@host, the manifest's git
    commit, the plan's digest, the backup taken before it and the command. The history is
    append-only and its entries are chained by hashes: an entry changed, removed, inserted or
    cut off the end is reported, and the exit status is then 1. With --fleet, the history of
    every watch of the fleet (--watch NAME for some).
    'tsapply restore --at TIME' goes back to the state before the first apply after TIME.
    """
  package static let options: [OptionSpec] = [
    OptionSpec(["--json", "-json"], help: "Print the history as JSON."),
    DeviceOption.spec,
  ] + FleetOptions.specs

  package var json: Bool
  package var deviceSpec: String?
  package var fleet: FleetOptions

  package init(_ arguments: ParsedArguments) throws(UsageError) {
    guard arguments.positionals.isEmpty else { throw UsageError("history takes no file; it reads the watch's records") }
    json = arguments.has("--json")
    deviceSpec = DeviceOption.value(in: arguments)
    fleet = try FleetOptions(arguments, command: Self.name)
  }

  package func run(_ context: CommandContext) async throws -> ExitStatus {
    if fleet.file != nil { return try await context.toolset.fleet.history(self, context: context) }
    let watch = try await CLIWatch.open(deviceSpec, context: context)
    defer { Task { await watch.watch.close() } }
    let read = try Self.read(watch.watch)
    if json {
      var object = read.json
      if case .object(var fields) = object {
        fields["device"] = .string(watch.watch.identity)
        fields["format_version"] = .string("1")
        object = .object(fields)
      }
      context.stdout.write(canonicalJSON(object))
    } else {
      context.stdout.write(Self.text(read, watch: watch.watch.identity, path: CLIWatch.relative(watch.watch.history.path, context)))
    }
    guard read.isIntact else { throw Self.tampered(read, watch: watch.watch.identity) }
    return .success
  }

  /// The history of `watch`.
  /// - Throws: `CommandFailure` when it cannot be read.
  package static func read(_ watch: Watch) throws -> ApplyHistory.Read {
    do { return try watch.history.read() } catch { throw CommandFailure("cannot read the apply history: \(error)") }
  }

  /// A watch's history for people: a heading naming it and the file, the table, the verdict.
  package static func text(_ read: ApplyHistory.Read, watch: String, path: String) -> String {
    let heading = "History of \(ControlCharacters.escaped(watch)) (\(path)): \(read.verdict)\n"
    return read.entries.isEmpty ? heading : heading + "\n" + read.table
  }

  /// The failure for a history that was changed.
  package static func tampered(_ read: ApplyHistory.Read, watch: String) -> CommandFailure {
    CommandFailure("the apply history of \(watch) was changed other than by tsapply (\(read.problems.count) problem\(read.problems.count == 1 ? "" : "s"), listed above)")
  }
}
