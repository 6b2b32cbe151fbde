import Foundation
import Testing
import TSApply
import TSDevice
import TSModel
import TSTestSupport

/// `JSONReader`, the fast path of state files and last-applied records: it reads what
/// `JSONDecoder` reads, gives up on anything outside the narrow form it knows, and takes every
/// file tsapply writes.
@Suite struct FastJSONTests {
  struct Case: CustomTestStringConvertible, Sendable {
    var name: String
    var json: String
    /// Whether the fast path reads it (otherwise it gives up and JSONDecoder decides).
    var fast: Bool
    var testDescription: String { name }
  }

  static let contactCases: [Case] = [
    Case(name: "a plain contact", json: #"{"name": "Alex", "phoneNum": "+15550100", "shortName": "A"}"#, fast: true),
    Case(name: "every escape, a surrogate pair and raw UTF-8", json: #"{"name":"Q\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00 Ł","phoneNum":"1"}"#, fast: true),
    Case(name: "shortName null", json: #"{"name": "A", "phoneNum": "1", "shortName": null}"#, fast: true),
    Case(name: "keys in any order, JSON whitespace around everything", json: "\t\r\n{ \"phoneNum\" :\"1\" ,\n\"name\":\"A\" }\n ", fast: true),
    Case(name: "an unknown key (JSONDecoder ignores it)", json: #"{"name": "A", "phoneNum": "1", "extra": [1, {"x": null}]}"#, fast: false),
    Case(name: "a repeated key", json: #"{"name": "A", "name": "B", "phoneNum": "1"}"#, fast: false),
    Case(name: "a repeated null key", json: #"{"name": "A", "phoneNum": "1", "shortName": null, "shortName": "B"}"#, fast: false),
    Case(name: "a missing required key", json: #"{"name": "A"}"#, fast: false),
    Case(name: "a number where a string belongs", json: #"{"name": 5, "phoneNum": "1"}"#, fast: false),
    Case(name: "null where a string is required", json: #"{"name": null, "phoneNum": "1"}"#, fast: false),
    Case(name: "a lone high surrogate", json: #"{"name": "\ud800", "phoneNum": "1"}"#, fast: false),
    Case(name: "a lone low surrogate", json: #"{"name": "\udc00x", "phoneNum": "1"}"#, fast: false),
    Case(name: "an unknown escape", json: #"{"name": "\x", "phoneNum": "1"}"#, fast: false),
    Case(name: "a raw control character in a string", json: "{\"name\": \"a\u{1}b\", \"phoneNum\": \"1\"}", fast: false),
    Case(name: "an escaped key", json: #"{"n\u0061me": "A", "phoneNum": "1"}"#, fast: false),
    Case(name: "trailing bytes after the value", json: #"{"name": "A", "phoneNum": "1"} x"#, fast: false),
    Case(name: "a byte order mark", json: "\u{FEFF}{\"name\": \"A\", \"phoneNum\": \"1\"}", fast: false),
    Case(name: "a trailing comma", json: #"{"name": "A", "phoneNum": "1",}"#, fast: false),
    Case(name: "cut short", json: #"{"name": "A", "phoneNum": "1""#, fast: false),
    Case(name: "an array, not an object", json: #"["A", "1"]"#, fast: false),
    Case(name: "empty input", json: "", fast: false),
  ]

  static let reminderCases: [Case] = {
    let valid = #""reminderName": "Walk", "isEnabled": true, "reminderType": 4, "repeatDays": 127, "timeType": 1, "startTime": 0, "endTime": 0, "interval": 0, "timePoints": [480, 1200], "notes": "", "isLunchBreakDNDEnabled": false, "lunchBreakDNDStartTime": 720, "lunchBreakDNDEndTime": 840"#
    func reminder(_ id: String, _ rest: String = valid) -> String { "{\"reminderId\": \(id), \(rest)}" }
    return [
      Case(name: "a custom reminder", json: reminder(#""36""#), fast: true),
      Case(name: "-0 and the largest 18-digit integer", json: reminder(#""1""#, valid.replacingOccurrences(of: #""startTime": 0"#, with: #""startTime": -0"#)
        .replacingOccurrences(of: #""endTime": 0"#, with: #""endTime": 999999999999999999"#)), fast: true),
      Case(name: "repeat days outside the week (read unchecked, as Decodable reads an OptionSet)", json: reminder(#""1""#, valid.replacingOccurrences(of: "127", with: "-3")), fast: true),
      Case(name: "a fraction", json: reminder(#""1""#, valid.replacingOccurrences(of: #""interval": 0"#, with: #""interval": 1.0"#)), fast: false),
      Case(name: "an exponent", json: reminder(#""1""#, valid.replacingOccurrences(of: #""interval": 0"#, with: #""interval": 1e2"#)), fast: false),
      Case(name: "a leading zero", json: reminder(#""1""#, valid.replacingOccurrences(of: "720", with: "0720")), fast: false),
      Case(name: "19 digits", json: reminder(#""1""#, valid.replacingOccurrences(of: "720", with: "1000000000000000000")), fast: false),
      Case(name: "a reminder type no case names", json: reminder(#""1""#, valid.replacingOccurrences(of: #""reminderType": 4"#, with: #""reminderType": 99"#)), fast: false),
      Case(name: "true run on into a letter", json: reminder(#""1""#, valid.replacingOccurrences(of: "true", with: "truex")), fast: false),
      Case(name: "a string where a boolean belongs", json: reminder(#""1""#, valid.replacingOccurrences(of: "true", with: #""true""#)), fast: false),
      Case(name: "an integer ID", json: reminder("36"), fast: false),
    ]
  }()

  @Test(arguments: contactCases)
  func contacts(_ test: Case) throws { try expectAgreement(test, as: Contact.self) }

  @Test(arguments: reminderCases)
  func reminders(_ test: Case) throws { try expectAgreement(test, as: Reminder.self) }

  /// Every state file and last-applied record tsapply writes is read by the fast path, and read
  /// as written: random states of awkward text, through the writers tsapply uses.
  @Test func filesTsapplyWritesTakeTheFastPath() throws {
    var random = SplitMix64(state: 20261201)
    for round in 0..<200 {
      let state = Self.randomState(&random)
      // The journal as the watch writes it: contact changes (with the list), SOS, a toggle.
      let device = SimulatedDevice(profile: .default, state: state)
      if round % 2 == 0 { try device.simulateContactAdd(Contact(name: Self.texts[round % Self.texts.count], phoneNum: "+15550199")) }
      if round % 3 == 0 { try device.simulateSOSPress() }
      if round % 5 == 0, let id = state.reminders.first?.reminderId { _ = try device.simulateReminderToggle(id: id) }
      let watch = try device.snapshot()
      let stateFile = try watch.jsonData()
      #expect(JSONReader.decode(SimulatedWatch.self, from: stateFile) == watch, "state file, round \(round)")
      let record = LastApplied(device: "sim:/w/\(round).json", profile: "fw", state: state)
      let recordFile = Data(canonicalJSON(record).utf8)
      #expect(JSONReader.decode(LastApplied.self, from: recordFile) == record, "last-applied record, round \(round)")
    }
  }

  /// Bytes of those files changed at random: whatever the fast path still reads, JSONDecoder
  /// reads the same (the records fuzz target checks the same property at length).
  @Test func changedBytesAreReadAsJSONDecoderReadsThem() throws {
    var random = SplitMix64(state: 7)
    let replacements = Array(#"{}[]",:\/0123456789-.eEtrufalsn u"#.utf8) + [0x00, 0x1F, 0x80, 0xC3, 0xFF]
    var taken = 0
    for round in 0..<1500 {
      let state = Self.randomState(&random)
      var bytes = [UInt8](canonicalJSON(LastApplied(device: "sim:/w.json", profile: "fw", state: state)).utf8)
      for _ in 0..<Int.random(in: 1...3, using: &random) {
        let at = Int.random(in: 0..<bytes.count, using: &random)
        switch Int.random(in: 0..<3, using: &random) {
        case 0: bytes[at] = replacements.randomElement(using: &random)!
        case 1: bytes.remove(at: at)
        default: bytes.insert(replacements.randomElement(using: &random)!, at: at)
        }
      }
      let data = Data(bytes)
      guard let fast = JSONReader.decode(LastApplied.self, from: data) else { continue }
      taken += 1
      let slow = try? JSONDecoder().decode(LastApplied.self, from: data)
      #expect(slow == fast, "round \(round): \(String(decoding: bytes, as: UTF8.self))")
    }
    // Some changes (inside a string, or whitespace) leave a file the fast path still reads.
    #expect(taken > 0)
  }

  /// The engine's readers give the same result either way: a state file the fast path cannot
  /// read (an unknown key) still opens, through JSONDecoder.
  @Test func aFileOutsideTheFastPathStillReads() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fastjson-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let watch = SimulatedWatch(profile: .default, state: DeviceState(contacts: [Contact(name: "Alex", phoneNum: "+15550100")]))
    var object = try #require(try JSONSerialization.jsonObject(with: watch.jsonData()) as? [String: Any])
    object["comment"] = "added by hand"
    let path = folder + "/device.json"
    try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
    #expect(JSONReader.decode(SimulatedWatch.self, from: try Data(contentsOf: URL(fileURLWithPath: path))) == nil)
    #expect(try SimulatedDevice(path: path).snapshot() == watch)
  }

  @Test(arguments: [
    (#"{"a": 1, "b": [true, null, -1.5e3, "x\"y"], "a": 2}"#, #"the key "a" is written twice (lines 1 and 1)"#),
    ("{\n  \"state\": {\"contacts\": [{\"name\": \"A\",\n \"n\\u0061me\": \"B\"}]}}", #"state.contacts[0]: the key "name" is written twice (lines 2 and 3)"#),
    (#"[{"a": 1}, {"a": 2}, {"b": {"a": 3}, "a": 4}]"#, nil),
    (#"{"a": 1, "a": "#, #"the key "a" is written twice"#),  // found at the second key, before the text breaks off
    (#"{"a": 1, "b": "#, nil),
    (#"{"a": 1, "A": 2, "a ": 3}"#, nil),
  ] as [(String, String?)])
  func keysWrittenTwiceAreFound(_ json: String, _ expected: String?) {
    let found = JSONReader.firstRepeatedKey(in: Data(json.utf8)).map(\.description)
    if let expected {
      #expect(found?.hasPrefix(expected) == true, "\(found ?? "none")")
    } else {
      #expect(found == nil)
    }
  }

  // MARK: Helpers

  private func expectAgreement<T: FastJSONDecodable & Equatable>(_ test: Case, as type: T.Type,
                                                                sourceLocation: SourceLocation = #_sourceLocation) throws {
    let data = Data(test.json.utf8)
    let fast = JSONReader.decode(type, from: data)
    let slow = try? JSONDecoder().decode(type, from: data)
    #expect((fast != nil) == test.fast, "fast path taken", sourceLocation: sourceLocation)
    if let fast { #expect(slow == fast, "same value as JSONDecoder", sourceLocation: sourceLocation) }
  }

  static let texts = ["Alex", "", "Q\"uote\\", "tab\there", "new\nline", "\u{0}\u{1F}", "émile", "李明", "😀 family",
                      "/slash/", "\u{2028}\u{FEFF}", "a\u{7F}b"]

  static func randomState(_ random: inout SplitMix64) -> DeviceState {
    func text() -> String { texts.randomElement(using: &random)! }
    func contact() -> Contact {
      Contact(name: text(), phoneNum: "+1555\(Int.random(in: 0...9999, using: &random))", shortName: Bool.random(using: &random) ? text() : nil)
    }
    let reminders = (0..<Int.random(in: 0...6, using: &random)).map { index in
      Reminder(reminderId: "\(index)", reminderName: text(), isEnabled: Bool.random(using: &random),
               reminderType: ReminderType.allCases.randomElement(using: &random)!,
               repeatDays: RepeatDays(rawValue: Int.random(in: 0...127, using: &random)),
               timeType: ReminderTimeType.allCases.randomElement(using: &random)!,
               startTime: Int.random(in: 0...1439, using: &random), endTime: Int.random(in: 0...1439, using: &random),
               interval: Int.random(in: 0...240, using: &random),
               timePoints: (0..<Int.random(in: 0...4, using: &random)).map { _ in Int.random(in: 0...1439, using: &random) },
               notes: text(), isLunchBreakDNDEnabled: Bool.random(using: &random),
               lunchBreakDNDStartTime: Int.random(in: 0...1439, using: &random), lunchBreakDNDEndTime: Int.random(in: 0...1439, using: &random))
    }
    let contacts = (0..<Int.random(in: 0...8, using: &random)).map { _ in contact() }
    let emergency = Bool.random(using: &random) ? EmergencyContacts(contacts: [contact()], isSosOn: Bool.random(using: &random)) : nil
    return DeviceState(reminders: reminders, contacts: contacts, emergency: emergency)
  }
}
