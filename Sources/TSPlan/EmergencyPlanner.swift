import TSModel
import TSManifest

/// Plans the `emergency:` section: one resource, `emergency`, holding the emergency list and the
/// SOS switch, which the SDK writes in one call (`setEmergencyContacts:sosOn:`, docs/platforms.md "Contacts").
///
/// A part the manifest leaves out (`sos` or `contacts`) keeps the watch's value in `after`. The
/// list is compared as a multiset like `contacts`. SOS on with no emergency contact in the final
/// state is an error.
enum EmergencyPlanner {
  static func plan(_ emergency: ManifestEmergency, state: DeviceState, capabilities: DeviceCapabilities) -> PlanPart {
    var part = PlanPart()
    let limits = capabilities.contacts
    let watch = "the watch (profile \(capabilities.profile))"
    guard limits.supportsEmergencyContacts, limits.maxEmergencyContacts > 0 else {
      part.diagnostics.append(.error(at: emergency.position, field: "emergency",
        "\(watch) has no emergency contacts or SOS; remove the `emergency` section"))
      return part
    }
    let before = state.emergency ?? EmergencyContacts(contacts: [], isSosOn: false)
    var after = before
    if let contacts = emergency.contacts {
      // A reference is resolved when its manifest is read or merged; one that was not has no
      // phone, and nothing is planned from it.
      for contact in contacts.value where contact.reference != nil && contact.phone.value.isEmpty {
        part.diagnostics.append(.error(at: contact.position, field: contact.path,
          "refers to the contact \"\(contact.name.value)\", which was not resolved to a declared contact; nothing is planned from it"))
      }
      guard part.diagnostics.isEmpty else { return part }
      part.diagnostics = ContactPlanner.checks(contacts, maxCount: limits.maxEmergencyContacts,
                                                    field: "emergency.contacts", capabilities: capabilities)
      after.contacts = ContactPlanner.storedContacts(contacts.value, watch: before.contacts, capabilities: capabilities)
    }
    if let sos = emergency.isSosOn { after.isSosOn = sos.value }
    // Emergency contacts without `sos:` keep the watch's switch: off, a press calls none of them
    // (fresh-eyes fe101 #3: the plan showed the contacts only, and SOS stayed off).
    if emergency.isSosOn == nil, let contacts = emergency.contacts, !contacts.value.isEmpty, !after.isSosOn {
      part.diagnostics.append(.warning(at: emergency.position, field: "emergency.sos",
        "emergency contacts are given but `sos:` is not, so the watch keeps its SOS switch, which is off: a long press calls none of them; "
          + "add `sos: true` to switch it on (or `sos: false` to say it stays off)"))
    }
    var fields: [FieldChange] = []
    if after.isSosOn != before.isSosOn {
      fields.append(FieldChange(field: "isSosOn", before: .bool(before.isSosOn), after: .bool(after.isSosOn),
                                manifestPath: "emergency.sos", source: emergency.isSosOn?.position ?? emergency.position))
    }
    if let contacts = emergency.contacts {
      fields += ManifestWords.contacts(ContactDiff(from: ContactPlanner.storedContacts(before.contacts, capabilities: capabilities),
                                                   to: after.contacts).fieldChanges,
                                       manifest: contacts.value, stored: after.contacts,
                                       path: "emergency.contacts", at: contacts.position)
    }
    guard !fields.isEmpty else { return part }
    if after.isSosOn && after.contacts.isEmpty {
      part.diagnostics.append(.error(at: emergency.isSosOn?.position ?? emergency.position, field: "emergency.sos",
        "SOS would be on with no emergency contact; add one under `emergency.contacts` or write `sos: false`"))
    }
    part.changes.append(ResourceChange(address: .emergency, action: .update, fields: fields,
                                       before: .emergency(before), after: .emergency(after)))
    return part
  }
}
