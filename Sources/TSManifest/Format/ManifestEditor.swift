import TSModel

/// Edits a manifest's source text in place, for `tsapply drift --adopt`: a value set, an entry
/// added to a mapping, an item removed from or appended to a list, everything else (comments,
/// blank lines, key order, anchors, the BOM, CRLF line ends) left as written.
///
/// As `ManifestFormatter` does, it never re-emits the document (libyaml's events carry no
/// comments): it reads the tree with `YAMLReader`, whose nodes keep their start and end
/// positions, and replaces text at those positions. New values are written by libyaml's emitter
/// (`YAMLWriter`): in flow style on one line where a value replaces another or joins a mapping,
/// and as block items, at the indentation of the list's dashes, where items are appended to a
/// block list. A comment beside an edited value keeps its column. Edits are collected, then applied at once by `edited()`; they must not overlap
/// (the callers edit disjoint entries: a value, a list's items, the end of a mapping).
public struct ManifestEditor: Sendable {
  /// The document's root (`nil` for an empty document).
  public let root: YAMLNode?
  private let source: SourceText
  private let hasBOM: Bool
  private var edits: [(order: Int, edit: TextEdit)] = []

  /// The editor of the manifest `bytes` (named `file` in positions).
  public init(bytes: [UInt8], file: String) {
    let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
    hasBOM = bytes.starts(with: bom)
    source = SourceText(String(decoding: hasBOM ? Array(bytes.dropFirst(3)) : bytes, as: UTF8.self))
    root = YAMLReader.read(bytes: bytes, file: file).root
  }

  /// Whether any edit was made.
  public var isEdited: Bool { !edits.isEmpty }

  /// The text with every edit applied (the BOM kept when there was one).
  public func edited() -> [UInt8] {
    let sorted = edits.sorted { ($0.edit.range.lowerBound, $0.order) < ($1.edit.range.lowerBound, $1.order) }.map(\.edit)
    let bom: [UInt8] = hasBOM ? [0xEF, 0xBB, 0xBF] : []
    // A comment beside an edited value stays in its column, as `fmt` keeps it.
    let edits = FormatPass(source: source, file: "").keepingCommentColumns(sorted)
    return bom + Array(source.text(0..<source.scalars.count, applying: edits).utf8)
  }

  // MARK: Reading

  /// The entry written under `key` in `mapping` (not one brought in by a merge key `<<`).
  public static func writtenEntry(_ key: String, in mapping: YAMLNode) -> YAMLMappingEntry? {
    guard case .mapping(let entries) = mapping.content else { return nil }
    return entries.last { $0.keyText == key && !$0.isMerged }
  }

  /// The value of `key` in `mapping`, written there or merged in.
  public static func value(_ key: String, in mapping: YAMLNode?) -> YAMLNode? {
    guard let mapping, case .mapping(let entries) = mapping.content else { return nil }
    return entries.last { $0.keyText == key }?.value
  }

  /// The node at `keys` from `root` (each key a mapping key).
  public func node(at keys: [String]) -> YAMLNode? {
    var node = root
    for key in keys { node = Self.value(key, in: node) }
    return node
  }

  // MARK: Editing

  /// Sets `key` in `mapping` to `value`: the value written there is replaced (an anchor or tag
  /// before it stays; an alias is replaced by the value), else the entry is added at the end of
  /// the mapping. With `replacing` (another key of the same field: `period` for `at`), that
  /// key's entry is rewritten as `key: value` in its place instead.
  /// - Throws: `YAMLWriteError` when libyaml's emitter fails.
  public mutating func set(_ key: String, to value: YAMLOutputNode, in mapping: YAMLNode, replacing: String? = nil) throws(YAMLWriteError) {
    let text = try Self.inline(value)
    if let entry = Self.writtenEntry(key, in: mapping) {
      replace(valueRange(entry.value), with: text)
    } else if let other = replacing, let entry = Self.writtenEntry(other, in: mapping) {
      let start = source.offset(entry.key.position)
      replace(start..<valueRange(entry.value).upperBound, with: "\(key): \(text)")
    } else {
      add(key, text: text, to: mapping)
    }
  }

