import TSModel

/// The two list items that are not entries of their own: a removal (`- {name: Lunch, remove:
/// true}`, in `reminders.custom`, `contacts` and `emergency.contacts`) and a reference to a
/// contact (`- {contact: Ward A desk}`, in `emergency.contacts`). docs/manifest.md "Removing an
/// inherited entry" and "One contact in both lists".
extension ManifestDecoder {
  /// Whether `item` is a removal; if so it is read (its problems reported) and, when valid, added
  /// to `removals`. A removal holds only `name` and `remove: true`.
  mutating func removal(_ item: YAMLNode, list: ManifestRemoval.List, path: String, into removals: inout [ManifestRemoval]) -> Bool {
    guard case .mapping(let entries) = item.content, item.hasKey("remove") else { return false }
    var name: Located<String>?
    var isRemoved = false
    for entry in entries {
      let key = entry.keyText ?? ""
      let field = DecodingContext.join(path, key)
      switch key {
      case "name":
        if let text = context.text(entry.value, path: field) { name = Located(text, at: entry.value.position) }
      case "remove":
        if let flag = context.bool(entry.value, path: field) {
          if flag {
            isRemoved = true
          } else {
            context.error(entry.value.position, field, "remove: false removes nothing; leave the key out, or write remove: true")
          }
        }
      default:
        context.error(entry.key.position, field,
          "an entry with remove: true holds only its name (it removes the \(list == .customReminders ? "reminder" : "contact") of that name); leave out \(key)")
      }
    }
    if name == nil, !item.hasKey("name") {
      context.error(item.position, path, "name is required with remove: true (the name of the entry to remove)")
    }
    if let name, isRemoved { removals.append(ManifestRemoval(list: list, name: name, path: path)) }
    return true
  }

  /// The contact `item` refers to (`{contact: NAME}`), unresolved (`ManifestContact.reference`);
  /// `nil` when `item` is not a reference. Outside `emergency.contacts` a reference is an error.
  mutating func contactReference(_ item: YAMLNode, path: String, isEmergency: Bool) -> ManifestContact?? {
    guard case .mapping(let entries) = item.content, item.hasKey("contact") else { return nil }
    guard isEmergency else {
      context.error(item.position, path,
        "contact: refers to a contact of this list, so it is written under emergency.contacts; here write name and phone")
      return .some(nil)
    }
    var reference: Located<String>?
    for entry in entries {
      let key = entry.keyText ?? ""
      let field = DecodingContext.join(path, key)
      if key == "contact" {
        if let text = context.text(entry.value, path: field) { reference = Located(text, at: entry.value.position) }
      } else {
        context.error(entry.key.position, field,
          "a reference (contact: NAME) takes the contact's name, phone and short name from contacts:; leave out \(key), or write the contact out without contact:")
      }
    }
    guard let reference else { return .some(nil) }
    var contact = ManifestContact(position: item.aliasPosition ?? item.position, path: path, name: reference,
                                  phone: Located("", at: reference.position), shortName: "", shortNameIsExplicit: false)
    contact.reference = reference
    return .some(contact)
  }

  /// An entry of `list` both given and removed by name in the same list is an error at the removal.
  mutating func checkRemovals(_ removals: [ManifestRemoval], given names: [String]) {
    let given = Set(names)
    for removal in removals where given.contains(removal.name.value) {
      context.error(removal.name.position, removal.path,
        "\"\(removal.name.value)\" is also given in this list; keep the entry or its removal, not both")
    }
  }
}
