import TSModel
import TSManifest

/// Plans the `contacts:` section: one resource, `contacts`, written as a whole list.
///
/// Desired list: the manifest's contacts in manifest order, shortName kept only where the
/// platform stores it (docs/platforms.md "Contacts"). The watch list is compared as a multiset
/// (`ContactDiff`); when equal there is no change. Capacity and byte limits
/// (`ContactCapabilities`, docs/platforms.md "Contacts") are errors: a phone number is never cut.
/// On a watch that stores no regular contacts (`npk`) an empty list plans nothing and any other
/// is an error.
enum ContactPlanner {
  /// `referred`: the names emergency contacts refer to (`{contact: NAME}`), which the advice on a
  /// watch without regular contacts says to write out before the section goes.
  static func plan(_ contacts: Located<[ManifestContact]>, state: DeviceState, capabilities: DeviceCapabilities,
                   referred: [String] = []) -> PlanPart {
    var part = PlanPart()
    let limits = capabilities.contacts
    let watch = "the watch (profile \(capabilities.profile))"
    guard limits.maxContacts > 0 else {
      // `contacts: []` asks for no contacts, which such a watch holds: nothing to change (a
      // fleet's layer for these watches drops the inherited list that way).
      if !contacts.value.isEmpty {
        // Emergency contacts that refer to these are written out first: removing the section
        // alone makes them refer to nothing (fresh-eyes fe96 #8: advice in a circle).
        // Each name as YAML writes it, so the example can be pasted (fresh-eyes fe97 #9).
        var names: [String] = []
        for name in referred where !names.contains(name) { names.append(name) }
        let written = names.map { name in
          (try? ManifestEditor.inline(.scalar(name, CanonicalForm.textStyle(name)))) ?? ManifestWords.quoted(name)
        }
        let example = written.first.map { name in
          "({contact: \(name)} as {name: \(name), phone: …} with its number under contacts:"
            + (written.count > 1 ? "; the same for " + written.dropFirst().joined(separator: ", ") : "") + "), then "
        } ?? ""
        let advice = referred.isEmpty ? "remove the `contacts` section"
          : "write the emergency contacts that refer to them out with name and phone " + example + "remove the `contacts` section"
        part.diagnostics.append(.error(at: contacts.position, field: "contacts",
          "\(watch) does not store regular contacts; \(advice) (in a fleet, a layer for these watches can write contacts: [])"))
      }
      return part
    }
    part.diagnostics = checks(contacts, maxCount: limits.maxContacts, field: "contacts", capabilities: capabilities)
    let desired = storedContacts(contacts.value, watch: state.contacts, capabilities: capabilities)
    let diff = ContactDiff(from: storedContacts(state.contacts, capabilities: capabilities), to: desired)
    if !diff.isEmpty {
      let fields = ManifestWords.contacts(diff.fieldChanges, manifest: contacts.value, stored: desired,
                                          path: "contacts", at: contacts.position)
      part.changes.append(ResourceChange(address: .contacts, action: .update, fields: fields,
                                         before: .contacts(state.contacts), after: .contacts(desired)))
    }
    return part
  }

  /// Manifest contacts as the watch stores them: shortName only where stored.
  ///
  /// A short name the manifest does not state (derived from the name) is a default for contacts
  /// tsapply writes, not a demand: when the watch already holds the same contact (name and
  /// phone) with no short name — e.g. one added on the watch itself — that stays, so an exported
  /// watch plans no changes and such contacts do not show a perpetual difference.
  /// Where short names are stored, a contact without one has the empty short name (as in
  /// `storedContacts(_:capabilities:)`), so every view shows it the same way.
  static func storedContacts(_ contacts: [ManifestContact], watch: [Contact], capabilities: DeviceCapabilities) -> [Contact] {
    let stores = capabilities.contacts.storesShortName
    // The (name, phone) pairs whose first watch contact has no short name (contacts added on
    // the watch itself): usually none or a few, so they are kept in a list, not hashed.
    var heldWithoutShortName: [ContactKey] = []
    if stores, contacts.contains(where: { !$0.shortNameIsExplicit }) {
      for (index, held) in watch.enumerated() where (held.shortName ?? "").isEmpty {
        let named = watch[..<index].contains { $0.name == held.name && $0.phoneNum == held.phoneNum && !($0.shortName ?? "").isEmpty }
        if !named { heldWithoutShortName.append(ContactKey(held)) }
      }
    }
    return contacts.map { contact in
      var shortName: String? = stores ? contact.shortName : nil
      if stores, !contact.shortNameIsExplicit,
         heldWithoutShortName.contains(where: { $0.name == contact.name.value && $0.phoneNum == contact.phone.value }) {
        shortName = ""
      }
      return Contact(name: storedName(contact.name.value, capabilities: capabilities), phoneNum: contact.phone.value,
                     shortName: shortName)
    }
  }

