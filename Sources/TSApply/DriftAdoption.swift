import TSManifest
import TSModel
import TSPlan

/// `tsapply drift --adopt`: writes what changed on the watch since the last apply (drift, as
/// `Drift.changes` finds it) into the manifest, so the manifest keeps what the wearer did instead
/// of undoing it at the next apply.
///
/// Only drift is adopted, never a change the manifest asks for that is not applied yet
/// (pending). A drifted item that also has such a change (a contact, an emergency contact, a
/// reminder's field whose value in the manifest differs from the one the last apply left) is not
/// adopted at all: the file keeps the edit, and the item is named with both changes
/// (`pendingEdits`). Each drifted resource's change (`before` = what the last apply left, `after` =
/// what the watch holds now) is turned into edits of the manifest's own text (`ManifestEditor`:
/// comments, order and spelling of everything else kept), field by field for reminders and the
/// SOS switch, contact by contact for the lists (`ContactDiff`: a contact added on the watch is
/// appended, one removed there is removed, one whose number changed gets the new number).
/// Values are written as `tsapply export` writes them (`StateManifest`, `ManifestEncoder`).
///
/// What the manifest does not manage (a reminder or section it leaves out, a field it does not
/// set) needs nothing: the plan already leaves it as the watch has it. What cannot be written in
/// this file (a contact another file of a fleet declares, an emergency contact written as a
/// reference) is reported, never guessed.
///
/// The result is checked before it is offered: the edited manifest, planned against the watch,
/// loads, has no change left that undoes an adopted resource's drift, and has exactly the pending
/// changes it had for every other resource. A resource that fails the first two checks is left
/// out (and reported); failing the third refuses the whole adoption.
public enum DriftAdoption {
  /// What adopting came to.
  public struct Outcome: Sendable {
    /// The edited manifest (the input when nothing had to be written).
    public var text: [UInt8]
    /// Drifted resources the manifest now states as the watch holds them, with what was written.
    public var adopted: [Adopted]
    /// Drifted resources the manifest does not manage: nothing to write, the plan already keeps them.
    public var unmanaged: [ResourceAddress]
    /// Of `unmanaged`, those whose section the manifest does not state at all (`Manifest.states`,
    /// set by `Watch.adoption`): they stay drift for the manifests that state them, so they are
    /// not `agreed` (fresh-eyes finding: adopting into a reminders-only manifest recorded SOS
    /// switched off, and the family's manifest then saw no drift).
    public var unstated: [ResourceAddress] = []
    /// Drifted resources left as the manifest has them, with why (in plain words).
    public var notAdopted: [(address: ResourceAddress, reason: String)]
    /// The drifted resources the edited manifest, planned against the watch, still changes: what
    /// the next apply of it still undoes (or changes otherwise), sorted. A resource not adopted
    /// whose manifest already gives what the watch holds (a contact a reference declares, a
    /// derived short name) is not in it: applying changes nothing there.
    public var undone: [ResourceAddress] = []

    /// Per resource, the contacts (as plan values, `ContactDiff.value`) whose change was not
    /// adopted: the plan may still undo those.
    var leftAsIs: [ResourceAddress: [FieldValue]] = [:]

    /// Every drifted resource the manifest now agrees with whole (adopted with nothing left
    /// out, or unmanaged): what the last-applied record may take from the watch
    /// (`LastApplied.adopting`). A resource adopted in part stays drift until the next apply.
    public var agreed: Set<ResourceAddress> {
      Set(adopted.map(\.address)).union(unmanaged).subtracting(notAdopted.map(\.address)).subtracting(unstated)
    }
  }

  /// One adopted resource and what was written for it (`enabled: false`, `phone of "Anna": "+4477…"`,
  /// `added "Carol"`, …).
  public struct Adopted: Hashable, Sendable {
    /// The resource.
    public var address: ResourceAddress
    /// What was written, in the manifest's words.
    public var edits: [String]
  }

