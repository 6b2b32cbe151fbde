import TSModel

/// One node of a YAML document as libyaml read it: a scalar, a mapping or a sequence, with the
/// positions it spans, its tag and anchor, and how it was written (scalar style, flow or block).
///
/// Aliases are already expanded (an alias yields a copy of its anchored node, which keeps the
/// anchor's positions) and merge keys (`<<`) already applied, so a consumer sees plain data.
/// The node keeps enough of the source (start and end positions, scalar style, flow/block
/// layout, mapping order) for tools that rewrite a manifest in place (`fmt`) or emit one
/// (`export`).
///
/// Stored compactly, because a manifest's tree is copied often (into lists, out of mappings,
/// into a decoder's field table): the file name once for both positions, lines and columns as
/// 32-bit numbers (larger ones are clamped; a manifest is at most 1 MiB), and the rarely written
/// tag, anchor and alias position in a side box that is `nil` for almost every node. A copy
/// costs two reference counts (the content and the file name).
public struct YAMLNode: Hashable, Sendable {
  /// What the node holds.
  public enum Content: Hashable, Sendable {
    /// A scalar's text, exactly as YAML gives it (escapes resolved, line breaks folded).
    case scalar(YAMLScalar)
    /// A mapping's entries in source order; duplicate keys have been reported and dropped.
    case mapping([YAMLMappingEntry])
    /// A sequence's items in order.
    case sequence([YAMLNode])
  }

  /// The fields few nodes have; shared between copies, never changed once made.
  private final class Extras: Sendable {
    let tag: String?
    let anchor: String?
    let aliasPosition: SourcePosition?
    /// The end position's file when it is not the start position's (only through the setters).
    let endFile: String?

    init(tag: String?, anchor: String?, aliasPosition: SourcePosition?, endFile: String?) {
      self.tag = tag
      self.anchor = anchor
      self.aliasPosition = aliasPosition
      self.endFile = endFile
    }

    /// A box for these fields, or `nil` when all are `nil`.
    static func make(tag: String?, anchor: String?, aliasPosition: SourcePosition?, endFile: String?) -> Extras? {
      if tag == nil && anchor == nil && aliasPosition == nil && endFile == nil { return nil }
      return Extras(tag: tag, anchor: anchor, aliasPosition: aliasPosition, endFile: endFile)
    }
  }

  /// The node's content.
  public var content: Content
  private var file: String
  private var line: Int32
  private var column: Int32
  private var endLine: Int32
  private var endColumn: Int32
  private var extras: Extras?
  /// Whether a collection was written in flow style (`{…}` / `[…]`); `false` for scalars.
  public var isFlow: Bool

  /// Where the node starts (1-based line and column, in Unicode scalars).
  public var position: SourcePosition {
    get { SourcePosition(file: file, line: Int(line), column: Int(column)) }
    set {
      let end = endPosition
      (file, line, column) = (newValue.file, Int32(clamping: newValue.line), Int32(clamping: newValue.column))
      endPosition = end
    }
  }
  /// Where the node ends (the position just after its last character).
  public var endPosition: SourcePosition {
    get { SourcePosition(file: extras?.endFile ?? file, line: Int(endLine), column: Int(endColumn)) }
    set {
      (endLine, endColumn) = (Int32(clamping: newValue.line), Int32(clamping: newValue.column))
      setExtras(endFile: newValue.file == file ? nil : newValue.file)
    }
  }
  /// The explicit tag, resolved by libyaml (e.g. `tag:yaml.org,2002:str` for `!!str`); `nil` when none.
  public var tag: String? {
    get { extras?.tag }
    set { setExtras(tag: newValue) }
  }
  /// The anchor name given with `&name`, if any.
  public var anchor: String? {
    get { extras?.anchor }
    set { setExtras(anchor: newValue) }
  }
  /// Where the alias (`*name`) stands when this node is an alias's copy of its anchored node
  /// (whose positions `position` and `endPosition` keep); `nil` for a node written in place.
  public var aliasPosition: SourcePosition? {
    get { extras?.aliasPosition }
    set { setExtras(aliasPosition: newValue) }
  }

  /// Creates a node.
  public init(_ content: Content, position: SourcePosition, endPosition: SourcePosition,
              tag: String? = nil, anchor: String? = nil, isFlow: Bool = false) {
    self.content = content
    (file, line, column) = (position.file, Int32(clamping: position.line), Int32(clamping: position.column))
    (endLine, endColumn) = (Int32(clamping: endPosition.line), Int32(clamping: endPosition.column))
    self.isFlow = isFlow
    extras = Extras.make(tag: tag, anchor: anchor, aliasPosition: nil,
                         endFile: endPosition.file == position.file ? nil : endPosition.file)
  }

  /// Replaces the side box with one that differs in the fields given.
  private mutating func setExtras(tag: String?? = .none, anchor: String?? = .none,
                                  aliasPosition: SourcePosition?? = .none, endFile: String?? = .none) {
    extras = Extras.make(tag: tag ?? self.tag, anchor: anchor ?? self.anchor,
                         aliasPosition: aliasPosition ?? self.aliasPosition,
                         endFile: endFile ?? extras?.endFile)
  }

  /// Same content, positions, tag, anchor, layout and alias position.
  public static func == (a: YAMLNode, b: YAMLNode) -> Bool {
    a.content == b.content && a.position == b.position && a.endPosition == b.endPosition && a.tag == b.tag
      && a.anchor == b.anchor && a.isFlow == b.isFlow && a.aliasPosition == b.aliasPosition
  }

