/// One problem found in a manifest or in a plan, with the position it refers to.
///
/// Every stage (YAML reading, decoding, validation, capability checks) reports problems as
/// `Diagnostic` values and collects all of them, so a user sees every problem in one run.
/// Rendered compiler-style by `description`:
/// `watch.yaml:12:9: error: reminders.custom[1].at[0]: "24:30" is not a time of day (expected HH:MM, 00:00–23:59)`.
public struct Diagnostic: Hashable, Codable, Sendable, CustomStringConvertible {
  /// Whether the problem stops the manifest from being used.
  public enum Severity: String, Hashable, Codable, Sendable {
    /// The manifest cannot be planned or applied; the command exits non-zero.
    case error
    /// The manifest is usable, but something deserves attention (e.g. a name that will be truncated).
    case warning
  }

  /// Error or warning.
  public var severity: Severity
  /// Where the problem is; `nil` only for problems about the whole input that has no position.
  public var position: SourcePosition?
  /// The manifest field path, e.g. `reminders.custom[1].at[0]`; empty for whole-document problems.
  public var field: String
  /// The human-readable message, saying what was found and what was expected.
  public var message: String

  /// Creates a diagnostic.
  public init(_ severity: Severity, at position: SourcePosition?, field: String, _ message: String) {
    self.severity = severity
    self.position = position
    self.field = field
    self.message = message
  }

  /// An error diagnostic.
  public static func error(at position: SourcePosition?, field: String, _ message: String) -> Diagnostic {
    Diagnostic(.error, at: position, field: field, message)
  }

  /// A warning diagnostic.
  public static func warning(at position: SourcePosition?, field: String, _ message: String) -> Diagnostic {
    Diagnostic(.warning, at: position, field: field, message)
  }

  /// `file:line:column: severity: field: message`; parts that are missing are left out.
  public var description: String {
    var text = ""
    if let position { text += "\(position): " }
    text += "\(severity.rawValue): "
    if !field.isEmpty { text += "\(field): " }
    return text + message
  }
}

extension Array where Element == Diagnostic {
  /// True when at least one diagnostic is an error.
  public var hasErrors: Bool { contains { $0.severity == .error } }

  /// Sorted by position (diagnostics without a position first), then by field and message,
  /// so output is deterministic.
  public func sortedByPosition() -> [Diagnostic] {
    sorted { a, b in
      switch (a.position, b.position) {
      case (nil, .some): return true
      case (.some, nil): return false
      case let (pa?, pb?) where pa != pb: return pa < pb
      default: return (a.field, a.message) < (b.field, b.message)
      }
    }
  }
}
