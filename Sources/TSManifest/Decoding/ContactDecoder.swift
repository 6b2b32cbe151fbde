import TSModel

extension ManifestDecoder {
  static let contactKeys = ["name", "phone", "short_name"]

  /// A list of contacts (`contacts` or `emergency.contacts`), each checked by the contact rules,
  /// then the list by `DuplicateContactRule`.
  mutating func contactList(_ node: YAMLNode, path: String) -> [ManifestContact]? {
    guard let items = context.sequence(node, path: path, expected: "contacts, e.g. - {name: Alex, phone: \"+15550100\"}") else {
      return nil
    }
    var contacts: [ManifestContact] = []
    contacts.reserveCapacity(items.count)
    for (index, item) in items.enumerated() {
      if let contact = contact(item, path: DecodingContext.item(path, index)) { contacts.append(contact) }
    }
    DuplicateContactRule.check(contacts, into: &context.diagnostics)
    return contacts
  }

  private mutating func contact(_ node: YAMLNode, path: String) -> ManifestContact? {
    guard let fields = context.mapping(node, path: path, keys: Self.contactKeys) else { return nil }
    let namePath = fields.path("name"), phonePath = fields.path("phone")
    let name = requiredText(fields, "name", field: namePath, in: node, path: path).flatMap {
      ContactNameRule.check($0, field: namePath, into: &context.diagnostics)
    }
    let phone = requiredText(fields, "phone", field: phonePath, in: node, path: path).flatMap {
      PhoneNumberRule.check($0, isPlain: fields["phone"]?.scalar?.isPlain ?? false, field: phonePath,
                            into: &context.diagnostics)
    }
    var explicitShortName: String?
    if let node = fields["short_name"], let text = context.text(node, path: fields.path("short_name")) {
      explicitShortName = ShortNameRule.check(Located(text, at: node.position), field: fields.path("short_name"),
                                              into: &context.diagnostics)
    }
    guard let name, let phone else { return nil }
    // A contact repeated through an alias (`- *c`) is placed at the alias, not at its anchor.
    return ManifestContact(position: node.aliasPosition ?? node.position, path: path, name: name, phone: phone,
                           shortName: explicitShortName ?? ShortNameRule.derive(from: name.value),
                           shortNameIsExplicit: explicitShortName != nil)
  }

  /// The text of a required key (`field` is its path); a missing key is an error at the mapping.
  mutating func requiredText(_ fields: MappingFields, _ key: String, field: String, in node: YAMLNode,
                             path: String) -> Located<String>? {
    guard let value = fields[key] else {
      context.error(node.position, path, "\(key) is required")
      return nil
    }
    return context.text(value, path: field).map { Located($0, at: value.position) }
  }
}
