import TSModel

/// A problem that stops reading the document (bound exceeded, a second document).
struct YAMLComposeError: Error {
  var diagnostic: Diagnostic
}

/// Builds a `YAMLNode` tree from libyaml's events (handed over by `YAMLReader` as Swift values),
/// without recursion.
///
/// Expands aliases (counting every node an alias adds against `limits.maxNodes`, so a
/// billion-laughs file stops at the first alias past the bound), applies merge keys, reports
/// duplicate keys, bounds the nesting depth, and accepts exactly one document.
///
/// Each node is moved, not copied, from its event into its parent: a mapping's entries are
/// paired as their values arrive, and duplicate keys are found then (by a scan of the entries so
/// far, or an index once a mapping is large). Field paths (`contacts[3].name`) are only built
/// for a diagnostic, from the open collections.
struct YAMLComposer {
  let file: String
  let limits: YAMLLimits
  /// Non-fatal problems found so far (duplicate keys, undefined aliases, bad merge values).
  var diagnostics: [Diagnostic] = []
  /// The document's root once its last event has been consumed.
  private(set) var root: YAMLNode?
  /// Whether the stream end was reached.
  private(set) var isFinished = false
  /// Whether lists of contacts are captured from the events instead of built as nodes
  /// (`ContactListCapture.swift`).
  let capturesContactLists: Bool
  /// The length of the source in bytes, when the reader gives it (0 otherwise).
  var sourceCount = 0
  /// Where captured items go as they are read; `nil`: into `capturedContactLists`.
  var contactSink: CapturedContactSink?
  /// Set when a capture was abandoned: reading must stop and start again without capturing.
  var mustReadAgain = false
  /// The contact lists captured so far, by the start of the empty sequence node that stands for
  /// each in the tree.
  var capturedContactLists: [CapturedContact.Mark: [CapturedContact]] = [:]
  /// The capture under way: active while the innermost open collection is a contact list being
  /// captured.
  var capture = ContactListCapture()

  /// Where a collection stands in its parent, for field paths.
  enum Label {
    case root
    case key(String)
    case index(Int)
  }

  /// An open mapping or sequence: its start event data and the children read so far.
  struct Frame {
    var isMapping: Bool
    var start: SourcePosition
    var tag: String?
    var anchor: String?
    var isFlow: Bool
    /// Where this collection stands in its parent.
    var label: Label
    /// A sequence's items so far.
    var items: [YAMLNode] = []
    /// A mapping's entries so far: written entries in order, duplicate keys already dropped.
    var entries: [YAMLMappingEntry] = []
    /// A mapping's key whose value has not arrived yet.
    var pendingKey: YAMLNode?
    /// Entry index by key text, built once a mapping has more entries than a scan should visit.
    var keyIndex: [String: Int]?
    /// Merge keys (`<<`) by the entry index they stand at, with their values; applied at the end.
    var merges: [(index: Int, value: YAMLNode, keyPosition: SourcePosition)] = []
    /// Nodes in this subtree so far, counting alias expansions.
    var size = 1

    /// Where the collection's next child will stand.
    var nextLabel: Label {
      guard isMapping else { return .index(items.count) }
      return pendingKey?.scalar.map { Label.key($0.value) } ?? .root
    }

    /// Adds a finished child node. In a mapping a node is a key until its value arrives; the pair
    /// then becomes an entry, or is dropped when its key is already written: the key and the
    /// written key's position are returned for the report.
    mutating func add(_ node: consuming YAMLNode, size: Int) -> (key: YAMLNode, written: SourcePosition)? {
      self.size += size
      guard isMapping else {
        items.append(node)
        return nil
      }
      guard let key = pendingKey.take() else {
        pendingKey = node
        return nil
      }
      if YAMLComposer.isMergeKey(key) {
        // One merge key per mapping (it takes a list for several sources): a second is a
        // duplicate key like any other, reported and dropped.
        if let first = merges.first { return (key, first.keyPosition) }
        merges.append((entries.count, node, key.position))
        return nil
      }
      if let text = key.scalar?.value {
        if let written = writtenKey(text) { return (key, written) }
        if keyIndex != nil {
          keyIndex?[text] = entries.count
        } else if entries.count >= YAMLComposer.scanLimit {
          var index: [String: Int] = [:]
          for (position, entry) in entries.enumerated() {
            if let written = entry.keyText { index[written] = position }
          }
          index[text] = entries.count
          keyIndex = index
        }
      }
      if entries.isEmpty { entries.reserveCapacity(2) }  // most mappings of a manifest have 2 or 3 keys
      entries.append(YAMLMappingEntry(key: key, value: node))
      return nil
    }

