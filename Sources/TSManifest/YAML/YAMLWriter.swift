internal import CYaml
import TSModel

/// A YAML tree to write: scalars with the style to write them in, mappings with their keys in
/// the order to write them, and sequences. Flow or block layout is chosen per collection.
///
/// This is the emitting counterpart of `YAMLNode` (which carries source positions and so cannot
/// be built for a document that has no source yet).
public indirect enum YAMLOutputNode: Hashable, Sendable {
  /// A scalar's text and the style to write it in (`.plain` falls back to quotes when libyaml
  /// finds the text cannot be written plain).
  case scalar(String, YAMLScalar.Style)
  /// A mapping with plain-scalar keys, in the order given.
  case mapping([(key: String, value: YAMLOutputNode)], flow: Bool)
  /// A sequence.
  case sequence([YAMLOutputNode], flow: Bool)

  /// Same text, styles, keys, order and layout (written by hand: tuples are not `Equatable`).
  public static func == (a: Self, b: Self) -> Bool {
    switch (a, b) {
    case let (.scalar(x, s), .scalar(y, t)): return x == y && s == t
    case let (.sequence(x, f), .sequence(y, g)): return x == y && f == g
    case let (.mapping(x, f), .mapping(y, g)):
      return f == g && x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    default: return false
    }
  }

  /// Hashes what `==` compares.
  public func hash(into hasher: inout Hasher) {
    switch self {
    case let .scalar(text, style): hasher.combine(0); hasher.combine(text); hasher.combine(style)
    case let .sequence(items, flow): hasher.combine(1); hasher.combine(items); hasher.combine(flow)
    case let .mapping(entries, flow):
      hasher.combine(2); hasher.combine(flow)
      for entry in entries { hasher.combine(entry.key); hasher.combine(entry.value) }
    }
  }
}

/// A problem libyaml's emitter reported (it only fails on inconsistent event sequences or when
/// memory runs out; `YAMLWriter` never builds an inconsistent sequence).
public struct YAMLWriteError: Error, Hashable, Sendable, CustomStringConvertible {
  /// libyaml's `problem` text.
  public var problem: String
  /// `libyaml could not write YAML: <problem>`.
  public var description: String { "libyaml could not write YAML: \(problem)" }
}

/// Writes a `YAMLOutputNode` as one YAML document with libyaml's emitter.
///
/// libyaml does all quoting and escaping: this wrapper only turns the tree into emitter events
/// (`yaml_*_event_initialize`, `yaml_emitter_emit`), owns the emitter (deleted in a `defer`) and
/// collects the output through a write handler into a Swift byte array. Output: UTF-8, LF line
/// ends, 2-space indentation, unlimited width (no folding of long scalars), non-ASCII written as
/// is (also outside the BMP) but for invisible characters, written as escapes (`write(_:)`), no `---` or `...` markers. libyaml's emitter cannot write comments; callers that need a
/// header comment prepend it to the text.
public enum YAMLWriter {
  /// The YAML text for `root`.
  ///
  /// libyaml's emitter escapes every character outside the Basic Multilingual Plane however it
  /// is set (its printable test stops at U+FFFF: an emoji comes out as `"\U0001F600"`), so each
  /// such character is handed to it as a private-use character the document does not hold, and
  /// put back in the text it writes (`StandIns`): a name like "Enkel Max 😀" stays readable.
  /// The other way round, libyaml writes as they are the characters a reader cannot see or that
  /// reorder the text around them (`InvisibleCharacters`: a right-to-left override makes a name
  /// read backwards in a review of the file): each is handed over as a stand-in too, the scalar
  /// holding it (a key as well) is written double-quoted, and the stand-in becomes the YAML
  /// escape (`\u202E`), which reads back as the same character.
  /// - Throws: `YAMLWriteError` when libyaml reports a problem.
  public static func write(_ root: YAMLOutputNode) throws(YAMLWriteError) -> String {
    guard let standIns = StandIns(root) else { return try emit(root, quoting: []) }
    return standIns.restore(try emit(standIns.root, quoting: standIns.escaped))
  }

  /// Characters outside the Basic Multilingual Plane and invisible characters, each replaced in
  /// a tree by a private-use character (U+E000–U+F8FF, which libyaml writes as they are) that no
  /// text of the tree holds.
  struct StandIns {
    /// The tree with the stand-ins.
    var root: YAMLOutputNode
    /// Stand-in → what is written in its place: the character it stands for, or its escape.
    var original: [Unicode.Scalar: String] = [:]
    /// The stand-ins written as escapes: a scalar holding one is written double-quoted.
    var escaped: Set<Unicode.Scalar> = []