  /// Removes `item` from the list `sequence` (whole lines of a block list, the item and its
  /// comma in a flow list). A list left empty by removals should be written as `[]` with
  /// `replaceItems(of:with:)` instead.
  public mutating func remove(_ item: YAMLNode, from sequence: YAMLNode) {
    let range = itemRange(item)
    if sequence.isFlow {
      guard case .sequence(let items) = sequence.content, let index = items.firstIndex(of: item) else { return }
      if index + 1 < items.count {
        replace(range.lowerBound..<itemRange(items[index + 1]).lowerBound, with: "")
      } else if index > 0 {
        replace(itemRange(items[index - 1]).upperBound..<range.upperBound, with: "")
      } else {
        replace(range, with: "")
      }
      return
    }
    guard let dash = dashOffset(before: source.offset(item.position)) else { return }
    let lineStart = self.lineStart(of: dash)
    let onlySpaces = source.scalars[lineStart..<dash].allSatisfy { $0 == " " || $0 == "\t" }
    replace((onlySpaces ? lineStart : dash)..<nextLineStart(after: lastContentEnd(item)), with: "")
  }

  /// Replaces every item of `sequence`, the value of `key` in `mapping`, with `items`: `[]` when
  /// there are none, else a block list one level deeper than the key (comments among the old
  /// items go with them).
  /// - Throws: `YAMLWriteError` when libyaml's emitter fails.
  public mutating func replaceItems(of key: String, in mapping: YAMLNode, with items: [YAMLOutputNode]) throws(YAMLWriteError) {
    guard let entry = Self.writtenEntry(key, in: mapping) else { return }
    let start = source.offset(entry.key.endPosition)
    var colon = start
    while colon < source.scalars.count, source.scalars[colon] != ":" { colon += 1 }
    let end = entry.value.isFlow || entry.value.scalar != nil ? valueRange(entry.value).upperBound : lastContentEnd(entry.value)
    guard !items.isEmpty else {
      replace(min(colon + 1, end)..<end, with: " []")
      return
    }
    let indent = String(repeating: " ", count: entry.key.position.column - 1 + 2)
    replace(min(colon + 1, end)..<end, with: source.lineEnding + (try block(items, indent: indent)).dropLast(source.lineEnding.count))
  }

  /// Appends `items` to the list `sequence` (non-empty block lists: new lines at the indentation
  /// of its dashes; flow lists: `, item` after the last one). An empty list is written anew with
  /// `replaceItems(of:in:with:)`.
  /// - Throws: `YAMLWriteError` when libyaml's emitter fails.
  public mutating func append(_ items: [YAMLOutputNode], to sequence: YAMLNode) throws(YAMLWriteError) {
    guard !items.isEmpty, case .sequence(let existing) = sequence.content, let last = existing.last else { return }
    if sequence.isFlow {
      let text = try items.map { (item) throws(YAMLWriteError) in try Self.inline(item) }.joined(separator: ", ")
      insert(", " + text, at: itemRange(last).upperBound)
      return
    }
    guard let dash = dashOffset(before: source.offset(existing[0].position)) else { return }
    let indent = String(repeating: " ", count: dash - lineStart(of: dash))
    insertLines(try block(items, indent: indent), after: lastContentEnd(last))
  }

  // MARK: Text

  /// `value` written by libyaml on one line (flow style), without a line end: `false`,
  /// `["08:00", "21:00"]`, `{start: "09:00", end: "18:00", every: 2h}`.
  public static func inline(_ value: YAMLOutputNode) throws(YAMLWriteError) -> String {
    let text = try YAMLWriter.write(.sequence([value], flow: true))
    var trimmed = Substring(text)
    while trimmed.last == "\n" { trimmed.removeLast() }
    return String(trimmed.dropFirst().dropLast())
  }

  /// `items` as the lines of a block list, each line indented by `indent` and ended with the
  /// file's line end.
  private func block(_ items: [YAMLOutputNode], indent: String) throws(YAMLWriteError) -> String {
    let text = try YAMLWriter.write(.sequence(items, flow: false))
    return text.split(separator: "\n", omittingEmptySubsequences: true).map { indent + $0 + source.lineEnding }.joined()
  }

