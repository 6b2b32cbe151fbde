import Testing
@testable import TSManifest
import TSModel
import TSTestSupport

/// The libyaml layer: node tree and positions, anchors, merge keys, duplicate keys, bounds,
/// and the encodings and layouts a manifest may arrive in.
@Suite struct YAMLReaderTests {
  static func read(_ text: String, limits: YAMLLimits = .default) -> YAMLReadResult {
    YAMLReader.read(bytes: Array(text.utf8), file: "watch.yaml", limits: limits)
  }

  static func entries(_ node: YAMLNode?) -> [YAMLMappingEntry] {
    if case .mapping(let entries)? = node?.content { return entries }
    return []
  }

  @Test func buildsATreeWithPositionsStylesAndTags() throws {
    let text = MarkedText("1️⃣a: 2️⃣'x'\n3️⃣b: 4️⃣[5️⃣1, 6️⃣!!str 2]\n")
    let result = Self.read(text.text)
    #expect(result.diagnostics == [])
    let root = try #require(result.root)
    #expect(root.position == text.position("1️⃣"))
    let entries = Self.entries(root)
    #expect(entries.map(\.keyText) == ["a", "b"])
    #expect(entries[0].value.scalar == YAMLScalar("x", style: .singleQuoted))
    #expect(entries[0].value.position == text.position("2️⃣"))
    #expect(entries[1].key.position == text.position("3️⃣"))
    #expect(entries[1].value.position == text.position("4️⃣"))
    #expect(entries[1].value.isFlow)
    guard case .sequence(let items) = entries[1].value.content else { Issue.record("not a list"); return }
    #expect(items.map(\.position) == [text.position("5️⃣"), text.position("6️⃣")])
    #expect(items[1].tag == "tag:yaml.org,2002:str")
    #expect(items[0].scalar == YAMLScalar("1", style: .plain))
  }

  @Test func aliasesExpandToTheAnchoredNode() throws {
    let root = try #require(Self.read("base: &b {x: 1}\ncopy: *b\n").root)
    let entries = Self.entries(root)
    #expect(entries[1].value.content == entries[0].value.content)
    #expect(entries[0].value.anchor == "b")
  }

  @Test func mergeKeysBringEntriesThatAreNotWrittenHere() throws {
    let text = "a: &a {x: 1, y: 2}\nb: &b {y: 3, z: 4}\nc:\n  <<: [*a, *b]\n  x: 9\n"
    let result = Self.read(text)
    #expect(result.diagnostics == [])
    let c = Self.entries(result.root)[2].value
    let merged = Self.entries(c)
    #expect(merged.map(\.keyText) == ["y", "z", "x"])
    #expect(merged.map { $0.value.scalar?.value } == ["2", "4", "9"])
    #expect(merged.map(\.isMerged) == [true, true, false])
  }

