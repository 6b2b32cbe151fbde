import Foundation
import Testing
import TSTestSupport

/// What `validate` and `plan` print about a manifest's problems: `--redact` masks phone numbers
/// in messages, field paths and echoed lines, control characters never reach the terminal, and a huge line
/// is echoed as a short window.
@Suite struct DiagnosticOutputTests {
  static let phones = """
    version: 1
    contacts:
      - {name: A, phone: "+1 (555) 010-0100"}
      - {name: B, phone: "+1-555-010-0100"}

    """
  static let badPhone = "version: 1\ncontacts:\n  - {name: C, phone: \"+1 555 0100 ext 12\"}\n"
  /// A colon left out makes the phone part of an unknown key, which is the diagnostic's field
  /// path (found by the manifest fuzz target: the field was printed unmasked).
  static let missingColon = "version: 1\ncontacts:\n  - {name: D, phone +1 555 010 0100}\n"
  /// Every spelling of a full number in the manifests above, digits only.
  static let fullNumbers = ["15550100100", "5550100", "0100100"]

  static func digitsOnly(_ text: String) -> String {
    // Phone-like runs with their formatting removed, so "+1 (555) 010-0100" is caught too.
    text.filter { $0.isNumber || $0 == "\n" || $0 == "*" || $0 == " " || $0 == "\"" }
      .replacingOccurrences(of: " ", with: "")
  }

