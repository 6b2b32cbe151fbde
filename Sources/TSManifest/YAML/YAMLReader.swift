internal import CYaml
import TSModel

/// Reads one YAML document with libyaml into a `YAMLNode` tree. The only code that touches C.
///
/// libyaml does all parsing; this wrapper owns the parser, runs the whole parse inside one
/// scoped access to the input bytes, hands every event's data to `YAMLComposer` as Swift values
/// at once and deletes the event in a `defer`. Building the tree (aliases, merge keys, duplicate
/// keys, bounds) is done by `YAMLComposer` in Swift.
public enum YAMLReader {
  /// Reads `bytes` (UTF-8, optional BOM, LF or CRLF line ends) as one YAML document.
  ///
  /// Never throws and never crashes on bad input: every problem becomes an error `Diagnostic`
  /// naming `file`, line and column. Fatal problems (not UTF-8, tabs as indentation, larger than
  /// `limits.maxBytes`, a syntax error, more than one document, nesting deeper than
  /// `limits.maxDepth`, alias expansion beyond `limits.maxNodes`) leave `root` nil; duplicate
  /// keys and bad merge keys are reported beside a usable tree. An empty document gives a nil
  /// root and no diagnostics (the caller decides what empty means).
  ///
  /// `capturesContactLists` (for `ManifestLoader`, which decodes them) leaves contact lists of
  /// the plain shape out of the tree: each is an empty sequence, and its items are in
  /// `capturedContactLists` (`ContactListCapture.swift`); a list of another shape makes it read
  /// the document again without capturing.
  public static func read(bytes: [UInt8], file: String, limits: YAMLLimits = .default,
                          capturesContactLists: Bool = false) -> YAMLReadResult {
    read(bytes: bytes, file: file, limits: limits, capturesContactLists: capturesContactLists, contactSink: nil)
  }

  /// `read`, handing the items of captured contact lists to `contactSink` as they are read
  /// instead of keeping them (`CapturedContactSink`); a capture that is abandoned makes it read
  /// the document again without capturing, after `contactSink.reset()`.
  static func read(bytes: [UInt8], file: String, limits: YAMLLimits = .default, capturesContactLists: Bool,
                   contactSink: CapturedContactSink?) -> YAMLReadResult {
    let source = YAMLSourceCheck.strippingBOM(bytes)
    let problems = YAMLSourceCheck.problems(in: source, file: file, limits: limits)
    if !problems.isEmpty { return YAMLReadResult(root: nil, diagnostics: problems) }
    if source.isEmpty { return YAMLReadResult(root: nil, diagnostics: []) }
    var composer = YAMLComposer(file: file, limits: limits, capturesContactLists: capturesContactLists)
    composer.sourceCount = source.count
    composer.contactSink = contactSink
    let failure = parse(source, file: file) { event in
      do throws(YAMLComposeError) {
        try composer.take(event, file: file)
        return !composer.mustReadAgain
      } catch {
        composer.diagnostics.append(error.diagnostic)
        return false
      }
    }
    if composer.mustReadAgain {
      contactSink?.reset()
      return read(bytes: bytes, file: file, limits: limits, capturesContactLists: false, contactSink: nil)
    }
    if let failure {
      composer.diagnostics.append(failure)
      return YAMLReadResult(root: nil, diagnostics: composer.diagnostics)
    }
    var result = YAMLReadResult(root: composer.isFinished ? composer.root : nil, diagnostics: composer.diagnostics)
    if result.root != nil { result.capturedContactLists = composer.capturedContactLists }
    return result
  }

  /// Counts libyaml's parser events for `bytes` and builds nothing: the baseline for the
  /// `validate` benchmark (a plain libyaml event scan). Returns `nil` on a syntax error.
  public static func countEvents(bytes: [UInt8]) -> Int? {
    var count = 0
    let failure = parse(YAMLSourceCheck.strippingBOM(bytes), file: "-") { _ in
      count += 1
      return true
    }
    return failure == nil ? count : nil
  }

