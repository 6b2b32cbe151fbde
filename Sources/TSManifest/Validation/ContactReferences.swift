import TSModel

/// Resolves the emergency contacts written as references (`- {contact: Ward A desk}`,
/// docs/manifest.md "One contact in both lists"): each takes the name, phone and short name of
/// the contact of that name declared under `contacts:`, so one edit of that contact changes both
/// lists.
///
/// A reference names a declaration, not what the watch stores: in a fleet the declarations are
/// those of every manifest merged for the watch (its layers, then its own manifest; the last
/// declaration of a name wins), even when a later one removes the contact from the `contacts`
/// list (an `npk` watch stores no regular contacts, yet its emergency list can name the desk).
public enum ContactReferences {
  /// Warnings for emergency contacts written out (not references) whose name a contact under
  /// `contacts:` (`declared`) also has, with another phone number: a typo in one of the two is
  /// the number an SOS calls (fresh-eyes finding: accepted silently). One warning per such
  /// emergency contact, at its phone, naming where the other is; the same name with the same
  /// number, or a name only one list has, is fine. Names are compared without case and with
  /// runs of spaces as one; digits and `+` of the numbers, so spacing does not count.
  public static func phoneMismatches(_ manifest: Manifest, declared: [ManifestContact]) -> [Diagnostic] {
    guard let list = manifest.emergency?.contacts?.value else { return [] }
    func digits(_ phone: String) -> String { String(phone.filter { $0.isASCII && ($0.isNumber || $0 == "+") }) }
    // The same person however the name's case or spacing is written (`anna  (daughter)`).
    func key(_ name: String) -> String { name.lowercased().split(whereSeparator: \.isWhitespace).joined(separator: " ") }
    var byName: [String: [ManifestContact]] = [:]
    for contact in declared where contact.reference == nil { byName[key(contact.name.value), default: []].append(contact) }
    return list.compactMap { contact -> Diagnostic? in
      guard contact.reference == nil, let others = byName[key(contact.name.value)], !others.isEmpty,
            !others.contains(where: { digits($0.phone.value) == digits(contact.phone.value) }), let other = others.last else { return nil }
      let at = other.phone.position
      return .warning(at: contact.phone.position, field: DecodingContext.join(contact.path, "phone"),
                      "\"\(contact.name.value)\" has \(contact.phone.value) here but \(other.phone.value) under contacts: "
                        + "(\(at.file):\(at.line):\(at.column)); an SOS calls this one. Check which is right, or write "
                        + "- {contact: \(other.name.value)} here to use that contact's number")
    }
  }

