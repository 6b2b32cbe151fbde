import Foundation
import Testing
import TSTestSupport

/// `apply --redact` masks the manifest's numbers in everything it prints, not only in the plan:
/// progress lines, the summary of a partial or interrupted apply, errors (docs/plan.md
/// "Redaction"). The manifest writes numbers into custom-reminder names (so into addresses),
/// contact names and phones; after a successful apply, an apply failed part-way by
/// `TSAPPLY_SIM_FAULT`, an interrupted one and a refused one, no run of five of their digits
/// (the last two aside) is printed.
@Suite struct ApplyRedactionTests {
  /// The numbers of the manifests below, as written. Digits 5–9 only, so nothing else printed
  /// (elapsed times, call indexes, error codes) can look like a piece of one.
  static let numbers = ["5557778899", "565:789:9876", "7778889995", "+5579986655", "+5589977665", "9988776655"]

  /// First applied: creates the custom reminders and the contacts.
  static let first = """
    reminders:
      custom:
        - {name: "Call 5557778899", at: ["10:00"]}
        - {name: "Ring 565:789:9876", at: ["11:00"]}
    contacts:
      - {name: "Dana 7778889995", phone: "+5579986655"}
    emergency:
      sos: true
      contacts:
        - {name: Sam, phone: "+5589977665"}

    """

  /// Then: changes every resource (one reminder deleted, one created, both lists changed).
  static let second = """
    reminders:
      custom:
        - {name: "Call 5557778899", at: ["12:00"]}
        - {name: "Page 9988776655", at: ["13:00"]}
    contacts:
      - {name: "Dana 7778889995", phone: "+5579986655"}
      - {name: Lee, phone: "+5599887766"}
    emergency:
      sos: true
      contacts:
        - {name: Sam, phone: "+5599887766"}

    """

  /// Every run of five digits of a number (without its last two) found on a line of `output`,
  /// tokens holding a path (`/`: the test's directories, backup paths) left out.
  static func leaks(in output: String) -> [String] {
    var found: [String] = []
    for line in output.split(separator: "\n") {
      let text = line.split(separator: " ").filter { !$0.contains("/") }.joined(separator: " ")
      let digits = Array(text.filter(\.isNumber))
      let shown = String(digits)
      for number in numbers {
        let secret = Array(number.filter(\.isNumber).dropLast(2))
        for start in 0...(secret.count - 5) where shown.contains(String(secret[start..<(start + 5)])) {
          found.append("\(String(secret[start..<(start + 5)])) in \(line)")
        }
      }
    }
    return found
  }

  static func workspace() throws -> URL {
    let directory = try TSApplyBinary.temporaryDirectory()
    _ = try TSApplyBinary.run(["device", "init"], in: directory)
    try first.write(to: directory.appendingPathComponent("w.yaml"), atomically: true, encoding: .utf8)
    return directory
  }

  static func write(_ manifest: String, in directory: URL) throws {
    try manifest.write(to: directory.appendingPathComponent("w.yaml"), atomically: true, encoding: .utf8)
  }

  struct Case: Sendable, CustomTestStringConvertible {
    let id: String
    let arguments: [String]
    let environment: [String: String]
    /// What the output must show (so the run took the path it is meant to test).
    let expected: String
    let status: Int32
    var testDescription: String { id }
  }

  static let cases: [Case] = [
    Case(id: "success", arguments: ["--auto-approve", "--allow-destroy"], environment: [:],
         expected: "Apply complete!", status: 0),
    // Calls 1–3 read for the plan, 4 reads the reminders again; 5 is the first write's template.
    Case(id: "partial failure", arguments: ["--auto-approve", "--allow-destroy"], environment: ["TSAPPLY_SIM_FAULT": "fail@5"],
         expected: "  not applied:  ", status: 1),
    Case(id: "a later write fails", arguments: ["--auto-approve", "--allow-destroy"], environment: ["TSAPPLY_SIM_FAULT": "fail@9"],
         expected: "apply stopped part-way", status: 1),
    Case(id: "unsafe plan refused", arguments: ["--auto-approve"], environment: [:],
         expected: "refusing to apply without review: this plan", status: 1),
    Case(id: "no terminal to ask", arguments: [], environment: [:],
         expected: "refusing to apply without confirmation", status: 1),
  ]

  @Test(arguments: cases)
  func applyPrintsNoNumberOfTheManifest(_ c: Case) throws {
    let directory = try Self.workspace()
    let setUp = try TSApplyBinary.run(["apply", "--auto-approve", "--redact", "w.yaml"], in: directory)
    #expect(setUp.status == 0, "\(setUp.stderr)")
    #expect(Self.leaks(in: setUp.stdout + setUp.stderr) == [], "\(setUp.stdout)\(setUp.stderr)")
    try Self.write(Self.second, in: directory)
    let run = try TSApplyBinary.run(["apply", "--redact"] + c.arguments + ["w.yaml"], in: directory, environment: c.environment)
    let output = run.stdout + run.stderr
    #expect(run.status == c.status, "\(output)")
    #expect(output.contains(c.expected), "\(output)")
    #expect(Self.leaks(in: output) == [], "\(output)")
  }

  /// Without --redact the same runs print the numbers, so the checks above are not vacuous.
  @Test func withoutRedactTheNumbersAreShown() throws {
    let directory = try Self.workspace()
    try Self.write(Self.second, in: directory)
    let run = try TSApplyBinary.run(["apply", "--auto-approve", "w.yaml"], in: directory, environment: ["TSAPPLY_SIM_FAULT": "fail@5"])
    #expect(run.stdout.contains("reminder.custom[\"Call 5557778899\"]: Creating..."), "\(run.stdout)")
    #expect(run.stderr.contains("  failed:       reminder.custom[\"Call 5557778899\"]"), "\(run.stderr)")
    #expect(Self.leaks(in: run.stdout + run.stderr) != [])
  }

  /// Ctrl-C part-way: the interrupted summary masks the addresses too.
  @Test func anInterruptedApplyPrintsNoNumberOfTheManifest() throws {
    let directory = try Self.workspace()
    #expect(try TSApplyBinary.run(["apply", "--auto-approve", "w.yaml"], in: directory).status == 0)
    try Self.write(Self.second, in: directory)
    // At 300 ms a call, planning takes about 1 s and the writes about 3 s more.
    let running = try TSApplyBinary.start(["apply", "--auto-approve", "--allow-destroy", "--redact", "w.yaml"], in: directory,
                                          environment: ["TSAPPLY_SIM_LATENCY": "300,0"])
    Thread.sleep(forTimeInterval: 2.0)
    running.send(SIGINT)
    let result = running.wait()
    let output = result.stdout + result.stderr
    #expect(result.status == 1, "\(output)")
    #expect(output.contains("apply stopped part-way: interrupted"), "\(output)")
    #expect(Self.leaks(in: output) == [], "\(output)")
  }
}
