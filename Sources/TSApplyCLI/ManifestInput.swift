import Foundation
import TSApply
import TSManifest
import TSModel
import TSPlan

/// Reading a manifest for a command and showing its diagnostics; shared by `validate`, `plan`
/// and `apply`.
public enum ManifestInput {
  /// The name positions carry for a manifest read from standard input.
  public static let standardInputName = "-"

  /// Replaces the manifest at `path` (absolute) with `bytes` (`fmt`, `drift --adopt`),
  /// atomically and keeping its permission bits (0600 when they cannot be read). Through a
  /// symbolic link to its target: the atomic rename replaces the target, not the link. (A hard
  /// link is broken: the path gets a new file.)
  /// - Throws: `SecureFileError` naming the path and the system's reason.
  public static func rewrite(_ bytes: [UInt8], at path: String) throws(SecureFileError) {
    let target = SecureFile.resolvingSymlinks(path)
    var info = stat()
    let mode = stat(target, &info) == 0 ? info.st_mode & 0o777 : 0o600
    try SecureFile.write(bytes, to: target, mode: mode)
  }

  /// Where `file` is read from: `-` is standard input (`context.standardInput`); any other
  /// path is resolved against `context.currentDirectory` and named in diagnostics as the user
  /// wrote it. Every command reads its manifest (and saved plans) through the source's bounded
  /// `read`, so all of them refuse the same inputs with the same messages.
  public static func source(_ file: String, context: CommandContext) -> ManifestSource {
    file == standardInputName ? context.standardInput : .file(path: context.resolve(file), displayName: file)
  }

  /// Loads the manifest `file` for a command (`source(_:context:)`). Never throws: an
  /// unreadable file is an error diagnostic in the result.
  public static func load(_ file: String, context: CommandContext) -> ManifestLoadResult {
    let source = source(file, context: context)
    return namingSavedPlan(ManifestLoader.load(source), file: source.displayName)
  }

  /// `result` of a file that is no manifest but a saved plan (`tsapply plan -out`, also of a
  /// fleet): one error
  /// that says so and names the commands that take it, instead of the manifest's unknown keys
  /// (fresh-eyes fe96 #8: `plan p.tfplan` gave five "unknown key" errors). Else `result`.
  static func namingSavedPlan(_ result: ManifestLoadResult, file: String) -> ManifestLoadResult {
    guard result.manifest == nil, let bytes = result.source, bytes.first == UInt8(ascii: "{") else { return result }
    let kind: String
    if (try? SavedPlan.parse(bytes, path: file)) != nil {
      kind = "a saved plan (from 'tsapply plan -out')"
    } else if (try? SavedFleetPlan.parse(bytes, path: file)) != nil {
      kind = "a saved fleet plan (from 'tsapply plan --fleet … -out')"
    } else {
      return result
    }
    // Standard input: `apply -` and `show -` read a manifest there, so the advice names a file
    // (fresh-eyes fe97 #7: "apply it with 'tsapply apply -'", which gave the same advice again).
    let advice = file == "-" ? "save it to a file, then apply it with 'tsapply apply FILE' or read it with 'tsapply show FILE'"
      : "apply it with 'tsapply apply \(ShellWord.quoted(file))' or read it with 'tsapply show \(ShellWord.quoted(file))'"
    var named = result
    named.diagnostics = [.error(at: SourcePosition(file: file, line: 1, column: 1), field: "", "this is \(kind), not a manifest: \(advice)")]
    return named
  }

  /// The message for a manifest that cannot be read, for commands that stop with `Error: …`:
  /// the reader's message, and for a missing default `watch.yaml` where to point instead.
  static func failureMessage(_ problem: ManifestReadError, command: String) -> String {
    guard problem.displayName == ManifestArgument.defaultFile, problem.reason == .notFound else { return problem.description }
    return problem.description + " (give the manifest's path, e.g. 'tsapply \(command) examples/watch.yaml')"
  }

  /// Prints `diagnostics`: errors first, then warnings, each group sorted by position.
  ///
  /// Human form (to standard error): one compiler-style line per diagnostic
  /// (`watch.yaml:12:9: error: field: message`), followed by the source line and a caret under
  /// the column when `source` holds that line. A source line longer than
  /// `SourceExcerpt.maxWidth` characters is shown as a window around the column, with `…` where
  /// it is cut; control characters in messages are escaped (`ControlCharacters`). JSON form (to
  /// standard output): one object with `format_version`, `valid`, `errors` and `warnings` (each
  /// with file, line, column, field, message), keys sorted.
  ///
  /// With `redact` (`--redact`), phones in messages and echoed source lines are masked (all
  /// digits but the last two become `*`): every phone the source may hold
  /// (`PhoneCandidates`) by its digits, whatever separates them
  /// (`PhoneRedaction.KnownPhones`), and any other phone-like text
  /// (`PhoneRedaction.redactPhoneLike`). A source line is masked whole before it is cut to a
  /// window, so a phone at the window's edge is masked too.
  ///
  /// `file` names the input for the JSON entries of diagnostics without a position (a file that
  /// cannot be read): every entry carries `file`, and `line` and `column` (`null` without a
  /// position).
  public static func printDiagnostics(_ diagnostics: [Diagnostic], source: [UInt8]?, json: Bool, redact: Bool,
                                      context: CommandContext, file: String? = nil) {
    printDiagnostics(diagnostics, sources: source.map { [$0] } ?? [], json: json, redact: redact, context: context,
                     file: file) { _ in source }
  }