  /// Why an adoption was refused as a whole.
  public struct Refusal: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong, in plain words.
    public var description: String
  }

  /// Adopts `drift` into the manifest `bytes` (named `file`) of a `capabilities` watch.
  /// `plan` plans a manifest text against the watch as it is now (`nil` when the text does not
  /// load or plan); `pending` is its plan of `bytes`.
  /// A resource whose adoption alone makes the text fail to load, or that the plan would still
  /// undo, is left out (`Outcome.notAdopted`) and the rest adopted again.
  /// - Throws: `Refusal` when the edited manifest does not load though no resource alone breaks
  ///   it, or would change what the plan does to a resource that did not drift.
  /// `problem` says why a text does not load (its first error's field and message: its line
  /// would be the edited text's), for the reason a resource is not adopted.
  public static func adopt(_ drift: [ResourceChange], into bytes: [UInt8], file: String, capabilities: DeviceCapabilities,
                           pending: Plan, problem: ([UInt8]) -> String? = { _ in nil },
                           plan: ([UInt8]) -> Plan?) throws(Refusal) -> Outcome {
    var candidates = drift
    var dropped: [(address: ResourceAddress, reason: String)] = []
    let pendingEdits = pendingEdits(of: drift, in: pending)
    // Each round either succeeds or drops at least one resource, so this ends.
    while true {
      var outcome = try edit(candidates, into: bytes, file: file, capabilities: capabilities, pendingEdits: pendingEdits)
      outcome.notAdopted += dropped
      // Not in this file, yet the plan undoes it: another file merged for the watch (a fleet's
      // layer) sets it, and adopting writes only into this one.
      let fromElsewhere = outcome.unmanaged.filter { address in
        guard let drifted = drift.first(where: { $0.address == address }),
              let planned = pending.resourceChanges.first(where: { $0.address == address }) else { return false }
        return planned.fields.contains { reverts($0, drifted.fields) }
      }
      outcome.unmanaged.removeAll { fromElsewhere.contains($0) }
      outcome.notAdopted += fromElsewhere.map { ($0, "what changed is set by another manifest merged for this watch (a layer), not by \(file); write it in \(file) to override the layer (a built-in reminder or a list written there replaces the layer's whole unit: write every field you keep), or change the layer") }
      guard !outcome.adopted.isEmpty else { return outcome.undoing(pending, drift: drift) }
      guard let planned = plan(outcome.text) else {
        // The resources that break the file on their own are left out, the rest tried again.
        var breaking: [ResourceAddress: String] = [:]
        for change in candidates {
          let alone = try edit([change], into: bytes, file: file, capabilities: capabilities, pendingEdits: pendingEdits)
          if !alone.adopted.isEmpty && plan(alone.text) == nil {
            breaking[change.address] = problem(alone.text).map { "written as the watch holds it, \(file) would not load: \($0); "
              + "change that in \(file) so it agrees with what the watch holds, then adopt again" }
              ?? "written as the watch holds it, \(file) would not load"
          }
        }
        guard !breaking.isEmpty else {
          throw Refusal(description: "the manifest with the changes adopted would not load"
                          + (problem(outcome.text).map { " (\($0))" } ?? "") + "; \(file) was left as it is")
        }
        dropped += breaking.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        candidates = candidates.filter { breaking[$0.address] == nil }
        continue
      }
      let adopted = Set(outcome.adopted.map(\.address))
      // Compared without their origins: the adopted lines move the ones after them, so a pending
      // change of another resource has the same fields at other lines.
      let others = { (changes: [ResourceChange]) in changes.filter { !adopted.contains($0.address) }.map(\.withoutOrigins) }
      let changedOthers = Set(others(planned.resourceChanges)).symmetricDifference(others(pending.resourceChanges)).map(\.address)
      guard changedOthers.isEmpty else {
        let names = Set(changedOthers).sorted().map(\.description).joined(separator: ", ")
        throw Refusal(description: "adopting would change what \(file) asks of resources that did not drift (\(names)); it was left as it is")
      }
      let differing = Set(planned.resourceChanges.filter { change in
        guard let drifted = drift.first(where: { $0.address == change.address }), adopted.contains(change.address) else { return false }
        let left = outcome.leftAsIs[change.address] ?? []
        let edited = pendingEdits[change.address] ?? []
        return change.fields.contains { field in
          reverts(field, drifted.fields) && !left.contains { $0 == field.before || $0 == field.after }
            && !edited.contains { concerns($0.planned, field) }
        }
      }.map(\.address))
      if differing.isEmpty { return outcome.undoing(planned, drift: drift) }
      dropped += differing.sorted().map { ($0, "the manifest would still undo it after writing it (the watch holds a value a manifest cannot state)") }
      candidates = candidates.filter { !differing.contains($0.address) }
    }
  }

  /// Whether the planned field change `planned` undoes one of `drifted` (the same field; for a
  /// contact list, a contact the drift added, removed or changed).
  static func reverts(_ planned: FieldChange, _ drifted: [FieldChange]) -> Bool {
    drifted.contains { change in
      guard change.field == planned.field else { return false }
      guard change.field == "contacts" else { return true }
      return (planned.before != nil && planned.before == change.after) || (planned.after != nil && planned.after == change.before)
    }
  }

  /// A drifted field change and the pending change of the same item (`pendingEdits`).
  typealias PendingEdit = (drifted: FieldChange, planned: FieldChange)

  /// Per drifted resource, its drifted items that also have a change written in the manifest and
  /// not applied yet: the manifest's value differs from the one the last apply left (the drift's
  /// `before`), so `pending` (the manifest planned against the watch now) does not put that value
  /// back but changes the item otherwise. Items are the fields of a reminder or of the SOS
  /// switch, and contacts: a list may hold several contacts of one name, so the planned changes
  /// that put a drifted contact back are paired first, then a drifted contact left unpaired is
  /// paired with a planned change of the contact the watch holds now (or, for one removed on the
  /// watch, one adding a contact of its name). Those items are not adopted, so the edit stays.
  static func pendingEdits(of drift: [ResourceChange], in pending: Plan) -> [ResourceAddress: [PendingEdit]] {
    var found: [ResourceAddress: [PendingEdit]] = [:]
    for change in drift {
      guard let planned = pending.resourceChanges.first(where: { $0.address == change.address }) else { continue }
      var unclaimed = planned.fields
      var left: [FieldChange] = []
      for drifted in change.fields {
        let putsBack = unclaimed.firstIndex {
          concerns($0, drifted) && $0.after == drifted.before && (drifted.field != "contacts" || $0.before == drifted.after)
        }
        if let putsBack { unclaimed.remove(at: putsBack) } else { left.append(drifted) }
      }
      for drifted in left {
        let edit = unclaimed.firstIndex { planned in
          guard concerns(planned, drifted) else { return false }
          guard drifted.field == "contacts" else { return true }
          return drifted.after != nil ? planned.before == drifted.after : planned.before == nil
        }
        if let edit { found[change.address, default: []].append((drifted, unclaimed.remove(at: edit))) }
      }
    }
    return found
  }

  /// Whether two field changes concern one item: the same field, and for a contact list a
  /// contact of the same name.
  static func concerns(_ one: FieldChange, _ other: FieldChange) -> Bool {
    guard one.field == other.field else { return false }
    guard one.field == "contacts" else { return true }
    return !contactNames(one).isDisjoint(with: contactNames(other))
  }

  /// The names of the contacts a `contacts` field change concerns (before and after).
  static func contactNames(_ change: FieldChange) -> Set<String> {
    Set([change.before, change.after].compactMap { contactEntry("name", of: $0) })
  }

  /// Whether `edit` of a contact differs from what the last apply left (the drift's `before`)
  /// in its short name alone: the same name and phone.
  static func differsOnlyInShortName(_ edit: PendingEdit) -> Bool {
    guard let left = edit.drifted.before, let planned = edit.planned.after else { return false }
    return ["name", "phoneNum"].allSatisfy { contactEntry($0, of: left) == contactEntry($0, of: planned) }
      && contactEntry("shortName", of: left) != contactEntry("shortName", of: planned)
  }

  /// The string entry `key` of a contact's plan value (`ContactDiff.value`).
  static func contactEntry(_ key: String, of value: FieldValue?) -> String? {
    guard case .object(let entries)? = value, case .string(let text)? = entries.first(where: { $0.key == key })?.value else { return nil }
    return text
  }

  /// Why the items of `edits` (all of one resource) were not adopted, in the manifest's words:
  /// `the watch removed "Bob"; m.yaml changes the phone of "Bob", not applied yet: apply or edit
  /// it first`, or for a reminder `the watch changed at; m.yaml changes at, not applied yet: …`.
  static func pendingReason(_ edits: [PendingEdit], before: ResourceValue?, after: ResourceValue?, file: String) -> String {
    let advice = "not applied yet: apply or edit it first"
    if let contact = edits.first(where: { $0.drifted.field == "contacts" }) {
      let (drifted, planned) = contact
      let name = ManifestWords.quoted(contactEntry("name", of: drifted.before ?? drifted.after) ?? "")
      let watch = drifted.before == nil ? "added" : drifted.after == nil ? "removed" : "changed"
      let manifest: String
      if drifted.before == nil {
        manifest = "adds \(name) with other values"
      } else if planned.after == nil {
        manifest = "removes \(name)"
      } else {
        let keys = ["name", "phoneNum", "shortName"].filter { contactEntry($0, of: drifted.before) != contactEntry($0, of: planned.after) }
        manifest = keys.isEmpty ? "changes \(name)" : "changes the \(keys.map(ManifestWords.contactKey).joined(separator: " and ")) of \(name)"
      }
      return "the watch \(watch) \(name); \(file) \(manifest), \(advice)"
    }
    var keys: [String] = []
    for edit in edits {
      let key = String(ManifestWords.key(edit.drifted.field).split(separator: ".").first ?? "")
      if !keys.contains(key) { keys.append(key) }
    }
    let written = keys.joined(separator: ", ")
    let watch = before == nil ? "added it" : after == nil ? "removed it" : "changed \(written)"
    return "the watch \(watch); \(file) changes \(written), \(advice)"
  }

  /// The edits for `drift`, unchecked.
  private static func edit(_ drift: [ResourceChange], into bytes: [UInt8], file: String, capabilities: DeviceCapabilities,
                           pendingEdits: [ResourceAddress: [PendingEdit]]) throws(Refusal) -> Outcome {
    var writer = Writer(editor: ManifestEditor(bytes: bytes, file: file), capabilities: capabilities, file: file, pendingEdits: pendingEdits)
    var custom = ListEdit()
    var customAddresses: [(ResourceAddress, String)] = []
    for change in drift {
      // A reminder's field, or a contact, with a pending edit is left out (in `Writer`); a
      // reminder added or removed on the watch whose manifest entry has one is left whole.
      if case .reminder? = change.before ?? change.after, let edits = pendingEdits[change.address],
         change.before == nil || change.after == nil {
        writer.outcome.notAdopted.append((change.address, pendingReason(edits, before: change.before, after: change.after, file: file)))
        continue
      }
      do {
        switch (change.before, change.after) {
        case (.reminder(let before)?, .reminder(let after)?):
          try writer.reminder(change.address, before: before, after: after)
        case (.reminder(let before)?, nil):
          // Removed on the watch: its item goes from the custom list.
          if let item = writer.customItem(named: before.reminderName) {
            custom.removed.append(item)
            customAddresses.append((change.address, "removed \(ManifestWords.quoted(before.reminderName))"))
          } else {
            writer.unmanagedOrMissing(change.address, list: ["reminders", "custom"], what: "the reminder \(ManifestWords.quoted(before.reminderName))")
          }
        case (nil, .reminder(let after)?):
          if writer.editor.node(at: ["reminders", "custom"]) != nil,
             let stated = StateManifest.reminder(after, kind: .custom, capabilities: capabilities) {
            custom.added.append(.mapping(ManifestEncoder.entries(of: stated), flow: false))
            customAddresses.append((change.address, "added \(ManifestWords.quoted(after.reminderName))"))
          } else {
            writer.outcome.unmanaged.append(change.address)
          }
        case (.contacts(let before)?, .contacts(let after)?):
          try writer.contacts(change.address, keys: ["contacts"], before: before, after: after)
        case (.emergency(let before)?, .emergency(let after)?):
          try writer.emergency(change.address, before: before, after: after)
        default:
          writer.outcome.notAdopted.append((change.address, "tsapply cannot tell what changed"))
        }
      } catch {
        throw Refusal(description: "cannot write the adopted values: \(error)")
      }
    }
    writer.settleReferences()
    if !custom.isEmpty {
      do { try writer.apply(custom, keys: ["reminders", "custom"]) } catch {
        throw Refusal(description: "cannot write the adopted values: \(error)")
      }
      for (address, edit) in customAddresses { writer.record(address, edit) }
    }
    writer.outcome.text = writer.editor.isEdited ? writer.editor.edited() : bytes
    return writer.outcome
  }

  /// Items to remove from and append to one list.
  private struct ListEdit {
    var removed: [YAMLNode] = []
    var added: [YAMLOutputNode] = []
    var isEmpty: Bool { removed.isEmpty && added.isEmpty }
  }

  /// Collects the edits and what they came to.
  private struct Writer {
    var editor: ManifestEditor
    let capabilities: DeviceCapabilities
    let file: String
    /// The drifted items with a pending edit (`DriftAdoption.pendingEdits`): never written.
    let pendingEdits: [ResourceAddress: [PendingEdit]]
    var outcome = Outcome(text: [], adopted: [], unmanaged: [], notAdopted: [])
    /// Contacts under `contacts:` edited as the watch now holds them (before → after).
    var editedContacts: [(before: Contact, after: Contact)] = []
    /// Changed emergency contacts written as references (`{contact: NAME}`): adopted when the
    /// contact they refer to is edited the same way under `contacts:` (`settleReferences`).
    var references: [(address: ResourceAddress, before: Contact, after: Contact, listName: String)] = []

    /// Notes `edit` as written for `address`.
    mutating func record(_ address: ResourceAddress, _ edit: String) {
      if let index = outcome.adopted.firstIndex(where: { $0.address == address }) {
        outcome.adopted[index].edits.append(edit)
      } else {
        outcome.adopted.append(Adopted(address: address, edits: [edit]))
      }
    }

    /// A resource whose list is not in the file is unmanaged; one whose entry is not found in
    /// the list cannot be adopted here.
    mutating func unmanagedOrMissing(_ address: ResourceAddress, list keys: [String], what: String) {
      if editor.node(at: keys) == nil {
        outcome.unmanaged.append(address)
      } else {
        outcome.notAdopted.append((address, "\(what) is not written in \(file) (in a fleet, a layer may set it)"))
      }
    }

    /// The item of `reminders.custom` whose name the watch stores as `name` (the name the watch
    /// holds: cut where the platform cuts names, fresh-eyes fe96 #1).
    func customItem(named name: String) -> YAMLNode? {
      guard let list = editor.node(at: ["reminders", "custom"]), case .sequence(let items) = list.content else { return nil }
      return items.first { item in
        ManifestEditor.value("name", in: item)?.scalar.map { capabilities.storedCustomReminderName($0.value) } == name
          && ManifestEditor.value("remove", in: item) == nil
      }
    }

    /// A reminder changed on the watch: each of its manifest fields that changed and that the
    /// manifest sets is written (the schedule's `at` / `period`, whichever it uses; `lunch_break`
    /// also when it comes from `reminders.lunch_break`).
    mutating func reminder(_ address: ResourceAddress, before: Reminder, after: Reminder) throws(YAMLWriteError) {
      guard let kind = after.kind else { return outcome.notAdopted.append((address, "the watch holds a reminder of an unknown type")) }
      let mapping = kind == .custom ? customItem(named: after.reminderName) : editor.node(at: ["reminders", kind.rawValue])
      guard let mapping else {
        return unmanagedOrMissing(address, list: kind == .custom ? ["reminders", "custom"] : ["reminders", kind.rawValue],
                                  what: "the reminder \(ManifestWords.quoted(after.reminderName))")
      }
      guard let was = StateManifest.reminder(before, kind: kind, capabilities: capabilities),
            let now = StateManifest.reminder(after, kind: kind, capabilities: capabilities) else {
        return outcome.unmanaged.append(address)
      }
      let previous = ManifestEncoder.entries(of: was)
      // The manifest keys whose value has a pending edit: left as written (`timeType` is `at`
      // or `period`).
      let edits = (pendingEdits[address] ?? []).filter { $0.drifted.field != "contacts" }
      let blocked = Set(edits.flatMap { edit -> [String] in
        edit.drifted.field == "timeType" ? ["at", "period"] : [String(ManifestWords.key(edit.drifted.field).split(separator: ".").first ?? "")]
      })
      if !edits.isEmpty {
        outcome.notAdopted.append((address, DriftAdoption.pendingReason(edits, before: .reminder(before), after: .reminder(after), file: file)))
      }
      var wrote = false
      for (key, value) in ManifestEncoder.entries(of: now) where key != "name" && !blocked.contains(key) {
        guard !previous.contains(where: { $0.key == key && $0.value == value }) else { continue }
        let other = key == "at" ? "period" : key == "period" ? "at" : nil
        let sets = ManifestEditor.value(key, in: mapping) != nil || other.map { ManifestEditor.value($0, in: mapping) != nil } ?? false
          || (key == "lunch_break" && editor.node(at: ["reminders", "lunch_break"]) != nil)
        guard sets else { continue }
        try editor.set(key, to: value, in: mapping, replacing: other)
        record(address, "\(key): \(try ManifestEditor.inline(value))")
        wrote = true
      }
      if !wrote && edits.isEmpty { outcome.unmanaged.append(address) }
    }

    /// The emergency contacts and the SOS switch changed on the watch.
    mutating func emergency(_ address: ResourceAddress, before: EmergencyContacts, after: EmergencyContacts) throws(YAMLWriteError) {
      guard let mapping = editor.node(at: ["emergency"]) else { return outcome.unmanaged.append(address) }
      var managed = false
      if before.isSosOn != after.isSosOn, ManifestEditor.writtenEntry("sos", in: mapping) != nil {
        try editor.set("sos", to: ManifestEncoder.bool(after.isSosOn), in: mapping)
        record(address, "sos: \(after.isSosOn)")
        managed = true
        // SOS on needs emergency contacts in the manifest: the watch's are written when it
        // states none.
        if after.isSosOn, !after.contacts.isEmpty, ManifestEditor.value("contacts", in: mapping) == nil {
          try editor.set("contacts", to: .sequence(after.contacts.map { ManifestEncoder.node(StateManifest.contact($0)) }, flow: true), in: mapping)
          for contact in after.contacts { record(address, "added \(ManifestWords.quoted(contact.name)) to emergency.contacts") }
          return
        }
      }
      if ContactDiff(from: before.contacts, to: after.contacts).isEmpty || editor.node(at: ["emergency", "contacts"]) == nil {
        if !managed { outcome.unmanaged.append(address) }
        return
      }
      try contacts(address, keys: ["emergency", "contacts"], before: before.contacts, after: after.contacts)
    }

    /// A contact list changed on the watch: contacts removed there are removed, contacts whose
    /// number, short name or (same number) name changed are edited in place, contacts added are
    /// appended.
    mutating func contacts(_ address: ResourceAddress, keys: [String], before: [Contact], after: [Contact]) throws(YAMLWriteError) {
      let listName = keys.joined(separator: ".")
      guard let list = editor.node(at: keys), case .sequence(let items) = list.content else {
        return outcome.unmanaged.append(address)
      }
      let diff = ContactDiff(from: before, to: after)
      var claimed = Set<Int>()
      func find(_ contact: Contact) -> Int? {
        let phone = PhoneFormatting.removed(from: contact.phoneNum)
        let candidates = items.indices.filter { !claimed.contains($0) && ManifestEditor.value("remove", in: items[$0]) == nil }
        // Named as the watch stores the name (cut where it is longer than the platform keeps).
        let named = candidates.filter { Self.itemName(items[$0]).map(capabilities.storedContactName) == contact.name }
        return named.first { ManifestEditor.value("phone", in: items[$0])?.scalar.map { PhoneFormatting.removed(from: $0.value) } == phone }
          ?? named.first
      }
      // A contact with a pending edit is left as the file has it. A short name the file does not
      // write is derived: one the plan gives where the last apply left none is no edit of the
      // file's own (fresh-eyes fe97 #1: an exported manifest's contacts, removed on the watch,
      // were "not adopted: changes the short_name").
      let edits = (pendingEdits[address] ?? []).filter { edit in
        guard edit.drifted.field == "contacts" else { return false }
        guard DriftAdoption.differsOnlyInShortName(edit), let name = DriftAdoption.contactEntry("name", of: edit.planned.after) else { return true }
        let item = items.first { Self.itemName($0).map(capabilities.storedContactName) == name && ManifestEditor.value("remove", in: $0) == nil }
        return item.map { ManifestEditor.value("short_name", in: $0) != nil } ?? true
      }
      func leftForPendingEdit(_ contacts: [Contact]) -> Bool {
        guard let edit = edits.first(where: { edit in contacts.contains { DriftAdoption.contactNames(edit.drifted).contains($0.name) } }) else { return false }
        outcome.leftAsIs[address, default: []] += contacts.map(ContactDiff.value)
        outcome.notAdopted.append((address, DriftAdoption.pendingReason([edit], before: nil, after: nil, file: file)))
        return true
      }
      var edit = ListEdit()
      var notes: [String] = []
      let refusedBefore = outcome.notAdopted.count, referencesBefore = references.count
      for contact in diff.removed where !leftForPendingEdit([contact]) {
        guard let index = find(contact) else {
          outcome.leftAsIs[address, default: []].append(ContactDiff.value(contact))
          let removal = try ManifestEditor.inline(.mapping([("name", .scalar(contact.name, .plain)), ("remove", ManifestEncoder.bool(true))], flow: true))
          outcome.notAdopted.append((address, "\(ManifestWords.quoted(contact.name)), removed on the watch, is not written in \(listName) of \(file) (in a fleet, a layer may declare it: remove it there, or write \(removal) here)"))
          continue
        }
        claimed.insert(index)
        edit.removed.append(items[index])
        notes.append("removed \(ManifestWords.quoted(contact.name))")
      }
      for pair in diff.changed where !leftForPendingEdit([pair.before, pair.after]) {
        guard let index = find(pair.before) else {
          outcome.leftAsIs[address, default: []].append(ContactDiff.value(pair.before))
          outcome.notAdopted.append((address, "\(ManifestWords.quoted(pair.before.name)), changed on the watch, is not written in \(listName) of \(file) (in a fleet, a layer may declare it)"))
          continue
        }
        claimed.insert(index)
        let item = items[index]
        guard ManifestEditor.value("contact", in: item) == nil else {
          references.append((address, pair.before, pair.after, listName))
          continue
        }
        if keys == ["contacts"] { editedContacts.append((pair.before, pair.after)) }
        guard case .mapping(let fields, _) = ManifestEncoder.node(StateManifest.contact(pair.after)) else { continue }
        for (key, value) in fields {
          let written = ManifestEditor.value(key, in: item)?.scalar?.value
          let same = key == "phone" ? written.map(PhoneFormatting.removed(from:)) == PhoneFormatting.removed(from: pair.after.phoneNum)
            : key == "name" ? written.map(capabilities.storedContactName) == pair.after.name : written == pair.after.shortName
          guard !same else { continue }
          try editor.set(key, to: value, in: item)
          notes.append("\(key) of \(ManifestWords.quoted(pair.after.name)): \(try ManifestEditor.inline(value))")
        }
      }
      // A copy of a contact the list already gives (the same name and number, added again on the
      // watch) cannot be written: a manifest lists a contact once. It stays drift, which the next
      // apply removes, and the rest is adopted (fresh-eyes fe97 #4: the whole list refused, with
      // advice no manifest can follow).
      let copies = diff.added.filter { contact in
        items.indices.contains { index in
          !claimed.contains(index) && ManifestEditor.value("remove", in: items[index]) == nil
            && Self.itemName(items[index]).map(capabilities.storedContactName) == contact.name
            && ManifestEditor.value("phone", in: items[index])?.scalar.map { PhoneFormatting.removed(from: $0.value) } == PhoneFormatting.removed(from: contact.phoneNum)
        }
      }
      for copy in copies {
        outcome.leftAsIs[address, default: []].append(ContactDiff.value(copy))
        outcome.notAdopted.append((address, "the watch holds \(ManifestWords.quoted(copy.name)) more than once; \(listName) of \(file) lists a contact once, "
          + "so the copy stays drift, which the next apply removes"))
      }
      let added = diff.added.filter { contact in !copies.contains(contact) && !leftForPendingEdit([contact]) }
      edit.added = added.map { ManifestEncoder.node(StateManifest.contact($0)) }
      notes += added.map { "added \(ManifestWords.quoted($0.name))" }
      try apply(edit, keys: keys)
      for note in notes { record(address, note) }
      // Nothing to write and nothing refused: what changed is what the file does not give (an
      // emergency contact's short name emptied): kept, as an unmanaged change is, so drift stops
      // reporting it (fresh-eyes finding: "Nothing to write", and the drift for good).
      if notes.isEmpty, outcome.notAdopted.count == refusedBefore, references.count == referencesBefore, edits.isEmpty {
        outcome.unmanaged.append(address)
      }
    }

    /// The changed emergency contacts written as references: one whose contact under
    /// `contacts:` was edited to the same name and number (the wearer changed both lists alike)
    /// is adopted with it; any other is not adopted, and says where to change it (fresh-eyes
    /// fe97 #9: "change that one" after that one was adopted, and exit 1).
    mutating func settleReferences() {
      let phone = { (contact: Contact) in PhoneFormatting.removed(from: contact.phoneNum) }
      for reference in references {
        let followed = editedContacts.contains { pair in
          pair.before.name == reference.before.name && phone(pair.before) == phone(reference.before)
            && pair.after.name == reference.after.name && phone(pair.after) == phone(reference.after)
            && (pair.after.shortName == nil || reference.after.shortName == nil || pair.after.shortName == reference.after.shortName)
        }
        if followed {
          record(reference.address, "\(ManifestWords.quoted(reference.after.name)) follows the contact under contacts:")
        } else {
          outcome.leftAsIs[reference.address, default: []].append(ContactDiff.value(reference.before))
          outcome.notAdopted.append((reference.address, "\(ManifestWords.quoted(reference.before.name)) in \(reference.listName) refers to the contact declared under contacts:; change that one"))
        }
      }
      references = []
    }

    /// Removes and appends the items of `edit` in the list at `keys`, writing the list anew when
    /// it ends up empty or was empty.
    mutating func apply(_ edit: ListEdit, keys: [String]) throws(YAMLWriteError) {
      guard let list = editor.node(at: keys), case .sequence(let items) = list.content,
            let parent = editor.node(at: Array(keys.dropLast())), let key = keys.last else { return }
      if edit.removed.count == items.count || items.isEmpty {
        try editor.replaceItems(of: key, in: parent, with: edit.added)
        return
      }
      for item in edit.removed { editor.remove(item, from: list) }
      try editor.append(edit.added, to: list)
    }

    /// A contact item's name: its `name`, or the name a reference (`contact:`) gives.
    static func itemName(_ item: YAMLNode) -> String? {
      (ManifestEditor.value("name", in: item) ?? ManifestEditor.value("contact", in: item))?.scalar?.value
    }
  }
}

