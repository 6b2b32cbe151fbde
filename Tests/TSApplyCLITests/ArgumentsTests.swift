import Testing
@testable import TSApplyCLI

struct ParseCase: Sendable, CustomTestStringConvertible {
  let id: String
  let arguments: [String]
  let flags: Set<String>
  let values: [String: [String]]
  let positionals: [String]
  var testDescription: String { id }
}

@Suite struct ArgumentsTests {
  static let options: [OptionSpec] = [
    OptionSpec(["--out", "-out"], value: "FILE", help: "saved plan"),
    OptionSpec(["--auto-approve", "-auto-approve"], help: "skip"),
    OptionSpec(["--json"], help: "json"),
  ]

  static let cases: [ParseCase] = [
    ParseCase(id: "nothing", arguments: [], flags: [], values: [:], positionals: []),
    ParseCase(id: "terraform single-dash forms", arguments: ["-out", "p.tfplan", "-auto-approve", "w.yaml"],
              flags: ["--auto-approve"], values: ["--out": ["p.tfplan"]], positionals: ["w.yaml"]),
    ParseCase(id: "inline value", arguments: ["--out=x"], flags: [], values: ["--out": ["x"]], positionals: []),
    ParseCase(id: "stdin dash is positional", arguments: ["-", "--json"], flags: ["--json"], values: [:], positionals: ["-"]),
    ParseCase(id: "double dash ends options", arguments: ["--", "--json"], flags: [], values: [:], positionals: ["--json"]),
  ]

  @Test(arguments: cases)
  func parses(_ c: ParseCase) throws {
    let parsed = try ParsedArguments.parse(c.arguments, options: Self.options)
    #expect(parsed.flags == c.flags)
    #expect(parsed.values == c.values)
    #expect(parsed.positionals == c.positionals)
  }

  @Test func unknownOptionSuggestsClosest() {
    #expect(throws: UsageError("unknown option '--jsno'; did you mean '--json'?")) {
      try ParsedArguments.parse(["--jsno"], options: Self.options)
    }
  }

  @Test func missingValueIsAUsageError() {
    #expect(throws: UsageError("option '-out' needs a value (FILE)")) {
      try ParsedArguments.parse(["-out"], options: Self.options)
    }
  }

  /// `plan -out --device sim:x.json` (fresh-eyes finding): the option is not taken as the file's name.
  @Test func anOptionWhereAValueShouldBeIsAUsageError() {
    #expect(throws: UsageError("option '-out' needs a value (FILE), but the next argument is the option '--json'; give the value right after '-out'")) {
      try ParsedArguments.parse(["-out", "--json"], options: Self.options)
    }
  }

  @Test(arguments: [("kitten", "sitting", 3), ("", "abc", 3), ("plan", "plan", 0), ("aply", "apply", 1)])
  func editDistances(_ a: String, _ b: String, _ d: Int) {
    #expect(editDistance(a, b) == d)
  }
}

/// `device listen --timeout` takes a duration as every other option does, and a bare number
/// of seconds as it did before (fresh-eyes finding: `--timeout 1s` was refused).
@Suite struct ListenTimeoutTests {
  @Test(arguments: [("1s", 1.0), ("500ms", 0.5), ("5m", 300), ("1h30m", 5400), ("24h", 86_400), ("2.5", 2.5), ("60", 60)] as [(String, Double)])
  func aDurationOrANumberOfSecondsIsAccepted(text: String, seconds: Double) {
    #expect(DeviceListenCommand.timeoutSeconds(text) == seconds)
  }

  @Test(arguments: ["0", "0s", "-1", "25h", "24h1s", "5x", "inf", "nan", ""])
  func anythingElseIsRefused(text: String) {
    #expect(DeviceListenCommand.timeoutSeconds(text) == nil)
  }
}