    /// `nil` when `tree` holds no character outside the BMP and no invisible one (or more than
    /// there are stand-ins).
    init?(_ tree: YAMLOutputNode) {
      var texts: [String] = []
      Self.collect(tree, into: &texts)
      var used = Set<Unicode.Scalar>(), wide = Set<Unicode.Scalar>(), invisible = Set<Unicode.Scalar>()
      for text in texts {
        let scalars = Array(text.unicodeScalars)
        for (index, scalar) in scalars.enumerated() {
          used.insert(scalar)
          if InvisibleCharacters.isInvisible(at: index, in: scalars) { invisible.insert(scalar) } else if scalar.value > 0xFFFF { wide.insert(scalar) }
        }
      }
      guard !wide.isEmpty || !invisible.isEmpty else { return nil }
      var free = (0xE000...0xF8FF).lazy.compactMap(Unicode.Scalar.init).filter { !used.contains($0) }.makeIterator()
      var asIs: [Unicode.Scalar: Unicode.Scalar] = [:], asEscape: [Unicode.Scalar: Unicode.Scalar] = [:]
      for scalar in wide.sorted(by: { $0.value < $1.value }) {
        guard let next = free.next() else { return nil }
        asIs[scalar] = next
        original[next] = String(scalar)
      }
      for scalar in invisible.sorted(by: { $0.value < $1.value }) {
        guard let next = free.next() else { return nil }
        asEscape[scalar] = next
        original[next] = Self.escape(scalar)
        escaped.insert(next)
      }
      root = Self.replacing(tree) { text in
        let scalars = Array(text.unicodeScalars)
        var view = String.UnicodeScalarView()
        for (index, scalar) in scalars.enumerated() {
          let standIn = InvisibleCharacters.isInvisible(at: index, in: scalars) ? asEscape[scalar] : asIs[scalar]
          view.append(standIn ?? scalar)
        }
        return String(view)
      }
    }

    /// `text` with each stand-in put back.
    func restore(_ text: String) -> String {
      var restored = ""
      restored.reserveCapacity(text.utf8.count)
      for scalar in text.unicodeScalars {
        if let written = original[scalar] { restored += written } else { restored.unicodeScalars.append(scalar) }
      }
      return restored
    }

    /// YAML's escape of `scalar` in a double-quoted scalar: `\u202E`, `\U000E0041`.
    static func escape(_ scalar: Unicode.Scalar) -> String {
      let digits = String(scalar.value, radix: 16, uppercase: true)
      let width = scalar.value > 0xFFFF ? 8 : 4
      return (scalar.value > 0xFFFF ? "\\U" : "\\u") + String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    private static func collect(_ node: YAMLOutputNode, into texts: inout [String]) {
      switch node {
      case .scalar(let text, _): texts.append(text)
      case .mapping(let entries, _):
        for entry in entries {
          texts.append(entry.key)
          collect(entry.value, into: &texts)
        }
      case .sequence(let items, _): for item in items { collect(item, into: &texts) }
      }
    }

    private static func replacing(_ node: YAMLOutputNode, _ change: (String) -> String) -> YAMLOutputNode {
      switch node {
      case .scalar(let text, let style): .scalar(change(text), style)
      case .mapping(let entries, let flow): .mapping(entries.map { (key: change($0.key), value: replacing($0.value, change)) }, flow: flow)
      case .sequence(let items, let flow): .sequence(items.map { replacing($0, change) }, flow: flow)
      }
    }
  }

  /// The YAML text libyaml's emitter writes for `root`, each scalar holding one of `quoting`
  /// written double-quoted.
  private static func emit(_ root: YAMLOutputNode, quoting: Set<Unicode.Scalar>) throws(YAMLWriteError) -> String {
    let sink = Sink()
    var emitter = yaml_emitter_t()
    guard yaml_emitter_initialize(&emitter) == 1 else { throw YAMLWriteError(problem: "cannot allocate an emitter") }
    defer { yaml_emitter_delete(&emitter) }
    let context = Unmanaged.passUnretained(sink).toOpaque()
    yaml_emitter_set_output(&emitter, { data, buffer, size in
      guard let data, let buffer else { return 0 }
      Unmanaged<Sink>.fromOpaque(data).takeUnretainedValue().bytes.append(contentsOf: UnsafeBufferPointer(start: buffer, count: size))
      return 1
    }, context)
    yaml_emitter_set_unicode(&emitter, 1)
    yaml_emitter_set_width(&emitter, -1)
    yaml_emitter_set_indent(&emitter, 2)
    yaml_emitter_set_break(&emitter, YAML_LN_BREAK)
    try withUnsafeMutablePointer(to: &emitter) { (pointer) throws(YAMLWriteError) in
      try emitDocument(root, with: EventWriter(emitter: pointer, quoting: quoting))
    }
    return String(decoding: sink.bytes, as: UTF8.self)
  }

