import TSModel

/// How the user names a simulated watch on the command line, for the advice in error messages
/// ("create one with 'tsapply device init --device sim:PATH'", "reset the watch with 'tsapply
/// device init --force --device sim:PATH'"), so the advice can be pasted as it is.
struct WatchName: Hashable, Sendable {
  /// The `--device` value (`sim:PATH`), or `nil` for the default watch, which needs no option.
  let spec: String?

  /// The default watch (`sim:.tsapply/device.json`, named by no option).
  static let defaultWatch = WatchName(spec: nil)

  /// `tsapply device init [--force] [--device SPEC]`, the spec quoted for a POSIX shell when it
  /// holds anything but letters, digits and `/._-:+@%,=` (`ShellWord.quoted`).
  func initCommand(force: Bool) -> String {
    var command = "tsapply device init"
    if force { command += " --force" }
    if let spec { command += " --device " + ShellWord.quoted(spec) }
    return command
  }
}
