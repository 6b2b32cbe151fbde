import Foundation
import Testing
import TSDevice
import TSModel
import TSTestSupport

/// Numbers from the environment and the state file are checked before any arithmetic uses
/// them: a bad value is an error naming it and the accepted range, never a runtime trap.
@Suite struct InputBoundsTests {
  static let badEnvironment: [(String, String, String)] = [
    (SimulationOptions.latencyVariable, "9223372036854775807,0", "0–60000"),
    (SimulationOptions.latencyVariable, "0,9223372036854775807", "0–60000"),
    (SimulationOptions.latencyVariable, "60001,0", "0–60000"),
    (SimulationOptions.latencyVariable, "-1,0", "0–60000"),
    (SimulationOptions.faultVariable, "fail@9223372036854775807", "N a call number 1–1000000"),
    (SimulationOptions.faultVariable, "fail@0", "N a call number 1–1000000"),
    (SimulationOptions.faultVariable, "fail@-1", "N a call number 1–1000000"),
    (SimulationOptions.faultVariable, "disconnect@1000001", "N a call number 1–1000000"),
    (SimulationOptions.faultVariable, "fail@1:9223372036854775807", "CODE 1–999999"),
    (SimulationOptions.faultVariable, "fail@1:0", "CODE 1–999999"),
    (SimulationOptions.faultVariable, "fail@1:-6001", "CODE 1–999999"),
  ]

  @Test(arguments: badEnvironment)
  func anOutOfRangeSimulationVariableIsA1004NamingTheRange(variable: String, value: String, range: String) {
    do {
      _ = try SimulationOptions(environment: [variable: value])
      Issue.record("\(variable)=\(value) was accepted")
    } catch {
      #expect(error.domain == .simulator && error.code == .sdkConfigError)
      #expect(error.message.hasPrefix("\(variable)='\(value)'"), "\(error.message)")
      #expect(error.message.contains(range), "\(error.message)")
    }
  }

  @Test(arguments: [("60000,60000", 60_000, 60_000), ("0,0", 0, 0), ("40, 8", 40, 8)])
  func theLimitsOfTheLatencyRangeAreAccepted(value: String, call: Int, packet: Int) throws {
    let options = try SimulationOptions(environment: [SimulationOptions.latencyVariable: value])
    #expect(options.latency == SimulationOptions.Latency(perCallMilliseconds: call, perPacketMilliseconds: packet))
  }

  static let latencies: [(Int, Int, Int, UInt64)] = [
    (40, 8, 3, 64_000_000),
    (Int.max, 0, 1, UInt64.max),
    (0, Int.max, 2, UInt64.max),
    (1, 1, Int.max, UInt64.max),
    (-5, -5, 3, 0),
  ]

  @Test(arguments: latencies)
  func latencyArithmeticSaturatesInsteadOfTrapping(call: Int, packet: Int, packets: Int, expected: UInt64) {
    let latency = SimulationOptions.Latency(perCallMilliseconds: call, perPacketMilliseconds: packet)
    #expect(latency.nanoseconds(packets: packets) == expected)
  }

