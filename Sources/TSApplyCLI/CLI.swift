import Foundation

/// The `tsapply` command line: finds the subcommand, parses its options, runs it, and turns
/// every outcome into output and an exit status.
public enum CLI {
  /// The core's top-level subcommands, in the order `tsapply --help` lists them.
  public static let coreCommands: [any Command.Type] = [
    ValidateCommand.self,
    PlanCommand.self,
    ApplyCommand.self,
    DriftCommand.self,
    ShowCommand.self,
    RestoreCommand.self,
    HistoryCommand.self,
    DeviceCommand.self,
    ExportCommand.self,
    FmtCommand.self,
    SchemaCommand.self,
    CompletionCommand.self,
    HelpCommand.self,
    ManPagesCommand.self,
  ]

  /// The core build's top-level subcommands (`coreCommands`).
  public static var commands: [any Command.Type] { commands(Toolset.core) }

  /// The top-level subcommands of the build whose toolset is `toolset`: the core's, with the
  /// toolset's commands each after the one it names.
  package static func commands(_ toolset: Toolset) -> [any Command.Type] {
    var list = coreCommands
    for (command, after) in toolset.commands {
      let index = list.firstIndex { $0.name == after }.map { $0 + 1 } ?? list.count
      list.insert(command, at: index)
    }
    return list
  }

  /// Runs `tsapply` with `arguments` (without the program name) in `context`.
  ///
  /// This is the one place that maps errors to text and exit statuses: `UsageError` → 64 with
  /// the usage line; `CommandFailure` and any other error → 1 with `Error: …` on stderr.
  public static func run(_ arguments: [String], context: CommandContext) async -> ExitStatus {
    var context = context
    context.invocation = arguments
    var remaining = arguments
    var prefix = "tsapply"
    let commands = Self.commands(context.toolset)
    var group: [any Command.Type] = commands
    guard let first = remaining.first else {
      context.stdout.write(overview(commands))
      return .success
    }
    if first == "--help" || first == "-h" {
      context.stdout.write(overview(commands))
      return .success
    }
    if first == "--version" {
      context.stdout.write(BuildInfo.versionLine())
      return .success
    }
    var command: (any Command.Type)?
    while let word = remaining.first, let match = group.first(where: { $0.name == word }) {
      remaining.removeFirst()
      command = match
      if match.subcommands.isEmpty { break }
      prefix += " \(match.name)"
      group = match.subcommands
    }
    guard let command else {
      var message = "unknown command '\(first)'"
      if let suggestion = closestMatch(to: first, in: commands.map { $0.name }) {
        message += "; did you mean '\(suggestion)'?"
      }
      context.stderr.write("Error: \(message)\n\nUSAGE: tsapply <command> [options]\n  See 'tsapply --help'.\n")
      return .usage
    }
    if remaining.contains("--help") || remaining.contains("-h") {
      context.stdout.write(command.helpText(prefix: commandPrefix(prefix, command)))
      return .success
    }
    if !command.subcommands.isEmpty {
      let word = remaining.first ?? ""
      let names = command.subcommands.map { $0.name }
      var message = word.isEmpty ? "'\(prefix)' needs a subcommand: \(names.joined(separator: ", "))"
        : "unknown subcommand '\(word)'; expected one of: \(names.joined(separator: ", "))"
      if !word.isEmpty, let suggestion = closestMatch(to: word, in: names) { message += "; did you mean '\(suggestion)'?" }
      context.stderr.write("Error: \(message)\n")
      return .usage
    }
    do {
      let parsed = try ParsedArguments.parse(remaining, options: command.options)
      let instance = try command.init(parsed)
      return try await instance.run(context)
    } catch let error as UsageError {
      context.stderr.write("Error: \(error.message)\n\nUSAGE: \(commandPrefix(prefix, command)) \(command.name) \(command.usage)\n  See '\(commandPrefix(prefix, command)) \(command.name) --help'.\n")
      return .usage
    } catch let failure as CommandFailure {
      context.stderr.write("Error: \(failure.message)\n")
      return .failure
    } catch {
      context.stderr.write("Error: \(error)\n")
      return .failure
    }
  }

  private static func commandPrefix(_ prefix: String, _ command: any Command.Type) -> String {
    prefix.hasSuffix(" \(command.name)") ? String(prefix.dropLast(command.name.count + 1)) : prefix
  }

  /// What the tool is, the overview of `tsapply --help` (and of the tsapply(1) man page).
  public static let summary = """
    tsapply reconciles a TopStep watch with a YAML manifest (watch.yaml):
    'plan' shows what would change, 'apply' makes the watch match.
    """
  /// The usage line after `tsapply`.
  public static let usage = "<command> [options]"
  /// The last line of `tsapply --help`.
  public static let helpHint = "See 'tsapply help <command>' for detailed help."

  /// `tsapply --help`: what the tool is and its commands (those of `commands` not hidden).
  public static func overview(_ commands: [any Command.Type] = CLI.commands) -> String {
    var text = "OVERVIEW: \(summary)\n\nUSAGE: tsapply \(usage)\n\nCOMMANDS:\n"
    for command in commands where !command.isHidden {
      text += "  " + command.name.padding(toLength: 12, withPad: " ", startingAt: 0) + command.abstract + "\n"
    }
    text += "\n  \(helpHint)\n"
    return text
  }
}

/// `tsapply help [COMMAND...]`: prints the overview or one command's help.
struct HelpCommand: Command {
  static let name = "help"
  static let abstract = "Show help for tsapply or one of its commands."
  static let usage = "[COMMAND [SUBCOMMAND]]"
  static let options: [OptionSpec] = []
  static var positionals: CompletionValues {
    .words(CLI.coreCommands.filter { !$0.isHidden }.map { $0.name } + NetworkBuild.commands.sorted())
  }
  let words: [String]

  init(_ arguments: ParsedArguments) throws(UsageError) { words = arguments.positionals }

  func run(_ context: CommandContext) async throws -> ExitStatus {
    guard !words.isEmpty else {
      context.stdout.write(CLI.overview(CLI.commands(context.toolset)))
      return .success
    }
    var group = CLI.commands(context.toolset)
    var prefix = "tsapply"
    var found: (any Command.Type)?
    for word in words {
      guard let match = group.first(where: { $0.name == word }) else {
        throw UsageError("unknown command '\(word)'")
      }
      if let found { prefix += " \(found.name)" }
      found = match
      group = match.subcommands
    }
    guard let found else { return .success }
    context.stdout.write(found.helpText(prefix: prefix))
    return .success
  }
}
