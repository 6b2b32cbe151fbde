import TSManifest
import TSModel
import TSPlan

/// SplitMix64: a small deterministic pseudo-random generator, so generated cases repeat exactly.
public struct SplitMix64: RandomNumberGenerator {
  public var state: UInt64
  public init(state: UInt64) { self.state = state }
  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

/// Generates manifests (and, in TSPlanTests, watch states) that a platform could hold, for the
/// convergence property tests: deterministic for a given seed.
public struct Generator {
  public var random: SplitMix64
  public let capabilities: DeviceCapabilities

  public init(random: SplitMix64, capabilities: DeviceCapabilities) {
    self.random = random
    self.capabilities = capabilities
  }

  public static let names = ["Walk", "Evening walk", "Pills", "Stretch", "Take the blood pressure tablets now",
                      "体操体操体操体操体操体操", "Yoga", "Tea"]
  public static let notes = ["", "Take the dog", "药", "Notes that run on past sixty bytes of text, to be cut by fit"]
  public static let people = ["Alex Doe", "Sam Roe", "Kim Li", "李明", "Émile Zola", "Lee Park"]
  public static let phones = ["+15550100", "+15550101", "+15550102", "0123456", "+8613912345678", "112"]
  public static let repeats: [RepeatDays] = [.everyday, .workday, .weekend, [.monday, .wednesday, .friday], .once]

  public mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }
  public mutating func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &random)] }
  public mutating func count(_ upper: Int) -> Int { upper <= 0 ? 0 : Int.random(in: 0...upper, using: &random) }

  // MARK: Values the platform accepts

  public mutating func name(for storage: ReminderKindCapabilities) -> String? {
    guard let limit = storage.nameMaxBytes else { return nil }
    let fitting = Self.names.filter { storage.truncatesLongText || $0.utf8.count <= limit }
    return pick(fitting)
  }

  public mutating func note(for storage: ReminderKindCapabilities) -> String? {
    guard let limit = storage.notesMaxBytes else { return nil }
    return pick(Self.notes.filter { storage.truncatesLongText || $0.utf8.count <= limit })
  }

  public mutating func repeatDays(for storage: ReminderKindCapabilities) -> RepeatDays {
    guard storage.storesRepeatDays else { return .everyday }
    return pick(Self.repeats.filter { $0 != .once || capabilities.reminders.supportsOnce })
  }

  public mutating func schedule(for storage: ReminderKindCapabilities) -> ReminderSchedule {
    if storage.timeTypes.contains(.point) && (!storage.timeTypes.contains(.period) || chance(50)) {
      let points = Set((0..<(1 + count(2))).map { _ in Int.random(in: 0...1439, using: &random) })
      return .timePoints(points.compactMap { MinuteOfDay(rawValue: $0) }.sorted())
    }
    let start = Int.random(in: 0...1300, using: &random)
    let end = Int.random(in: (start + 30)...1439, using: &random)
    return .period(start: MinuteOfDay(rawValue: start)!, end: MinuteOfDay(rawValue: end)!, interval: pick([30, end - start]))
  }

  public mutating func lunch(for storage: ReminderKindCapabilities) -> LunchBreak {
    switch storage.lunchBreak {
    case .none: return .off
    case .flagOnly: return LunchBreak(isEnabled: chance(50))
    case .times:
      let window = LunchBreak.Window(start: MinuteOfDay(rawValue: 690 + count(60))!, end: MinuteOfDay(rawValue: 800 + count(60))!)
      return chance(30) ? .off : LunchBreak(isEnabled: true, window: window)
    }
  }
}
