import Testing
import TSDevice
import TSModel

/// What a platform stores and what reads back for fields it does not store or cuts
/// (docs/platforms.md "Reminder writes per platform", "Contacts").
@Suite struct ReadBackTests {
  static let truncation: [(String, Int, String)] = [
    ("short", 30, "short"),
    (String(repeating: "a", count: 31), 30, String(repeating: "a", count: 30)),
    ("一二三四五六七八九十十一", 30, "一二三四五六七八九十"),
    (String(repeating: "a", count: 28) + "😀", 30, String(repeating: "a", count: 28)),
    ("e\u{301}", 1, "e"),
    ("abc", 0, ""),
  ]

  @Test(arguments: truncation)
  func truncationCutsAtCodePoints(text: String, limit: Int, expected: String) {
    #expect(TextTruncation.truncate(text, maxBytes: limit) == expected)
  }

  static let fitText: [(String, String, String, String)] = [
    (String(repeating: "n", count: 31), String(repeating: "x", count: 61), String(repeating: "n", count: 30), String(repeating: "x", count: 60)),
    ("喝水喝水喝水喝水喝水喝", "短", "喝水喝水喝水喝水喝水", "短"),
  ]

  @Test(arguments: fitText)
  func fitCutsLongNamesAndNotes(name: String, notes: String, storedName: String, storedNotes: String) async throws {
    let device = try watch("fit")
    var reminder = customReminder("32", name: name)
    reminder.notes = notes
    try await device.setReminder(reminder)
    let stored = try #require(try await device.fetchAllReminders().last)
    #expect(stored.reminderName == storedName)
    #expect(stored.notes == storedNotes)
  }

  @Test func fitBasicReadsBackOnlyWhatItStores() async throws {
    let device = try watch("fit-basic")
    let sedentary = Reminder(reminderId: "0", reminderName: "Move", isEnabled: true, reminderType: .sedentary,
                             repeatDays: .workday, timeType: .point, startTime: 540, endTime: 1080, interval: 45,
                             timePoints: [600], notes: "Stand up", isLunchBreakDNDEnabled: true,
                             lunchBreakDNDStartTime: 700, lunchBreakDNDEndTime: 800)
    var drinking = sedentary
    (drinking.reminderId, drinking.reminderType) = ("1", .drinking)
    try await device.setReminder(sedentary)
    try await device.setReminder(drinking)
    let expectedSedentary = Reminder(reminderId: "0", reminderName: "", isEnabled: true, reminderType: .sedentary,
                                     repeatDays: .everyday, timeType: .period, startTime: 540, endTime: 1080, interval: 45,
                                     timePoints: [], notes: "", isLunchBreakDNDEnabled: true)
    var expectedDrinking = expectedSedentary
    (expectedDrinking.reminderId, expectedDrinking.reminderType, expectedDrinking.isLunchBreakDNDEnabled) = ("1", .drinking, false)
    #expect(try await device.fetchAllReminders() == [expectedSedentary, expectedDrinking])
  }

  @Test func fitAddressesBuiltInsByType() async throws {
    let device = try watch("fit")
    var medicine = Reminder(reminderId: "99", reminderName: "Pills", isEnabled: true, reminderType: .takeMedicine,
                            repeatDays: .everyday, timeType: .point, timePoints: [480])
    try await device.setReminder(medicine)
    medicine.reminderId = "2"
    #expect(try await device.fetchAllReminders().map(\.reminderId) == ["0", "1", "2"])
    #expect(try await device.fetchAllReminders()[2] == medicine)
  }

  @Test(arguments: ["default", "npk"])
  func listPlatformsKeepOnlyTheActiveScheduleAndDeriveTheTypeFromTheID(profile: String) async throws {
    let device = try watch(profile)
    var point = customReminder("32")
    (point.timeType, point.timePoints, point.reminderType) = (.point, [480, 1200], .unknown)
    var period = customReminder("33")
    period.timePoints = [600]
    try await device.setReminder(point)
    try await device.setReminder(period)
    let stored = try await device.fetchAllReminders().suffix(2)
    var expectedPoint = point
    (expectedPoint.startTime, expectedPoint.endTime, expectedPoint.interval, expectedPoint.reminderType) = (0, 0, 0, .custom)
    var expectedPeriod = period
    expectedPeriod.timePoints = []
    #expect(Array(stored) == [expectedPoint, expectedPeriod])
  }

