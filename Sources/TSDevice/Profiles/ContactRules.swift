import TSModel

/// How a platform stores a list of contacts (regular or emergency) it is sent
/// (docs/platforms.md "Contacts").
struct ContactListRules: Sendable {
  /// What happens to an item whose text is over the limit or empty.
  enum TextPolicy: Sendable {
    /// Refuse the whole write: empty name or phone → 3001, too long → 3004, with the Npk
    /// validator's messages (docs/platforms.md "Contacts") and the given limits.
    case reject
    /// Cut names to `nameMaxBytes`; a phone over `phoneMaxBytes` is cut (Npk emergency, docs/platforms.md "Contacts")
    /// or, when `dropsLongPhone`, the contact is dropped (FitCloud object creation fails and the
    /// SDK silently skips it, docs/platforms.md "Contacts"); items with an empty name or phone are dropped.
    case sanitize(dropsLongPhone: Bool)
  }

  /// What happens when more items are sent than the watch holds.
  enum Overflow: Sendable {
    /// Keep the first `limit` items silently (Npk emergency, Fw emergency; docs/platforms.md "Contacts").
    case truncate
    /// Refuse the write with this error.
    case reject(DeviceError.Domain, TSErrorCode)
  }

  /// Most items held.
  let limit: Int
  let overflow: Overflow
  let text: TextPolicy
  let nameMaxBytes: Int
  let phoneMaxBytes: Int
  /// Whether `shortName` is kept (Fw) or reads back `nil` (Fit, Npk; docs/platforms.md "Contacts").
  let storesShortName: Bool
  /// Domain of the errors of this list (`setting` for Npk emergency contacts).
  let domain: DeviceError.Domain
  /// "Contacts" or "Emergency contacts", for messages.
  let noun: String

  /// `contacts` as the watch stores them.
  /// - Throws: the overflow error, or 3001/3004 under `.reject`.
  func stored(_ contacts: [Contact]) throws(DeviceError) -> [Contact] {
    var items = contacts
    if items.count > limit {
      switch overflow {
      case .truncate: items = Array(items.prefix(limit))
      case .reject(let domain, let code):
        throw DeviceError(domain, code, "\(noun) exceed limit: \(items.count) given, the watch holds at most \(limit)")
      }
    }
    var result: [Contact] = []
    for item in items {
      if let kept = try store(item) { result.append(kept) }
    }
    return result
  }

  private func store(_ contact: Contact) throws(DeviceError) -> Contact? {
    var c = contact
    if !storesShortName { c.shortName = nil }
    switch text {
    case .reject:
      if c.name.isEmpty { throw DeviceError(domain, .invalidParam, "Contact name cannot be empty") }
      if c.phoneNum.isEmpty { throw DeviceError(domain, .invalidParam, "Contact phone number cannot be empty") }
      if c.name.utf8.count > nameMaxBytes {
        throw DeviceError(domain, .paramSizeError, "Contact name exceeds maximum length of \(nameMaxBytes) bytes")
      }
      if c.phoneNum.utf8.count > phoneMaxBytes {
        throw DeviceError(domain, .paramSizeError, "Contact phone number exceeds maximum length of \(phoneMaxBytes) bytes")
      }
      return c
    case .sanitize(let dropsLongPhone):
      if dropsLongPhone, c.phoneNum.utf8.count > phoneMaxBytes { return nil }
      c.name = TextTruncation.truncate(c.name, maxBytes: nameMaxBytes)
      c.phoneNum = TextTruncation.truncate(c.phoneNum, maxBytes: phoneMaxBytes)
      return c.name.isEmpty || c.phoneNum.isEmpty ? nil : c
    }
  }
}

/// A platform's contact behaviour: regular list (absent when not supported), emergency list,
/// and which listeners it supports.
struct ContactRules: Sendable {
  /// Rules for `setAllContacts:`; `nil` answers 2004 (Npk beta9 stubs regular contacts, docs/platforms.md "Contacts").
  let regular: ContactListRules?
  /// Rules for `setEmergencyContacts:sosOn:`; `nil` answers 2004.
  let emergency: ContactListRules?
  /// Domain of the 2004 answers to unsupported listener registrations (Npk: setting).
  let listenerDomain: DeviceError.Domain
}
