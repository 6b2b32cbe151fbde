/// The command table flattened for shell completion: one node per command path (`tsapply`,
/// `tsapply plan`, `tsapply device init`, …), each with its subcommands, options (including
/// `--help`) and what its positional arguments complete to. Built from `CLI.commands`, so the
/// generated scripts follow every command, option and profile added to the table.
public struct CompletionNode: Sendable {
  /// The words that select the command, starting with `tsapply`, e.g. `["tsapply", "device", "init"]`.
  public var path: [String]
  /// The subcommands as (name, one-line abstract).
  public var subcommands: [(name: String, abstract: String)]
  /// Every option and flag, `--help` included.
  public var options: [OptionSpec]
  /// What positional arguments complete to.
  public var positionals: CompletionValues

  /// The path as one string, e.g. `tsapply device init`.
  public var key: String { path.joined(separator: " ") }

  /// The options that take a value.
  var valueOptions: [OptionSpec] { options.filter(\.takesValue) }
}

/// Builds the completion nodes from the command table (`CLI.commands`).
public enum CompletionTree {
  /// The program's name as shells complete it.
  public static let program = "tsapply"

  /// Every node, root first, then each command followed by its subcommands (table order).
  public static func nodes(_ commands: [any Command.Type] = CLI.commands) -> [CompletionNode] {
    let commands = commands.filter { !$0.isHidden }
    let rootOptions = [helpOption, OptionSpec(["--version"], help: "Print the version.")]
    var nodes = [CompletionNode(path: [program], subcommands: commands.map { ($0.name, $0.abstract) },
                                options: rootOptions, positionals: .none)]
    for command in commands { append(command, parent: [program], to: &nodes) }
    return nodes
  }

  /// `--help`, `-h`, which every command accepts (`Command.helpText` lists it).
  static let helpOption = OptionSpec(["--help", "-h"], help: "Show help information.")

  private static func append(_ command: any Command.Type, parent: [String], to nodes: inout [CompletionNode]) {
    let path = parent + [command.name]
    nodes.append(CompletionNode(path: path, subcommands: command.subcommands.map { ($0.name, $0.abstract) },
                                options: command.options + [helpOption], positionals: command.positionals))
    for sub in command.subcommands { append(sub, parent: path, to: &nodes) }
  }

  /// Every command path below the root, e.g. `tsapply plan`, `tsapply device init`.
  static func commandKeys(_ nodes: [CompletionNode]) -> [String] {
    nodes.dropFirst().map(\.key)
  }

  /// Each option that takes a value, with the words "command path + option" that come before
  /// its value (one per spelling), e.g. `tsapply plan --out`, `tsapply plan -out`.
  static func valueOptions(_ nodes: [CompletionNode]) -> [(keys: [String], option: OptionSpec)] {
    nodes.flatMap { node in node.valueOptions.map { option in (option.names.map { "\(node.key) \($0)" }, option) } }
  }

  /// `"a b"|"c d"`: shell case patterns matching exactly these strings (which hold no quotes).
  static func casePatterns(_ keys: [String]) -> String {
    keys.map { "\"\($0)\"" }.joined(separator: "|")
  }
}
