import Foundation
import Testing
import TSTestSupport

/// `--redact` masks a phone number by its digits, whatever separates them: for many separators
/// and every place a phone can be written, no run of the number's digits survives in what
/// `validate` and `plan` print — human or JSON, messages or echoed source lines.
@Suite struct RedactionSeparatorTests {
  /// The number's groups use only the digits 5–9, so no position (line, column, index) printed
  /// beside it can look like a piece of it.
  static let groups = ["+56", "789", "9876", "5597"]
  /// The digits that must never be printed in order: all but the last two.
  static let secret = String(groups.joined().filter(\.isNumber).dropLast(2))

  static let separators = ["/", "_", ":", ",", "\t", "\u{00A0}", "\u{2013}", "\u{2010}", " / ", ", ", ": ", "\u{202F}",
                           "\u{2009}", "|", "\u{2011}", "~", " ", "-", ".", "", "\u{200B}", "\u{FF0F}"]

  /// Every quoted place a phone can stand: a flow contact, a block contact, an emergency contact
  /// in single quotes, and a mistyped key. Quoted, so the file always reads as YAML.
  static func quoted(_ phone: String) -> String {
    """
    contacts:
      - {name: A, phone: "\(phone)"}
      - name: B
        phone: "\(phone)"
      - {name: C, phone: "7", phone_number: "\(phone)"}
    emergency:
      sos: true
      contacts:
        - {name: D, phone: '\(phone)'}

    """
  }

  /// Unquoted: some separators make it a YAML syntax error (whose hint repeats the value).
  static func plain(_ phone: String) -> String { "contacts:\n  - name: E\n    phone: \(phone)\n" }

  static let commands = [["validate", "--redact"], ["validate", "--redact", "--json"],
                         ["plan", "--redact", "--no-color"], ["plan", "--redact", "--json"]]

  /// The digits of each printed line, positions left out (`w.yaml:3:12:`, `"line" : 3`) and the
  /// test's own directory (the watch's identity, a temporary path with a UUID), and every
  /// three-digit piece of `secret` that is among them.
  static func leaks(in output: String, directory: URL? = nil) -> [String] {
    var found: [String] = []
    let secret = Array(Self.secret)
    var output = output
    if let directory {
      for path in [directory.path, directory.resolvingSymlinksInPath().path] {
        output = output.replacingOccurrences(of: path, with: "DIR")
      }
    }
    for line in output.split(separator: "\n") {
      var text = String(line)
      if let position = text.firstMatch(of: #/^[^ ]*:[0-9]+:[0-9]+: /#) { text.removeSubrange(position.range) }
      if text.contains("\"line\"") || text.contains("\"column\"") { continue }
      let digits = String(text.filter(\.isNumber))
      for start in 0...(secret.count - 3) where digits.contains(String(secret[start..<(start + 3)])) {
        found.append("\(secret[start..<(start + 3)]) in \(line)")
      }
    }
    return found
  }

  @Test(arguments: separators)
  func noRunOfThePhonesDigitsSurvives(_ separator: String) throws {
    let phone = Self.groups.joined(separator: separator)
    for manifest in [Self.quoted(phone), Self.plain(phone)] {
      let directory = try TSApplyBinary.temporaryDirectory()
      try manifest.write(to: directory.appendingPathComponent("w.yaml"), atomically: true, encoding: .utf8)
      for command in Self.commands {
        let run = try TSApplyBinary.run(command + ["w.yaml"], in: directory)
        let output = run.stdout + run.stderr
        #expect(Self.leaks(in: output, directory: directory) == [], "\(command) with \(separator.debugDescription):\n\(output)")
      }
      // Without --redact the number is printed, so the check above can fail.
      let plain = try TSApplyBinary.run(["validate", "w.yaml"], in: directory)
      #expect(!Self.leaks(in: plain.stdout + plain.stderr).isEmpty || plain.stderr.isEmpty, "\(plain.stderr)")
    }
  }
}
