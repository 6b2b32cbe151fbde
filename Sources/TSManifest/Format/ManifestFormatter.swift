import TSModel

/// What formatting one manifest produced.
public struct ManifestFormatResult: Sendable {
  /// The formatted bytes; `nil` when the manifest has errors (it is then left as it is).
  public var formatted: [UInt8]?
  /// The manifest's diagnostics (errors when `formatted` is `nil`; warnings otherwise).
  public var diagnostics: [Diagnostic]
  /// Whether `formatted` differs from the input.
  public var isChanged: Bool
}

/// `tsapply fmt`: puts a manifest in canonical form (`CanonicalForm`: times `"HH:MM"`, phones
/// quoted, booleans `true`/`false`, one spelling of durations and repeat rules, the reference's
/// key order) without
/// dropping or moving a comment.
///
/// libyaml's event stream carries no comments, so the manifest is never re-emitted. Instead the
/// source text is edited in place, using the start and end positions `YAMLReader` keeps:
/// 1. Each scalar whose spelling is not canonical is replaced at its source range (anchors and
///    tags before it stay). Comments and blank lines lie outside scalar ranges, so they stay. A
///    scalar that is reached more than once through aliases is rewritten only when every use
///    asks for the same new text (a scalar used both as a time and as a name is left alone, so
///    rewriting never changes what an alias means).
/// 2. A mapping's entries are put in canonical order only when moving them cannot move a
///    comment: a block mapping whose entries are separated by exactly one line break and the
///    indentation (no comment beside or between them, no blank line) with no comment inside
///    them, or a flow mapping on one line; and no anchor, alias or merge key among them. Any
///    other mapping keeps its order.
/// The BOM and the file's line ends (CRLF) are kept. Formatting twice changes nothing the second
/// time, and the formatted manifest decodes to the same `Manifest` apart from positions.
public enum ManifestFormatter {
  /// Formats `bytes` (a manifest named `file` in diagnostics). A manifest with errors is not
  /// formatted: `formatted` is `nil` and `diagnostics` says why.
  public static func format(bytes: [UInt8], file: String) -> ManifestFormatResult {
    let loaded = ManifestLoader.load(bytes: bytes, file: file, resolvesReferences: false)
    let read = YAMLReader.read(bytes: bytes, file: file)
    guard loaded.manifest != nil, let root = read.root else {
      return ManifestFormatResult(formatted: nil, diagnostics: loaded.diagnostics, isChanged: false)
    }
    let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
    let hasBOM = bytes.starts(with: bom)
    let source = SourceText(String(decoding: hasBOM ? Array(bytes.dropFirst(3)) : bytes, as: UTF8.self))
    func formatted(keeping kept: Set<SourcePosition>) -> [UInt8] {
      var pass = FormatPass(source: source, file: file, kept: kept)
      pass.propose(root, role: .root)
      var edits = pass.approvedEdits()
      pass.reorder(root, role: .root, edits: &edits)
      // Comment columns are kept last, over the final edits (reorders included), so no edit is
      // widened before a reorder has to replace the text around it.
      let text = source.text(0..<source.scalars.count, applying: pass.keepingCommentColumns(edits))
      return (hasBOM ? bom : []) + Array(text.utf8)
    }
    var output = formatted(keeping: [])
    // fmt never silences a warning: a warning that asks what was meant (`at: [1200]`: 20:00, or
    // was 12:00 meant? `every: 2`: minutes, or hours?) would disappear if its scalar were written
    // in canonical form ("20:00", 2m), answering the question silently (and a pre-commit hook
    // would lock the answer in). The scalars of warnings the formatted text lost stay as written.
    let lost = lostWarnings(loaded.diagnostics, ManifestLoader.load(bytes: output, file: file, resolvesReferences: false).diagnostics)
    if output != bytes, !lost.isEmpty {
      output = formatted(keeping: Set(lost.compactMap(\.position)))
    }
    return ManifestFormatResult(formatted: output, diagnostics: loaded.diagnostics, isChanged: output != bytes)
  }

