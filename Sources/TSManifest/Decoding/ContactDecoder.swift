import TSModel

extension ManifestDecoder {
  static let contactKeys = CapturedContact.Key.allCases.map(\.text)

  /// A list of contacts (`contacts` or `emergency.contacts`), each checked by the contact rules,
  /// then the list by `DuplicateContactRule`. A list the reader captured (`ContactListCapture`)
  /// stands in the tree as an empty sequence; its items are read from `capturedContactLists`,
  /// with the same rules and messages as items read from the tree.
  mutating func contactList(_ node: YAMLNode, path: String) -> [ManifestContact]? {
    guard let items = context.sequence(node, path: path, expected: "contacts, e.g. - {name: Alex, phone: \"+15550100\"}") else {
      return nil
    }
    var contacts: [ManifestContact] = []
    if items.isEmpty, node.aliasPosition == nil, let captured = capturedContactLists[CapturedContact.Mark(node.position)] {
      contacts.reserveCapacity(captured.count)
      for index in captured.indices {
        if let contact = contact(.captured(captured, index), path: DecodingContext.item(path, index)) { contacts.append(contact) }
      }
    } else {
      contacts.reserveCapacity(items.count)
      for (index, item) in items.enumerated() {
        let itemPath = DecodingContext.item(path, index)
        guard let fields = context.mapping(item, path: itemPath, keys: Self.contactKeys) else { continue }
        if let contact = contact(.node(item, fields), path: itemPath) { contacts.append(contact) }
      }
    }
    DuplicateContactRule.check(contacts, into: &context.diagnostics)
    return contacts
  }

  /// A contact list item to decode: a mapping of the tree (its unknown keys already reported), or
  /// an item captured from libyaml's events (the list and the item's index, so that reading a
  /// field copies the field, not the item).
  enum ContactItem {
    case node(YAMLNode, MappingFields)
    case captured([CapturedContact], Int)
  }

  /// The contact of `item`, whose field path is `path`; `nil` after an error. Field paths of the
  /// keys are built only for a diagnostic.
  private mutating func contact(_ item: ContactItem, path: String) -> ManifestContact? {
    let name = text(.name, of: item, path: path, required: true).flatMap {
      ContactNameRule.check($0.text, field: DecodingContext.join(path, "name"), into: &context.diagnostics)
    }
    let phone = text(.phone, of: item, path: path, required: true).flatMap {
      PhoneNumberRule.check($0.text, isPlain: $0.isPlain, field: DecodingContext.join(path, "phone"),
                            into: &context.diagnostics)
    }
    var explicitShortName: String?
    if let written = text(.shortName, of: item, path: path, required: false) {
      explicitShortName = ShortNameRule.check(written.text, field: DecodingContext.join(path, "short_name"),
                                              into: &context.diagnostics)
    }
    guard let name, let phone else { return nil }
    let position = switch item {
    // A contact repeated through an alias (`- *c`) is placed at the alias, not at its anchor.
    case .node(let node, _): node.aliasPosition ?? node.position
    case .captured(let list, let index): list[index].start.position(in: context.file)
    }
    return ManifestContact(position: position, path: path, name: name, phone: phone,
                           shortName: explicitShortName ?? ShortNameRule.derive(from: name.value),
                           shortNameIsExplicit: explicitShortName != nil)
  }

  /// The text written under `key` and whether it is unquoted; a missing key is an error at the
  /// item when `required`, and a value that is not text (null, a list, a tag other than `!!str`)
  /// an error at the value (`DecodingContext.text`).
  private mutating func text(_ key: CapturedContact.Key, of item: ContactItem, path: String,
                             required: Bool) -> (text: Located<String>, isPlain: Bool)? {
    switch item {
    case .node(let node, let fields):
      guard let value = fields[key.text] else {
        if required { context.error(node.position, path, "\(key.text) is required") }
        return nil
      }
      return context.text(value, path: fields.path(key.text)).map { (Located($0, at: value.position), value.scalar?.isPlain ?? false) }
    case .captured(let list, let index):
      guard let field = list[index][key] else {
        if required { context.error(list[index].start.position(in: context.file), path, "\(key.text) is required") }
        return nil
      }
      let position = field.valueStart.position(in: context.file)
      if field.value.isNullUntagged {  // the only value of a captured item that is not text
        _ = context.text(YAMLNode(.scalar(field.value), position: position, endPosition: field.valueEnd.position(in: context.file)),
                         path: DecodingContext.join(path, key.text))
        return nil
      }
      return (Located(field.value.value, at: position), field.value.isPlain)
    }
  }
}
