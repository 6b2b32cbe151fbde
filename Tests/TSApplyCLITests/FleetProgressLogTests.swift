import Foundation
import Testing
@testable import TSApplyNetworkCLI
import TSApplyCLI
import TSFleet
import TSTestSupport

/// A fleet run written into a log (not a terminal): nothing but the review when it is short; a
/// line every interval when it is long, with the counts so far and the watches that failed since.
@Suite struct FleetProgressLogTests {
  final class Clock: @unchecked Sendable {
    private let lock = NSLock()
    private var now = ContinuousClock.now
    var instant: ContinuousClock.Instant { lock.withLock { now } }
    func advance(_ seconds: Int64) { lock.withLock { now += .seconds(seconds) } }
  }

  static func progress(_ done: Int, _ total: Int) -> FleetProgress { FleetProgress(done: done, total: total, running: []) }

  @Test(arguments: [false, true])
  func aLongRunInALogSaysHowFarItIsAndWhoFailed(terminal: Bool) {
    let out = BufferOutput(), clock = Clock()
    let context = CommandContext(stdout: out, stderr: BufferOutput(), stdoutIsTerminal: terminal, environment: [:], currentDirectory: "/")
    let printer = SectionPrinter(context: context, total: 4, verb: "applying", quiet: true, logInterval: .seconds(10), clock: { clock.instant })
    printer.progress(Self.progress(0, 4))
    printer.finished(0, "", verdict: "applied")
    printer.finished(1, "", verdict: "failed", failed: "room-12")
    clock.advance(5)
    printer.tick()
    let short = terminal ? "" : out.text
    #expect(short.isEmpty, "nothing within the first interval: \(short)")
    clock.advance(6)
    printer.progress(Self.progress(2, 4))
    clock.advance(3)
    printer.finished(2, "", verdict: "applied")
    printer.tick()
    clock.advance(8)
    printer.tick()
    printer.end()
    let lines = out.text.split(separator: "\n").map(String.init)
    if terminal {
      #expect(!out.text.contains("elapsed"), "a terminal gets the redrawn line instead: \(out.text)")
    } else {
      #expect(lines == ["[2/4] applying (11s elapsed): 1 applied, 1 failed; failed since the last line: room-12",
                        "[2/4] applying (22s elapsed): 2 applied, 1 failed"], "\(lines)")
    }
  }

  /// (verb, watches running, the line) — the watches under way or waited for are named (a
  /// publication's line said "[0/1] waiting for (11s elapsed)": fresh-eyes test).
  /// A wait for watches whose agent is offline says so (fresh-eyes finding: the line only
  /// counted seconds while the agent was down).
  static let namedCases: [(String, [String], String?, String)] = [
    ("waiting for", ["w01"], nil, "[0/5] waiting for w01 (11s elapsed)"),
    ("applying", ["a", "b", "c", "d", "e"], nil, "[0/5] applying a, b, c, +2 more (11s elapsed)"),
    ("applying", [], nil, "[0/5] applying (11s elapsed)"),
    ("waiting for", ["w01", "w02"], "agent a01 is offline (serving w01, w02)",
     "[0/5] waiting for w01, w02 (11s elapsed); agent a01 is offline (serving w01, w02)"),
  ]

  @Test(arguments: 0..<namedCases.count) func aLogLineNamesTheWatchesUnderWay(_ index: Int) {
    let (verb, running, note, line) = Self.namedCases[index]
    let out = BufferOutput(), clock = Clock()
    let context = CommandContext(stdout: out, stderr: BufferOutput(), stdoutIsTerminal: false, environment: [:], currentDirectory: "/")
    let printer = SectionPrinter(context: context, total: 5, verb: verb, quiet: true, logInterval: .seconds(10), clock: { clock.instant })
    printer.progress(FleetProgress(done: 0, total: 5, running: running, note: note))
    clock.advance(11)
    printer.tick()
    printer.end()
    #expect(out.text == line + "\n", "\(out.text)")
  }

  /// With `--json` standard output is a document: a long run's lines go to standard error.
  @Test func aLongRunWithJSONKeepsItsLinesOffTheDocument() {
    let out = BufferOutput(), err = BufferOutput(), clock = Clock()
    let context = CommandContext(stdout: out, stderr: err, stdoutIsTerminal: false, environment: [:], currentDirectory: "/")
    let printer = SectionPrinter(context: context, total: 2, verb: "applying", quiet: true, document: true, logInterval: .seconds(10),
                                 clock: { clock.instant })
    printer.progress(Self.progress(0, 2))
    printer.finished(0, "", verdict: "applied")
    clock.advance(11)
    printer.tick()
    printer.end()
    #expect(out.text.isEmpty, "\(out.text)")
    #expect(err.text == "[0/2] applying (11s elapsed): 1 applied\n", "\(err.text)")
  }
}