  /// A second merge key in one mapping is a duplicate key like any other (several sources are
  /// written as a list: `<<: [*a, *b]`); it was accepted silently (found by a tester).
  @Test func aSecondMergeKeyIsADuplicate() {
    let text = MarkedText("a: &a {x: 1}\nb:\n  <<: *a\n  1️⃣<<: *a\n  y: 2\n")
    let result = Self.read(text.text)
    #expect(result.diagnostics == [.error(at: text.position("1️⃣"), field: "b.<<",
      "duplicate key \"<<\": it is already defined on line 3, column 3")])
    #expect(Self.entries(Self.entries(result.root)[1].value).map(\.keyText) == ["x", "y"])
  }

  @Test func mergeKeyWithAScalarIsAnError() {
    let text = MarkedText("a:\n  <<: 1️⃣x\n")
    #expect(Self.read(text.text).diagnostics == [.error(at: text.position("1️⃣"), field: "a.<<",
      "the merge key << takes a mapping or a list of mappings (e.g. <<: *defaults), found text")])
  }

  @Test func duplicateKeysNameBothLines() {
    let text = MarkedText("contacts:\n  - name: A\n    phone: \"1\"\n    1️⃣name: B\n")
    let result = Self.read(text.text)
    #expect(result.diagnostics == [.error(at: text.position("1️⃣"), field: "contacts[0].name",
      "duplicate key \"name\": it is already defined on line 2, column 5")])
    #expect(Self.entries(result.root).count == 1)
  }

  @Test func undefinedAliasIsAnError() {
    let text = MarkedText("a: 1️⃣*nowhere\n")
    #expect(Self.read(text.text).diagnostics == [.error(at: text.position("1️⃣"), field: "a",
      "alias *nowhere refers to no anchor &nowhere defined before it")])
  }

  /// Nine levels of nine aliases: 9^9 nodes if expanded. Must stop at the node bound.
  @Test func billionLaughsStopsAtTheNodeBound() {
    var text = "l0: &l0 [x, x, x, x, x, x, x, x, x]\n"
    for level in 1...9 {
      text += "l\(level): &l\(level) [" + Array(repeating: "*l\(level - 1)", count: 9).joined(separator: ", ") + "]\n"
    }
    let result = Self.read(text)
    #expect(result.root == nil)
    #expect(result.diagnostics.map(\.message) == [
      "the document expands to more than 100000 nodes (aliases nested inside aliases, a \"billion laughs\"); reading stopped",
    ])
    // 10 + 91 + 820 + 7381 + 66430 nodes by line 5; line 6's aliases cross 100 000.
    #expect(result.diagnostics.first?.position?.line == 6)
  }

  /// A long file without aliases is not a "billion laughs": the message says how many nodes.
  @Test func aLongPlainFileIsNotCalledABillionLaughs() {
    let limits = YAMLLimits(maxNodes: 20)
    // Root mapping, key, list: 3 nodes; each contact 5 (mapping, key, value, key, value): node
    // 21 is the fourth contact's name.
    let lines = (0..<5).map { "  - {name: \($0 == 3 ? "1️⃣" : "")C\($0), phone: \"1\"}\n" }
    let text = MarkedText("contacts:\n" + lines.joined())
    #expect(Self.read(text.text, limits: limits).diagnostics == [.error(at: text.position("1️⃣"), field: "",
      "the document has more than 20 nodes (keys, values, lists and mappings), more than a manifest may hold; reading stopped")])
    let aliased = MarkedText("a: &a [x, y]\nb: [*a, 1️⃣*a, *a]\n")
    #expect(Self.read(aliased.text, limits: YAMLLimits(maxNodes: 10)).diagnostics == [.error(at: aliased.position("1️⃣"), field: "",
      "the document has more than 10 nodes (keys, values, lists and mappings, counting what aliases repeat), more than a manifest may hold; reading stopped")])
  }

  @Test func nestingDepthIsBounded() {
    let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
    let result = Self.read(deep)
    #expect(result.root == nil)
    #expect(result.diagnostics == [.error(at: SourcePosition(file: "watch.yaml", line: 1, column: 65), field: "",
                                          "nesting is deeper than 64 levels; reading stopped")])
    let fits = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
    #expect(Self.read(fits).diagnostics == [])
  }

  @Test func fileSizeIsBounded() {
    let limits = YAMLLimits(maxBytes: 100)
    let fits = "a: " + String(repeating: "x", count: 96) + "\n"
    #expect(Self.read(fits, limits: limits).diagnostics == [])
    #expect(Self.read(fits + "\n", limits: limits).diagnostics == [.error(at: SourcePosition(file: "watch.yaml", line: 1, column: 1),
      field: "", "the file is 101 bytes; a manifest may be at most 100 bytes")])
    #expect(YAMLLimits.default.maxBytes == 1_048_576)
  }

  @Test func secondDocumentIsRejected() {
    let text = MarkedText("contacts: []\n1️⃣---\ncontacts: []\n")
    #expect(Self.read(text.text).diagnostics == [.error(at: text.position("1️⃣"), field: "",
      "a second YAML document starts here; a manifest is exactly one document (remove the '---' line or move the rest to another file)")])
  }

  @Test func tabsAsIndentationAreRejected() {
    let text = MarkedText("contacts:\n1️⃣\t- {name: A, phone: \"1\"}\n# \tcomment\nx:\t1\n")
    #expect(Self.read(text.text).diagnostics == [.error(at: text.position("1️⃣"), field: "",
      "a tab is used for indentation; YAML indents with spaces only")])
  }

  @Test func bytesThatAreNotUTF8AreRejectedWithTheirPosition() {
    let bytes = Array("contacts:\n  - {name: \"Ab".utf8) + [0xFF] + Array("\", phone: \"1\"}\n".utf8)
    let result = YAMLReader.read(bytes: bytes, file: "watch.yaml")
    #expect(result.diagnostics == [.error(at: SourcePosition(file: "watch.yaml", line: 2, column: 15), field: "",
      "byte 0xFF is not valid UTF-8; save the manifest as UTF-8 text")])
  }

  /// A file saved as UTF-16 or UTF-32 (Windows Notepad's "Unicode") is named as such by its
  /// byte-order mark, not reported as a stray byte.
  @Test(arguments: [([0xFF, 0xFE], "UTF-16"), ([0xFE, 0xFF], "UTF-16"), ([0xFF, 0xFE, 0x00, 0x00], "UTF-32"), ([0x00, 0x00, 0xFE, 0xFF], "UTF-32")])
  func aFileInAnotherUnicodeEncodingIsNamed(mark: [UInt8], encoding: String) {
    let bytes = mark + Array("c\0o\0n\0".utf8)
    let result = YAMLReader.read(bytes: bytes, file: "watch.yaml")
    #expect(result.diagnostics == [.error(at: SourcePosition(file: "watch.yaml", line: 1, column: 1), field: "",
      "the file is \(encoding) text (it begins with that encoding's byte-order mark: Windows Notepad saves \"Unicode\" so); "
        + "save the manifest as UTF-8 text (in Notepad: Save As, Encoding UTF-8)")])
  }

  @Test func syntaxErrorsComeFromLibyamlWithPosition() {
    let text = MarkedText("a: b1️⃣: c\n")
    #expect(Self.read(text.text).diagnostics == [.error(at: text.position("1️⃣"), field: "",
      "invalid YAML: mapping values are not allowed in this context; a value that holds \": \" must be quoted: a: \"b: c\"")])
    let unclosed = MarkedText("a: 1️⃣[b\n")
    #expect(Self.read(unclosed.text).diagnostics == [.error(at: unclosed.position("1️⃣"), field: "",
      "invalid YAML: this flow sequence is never closed: libyaml did not find expected ',' or ']' at line 2, column 1")])
  }

  /// Indentation mistakes get libyaml's words and what they mean, with the fix (found by a
  /// tester: the bare libyaml messages gave none).
  @Test(arguments: [
    ("contacts:\n  - name: Anna\n   phone: \"+447700900123\"\n", "did not find expected '-' indicator",
     "every key of one item starts at the same column as its first key"),
    ("reminders:\n  medicine:\n    enabled: true\n     at: [\"08:00\"]\n", "mapping values are not allowed in this context", nil),
    ("contacts:\n  - {name: Anna, phone: \"1\"}\n\t\nreminders:\n  drinking: {enabled: true}\n", nil, nil),
  ] as [(String, String?, String?)])
  func indentationMistakesSayWhatToFix(yaml: String, problem: String?, hint: String?) {
    let diagnostics = Self.read(yaml).diagnostics
    #expect(diagnostics.count == 1, "\(diagnostics)")
    if let problem { #expect(diagnostics.first?.message.contains(problem) == true, "\(diagnostics)") }
    if let hint { #expect(diagnostics.first?.message.contains(hint) == true, "\(diagnostics)") }
    #expect(diagnostics.first?.message.contains("; ") == true, "a fix is given: \(diagnostics)")
  }

  /// A quote or bracket left open runs to the end of the file, where libyaml gives up; the
  /// error points where it was opened (libyaml's context mark), not at the end of the file,
  /// and says where the file ended.
  @Test(arguments: [
    ("contacts:\n  - name: Anna\n    phone: 1️⃣\"+15550100\n  - name: Bob\n    phone: +15550101\n\n\n",
     "invalid YAML: this quoted scalar is never closed: libyaml found unexpected end of stream at line 8, column 1"),
    ("contacts:\n  - 1️⃣[Anna, \"+15550100\"\n\n\n",
     "invalid YAML: this flow sequence is never closed: libyaml did not find expected ',' or ']' at line 5, column 1"),
    ("a: 1️⃣'open\n", "invalid YAML: this quoted scalar is never closed: libyaml found unexpected end of stream at line 2, column 1"),
  ])
  func anUnclosedQuoteOrBracketIsReportedWhereItOpens(yaml: String, message: String) {
    let text = MarkedText(yaml)
    #expect(Self.read(text.text).diagnostics == [.error(at: text.position("1️⃣"), field: "", message)])
  }

  /// A quote left open on its line, closed by a quote on a later line: libyaml stumbles there,
  /// in words about indentation; the error points at the open quote and says to close it
  /// (fresh-eyes finding: "a line is indented differently from the keys above it" for a line
  /// indented right). A line whose quotes all close, or a quote inside a plain value, is no such
  /// quote (the indentation hint stays).
  @Test(arguments: [
    ("reminders:\n  custom:\n    - name: Pills\n      notes: 1️⃣\"Take pills\n      at: [\"08:00\"]\n", 5),
    ("contacts:\n  - name: Anna\n    phone: 1️⃣\"+15550100\n  - name: Bob\n    phone: \"+15550101\"\n", 5),
  ])
  func aQuoteLeftOpenIsReportedWhereItOpens(yaml: String, stumbled: Int) {
    let text = MarkedText(yaml)
    let diagnostics = Self.read(text.text).diagnostics
    #expect(diagnostics.count == 1 && diagnostics.first?.position == text.position("1️⃣"), "\(diagnostics)")
    let at = text.position("1️⃣")
    #expect(diagnostics.first?.message.hasSuffix("; the quote at line \(at.line), column \(at.column) is not closed on its line, so YAML reads "
      + "the lines after it as part of that value and stumbles at line \(stumbled): close the quote on line \(at.line)") == true, "\(diagnostics)")
  }

  @Test(arguments: [
    ("  notes: \"Take pills", 10), ("  - 'open", 5), ("a: [\"x\", \"y", 10),
    ("  notes: \"closed\"", nil), ("  notes: it's fine", nil), ("  name: 'it''s' # a \"quote", nil), ("a: \"esc \\\" still open", 4),
  ] as [(String, Int?)])
  func anUnclosedQuoteOnALine(line: String, column: Int?) {
    #expect(YAMLErrorHint.unclosedQuote(line: line) == column)
  }

  /// A JSON-style surrogate pair is not a YAML escape: libyaml's error gets the spelling YAML
  /// takes (found by a tester, who pasted an emoji escaped by a JSON tool).
  @Test func aSurrogatePairEscapeIsExplained() {
    let messages = Self.read("a: \"\\ud83d\\ude00\"\n").diagnostics.map(\.message)
    #expect(messages.count == 1)
    #expect(messages.first?.hasPrefix("invalid YAML: found invalid Unicode character escape code") == true, "\(messages)")
    #expect(messages.first?.hasSuffix("write \\U0001F600 (eight hex digits) or the character itself, not a \\uD83D\\uDE00 surrogate pair") == true, "\(messages)")
  }

  @Test func countEventsScansWithoutBuilding() {
    // stream, document, mapping start, 2 scalars, mapping end, document end, stream end
    #expect(YAMLReader.countEvents(bytes: Array("a: 1\n".utf8)) == 8)
    #expect(YAMLReader.countEvents(bytes: Array("a: [\n".utf8)) == nil)
  }
}
