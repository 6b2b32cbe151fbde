import TSManifest
import TSModel
import TSPlan

extension Generator {
  /// A manifest that fits the platform: sections and fields left out at random.
  public mutating func manifest() -> Manifest {
    Build.manifest(reminders: chance(80) ? reminders() : nil,
                   contacts: capabilities.contacts.maxContacts > 0 && chance(60) ? manifestContacts() : nil,
                   emergency: capabilities.contacts.supportsEmergencyContacts && chance(60) ? emergency() : nil)
  }

  public mutating func reminders() -> ManifestReminders {
    var line = 3
    var builtIns: [ReminderKind: ManifestReminder] = [:]
    for kind in ReminderKind.builtIns {
      guard let storage = capabilities.reminders[kind], chance(60) else { continue }
      builtIns[kind] = manifestReminder(kind, path: "reminders.\(kind.rawValue)", line: line, name: nil, storage: storage)
      line += 8
    }
    return Build.reminders(sedentary: builtIns[.sedentary], drinking: builtIns[.drinking], medicine: builtIns[.medicine],
                           custom: customList())
  }

  public mutating func customList() -> [ManifestReminder]? {
    guard let storage = capabilities.reminders.custom, capabilities.reminders.maxCustomReminders > 0 else {
      return chance(20) ? [] : nil
    }
    guard chance(70) else { return nil }
    var stored = Set<String>()
    var list: [ManifestReminder] = []
    for _ in 0..<count(min(capabilities.reminders.maxCustomReminders, 4)) {
      guard let name = name(for: storage) else { break }
      let key = storage.truncatesLongText ? TextTruncation.truncate(name, maxBytes: storage.nameMaxBytes ?? 0) : name
      guard stored.insert(key).inserted else { continue }
      list.append(manifestReminder(.custom, path: "reminders.custom[\(list.count)]", line: 31 + 8 * list.count,
                                   name: name, storage: storage))
    }
    return list
  }

  public mutating func manifestReminder(_ kind: ReminderKind, path: String, line: Int, name: String?,
                                 storage: ReminderKindCapabilities) -> ManifestReminder {
    Build.reminder(kind, path: path, line: line, name: name,
                   enabled: chance(60) ? chance(50) : nil,
                   repeatDays: chance(60) ? repeatDays(for: storage) : nil,
                   schedule: chance(60) ? schedule(for: storage) : nil,
                   lunch: chance(50) ? lunch(for: storage) : nil,
                   notes: chance(40) ? note(for: storage) : nil)
  }

  public mutating func uniquePairs(max: Int) -> [(String, String)] {
    var pairs: [(String, String)] = []
    for _ in 0..<count(max) {
      let pair = (pick(Self.people), pick(Self.phones))
      if !pairs.contains(where: { $0 == pair }) { pairs.append(pair) }
    }
    return pairs
  }

  public mutating func manifestContacts() -> Located<[ManifestContact]> {
    Build.contacts(uniquePairs(max: min(capabilities.contacts.maxContacts, 5)))
  }

  public mutating func emergency() -> ManifestEmergency {
    let list = chance(70) ? uniquePairs(max: capabilities.contacts.maxEmergencyContacts) : nil
    let sos: Bool? = chance(70) ? (list.map { !$0.isEmpty } ?? true) && chance(60) : nil
    return Build.emergency(sos: sos, contacts: list)
  }
}
