/// The SDK's `TSReminderType` raw values (docs/platforms.md "Values and units"): unknown 0, sedentary 1,
/// drinking 2, takeMedicine 3, custom 4.
public enum ReminderType: Int, Hashable, Codable, Sendable, CaseIterable {
  case unknown = 0
  case sedentary = 1
  case drinking = 2
  case takeMedicine = 3
  case custom = 4
}

/// Period (start, end, interval) or time points: the SDK's `TSReminderTimeType`
/// (period 0, point 1; docs/platforms.md "Values and units").
public enum ReminderTimeType: Int, Hashable, Codable, Sendable, CaseIterable {
  case period = 0
  case point = 1
}

/// The reminders a manifest can address: the three built-ins and custom reminders.
///
/// Built-ins have fixed device IDs ("0", "1", "2"; docs/platforms.md "Reminder IDs"), always exist and are never
/// deleted, only enabled, disabled and edited. Custom reminders get device-assigned IDs (32 and up
/// on Npk) from the template call.
public enum ReminderKind: String, Hashable, Codable, Sendable, CaseIterable, Comparable {
  case sedentary
  case drinking
  case medicine
  case custom

  /// The three built-in kinds, in SDK ID order.
  public static let builtIns: [ReminderKind] = [.sedentary, .drinking, .medicine]

  /// The SDK type for this kind.
  public var reminderType: ReminderType {
    switch self {
    case .sedentary: .sedentary
    case .drinking: .drinking
    case .medicine: .takeMedicine
    case .custom: .custom
    }
  }

  /// The fixed device ID of a built-in ("0", "1", "2"); `nil` for custom reminders.
  public var builtInID: String? {
    switch self {
    case .sedentary: "0"
    case .drinking: "1"
    case .medicine: "2"
    case .custom: nil
    }
  }

  /// The kind for an SDK type; `nil` for `unknown`.
  public init?(_ type: ReminderType) {
    switch type {
    case .sedentary: self = .sedentary
    case .drinking: self = .drinking
    case .takeMedicine: self = .medicine
    case .custom: self = .custom
    case .unknown: return nil
    }
  }

  /// Built-ins in SDK ID order, then custom.
  public static func < (a: Self, b: Self) -> Bool { a.order < b.order }

  private var order: Int {
    switch self {
    case .sedentary: 0
    case .drinking: 1
    case .medicine: 2
    case .custom: 3
    }
  }
}
