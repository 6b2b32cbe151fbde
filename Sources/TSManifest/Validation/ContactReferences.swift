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
  /// Resolves the references in `manifest.emergency.contacts` against `declared` (contacts in
  /// declaration order; for a name declared more than once the last counts). A name no
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
    var byName: [String: ManifestContact] = [:]
    for contact in declared where contact.reference == nil { byName[contact.name.value] = contact }
    var diagnostics: [Diagnostic] = []
    var resolved: [ManifestContact] = []
    for var contact in list.value {
      if let reference = contact.reference {
        guard let target = byName[reference.value] else {
          if undeclaredKnown.contains(reference.value) { continue }
          var message = "refers to the contact \"\(reference.value)\", but none of that name is declared \(scope); declare it under contacts:, or write name and phone here instead of contact:"
          if let meant = Suggestion.closest(to: reference.value, in: Array(byName.keys).sorted()) { message += "; did you mean \"\(meant)\"?" }
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
      }
      resolved.append(contact)
    }
    emergency.contacts = Located(resolved, at: list.position)
    manifest.emergency = emergency
    return diagnostics
  }
}