  /// A contact name as tsapply writes it: cut at a grapheme boundary to the platform's limit
  /// (the SDK cuts names itself — 32 bytes, 31 for Npk emergency contacts, docs/platforms.md "Contacts";
  /// cutting first, on whole characters and without a space left at the end, leaves it nothing
  /// to cut).
  static func storedName(_ name: String, capabilities: DeviceCapabilities) -> String {
    TextTruncation.cutName(name, maxBytes: capabilities.contacts.nameMaxBytes)
  }

  /// Watch contacts in comparable form: shortName dropped where the platform does not store
  /// it; where it does, a contact read without one (added on the watch itself) has the empty
  /// short name. So a contact shows `shortName` exactly where the platform stores it — in the
  /// plan's changes and in drift alike (`shortName = ""` for none).
  static func storedContacts(_ contacts: [Contact], capabilities: DeviceCapabilities) -> [Contact] {
    let stores = capabilities.contacts.storesShortName
    return contacts.map { Contact(name: $0.name, phoneNum: $0.phoneNum, shortName: stores ? $0.shortName ?? "" : nil) }
  }

  /// Count and phone limits of a contact list (errors); names the platform cuts and explicit
  /// short names it drops (warnings). `field` names the list in messages.
  static func checks(_ contacts: Located<[ManifestContact]>, maxCount: Int, field: String,
                          capabilities: DeviceCapabilities) -> [Diagnostic] {
    let limits = capabilities.contacts
    let watch = "the watch (profile \(capabilities.profile))"
    let noun = field == "contacts" ? "contacts" : "emergency contacts"
    var diagnostics: [Diagnostic] = []
    if contacts.value.count > maxCount {
      diagnostics.append(.error(at: contacts.position, field: field,
        "\(contacts.value.count) \(noun), but \(watch) holds at most \(maxCount): remove \(contacts.value.count - maxCount) of them"))
    }
    // Names the platform cuts, by the name they are stored as: two different names cut to the
    // same one are told apart on the watch, and in plans and drift, only by their numbers.
    var cutTo: [String: ManifestContact] = [:]
    for contact in contacts.value {
      let nameBytes = contact.name.value.utf8.count
      if nameBytes > limits.nameMaxBytes {
        let stored = storedName(contact.name.value, capabilities: capabilities)
        diagnostics.append(.warning(at: contact.name.position, field: "\(contact.path).name",
          "\"\(contact.name.value)\" is \(nameBytes) bytes; \(watch) stores contact names of at most \(limits.nameMaxBytes) bytes, so it will be stored as \"\(stored)\" (\(stored.utf8.count) bytes)"))
        if let other = cutTo[stored], other.name.value != contact.name.value {
          diagnostics.append(.warning(at: contact.name.position, field: "\(contact.path).name",
            "\"\(contact.name.value)\" and \"\(other.name.value)\" (line \(other.name.position.line)) are both stored as \"\(stored)\" on \(watch), "
              + "so the watch, its plans and drift tell them apart only by phone number; make them differ within the first \(limits.nameMaxBytes) bytes"))
        } else {
          cutTo[stored] = contact
        }
      }
      if contact.shortNameIsExplicit && !contact.shortName.isEmpty && !limits.storesShortName {
        diagnostics.append(.warning(at: contact.shortNamePosition ?? contact.position, field: "\(contact.path).short_name",
          "\(watch) does not store short names; \"\(contact.shortName)\" is ignored"))
      }
      let phoneBytes = contact.phone.value.utf8.count
      if phoneBytes > limits.phoneMaxBytes {
        diagnostics.append(.error(at: contact.phone.position, field: "\(contact.path).phone",
          "the phone number is \(phoneBytes) bytes, but \(watch) stores phone numbers of at most \(limits.phoneMaxBytes) bytes; tsapply never shortens a phone number"))
      }
    }
    return diagnostics
  }
}

extension DeviceCapabilities {
  /// `name`, a contact's (or an emergency contact's) name as a manifest writes it, as this
  /// watch stores it when tsapply writes it (`ContactPlanner.storedName`): what a name the watch
  /// holds is compared with to find the manifest's entry (`drift --adopt`).
  public func storedContactName(_ name: String) -> String { ContactPlanner.storedName(name, capabilities: self) }

  /// `name`, a custom reminder's name as a manifest writes it, as this watch stores it
  /// (`CustomReminderPlanner.storedName`); unchanged where the platform has no custom reminders.
  public func storedCustomReminderName(_ name: String) -> String {
    reminders.custom.map { CustomReminderPlanner.storedName(name, storage: $0) } ?? name
  }
}
