/// The one JSON shape of a diagnostic, wherever tsapply prints one (`validate --json`, a plan's
/// `warnings`, the JSON document of a manifest that cannot be used, a fleet's report): every key
/// always present, so a script reads them the same way everywhere (docs/manifest.md
/// "`tsapply validate`").
extension JSONValue {
  /// `{severity, file, line, column, field, message}`: `file` is the position's file, else
  /// `fallback` (the input the command read; `null` when there is none); `line` and `column`
  /// (1-based, Unicode scalars) are `null` for a problem without a position (a file that cannot
  /// be read); `field` is the manifest path (`""` for the whole document). Text is as given:
  /// mask it before (`--redact`).
  public init(diagnostic: Diagnostic, file fallback: String? = nil) {
    let file = diagnostic.position?.file ?? fallback
    self = .object([
      "severity": .string(diagnostic.severity.rawValue),
      "file": file.map(JSONValue.string) ?? .null,
      "line": diagnostic.position.map { .integer($0.line) } ?? .null,
      "column": diagnostic.position.map { .integer($0.column) } ?? .null,
      "field": .string(diagnostic.field),
      "message": .string(diagnostic.message),
    ])
  }

  /// A position as `{file, line, column}` (1-based, columns in Unicode scalars).
  public init(position: SourcePosition) {
    self = .object(["file": .string(position.file), "line": .integer(position.line), "column": .integer(position.column)])
  }
}
