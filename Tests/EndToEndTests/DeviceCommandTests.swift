import Foundation
import Testing
import TSTestSupport

/// `tsapply device …` run as the built binary: init, show, profiles, simulate, listen, the
/// state file's safety (0600, concurrent processes, corrupted file) and `--device`/TSAPPLY_DEVICE.
@Suite struct DeviceCommandTests {
  func mode(_ path: String) throws -> Int {
    try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
  }

  func json(_ path: String) throws -> [String: Any] {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
  }

  @Test func theDefaultWatchIsCreatedOnFirstUse() throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    let result = try TSApplyBinary.run(["device", "show", "--json"], in: directory)
    #expect(result.status == 0, "\(result.stderr)")
    let path = directory.path + "/.tsapply/device.json"
    #expect(try json(path)["profile"] as? String == "default")
    #expect(try mode(path) == 0o600)
    #expect(try mode(directory.path + "/.tsapply") == 0o700)
    #expect(result.stdout == (try String(contentsOfFile: path, encoding: .utf8)))
  }

  @Test func initRefusesToOverwriteWithoutForce() throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    #expect(try TSApplyBinary.run(["device", "init", "--profile", "fit"], in: directory).status == 0)
    let again = try TSApplyBinary.run(["device", "init", "--profile", "npk"], in: directory)
    #expect(again.status == 1)
    #expect(again.stderr.contains("a simulated watch already exists at"))
    #expect(again.stderr.contains("use --force to reset it"))
    let forced = try TSApplyBinary.run(["device", "init", "--profile", "npk", "--force"], in: directory)
    #expect(forced.status == 0)
    #expect(forced.stdout.hasPrefix("Reset a simulated npk watch at "))
    #expect(try json(directory.path + "/.tsapply/device.json")["profile"] as? String == "npk")
  }

  @Test func anUnknownProfileIsAUsageErrorWithASuggestion() throws {
    let result = try TSApplyBinary.run(["device", "init", "--profile", "fitbasic"], in: try TSApplyBinary.temporaryDirectory())
    #expect(result.status == 64)
    #expect(result.stderr.contains("unknown profile 'fitbasic'; expected one of: default, npk, fit, fit-basic, fw; did you mean 'fit-basic'?"))
  }

  @Test func profilesListsEveryProfileWithItsCapabilities() throws {
    let result = try TSApplyBinary.run(["device", "profiles"])
    #expect(result.status == 0)
    expectGolden(result.stdout, "device-profiles.txt")
    let data = try TSApplyBinary.run(["device", "profiles", "--json"]).stdout.data(using: .utf8) ?? Data()
    let profiles = try #require(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
    #expect(profiles.compactMap { $0["profile"] as? String } == ["default", "npk", "fit", "fit-basic", "fw"])
  }

  @Test func showPrintsTheWholeStateReadably() throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    let spec = "sim:\(directory.path)/w.json"
    #expect(try TSApplyBinary.run(["device", "init", "--profile", "fw", "--device", spec]).status == 0)
    for arguments in [["contact-add", "Alex Doe", "+15550100", "A"], ["emergency-set", "Sam Roe", "+15550101"],
                      ["reminder-toggle", "2"], ["sos"]] {
      let result = try TSApplyBinary.run(["device", "simulate"] + arguments + ["--device", spec])
      #expect(result.status == 0, "\(result.stderr)")
    }
    let shown = try TSApplyBinary.run(["device", "show"], environment: ["TSAPPLY_DEVICE": spec])
    #expect(shown.status == 0)
    expectGolden(shown.stdout.replacingOccurrences(of: directory.path, with: "<DIR>"), "device-show-fw.txt")
    // Simulated without emergency contacts, the watch is shown as every other command sees it
    // (fresh-eyes finding: `device show` listed them while `plan` said the watch had none).
    let without = try TSApplyBinary.run(["device", "show"], environment: ["TSAPPLY_DEVICE": spec, "TSAPPLY_SIM_NO_EMERGENCY_CONTACTS": "1"])
    #expect(without.status == 0 && without.stdout.contains("Emergency contacts: not supported on this watch"), "\(without.stdout)")
    #expect(!without.stdout.contains("Sam Roe"), "\(without.stdout)")
  }

  static let badSimulations: [([String], String)] = [
    (["simulate"], "missing action"),
    (["simulate", "contact-add", "OnlyName"], "wrong arguments for 'contact-add': 1 given"),
    (["simulate", "contact-ad", "A", "1"], "unknown action 'contact-ad'; did you mean 'contact-add'?"),
    (["simulate", "emergency-set", "A", "1", "B"], "wrong arguments for 'emergency-set': 3 given"),
  ]

  @Test(arguments: badSimulations)
  func badSimulateArgumentsAreUsageErrors(arguments: [String], message: String) throws {
    let result = try TSApplyBinary.run(["device"] + arguments, in: try TSApplyBinary.temporaryDirectory())
    #expect(result.status == 64)
    #expect(result.stderr.contains(message), "\(result.stderr)")
  }

  @Test func simulateAnswersThePlatformsErrors() throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    #expect(try TSApplyBinary.run(["device", "init", "--profile", "npk"], in: directory).status == 0)
    let result = try TSApplyBinary.run(["device", "simulate", "contact-add", "Alex", "+1555"], in: directory)
    #expect(result.status == 1)
    #expect(result.stderr == "Error: Regular contacts is not supported on this platform (com.topstepcomkit.contact 2004)\n")
  }

  /// What `simulate` echoes of a name is escaped like every text shown to a person: a name
  /// holding ESC cannot drive the terminal (found by a tester).
  @Test func simulateEchoesNamesEscaped() throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    #expect(try TSApplyBinary.run(["device", "init"], in: directory).status == 0)
    let added = try TSApplyBinary.run(["device", "simulate", "contact-add", "\u{1B}[31mRED\u{1B}[0m Mom\u{200B}", "5550004"], in: directory)
    #expect(added.status == 0)
    #expect(added.stdout == "On the watch: added contact '\\e[31mRED\\e[0m Mom\\u{200B}' (change #1).\n", "\(added.stdout)")
    let removed = try TSApplyBinary.run(["device", "simulate", "contact-remove", "\u{1B}[31mRED\u{1B}[0m Mom\u{200B}"], in: directory)
    #expect(removed.stdout == "On the watch: removed contact '\\e[31mRED\\e[0m Mom\\u{200B}' (change #2).\n", "\(removed.stdout)")
  }

  /// Removing a name two contacts share removes both, and says so.
  @Test func simulateSaysHowManyContactsItRemoved() throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    #expect(try TSApplyBinary.run(["device", "init"], in: directory).status == 0)
    for phone in ["5550004", "5550005"] {
      #expect(try TSApplyBinary.run(["device", "simulate", "contact-add", "Anna", phone], in: directory).status == 0)
    }
    let removed = try TSApplyBinary.run(["device", "simulate", "contact-remove", "Anna"], in: directory)
    #expect(removed.stdout == "On the watch: removed 2 contacts named 'Anna' (change #3).\n", "\(removed.stdout)")
  }

  @Test func aCorruptedStateFileIsAClearErrorAndStaysUntouched() throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    #expect(try TSApplyBinary.run(["device", "init"], in: directory).status == 0)
    let path = directory.path + "/.tsapply/device.json"
    let broken = "{\"format\": \"tsapply-simulated-watch\", \"version\": 1, \"profile\": \"default\", \"reminders\": ["
    try broken.write(toFile: path, atomically: false, encoding: .utf8)
    for arguments in [["device", "show"], ["device", "simulate", "sos"]] {
      let result = try TSApplyBinary.run(arguments, in: directory)
      #expect(result.status == 1)
      #expect(result.stderr.contains("is not a tsapply simulated-watch state file"), "\(result.stderr)")
      #expect(result.stderr.contains("tsapply.simulator 4003"))
    }
    #expect(try String(contentsOfFile: path, encoding: .utf8) == broken)
  }

  /// The state file starts with its format marker, so a file cut short anywhere after its
  /// first line can still be reset with `init --force` (with sorted keys the marker came after
  /// every contact, and a cut before it left a file only `rm` could remove; found by a tester).
  @Test func aStateFileCutShortCanBeReset() throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    #expect(try TSApplyBinary.run(["device", "init"], in: directory).status == 0)
    for n in 0..<5 {
      #expect(try TSApplyBinary.run(["device", "simulate", "contact-add", "Person \(n)", "+1555010\(n)"], in: directory).status == 0)
    }
    let path = directory.path + "/.tsapply/device.json"
    let written = try String(contentsOfFile: path, encoding: .utf8)
    #expect(written.hasPrefix("{\n  \"format\" : \"tsapply-simulated-watch\",\n  \"contacts\" : ["), "\(written.prefix(80))")
    try String(written.prefix(60)).write(toFile: path, atomically: false, encoding: .utf8)
    let reset = try TSApplyBinary.run(["device", "init", "--force"], in: directory)
    #expect(reset.status == 0, "\(reset.stderr)")
    #expect(try TSApplyBinary.run(["device", "show"], in: directory).status == 0)
  }

  @Test func twoConcurrentProcessesLoseNoWrite() throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    #expect(try TSApplyBinary.run(["device", "init"], in: directory).status == 0)
    let writes = 25
    let failures = Failures()
    DispatchQueue.concurrentPerform(iterations: 2) { worker in
      for n in 0..<writes {
        let result = try? TSApplyBinary.run(["device", "simulate", "contact-add", "P\(worker)-\(n)", "\(n + 1)"], in: directory)
        if result?.status != 0 { failures.add(result?.stderr ?? "did not run") }
      }
    }
    #expect(failures.messages.isEmpty, "\(failures.messages)")
    let state = try json(directory.path + "/.tsapply/device.json")
    let names = Set(((state["contacts"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String })
    #expect(names.count == 2 * writes)
    #expect(state["nextSequence"] as? Int == 2 * writes + 1)
    let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path + "/.tsapply").sorted()
    #expect(leftovers == ["device.json", "device.json.lock"])
  }

  @Test func listenPrintsChangesMadeByAnotherProcess() throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    #expect(try TSApplyBinary.run(["device", "init", "--profile", "fw"], in: directory).status == 0)
    let listener = try ListeningProcess(["device", "listen", "--count", "2", "--timeout", "30"], in: directory)
    try listener.waitFor("Listening for changes")
    #expect(try TSApplyBinary.run(["device", "simulate", "contact-add", "Alex", "+15550100"], in: directory).status == 0)
    #expect(try TSApplyBinary.run(["device", "simulate", "sos"], in: directory).status == 0)
    let (status, output, errors) = listener.finish()
    #expect(status == 0, "\(errors)")
    #expect(output.contains("contacts changed: 1 contact (Alex)\nSOS requested\n"), "\(output)")
    #expect(errors.contains("emergency contacts listener: registerEmergencyContactsDidChangedBlock is not supported on this platform (com.topstepcomkit.contact 2004)"))
  }

  @Test func listenOnAWatchWithoutListenersReportsEach2004AndStops() throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    #expect(try TSApplyBinary.run(["device", "init", "--profile", "npk"], in: directory).status == 0)
    let result = try TSApplyBinary.run(["device", "listen", "--timeout", "60"], in: directory)
    #expect(result.status == 1)
    for block in ["registerContactsDidChangedBlock", "registerEmergencyContactsDidChangedBlock", "registerSOSRequestBlock"] {
      #expect(result.stderr.components(separatedBy: "\(block) is not supported on this platform (com.topstepcomkit.setting 2004)").count == 2)
    }
    #expect(result.stderr.hasSuffix("Error: this watch reports no events: all 3 listeners (contacts, emergency contacts, SOS) were refused, so there is nothing to listen for\n"),
            "\(result.stderr)")
    #expect(!result.stderr.contains("timed out"))
  }

  @Test func initForceReplacesOnlyAStateFile() throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    let manifest = "version: 1\ncontacts: []\n"
    try manifest.write(to: directory.appendingPathComponent("victim.yaml"), atomically: true, encoding: .utf8)
    let refused = try TSApplyBinary.run(["device", "init", "--force", "--device", "sim:victim.yaml"], in: directory)
    #expect(refused.status == 1)
    #expect(refused.stderr.contains("refusing to replace \(directory.path)/victim.yaml: it is not a tsapply simulated-watch state file"), "\(refused.stderr)")
    #expect(refused.stderr.contains("choose another path with --device sim:PATH, or remove the file yourself"))
    #expect(try String(contentsOf: directory.appendingPathComponent("victim.yaml"), encoding: .utf8) == manifest)
    let path = directory.path + "/w.json"
    #expect(try TSApplyBinary.run(["device", "init", "--device", "sim:w.json"], in: directory).status == 0)
    try "{\"format\": \"tsapply-simulated-watch\", \"version\": 1, \"reminders\": [".write(toFile: path, atomically: false, encoding: .utf8)
    let broken = try TSApplyBinary.run(["device", "show", "--device", "sim:w.json"], in: directory)
    #expect(broken.stderr.contains("reset the watch with 'tsapply device init --force --device sim:\(path)'"), "\(broken.stderr)")
    let forced = try TSApplyBinary.run(["device", "init", "--force", "--device", "sim:\(path)", "--profile", "fw"], in: directory)
    #expect(forced.status == 0, "\(forced.stderr)")
    #expect(try json(path)["profile"] as? String == "fw")
  }

  /// A bad spec and the parts of the message every device command gives for it (`show` and
  /// `listen`, which also read a bridge: watch, name that form too).
  static let badDeviceSpecs: [(String, [String])] = [
    ("watches/alice.json", ["unknown device --device 'watches/alice.json': expected sim:PATH, the path of a simulated watch's state file",
                            "; did you mean 'sim:watches/alice.json'?"]),
    ("sim:watches", ["<DIR>/watches is a directory, but a simulated watch is a state file: name a file path, e.g. --device sim:<DIR>/watches/device.json"]),
  ]

  @Test(arguments: badDeviceSpecs)
  func aBadDeviceSpecSaysWhatIsExpected(spec: String, message: [String]) throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    try FileManager.default.createDirectory(at: directory.appendingPathComponent("watches"), withIntermediateDirectories: true)
    for command in [["device", "show"], ["device", "init", "--force"], ["device", "listen"]] {
      let result = try TSApplyBinary.run(command + ["--device", spec], in: directory)
      #expect(result.status == 1)
      for part in message {
        #expect(result.stderr.contains(part.replacingOccurrences(of: "<DIR>", with: directory.path)), "\(result.stderr)")
      }
      #expect(!result.stderr.contains("NSCocoaErrorDomain"))
    }
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["watches"])
  }

  static let badListenValues: [([String], String)] = [
    (["--timeout", "18446744074"], "--timeout expects a duration such as 30s or 5m (or a number of seconds), greater than 0 and at most 24h, got '18446744074'"),
    (["--timeout", "25h"], "got '25h'"), (["--timeout", "0s"], "got '0s'"), (["--timeout", "5x"], "got '5x'"),
    (["--timeout", "1e11"], "got '1e11'"), (["--timeout", "1e300"], "got '1e300'"), (["--timeout", "inf"], "got 'inf'"),
    (["--timeout", "nan"], "got 'nan'"), (["--timeout", "-1"], "got '-1'"), (["--timeout", "0"], "got '0'"),
    (["--count", "0", "--timeout", "1"], "--count expects a whole number of events from 1 to 1000000, got '0'"),
    (["--count", "9223372036854775808", "--timeout", "1"], "got '9223372036854775808'"),
    (["--count", "1000001", "--timeout", "1"], "got '1000001'"),
  ]

  @Test(arguments: badListenValues)
  func listenRefusesOutOfRangeValuesAsUsageErrors(arguments: [String], message: String) throws {
    let result = try TSApplyBinary.run(["device", "listen"] + arguments, in: try TSApplyBinary.temporaryDirectory())
    #expect(result.status == 64, "\(result.stderr)")
    #expect(result.stderr.contains(message), "\(result.stderr)")
  }

  static let badSimulationEnvironment: [(String, String)] = [
    ("TSAPPLY_SIM_LATENCY", "9223372036854775807,0"), ("TSAPPLY_SIM_LATENCY", "0,9223372036854775807"),
    ("TSAPPLY_SIM_FAULT", "fail@9223372036854775807"), ("TSAPPLY_SIM_FAULT", "fail@0"),
    ("TSAPPLY_SIM_FAULT", "fail@-1"), ("TSAPPLY_SIM_FAULT", "fail@1:9223372036854775807"),
  ]

  @Test(arguments: badSimulationEnvironment)
  func anOutOfRangeSimulationVariableIsAnErrorNotACrash(variable: String, value: String) throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    try "version: 1\ncontacts: []\n".write(to: directory.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    let result = try TSApplyBinary.run(["plan"], in: directory, environment: [variable: value])
    #expect(result.status == 1, "\(result.stderr)")
    #expect(result.stderr.contains("\(variable)='\(value)'") && result.stderr.contains("tsapply.simulator 1004"), "\(result.stderr)")
  }

  /// Replaces `original` with `replacement` in the default watch's state file of `directory`.
  func edit(_ directory: URL, _ original: String, _ replacement: String) throws -> String {
    let path = directory.path + "/.tsapply/device.json"
    let text = try String(contentsOfFile: path, encoding: .utf8)
    #expect(text.contains(original))
    let edited = text.replacingOccurrences(of: original, with: replacement)
    try edited.write(toFile: path, atomically: false, encoding: .utf8)
    return edited
  }

  static let badStateNumbers: [(String, String, String)] = [
    (#""nextSequence" : 1"#, #""nextSequence" : 9223372036854775807"#,
     "nextSequence: expected a whole number from 1 to 1000000000000, found 9223372036854775807"),
    (#""startTime" : 540"#, #""startTime" : 1.5"#, "reminders[0].startTime: expected an integer, found 1.5"),
  ]

  @Test(arguments: badStateNumbers)
  func aStateFileWithBadNumbersIsReportedAsCorruptedNotACrash(original: String, replacement: String, problem: String) throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    #expect(try TSApplyBinary.run(["device", "init"], in: directory).status == 0)
    let edited = try edit(directory, original, replacement)
    let result = try TSApplyBinary.run(["device", "simulate", "contact-add", "Z", "123"], in: directory)
    #expect(result.status == 1)
    #expect(result.stderr.contains("device.json is corrupted: \(problem); the file was left as it is"), "\(result.stderr)")
    #expect(result.stderr.contains("(tsapply.simulator 4003)"))
    #expect(try String(contentsOfFile: directory.path + "/.tsapply/device.json", encoding: .utf8) == edited)
  }

  @Test(arguments: [(["--device", "sim:nonexistent/dir/x.json"], [String: String]()),
                    ([], ["TSAPPLY_DEVICE": "sim:nonexistent/dir/x.json"])])
  func aNamedWatchThatDoesNotExistIsAnErrorAndNothingIsCreated(arguments: [String], environment: [String: String]) throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    try "version: 1\ncontacts: []\n".write(to: directory.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    for command in [["plan"], ["device", "show"], ["device", "simulate", "sos"]] {
      let result = try TSApplyBinary.run(command + arguments, in: directory, environment: environment)
      let path = directory.path + "/nonexistent/dir/x.json"
      #expect(result.status == 1)
      #expect(result.stderr.contains("no simulated watch at \(path); create one with 'tsapply device init --device sim:\(path)'"),
              "\(result.stderr)")
    }
    #expect(!FileManager.default.fileExists(atPath: directory.path + "/nonexistent"))
    #expect(!FileManager.default.fileExists(atPath: directory.path + "/.tsapply"))
    #expect(try TSApplyBinary.run(["device", "init"] + arguments, in: directory, environment: environment).status == 0)
    #expect(try TSApplyBinary.run(["plan"] + arguments, in: directory, environment: environment).status == 0)
  }

  @Test func showRedactMasksEveryPhoneNumber() throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    #expect(try TSApplyBinary.run(["device", "init", "--profile", "fw"], in: directory).status == 0)
    for arguments in [["contact-add", "Alex Doe", "+15550100", "A"], ["emergency-set", "Sam Roe", "+15550101"],
                      ["contact-add", "Dr 5550177 cell", "+15550102"]] {
      #expect(try TSApplyBinary.run(["device", "simulate"] + arguments, in: directory).status == 0)
    }
    let human = try TSApplyBinary.run(["device", "show", "--redact"], in: directory)
    #expect(human.status == 0)
    #expect(human.stdout.contains("Alex Doe  +******00  [A]") && human.stdout.contains("Sam Roe  +******01"), "\(human.stdout)")
    let json = try TSApplyBinary.run(["device", "show", "--redact", "--json"], in: directory)
    #expect(json.status == 0)
    // In the contacts and in the two journal entries that listed them.
    #expect(json.stdout.components(separatedBy: "+******00").count - 1 == 3, "\(json.stdout)")
    #expect(json.stdout.components(separatedBy: "+******01").count - 1 == 2, "\(json.stdout)")
    for output in [human.stdout, json.stdout] {
      #expect(!output.contains("5550100") && !output.contains("5550101") && !output.contains("5550177"), "\(output)")
    }
    #expect(human.stdout.contains("Dr *****77 cell"), "a number inside a name is masked as in the plan: \(human.stdout)")
  }

  @Test func aFitCustomReminderWithLunchBreakTrueConverges() throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    #expect(try TSApplyBinary.run(["device", "init", "--profile", "fit"], in: directory).status == 0)
    let manifest = """
      version: 1
      reminders:
        custom:
          - name: Walk
            repeat: everyday
            period: {start: "09:00", end: "17:00", every: 60m}
            lunch_break: true

      """
    try manifest.write(to: directory.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    let applied = try TSApplyBinary.run(["apply", "--auto-approve"], in: directory)
    #expect(applied.status == 0, "\(applied.stdout)\(applied.stderr)")
    let again = try TSApplyBinary.run(["plan", "--detailed-exitcode"], in: directory)
    #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
    let shown = try TSApplyBinary.run(["device", "show"], in: directory)
    #expect(shown.stdout.contains("\"Walk\" everyday 09:00–17:00 every 60m lunch break 12:00–14:00"), "\(shown.stdout)")
  }
}

/// Messages collected from concurrent workers.
final class Failures: @unchecked Sendable {
  private let lock = NSLock()
  private var storage: [String] = []
  func add(_ message: String) {
    lock.lock()
    storage.append(message)
    lock.unlock()
  }
  var messages: [String] {
    lock.lock()
    defer { lock.unlock() }
    return storage
  }
}