  /// Hashes what `==` compares.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(content)
    hasher.combine(position)
    hasher.combine(endPosition)
    hasher.combine(tag)
    hasher.combine(anchor)
    hasher.combine(isFlow)
    hasher.combine(aliasPosition)
  }

  /// The scalar, when this node is one.
  public var scalar: YAMLScalar? {
    if case .scalar(let scalar) = content { return scalar }
    return nil
  }

  /// Whether this is YAML's null: a plain, untagged `""`, `~`, `null`, `Null` or `NULL`.
  public var isNull: Bool {
    guard case .scalar(let scalar) = content, tag == nil else { return false }
    return scalar.isNullUntagged
  }

  /// A short name of the node's type for messages: "text", "a mapping", "a list" or "nothing (null)".
  public var kindDescription: String {
    switch content {
    case .scalar: isNull ? "nothing (null)" : "text"
    case .mapping: "a mapping"
    case .sequence: "a list"
    }
  }
}

/// A scalar's value and the style it was written in.
public struct YAMLScalar: Hashable, Sendable {
  /// How a scalar was written; a quoted scalar is always text, never a number or boolean.
  public enum Style: String, Hashable, Sendable {
    case plain, singleQuoted, doubleQuoted, literal, folded
  }

  /// The plain spellings of null in YAML 1.2's core schema.
  public static let nullSpellings: Set<String> = ["", "~", "null", "Null", "NULL"]

  /// The scalar's text.
  public var value: String
  /// The style it was written in.
  public var style: Style

  /// A scalar with text `value` written in `style`.
  public init(_ value: String, style: Style) {
    self.value = value
    self.style = style
  }

  /// Whether the scalar was written without quotes or block indicators.
  public var isPlain: Bool { style == .plain }

  /// Whether the scalar is YAML's null when it has no tag: plain, and one of `nullSpellings`.
  public var isNullUntagged: Bool {
    style == .plain && value.utf8.count <= 4 && Self.nullSpellings.contains(value)  // the longest spelling is 4 bytes
  }
}

/// One `key: value` entry of a mapping.
public struct YAMLMappingEntry: Hashable, Sendable {
  /// The key node (positions point at the key).
  public var key: YAMLNode
  /// The value node.
  public var value: YAMLNode
  /// Whether the entry came from a merge key (`<<: *base`) rather than being written here.
  public var isMerged: Bool

  /// An entry; `isMerged` when it came from a `<<` merge key.
  public init(key: YAMLNode, value: YAMLNode, isMerged: Bool = false) {
    self.key = key
    self.value = value
    self.isMerged = isMerged
  }

  /// The key's text when the key is a scalar.
  public var keyText: String? { key.scalar?.value }
}

/// Bounds that keep a hostile or mistaken file from exhausting time or memory.
public struct YAMLLimits: Hashable, Sendable {
  /// Largest accepted input, in bytes (default 1 MiB).
  public var maxBytes: Int
  /// Deepest accepted nesting of mappings and sequences (default 64).
  public var maxDepth: Int
  /// Most nodes the document may hold after alias expansion (default 100 000); the
  /// billion-laughs bound.
  public var maxNodes: Int

  /// Bounds in bytes, nesting levels and nodes; the defaults are `YAMLLimits.default`.
  public init(maxBytes: Int = ManifestSource.maxBytes, maxDepth: Int = 64, maxNodes: Int = 100_000) {
    self.maxBytes = maxBytes
    self.maxDepth = maxDepth
    self.maxNodes = maxNodes
  }

  /// 1 MiB, 64 levels, 100 000 nodes.
  public static let `default` = YAMLLimits()
}

/// What reading a YAML document produced: the root node (nil when the input could not be read
/// as one YAML document) and every problem found, unsorted.
public struct YAMLReadResult: Sendable {
  /// The document's root; `nil` after a fatal problem (syntax error, bound exceeded, …).
  public var root: YAMLNode?
  /// Problems found while reading (errors; the YAML layer emits no warnings).
  public var diagnostics: [Diagnostic]

  /// Contact lists read by `YAMLReader.read(…, capturesContactLists: true)` without nodes, by
  /// the start of the empty sequence that stands for each in `root`.
  var capturedContactLists: [CapturedContact.Mark: [CapturedContact]] = [:]

  /// A result: `root` (`nil` after a fatal problem) and the problems found.
  public init(root: YAMLNode?, diagnostics: [Diagnostic]) {
    self.root = root
    self.diagnostics = diagnostics
  }

  /// This result with every captured contact list put back into the tree as the nodes reading
  /// without capturing builds: the tree `YAMLReader.read` gives for the same bytes without
  /// `capturesContactLists` (the property the `manifest` fuzz target checks).
  public func expandingCapturedLists() -> YAMLReadResult {
    guard let root, !capturedContactLists.isEmpty else { return self }
    let file = root.position.file
    func expand(_ node: YAMLNode) -> YAMLNode {
      var node = node
      switch node.content {
      case .scalar:
        break
      case .sequence(let items):
        if items.isEmpty, node.aliasPosition == nil,
           let captured = capturedContactLists[CapturedContact.Mark(node.position)] {
          node.content = .sequence(captured.map { $0.node(file: file) })
        } else {
          node.content = .sequence(items.map(expand))
        }
      case .mapping(let entries):
        node.content = .mapping(entries.map { YAMLMappingEntry(key: expand($0.key), value: expand($0.value), isMerged: $0.isMerged) })
      }
      return node
    }
    return YAMLReadResult(root: expand(root), diagnostics: diagnostics)
  }
}
