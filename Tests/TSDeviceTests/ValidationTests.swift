import Testing
import TSDevice
import TSModel

/// The SDK validator's rules, codes and English messages (docs/platforms.md "Reminder validation"), directly and
/// through the platforms that run it (Npk, default) or skip it (Fit).
@Suite struct ValidationTests {
  struct Case: Sendable, CustomTestStringConvertible {
    var label: String
    var reminder: Reminder
    var message: String
    var code: TSErrorCode = .paramError
    var testDescription: String { label }
    var error: DeviceError { DeviceError(.reminder, code, message) }
  }

  static func custom(_ change: (inout Reminder) -> Void) -> Reminder {
    var reminder = customReminder("32")
    change(&reminder)
    return reminder
  }

  static let invalid: [Case] = [
    Case(label: "empty id", reminder: custom { $0.reminderId = "" }, message: "Reminder ID cannot be empty", code: .invalidParam),
    Case(label: "custom id 31", reminder: custom { $0.reminderId = "31" }, message: "Custom reminder ID must be 32 or greater"),
    Case(label: "non-numeric custom id", reminder: custom { $0.reminderId = "custom_reminder_001" }, message: "Custom reminder ID must be 32 or greater"),
    Case(label: "repeat 0", reminder: custom { $0.repeatDays = .once }, message: "At least one repeat day must be selected"),
    Case(label: "start -1", reminder: custom { $0.startTime = -1 }, message: "Start time must be between 0 and 1439 minutes"),
    Case(label: "end 1440", reminder: custom { $0.endTime = 1440 }, message: "End time must be between 0 and 1439 minutes"),
    Case(label: "start after end", reminder: custom { ($0.startTime, $0.endTime) = (600, 500) }, message: "Start time must be earlier than end time"),
    Case(label: "no time points", reminder: custom { $0.timeType = .point }, message: "Time points array cannot be empty for point time type"),
    Case(label: "time point 1500", reminder: custom { ($0.timeType, $0.timePoints) = (.point, [480, 1500]) }, message: "Invalid time point: 1500 minutes"),
    Case(label: "negative time point", reminder: custom { ($0.timeType, $0.timePoints) = (.point, [-1]) }, message: "Invalid time point: -1 minutes"),
    Case(label: "lunch start 1440", reminder: custom { ($0.isLunchBreakDNDEnabled, $0.lunchBreakDNDStartTime, $0.lunchBreakDNDEndTime) = (true, 1440, 1441) },
         message: "Lunch break DND start time must be between 0 and 1439 minutes"),
    Case(label: "lunch end -5", reminder: custom { ($0.isLunchBreakDNDEnabled, $0.lunchBreakDNDStartTime, $0.lunchBreakDNDEndTime) = (true, 720, -5) },
         message: "Lunch break DND end time must be between 0 and 1439 minutes"),
    Case(label: "lunch equal ends", reminder: custom { ($0.isLunchBreakDNDEnabled, $0.lunchBreakDNDStartTime, $0.lunchBreakDNDEndTime) = (true, 720, 720) },
         message: "Lunch break DND start time must be earlier than end time"),
  ]

  static let valid: [Case] = [
    Case(label: "start equals end", reminder: custom { ($0.startTime, $0.endTime) = (600, 600) }, message: ""),
    Case(label: "interval 0", reminder: custom { $0.interval = 0 }, message: ""),
    Case(label: "lunch off with bad times", reminder: custom { ($0.lunchBreakDNDStartTime, $0.lunchBreakDNDEndTime) = (900, 100) }, message: ""),
    Case(label: "empty name", reminder: custom { $0.reminderName = "" }, message: ""),
    Case(label: "unsorted duplicate time points", reminder: custom { ($0.timeType, $0.timePoints) = (.point, [900, 480, 480]) }, message: ""),
    Case(label: "built-in with any id", reminder: Reminder(reminderId: "7", reminderType: .sedentary, repeatDays: .monday), message: ""),
  ]

  @Test(arguments: invalid)
  func validatorReturnsTheSDKError(_ test: Case) {
    #expect(ReminderValidator.firstError(in: test.reminder) == test.error)
  }

  @Test(arguments: valid)
  func validatorAcceptsWhatTheSDKDoesNotCheck(_ test: Case) {
    #expect(ReminderValidator.firstError(in: test.reminder) == nil)
  }

  @Test func validatorStopsAtTheFirstErrorInOrder() {
    let twoErrors = Self.custom { ($0.repeatDays, $0.startTime) = (.once, -1) }
    #expect(ReminderValidator.firstError(in: [customReminder("40"), twoErrors, Self.custom { $0.reminderId = "" }])
            == DeviceError(.reminder, .paramError, "At least one repeat day must be selected"))
    #expect(ReminderValidator.firstError(in: []) == nil)
  }

  @Test(arguments: invalid)
  func npkReplaceAllAndSetAnswerTheValidatorsErrorWithoutChangingTheWatch(_ test: Case) async throws {
    let device = try watch("npk")
    let before = try await device.fetchAllReminders()
    await #expect(throws: test.error) { try await device.replaceAllReminders(before + [test.reminder]) }
    await #expect(throws: test.error) { try await device.setReminder(test.reminder) }
    #expect(try await device.fetchAllReminders() == before)
  }

  @Test func npkSetReminderRevalidatesTheOtherReminders() async throws {
    let broken = Self.custom { ($0.reminderId, $0.startTime, $0.endTime) = ("33", 900, 800) }
    let device = try watch("npk", state: try state("npk", plus: [broken]))
    await #expect(throws: DeviceError(.reminder, .paramError, "Start time must be earlier than end time")) {
      try await device.setReminder(customReminder("32"))
    }
  }

  @Test func npkCountsCustomRemindersBeforeValidating() async throws {
    let device = try watch("npk")
    let customs = (32..<40).map { customReminder(String($0)) } + [Self.custom { $0.reminderId = "" }]
    await #expect(throws: DeviceError(.reminder, .paramSizeError, "Custom reminders exceed limit")) {
      try await device.replaceAllReminders(try await device.fetchAllReminders() + customs)
    }
  }

  static let onceByProfile: [(String, Bool)] = [("default", true), ("npk", false), ("fit", true)]

  @Test(arguments: onceByProfile)
  func onceIsStoredOnlyWhereThePlatformAllowsIt(profile: String, allowed: Bool) async throws {
    let device = try watch(profile)
    let once = Self.custom { $0.repeatDays = .once }
    #expect(try await device.capabilities().reminders.supportsOnce == allowed)
    if allowed {
      try await device.setReminder(once)
      #expect(try await device.fetchAllReminders().last?.repeatDays == .once)
    } else {
      await #expect(throws: DeviceError(.reminder, .paramError, "At least one repeat day must be selected")) {
        try await device.setReminder(once)
      }
    }
  }

  @Test func fitStoresWhatTheValidatorWouldRefuse() async throws {
    let device = try watch("fit")
    let backwards = Self.custom { ($0.startTime, $0.endTime) = (900, 800) }
    try await device.setReminder(backwards)
    #expect(try await device.fetchAllReminders().last == backwards)
  }

  static let integerValues: [(String, Int)] = [("32", 32), ("  40", 40), ("+7", 7), ("-3", -3), ("12ab", 12), ("abc", 0), ("", 0)]

  @Test(arguments: integerValues)
  func integerValueFollowsNSString(text: String, value: Int) {
    #expect(ReminderValidator.integerValue(text) == value)
  }
}