  /// Emits the stream, one implicit document holding `root`, and flushes.
  private static func emitDocument(_ root: YAMLOutputNode, with writer: EventWriter) throws(YAMLWriteError) {
    try writer.emit { (event: inout yaml_event_t) in yaml_stream_start_event_initialize(&event, YAML_UTF8_ENCODING) }
    try writer.emit { (event: inout yaml_event_t) in yaml_document_start_event_initialize(&event, nil, nil, nil, 1) }
    try writer.node(root)
    try writer.emit { (event: inout yaml_event_t) in yaml_document_end_event_initialize(&event, 1) }
    try writer.emit { (event: inout yaml_event_t) in yaml_stream_end_event_initialize(&event) }
    guard yaml_emitter_flush(writer.emitter) == 1 else { throw YAMLWriteError(problem: "cannot flush the output") }
  }

  /// Collects the emitter's output.
  private final class Sink {
    var bytes: [UInt8] = []
  }

  /// Emits events for nodes; holds the emitter while the document is written.
  private struct EventWriter {
    let emitter: UnsafeMutablePointer<yaml_emitter_t>
    /// A scalar holding one of these is written double-quoted, whatever its style.
    let quoting: Set<Unicode.Scalar>

    /// Initialises one event with `make` and emits it (the emitter takes ownership of it).
    func emit(_ make: (inout yaml_event_t) -> Int32) throws(YAMLWriteError) {
      var event = yaml_event_t()
      guard make(&event) == 1 else { throw YAMLWriteError(problem: "cannot create an event") }
      guard yaml_emitter_emit(emitter, &event) == 1 else {
        throw YAMLWriteError(problem: emitter.pointee.problem.map { String(cString: $0) } ?? "unknown emitter error")
      }
    }

    func node(_ node: YAMLOutputNode) throws(YAMLWriteError) {
      switch node {
      case let .scalar(text, style):
        try scalar(text, style: style)
      case let .mapping(entries, flow):
        let style = flow ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE
        try emit { (event: inout yaml_event_t) in yaml_mapping_start_event_initialize(&event, nil, nil, 1, style) }
        for entry in entries {
          try scalar(entry.key, style: .plain)
          try self.node(entry.value)
        }
        try emit { (event: inout yaml_event_t) in yaml_mapping_end_event_initialize(&event) }
      case let .sequence(items, flow):
        let style = flow ? YAML_FLOW_SEQUENCE_STYLE : YAML_BLOCK_SEQUENCE_STYLE
        try emit { (event: inout yaml_event_t) in yaml_sequence_start_event_initialize(&event, nil, nil, 1, style) }
        for item in items { try self.node(item) }
        try emit { (event: inout yaml_event_t) in yaml_sequence_end_event_initialize(&event) }
      }
    }

    func scalar(_ text: String, style: YAMLScalar.Style) throws(YAMLWriteError) {
      let style = !quoting.isEmpty && text.unicodeScalars.contains(where: quoting.contains) ? .doubleQuoted : style
      // A trailing NUL keeps the buffer non-empty (libyaml asserts a non-null value) without being written.
      var bytes = Array(text.utf8) + [0]
      let count = Int32(bytes.count - 1)
      let cStyle = style.libyamlStyle
      try emit { (event: inout yaml_event_t) in
        bytes.withUnsafeMutableBufferPointer { buffer in
          yaml_scalar_event_initialize(&event, nil, nil, buffer.baseAddress, count, 1, 1, cStyle)
        }
      }
    }
  }
}

extension YAMLScalar.Style {
  fileprivate var libyamlStyle: yaml_scalar_style_t {
    switch self {
    case .plain: YAML_PLAIN_SCALAR_STYLE
    case .singleQuoted: YAML_SINGLE_QUOTED_SCALAR_STYLE
    case .doubleQuoted: YAML_DOUBLE_QUOTED_SCALAR_STYLE
    case .literal: YAML_LITERAL_SCALAR_STYLE
    case .folded: YAML_FOLDED_SCALAR_STYLE
    }
  }
}
