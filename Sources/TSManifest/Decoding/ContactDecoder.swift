import TSModel

/// A contact list as decoded: the contacts that passed their rules, how many items the list holds
/// as written (including those left out after an error), and what the rules reported.
struct DecodedContactList {
  var contacts: [ManifestContact] = []
  var written = 0
  var diagnostics: [Diagnostic] = []
}

extension ManifestDecoder {
  static let contactKeys = CapturedContact.Key.allCases.map(\.text)

  /// A list of contacts (`contacts` or `emergency.contacts`), each checked by the contact rules,
  /// then the list by `DuplicateContactRule`. A list the reader captured (`ContactListCapture`)
  /// stands in the tree as an empty sequence, and `ContactListDecoder` has already decoded it,
  /// with the same rules and messages as items read from the tree.
  mutating func contactList(_ node: YAMLNode, path: String) -> (contacts: [ManifestContact], written: Int)? {
    guard let items = context.sequence(node, path: path, expected: "contacts, e.g. - {name: Alex, phone: \"+15550100\"}") else {
      return nil
    }
    if items.isEmpty, node.aliasPosition == nil, let decoded = decodedContactLists[CapturedContact.Mark(node.position)] {
      context.diagnostics += decoded.diagnostics
      return (decoded.contacts, decoded.written)
    }
    var contacts: [ManifestContact] = []
    contacts.reserveCapacity(items.count)
    let list: ManifestRemoval.List = path == "contacts" ? .contacts : .emergencyContacts
    var removed: [ManifestRemoval] = []
    var removedCount = 0
    // A contact split over two dashes is one error at the second item, not one for each.
    var split: Set<Int> = []
    for index in items.indices.dropFirst() where !split.contains(index - 1) {
      if let message = MistakeHints.splitContact(first: items[index - 1].keyTexts, second: items[index].keyTexts) {
        context.error(MistakeHints.listDash(before: items[index].position, in: source), DecodingContext.item(path, index), message)
        split.insert(index)
      }
    }
    for (index, item) in items.enumerated() {
      if split.contains(index) || split.contains(index + 1) { continue }
      let itemPath = DecodingContext.item(path, index)
      if removal(item, list: list, path: itemPath, into: &removed) {
        removedCount += 1
        continue
      }
      if let reference = contactReference(item, path: itemPath, isEmergency: list == .emergencyContacts) {
        if let reference { contacts.append(reference) }
        continue
      }
      // A bare name under emergency.contacts: most likely a contact of `contacts:` meant by name.
      if list == .emergencyContacts, let text = item.scalar?.value, !item.isNull {
        context.error(item.position, itemPath, "expected a mapping with keys name, phone, short_name, found text; to name a contact "
          + "declared under contacts:, write - {contact: \(text)}, or write it out: - {name: \(text), phone: \"…\"}")
        continue
      }
      guard let fields = context.mapping(item, path: itemPath, keys: Self.contactKeys) else { continue }
      if let contact = ContactDecoding.contact(TreeContactItem(node: item, fields: fields), path: itemPath, context: &context) {
        contacts.append(contact)
      }
    }
    // References are checked once resolved (`ContactReferences`): their phones are not known yet.
    DuplicateContactRule.check(contacts.filter { $0.reference == nil }, written: context.cutNames, into: &context.diagnostics)
    context.cutNames = [:]
    checkRemovals(removed, given: contacts.map(\.name.value))
    removals += removed
    return (contacts, items.count - removedCount)
  }
}

/// Decodes the items of captured contact lists as the reader hands them over
/// (`CapturedContactSink`), so that no list of captured items is kept; `ManifestDecoder` picks
/// each list up where the tree holds its empty stand-in.
///
/// Used by one reader on one thread, so its state is declared `@exclusivity(unchecked)`: the
/// run-time checks of each access to a class's stored properties cost more than the bookkeeping
/// they guard.
final class ContactListDecoder: CapturedContactSink {
  @exclusivity(unchecked) private(set) var lists: [CapturedContact.Mark: DecodedContactList] = [:]
  @exclusivity(unchecked) private var context: DecodingContext
  @exclusivity(unchecked) private var current: (start: CapturedContact.Mark, path: String, list: DecodedContactList)?
  /// An item holding only a name or only a phone, kept until the next one shows whether the two
  /// are one contact split over two dashes (`MistakeHints.splitContact`).
  @exclusivity(unchecked) private var held: (item: CapturedContact, index: Int)?

  /// The file's text (`MistakeHints.listDash`).
  private let source: [UInt8]

  /// A decoder for lists of `file`, whose text is `source`.
  init(file: String, source: [UInt8]) {
    context = DecodingContext(file: file)
    self.source = source
  }

  func startList(at start: CapturedContact.Mark, path: String, capacity: Int) {
    var list = DecodedContactList()
    list.contacts.reserveCapacity(capacity)  // address space; pages are touched as contacts come
    current = (start, path, list)
    held = nil
    context.diagnostics = []
  }

  func take(_ item: CapturedContact, index: Int) {
    guard current != nil else { return }
    current!.list.written += 1
    if let previous = held.take() {
      let keys = item.writtenFields.map(\.key.text)
      if let message = MistakeHints.splitContact(first: previous.item.writtenFields.map(\.key.text), second: keys) {
        context.error(MistakeHints.listDash(before: item.start.position(in: context.file), in: source),
                      DecodingContext.item(current!.path, index), message)
        return
      }
      decode(previous.item, index: previous.index)
    }
    if item.fieldCount == 1, item.holds(.name) || item.holds(.phone) {
      held = (item, index)
      return
    }
    decode(item, index: index)
  }

