/// `tsapply completion bash|zsh|fish`: prints a shell completion script generated from
/// `CLI.commands` (subcommands, options, profile names, manifest files), so it never drifts
/// from the commands themselves.
struct CompletionCommand: Command {
  /// The shells a script can be generated for.
  enum Shell: String, CaseIterable, Sendable {
    case bash, zsh, fish

    /// The script for this shell, from the command table `nodes`.
    func script(_ nodes: [CompletionNode]) -> String {
      switch self {
      case .bash: BashCompletion.script(nodes)
      case .zsh: ZshCompletion.script(nodes)
      case .fish: FishCompletion.script(nodes)
      }
    }
  }

  static let name = "completion"
  static let abstract = "Print a shell completion script (bash, zsh or fish)."
  static let usage = "bash | zsh | fish"
  static let discussion = """
    Install, e.g.:
        tsapply completion bash > ~/.local/share/bash-completion/completions/tsapply
        tsapply completion zsh > ~/.zfunc/_tsapply      (fpath=(~/.zfunc $fpath) before compinit)
        tsapply completion fish > ~/.config/fish/completions/tsapply.fish
    See docs/editor-and-ci.md.
    """
  static let options: [OptionSpec] = []
  static let positionals: CompletionValues = .words(Shell.allCases.map(\.rawValue))

  let shell: Shell

  init(_ arguments: ParsedArguments) throws(UsageError) {
    let names = Shell.allCases.map(\.rawValue)
    guard arguments.positionals.count == 1 else {
      throw UsageError("expected one shell: \(names.joined(separator: ", "))")
    }
    let word = arguments.positionals[0]
    guard let shell = Shell(rawValue: word) else {
      var message = "unknown shell '\(word)'; expected one of: \(names.joined(separator: ", "))"
      if let suggestion = closestMatch(to: word, in: names) { message += "; did you mean '\(suggestion)'?" }
      throw UsageError(message)
    }
    self.shell = shell
  }

  func run(_ context: CommandContext) async throws -> ExitStatus {
    context.stdout.write(shell.script(CompletionTree.nodes(CLI.commands(context.toolset))))
    return .success
  }
}
