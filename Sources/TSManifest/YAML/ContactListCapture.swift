internal import CYaml
import TSModel

/// A contact of a list (`contacts`, `emergency.contacts`) read straight from libyaml's events:
/// the spans of the item and of its keys and scalar values, and the values' text and style.
///
/// A manifest is mostly contacts, and building a `YAMLNode` tree for each (a node per key and
/// value, an entry array per item, a frame per mapping) and then reading the tree back field by
/// field cost as much as libyaml's own parse. `YAMLComposer` captures a list instead when every
/// item in it is a plain mapping of `name`, `phone` and `short_name` to untagged scalars (the
/// shape nearly every manifest has): the tree holds an empty sequence in the list's place, and
/// each item goes, as it is read, to a `CapturedContactSink` (`ManifestLoader` decodes it at once
/// with `ContactListDecoder`) or, without one, into `YAMLReadResult.capturedContactLists`.
///
/// Any other event inside the list (an anchor, an alias, a tag, another key, a key written
/// twice, a nested collection, an item that is not a mapping) abandons the capture, and the
/// reader reads the document again without capturing, so such lists get every check and message
/// of the tree path. `YAMLReadResult.expandingCapturedLists()` puts captured
/// items back as nodes; that the result is the tree read without capturing, and that a manifest
/// loads the same either way, is checked on every input of the `manifest` fuzz target and by
/// `ContactListCaptureTests`.
struct CapturedContact: Sendable, Equatable {
  /// A libyaml mark as a 1-based line and column (columns in Unicode scalars), without the file
  /// name, which the reader holds once.
  struct Mark: Hashable, Sendable {
    var line: Int32
    var column: Int32

    /// Line 0, column 0: no place in a file (an unused slot).
    static let none = Mark(line: 0, column: 0)

    init(line: Int32, column: Int32) {
      (self.line, self.column) = (line, column)
    }

    /// The mark of `position` (clamped as `YAMLNode` clamps its positions).
    init(_ position: SourcePosition) {
      (line, column) = (Int32(clamping: position.line), Int32(clamping: position.column))
    }

    /// The 1-based mark of libyaml's 0-based one.
    init(_ mark: yaml_mark_t) {
      (line, column) = (Int32(clamping: mark.line + 1), Int32(clamping: mark.column + 1))
    }

    /// The position this mark names in `file`.
    func position(in file: String) -> SourcePosition {
      SourcePosition(file: file, line: Int(line), column: Int(column))
    }
  }

  /// The keys a captured contact may hold (`ManifestDecoder.contactKeys`).
  enum Key: UInt8, CaseIterable, Sendable {
    case name, phone, shortName

    /// The key as written in a manifest.
    var text: String { spelling.description }

    /// Where the key ends when written, plain, from `start`: its length further on the same line
    /// (it is ASCII, one column per byte).
    func end(from start: Mark) -> Mark {
      Mark(line: start.line, column: start.column + Int32(spelling.utf8CodeUnitCount))
    }

    private var spelling: StaticString {
      switch self {
      case .name: "name"
      case .phone: "phone"
      case .shortName: "short_name"
      }
    }

    /// The key whose text is the `count` bytes at `bytes`, if any; compared byte by byte, so no
    /// string is made for a key.
    init?(bytes: UnsafePointer<UInt8>, count: Int) {
      let key: Key? = switch (count, bytes[0]) {
      case (4, UInt8(ascii: "n")): .name
      case (5, UInt8(ascii: "p")): .phone
      case (10, UInt8(ascii: "s")): .shortName
      default: nil
      }
      guard let key else { return nil }
      let spelling = key.spelling.utf8Start
      for index in 1..<count where bytes[index] != spelling[index] { return nil }
      self = key
    }
  }

  /// One `key: value` pair of the item.
  /// Kept small (a list of 5,000 contacts holds 15,000): the key's end is not stored, since a
  /// captured key is a plain one-line ASCII scalar, which ends its length after its start.
  struct Field: Sendable, Equatable {
    /// The value's text and style.
    var value: YAMLScalar
    /// The pair's place among the item's pairs, in the order written (0, 1, 2).
    var rank: UInt8
    var keyStart: Mark
    var valueStart: Mark
    var valueEnd: Mark
  }

  /// Where the item's mapping starts and ends.
  var start: Mark
  var end: Mark
  /// Whether the item was written in flow style (`{name: …, phone: …}`).
  var isFlow: Bool
  // One slot per key, stored in place (an array would be an allocation per contact).
  private var name: Field?
  private var phone: Field?
  private var shortName: Field?
  /// How many pairs the item holds.
  private(set) var fieldCount: UInt8 = 0

