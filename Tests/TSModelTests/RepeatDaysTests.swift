import Testing
import TSModel

struct RepeatDaysCase: Sendable, CustomTestStringConvertible {
  let days: RepeatDays
  let mask: Int
  let spelled: String
  var testDescription: String { "\(mask) → \(spelled)" }
}

@Suite struct RepeatDaysTests {
  static let cases: [RepeatDaysCase] = [
    RepeatDaysCase(days: .everyday, mask: 127, spelled: "everyday"),
    RepeatDaysCase(days: .workday, mask: 31, spelled: "workday"),
    RepeatDaysCase(days: .weekend, mask: 96, spelled: "weekend"),
    RepeatDaysCase(days: .once, mask: 0, spelled: "once"),
    RepeatDaysCase(days: [.monday, .wednesday, .friday], mask: 1 + 4 + 16, spelled: "[mon, wed, fri]"),
    RepeatDaysCase(days: .sunday, mask: 64, spelled: "[sun]"),
  ]

  @Test(arguments: cases)
  func masksAndSpelling(_ c: RepeatDaysCase) {
    #expect(c.days.rawValue == c.mask)
    #expect(c.days.description == c.spelled)
  }

  @Test func mondayIsBitZeroAndSundayBitSix() {
    #expect(RepeatDays.days.first?.day.rawValue == 1)
    #expect(RepeatDays.days.last?.day.rawValue == 1 << 6)
  }
}

@Suite struct MinuteOfDayTests {
  @Test(arguments: [(0, "00:00"), (390, "06:30"), (1439, "23:59"), (720, "12:00")])
  func formats(_ minutes: Int, _ text: String) {
    #expect(MinuteOfDay(rawValue: minutes)?.description == text)
  }

  @Test(arguments: [-1, 1440, 10_000])
  func rejectsOutOfRange(_ minutes: Int) {
    #expect(MinuteOfDay(rawValue: minutes) == nil)
  }

  @Test func hourAndMinuteBoundaries() {
    #expect(MinuteOfDay(hour: 23, minute: 59)?.rawValue == 1439)
    #expect(MinuteOfDay(hour: 24, minute: 0) == nil)
    #expect(MinuteOfDay(hour: 23, minute: 60) == nil)
  }
}

@Suite struct DiagnosticTests {
  @Test func rendersCompilerStyle() {
    let d = Diagnostic.error(at: SourcePosition(file: "watch.yaml", line: 12, column: 9),
                             field: "reminders.custom[1].at[0]", "\"24:30\" is not a time of day")
    #expect(d.description == "watch.yaml:12:9: error: reminders.custom[1].at[0]: \"24:30\" is not a time of day")
  }

  @Test func sortsByPosition() {
    let p = { (l: Int, c: Int) in SourcePosition(file: "w.yaml", line: l, column: c) }
    let list = [Diagnostic.error(at: p(3, 1), field: "b", "x"), .warning(at: p(1, 5), field: "a", "y"),
                .error(at: p(1, 2), field: "c", "z")]
    #expect(list.sortedByPosition().map(\.field) == ["c", "a", "b"])
  }
}

@Suite struct DigestTests {
  @Test func sha256OfKnownInputs() {
    #expect(SHA256Digest.hex(of: Array("".utf8)) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    #expect(SHA256Digest.hex(of: Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
  }
}