  private func decode(_ item: CapturedContact, index: Int) {
    let path = DecodingContext.item(current!.path, index)
    if let contact = ContactDecoding.contact(CapturedContactItem(item: item), path: path, context: &context) {
      current!.list.contacts.append(contact)
    }
  }

  func endList() {
    if let last = held.take(), current != nil { decode(last.item, index: last.index) }
    guard let ended = current.take() else { return }
    var list = ended.list
    DuplicateContactRule.check(list.contacts, written: context.cutNames, into: &context.diagnostics)
    context.cutNames = [:]
    list.diagnostics = context.diagnostics
    context.diagnostics = []
    lists[ended.start] = list
  }

  func reset() {
    lists = [:]
    current = nil
    held = nil
    context.diagnostics = []
    context.cutNames = [:]
  }
}

/// The rules of one contact, for an item of the tree or a captured one.
enum ContactDecoding {
  /// The contact of `item`, whose field path is `path`; `nil` after an error (in `context`).
  /// Field paths of the keys are built only for a diagnostic.
  static func contact(_ item: some ContactItem, path: String, context: inout DecodingContext) -> ManifestContact? {
    // Bound with `if let`, not `flatMap`: a closure over the optional result copied it, and its
    // strings' reference counts, twice per field.
    var isPlain = false
    var name: Located<String>?
    if let written = item.text(.name, path: path, required: true, isPlain: &isPlain, context: &context) {
      name = ContactNameRule.check(written, field: DecodingContext.join(path, "name"), into: &context.diagnostics)
      // A name cut: what was written, for the list's check of names cut alike.
      if let name, name.value != written.value { context.cutNames[path] = written.value }
    }
    var phone: Located<String>?
    if let written = item.text(.phone, path: path, required: true, isPlain: &isPlain, context: &context) {
      phone = PhoneNumberRule.check(written, isPlain: isPlain, field: DecodingContext.join(path, "phone"),
                                    into: &context.diagnostics)
    }
    var explicitShortName: Located<String>?
    if let written = item.text(.shortName, path: path, required: false, isPlain: &isPlain, context: &context) {
      explicitShortName = ShortNameRule.check(written, field: DecodingContext.join(path, "short_name"),
                                              into: &context.diagnostics).map { Located($0, at: written.position) }
    }
    guard let name, let phone else { return nil }
    var contact = ManifestContact(position: item.position(in: context.file), path: path, name: name, phone: phone,
                                  shortName: explicitShortName?.value ?? ShortNameRule.derive(from: name.value),
                                  shortNameIsExplicit: explicitShortName != nil)
    contact.shortNamePosition = explicitShortName?.position
    return contact
  }
}

/// A contact list item to decode: a mapping of the tree, or an item captured from libyaml's
/// events. `ContactDecoding.contact` is generic over the two, so each gets its own compiled copy.
protocol ContactItem {
  /// Where the contact stands, in `file`.
  func position(in file: String) -> SourcePosition

  /// The text written under `key`; `isPlain` is set to whether it is unquoted. A missing key is
  /// an error at the item (whose field path is `path`) when `required`, and a value that is not
  /// text (null, a list, a tag other than `!!str`) an error at the value (`DecodingContext.text`).
  func text(_ key: CapturedContact.Key, path: String, required: Bool, isPlain: inout Bool,
            context: inout DecodingContext) -> Located<String>?
}

/// A contact mapping of the tree, its unknown keys already reported.
struct TreeContactItem: ContactItem {
  let node: YAMLNode
  let fields: MappingFields

  /// A contact repeated through an alias (`- *c`) is placed at the alias, not at its anchor.
  func position(in file: String) -> SourcePosition { node.aliasPosition ?? node.position }

  func text(_ key: CapturedContact.Key, path: String, required: Bool, isPlain: inout Bool,
            context: inout DecodingContext) -> Located<String>? {
    guard let value = fields[key.text] else {
      if required { context.error(node.position, path, "\(key.text) is required") }
      return nil
    }
    guard let text = context.text(value, path: fields.path(key.text)) else { return nil }
    isPlain = value.scalar?.isPlain ?? false
    return Located(text, at: value.position)
  }
}

/// An item of a captured list. Its values are untagged scalars, so the only one that is not text
/// is a null.
struct CapturedContactItem: ContactItem {
  let item: CapturedContact

  func position(in file: String) -> SourcePosition { item.start.position(in: file) }

  func text(_ key: CapturedContact.Key, path: String, required: Bool, isPlain: inout Bool,
            context: inout DecodingContext) -> Located<String>? {
    guard let field = item[key] else {
      if required { context.error(position(in: context.file), path, "\(key.text) is required") }
      return nil
    }
    let position = field.valueStart.position(in: context.file)
    if field.value.isNullUntagged {
      _ = context.text(YAMLNode(.scalar(field.value), position: position, endPosition: field.valueEnd.position(in: context.file)),
                       path: DecodingContext.join(path, key.text))
      return nil
    }
    isPlain = field.value.isPlain
    return Located(field.value.value, at: position)
  }
}
