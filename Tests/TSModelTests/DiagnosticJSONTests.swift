import Testing
import TSModel

/// The one JSON shape of a diagnostic: every key present, `null` where there is no position,
/// the input's name where the diagnostic names no file.
@Suite struct DiagnosticJSONTests {
  @Test(arguments: [
    (Diagnostic.warning(at: SourcePosition(file: "w.yaml", line: 3, column: 9), field: "contacts[0].name", "is long"), nil,
     JSONValue.object(["severity": .string("warning"), "file": .string("w.yaml"), "line": .integer(3), "column": .integer(9),
                       "field": .string("contacts[0].name"), "message": .string("is long")])),
    (Diagnostic.error(at: nil, field: "", "cannot read w.yaml"), "w.yaml",
     JSONValue.object(["severity": .string("error"), "file": .string("w.yaml"), "line": .null, "column": .null,
                       "field": .string(""), "message": .string("cannot read w.yaml")])),
    (Diagnostic.error(at: nil, field: "", "no input"), nil,
     JSONValue.object(["severity": .string("error"), "file": .null, "line": .null, "column": .null,
                       "field": .string(""), "message": .string("no input")])),
  ] as [(Diagnostic, String?, JSONValue)])
  func everyKeyIsPresent(_ diagnostic: Diagnostic, _ file: String?, _ expected: JSONValue) {
    #expect(JSONValue(diagnostic: diagnostic, file: file) == expected)
  }
}