  /// An item that starts at `start`, with no pairs yet.
  init(start: Mark, isFlow: Bool) {
    self.start = start
    self.end = start
    self.isFlow = isFlow
  }

  /// Bit `key.rawValue` set for each key the item holds.
  private var keysHeld: UInt8 = 0

  /// Whether the item holds a pair of `key`.
  func holds(_ key: Key) -> Bool { keysHeld & 1 << key.rawValue != 0 }

  /// The pair written under `key`, if any.
  subscript(key: Key) -> Field? {
    switch key {
    case .name: name
    case .phone: phone
    case .shortName: shortName
    }
  }

  /// Adds the pair of `key`, which the item does not hold yet.
  mutating func add(_ key: Key, _ field: Field) {
    switch key {
    case .name: name = field
    case .phone: phone = field
    case .shortName: shortName = field
    }
    keysHeld |= 1 << key.rawValue
    fieldCount += 1
  }

  /// The pairs in the order written.
  var writtenFields: [(key: Key, field: Field)] {
    Key.allCases.compactMap { key in self[key].map { (key, $0) } }.sorted { $0.field.rank < $1.field.rank }
  }

  /// The scalar node of a key that starts at `start`, as the tree path builds it.
  static func keyNode(_ key: Key, start: Mark, file: String) -> YAMLNode {
    YAMLNode(.scalar(YAMLScalar(key.text, style: .plain)), position: start.position(in: file),
             endPosition: key.end(from: start).position(in: file))
  }

  /// The item's pairs as the tree path builds them.
  func entries(file: String) -> [YAMLMappingEntry] {
    writtenFields.map { key, field in
      YAMLMappingEntry(key: Self.keyNode(key, start: field.keyStart, file: file),
                       value: YAMLNode(.scalar(field.value), position: field.valueStart.position(in: file),
                                       endPosition: field.valueEnd.position(in: file)))
    }
  }

  /// The item as the tree path builds it.
  func node(file: String) -> YAMLNode {
    YAMLNode(.mapping(entries(file: file)), position: start.position(in: file), endPosition: end.position(in: file),
             isFlow: isFlow)
  }
}

/// The state of a contact list being captured: the items read, the open item and its key
/// awaiting a value. Stored in the composer as is (not in an optional) and changed in place: a
/// copy of the state per event cost more than building the nodes.
struct ContactListCapture {
  /// The fewest bytes a contact item of a list takes: `- {name: A, phone: 1}` and a line end
  /// (fewer, for an item that lacks a key, only means the list may still grow).
  static let minimumItemBytes = 24
  /// Whether a list is being captured.
  var isActive = false
  var items: [CapturedContact] = []
  /// The open item, when `isInItem`.
  var item = CapturedContact(start: CapturedContact.Mark.none, isFlow: false)
  var isInItem = false
  /// The open item's key whose value has not arrived yet, and where it starts.
  var pendingKey: CapturedContact.Key?
  var pendingKeyStart = CapturedContact.Mark.none
  /// How many items of the list were handed to the sink.
  var itemCount = 0
}

/// Takes the items of captured contact lists as they are read, so that no list of captured
/// items is kept: `ManifestLoader` decodes each at once (`ContactListDecoder`). When a capture
/// is abandoned the reader calls `reset` and reads the document again without capturing;
/// documents whose contact lists all have the plain shape, nearly all, are read once.
protocol CapturedContactSink: AnyObject {
  /// A list starts at `start`, with field path `path` (`contacts`, `emergency.contacts`); it
  /// may hold up to about `capacity` items.
  func startList(at start: CapturedContact.Mark, path: String, capacity: Int)
  /// The next item of the list started last.
  func take(_ item: CapturedContact, index: Int)
  /// The list started last ends.
  func endList()
  /// Forgets every list: the document is read again through the tree.
  func reset()
}