    /// The position of the written key `text`, if any.
    private func writtenKey(_ text: String) -> SourcePosition? {
      if let keyIndex { return keyIndex[text].map { entries[$0].key.position } }
      return entries.first { $0.keyText == text }?.key.position
    }
  }

  /// Above this many entries, duplicate keys are looked up in `Frame.keyIndex` instead of a scan.
  static let scanLimit = 12

  /// The innermost open collection; the ones around it are `parents`, outermost first.
  var current: Frame?
  var parents: [Frame] = []
  private var anchors: [String: (node: YAMLNode, size: Int)] = [:]
  private var nodeCount = 0
  /// How many of `nodeCount` are copies made by aliases.
  private var aliasCopyCount = 0
  private var documentCount = 0

  /// A composer for one document of `file`; `capturesContactLists` turns on the capture of
  /// contact lists (only for a reader that decodes them, `ManifestLoader`).
  init(file: String, limits: YAMLLimits, capturesContactLists: Bool = false) {
    self.file = file
    self.limits = limits
    self.capturesContactLists = capturesContactLists
  }

  // The events, as `YAMLReader` hands them over from libyaml (stream and document ends need
  // nothing). Each throws `YAMLComposeError` for a second document, nesting deeper than
  // `limits.maxDepth` or more than `limits.maxNodes` nodes after alias expansion.

  /// The stream ended: the document is complete.
  mutating func streamEnd() { isFinished = true }

  /// A document starts at `start`; a second one is an error.
  mutating func documentStart(at start: SourcePosition) throws(YAMLComposeError) {
    documentCount += 1
    if documentCount > 1 {
      throw YAMLComposeError(diagnostic: .error(at: start, field: "",
        "a second YAML document starts here; a manifest is exactly one document (remove the '---' line or move the rest to another file)"))
    }
  }

  /// A scalar.
  mutating func scalar(_ scalar: YAMLScalar, tag: String?, anchor: String?, start: SourcePosition,
                       end: SourcePosition) throws(YAMLComposeError) {
    try count(1, at: start)
    add(YAMLNode(.scalar(scalar), position: start, endPosition: end, tag: tag, anchor: anchor), size: 1, anchor: anchor)
  }

  /// A mapping or sequence starts.
  /// `bytesLeft`: how many bytes of the source follow the collection's start (for the capture
  /// of a contact list, which reserves room for the items they can hold).
  mutating func collectionStart(isMapping: Bool, tag: String?, anchor: String?, isFlow: Bool,
                                at start: SourcePosition, bytesLeft: Int = 0) throws(YAMLComposeError) {
    try open(Frame(isMapping: isMapping, start: start, tag: tag, anchor: anchor, isFlow: isFlow, label: nextLabel))
    if capturesContactLists, !isMapping { startCaptureIfContactList(bytesLeft: bytesLeft) }
  }

  /// The innermost open mapping or sequence ends.
  mutating func collectionEnd(at end: SourcePosition) {
    close(at: end)
  }

  /// An alias (`*name`): a copy of its anchored node, or an error and an empty scalar.
  mutating func alias(_ name: String, start: SourcePosition, end: SourcePosition) throws(YAMLComposeError) {
    guard let anchored = anchors[name] else {
      diagnostics.append(.error(at: start, field: Self.append(nextLabel, to: openPath),
                                "alias *\(name) refers to no anchor &\(name) defined before it"))
      add(YAMLNode(.scalar(YAMLScalar("", style: .plain)), position: start, endPosition: end), size: 1, anchor: nil)
      return
    }
    try count(anchored.size, at: start, throughAlias: true)
    var copy = anchored.node
    copy.aliasPosition = start
    add(copy, size: anchored.size, anchor: nil)
  }

