import TSModel

/// The difference between two contact lists compared as multisets of (name, phone, shortName):
/// order is not managed (docs/platforms.md "Contacts"). A contact keeps its identity when one of
/// its fields changes: contacts are paired by name first (a new number or short name for the
/// same person is one change), then by phone (a rename), each list as a multiset, so duplicates
/// pair one for one; only what is left is added or removed.
public struct ContactDiff: Hashable, Sendable {
  /// Contacts only in the new list, in its order.
  public var added: [Contact]
  /// Contacts only in the old list, in its order.
  public var removed: [Contact]
  /// Paired contacts whose phone, short name or (paired by phone) name changes: (old, new),
  /// in the new list's order.
  public var changed: [Pair]

  /// One contact renamed: the old and the new value.
  public struct Pair: Hashable, Sendable {
    /// The contact as the watch holds it.
    public var before: Contact
    /// The contact as it will be written (the same `name` or the same `phoneNum`).
    public var after: Contact
    /// True when the name changes (the pair was made by phone).
    public var isRename: Bool { before.name != after.name }
  }

  /// True when the lists hold the same contacts.
  public var isEmpty: Bool { added.isEmpty && removed.isEmpty && changed.isEmpty }

  /// Compares `old` with `new` (both already in stored form).
  public init(from old: [Contact], to new: [Contact]) {
    var remaining = old
    var unmatched: [Contact] = []
    for contact in new {
      if let index = remaining.firstIndex(of: contact) {
        remaining.remove(at: index)
      } else {
        unmatched.append(contact)
      }
    }
    var pairs: [Int: Pair] = [:]
    for (position, contact) in unmatched.enumerated() {
      if let index = remaining.firstIndex(where: { $0.name == contact.name }) {
        pairs[position] = Pair(before: remaining.remove(at: index), after: contact)
      }
    }
    for (position, contact) in unmatched.enumerated() where pairs[position] == nil {
      if let index = remaining.firstIndex(where: { $0.phoneNum == contact.phoneNum }) {
        pairs[position] = Pair(before: remaining.remove(at: index), after: contact)
      }
    }
    added = unmatched.indices.filter { pairs[$0] == nil }.map { unmatched[$0] }
    changed = unmatched.indices.compactMap { pairs[$0] }
    removed = remaining
  }

  /// The plan's field changes, field `contacts`: additions (no before), removals (no after), then
  /// paired changes (both); each value an object `{name, phoneNum[, shortName]}`.
  public var fieldChanges: [FieldChange] {
    added.map { FieldChange(field: "contacts", before: nil, after: Self.value($0)) }
      + removed.map { FieldChange(field: "contacts", before: Self.value($0), after: nil) }
      + changed.map { FieldChange(field: "contacts", before: Self.value($0.before), after: Self.value($0.after)) }
  }

  /// A contact as a field value.
  public static func value(_ contact: Contact) -> FieldValue {
    var entries = [FieldValue.KeyValue("name", .string(contact.name)),
                   FieldValue.KeyValue("phoneNum", .string(contact.phoneNum))]
    if let shortName = contact.shortName { entries.append(.init("shortName", .string(shortName))) }
    return .object(entries)
  }
}

/// How many contacts a change adds, removes, renames and otherwise changes, read from its
/// `contacts` field changes.
public struct ContactCounts: Hashable, Sendable {
  /// Contacts added (neither their name nor their number was on the watch).
  public var added: Int
  /// Contacts removed.
  public var removed: Int
  /// Contacts kept by phone number whose name changes.
  public var renamed: Int
  /// Contacts kept by name whose phone number or short name changes.
  public var changed: Int

  /// Counts as given.
  public init(added: Int = 0, removed: Int = 0, renamed: Int = 0, changed: Int = 0) {
    self.added = added
    self.removed = removed
    self.renamed = renamed
    self.changed = changed
  }

  /// Counts the `contacts` entries of `fields`.
  public init(_ fields: [FieldChange]) {
    let contactFields = fields.filter { $0.field == "contacts" }
    added = contactFields.filter { $0.before == nil }.count
    removed = contactFields.filter { $0.after == nil }.count
    let paired = contactFields.filter { $0.before != nil && $0.after != nil }
    renamed = paired.filter { Self.name($0.before) != Self.name($0.after) }.count
    changed = paired.count - renamed
  }

  static func name(_ value: FieldValue?) -> FieldValue? {
    guard case .object(let entries)? = value else { return nil }
    return entries.first { $0.key == "name" }?.value
  }

  /// Nothing added, removed, renamed or changed.
  public var isEmpty: Bool { added + removed + renamed + changed == 0 }

  /// E.g. `1 added, 2 removed, 1 renamed, 1 changed` (parts that are zero left out); empty
  /// when all zero.
  public var summary: String {
    [(added, "added"), (removed, "removed"), (renamed, "renamed"), (changed, "changed")]
      .filter { $0.0 > 0 }.map { "\($0.0) \($0.1)" }.joined(separator: ", ")
  }
}
