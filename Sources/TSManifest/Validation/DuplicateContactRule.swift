import TSModel

/// Within one contact list, the same (name, phone) twice is an error naming both lines; the
/// same phone under two names is a warning.
///
/// Source: docs/platforms.md "Contacts" (the SDK does no de-duplication and the Example app identifies
/// contacts by phone number). Contacts are compared as stored: name after truncation, phone
/// without formatting.
enum DuplicateContactRule {
  /// `written`: the names as written of the contacts whose names were cut, by field path
  /// (`DecodingContext.cutNames`).
  static func check(_ contacts: [ManifestContact], written: [String: String] = [:], into diagnostics: inout [Diagnostic]) {
    // The same (name, phone) twice has the same phone, so one table by phone is enough: it holds
    // the first contact listed with each phone, and `sharing` chains the later ones (not
    // repeated) in list order. Only the phones are hashed; most chains are one contact long.
    var firstWithPhone = [String: Int](minimumCapacity: contacts.count)
    var sharing = [Int](repeating: -1, count: contacts.count)
    /// The first contact listed with the phone of `slot` (its table entry, `-1` when new, which
    /// then becomes `index`): one lookup per contact, whether or not the phone is known.
    func claim(_ slot: inout Int, for index: Int) -> Int? {
      guard slot < 0 else { return slot }
      slot = index
      return nil
    }
    for index in contacts.indices {
      guard let first = claim(&firstWithPhone[contacts[index].phone.value, default: -1], for: index) else { continue }
      var last = first
      var repeated: Int? = contacts[first].name.value == contacts[index].name.value ? first : nil
      while repeated == nil, sharing[last] >= 0 {
        last = sharing[last]
        if contacts[last].name.value == contacts[index].name.value { repeated = last }
      }
      let contact = contacts[index]
      if let repeated {
        let position = contacts[repeated].position
        diagnostics.append(.error(at: contact.position, field: contact.path,
          "duplicate contact \"\(contact.name.value)\" \(contact.phone.value): also listed on line \(position.line), column \(position.column)"))
        continue
      }
      sharing[last] = index
      diagnostics.append(.warning(at: contact.phone.position, field: "\(contact.path).phone",
        "\(contact.phone.value) is also the phone of \"\(contacts[first].name.value)\" on line \(contacts[first].position.line)"))
    }
    if !written.isEmpty { cutAlike(contacts, written: written, into: &diagnostics) }
  }

  /// Two names written differently that the watch keeps alike (both cut to the same 32 bytes;
  /// `written` gives what was written, by field path): a warning at the later one, as the planner
  /// gives for a platform that cuts shorter (fresh-eyes fe96 #6: no word, and two identical names
  /// on the watch).
  static func cutAlike(_ contacts: [ManifestContact], written: [String: String], into diagnostics: inout [Diagnostic]) {
    // Names are cut only when too long: usually none or a few, so they are kept in a list.
    var cut: [(contact: ManifestContact, written: String)] = []
    for contact in contacts {
      guard let name = written[contact.path] else { continue }
      if let other = cut.first(where: { $0.contact.name.value == contact.name.value && $0.written != name }) {
        diagnostics.append(.warning(at: contact.name.position, field: "\(contact.path).name",
          "\"\(name)\" and \"\(other.written)\" (line \(other.contact.name.position.line)) are both stored as "
            + "\"\(contact.name.value)\", so the watch, its plans and drift tell them apart only by phone number; "
            + "make them differ within the first \(ContactNameRule.maxBytes) bytes"))
      } else {
        cut.append((contact, name))
      }
    }
  }
}
