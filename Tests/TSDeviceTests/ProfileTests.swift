import Testing
import TSDevice
import TSModel

/// Capacity, upsert, ID assignment, template defaults, built-in deletion and unsupported
/// operations, per platform profile (docs/platforms.md "Custom-reminder templates", "Reminder writes per platform", "The table").
@Suite struct ProfileTests {
  static let customCapacity: [(String, Int, DeviceError)] = [
    ("default", 10, DeviceError(.reminder, .paramSizeError, "Custom reminders exceed limit")),
    ("npk", 7, DeviceError(.reminder, .paramSizeError, "Custom reminders exceed limit")),
    ("fit", 5, DeviceError(.reminder, .invalidParam, "Parameter does not exist: custom reminders full, max 5")),
  ]

  @Test(arguments: customCapacity)
  func customRemindersFillUpToTheLimitThenFail(profile: String, limit: Int, error: DeviceError) async throws {
    let device = try watch(profile)
    for _ in 0..<limit {
      try await device.setReminder(try await device.createCustomReminderTemplate())
    }
    #expect(try await device.capabilities().reminders.maxCustomReminders == limit)
    await #expect(throws: error) {
      try await device.setReminder(try await device.createCustomReminderTemplate())
    }
    #expect(try await device.fetchAllReminders().filter { $0.reminderType == .custom }.count == limit)
  }

  static let upsertProfiles = ["default", "npk", "fit", "fit-basic", "fw"]

  @Test(arguments: upsertProfiles)
  func settingABuiltInReplacesItInPlace(profile: String) async throws {
    let device = try watch(profile)
    let before = try await device.fetchAllReminders()
    var drinking = try #require(before.first { $0.reminderId == "1" })
    drinking.isEnabled = true
    drinking.interval = 90
    try await device.setReminder(drinking)
    let after = try await device.fetchAllReminders()
    #expect(after.map(\.reminderId) == before.map(\.reminderId))
    #expect(after[1].isEnabled && after[1].interval == 90)
  }

  @Test(arguments: ["default", "npk", "fit"])
  func settingANewCustomReminderAppendsAndSettingItAgainReplaces(profile: String) async throws {
    let device = try watch(profile)
    let builtIns = try await device.fetchAllReminders().map(\.reminderId)
    try await device.setReminder(customReminder("33", name: "First"))
    try await device.setReminder(customReminder("32", name: "Second"))
    try await device.setReminder(customReminder("33", name: "Renamed"))
    let after = try await device.fetchAllReminders()
    #expect(after.map(\.reminderId) == builtIns + ["33", "32"])
    #expect(after.map(\.reminderName).suffix(2) == ["Renamed", "Second"])
  }

  static let idAssignment: [(String, [String], String)] = [
    ("default", [], "32"), ("default", ["32", "33", "35"], "34"),
    ("npk", [], "32"), ("npk", ["32", "33", "35"], "34"), ("npk", ["33"], "32"),
    ("fit", [], "32"), ("fit", ["32", "33", "35"], "34"), ("fit", ["32", "33", "34", "35"], "36"),
  ]

  @Test(arguments: idAssignment)
  func templateTakesTheSmallestFreeIDFrom32(profile: String, existing: [String], expected: String) async throws {
    let device = try watch(profile, state: try state(profile, plus: existing.map { customReminder($0) }))
    #expect(try await device.createCustomReminderTemplate().reminderId == expected)
  }

  @Test func npkTemplateHasTheSDKDefaultsAndIsNotWritten() async throws {
    let device = try watch("npk")
    let template = try await device.createCustomReminderTemplate()
    let expected = Reminder(
      reminderId: "32", reminderName: "自定义提醒", isEnabled: true, reminderType: .custom, repeatDays: .everyday,
      timeType: .period, startTime: 480, endTime: 1200, interval: 60, timePoints: [], notes: "",
      isLunchBreakDNDEnabled: true, lunchBreakDNDStartTime: 720, lunchBreakDNDEndTime: 840)
    #expect(template == expected)
    #expect(try await device.fetchAllReminders().count == 3)
  }

  static let templateDefaults: [(String, String, Bool)] = [("default", "Custom reminder", true), ("fit", "", false)]

  @Test(arguments: templateDefaults)
  func templatesOfOtherProfilesAreEnabledEveryDayFromEightToEight(profile: String, name: String, lunch: Bool) async throws {
    let template = try await watch(profile).createCustomReminderTemplate()
    #expect(template.reminderName == name && template.isLunchBreakDNDEnabled == lunch)
    #expect(template.reminderType == .custom && template.isEnabled && template.repeatDays == .everyday)
    #expect((template.timeType, template.startTime, template.endTime, template.interval) == (.period, 480, 1200, 60))
  }

  /// Every template, and every factory built-in whose lunch break is on, holds a lunch window
  /// the SDK accepts (start < end, both 0…1439; docs/platforms.md "Reminder validation") wherever the platform stores
  /// lunch times, so turning the lunch break on (`lunch_break: true`) never yields a reminder
  /// the watch refuses.
  @Test(arguments: ["default", "npk", "fit", "fit-basic", "fw"])
  func templatesAndBuiltInsHoldAValidLunchWindow(profile: String) async throws {
    let device = try watch(profile)
    let capabilities = try await device.capabilities()
    // Built-ins are checked while their lunch break is on; the template always, since a new
    // custom reminder written with `lunch_break: true` keeps the template's times.
    var reminders = try await device.fetchAllReminders().filter(\.isLunchBreakDNDEnabled)
    if capabilities.reminders.operations.contains(.createCustomTemplate) {
      reminders.append(try await device.createCustomReminderTemplate())
    }
    for reminder in reminders {
      let kind = try #require(reminder.kind)
      guard capabilities.reminders[kind]?.lunchBreak == .times else { continue }
      let (start, end) = (reminder.lunchBreakDNDStartTime, reminder.lunchBreakDNDEndTime)
      #expect((0...1439).contains(start) && (0...1439).contains(end) && start < end,
              "\(profile) \(kind.rawValue) reminder \(reminder.reminderId): lunch \(start)–\(end)")
    }
  }

  @Test func theFitTemplateTurnedOnHasTheRecommendedLunchWindow() async throws {
    let device = try watch("fit")
    var reminder = try await device.createCustomReminderTemplate()
    #expect((reminder.lunchBreakDNDStartTime, reminder.lunchBreakDNDEndTime) == (720, 840))
    reminder.reminderName = "Walk"
    reminder.isLunchBreakDNDEnabled = true
    try await device.setReminder(reminder)
    let stored = try #require(try await device.fetchAllReminders().first { $0.reminderName == "Walk" })
    #expect((stored.isLunchBreakDNDEnabled, stored.lunchBreakDNDStartTime, stored.lunchBreakDNDEndTime) == (true, 720, 840))
  }

  @Test(arguments: ["default", "npk", "fit", "fit-basic", "fw"])
  func readStateReadsWhatThePlatformHas(profile: String) async throws {
    let device = try watch(profile)
    let capabilities = try await device.capabilities()
    let state = try await device.readState(capabilities: capabilities)
    #expect(state.reminders == (try PlatformProfile.named(profile).factoryState.reminders))
    #expect(state.emergency == EmergencyContacts(contacts: [], isSosOn: false))
    #expect(await device.statistics().totalCalls == (capabilities.contacts.maxContacts > 0 ? 3 : 2))
  }

  @Test func npkTemplateAnswers3004WhenNoIDIsLeft() async throws {
    let device = try watch("npk", state: try state("npk", plus: (32...255).map { customReminder(String($0)) }))
    await #expect(throws: DeviceError(.reminder, .paramSizeError, "No available reminder ID")) {
      _ = try await device.createCustomReminderTemplate()
    }
  }

  static let builtInDeletion: [(String, String, DeviceError)] = [
    ("default", "0", DeviceError(.reminder, .dataSetFailed, "Set reminder list failed: built-in reminder 0 (sedentary) cannot be deleted")),
    ("npk", "2", DeviceError(.reminder, .dataSetFailed, "Set reminder list failed: built-in reminder 2 (medicine) cannot be deleted")),
    ("fit", "1", DeviceError(.reminder, .dataSetFailed, "Set reminder failed: built-in reminder 1 (drinking) cannot be deleted")),
    ("fw", "0", DeviceError(.reminder, .dataSetFailed, "Set reminder failed: built-in reminder 0 (sedentary) cannot be deleted")),
    ("fit-basic", "0", DeviceError(.reminder, .notSupport, "deleteReminder is not supported on this platform")),
  ]

  @Test(arguments: builtInDeletion)
  func deletingABuiltInIsRefused(profile: String, id: String, error: DeviceError) async throws {
    let device = try watch(profile)
    let before = try await device.fetchAllReminders()
    await #expect(throws: error) { try await device.deleteReminder(id: id) }
    #expect(try await device.fetchAllReminders() == before)
  }

  @Test(arguments: ["default", "npk"])
  func replaceAllWithoutABuiltInIsRefused(profile: String) async throws {
    let device = try watch(profile)
    let list = try await device.fetchAllReminders().filter { $0.reminderId != "1" }
    await #expect(throws: DeviceError(.reminder, .dataSetFailed, "Set reminder list failed: built-in reminder 1 (drinking) cannot be deleted")) {
      try await device.replaceAllReminders(list)
    }
  }

  static let deleteNotFound: [(String, DeviceError)] = [
    ("default", DeviceError(.reminder, .dataGetFailed, "Reminder with ID 40 not found")),
    ("npk", DeviceError(.reminder, .dataGetFailed, "Reminder with ID 40 not found")),
    ("fit", DeviceError(.reminder, .dataGetFailed, "Reminder with ID 40 not found")),
    ("fw", DeviceError(.reminder, .dataIsEmpty, "No matching reminder found (ID 40)")),
  ]

  @Test(arguments: deleteNotFound)
  func deletingAMissingReminderNamesIt(profile: String, error: DeviceError) async throws {
    await #expect(throws: error) { try await watch(profile).deleteReminder(id: "40") }
  }

  @Test(arguments: ["default", "npk", "fit"])
  func deletingACustomReminderRemovesOnlyIt(profile: String) async throws {
    let device = try watch(profile, state: try state(profile, plus: [customReminder("32"), customReminder("33")]))
    try await device.deleteReminder(id: "32")
    #expect(try await device.fetchAllReminders().map(\.reminderId) == ["0", "1", "2", "33"])
  }

  enum Operation: String, CaseIterable, Sendable {
    case replaceAll, template, delete, getContacts, setContacts

    func perform(on device: SimulatedDevice) async throws(DeviceError) {
      switch self {
      case .replaceAll: try await device.replaceAllReminders([])
      case .template: _ = try await device.createCustomReminderTemplate()
      case .delete: try await device.deleteReminder(id: "32")
      case .getContacts: _ = try await device.getAllContacts()
      case .setContacts: try await device.setAllContacts([])
      }
    }
  }

  static let unsupported: [(String, Operation, DeviceError)] = [
    ("fit", .replaceAll, DeviceError(.reminder, .notSupport, "replaceAllReminders is not supported on this platform")),
    ("fit-basic", .replaceAll, DeviceError(.reminder, .notSupport, "replaceAllReminders is not supported on this platform")),
    ("fit-basic", .template, DeviceError(.reminder, .notSupport, "createCustomReminderTemplate is not supported on this platform")),
    ("fit-basic", .delete, DeviceError(.reminder, .notSupport, "deleteReminder is not supported on this platform")),
    ("fw", .template, DeviceError(.reminder, .notSupport, "createCustomReminderTemplate is not supported on this platform")),
    ("npk", .getContacts, DeviceError(.contact, .notSupport, "getAllContacts is not supported on this platform")),
    ("npk", .setContacts, DeviceError(.contact, .notSupport, "setAllContacts is not supported on this platform")),
  ]

  @Test(arguments: unsupported)
  func unsupportedOperationsAnswer2004(profile: String, operation: Operation, error: DeviceError) async throws {
    let device = try watch(profile)
    await #expect(throws: error) { try await operation.perform(on: device) }
    let operations = try await device.capabilities().reminders.operations
    if operation == .replaceAll { #expect(!operations.contains(.replaceAll)) }
    if operation == .template { #expect(!operations.contains(.createCustomTemplate)) }
  }

  static let foreignIDs: [(String, Reminder, DeviceError)] = [
    ("fw", customReminder("32"), DeviceError(.reminder, .invalidParam, "Parameter does not exist: reminder ID 32 (the watch has reminders 0, 1, 2 only)")),
    ("fit-basic", Reminder(reminderId: "2", reminderType: .takeMedicine),
     DeviceError(.reminder, .notSupport, "setReminder for reminder type 3 is not supported on this platform")),
    ("fit", customReminder("40"), DeviceError(.reminder, .dataSetFailed, "Set reminder failed: no custom reminder slot for ID 40 (slots 32–36)")),
    ("fit", Reminder(reminderId: "", reminderType: .custom), DeviceError(.reminder, .invalidParam, "Parameter does not exist: reminder ID is empty")),
  ]

  @Test(arguments: foreignIDs)
  func setReminderOutsideThePlatformsReminders(profile: String, reminder: Reminder, error: DeviceError) async throws {
    let device = try watch(profile)
    await #expect(throws: error) { try await device.setReminder(reminder) }
  }
}
