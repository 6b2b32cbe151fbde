import TSModel

/// A destructive change in a plan that a person should notice before applying it.
///
/// Every finding is shown in the plan (`# (!) …` under its resource). Findings that are
/// `isUnsafe` make the whole plan unsafe: the engine's safety gate refuses an unattended
/// `apply --auto-approve` (and a monitor's healing) of an unsafe plan unless destruction is
/// explicitly allowed (`--allow-destroy`). The rule (docs/apply.md "The safety gate"): a plan is
/// unsafe when it clears a list, removes or changes an emergency contact, turns SOS off, deletes
/// a custom reminder, or removes more than a third of the contacts.
public enum SafetyFinding: Hashable, Sendable, CustomStringConvertible {
  /// The regular contact list becomes empty; `count` contacts were on the watch.
  case clearsAllContacts(count: Int)
  /// Some (not all) of the `of` regular contacts on the watch are removed; renames are not counted.
  case removesContacts(count: Int, of: Int)
  /// Custom reminders are deleted (their addresses, sorted).
  case deletesCustomReminders([ResourceAddress])
  /// The SOS switch goes from on to off.
  case disablesSOS
  /// The emergency list becomes empty; `count` emergency contacts were on the watch.
  case clearsEmergencyContacts(count: Int)
  /// Some (not all) emergency contacts are removed.
  case removesEmergencyContacts(count: Int)
  /// Emergency contacts kept but changed: a new name or a new number for the person the
  /// wearer's SOS calls.
  case changesEmergencyContacts(count: Int)

  /// Whether this finding makes the plan unsafe for an unattended apply. Removing contacts is
  /// unsafe only beyond a third of the list (`count * 3 > of`); every other finding always is.
  public var isUnsafe: Bool {
    switch self {
    case .removesContacts(let count, let total): count * 3 > total
    default: true
    }
  }

  /// The resources this finding is about: `contacts`, the deleted custom reminders, or
  /// `emergency` (its list and the SOS switch are one resource).
  public var addresses: [ResourceAddress] {
    switch self {
    case .clearsAllContacts, .removesContacts: [.contacts]
    case .deletesCustomReminders(let addresses): addresses
    case .disablesSOS, .clearsEmergencyContacts, .removesEmergencyContacts, .changesEmergencyContacts: [.emergency]
    }
  }

  /// A stable name for JSON, e.g. `clears_all_contacts`.
  public var kind: String {
    switch self {
    case .clearsAllContacts: "clears_all_contacts"
    case .removesContacts: "removes_contacts"
    case .deletesCustomReminders: "deletes_custom_reminders"
    case .disablesSOS: "disables_sos"
    case .clearsEmergencyContacts: "clears_emergency_contacts"
    case .removesEmergencyContacts: "removes_emergency_contacts"
    case .changesEmergencyContacts: "changes_emergency_contacts"
    }
  }

  /// One line for the human plan, e.g. `clears all 3 contacts`.
  public var description: String {
    switch self {
    case .clearsAllContacts(let count): count == 1 ? "clears the only contact" : "clears all \(count) contacts"
    case .removesContacts(let count, _): "removes \(count) \(count == 1 ? "contact" : "contacts")"
    case .deletesCustomReminders(let addresses):
      "deletes \(addresses.count) custom \(addresses.count == 1 ? "reminder" : "reminders"): "
        + addresses.map(\.rawValue).joined(separator: ", ")
    case .disablesSOS: "turns SOS off"
    case .clearsEmergencyContacts(let count):
      count == 1 ? "clears the only emergency contact" : "clears all \(count) emergency contacts"
    case .removesEmergencyContacts(let count):
      "removes \(count) emergency \(count == 1 ? "contact" : "contacts")"
    case .changesEmergencyContacts(let count):
      "changes \(count) emergency \(count == 1 ? "contact" : "contacts")"
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
  let deletes = plan.resourceChanges.filter { $0.action == .delete && $0.address.isCustomReminder }
  if !deletes.isEmpty { findings.append(.deletesCustomReminders(deletes.map(\.address).sorted())) }
  for change in plan.resourceChanges where change.address == .emergency {
    if case .emergency(let before)? = change.before, case .emergency(let after)? = change.after {
      let counts = ContactCounts(change.fields)
      if !before.contacts.isEmpty && after.contacts.isEmpty {
        findings.append(.clearsEmergencyContacts(count: before.contacts.count))
      } else if counts.removed > 0 {
        findings.append(.removesEmergencyContacts(count: counts.removed))
      }
      if counts.renamed + counts.changed > 0 { findings.append(.changesEmergencyContacts(count: counts.renamed + counts.changed)) }
      if before.isSosOn && !after.isSosOn { findings.append(.disablesSOS) }
    }
  }
  return findings
}

extension Plan {
  /// The findings that make this plan unsafe for an unattended apply (empty when it is safe).
  public var unsafeFindings: [SafetyFinding] { safetyFindings(for: self).filter(\.isUnsafe) }
}

private func contactFindings(_ change: ResourceChange) -> [SafetyFinding] {
  guard case .contacts(let before)? = change.before, case .contacts(let after)? = change.after else { return [] }
  if !before.isEmpty && after.isEmpty { return [.clearsAllContacts(count: before.count)] }
  let removed = ContactCounts(change.fields).removed
  return removed > 0 ? [.removesContacts(count: removed, of: before.count)] : []
}
