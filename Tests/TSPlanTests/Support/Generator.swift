import TSManifest
import TSModel
@testable import TSPlan

/// SplitMix64: a small deterministic pseudo-random generator, so generated cases repeat exactly.
struct SplitMix64: RandomNumberGenerator {
  var state: UInt64
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

/// Generates manifests and watch states that a platform could hold, for the convergence test.
struct Generator {
  var random: SplitMix64
  let capabilities: DeviceCapabilities

  static let names = ["Walk", "Evening walk", "Pills", "Stretch", "Take the blood pressure tablets now",
                      "体操体操体操体操体操体操", "Yoga", "Tea"]
  static let notes = ["", "Take the dog", "药", "Notes that run on past sixty bytes of text, to be cut by fit"]
  static let people = ["Alex Doe", "Sam Roe", "Kim Li", "李明", "Émile Zola", "Lee Park"]
  static let phones = ["+15550100", "+15550101", "+15550102", "0123456", "+8613912345678", "112"]
  static let repeats: [RepeatDays] = [.everyday, .workday, .weekend, [.monday, .wednesday, .friday], .once]

  mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }
  mutating func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &random)] }
  mutating func count(_ upper: Int) -> Int { upper <= 0 ? 0 : Int.random(in: 0...upper, using: &random) }

  // MARK: Values the platform accepts

  mutating func name(for storage: ReminderKindCapabilities) -> String? {
    guard let limit = storage.nameMaxBytes else { return nil }
    let fitting = Self.names.filter { storage.truncatesLongText || $0.utf8.count <= limit }
    return pick(fitting)
  }

  mutating func note(for storage: ReminderKindCapabilities) -> String? {
    guard let limit = storage.notesMaxBytes else { return nil }
    return pick(Self.notes.filter { storage.truncatesLongText || $0.utf8.count <= limit })
  }

  mutating func repeatDays(for storage: ReminderKindCapabilities) -> RepeatDays {
    guard storage.storesRepeatDays else { return .everyday }
    return pick(Self.repeats.filter { $0 != .once || capabilities.reminders.supportsOnce })
  }

  mutating func schedule(for storage: ReminderKindCapabilities) -> ReminderSchedule {
    if storage.timeTypes.contains(.point) && (!storage.timeTypes.contains(.period) || chance(50)) {
      let points = Set((0..<(1 + count(2))).map { _ in Int.random(in: 0...1439, using: &random) })
      return .timePoints(points.compactMap { MinuteOfDay(rawValue: $0) }.sorted())
    }
    let start = Int.random(in: 0...1300, using: &random)
    let end = Int.random(in: (start + 30)...1439, using: &random)
    return .period(start: MinuteOfDay(rawValue: start)!, end: MinuteOfDay(rawValue: end)!, interval: pick([30, end - start]))
  }

  mutating func lunch(for storage: ReminderKindCapabilities) -> LunchBreak {
    switch storage.lunchBreak {
    case .none: return .off
    case .flagOnly: return LunchBreak(isEnabled: chance(50))
    case .times:
      let window = LunchBreak.Window(start: MinuteOfDay(rawValue: 690 + count(60))!, end: MinuteOfDay(rawValue: 800 + count(60))!)
      return chance(30) ? .off : LunchBreak(isEnabled: true, window: window)
    }
  }

  // MARK: Watch states

  mutating func state() -> DeviceState {
    var state = Profiles.factoryState(capabilities)
    for index in state.reminders.indices {
      guard let kind = state.reminders[index].kind, let storage = capabilities.reminders[kind] else { continue }
      state.reminders[index] = randomReminder(base: state.reminders[index], storage: storage)
    }
    if let storage = capabilities.reminders.custom {
      for offset in 0..<count(min(capabilities.reminders.maxCustomReminders, 4)) {
        let base = Reminder(reminderId: String(32 + offset), reminderType: .custom)
        state.reminders.append(randomReminder(base: base, storage: storage))
      }
    }
    state.contacts = contacts(max: min(capabilities.contacts.maxContacts, 5))
    if capabilities.contacts.supportsEmergencyContacts {
      let list = contacts(max: capabilities.contacts.maxEmergencyContacts)
      state.emergency = EmergencyContacts(contacts: list, isSosOn: !list.isEmpty && chance(50))
    }
    return Storage.stored(state, capabilities: capabilities)
  }

  mutating func randomReminder(base: Reminder, storage: ReminderKindCapabilities) -> Reminder {
    let patch = ReminderPatch(name: name(for: storage), isEnabled: chance(50), repeatDays: repeatDays(for: storage),
                              schedule: schedule(for: storage), lunchBreak: lunch(for: storage), notes: note(for: storage))
    return patch.applying(to: base)
  }

  mutating func contacts(max: Int) -> [Contact] {
    (0..<count(max)).map { _ in
      let name = pick(Self.people)
      return Contact(name: name, phoneNum: pick(Self.phones), shortName: chance(70) ? String(name.prefix(1)) : "#")
    }
  }
}