extension LastApplied {
  /// This record with the resources of `drift` whose addresses are in `addresses` taken as the
  /// watch holds them now (each change's `after`): what `tsapply drift --adopt` records once the
  /// manifest states them, so drift no longer reports them. Other resources keep what the last
  /// apply left, and the rest of the record stays: nothing is written to the watch, so
  /// `appliedAt` (`status --fleet`'s "Last applied", docs/plan.md "Drift") does not move.
  public func adopting(_ drift: [ResourceChange], addresses: Set<ResourceAddress>) -> LastApplied {
    var record = self
    record.state = state.taking(drift, addresses: addresses, as: .now)
    record.unconfirmed = unconfirmed.map { $0.taking(drift, addresses: addresses, as: .now) }
    return record
  }
}

extension DeviceState {
  /// Which side of a drift change `taking(_:addresses:as:)` takes.
  public enum DriftSide: Sendable {
    /// As the last apply left it (each change's `before`).
    case recorded
    /// As the watch holds it now (each change's `after`).
    case now
  }

  /// This state with the resources of `drift` (changes since a last-applied record: `before` =
  /// recorded, `after` = the watch now) whose addresses are in `addresses` set to `side`: the
  /// contacts and the emergency list whole, a reminder replaced, added or removed (a custom one
  /// found by name, a built-in by ID). `drift --adopt` takes the watch's (`LastApplied.adopting`);
  /// an apply that keeps drift out of its record takes the recorded ones
  /// (`ApplyOptions.keepsDriftInRecord`).
  public func taking(_ drift: [ResourceChange], addresses: Set<ResourceAddress>, as side: DriftSide) -> DeviceState {
    var state = self
    for change in drift where addresses.contains(change.address) {
      let (other, wanted) = side == .now ? (change.before, change.after) : (change.after, change.before)
      switch (other, wanted) {
      case (_, .contacts(let list)?): state.contacts = list
      case (_, .emergency(let list)?): state.emergency = list
      default:
        let was: Reminder? = if case .reminder(let reminder)? = other { reminder } else { nil }
        let now: Reminder? = if case .reminder(let reminder)? = wanted { reminder } else { nil }
        guard let any = was ?? now else { continue }
        // A custom reminder by its name, a built-in by its ID (the same on both sides); a custom
        // one first by its ID and name, so that of two of one name (a second "Walk" added on the
        // watch) the drifted one is taken, not the first (fresh-eyes fe102 #1: the recorded Walk
        // was taken out for the wearer's, and drift then said its time changed).
        let index = state.reminders.firstIndex {
          any.kind == .custom && $0.reminderType == any.reminderType && $0.reminderId == any.reminderId && $0.reminderName == any.reminderName
        } ?? state.reminders.firstIndex {
          $0.reminderType == any.reminderType && (any.kind == .custom ? $0.reminderName == any.reminderName : $0.reminderId == any.reminderId)
        }
        switch (index, now) {
        case (let index?, let now?): state.reminders[index] = now
        case (let index?, nil): state.reminders.remove(at: index)
        case (nil, let now?): state.reminders.append(now)
        case (nil, nil): break
        }
      }
    }
    return state
  }
}


extension DriftAdoption.Outcome {
  /// This outcome with `undone`: the resources of `drift` where `plan` (of its text, against
  /// the watch) changes what drifted — a field both change (a reminder's `enabled`, the
  /// emergency list's `sos`), or a contact both touch (same name or number, as `ContactDiff`
  /// pairs them); a resource created or deleted on either side counts whole. A drifted resource
  /// the plan changes elsewhere only (the manifest's own edit, not applied yet: a contact it
  /// adds, a reminder's times) undoes nothing.
  func undoing(_ plan: Plan, drift: [ResourceChange]) -> Self {
    var outcome = self
    outcome.undone = plan.undoing(drift)
    return outcome
  }

}
