import TSModel

/// Putting mapping keys in canonical order, only where no comment can move (see
/// `ManifestFormatter`). Works bottom-up: a reordered mapping becomes one edit that carries the
/// scalar rewrites inside it.
extension FormatPass {
  /// Reorders the mappings under `node` (children first), then `node` itself, in `edits`.
  func reorder(_ node: YAMLNode, role: FormatRole, edits: inout [TextEdit]) {
    for child in role.children(of: node) { reorder(child.node, role: child.role, edits: &edits) }
    guard let order = role.keyOrder, case .mapping(let entries) = node.content, entries.count > 1,
          !entries.contains(where: \.isMerged) else { return }
    let ranks = entries.map { order.firstIndex(of: $0.keyText ?? "") ?? order.count }
    let sorted = entries.indices.sorted { (ranks[$0], $0) < (ranks[$1], $1) }
    guard sorted != Array(entries.indices) else { return }
    let ordered = sorted.map { entries[$0] }
    guard let edit = node.isFlow ? flowReorder(node, entries, ordered, edits) : blockReorder(entries, ordered, edits),
          !edits.contains(where: { $0.range == edit.range || partiallyOverlaps($0.range, edit.range) }) else { return }
    edits.removeAll { $0.range.lowerBound >= edit.range.lowerBound && $0.range.upperBound <= edit.range.upperBound }
    edits.append(edit)
    edits.sort { $0.range.lowerBound < $1.range.lowerBound }
  }

  /// Whether `a` and `b` overlap without one containing the other: such a reorder would
  /// produce overlapping edits, so it is skipped (the mapping keeps its key order).
  private func partiallyOverlaps(_ a: Range<Int>, _ b: Range<Int>) -> Bool {
    a.overlaps(b) && !(b.lowerBound <= a.lowerBound && a.upperBound <= b.upperBound)
      && !(a.lowerBound <= b.lowerBound && b.upperBound <= a.upperBound)
  }

  /// A flow mapping written on one line, not counting line breaks inside its scalars, rebuilt as
  /// `{key: value, …}` in `ordered` order. A line break inside a quoted scalar belongs to the
  /// value (libyaml folds it), and the scalar's rewrite may remove it, so judging by
  /// `endPosition.line` would let a second `fmt` reorder what the first one kept (found by the
  /// manifest fuzz target: a lone CR inside a quoted phone).
  private func flowReorder(_ node: YAMLNode, _ entries: [YAMLMappingEntry], _ ordered: [YAMLMappingEntry],
                           _ edits: [TextEdit]) -> TextEdit? {
    let region = range(of: node)
    guard isSelfContained(entries, in: region),
          !containsOutsideScalars(region, entries: entries, where: SourceText.isLineBreak) else { return nil }
    let parts = ordered.map { entry in
      source.text(range(of: entry.key)) + ": " + source.text(range(of: entry.value), applying: edits)
    }
    return TextEdit(range: region, replacement: "{" + parts.joined(separator: ", ") + "}")
  }

  /// A block mapping's entries moved as whole segments (key to the end of its value), when they
  /// are separated by exactly a line break and the indentation and hold no comment.
  private func blockReorder(_ entries: [YAMLMappingEntry], _ ordered: [YAMLMappingEntry], _ edits: [TextEdit]) -> TextEdit? {
    let segment = { (entry: YAMLMappingEntry) in source.offset(entry.key.position)..<contentEnd(entry.value) }
    let segments = entries.map(segment)
    guard let first = segments.first, let last = segments.last, first.lowerBound < last.upperBound else { return nil }
    let region = first.lowerBound..<last.upperBound
    let separator = source.lineEnding + String(repeating: " ", count: max(entries[0].key.position.column - 1, 0))
    for (before, after) in zip(segments, segments.dropFirst()) {
      guard before.upperBound <= after.lowerBound, source.text(before.upperBound..<after.lowerBound) == separator else { return nil }
    }
    guard isSelfContained(entries, in: region), !hasComment(in: region, entries: entries) else { return nil }
    let text = ordered.map { source.text(segment($0), applying: edits) }.joined(separator: separator)
    return TextEdit(range: region, replacement: text)
  }

  /// Where a node's text ends: a block collection ends with its last child's text (libyaml's
  /// end mark for block collections lies at the next token, after comments and blank lines).
  private func contentEnd(_ node: YAMLNode) -> Int {
    if node.isFlow || node.scalar != nil { return range(of: node).upperBound }
    let children: [YAMLNode]
    switch node.content {
    case .mapping(let entries): children = entries.flatMap { [$0.key, $0.value] }
    case .sequence(let items): children = items
    case .scalar: children = []
    }
    return children.map(contentEnd).max() ?? range(of: node).upperBound
  }

  /// No anchor among the entries and no node whose text lies outside `region` (an alias or a
  /// merged entry, whose text is elsewhere).
  private func isSelfContained(_ entries: [YAMLMappingEntry], in region: Range<Int>) -> Bool {
    entries.allSatisfy { entry in
      (entry.key.subtree + entry.value.subtree).allSatisfy { node in
        let start = source.offset(node.position)
        return node.anchor == nil && start >= region.lowerBound && start <= region.upperBound
      }
    }
  }

  /// Whether a `#` outside every scalar of `entries` (a comment) lies in `region`.
  private func hasComment(in region: Range<Int>, entries: [YAMLMappingEntry]) -> Bool {
    containsOutsideScalars(region, entries: entries) { $0 == "#" }
  }

  /// Whether a character of `region` that lies in no scalar of `entries` matches `test`.
  private func containsOutsideScalars(_ region: Range<Int>, entries: [YAMLMappingEntry],
                                      where test: (Unicode.Scalar) -> Bool) -> Bool {
    let scalars = entries.flatMap { $0.key.subtree + $0.value.subtree }.filter { $0.scalar != nil }.map(range(of:))
    return region.contains { offset in
      test(source.scalars[offset]) && !scalars.contains { $0.contains(offset) }
    }
  }
}