  /// Runs libyaml over `bytes`, handing each event to `handle` until the stream ends or `handle`
  /// returns false; the event is deleted after `handle` returns. Returns libyaml's error as a
  /// diagnostic, or nil.
  private static func parse(_ bytes: [UInt8], file: String, _ handle: (borrowing yaml_event_t) -> Bool) -> Diagnostic? {
    guard !bytes.isEmpty else { return nil }
    var parser = yaml_parser_t()
    guard yaml_parser_initialize(&parser) == 1 else {
      return .error(at: nil, field: "", "libyaml could not allocate a parser")
    }
    defer { yaml_parser_delete(&parser) }
    return bytes.withUnsafeBufferPointer { buffer -> Diagnostic? in
      guard let base = buffer.baseAddress else { return nil }
      yaml_parser_set_input_string(&parser, base, buffer.count)
      while true {
        var event = yaml_event_t()
        guard yaml_parser_parse(&parser, &event) == 1 else {
          return Diagnostic(libyamlParser: parser, file: file, source: bytes)
        }
        defer { yaml_event_delete(&event) }
        let isEnd = event.type == YAML_STREAM_END_EVENT
        if !handle(event) || isEnd { return nil }
      }
    }
  }
}

/// Converts a libyaml mark (0-based line and column) to a 1-based `SourcePosition`; the one
/// place this conversion happens.
private func sourcePosition(_ mark: yaml_mark_t, file: String) -> SourcePosition {
  SourcePosition(file: file, line: Int(mark.line) + 1, column: Int(mark.column) + 1)
}

/// Copies a NUL-terminated libyaml string (tags, anchors) into a Swift string.
private func copyString(_ pointer: UnsafeMutablePointer<yaml_char_t>?) -> String? {
  guard let pointer else { return nil }
  return String(cString: pointer)
}

extension YAMLComposer {
  /// Hands one libyaml event to the composer, copying into Swift values only the union member
  /// of its type.
  fileprivate mutating func take(_ event: borrowing yaml_event_t, file: String) throws(YAMLComposeError) {
    if capture.isActive, try takeCaptured(event) { return }
    let start = sourcePosition(event.start_mark, file: file)
    switch event.type {
    case YAML_SCALAR_EVENT:
      let data = event.data.scalar
      let text = data.value.map { String(decoding: UnsafeBufferPointer(start: $0, count: data.length), as: UTF8.self) } ?? ""
      try scalar(YAMLScalar(text, style: YAMLScalar.Style(data.style)), tag: copyString(data.tag),
                 anchor: copyString(data.anchor), start: start, end: sourcePosition(event.end_mark, file: file))
    case YAML_MAPPING_START_EVENT:
      let data = event.data.mapping_start
      try collectionStart(isMapping: true, tag: copyString(data.tag), anchor: copyString(data.anchor),
                          isFlow: data.style == YAML_FLOW_MAPPING_STYLE, at: start)
    case YAML_SEQUENCE_START_EVENT:
      let data = event.data.sequence_start
      try collectionStart(isMapping: false, tag: copyString(data.tag), anchor: copyString(data.anchor),
                          isFlow: data.style == YAML_FLOW_SEQUENCE_STYLE, at: start,
                          bytesLeft: max(0, sourceCount - Int(event.start_mark.index)))
    case YAML_MAPPING_END_EVENT, YAML_SEQUENCE_END_EVENT:
      collectionEnd(at: sourcePosition(event.end_mark, file: file))
    case YAML_ALIAS_EVENT:
      try alias(copyString(event.data.alias.anchor) ?? "", start: start, end: sourcePosition(event.end_mark, file: file))
    case YAML_DOCUMENT_START_EVENT:
      try documentStart(at: start)
    case YAML_STREAM_END_EVENT:
      streamEnd()
    default:
      break  // stream start, document end (and YAML_NO_EVENT, never produced by a successful parse)
    }
  }
}

extension Diagnostic {
  /// Turns libyaml's error state (`problem`, `problem_mark`, `context`, `context_mark`) into one
  /// error diagnostic, e.g. `watch.yaml:3:5: error: invalid YAML: mapping values are not allowed
  /// in this context`. Reader errors carry a byte offset instead of a mark; it is converted
  /// with `source`.
  /// What libyaml's context names when a quote or bracket is left open (`while scanning a
  /// quoted scalar`, `while parsing a flow sequence`).
  private static let unclosed = ["quoted scalar", "flow sequence", "flow mapping"]

