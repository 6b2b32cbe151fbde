import TSModel

/// What a node is in the manifest's schema, as far as `tsapply fmt` cares: mappings with a
/// canonical key order, values with a canonical spelling, and everything else (kept as written).
enum FormatRole: Equatable {
  case root, reminders, reminder, customList, period, lunchBreak, contactList, contact, emergency
  case time, timeList, duration, repeatRule, phone
  /// `enabled`, `sos`: written `true` or `false` (a lunch break written as a boolean too).
  case boolean
  /// Text, the version: written as the user wrote them.
  case keep

  /// The canonical key order of a mapping in this role; `nil` for values.
  var keyOrder: [String]? {
    switch self {
    case .root: CanonicalForm.rootKeys
    // The user's order of the built-ins (and custom) is theirs: the section is not reordered.
    case .reminders: nil
    case .reminder: CanonicalForm.reminderKeys
    case .period: CanonicalForm.periodKeys
    case .lunchBreak: CanonicalForm.lunchBreakKeys
    case .contact: CanonicalForm.contactKeys
    case .emergency: CanonicalForm.emergencyKeys
    default: nil
    }
  }

  /// The role of the value under `key` in a mapping of this role.
  func valueRole(_ key: String) -> FormatRole {
    switch (self, key) {
    case (.root, "reminders"): .reminders
    case (.root, "contacts"), (.emergency, "contacts"): .contactList
    case (.root, "emergency"): .emergency
    case (.reminders, "custom"): .customList
    case (.reminders, "lunch_break"): .lunchBreak
    case (.reminders, _): .reminder
    case (.reminder, "period"): .period
    case (.reminder, "at"): .timeList
    case (.reminder, "repeat"): .repeatRule
    case (.reminder, "lunch_break"): .lunchBreak
    case (.reminder, "enabled"), (.emergency, "sos"), (.reminder, "remove"), (.contact, "remove"): .boolean
    case (.period, "every"): .duration
    case (.period, _), (.lunchBreak, _): .time
    case (.contact, "phone"): .phone
    default: .keep
    }
  }

  /// The role of the items of a sequence of this role.
  var itemRole: FormatRole {
    switch self {
    case .customList: .reminder
    case .contactList: .contact
    case .timeList: .time
    default: .keep
    }
  }

  /// The children of `node` in this role, each with its role (keys are not included).
  func children(of node: YAMLNode) -> [(node: YAMLNode, role: FormatRole)] {
    switch node.content {
    case .scalar: []
    case .mapping(let entries): entries.map { ($0.value, valueRole($0.keyText ?? "")) }
    case .sequence(let items): items.map { ($0, itemRole) }
    }
  }
}

extension YAMLNode {
  /// This node and every node below it (keys included), depth first.
  var subtree: [YAMLNode] {
    var result: [YAMLNode] = []
    var stack = [self]
    while let node = stack.popLast() {
      result.append(node)
      switch node.content {
      case .scalar: break
      case .mapping(let entries): stack += entries.flatMap { [$0.key, $0.value] }
      case .sequence(let items): stack += items
      }
    }
    return result
  }
}
