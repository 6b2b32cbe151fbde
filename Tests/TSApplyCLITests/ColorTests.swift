import Testing
import TSApplyCLI

/// Colour only on a terminal, and never with --no-color, NO_COLOR or TERM=dumb.
@Suite struct ColorTests {
  struct Case: Sendable, CustomTestStringConvertible {
    let terminal: Bool
    let flag: Bool
    let environment: [String: String]
    let color: Bool
    var testDescription: String { "terminal \(terminal), --no-color \(flag), env \(environment) → \(color)" }
  }

  static let cases: [Case] = [
    Case(terminal: true, flag: false, environment: [:], color: true),
    Case(terminal: false, flag: false, environment: [:], color: false),
    Case(terminal: true, flag: true, environment: [:], color: false),
    Case(terminal: true, flag: false, environment: ["NO_COLOR": "1"], color: false),
    Case(terminal: true, flag: false, environment: ["NO_COLOR": ""], color: true),
    Case(terminal: true, flag: false, environment: ["TERM": "dumb"], color: false),
  ]

  @Test(arguments: cases)
  func decides(_ c: Case) {
    let context = CommandContext(stdout: BufferOutput(), stderr: BufferOutput(), stdoutIsTerminal: c.terminal,
                                 environment: c.environment, currentDirectory: "/")
    #expect(context.useColor(noColorFlag: c.flag) == c.color)
  }
}
