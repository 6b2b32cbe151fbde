import TSModel

extension YAMLComposer {
  /// The entries of a finished mapping: written entries in order, duplicate keys reported
  /// (naming both lines) and dropped, and merge keys (`<<`) replaced by the entries they bring
  /// that are not written in the mapping itself (written keys win; among merged mappings the
  /// first one listed wins, as in YAML 1.1's merge-key type).
  mutating func mappingEntries(_ frame: Frame) -> [YAMLMappingEntry] {
    let pairs = stride(from: 0, to: frame.children.count - 1, by: 2).map { (frame.children[$0], frame.children[$0 + 1]) }
    var written: [String: YAMLNode] = [:]
    var result: [YAMLMappingEntry] = []
    var mergeSlots: [(index: Int, value: YAMLNode)] = []
    for (key, value) in pairs {
      if Self.isMergeKey(key) {
        mergeSlots.append((result.count, value))
        continue
      }
      if let text = key.scalar?.value {
        if let first = written[text] {
          diagnostics.append(.error(at: key.position, field: Self.join(frame.path, text),
            "duplicate key \"\(text)\": it is already defined on line \(first.position.line), column \(first.position.column)"))
          continue
        }
        written[text] = key
      }
      result.append(YAMLMappingEntry(key: key, value: value))
    }
    var merged = Set(written.keys)
    for slot in mergeSlots.reversed() {
      let entries = mergeSources(slot.value, path: frame.path).flatMap { $0 }
      var inserted: [YAMLMappingEntry] = []
      for entry in entries {
        guard let text = entry.keyText, !merged.contains(text) else { continue }
        merged.insert(text)
        inserted.append(YAMLMappingEntry(key: entry.key, value: entry.value, isMerged: true))
      }
      result.insert(contentsOf: inserted, at: slot.index)
    }
    return result
  }

  /// The mappings a merge key's value brings, in precedence order; reports any other value.
  private mutating func mergeSources(_ value: YAMLNode, path: String) -> [[YAMLMappingEntry]] {
    switch value.content {
    case .mapping(let entries):
      return [entries]
    case .sequence(let items):
      var sources: [[YAMLMappingEntry]] = []
      for item in items {
        if case .mapping(let entries) = item.content { sources.append(entries) } else { reportBadMerge(item, path: path) }
      }
      return sources
    case .scalar:
      reportBadMerge(value, path: path)
      return []
    }
  }

  private mutating func reportBadMerge(_ node: YAMLNode, path: String) {
    diagnostics.append(.error(at: node.position, field: Self.join(path, "<<"),
      "the merge key << takes a mapping or a list of mappings (e.g. <<: *defaults), found \(node.kindDescription)"))
  }

  /// A plain, untagged `<<` key.
  private static func isMergeKey(_ key: YAMLNode) -> Bool {
    key.tag == nil && key.scalar == YAMLScalar("<<", style: .plain)
  }
}
