import TSModel

/// Within one contact list, the same (name, phone) twice is an error naming both lines; the
/// same phone under two names is a warning.
///
/// Source: sdk-facts.md §2.7 (the SDK does no de-duplication and the Example app identifies
/// contacts by phone number). Contacts are compared as stored: name after truncation, phone
/// without formatting.
enum DuplicateContactRule {
  static func check(_ contacts: [ManifestContact], into diagnostics: inout [Diagnostic]) {
    var byPair: [String: ManifestContact] = [:]
    var byPhone: [String: ManifestContact] = [:]
    for contact in contacts {
      let pair = contact.name.value + "\u{0}" + contact.phone.value
      if let first = byPair[pair] {
        diagnostics.append(.error(at: contact.position, field: contact.path,
          "duplicate contact \"\(contact.name.value)\" \(contact.phone.value): also listed on line \(first.position.line), column \(first.position.column)"))
        continue
      }
      byPair[pair] = contact
      if let first = byPhone[contact.phone.value] {
        diagnostics.append(.warning(at: contact.phone.position, field: "\(contact.path).phone",
          "\(contact.phone.value) is also the phone of \"\(first.name.value)\" on line \(first.position.line)"))
      } else {
        byPhone[contact.phone.value] = contact
      }
    }
  }
}
