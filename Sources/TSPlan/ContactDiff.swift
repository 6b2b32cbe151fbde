import TSModel

/// The difference between two contact lists compared as multisets of (name, phone, shortName):
/// order is not managed (sdk-facts.md §2.7). A contact whose phone stays and whose name (or
/// short name) changes is one change, not a removal plus an addition.
public struct ContactDiff: Hashable, Sendable {
  /// Contacts only in the new list, in its order.
  public var added: [Contact]
  /// Contacts only in the old list, in its order.
  public var removed: [Contact]
  /// Same phone, other name or short name: (old, new).
  public var changed: [Pair]

  /// One contact renamed: the old and the new value.
  public struct Pair: Hashable, Sendable {
    /// The contact as the watch holds it.
    public var before: Contact
    /// The contact as it will be written (same `phoneNum`).
    public var after: Contact
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
    added = []
    changed = []
    for contact in unmatched {
      if let index = remaining.firstIndex(where: { $0.phoneNum == contact.phoneNum }) {
        changed.append(Pair(before: remaining.remove(at: index), after: contact))
      } else {
        added.append(contact)
      }
    }
    removed = remaining
  }

  /// The plan's field changes, field `contacts`: additions (no before), removals (no after), then
  /// renames; each value an object `{name, phoneNum[, shortName]}`.
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

/// How many contacts a change adds, removes and renames, read from its `contacts` field changes.
public struct ContactCounts: Hashable, Sendable {
  /// Contacts added (a new phone number, or a new name and phone).
  public var added: Int
  /// Contacts removed.
  public var removed: Int
  /// Contacts kept by phone number whose name or short name changes.
  public var renamed: Int

  /// Counts the `contacts` entries of `fields`.
  public init(_ fields: [FieldChange]) {
    let contactFields = fields.filter { $0.field == "contacts" }
    added = contactFields.filter { $0.before == nil }.count
    removed = contactFields.filter { $0.after == nil }.count
    renamed = contactFields.filter { $0.before != nil && $0.after != nil }.count
  }

  /// E.g. `1 added, 2 removed, 1 renamed` (parts that are zero left out); empty when all zero.
  public var summary: String {
    [(added, "added"), (removed, "removed"), (renamed, "renamed")]
      .filter { $0.0 > 0 }.map { "\($0.0) \($0.1)" }.joined(separator: ", ")
  }
}