  /// The warnings of `before` that `after` no longer has, compared by field (positions and the
  /// line numbers in messages move when keys are reordered).
  static func lostWarnings(_ before: [Diagnostic], _ after: [Diagnostic]) -> [Diagnostic] {
    var remaining = Dictionary(after.filter { $0.severity == .warning }.map { ($0.field, 1) }, uniquingKeysWith: +)
    return before.filter { warning in
      guard warning.severity == .warning else { return false }
      guard let count = remaining[warning.field], count > 0 else { return true }
      remaining[warning.field] = count - 1
      return false
    }
  }
}

/// One formatting run over a manifest's tree: proposes scalar rewrites, then reorders keys.
struct FormatPass {
  let source: SourceText
  private var context: DecodingContext
  /// The rewrites proposed for each source range; `nil` in the set means "keep as written".
  private var proposals: [Range<Int>: Set<String?>] = [:]
  /// Positions of scalars that stay as written (the scalars of warnings that formatting would
  /// silence; `ManifestFormatter.format`).
  private let kept: Set<SourcePosition>

  init(source: SourceText, file: String, kept: Set<SourcePosition> = []) {
    self.source = source
    self.kept = kept
    context = DecodingContext(file: file)
  }

  /// The source range of `node`'s own text: after `&anchor` / `!tag`, and without trailing
  /// spaces and line breaks (libyaml ends a block scalar `|` / `>` after the blank lines and
  /// indentation that follow it, which are not the scalar's to replace).
  func range(of node: YAMLNode) -> Range<Int> {
    let start = source.offset(node.position)
    var end = max(source.offset(node.endPosition), start)
    while end > start, source.scalars[end - 1].properties.isWhitespace { end -= 1 }
    return source.contentStart(start, end: end)..<end
  }

  // MARK: Scalar spellings

  /// Walks `node` in `role`, proposing canonical spellings for times, durations, phones and
  /// repeat rules, and "keep" for every other scalar (so aliases shared with text are seen).
  mutating func propose(_ node: YAMLNode, role: FormatRole) {
    switch role {
    case .time:
      propose(node, context.time(node, path: "").map { "\"\(CanonicalForm.time($0))\"" })
    case .duration:
      propose(node, context.duration(node, path: "").map(CanonicalForm.duration))
    case .phone:
      propose(node, node.scalar.map { "\"\($0.value)\"" })
    case .repeatRule:
      proposeRepeat(node)
    case _ where role == .boolean || (role == .lunchBreak && node.scalar != nil):
      // Only a valid manifest is formatted, so a boolean's node is a scalar here.
      propose(node, context.bool(node, path: "").map { String($0) })
    case .keep:
      for scalar in node.subtree where scalar.scalar != nil { propose(scalar, nil) }
    default:
      for child in role.children(of: node) { propose(child.node, role: child.role) }
    }
  }

  private mutating func proposeRepeat(_ node: YAMLNode) {
    switch node.content {
    case .scalar(let scalar):
      propose(node, RepeatDaysRule.check(word: Located(scalar.value, at: node.position), field: "", into: &context.diagnostics)?.description)
    case .sequence(let items) where node.isFlow && node.position.line == node.endPosition.line:
      let words = items.map { Located($0.scalar?.value ?? "", at: $0.position) }
      propose(node, RepeatDaysRule.check(days: words, listPosition: node.position, field: "", into: &context.diagnostics)?.description)
    case .sequence(let items):
      for item in items { propose(item, item.scalar.flatMap { CanonicalForm.dayName($0.value) }) }
    case .mapping:
      break
    }
  }

  private mutating func propose(_ node: YAMLNode, _ replacement: String?) {
    proposals[range(of: node), default: []].insert(kept.contains(node.position) ? nil : replacement)
  }

