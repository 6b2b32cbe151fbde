import TSManifest

/// `tsapply schema`: prints the manifest's JSON Schema (draft 2020-12) for editors.
///
/// The schema is `ManifestSchema`, built from the validator's own constants; `tsapply validate`
/// stays authoritative for the rules a schema cannot express (see docs/editor-and-ci.md).
struct SchemaCommand: Command {
  static let name = "schema"
  static let abstract = "Print the manifest's JSON Schema (for editors and the YAML language server)."
  static let usage = "(no arguments: prints the schema on standard output)"
  static let discussion = """
    Save it and point the YAML language server at it, e.g.
        tsapply schema > tsapply.schema.json
    and as the first line of watch.yaml:
        # yaml-language-server: $schema=./tsapply.schema.json
    The schema is draft 2020-12, format version 1. tsapply validate stays authoritative: byte
    limits (maxLength counts characters), start before end, unique names and the like are
    checked by it alone. See docs/editor-and-ci.md.
    """
  static let options: [OptionSpec] = []

  init(_ arguments: ParsedArguments) throws(UsageError) {
    guard arguments.positionals.isEmpty else { throw UsageError("unexpected argument '\(arguments.positionals[0])'") }
  }

  func run(_ context: CommandContext) async throws -> ExitStatus {
    context.stdout.write(ManifestSchema.json())
    return .success
  }
}
