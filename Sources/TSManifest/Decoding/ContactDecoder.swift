import TSModel

extension ManifestDecoder {
  static let contactKeys = CapturedContact.Key.allCases.map(\.text)

  /// A list of contacts (`contacts` or `emergency.contacts`), each checked by the contact rules,
  /// then the list by `DuplicateContactRule`. A list the reader captured (`ContactListCapture`)
  /// stands in the tree as an empty sequence; its items are read from `capturedContactLists`,
  /// with the same rules and messages as items read from the tree. Also returns how many items
  /// the list holds as written, including those left out after an error.
  mutating func contactList(_ node: YAMLNode, path: String) -> (contacts: [ManifestContact], written: Int)? {
    guard let items = context.sequence(node, path: path, expected: "contacts, e.g. - {name: Alex, phone: \"+15550100\"}") else {
      return nil
    }
    var contacts: [ManifestContact] = []
    var written = items.count
    if items.isEmpty, node.aliasPosition == nil, let captured = capturedContactLists[CapturedContact.Mark(node.position)] {
      contacts.reserveCapacity(captured.count)
      written = captured.count
      for index in captured.indices {
        let item = CapturedContactItem(list: captured, index: index)
        if let contact = contact(item, path: DecodingContext.item(path, index)) { contacts.append(contact) }
      }
    } else {
      contacts.reserveCapacity(items.count)
      for (index, item) in items.enumerated() {
        let itemPath = DecodingContext.item(path, index)
        guard let fields = context.mapping(item, path: itemPath, keys: Self.contactKeys) else { continue }
        if let contact = contact(TreeContactItem(node: item, fields: fields), path: itemPath) { contacts.append(contact) }
      }
    }
    DuplicateContactRule.check(contacts, into: &context.diagnostics)
    return (contacts, written)
  }

  /// The contact of `item`, whose field path is `path`; `nil` after an error. Field paths of the
  /// keys are built only for a diagnostic.
  private mutating func contact(_ item: some ContactItem, path: String) -> ManifestContact? {
    let name = item.text(.name, path: path, required: true, context: &context).flatMap {
      ContactNameRule.check($0.text, field: DecodingContext.join(path, "name"), into: &context.diagnostics)
    }
    let phone = item.text(.phone, path: path, required: true, context: &context).flatMap {
      PhoneNumberRule.check($0.text, isPlain: $0.isPlain, field: DecodingContext.join(path, "phone"),
                            into: &context.diagnostics)
    }
    var explicitShortName: String?
    if let written = item.text(.shortName, path: path, required: false, context: &context) {
      explicitShortName = ShortNameRule.check(written.text, field: DecodingContext.join(path, "short_name"),
                                              into: &context.diagnostics)
    }
    guard let name, let phone else { return nil }
    return ManifestContact(position: item.position(in: context.file), path: path, name: name, phone: phone,
                           shortName: explicitShortName ?? ShortNameRule.derive(from: name.value),
                           shortNameIsExplicit: explicitShortName != nil)
  }
}

/// A contact list item to decode: a mapping of the tree, or an item captured from libyaml's
/// events. `ManifestDecoder.contact` is generic over the two, so each gets its own compiled copy.
private protocol ContactItem {
  /// Where the contact stands, in `file`.
  func position(in file: String) -> SourcePosition

  /// The text written under `key` and whether it is unquoted. A missing key is an error at the
  /// item (whose field path is `path`) when `required`, and a value that is not text (null, a
  /// list, a tag other than `!!str`) an error at the value (`DecodingContext.text`).
  func text(_ key: CapturedContact.Key, path: String, required: Bool,
            context: inout DecodingContext) -> (text: Located<String>, isPlain: Bool)?
}

/// A contact mapping of the tree, its unknown keys already reported.
private struct TreeContactItem: ContactItem {
  let node: YAMLNode
  let fields: MappingFields

  /// A contact repeated through an alias (`- *c`) is placed at the alias, not at its anchor.
  func position(in file: String) -> SourcePosition { node.aliasPosition ?? node.position }

  func text(_ key: CapturedContact.Key, path: String, required: Bool,
            context: inout DecodingContext) -> (text: Located<String>, isPlain: Bool)? {
    guard let value = fields[key.text] else {
      if required { context.error(node.position, path, "\(key.text) is required") }
      return nil
    }
    return context.text(value, path: fields.path(key.text)).map { (Located($0, at: value.position), value.scalar?.isPlain ?? false) }
  }
}

/// An item of a captured list, by its index (so that reading a field copies the field, not the
/// item). Its values are untagged scalars, so the only one that is not text is a null.
private struct CapturedContactItem: ContactItem {
  let list: [CapturedContact]
  let index: Int

  func position(in file: String) -> SourcePosition { list[index].start.position(in: file) }

  func text(_ key: CapturedContact.Key, path: String, required: Bool,
            context: inout DecodingContext) -> (text: Located<String>, isPlain: Bool)? {
    guard let field = list[index][key] else {
      if required { context.error(position(in: context.file), path, "\(key.text) is required") }
      return nil
    }
    let position = field.valueStart.position(in: context.file)
    if field.value.isNullUntagged {
      _ = context.text(YAMLNode(.scalar(field.value), position: position, endPosition: field.valueEnd.position(in: context.file)),
                       path: DecodingContext.join(path, key.text))
      return nil
    }
    return (Located(field.value.value, at: position), field.value.isPlain)
  }
}