  static func expectNoFullNumber(_ output: String, sourceLocation: SourceLocation = #_sourceLocation) {
    let digits = digitsOnly(output)
    for number in fullNumbers { #expect(!digits.contains(number), "\(output)", sourceLocation: sourceLocation) }
  }

  static func workspace(_ manifest: String) throws -> URL {
    let directory = try TSApplyBinary.temporaryDirectory()
    try manifest.write(to: directory.appendingPathComponent("w.yaml"), atomically: true, encoding: .utf8)
    return directory
  }

  @Test(arguments: [phones, badPhone, missingColon])
  func redactMasksPhonesInValidateAndPlan(_ manifest: String) throws {
    let directory = try Self.workspace(manifest)
    let commands = [["validate", "--redact", "w.yaml"], ["validate", "--redact", "--json", "w.yaml"],
                    ["plan", "--redact", "--no-color", "w.yaml"]]
    // A phone with letters is masked as written: all its digits but the last two (the extension's).
    let masked = manifest == Self.badPhone ? "+* *** **** ext 12" : "**00"
    for command in commands {
      let result = try TSApplyBinary.run(command, in: directory)
      #expect(result.stdout.contains(masked) || result.stderr.contains(masked), "\(command): \(result.stderr)")
      Self.expectNoFullNumber(result.stdout + result.stderr)
    }
    // Without --redact the numbers are shown, so the check above is not vacuous.
    let plain = try TSApplyBinary.run(["validate", "w.yaml"], in: directory)
    #expect(Self.fullNumbers.contains { Self.digitsOnly(plain.stderr).contains($0) })
  }

  /// A number inside a name or a note the platform cuts (fresh-eyes fe98 #1): the cut shows
  /// the first digits of the number, so its last two are two more of the number's; beside the
  /// whole name (its last two shown) four of the last five digits were readable. A number cut
  /// short is masked whole, in `validate`'s and `plan`'s warnings and in the plan itself.
  @Test func aNumberInANameThePlatformCutsIsMaskedWhole() throws {
    let manifest = """
      version: 1
      reminders:
        custom:
          - {name: Call, at: ["09:00"], notes: "Call the clinic on 0770090012345678 about the repeat prescription, ask for the nurse line"}
      contacts:
        - {name: "Granddaughter Emma 0770090012345678", phone: "+15550100188"}

      """
    let directory = try Self.workspace(manifest)
    #expect(try TSApplyBinary.run(["device", "init", "--profile", "fit", "--device", "sim:w.json"], in: directory).status == 0)
    for command in [["validate", "--redact", "--profile", "fit", "w.yaml"], ["plan", "--redact", "--no-color", "--device", "sim:w.json", "w.yaml"]] {
      let result = try TSApplyBinary.run(command, in: directory)
      let output = result.stdout + result.stderr
      #expect(output.contains("stored as"), "\(command): \(output)")
      #expect(output.contains("**78"), "\(command): the whole number keeps its last two: \(output)")
      // The digits shown after masked ones: only the number's last two, and the phone's.
      let masked = try NSRegularExpression(pattern: #"\*[0-9]+"#)
      let tails = Set(masked.matches(in: output, range: NSRange(output.startIndex..., in: output)).map { (output as NSString).substring(with: $0.range) })
      #expect(tails.isSubset(of: ["*78", "*88"]), "\(command): \(tails) in \(output)")
    }
  }

  @Test func redactedValidateShowsTheMaskedLineAndMessage() throws {
    let result = try TSApplyBinary.run(["validate", "--redact", "w.yaml"], in: try Self.workspace(Self.phones))
    #expect(result.status == 0)
    #expect(result.stderr == """
      w.yaml:4:22: warning: contacts[1].phone: +*********00 is also the phone of "A" on line 3
        - {name: B, phone: "+*-***-***-**00"}
                           ^

      """)
  }

  /// A tester's report: phones with a letter among their digits (the letter O typed for a
  /// zero, an `x` extension) or a line break escaped in them were printed whole, or with four
  /// digits left, in `validate --redact` (the digit runs the mask looks for break at letters).
  /// Each is now masked where it stands as written, and as it is shown escaped.
  @Test(arguments: [false, true])
  func phonesWithLettersAreMaskedAsWritten(_ json: Bool) throws {
    let manifest = """
      version: 1
      contacts:
        - {name: E, phone: "+1 555 O1OO 128"}
        - {name: L, phone: "+1555O1OO128"}
        - {name: M, phone: "+1555x0100999"}
        - {name: N, phone: "+1555123456x789"}
        - {name: P, phone: "+1\\n5550100134"}

      """
    let result = try TSApplyBinary.run(["validate", "--redact"] + (json ? ["--json"] : []) + ["w.yaml"], in: try Self.workspace(manifest))
    #expect(result.status == 1)
    let output = result.stdout + result.stderr
    for shown in ["555 O1OO", "1555O1", "1555x", "0100999", "123456", "5550100134", "555"] {
      #expect(!output.contains(shown), "\(shown) in \(output)")
    }
    #expect(output.contains(json ? "+* *** O*OO *28" : "+* *** O*OO *28"), "\(output)")
  }

  /// A file saved with CRLF (or CR) line ends has its lines echoed under diagnostics, as one
  /// with LF does; thousands of diagnostics on one long line each show their own window of it.
  @Test(arguments: ["\r\n", "\r"])
  func linesOfEveryLineEndAreEchoed(_ end: String) throws {
    let manifest = ["version: 1", "contacts:", "  - {name: A, phone: \"+1 555 010 0100\", nick: x}", ""].joined(separator: end)
    let result = try TSApplyBinary.run(["validate", "--redact", "w.yaml"], in: try Self.workspace(manifest))
    #expect(result.status == 1)
    #expect(result.stderr.contains("  - {name: A, phone: \"+* *** *** **00\", nick: x}\n"), "\(result.stderr)")
  }

  @Test func manyDiagnosticsOnOneLineEachShowTheirPlace() throws {
    let contacts = (0..<2000).map { "{\"name\": \"N\($0)\", \"phone\": \"+1555\(String(format: "%07d", $0))x\"}" }
    let manifest = "{\"version\": 1, \"contacts\": [" + contacts.joined(separator: ", ") + "]}\n"
    let result = try TSApplyBinary.run(["validate", "--redact", "w.yaml"], in: try Self.workspace(manifest))
    #expect(result.status == 1)
    let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let last = try #require(lines.lastIndex { $0.hasPrefix("w.yaml:1:") })
    // The last diagnostic's window holds its contact, masked, above the caret.
    let echoed = Array(lines[last + 1]), caret = lines[last + 2]
    #expect(caret.hasSuffix("^") && echoed.count >= caret.count)
    #expect(lines[last + 1].contains("+*********99x") && !result.stderr.contains("5550001999"), "\(lines[last + 1])")
  }

  @Test func controlCharactersAreRejectedAndNeverPrintedRaw() throws {
    let manifest = "version: 1\nreminders:\n  custom:\n    - {name: \"a\\nb\", at: [\"03:00\"]}\n    - {name: \"\\e[2J\\e[31mRED\", at: [\"06:00\"]}\ncontacts:\n  - {name: \"\\e]0;pwned\\a\", phone: \"3\"}\n"
    let result = try TSApplyBinary.run(["validate", "w.yaml"], in: try Self.workspace(manifest))
    #expect(result.status == 1)
    #expect(!result.stderr.contains("\u{1B}") && !result.stderr.contains("\u{07}"))
    #expect(result.stderr.contains("w.yaml:5:14: error: reminders.custom[1].name: contains a control character (U+001B); names and notes are shown on the watch and cannot hold control characters"))
    #expect(result.stderr.contains("w.yaml:7:12: error: contacts[0].name: contains a control character (U+001B)"))
    #expect(result.stderr.hasSuffix("w.yaml is not valid: 3 errors.\n"))
  }

  /// A right-to-left override or a zero-width space in a name is shown escaped wherever a name
  /// is printed for a person: diagnostics (message and echoed line), the plan, `device show`.
  @Test func invisibleCharactersInNamesAreShownEscaped() throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    let spec = "sim:\(directory.path)/w.json"
    #expect(try TSApplyBinary.run(["device", "init", "--profile", "fw", "--device", spec]).status == 0)
    let added = try TSApplyBinary.run(["device", "simulate", "contact-add", "Sam \u{202E}xoB", "+15550100", "--device", spec])
    #expect(added.status == 0, "\(added.stderr)")
    let shown = try TSApplyBinary.run(["device", "show", "--device", spec])
    #expect(shown.stdout.contains("Sam \\u{202E}xoB  +15550100"), "\(shown.stdout)")
    let long = "Mo\u{200B}m " + String(repeating: "a", count: 40)
    try "contacts:\n  - {name: \"\(long)\", phone: \"+15550101\"}\n".write(to: directory.appendingPathComponent("w.yaml"), atomically: true, encoding: .utf8)
    let validate = try TSApplyBinary.run(["validate", "w.yaml"], in: directory)
    #expect(validate.status == 0)
    #expect(validate.stderr.hasPrefix("w.yaml:2:12: warning: contacts[0].name: is 47 bytes; the watch stores at most 32, so it will be stored as \"Mo\\u{200B}m aaaaaaaaaaaaaaaaaaaaaaaaa\" (32 bytes)\n  - {name: \"Mo\\u{200B}m aaaa"), "\(validate.stderr)")
    let plan = try TSApplyBinary.run(["plan", "--no-color", "--device", spec, "w.yaml"], in: directory)
    #expect(plan.status == 0, "\(plan.stderr)")
    #expect(plan.stdout.contains("\"Sam \\u{202E}xoB\""), "\(plan.stdout)")
    #expect(plan.stdout.contains("\"Mo\\u{200B}m aaaa"))
    for output in [shown.stdout, validate.stderr, plan.stdout] {
      #expect(!output.unicodeScalars.contains { $0 == "\u{202E}" || $0 == "\u{200B}" })
    }
  }

  @Test func aHugeLineIsEchoedAsAWindow() throws {
    let manifest = "contacts: " + String(repeating: "[", count: 70) + String(repeating: "]", count: 70) + String(repeating: " ", count: 100_000) + "\n"
    let result = try TSApplyBinary.run(["validate", "w.yaml"], in: try Self.workspace(manifest))
    #expect(result.status == 1)
    #expect(result.stderr.utf8.count < 1_000)
    let lines = result.stderr.split(separator: "\n").map(String.init)
    #expect(lines.first == "w.yaml:1:74: error: nesting is deeper than 64 levels; reading stopped")
    #expect(lines.count == 4)
    let echoed = Array(lines[1]), caret = lines[2]
    #expect(lines[1].hasPrefix("…") && lines[1].hasSuffix("…"))
    #expect(echoed[caret.count - 1] == "[")
  }

  @Test func deviceShowEscapesControlCharactersFromTheWatch() throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    let spec = "sim:\(directory.path)/w.json"
    #expect(try TSApplyBinary.run(["device", "init", "--profile", "fw", "--device", spec]).status == 0)
    let added = try TSApplyBinary.run(["device", "simulate", "contact-add", "\u{1B}[2JEvil", "+15550100", "\u{1B}", "--device", spec])
    #expect(added.status == 0, "\(added.stderr)")
    let shown = try TSApplyBinary.run(["device", "show", "--device", spec])
    #expect(shown.status == 0)
    #expect(!shown.stdout.contains("\u{1B}"))
    #expect(shown.stdout.contains("\\e[2JEvil  +15550100  [\\e]"))
    // The plan that removes it shows the name escaped too.
    try "contacts: []\n".write(to: directory.appendingPathComponent("w.yaml"), atomically: true, encoding: .utf8)
    let plan = try TSApplyBinary.run(["plan", "--no-color", "--device", spec, "w.yaml"], in: directory)
    #expect(plan.status == 0, "\(plan.stderr)")
    #expect(!plan.stdout.contains("\u{1B}"))
    #expect(plan.stdout.contains("\\e[2JEvil"))
  }
}

/// One diagnostic JSON shape everywhere (`JSONValue(diagnostic:file:)`): a warning `validate
/// --json` lists and one `plan --json` lists carry the same keys, every one present.
@Suite struct DiagnosticShapeTests {
  static func entries(_ output: String, _ key: String) throws -> [[String: Any]] {
    let object = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "\(output)")
    return try #require(object[key] as? [[String: Any]], "\(output)")
  }

  @Test func validateAndPlanWarningsHaveOneShape() throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    let spec = "sim:\(directory.path)/w.json"
    #expect(try TSApplyBinary.run(["device", "init", "--profile", "fit", "--device", spec]).status == 0)
    // An integer time (a validation warning) and a custom name the fit watch cuts (a plan warning).
    let manifest = "reminders:\n  medicine: {at: [800]}\n  custom:\n    - {name: Take the evening medicine now A, at: [\"20:00\"]}\n"
    try manifest.write(to: directory.appendingPathComponent("w.yaml"), atomically: true, encoding: .utf8)
    let validate = try TSApplyBinary.run(["validate", "--json", "w.yaml"], in: directory)
    let plan = try TSApplyBinary.run(["plan", "--json", "--device", spec, "w.yaml"], in: directory)
    #expect(validate.status == 0 && plan.status == 0, "\(validate.stderr)\(plan.stderr)")
    let validated = try Self.entries(validate.stdout, "warnings"), planned = try Self.entries(plan.stdout, "warnings")
    let keys: Set<String> = ["severity", "file", "line", "column", "field", "message"]
    #expect(!validated.isEmpty && !planned.isEmpty)
    for entry in validated + planned {
      #expect(Set(entry.keys) == keys, "\(entry)")
      #expect(entry["file"] as? String == "w.yaml" && entry["line"] is Int && entry["column"] is Int, "\(entry)")
    }
    #expect(planned.contains { $0["field"] as? String == "reminders.custom[0].name" && $0["line"] as? Int == 4 }, "\(planned)")
  }
}