  fileprivate init(libyamlParser parser: yaml_parser_t, file: String, source: [UInt8]) {
    let problem = parser.problem.map { String(cString: $0) } ?? "unknown libyaml error"
    var message = "invalid YAML: \(problem)"
    var position: SourcePosition
    if parser.error == YAML_READER_ERROR {
      position = YAMLSourceCheck.position(ofByte: Int(parser.problem_offset), in: source, file: file)
    } else {
      position = sourcePosition(parser.problem_mark, file: file)
    }
    let context = parser.context.map { String(cString: $0) }
    let opened = context.flatMap { text in Self.unclosed.first { text.hasSuffix($0) } }
    if parser.error != YAML_READER_ERROR, Int(parser.problem_mark.index) >= source.count, let opened {
      // A quote or bracket left open runs to the end of the file, where libyaml gives up: the
      // place to fix is where it opened (the context mark), not the end of the file.
      let end = position
      position = sourcePosition(parser.context_mark, file: file)
      message = "invalid YAML: this \(opened) is never closed: libyaml \(problem) at line \(end.line), column \(end.column)"
    } else if let context {
      let where_ = sourcePosition(parser.context_mark, file: file)
      message += " (\(context) at line \(where_.line), column \(where_.column))"
    }
    if let line = YAMLSourceCheck.line(position.line, in: source), let dash = MistakeHints.dashWithoutSpace(line: line) {
      // `-{name: Anna, …}`: the dash is the mistake, whatever libyaml stumbled on after it.
      position.column = dash.column
      message += "; a list item needs a space after the dash: write \(dash.fixed)"
    } else if ["mapping values are not allowed in this context", "did not find expected ',' or '}'"].contains(problem),
       let line = YAMLSourceCheck.line(position.line, in: source),
       let hint = YAMLErrorHint.quoteValue(line: line, column: position.column) {
      message += "; " + hint
    } else if problem == "mapping values are not allowed in this context", let line = YAMLSourceCheck.line(position.line, in: source),
              let above = (1..<max(position.line, 1)).reversed().lazy.compactMap({ YAMLSourceCheck.line($0, in: source) })
                .first(where: { !$0.allSatisfy(\.isWhitespace) }),
              let hint = YAMLErrorHint.overIndented(line: line, above: above) {
      message += "; " + hint
    } else if let line = YAMLSourceCheck.line(position.line, in: source), line.contains("\t"), line.allSatisfy({ $0 == " " || $0 == "\t" }) {
      message += "; the line holds only a tab: YAML allows no tab where a line's indentation is read, even on an empty line; delete it"
    }
    // A quoted value left open on a line above runs on into the lines after it, where libyaml
    // stumbles: the place to fix is that quote, not the indentation the error seems to be about.
    // It is the nearest line above with a quote in it (the lines it runs on over hold none).
    var openQuote: (line: Int, column: Int)?
    if ["did not find expected key", "did not find expected '-' indicator", "mapping values are not allowed in this context",
        "did not find expected ',' or '}'", "did not find expected ',' or ']'"].contains(problem) {
      for number in (1..<max(position.line, 1)).reversed() {
        guard let text = YAMLSourceCheck.line(number, in: source), text.contains(where: { $0 == "\"" || $0 == "'" }) else { continue }
        openQuote = YAMLErrorHint.unclosedQuote(line: text).map { (number, $0) }
        break
      }
    }
    if let openQuote {
      let stumbled = position
      position = SourcePosition(file: file, line: openQuote.line, column: openQuote.column)
      message += "; the quote at line \(openQuote.line), column \(openQuote.column) is not closed on its line, so YAML reads the lines after it "
        + "as part of that value and stumbles at line \(stumbled.line): close the quote on line \(openQuote.line)"
      self.init(.error, at: position, field: "", message)
      return
    }
    // Indentation, the mistake people make most in YAML: what libyaml's words mean, and the fix.
    switch problem {
    case "did not find expected '-' indicator":
      message += "; a line in this list is indented differently from the item above it: every key of one item starts at the same column as its first key (after \"- \"), and each new item starts with \"- \" at the column of the others"
    case "did not find expected key":
      message += "; a line is indented differently from the keys above it: put it at the same column as the key it sits beside, or two spaces further under the key it belongs to"
    case "found a tab character that violates indentation":
      message += "; YAML indents with spaces only: replace the tab (also one on an otherwise empty line) with spaces"
    default: break
    }
    if problem == "found invalid Unicode character escape code" {
      // Most often a JSON-style surrogate pair (`"\ud83d\ude00"`), which YAML does not join.
      message += "; YAML escapes name whole characters: write \\U0001F600 (eight hex digits) or the character itself, not a \\uD83D\\uDE00 surrogate pair"
    }
    self.init(.error, at: position, field: "", message)
  }
}