  /// The rewrites every use agrees on that change the text, sorted; an edit overlapping an
  /// earlier, wider one is dropped.
  func approvedEdits() -> [TextEdit] {
    let agreed = proposals.compactMap { range, texts -> TextEdit? in
      guard texts.count == 1, let only = texts.first, let text = only, text != source.text(range) else { return nil }
      return TextEdit(range: range, replacement: text)
    }.sorted { ($0.range.lowerBound, -$0.range.upperBound) < ($1.range.lowerBound, -$1.range.upperBound) }
    var result: [TextEdit] = []
    for edit in agreed where result.last.map({ $0.range.upperBound <= edit.range.lowerBound }) ?? true {
      result.append(edit)
    }
    return result
  }

  /// Keeps a comment beside edited text in its column: the spaces before the `#` grow or shrink
  /// by how far the edits on that line moved the text after them (at least one space stays).
  /// `edits` must be sorted and non-overlapping; the result is too (only the last edit on a
  /// line is widened, up to the `#` of the comment on that line).
  func keepingCommentColumns(_ edits: [TextEdit]) -> [TextEdit] {
    var result = edits
    var shift = 0
    for index in result.indices {
      let edit = result[index]
      if index == 0 || !onSameLine(result[index - 1].range.upperBound, edit.range.lowerBound) { shift = 0 }
      shift = shiftAfter(edit, shiftBefore: shift)
      let lastOnLine = index + 1 == result.count || !onSameLine(edit.range.upperBound, result[index + 1].range.lowerBound)
      guard lastOnLine, shift != 0, let hash = commentStart(after: edit.range.upperBound) else { continue }
      var spacesStart = hash
      while spacesStart > edit.range.upperBound, source.scalars[spacesStart - 1] == " " { spacesStart -= 1 }
      let spaces = hash - spacesStart
      guard spaces > 0 else { continue }
      let padding = String(repeating: " ", count: max(1, spaces - shift))
      result[index] = TextEdit(range: edit.range.lowerBound..<hash,
                               replacement: edit.replacement + source.text(edit.range.upperBound..<spacesStart) + padding)
    }
    return result
  }

  /// The offset of the `#` that starts a comment later on the line that `offset` is on (which
  /// lies outside any quoted scalar): the first `#` after a space or tab outside quotes.
  private func commentStart(after offset: Int) -> Int? {
    var index = offset
    var quote: Unicode.Scalar?
    while index < source.scalars.count {
      let scalar = source.scalars[index]
      if SourceText.isLineBreak(scalar) { return nil }
      if let open = quote {
        if open == "\"" && scalar == "\\" { index += 1 } else if scalar == open { quote = nil }
      } else if scalar == "\"" || scalar == "'" {
        quote = scalar
      } else if scalar == "#", index > 0, source.scalars[index - 1] == " " || source.scalars[index - 1] == "\t" {
        return index
      }
      index += 1
    }
    return nil
  }

  /// How many columns the text right after `edit` moves, given that the text at its start had
  /// moved `shiftBefore` columns (a replacement spanning lines sets its last line's width).
  private func shiftAfter(_ edit: TextEdit, shiftBefore: Int) -> Int {
    let replacement = Array(edit.replacement.unicodeScalars)
    let oldColumn = column(of: edit.range.upperBound)
    if let lastBreak = replacement.lastIndex(where: { $0 == "\n" || $0 == "\r" }) {
      return (replacement.count - lastBreak - 1) - oldColumn
    }
    return column(of: edit.range.lowerBound) + shiftBefore + replacement.count - oldColumn
  }

  /// The 0-based column of `offset` (scalars since the line's start).
  private func column(of offset: Int) -> Int {
    var start = offset
    while start > 0, !SourceText.isLineBreak(source.scalars[start - 1]) { start -= 1 }
    return offset - start
  }

  /// Whether no line break lies between offsets `a` and `b`.
  private func onSameLine(_ a: Int, _ b: Int) -> Bool {
    a <= b && !source.scalars[a..<b].contains(where: SourceText.isLineBreak)
  }
}
