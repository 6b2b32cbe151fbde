import Foundation
import Testing
import TSDevice
import TSModel

/// What `create(force:)` may replace, a directory where a state file is expected, the advice
/// in errors about a named watch, and decoding errors in plain words.
@Suite struct StateFileSafetyTests {
  static let corruptedWatch = #"{"format": "tsapply-simulated-watch", "version": 1, "profile": "default", "reminders": ["#

  static let replaceable: [(String, Bool)] = [
    ("version: 1\ncontacts: []\n", false),
    ("", false),
    ("{}", false),
    (#"{"format": "other"}"#, false),
    (#"{"nested": {"format": "tsapply-simulated-watch"}}"#, false),
    (#"["format", "tsapply-simulated-watch"]"#, false),
    (corruptedWatch, true),
    (#"{"format": "tsapply-simulated-watch", "version": 7}"#, true),
    (#"{"contacts": [], "format" :"tsapply-simulated-watch", "version": 1, "reminders": 5}"#, true),
  ]

  @Test(arguments: replaceable)
  func forceReplacesOnlyAFileThatCarriesTheFormatMarker(content: String, replaced: Bool) throws {
    let path = try temporaryDirectory() + "/target.json"
    try content.write(toFile: path, atomically: false, encoding: .utf8)
    if replaced {
      try SimulatedDevice.create(path: path, profile: .fit, force: true)
      #expect(try SimulatedDevice(path: path).snapshot().profile == "fit")
    } else {
      #expect(throws: DeviceError(.simulator, .invalidParam,
        "refusing to replace \(path): it is not a tsapply simulated-watch state file (no \"format\": \"tsapply-simulated-watch\"); choose another path with --device sim:PATH, or remove the file yourself if it may go")) {
        try SimulatedDevice.create(path: path, profile: .fit, force: true)
      }
      #expect(try String(contentsOfFile: path, encoding: .utf8) == content)
      #expect(!FileManager.default.fileExists(atPath: path + ".lock"))
    }
  }

  @Test func withoutForceAFileThatIsNotAWatchIsNotCalledAWatch() throws {
    let path = try temporaryDirectory() + "/watch.yaml"
    try "version: 1\n".write(toFile: path, atomically: false, encoding: .utf8)
    do {
      try SimulatedDevice.create(path: path, profile: .default, force: false)
      Issue.record("a manifest was overwritten")
    } catch {
      #expect(error.message.hasPrefix("refusing to replace \(path): it is not a tsapply simulated-watch state file"))
    }
  }

  @Test func aDirectoryIsNamedAsOneWhereAStateFileIsExpected() throws {
    let directory = try temporaryDirectory()
    let expected = DeviceError(.simulator, .dataGetFailed,
      "\(directory) is a directory, but a simulated watch is a state file: name a file path, e.g. --device sim:\(directory)/device.json")
    #expect(throws: expected) { try SimulatedDevice(path: directory) }
    #expect(throws: expected) { try SimulatedDevice.create(path: directory, profile: .default, force: true) }
    #expect(throws: expected) { try DeviceSelector.openSimulated(spec: "sim:\(directory)", environment: [:], currentDirectory: "/") }
  }

  static let advice: [(String, String)] = [
    ("plain", "'tsapply device init --force --device sim:<DIR>/w.json'"),
    ("with space", #"'tsapply device init --force --device "sim:<DIR>/w.json"'"#),
    ("quote\"and$", #"'tsapply device init --force --device "sim:<DIR>/w.json"'"#),
  ]

  /// The state file is read bounded, like every file tsapply reads: a 1 GiB (sparse) file is
  /// refused from its size, nothing of it read.
  @Test func aHugeStateFileIsRefusedByItsSize() throws {
    let path = try temporaryDirectory() + "/huge.json"
    #expect(FileManager.default.createFile(atPath: path, contents: Data(Self.corruptedWatch.utf8)))
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    try handle.truncate(atOffset: 1 << 30)
    try handle.close()
    let expected = DeviceError(.simulator, .dataGetFailed,
      "cannot read the simulated watch at \(path): the file is \(1 << 30) bytes; a simulated watch state may be at most \(4 << 20) bytes")
    #expect(throws: expected) { try SimulatedDevice(path: path) }
  }

  @Test(arguments: advice)
  func theAdviceAboutANamedCorruptedWatchNamesItsDevice(subdirectory: String, command: String) throws {
    let directory = try temporaryDirectory() + "/" + subdirectory
    let path = directory + "/w.json"
    try SimulatedDevice.create(path: path, profile: .default, force: false)
    try Self.corruptedWatch.write(toFile: path, atomically: false, encoding: .utf8)
    let escaped = directory.replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "$", with: "\\$")
    let expected = "reset the watch with " + command.replacingOccurrences(of: "<DIR>", with: escaped)
    for (spec, environment) in [("sim:\(path)", [String: String]()), (nil, [DeviceSelector.environmentVariable: "sim:\(path)"])] {
      do {
        _ = try DeviceSelector.openSimulated(spec: spec, environment: environment, currentDirectory: "/")
        Issue.record("a corrupted watch was opened")
      } catch {
        #expect(error.message.hasSuffix(expected), "\(error.message)")
      }
    }
  }

  @Test func theAdviceAboutTheDefaultWatchNeedsNoDevice() throws {
    let directory = try temporaryDirectory()
    try FileManager.default.createDirectory(atPath: directory + "/.tsapply", withIntermediateDirectories: true)
    try Self.corruptedWatch.write(toFile: directory + "/.tsapply/device.json", atomically: false, encoding: .utf8)
    do {
      _ = try DeviceSelector.openSimulated(spec: nil, environment: [:], currentDirectory: directory)
      Issue.record("a corrupted watch was opened")
    } catch {
      #expect(error.message.hasSuffix("reset the watch with 'tsapply device init --force'"), "\(error.message)")
    }
  }

  static let decodingProblems: [(String, String, String)] = [
    (#""reminderName" : "Sedentary Reminder","#, "", "reminders[0].reminderName: missing"),
    (#""reminderName" : "Sedentary Reminder""#, #""reminderName" : 42"#, "reminders[0].reminderName: expected text, found a number"),
    (#""reminderName" : "Sedentary Reminder""#, #""reminderName" : null"#, "reminders[0].reminderName: expected text, found null"),
    (#""isEnabled" : false"#, #""isEnabled" : "no""#, "reminders[0].isEnabled: expected true or false, found text"),
    (#""timePoints" : ["#, #""timePoints" : {"x": 1}, "unused" : ["#, "reminders[0].timePoints: expected a list, found an object"),
    (#""reminderType" : 1"#, #""reminderType" : 9"#, "reminders[0].reminderType: 9 is not an accepted value"),
    (#""emergency" : {"#, #""emergency" : 3, "unused" : {"#, "emergency: expected an object, found a number"),
  ]

  @Test(arguments: decodingProblems)
  func aDecodingErrorIsAPathAndAReasonInPlainWords(original: String, replacement: String, problem: String) throws {
    let path = try temporaryDirectory() + "/watch.json"
    try SimulatedDevice.create(path: path, profile: .default, force: false)
    let text = try String(contentsOfFile: path, encoding: .utf8)
    let range = try #require(text.range(of: original))
    try text.replacingCharacters(in: range, with: replacement).write(toFile: path, atomically: false, encoding: .utf8)
    #expect(throws: DeviceError(.simulator, .dataFormatError,
      "\(path) is corrupted: \(problem); the file was left as it is; repair it, or reset the watch with 'tsapply device init --force'")) {
      try SimulatedDevice(path: path)
    }
  }
}