extension YAMLComposer {
  /// Starts capturing the sequence just opened when it stands where the manifest holds a contact
  /// list (`contacts` in the root mapping, or in the root's `emergency` mapping) and neither it
  /// nor a collection around it has a tag or an anchor (an anchored collection is copied by its
  /// aliases, and a copy must hold the items, not a stand-in).
  mutating func startCaptureIfContactList(bytesLeft: Int) {
    guard let list = current, !list.isMapping, list.tag == nil, list.anchor == nil,
          case .key("contacts") = list.label,
          parents.allSatisfy({ $0.isMapping && $0.tag == nil && $0.anchor == nil }) else { return }
    let path: String
    switch parents.count {
    case 1: path = "contacts"
    case 2:
      guard case .key("emergency") = parents[1].label else { return }
      path = "emergency.contacts"
    default: return
    }
    capture.isActive = true
    // Room for as many items as the rest of the file can hold (an item takes at least
    // `minimumItemBytes`), so the list is never copied to grow: copies touched twice the memory,
    // and each page first touched is a page fault, which cost more than the copy. Room reserved
    // and not used is address space only (pages are faulted in when first written).
    let capacity = bytesLeft / ContactListCapture.minimumItemBytes
    if let sink = contactSink {
      sink.startList(at: CapturedContact.Mark(list.start), path: path, capacity: capacity)
    } else {
      capture.items.reserveCapacity(capacity)
    }
  }

  /// Offers one event to the capture under way; `false` when a captured list cannot hold it:
  /// the capture is then abandoned (`mustReadAgain`).
  /// Counts nodes against `limits.maxNodes` at the same events as the tree path, so a document
  /// that is too large stops at the same place with the same message.
  mutating func takeCaptured(_ event: borrowing yaml_event_t) throws(YAMLComposeError) -> Bool {
    let start = CapturedContact.Mark(event.start_mark)
    let file = self.file
    switch event.type {
    case YAML_MAPPING_START_EVENT:
      let data = event.data.mapping_start
      // One level deeper than the list, within the bound (the tree path reports it otherwise).
      guard !capture.isInItem, data.tag == nil, data.anchor == nil, parents.count + 2 <= limits.maxDepth else { break }
      try count(1, at: start.position(in: file))
      capture.item = CapturedContact(start: start, isFlow: data.style == YAML_FLOW_MAPPING_STYLE)
      capture.isInItem = true
      return true
    case YAML_SCALAR_EVENT:
      let data = event.data.scalar
      guard capture.isInItem, data.tag == nil, data.anchor == nil else { break }
      let end = CapturedContact.Mark(event.end_mark)
      if let key = capture.pendingKey {
        try count(1, at: start.position(in: file))
        let text = data.value.map { String(decoding: UnsafeBufferPointer(start: $0, count: data.length), as: UTF8.self) } ?? ""
        capture.item.add(key, CapturedContact.Field(
          value: YAMLScalar(text, style: YAMLScalar.Style(data.style)), rank: capture.item.fieldCount,
          keyStart: capture.pendingKeyStart, valueStart: start, valueEnd: end))
        capture.pendingKey = nil
      } else {
        guard data.style == YAML_PLAIN_SCALAR_STYLE, let bytes = data.value, data.length > 0,
              let key = CapturedContact.Key(bytes: bytes, count: data.length), !capture.item.holds(key),
              key.end(from: start) == end else { break }
        try count(1, at: start.position(in: file))
        (capture.pendingKey, capture.pendingKeyStart) = (key, start)
      }
      return true
    case YAML_MAPPING_END_EVENT:
      guard capture.isInItem, capture.pendingKey == nil else { break }
      capture.item.end = CapturedContact.Mark(event.end_mark)
      var item = CapturedContact(start: .none, isFlow: false)
      swap(&item, &capture.item)  // moved into the list, not copied
      if let sink = contactSink {
        sink.take(item, index: capture.itemCount)
      } else {
        capture.items.append(item)
      }
      capture.itemCount += 1
      capture.isInItem = false
      return true
    case YAML_SEQUENCE_END_EVENT:
      guard !capture.isInItem, let start = current?.start else { break }
      if let sink = contactSink { sink.endList() } else { capturedContactLists[CapturedContact.Mark(start)] = capture.items }
      capture = ContactListCapture()
      close(at: CapturedContact.Mark(event.end_mark).position(in: file))  // the list's empty stand-in
      return true
    default:
      break
    }
    // Items already read cannot go back into the tree (they may have gone to the sink): the
    // document is read again without capturing.
    capture = ContactListCapture()
    mustReadAgain = true
    return false
  }
}

extension YAMLScalar.Style {
  /// The style of a libyaml scalar style.
  init(_ style: yaml_scalar_style_t) {
    switch style {
    case YAML_SINGLE_QUOTED_SCALAR_STYLE: self = .singleQuoted
    case YAML_DOUBLE_QUOTED_SCALAR_STYLE: self = .doubleQuoted
    case YAML_LITERAL_SCALAR_STYLE: self = .literal
    case YAML_FOLDED_SCALAR_STYLE: self = .folded
    default: self = .plain
    }
  }
}
