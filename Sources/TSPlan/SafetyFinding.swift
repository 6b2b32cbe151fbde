import TSModel

/// A destructive change in a plan that a person should notice before applying it.
public enum SafetyFinding: Hashable, Sendable, CustomStringConvertible {
  /// The regular contact list becomes empty; `count` contacts were on the watch.
  case clearsAllContacts(count: Int)
  /// Some (not all) regular contacts are removed; renames are not counted.
  case removesContacts(count: Int)
  /// Custom reminders are deleted (their addresses, sorted).
  case deletesCustomReminders([ResourceAddress])
  /// The SOS switch goes from on to off.
  case disablesSOS
  /// The emergency list becomes empty; `count` emergency contacts were on the watch.
  case clearsEmergencyContacts(count: Int)

  /// One line for the human plan, e.g. `clears all 3 contacts`.
  public var description: String {
    switch self {
    case .clearsAllContacts(let count): count == 1 ? "clears the only contact" : "clears all \(count) contacts"
    case .removesContacts(let count): "removes \(count) \(count == 1 ? "contact" : "contacts")"
    case .deletesCustomReminders(let addresses):
      "deletes \(addresses.count) custom \(addresses.count == 1 ? "reminder" : "reminders"): "
        + addresses.map(\.rawValue).joined(separator: ", ")
    case .disablesSOS: "turns SOS off"
    case .clearsEmergencyContacts(let count):
      count == 1 ? "clears the only emergency contact" : "clears all \(count) emergency contacts"
    }
  }
}

/// The destructive changes of `plan`, in a fixed order: contacts, custom-reminder deletes,
/// emergency list, SOS. Pure: reads only the plan's before/after values and field changes.
public func safetyFindings(for plan: Plan) -> [SafetyFinding] {
  var findings: [SafetyFinding] = []
  for change in plan.resourceChanges where change.address == .contacts {
    findings += contactFindings(change)
  }
  let deletes = plan.resourceChanges.filter { $0.action == .delete && $0.address.rawValue.hasPrefix("reminder.custom") }
  if !deletes.isEmpty { findings.append(.deletesCustomReminders(deletes.map(\.address).sorted())) }
  for change in plan.resourceChanges where change.address == .emergency {
    if case .emergency(let before)? = change.before, case .emergency(let after)? = change.after {
      if !before.contacts.isEmpty && after.contacts.isEmpty {
        findings.append(.clearsEmergencyContacts(count: before.contacts.count))
      }
      if before.isSosOn && !after.isSosOn { findings.append(.disablesSOS) }
    }
  }
  return findings
}

private func contactFindings(_ change: ResourceChange) -> [SafetyFinding] {
  guard case .contacts(let before)? = change.before, case .contacts(let after)? = change.after else { return [] }
  if !before.isEmpty && after.isEmpty { return [.clearsAllContacts(count: before.count)] }
  let removed = ContactCounts(change.fields).removed
  return removed > 0 ? [.removesContacts(count: removed)] : []
}