  @Test(arguments: ["default", "npk"])
  func listPlatformsRefuseLongNames(profile: String) async throws {
    let device = try watch(profile)
    let long = customReminder("32", name: String(repeating: "n", count: 33))
    await #expect(throws: DeviceError(.reminder, .dataSetFailed, "Set reminder list failed: name of reminder 32 is 33 bytes, the watch stores at most 32")) {
      try await device.setReminder(long)
    }
  }

  // MARK: Contacts

  static let shortNames: [(String, String?)] = [("default", "A"), ("fit", nil), ("fit-basic", nil), ("fw", "A")]

  @Test(arguments: shortNames)
  func shortNameIsStoredOnlyWhereThePlatformKeepsIt(profile: String, expected: String?) async throws {
    let device = try watch(profile)
    try await device.setAllContacts([Contact(name: "Alex", phoneNum: "+15550100", shortName: "A")])
    #expect(try await device.getAllContacts() == [Contact(name: "Alex", phoneNum: "+15550100", shortName: expected)])
    #expect(try await device.capabilities().contacts.storesShortName == (expected != nil))
  }

  @Test func setAllContactsReplacesTheListInOrder() async throws {
    let device = try watch("default")
    let first = [Contact(name: "B", phoneNum: "2"), Contact(name: "A", phoneNum: "1")]
    try await device.setAllContacts(first)
    #expect(try await device.getAllContacts() == first)
    try await device.setAllContacts([Contact(name: "C", phoneNum: "3")])
    #expect(try await device.getAllContacts() == [Contact(name: "C", phoneNum: "3")])
  }

  @Test func fitDropsAContactWhosePhoneIsOver20BytesAndCutsLongNames() async throws {
    let device = try watch("fit")
    let longName = String(repeating: "李", count: 11)
    try await device.setAllContacts([
      Contact(name: "Long phone", phoneNum: String(repeating: "1", count: 21)),
      Contact(name: longName, phoneNum: "+8613912345678"),
    ])
    #expect(try await device.getAllContacts() == [Contact(name: String(repeating: "李", count: 10), phoneNum: "+8613912345678")])
  }

  static let contactCapacity: [(String, Int, DeviceError?)] = [
    ("default", 100, DeviceError(.contact, .paramSizeError, "Contacts exceed limit: 101 given, the watch holds at most 100")),
    ("fit", 10, DeviceError(.fitCloud, .fitCloudContactLimit, "Contacts exceed limit: 11 given, the watch holds at most 10")),
    ("fit-basic", 10, DeviceError(.fitCloud, .fitCloudContactLimit, "Contacts exceed limit: 11 given, the watch holds at most 10")),
    ("fw", 50, DeviceError(.contact, .paramSizeError, "Contacts exceed limit: 51 given, the watch holds at most 50")),
  ]

  @Test(arguments: contactCapacity)
  func contactsFillUpToTheLimitThenFail(profile: String, limit: Int, error: DeviceError?) async throws {
    let device = try watch(profile)
    let contacts = (0...limit).map { Contact(name: "C\($0)", phoneNum: "\(1000 + $0)") }
    #expect(try await device.capabilities().contacts.maxContacts == limit)
    try await device.setAllContacts(Array(contacts.prefix(limit)))
    await #expect(throws: try #require(error)) { try await device.setAllContacts(contacts) }
    #expect(try await device.getAllContacts().count == limit)
  }

  static let emergencyCapacity: [(String, Int, Int, DeviceError?)] = [
    ("default", 5, 6, DeviceError(.contact, .paramSizeError, "Emergency contacts exceed limit: 6 given, the watch holds at most 5")),
    ("npk", 1, 3, nil),
    ("fit", 1, 2, DeviceError(.contact, .paramSizeError, "Emergency contacts exceed limit: 2 given, the watch holds at most 1")),
    ("fw", 3, 5, nil),
  ]

  @Test(arguments: emergencyCapacity)
  func emergencyContactsOverTheLimitAreCutOrRefused(profile: String, limit: Int, sent: Int, error: DeviceError?) async throws {
    let device = try watch(profile)
    let contacts = (0..<sent).map { Contact(name: "E\($0)", phoneNum: "\(900 + $0)") }
    #expect(try await device.capabilities().contacts.maxEmergencyContacts == limit)
    if let error {
      await #expect(throws: error) { try await device.setEmergencyContacts(contacts, sosOn: true) }
      #expect(try await device.getEmergencyContacts() == EmergencyContacts(contacts: [], isSosOn: false))
    } else {
      try await device.setEmergencyContacts(contacts, sosOn: true)
      #expect(try await device.getEmergencyContacts().contacts.map(\.name) == contacts.prefix(limit).map(\.name))
      #expect(try await device.getEmergencyContacts().isSosOn)
    }
  }

  @Test func npkCutsEmergencyTextTo31BytesAndDropsEmptyItems() async throws {
    let device = try watch("npk")
    try await device.setEmergencyContacts([Contact(name: String(repeating: "a", count: 40), phoneNum: String(repeating: "1", count: 35))], sosOn: true)
    #expect(try await device.getEmergencyContacts() == EmergencyContacts(
      contacts: [Contact(name: String(repeating: "a", count: 31), phoneNum: String(repeating: "1", count: 31))], isSosOn: true))
    try await device.setEmergencyContacts([Contact(name: "", phoneNum: "1")], sosOn: false)
    #expect(try await device.getEmergencyContacts() == EmergencyContacts(contacts: [], isSosOn: false))
  }

  static let strictContacts: [(Contact, DeviceError)] = [
    (Contact(name: "", phoneNum: "1"), DeviceError(.contact, .invalidParam, "Contact name cannot be empty")),
    (Contact(name: "A", phoneNum: ""), DeviceError(.contact, .invalidParam, "Contact phone number cannot be empty")),
    (Contact(name: String(repeating: "a", count: 33), phoneNum: "1"), DeviceError(.contact, .paramSizeError, "Contact name exceeds maximum length of 32 bytes")),
    (Contact(name: "A", phoneNum: String(repeating: "1", count: 21)), DeviceError(.contact, .paramSizeError, "Contact phone number exceeds maximum length of 20 bytes")),
  ]

  @Test(arguments: strictContacts)
  func defaultRefusesContactsItCannotStore(contact: Contact, error: DeviceError) async throws {
    let device = try watch("default")
    await #expect(throws: error) { try await device.setAllContacts([contact]) }
    await #expect(throws: error) { try await device.setEmergencyContacts([contact], sosOn: true) }
  }
}
