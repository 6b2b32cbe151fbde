import TSModel

/// `sos: true` needs at least one emergency contact in the manifest.
///
/// Source: docs/platforms.md "SDK calls" and docs/platforms.md "Listeners" (the emergency list and the SOS switch are written
/// together by `setEmergencyContacts:sosOn:`; an SOS request calls the emergency contacts) and
/// docs/platforms.md "Contacts" (the Example app clears the list when SOS is turned off). SOS on with nobody to call is
/// refused; with `contacts` left out the manifest names nobody either, so it is refused too.
enum SOSRule {
  static func check(_ emergency: ManifestEmergency, into diagnostics: inout [Diagnostic]) {
    guard let sos = emergency.isSosOn, sos.value else { return }
    if let contacts = emergency.contacts, !contacts.value.isEmpty { return }
    diagnostics.append(.error(at: sos.position, field: "emergency.sos",
      "is true but no emergency contacts are given; add at least one under emergency.contacts, or set sos: false"))
  }
}