  static let badJournals: [(String, String)] = [
    (#""journal": [], "nextSequence": 9223372036854775807"#, "nextSequence: expected a whole number from 1 to 1000000000000, found 9223372036854775807"),
    (#""journal": [], "nextSequence": 0"#, "nextSequence: expected a whole number from 1 to 1000000000000, found 0"),
    (#""journal": [], "nextSequence": -3"#, "nextSequence: expected a whole number from 1 to 1000000000000, found -3"),
    (#""journal": [{"sequence": 5, "kind": "sosRequested"}], "nextSequence": 5"#,
     "journal[0].sequence: expected a whole number from 1 to nextSequence − 1 (4), found 5"),
    (#""journal": [{"sequence": 0, "kind": "sosRequested"}], "nextSequence": 5"#,
     "journal[0].sequence: expected a whole number from 1 to nextSequence − 1 (4), found 0"),
    // The epoch goes into every event id a monitor records and publishes.
    (#""journal": [], "journalEpoch": "Z-1", "nextSequence": 1"#, #"journalEpoch: expected 1 to 16 lowercase hexadecimal digits, found "Z-1""#),
    (#""journal": [], "journalEpoch": "", "nextSequence": 1"#, #"journalEpoch: expected 1 to 16 lowercase hexadecimal digits, found """#),
    (#""journal": [], "journalEpoch": "0123456789abcdef0", "nextSequence": 1"#,
     #"journalEpoch: expected 1 to 16 lowercase hexadecimal digits, found "0123456789abcdef0""#),
  ]

  /// The state file of a factory `default` watch with `journal` and `nextSequence` replaced.
  func stateFile(journal: String) throws -> String {
    let path = try temporaryDirectory() + "/watch.json"
    try SimulatedDevice.create(path: path, profile: .default, force: false)
    var text = try String(contentsOfFile: path, encoding: .utf8)
    let start = try #require(text.range(of: #""journal""#))
    let end = try #require(text.range(of: #""profile""#))
    text.replaceSubrange(start.lowerBound..<end.lowerBound, with: journal + ",\n  ")
    try text.write(toFile: path, atomically: false, encoding: .utf8)
    return path
  }

  @Test(arguments: badJournals)
  func aStateFileWithBadJournalNumbersIsCorrupted(journal: String, problem: String) throws {
    let path = try stateFile(journal: journal)
    do {
      let device = try SimulatedDevice(path: path)
      try device.simulateContactAdd(Contact(name: "Z", phoneNum: "123"))
      Issue.record("a state file with \(journal) was accepted")
    } catch {
      #expect(error.domain == .simulator && error.code == .dataFormatError)
      #expect(error.message == "\(path) is corrupted: \(problem); the file was left as it is; repair it, or reset the watch with 'tsapply device init --force'")
    }
  }

  @Test func aSoundJournalIsAccepted() throws {
    let path = try stateFile(journal: #""journal": [{"sequence": 4, "kind": "sosRequested"}], "nextSequence": 5"#)
    let device = try SimulatedDevice(path: path)
    try device.simulateSOSPress()
    #expect(try device.snapshot().journal.map(\.sequence) == [4, 5])
  }

  /// Journal entries' `time` (when the change was made on the watch): a listener resuming after
  /// an outage hears it; entries written before watches recorded it (no `time`), `null` or text
  /// that is no time are read, and heard with no time (unknown), never refused.
  static let journalTimes: [(entry: String, heard: Date?)] = [
    (#"{"sequence": 1, "kind": "sosRequested", "time": "2026-12-04T22:50:10.250Z"}"#, Date(timeIntervalSince1970: 1_796_424_610.25)),
    (#"{"sequence": 1, "kind": "sosRequested"}"#, nil),
    (#"{"sequence": 1, "kind": "sosRequested", "time": null}"#, nil),
    (#"{"sequence": 1, "kind": "sosRequested", "time": "yesterday"}"#, nil),
  ]

  @Test(arguments: journalTimes)
  func aJournalEntrysTimeIsHeardWhenKnown(entry: String, heard: Date?) async throws {
    let path = try stateFile(journal: #""journal": [\#(entry)], "nextSequence": 2"#)
    let device = try SimulatedDevice(path: path)
    let reports = Collector<ListenerReport>()
    await device.listen(to: [.sosRequested], after: DeviceEventID("0")) { reports.append($0) }
    #expect(reports.values == [.event(DeviceEvent(id: DeviceEventID("1"), kind: .sosRequested, time: heard))])
  }

  /// A press records when it was made; the file keeps it (ISO 8601 UTC, milliseconds) and
  /// another process's listener, resuming later, hears that time, not its own.
  @Test func aPressKeepsItsTimeThroughTheStateFile() async throws {
    let path = try stateFile(journal: #""journal": [], "nextSequence": 1"#)
    let pressed = Date(timeIntervalSince1970: 1_796_424_610.25)
    try SimulatedDevice(path: path).simulateSOSPress(at: pressed)
    #expect(try SimulatedDevice(path: path).snapshot().journal.map(\.time) == ["2026-12-04T22:50:10.250Z"])
    #expect(try String(contentsOfFile: path, encoding: .utf8).contains(#""time" : "2026-12-04T22:50:10.250Z""#))
    let reports = Collector<ListenerReport>()
    await (try SimulatedDevice(path: path)).listen(to: [.sosRequested], after: DeviceEventID("0")) { reports.append($0) }
    #expect(reports.values == [.event(DeviceEvent(id: DeviceEventID("1"), kind: .sosRequested, time: pressed))])
  }

  static let badNumbers: [(String, String, String)] = [
    (#""startTime" : 540"#, #""startTime" : 1.5"#, "reminders[0].startTime: expected an integer, found 1.5"),
    (#""interval" : 60"#, #""interval" : 1e30"#, "reminders[0].interval: expected an integer, found 1e+30"),
    (#""endTime" : 1080"#, #""endTime" : "6pm""#, "reminders[0].endTime: expected an integer, found text"),
  ]

  @Test(arguments: badNumbers)
  func aFieldOfTheWrongKindIsNamedWithItsPath(original: String, replacement: String, problem: String) throws {
    let path = try temporaryDirectory() + "/watch.json"
    try SimulatedDevice.create(path: path, profile: .default, force: false)
    let text = try String(contentsOfFile: path, encoding: .utf8)
    #expect(text.contains(original))
    try text.replacingOccurrences(of: original, with: replacement).write(toFile: path, atomically: false, encoding: .utf8)
    #expect(throws: DeviceError(.simulator, .dataFormatError,
      "\(path) is corrupted: \(problem); the file was left as it is; repair it, or reset the watch with 'tsapply device init --force'")) {
      try SimulatedDevice(path: path)
    }
  }

  @Test(arguments: [("9223372036854775809", Int.max), ("-9223372036854775809", Int.min), ("99999999999999999999", Int.max), ("42", 42)])
  func aHugeStoredReminderIDReadsAsTheNearestIntegerWithoutTrapping(id: String, expected: Int) {
    #expect(ReminderValidator.integerValue(id) == expected)
  }

  @Test func aCustomReminderWithAHugeIDIsFetchedWithoutTrapping() async throws {
    var huge = customReminder("32")
    huge.reminderId = "9223372036854775809"
    let device = try watch("default", state: try state("default", plus: [huge]))
    #expect(try await device.fetchAllReminders().last?.reminderId == "9223372036854775809")
    #expect(device.currentStatistics().bytesReceived > 0)
  }
}
