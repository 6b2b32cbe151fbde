/// A place in a manifest file: the file name as given on the command line, and a 1-based line
/// and column.
///
/// Columns count Unicode scalars, as libyaml's marks do (libyaml reports 0-based marks; the
/// YAML reader converts them once, in one place). `file` is `"-"` or `"<stdin>"` for standard input.
public struct SourcePosition: Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
  /// The file as the user named it (not resolved to an absolute path).
  public var file: String
  /// 1-based line number.
  public var line: Int
  /// 1-based column, in Unicode scalars.
  public var column: Int

  /// Creates a position; `line` and `column` are 1-based.
  public init(file: String, line: Int, column: Int) {
    self.file = file
    self.line = line
    self.column = column
  }

  /// `file:line:column`, as compilers print it.
  public var description: String { "\(file):\(line):\(column)" }

  /// Orders by file name, then line, then column.
  public static func < (a: Self, b: Self) -> Bool {
    (a.file, a.line, a.column) < (b.file, b.line, b.column)
  }
}
