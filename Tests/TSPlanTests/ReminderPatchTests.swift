import Foundation
import Testing
import TSModel
import TSTestSupport
@testable import TSPlan

@Suite struct ReminderPatchTests {
  @Test(arguments: [
    ("Evening walk", 30, "Evening walk"),
    ("Take the blood pressure tablets now", 30, "Take the blood pressure tablet"),
    ("体操体操体操体操体操体操", 30, "体操体操体操体操体操"),
    ("体操体操体操体操体操体操", 31, "体操体操体操体操体操"),
    ("e\u{301}e\u{301}", 4, "e\u{301}e"),
    ("👍🏽x", 5, "👍"),
    ("", 0, ""),
  ])
  func truncatesByCodePointToTheByteLimit(_ text: String, _ limit: Int, _ expected: String) {
    let stored = TextTruncation.truncate(text, maxBytes: limit)
    #expect(stored == expected)
    #expect(stored.utf8.count <= limit)
    #expect(TextTruncation.truncate(stored, maxBytes: limit) == stored)
  }

  @Test func overlayKeepsUnmanagedFieldsAndSortsTimePoints() {
    let base = States.custom(32, "Walk", enabled: false, points: [600], notes: "keep")
    let patch = ReminderPatch(isEnabled: true, schedule: Build.points(["20:00", "08:00"]),
                              lunchBreak: LunchBreak(isEnabled: false))
    var expected = base
    expected.isEnabled = true
    expected.timePoints = [480, 1200]
    expected.isLunchBreakDNDEnabled = false
    #expect(patch.applying(to: base) == expected)
  }

  @Test func periodOverlayLeavesTimePointsAlone() {
    let base = States.custom(32, "Walk", points: [600])
    let after = ReminderPatch(schedule: Build.period("09:00", "17:00", every: 45)).applying(to: base)
    #expect(after.timeType == .period && after.startTime == 540 && after.endTime == 1020 && after.interval == 45)
    #expect(after.timePoints == [600])
  }

  @Test func patchRoundTripsThroughJSON() throws {
    let patch = ReminderPatch(name: "Walk", isEnabled: true, repeatDays: .weekend, schedule: Build.points(["08:00"]),
                              lunchBreak: LunchBreak(isEnabled: true), notes: "n")
    let data = try JSONEncoder().encode(patch)
    #expect(try JSONDecoder().decode(ReminderPatch.self, from: data) == patch)
  }

  @Test func fingerprintIsStableAndSensitive() {
    let state = States.watch(contacts: [Contact(name: "A", phoneNum: "1")])
    var other = state
    other.contacts[0].name = "B"
    #expect(state.fingerprint == States.watch(contacts: [Contact(name: "A", phoneNum: "1")]).fingerprint)
    #expect(state.fingerprint != other.fingerprint)
    #expect(state.fingerprint.count == 64)
  }

  /// The directly written fingerprint equals `JSONEncoder`'s for states whose text needs
  /// escaping or sorting care: quotes, backslashes, slashes, control characters, U+2028,
  /// non-ASCII names (composed and decomposed), no short name, no emergency support, time points.
  @Test(arguments: [
    DeviceState(),
    States.watch(contacts: [Contact(name: "A", phoneNum: "1")]),
    States.watch(contacts: [Contact(name: "Ann \"Nan\" O\\Brien/ü", phoneNum: "+4917698765432", shortName: "A"),
                            Contact(name: "tab\tnew\nline\r\u{1}\u{1f}\u{7f}\u{2028}", phoneNum: "12"),
                            Contact(name: "e\u{301}\u{1F600}", phoneNum: "+1", shortName: "é")]),
    DeviceState(reminders: [Reminder(reminderId: "32", reminderName: "Pills/½", isEnabled: true, reminderType: .custom,
                                     repeatDays: .weekend, timeType: .point, timePoints: [480, 1200], notes: "a\"b",
                                     isLunchBreakDNDEnabled: true, lunchBreakDNDStartTime: 720, lunchBreakDNDEndTime: 810)],
                contacts: [], emergency: EmergencyContacts(contacts: [Contact(name: "Fam", phoneNum: "+1555")], isSosOn: true)),
    DeviceState(reminders: [], contacts: [Contact(name: "", phoneNum: "")], emergency: EmergencyContacts(contacts: [], isSosOn: false)),
  ])
  func fingerprintEqualsTheEncoders(state: DeviceState) {
    #expect(state.fingerprint == state.encoderFingerprint)
  }
}