  private mutating func replace(_ range: Range<Int>, with text: String) {
    edits.append((edits.count, TextEdit(range: range, replacement: text)))
  }

  private mutating func insert(_ text: String, at offset: Int) {
    replace(offset..<offset, with: text)
  }

  /// Inserts whole `lines` (each ended with a line end) on the line after the one `offset` is on.
  private mutating func insertLines(_ lines: String, after offset: Int) {
    let next = nextLineStart(after: offset)
    let endsWithBreak = next > 0 && next <= source.scalars.count && SourceText.isLineBreak(source.scalars[next - 1])
    insert((endsWithBreak ? "" : source.lineEnding) + lines, at: next)
  }

  /// Adds `key: text` at the end of `mapping`.
  private mutating func add(_ key: String, text: String, to mapping: YAMLNode) {
    guard case .mapping(let entries) = mapping.content else { return }
    let written = entries.filter { !$0.isMerged }
    if mapping.isFlow {
      if let last = written.last {
        insert(", \(key): \(text)", at: valueRange(last.value).upperBound)
      } else {
        insert("\(key): \(text)", at: source.offset(mapping.position) + 1)
      }
      return
    }
    let column = written.first?.key.position.column ?? mapping.position.column
    let indent = String(repeating: " ", count: max(column - 1, 0))
    let end = written.last.map { lastContentEnd($0.value) } ?? source.offset(mapping.position)
    insertLines("\(indent)\(key): \(text)\(source.lineEnding)", after: end)
  }

  /// The range of a value's own text (after `&anchor` / `!tag`; an alias `*name` whole).
  private func valueRange(_ node: YAMLNode) -> Range<Int> {
    if let alias = node.aliasPosition {
      let start = source.offset(alias)
      var end = start
      while end < source.scalars.count, !source.scalars[end].properties.isWhitespace, source.scalars[end] != ",",
            source.scalars[end] != "}", source.scalars[end] != "]" { end += 1 }
      return start..<end
    }
    let start = source.offset(node.position)
    var end = max(source.offset(node.endPosition), start)
    while end > start, source.scalars[end - 1].properties.isWhitespace { end -= 1 }
    return source.contentStart(start, end: end)..<end
  }

  /// An item's range: a block collection's ends where its last content does.
  private func itemRange(_ node: YAMLNode) -> Range<Int> {
    let range = valueRange(node)
    return range.lowerBound..<max(range.lowerBound, lastContentEnd(node))
  }

  /// Where the last text of `node` ends (libyaml ends a block collection at the next token,
  /// after the comments and blank lines that follow it, which are not the node's).
  private func lastContentEnd(_ node: YAMLNode) -> Int {
    if node.aliasPosition == nil, !node.isFlow {
      switch node.content {
      case .mapping(let entries):
        if let last = entries.last(where: { !$0.isMerged }) { return lastContentEnd(last.value) }
      case .sequence(let items):
        if let last = items.last { return lastContentEnd(last) }
      case .scalar:
        break
      }
    }
    return valueRange(node).upperBound
  }

  /// The offset of the `-` that introduces the block list item starting at `offset`.
  private func dashOffset(before offset: Int) -> Int? {
    var index = offset - 1
    while index >= 0, source.scalars[index] == " " || source.scalars[index] == "\t" { index -= 1 }
    return index >= 0 && source.scalars[index] == "-" ? index : nil
  }

  private func lineStart(of offset: Int) -> Int {
    var index = offset
    while index > 0, !SourceText.isLineBreak(source.scalars[index - 1]) { index -= 1 }
    return index
  }

  /// The offset just after the line break that ends the line `offset` is on (the end of the
  /// text when that line has none).
  private func nextLineStart(after offset: Int) -> Int {
    var index = offset
    while index < source.scalars.count, !SourceText.isLineBreak(source.scalars[index]) { index += 1 }
    if index < source.scalars.count {
      if source.scalars[index] == "\r", index + 1 < source.scalars.count, source.scalars[index + 1] == "\n" { index += 1 }
      index += 1
    }
    return index
  }
}
