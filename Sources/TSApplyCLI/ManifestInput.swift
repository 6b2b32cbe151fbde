import Foundation
import TSManifest
import TSModel
import TSPlan

/// Reading a manifest for a command and showing its diagnostics; shared by `validate`, `plan`
/// and `apply`.
public enum ManifestInput {
  /// The name positions carry for a manifest read from standard input.
  public static let standardInputName = "-"

  /// Loads the manifest `file` for a command: `-` reads all of standard input
  /// (`context.readAll`); any other path is resolved against `context.currentDirectory` and
  /// named in diagnostics as the user wrote it. Never throws: an unreadable file is an error
  /// diagnostic in the result.
  public static func load(_ file: String, context: CommandContext) -> ManifestLoadResult {
    if file == standardInputName {
      return ManifestLoader.load(bytes: context.readAll(), file: standardInputName)
    }
    return ManifestLoader.load(path: context.resolve(file), displayName: file)
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
  /// With `redact` (`--redact`), phone-like text in messages and echoed source lines is masked
  /// (`PhoneRedaction.redactPhoneLike`: all digits but the last two become `*`).
  public static func printDiagnostics(_ diagnostics: [Diagnostic], source: [UInt8]?, json: Bool, redact: Bool,
                                      context: CommandContext) {
    let mask = { (text: String) -> String in redact ? PhoneRedaction.redactPhoneLike(text) : text }
    let sorted = (diagnostics.filter { $0.severity == .error }.sortedByPosition()
      + diagnostics.filter { $0.severity == .warning }.sortedByPosition()).map { diagnostic in
        var masked = diagnostic
        masked.message = mask(diagnostic.message)
        masked.field = mask(diagnostic.field)  // an unknown key is user text: contacts[0].phone +15550100
        return masked
      }
    if json {
      let errors = sorted.filter { $0.severity == .error }, warnings = sorted.filter { $0.severity == .warning }
      context.stdout.write(DiagnosticsJSON(errors: errors, warnings: warnings).encoded() + "\n")
      return
    }
    let lines = source.map(sourceLines) ?? []
    var text = ""
    for diagnostic in sorted {
      text += ControlCharacters.escaped(diagnostic.description) + "\n"
      if let position = diagnostic.position, position.line >= 1, position.line <= lines.count {
        let excerpt = SourceExcerpt(line: lines[position.line - 1], column: position.column)
        text += ControlCharacters.escaped(mask(excerpt.line)) + "\n" + excerpt.caretLine + "\n"
      }
    }
    context.stderr.write(text)
  }

  /// The source split into lines without line ends (LF or CRLF) and without a BOM.
  private static func sourceLines(_ bytes: [UInt8]) -> [String] {
    var text = String(decoding: bytes, as: UTF8.self)
    if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
    return text.split(separator: "\n", omittingEmptySubsequences: false).map {
      String($0.hasSuffix("\r") ? $0.dropLast() : $0)
    }
  }
}

/// The JSON shape of `tsapply validate --json`.
struct DiagnosticsJSON: Encodable {
  struct Entry: Encodable {
    var severity: String
    var file: String?
    var line: Int?
    var column: Int?
    var field: String
    var message: String

    init(_ diagnostic: Diagnostic) {
      severity = diagnostic.severity.rawValue
      file = diagnostic.position?.file
      line = diagnostic.position?.line
      column = diagnostic.position?.column
      field = diagnostic.field
      message = diagnostic.message
    }
  }

  var format_version = "1"
  var valid: Bool
  var errors: [Entry]
  var warnings: [Entry]

  init(errors: [Diagnostic], warnings: [Diagnostic]) {
    valid = errors.isEmpty
    self.errors = errors.map(Entry.init)
    self.warnings = warnings.map(Entry.init)
  }

  func encoded() -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    guard let data = try? encoder.encode(self) else { return "{}" }
    return String(decoding: data, as: UTF8.self)
  }
}