  /// Resolves the references in `manifest.emergency.contacts` against `declared` (contacts in
  /// declaration order; for a name declared more than once the last counts, unless its file
  /// declares that name more than once with different phones: `ambiguity`). A reference names
  /// a contact by its name as written or as the watch stores it (cut to 32 bytes). A name no
  /// declaration has is an error at the reference, as is a reference that repeats a contact
  /// (same name and phone) already in the list. `scope` says where declarations were looked for,
  /// for that message (`"under contacts: in this file"`).
  /// `undeclaredKnown`: names written under `contacts:` whose declaration has an error (and so
  /// is not in `declared`); a reference to one is not reported again as "none of that name is
  /// declared" — the contact's own error says what to fix.
  public static func resolve(_ manifest: inout Manifest, declared: [ManifestContact], scope: String,
                             undeclaredKnown: Set<String> = []) -> [Diagnostic] {
    guard var emergency = manifest.emergency, let list = emergency.contacts,
          list.value.contains(where: { $0.reference != nil }) else { return [] }
    // Every declaration of each stored name, in order (a name over 32 bytes is stored cut).
    var byName: [String: [ManifestContact]] = [:]
    for contact in declared where contact.reference == nil { byName[contact.name.value, default: []].append(contact) }
    var diagnostics: [Diagnostic] = []
    var resolved: [ManifestContact] = []
    // The references resolved so far: the contact, where the reference is written, the name it gives.
    var referenced: [(resolved: ManifestContact, at: SourcePosition, reference: String)] = []
    for var contact in list.value {
      if let reference = contact.reference {
        // The name as written, else as the watch stores it: a reference may spell out a name
        // its declaration has cut.
        let stored = byName[reference.value] != nil ? reference.value : TextTruncation.cutName(reference.value, maxBytes: ContactNameRule.maxBytes)
        if let all = byName[stored], let ambiguity = ambiguity(reference, stored: stored, declarations: all) {
          diagnostics.append(.error(at: reference.position, field: DecodingContext.join(contact.path, "contact"), ambiguity))
          continue
        }
        guard let target = byName[stored]?.last else {
          if undeclaredKnown.contains(reference.value) { continue }
          var message = "refers to the contact \"\(reference.value)\", but none of that name is declared \(scope); declare it under contacts:, or write name and phone here instead of contact:"
          // The closest spelling, else a declared name the reference begins with or that begins
          // with it (`Anna (mum)` for `Anna`) — among the contacts declared with an error too
          // (fresh-eyes finding: a typo in the reference to one got no suggestion).
          let names = Set(byName.keys).union(undeclaredKnown).sorted()
          let meant = Suggestion.closest(to: reference.value, in: names)
            ?? names.filter { reference.value.hasPrefix($0 + " ") || $0.hasPrefix(reference.value + " ") }.max { $0.count < $1.count }
          if let meant {
            message += "; did you mean \"\(meant)\"?" + (byName[meant] == nil ? " (declared with an error of its own: fix that too)" : "")
          }
          diagnostics.append(.error(at: reference.position, field: DecodingContext.join(contact.path, "contact"), message))
          continue
        }
        contact.name = target.name
        contact.phone = target.phone
        contact.shortName = target.shortName
        contact.shortNameIsExplicit = target.shortNameIsExplicit
        if let same = resolved.first(where: { $0.name.value == contact.name.value && $0.phone.value == contact.phone.value }) {
          diagnostics.append(.error(at: reference.position, field: contact.path,
            "duplicate contact \"\(contact.name.value)\": also listed on line \(same.position.line), column \(same.position.column) of \(same.position.file)"))
          continue
        }
      } else if let earlier = referenced.first(where: { $0.resolved.name.value == contact.name.value && $0.resolved.phone.value == contact.phone.value }) {
        // Written out after a reference to the same contact: the list's own duplicate rule
        // sees only what is written, not what the reference resolves to (it took two of the
        // watch's emergency slots for one person).
        diagnostics.append(.error(at: contact.position, field: contact.path,
          "duplicate contact \"\(contact.name.value)\": also listed on line \(earlier.at.line), column \(earlier.at.column) of \(earlier.at.file) (as contact: \(earlier.reference))"))
        continue
      }
      if let reference = contact.reference { referenced.append((contact, reference.position, reference.value)) }
      resolved.append(contact)
    }
    emergency.contacts = Located(resolved, at: list.position)
    manifest.emergency = emergency
    return diagnostics
  }

  /// Why `reference` cannot tell which contact it names, or `nil` when it can: the file of the
  /// declaration that counts (the last) declares more than one contact stored as `stored`,
  /// with different phones — the same name twice, or names the watch stores alike once cut.
  static func ambiguity(_ reference: Located<String>, stored: String, declarations: [ManifestContact]) -> String? {
    guard let last = declarations.last else { return nil }
    let candidates = declarations.filter { $0.name.position.file == last.name.position.file }
    guard Set(candidates.map(\.phone.value)).count > 1 else { return nil }
    let lines = candidates.map { String($0.name.position.line) }
    let where_ = "\(last.name.position.file) lines " + (lines.count == 2 ? lines.joined(separator: " and ")
                                                         : lines.dropLast().joined(separator: ", ") + " and " + lines[lines.count - 1])
    let writeOut = "or write name and phone here instead of contact:"
    if reference.value == stored {
      return "refers to the contact \"\(reference.value)\", but this name is declared \(candidates.count) times (\(where_)) with different phones, so it could be either; give each its own name, \(writeOut)"
    }
    return "refers to the contact \"\(reference.value)\", but the watch stores \(candidates.count) contacts declared in \(where_) as \"\(stored)\" "
      + "(names cut to \(ContactNameRule.maxBytes) bytes) with different phones, so it could be either; give each a name that differs in its first \(ContactNameRule.maxBytes) bytes, \(writeOut)"
  }
}
