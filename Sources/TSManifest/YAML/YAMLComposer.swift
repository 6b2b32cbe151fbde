import TSModel

/// A problem that stops reading the document (bound exceeded, a second document).
struct YAMLComposeError: Error {
  var diagnostic: Diagnostic
}

/// Builds a `YAMLNode` tree from copied libyaml events, in Swift, without recursion.
///
/// Expands aliases (counting every node an alias adds against `limits.maxNodes`, so a
/// billion-laughs file stops at the first alias past the bound), applies merge keys, reports
/// duplicate keys, bounds the nesting depth, and accepts exactly one document.
struct YAMLComposer {
  let file: String
  let limits: YAMLLimits
  /// Non-fatal problems found so far (duplicate keys, undefined aliases, bad merge values).
  var diagnostics: [Diagnostic] = []
  /// The document's root once its last event has been consumed.
  private(set) var root: YAMLNode?
  /// Whether the stream end was reached.
  private(set) var isFinished = false

  /// An open mapping or sequence: its start event data and the children read so far.
  struct Frame {
    var isMapping: Bool
    var start: SourcePosition
    var tag: String?
    var anchor: String?
    var isFlow: Bool
    /// Dotted field path of this collection, e.g. `reminders.custom[1]`.
    var path: String
    var children: [YAMLNode] = []
    /// Nodes in this subtree so far, counting alias expansions.
    var size = 1
  }

  private var stack: [Frame] = []
  private var anchors: [String: (node: YAMLNode, size: Int)] = [:]
  private var nodeCount = 0
  /// How many of `nodeCount` are copies made by aliases.
  private var aliasCopyCount = 0
  private var documentCount = 0

  init(file: String, limits: YAMLLimits) {
    self.file = file
    self.limits = limits
  }

  /// Consumes one event.
  /// - Throws: `YAMLComposeError` for a second document, nesting deeper than `limits.maxDepth`
  ///   or more than `limits.maxNodes` nodes after alias expansion.
  mutating func consume(_ event: YAMLEvent) throws(YAMLComposeError) {
    switch event.kind {
    case .streamStart, .documentEnd:
      break
    case .streamEnd:
      isFinished = true
    case .documentStart:
      documentCount += 1
      if documentCount > 1 {
        throw YAMLComposeError(diagnostic: .error(at: event.start, field: "",
          "a second YAML document starts here; a manifest is exactly one document (remove the '---' line or move the rest to another file)"))
      }
    case .alias(let name):
      try alias(name, event: event)
    case .scalar(let scalar, let tag, let anchor):
      try count(1, at: event.start)
      add(YAMLNode(.scalar(scalar), position: event.start, endPosition: event.end, tag: tag, anchor: anchor),
          size: 1, anchor: anchor)
    case .sequenceStart(let tag, let anchor, let isFlow):
      try open(Frame(isMapping: false, start: event.start, tag: tag, anchor: anchor, isFlow: isFlow, path: childPath()))
    case .mappingStart(let tag, let anchor, let isFlow):
      try open(Frame(isMapping: true, start: event.start, tag: tag, anchor: anchor, isFlow: isFlow, path: childPath()))
    case .sequenceEnd, .mappingEnd:
      close(at: event.end)
    }
  }

  private mutating func alias(_ name: String, event: YAMLEvent) throws(YAMLComposeError) {
    guard let anchored = anchors[name] else {
      diagnostics.append(.error(at: event.start, field: childPath(), "alias *\(name) refers to no anchor &\(name) defined before it"))
      add(YAMLNode(.scalar(YAMLScalar("", style: .plain)), position: event.start, endPosition: event.end), size: 1, anchor: nil)
      return
    }
    try count(anchored.size, at: event.start, throughAlias: true)
    var copy = anchored.node
    copy.aliasPosition = event.start
    add(copy, size: anchored.size, anchor: nil)
  }

  /// Counts `nodes` more against `limits.maxNodes`; `throughAlias` when they are an alias's copy.
  /// The message says what made the document large: aliases ("billion laughs") only when their
  /// copies are most of the nodes, so a plain long file is not called an attack.
  private mutating func count(_ nodes: Int, at position: SourcePosition, throughAlias: Bool = false) throws(YAMLComposeError) {
    nodeCount += nodes
    if throughAlias { aliasCopyCount += nodes }
    guard nodeCount > limits.maxNodes else { return }
    let message = if aliasCopyCount * 2 > nodeCount {
      "the document expands to more than \(limits.maxNodes) nodes (aliases nested inside aliases, a \"billion laughs\"); reading stopped"
    } else {
      "the document has more than \(limits.maxNodes) nodes (keys, values, lists and mappings\(aliasCopyCount > 0 ? ", counting what aliases repeat" : "")), more than a manifest may hold; reading stopped"
    }
    throw YAMLComposeError(diagnostic: .error(at: position, field: "", message))
  }

  private mutating func open(_ frame: Frame) throws(YAMLComposeError) {
    if stack.count >= limits.maxDepth {
      throw YAMLComposeError(diagnostic: .error(at: frame.start, field: "",
        "nesting is deeper than \(limits.maxDepth) levels; reading stopped"))
    }
    try count(1, at: frame.start)
    stack.append(frame)
  }

  private mutating func close(at end: SourcePosition) {
    guard let frame = stack.popLast() else { return }
    let content: YAMLNode.Content = frame.isMapping ? .mapping(mappingEntries(frame)) : .sequence(frame.children)
    let node = YAMLNode(content, position: frame.start, endPosition: end, tag: frame.tag, anchor: frame.anchor,
                        isFlow: frame.isFlow)
    add(node, size: frame.size, anchor: frame.anchor)
  }

  /// Attaches a finished node to the open collection, or makes it the root.
  private mutating func add(_ node: YAMLNode, size: Int, anchor: String?) {
    if let anchor { anchors[anchor] = (node, size) }  // a later anchor of the same name shadows the earlier one
    guard !stack.isEmpty else {
      root = node
      return
    }
    stack[stack.count - 1].children.append(node)
    stack[stack.count - 1].size += size
  }

  /// The field path of the node that starts next: `parent.key` in a mapping, `parent[i]` in a list.
  private func childPath() -> String {
    guard let top = stack.last else { return "" }
    if !top.isMapping { return "\(top.path)[\(top.children.count)]" }
    guard top.children.count % 2 == 1, let key = top.children.last?.scalar?.value else { return top.path }
    return Self.join(top.path, key)
  }

  /// `parent.key`, or `key` at the top level.
  static func join(_ parent: String, _ key: String) -> String {
    parent.isEmpty ? key : "\(parent).\(key)"
  }
}