  /// Counts `nodes` more against `limits.maxNodes`; `throughAlias` when they are an alias's copy.
  /// The message says what made the document large: aliases ("billion laughs") only when their
  /// copies are most of the nodes, so a plain long file is not called an attack.
  mutating func count(_ nodes: Int, at position: @autoclosure () -> SourcePosition,
                      throughAlias: Bool = false) throws(YAMLComposeError) {
    nodeCount += nodes
    if throughAlias { aliasCopyCount += nodes }
    guard nodeCount > limits.maxNodes else { return }
    let message = if aliasCopyCount * 2 > nodeCount {
      "the document expands to more than \(limits.maxNodes) nodes (aliases nested inside aliases, a \"billion laughs\"); reading stopped"
    } else {
      "the document has more than \(limits.maxNodes) nodes (keys, values, lists and mappings\(aliasCopyCount > 0 ? ", counting what aliases repeat" : "")), more than a manifest may hold; reading stopped"
    }
    throw YAMLComposeError(diagnostic: .error(at: position(), field: "", message))
  }

  private mutating func open(_ frame: Frame) throws(YAMLComposeError) {
    if parents.count + (current == nil ? 0 : 1) >= limits.maxDepth {
      throw YAMLComposeError(diagnostic: .error(at: frame.start, field: "",
        "nesting is deeper than \(limits.maxDepth) levels; reading stopped"))
    }
    try count(1, at: frame.start)
    if let parent = current.take() { parents.append(parent) }
    current = frame
  }

  mutating func close(at end: SourcePosition) {
    guard var frame = current.take() else { return }
    current = parents.popLast()
    let content: YAMLNode.Content
    if frame.isMapping {
      if !frame.merges.isEmpty { applyMerges(&frame) }
      content = .mapping(frame.entries)
    } else {
      content = .sequence(frame.items)
    }
    let node = YAMLNode(content, position: frame.start, endPosition: end, tag: frame.tag, anchor: frame.anchor,
                        isFlow: frame.isFlow)
    add(node, size: frame.size, anchor: frame.anchor)
  }

  /// Attaches a finished node to the open collection, or makes it the root; reports a pair
  /// whose key is already written (naming both lines).
  private mutating func add(_ node: consuming YAMLNode, size: Int, anchor: String?) {
    if let anchor { anchors[anchor] = (copy node, size) }  // a later anchor of the same name shadows the earlier one
    guard current != nil else {
      root = node
      return
    }
    if let duplicate = current!.add(node, size: size), let text = duplicate.key.scalar?.value {
      diagnostics.append(.error(at: duplicate.key.position, field: Self.join(openPath, text),
        "duplicate key \"\(text)\": it is already defined on line \(duplicate.written.line), column \(duplicate.written.column)"))
    }
  }

  /// Replaces the merge keys (`<<`) of a finished mapping by the entries they bring that are not
  /// written in the mapping itself (written keys win; among merged mappings the first one listed
  /// wins, as in YAML 1.1's merge-key type). `frame` has been closed; its parents are open.
  private mutating func applyMerges(_ frame: inout Frame) {
    let path = Self.join(Self.append(frame.label, to: openPath), "<<")
    var merged = Set(frame.entries.compactMap(\.keyText))
    for slot in frame.merges.reversed() {
      let entries = mergeSources(slot.value, path: path).flatMap { $0 }
      var inserted: [YAMLMappingEntry] = []
      for entry in entries {
        guard let text = entry.keyText, !merged.contains(text) else { continue }
        merged.insert(text)
        inserted.append(YAMLMappingEntry(key: entry.key, value: entry.value, isMerged: true))
      }
      frame.entries.insert(contentsOf: inserted, at: slot.index)
    }
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
    diagnostics.append(.error(at: node.position, field: path,
      "the merge key << takes a mapping or a list of mappings (e.g. <<: *defaults), found \(node.kindDescription)"))
  }

  /// A plain, untagged `<<` key.
  static func isMergeKey(_ key: YAMLNode) -> Bool {
    key.tag == nil && key.scalar == YAMLScalar("<<", style: .plain)
  }

  /// Where the next child of the innermost open collection will stand (`.root` at the top).
  private var nextLabel: Label { current?.nextLabel ?? .root }

  /// The dotted field path of the innermost open collection (`reminders.custom[1]`); `""` at
  /// the top.
  private var openPath: String {
    var path = ""
    for frame in parents { path = Self.append(frame.label, to: path) }
    if let current { path = Self.append(current.label, to: path) }
    return path
  }

  private static func append(_ label: Label, to path: String) -> String {
    switch label {
    case .root: path
    case .key(let key): join(path, key)
    case .index(let index): "\(path)[\(index)]"
    }
  }

  /// `parent.key`, or `key` at the top level.
  static func join(_ parent: String, _ key: String) -> String {
    parent.isEmpty ? key : "\(parent).\(key)"
  }
}
