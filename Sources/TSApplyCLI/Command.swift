/// A `tsapply` subcommand: its name, help, options, and what it does.
///
/// Commands are values built from parsed arguments; `run` does the work and returns an exit
/// status. Errors thrown from `run` are turned into text and a status by `CLI.run`, the one
/// place that does so.
public protocol Command: Sendable {
  /// The word that selects the command, e.g. `plan`.
  static var name: String { get }
  /// One line for the command list.
  static var abstract: String { get }
  /// Usage line after `tsapply <name>`, e.g. `[options] [FILE]`.
  static var usage: String { get }
  /// Extra help paragraphs shown by `tsapply help <name>`; may be empty.
  static var discussion: String { get }
  /// Options and flags the command accepts.
  static var options: [OptionSpec] { get }
  /// Nested subcommands (e.g. `device init`); empty for leaf commands.
  static var subcommands: [any Command.Type] { get }
  /// What shell completion offers for positional arguments (default: nothing).
  static var positionals: CompletionValues { get }
  /// Left out of `tsapply --help`, completion scripts and man pages: a command for building
  /// tsapply, not for using it (`man-pages`). Default: `false`.
  static var isHidden: Bool { get }

  /// Builds the command from parsed arguments.
  /// - Throws: `UsageError` when arguments are missing or extra.
  init(_ arguments: ParsedArguments) throws(UsageError)

  /// Runs the command.
  func run(_ context: CommandContext) async throws -> ExitStatus
}

extension Command {
  /// Default: no extra help paragraphs.
  public static var discussion: String { "" }
  /// Default: no subcommands (a leaf command).
  public static var subcommands: [any Command.Type] { [] }
  /// Default: completion offers nothing for positional arguments.
  public static var positionals: CompletionValues { .none }
  /// Default: listed.
  public static var isHidden: Bool { false }

  /// The help text: overview, usage, options, subcommands.
  public static func helpText(prefix: String) -> String {
    var text = "OVERVIEW: \(abstract)\n\nUSAGE: \(prefix) \(name) \(usage)\n"
    if !discussion.isEmpty { text += "\n" + discussion + "\n" }
    let allOptions = options + [CompletionTree.helpOption]
    text += "\nOPTIONS:\n"
    for option in allOptions {
      var spelled = option.names.joined(separator: ", ")
      if option.takesValue { spelled += " \(option.valueName)" }
      text += "  " + spelled.padding(toLength: max(spelled.count, 28), withPad: " ", startingAt: 0)
      text += "  " + option.help + "\n"
    }
    if !subcommands.isEmpty {
      text += "\nSUBCOMMANDS:\n"
      for sub in subcommands {
        text += "  " + sub.name.padding(toLength: 14, withPad: " ", startingAt: 0) + sub.abstract + "\n"
      }
    }
    return text
  }
}

/// Leaf commands whose only positional argument is an optional manifest path (default `watch.yaml`).
public enum ManifestArgument {
  /// The default manifest file name, looked up in the current directory.
  public static let defaultFile = "watch.yaml"

  /// The single optional positional, or `watch.yaml`.
  /// - Throws: `UsageError` when more than one positional is given.
  public static func file(from arguments: ParsedArguments) throws(UsageError) -> String {
    guard arguments.positionals.count <= 1 else {
      throw UsageError("expected at most one manifest file, got \(arguments.positionals.count): \(arguments.positionals.joined(separator: " "))")
    }
    return arguments.positionals.first ?? defaultFile
  }
}
