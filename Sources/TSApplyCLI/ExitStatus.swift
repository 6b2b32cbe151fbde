/// Process exit statuses; the CLI maps every outcome to one of these in one place (`CLI.run`).
public enum ExitStatus: Int32, Sendable {
  /// Success (with `--detailed-exitcode`: success and no changes).
  case success = 0
  /// Invalid manifest, device error, stale saved plan, declined confirmation.
  case failure = 1
  /// Only with `--detailed-exitcode`: the plan has changes (Terraform's convention).
  case changesPresent = 2
  /// Bad command line (EX_USAGE, swift-argument-parser's convention).
  case usage = 64
}

/// A mistake on the command line; printed with the command's usage line, exit status 64.
public struct UsageError: Error, Equatable, Sendable, CustomStringConvertible {
  /// What was wrong, in one line, without the `Error: ` prefix.
  public var message: String
  /// A usage error with `message`.
  public init(_ message: String) { self.message = message }
  public var description: String { message }
}

/// An error that ends a command with a message and exit status 1. `message` is printed as is
/// after `Error: `; further lines (e.g. diagnostics) are part of `message`.
public struct CommandFailure: Error, Sendable, CustomStringConvertible {
  /// The text printed after `Error: `; may span several lines.
  public var message: String
  /// A failure with `message`.
  public init(_ message: String) { self.message = message }
  public var description: String { message }
}
