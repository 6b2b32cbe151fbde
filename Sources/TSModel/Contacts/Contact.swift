/// A contact as the watch holds it: the SDK's `TopStepContactModel`.
///
/// SDK rules (contacts.txt; docs/platforms.md "Contacts"): `name` non-empty, at most 32 bytes of UTF-8
/// (31 on Npk emergency contacts); `phoneNum` ASCII digits with an optional leading '+', at most
/// 20 bytes; `shortName` is "typically the first letter of the name" and is stored only by some
/// platforms (Fw), so it reads back `nil` elsewhere.
public struct Contact: Hashable, Codable, Sendable {
  /// Display name, UTF-8, at most 32 bytes on the watch.
  public var name: String
  /// Phone number: ASCII digits, optionally one leading '+'; at most 20 bytes.
  public var phoneNum: String
  /// Index letter used by the watch for sorting and search; `nil` where the platform does not store it.
  public var shortName: String?

  /// A contact as given; values are not checked here (the manifest validator and the watch do).
  public init(name: String, phoneNum: String, shortName: String? = nil) {
    self.name = name
    self.phoneNum = phoneNum
    self.shortName = shortName
  }
}

/// A contact's (name, phone number) pair, for finding the same contact in another list without
/// building a key per comparison.
public struct ContactKey: Hashable, Sendable {
  /// `Contact.name`.
  public var name: String
  /// `Contact.phoneNum`.
  public var phoneNum: String

  /// The pair of `name` and `phoneNum`.
  public init(name: String, phoneNum: String) {
    self.name = name
    self.phoneNum = phoneNum
  }

  /// The pair of `contact`.
  public init(_ contact: Contact) {
    self.init(name: contact.name, phoneNum: contact.phoneNum)
  }
}

/// The emergency-contact list and the SOS switch, which the SDK reads and writes together
/// (`getEmergencyContacts:` gives both; `setEmergencyContacts:sosOn:` writes both in one call).
public struct EmergencyContacts: Hashable, Codable, Sendable {
  /// Emergency contacts in watch order; most platforms hold at most 1.
  public var contacts: [Contact]
  /// Whether the SOS feature is on (SDK `isSosOn`).
  public var isSosOn: Bool

  /// The emergency list in watch order and the SOS switch.
  public init(contacts: [Contact], isSosOn: Bool) {
    self.contacts = contacts
    self.isSosOn = isSosOn
  }
}