  /// As `printDiagnostics(_:source:json:redact:context:)` for diagnostics pointing into several
  /// files (a fleet's manifests and its defaults): each source line comes from the bytes that
  /// `sources` holds for the file its position names, and the phones of every file are masked.
  /// `file` names the input of diagnostics without a position in JSON (the fleet file).
  public static func printDiagnostics(_ diagnostics: [Diagnostic], sources: [String: [UInt8]], json: Bool, redact: Bool,
                                      context: CommandContext, file: String? = nil) {
    printDiagnostics(diagnostics, sources: Array(sources.values), json: json, redact: redact, context: context,
                     file: file) { sources[$0] }
  }

  private static func printDiagnostics(_ diagnostics: [Diagnostic], sources: [[UInt8]], json: Bool, redact: Bool,
                                       context: CommandContext, file: String?, sourceOf: (String) -> [UInt8]?) {
    let known = PhoneRedaction.KnownPhones(redact && !diagnostics.isEmpty ? sources.reduce(into: Set<String>()) { $0.formUnion(PhoneCandidates.find(in: $1)) } : [])
    let mask = { (text: String) -> String in redact ? PhoneRedaction.redactPhoneLike(known.redact(text)) : text }
    let sorted = (diagnostics.filter { $0.severity == .error }.sortedByPosition()
      + diagnostics.filter { $0.severity == .warning }.sortedByPosition()).map { diagnostic in
        var masked = diagnostic
        masked.message = mask(diagnostic.message)
        masked.field = mask(diagnostic.field)  // an unknown key is user text: contacts[0].phone +15550100
        return masked
      }
    if json {
      let errors = sorted.filter { $0.severity == .error }, warnings = sorted.filter { $0.severity == .warning }
      context.stdout.write(DiagnosticsJSON.encoded(errors: errors, warnings: warnings, file: file) + "\n")
      return
    }
    if sorted.isEmpty { return }
    var split: [String: [String]] = [:]
    // Each line shown is masked and split into scalars once, however many diagnostics point
    // into it (a minified manifest can hold thousands on one line).
    var shown: [String: [Int: [Unicode.Scalar]]] = [:]
    var text = ""
    for diagnostic in sorted {
      text += ControlCharacters.escaped(diagnostic.description) + "\n"
      guard let position = diagnostic.position else { continue }
      let lines = split[position.file] ?? sourceOf(position.file).map(sourceLines) ?? []
      split[position.file] = lines
      if position.line >= 1, position.line <= lines.count {
        // Masking keeps every character's place (a digit becomes one `*`), so the caret still fits.
        let scalars = shown[position.file]?[position.line] ?? Array(mask(lines[position.line - 1]).unicodeScalars)
        shown[position.file, default: [:]][position.line] = scalars
        let excerpt = SourceExcerpt(scalars: scalars, column: position.column)
        text += ControlCharacters.escaped(excerpt.line) + "\n" + excerpt.caretLine + "\n"
      }
    }
    context.stderr.write(text)
  }

  /// The source split into lines without line ends and without a BOM, at the line breaks
  /// libyaml counts lines by (YAML 1.1's: LF, CRLF, CR, U+0085, U+2028, U+2029), so a
  /// diagnostic's line number finds its line in a file saved with CRLF or CR line ends too.
  /// A file in UTF-16 or UTF-32 (a byte-order mark FF FE, FE FF or 00 00 FE FF) has no line
  /// worth echoing: none, rather than its bytes as mojibake.
  private static func sourceLines(_ bytes: [UInt8]) -> [String] {
    if bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0x00, 0x00, 0xFE, 0xFF]) { return [] }
    var text = String(decoding: bytes, as: UTF8.self)
    if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
    return text.split(omittingEmptySubsequences: false, whereSeparator: lineBreaks.contains).map(String.init)
  }

  /// The line breaks of YAML 1.1 ("\r\n" is one `Character`).
  private static let lineBreaks: Set<Character> = ["\n", "\r\n", "\r", "\u{85}", "\u{2028}", "\u{2029}"]
}

/// The JSON shape of `tsapply validate --json` (and of `plan`, `apply` and `drift` with
/// `--json` when the manifest cannot be used): `{format_version, valid, errors, warnings}`, each
/// entry in the one diagnostic shape (`JSONValue(diagnostic:file:)`).
enum DiagnosticsJSON {
  /// The document for `errors` and `warnings`; `file` is the input of those without a position.
  static func encoded(errors: [Diagnostic], warnings: [Diagnostic], file: String? = nil) -> String {
    canonicalJSON(JSONValue.object([
      "format_version": .string("1"),
      "valid": .bool(errors.isEmpty),
      "errors": .array(errors.map { JSONValue(diagnostic: $0, file: file) }),
      "warnings": .array(warnings.map { JSONValue(diagnostic: $0, file: file) }),
    ]), pretty: true)
  }
}
