/// What a shell completion offers for an option's value or a command's positional arguments.
/// Declared beside each option (`OptionSpec.completion`) and command (`Command.positionals`), so
/// the scripts `tsapply completion SHELL` prints are generated from the command table itself.
public enum CompletionValues: Hashable, Sendable {
  /// Nothing to offer (free text, or no positional arguments).
  case none
  /// Any file or directory.
  case files
  /// Manifests: `*.yaml` and `*.yml` files (and directories to descend into).
  case manifests
  /// Exactly these words.
  case words([String])
}
