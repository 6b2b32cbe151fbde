import Testing
import TSManifest
import TSModel
import TSTestSupport

/// Loads `text` as watch.yaml.
func load(_ text: String, file: String = "watch.yaml") -> ManifestLoadResult {
  ManifestLoader.load(bytes: Array(text.utf8), file: file)
}

/// One table row: a manifest with the marker 1️⃣ where the single expected diagnostic points,
/// its field and message; `message == nil` means the manifest is valid with no diagnostics.
struct DiagnosticCase: Sendable, CustomTestStringConvertible {
  var marked: String
  var field: String
  var message: String?
  var severity: Diagnostic.Severity = .error

  var testDescription: String { "\(message == nil ? "valid" : "invalid"): \(marked.debugDescription)" }

  /// A valid row.
  static func valid(_ marked: String) -> DiagnosticCase { DiagnosticCase(marked: marked, field: "", message: nil) }

  /// Loads the row's manifest and checks its diagnostics exactly (position, field, message).
  func check(sourceLocation: SourceLocation = #_sourceLocation) {
    let text = MarkedText(marked)
    let result = load(text.text)
    if let message {
      let expected = Diagnostic(severity, at: text.position("1️⃣"), field: field, message)
      #expect(result.diagnostics == [expected], sourceLocation: sourceLocation)
      #expect((result.manifest == nil) == (severity == .error), sourceLocation: sourceLocation)
    } else {
      #expect(result.diagnostics == [], sourceLocation: sourceLocation)
      #expect(result.manifest != nil, sourceLocation: sourceLocation)
    }
  }
}
