import Foundation
import Testing
import TSTestSupport

/// Advice names the watch as docs/device.md says: `--device sim:PATH` with PATH relative to the
/// current directory when the watch is inside it and absolute otherwise, in double quotes (with
/// `"`, `\`, `$` and `` ` `` escaped) when it holds anything but letters, digits and
/// `/._-:+@%,=`; so the command inside the advice's single quotes works when pasted into a shell.
/// A tester found `--device sim:../sp/s.json` (relative, outside the directory) and single
/// quotes nested in the advice's own (`'tsapply apply --device 'sim:my dir/w$x.json' m.yaml'`).
@Suite struct AdviceQuotingTests {
  struct Case: Sendable, CustomTestStringConvertible {
    /// The `--device` value as typed in `ROOT/work`.
    var device: String
    /// The manifest's file name in `ROOT/work`.
    var manifest: String
    /// The advice expected, `ROOT` standing for the test's directory.
    var advice: String
    var testDescription: String { "\(device) \(manifest)" }
  }

  static let cases: [Case] = [
    Case(device: "sim:w.json", manifest: "m.yaml", advice: "tsapply plan -out changes.tfplan --device sim:w.json m.yaml"),
    Case(device: "sim:./sub/../w.json", manifest: "m.yaml", advice: "tsapply plan -out changes.tfplan --device sim:w.json m.yaml"),
    Case(device: "sim:../sp/s.json", manifest: "m.yaml", advice: "tsapply plan -out changes.tfplan --device sim:ROOT/sp/s.json m.yaml"),
    Case(device: "sim:my dir/w$x.json", manifest: "m y.yaml",
         advice: #"tsapply plan -out changes.tfplan --device "sim:my dir/w\$x.json" "m y.yaml""#),
    Case(device: "sim:../sp dir/it's `a`.json", manifest: "it's.yaml",
         advice: #"tsapply plan -out changes.tfplan --device "sim:ROOT/sp dir/it's \`a\`.json" "it's.yaml""#),
  ]

  @Test(arguments: cases)
  func adviceNamesTheWatchSoThatItCanBePasted(_ test: Case) throws {
    let root = try TSApplyBinary.temporaryDirectory().resolvingSymlinksInPath()
    let work = root.appendingPathComponent("work")
    try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
    try "contacts:\n  - {name: Ann, phone: \"+15550100\"}\n".write(to: work.appendingPathComponent(test.manifest), atomically: true, encoding: .utf8)
    let made = try TSApplyBinary.run(["device", "init", "--device", test.device], in: work)
    #expect(made.status == 0, "\(made.stderr)")
    // Standard input is no terminal: the apply is refused with advice to save the plan instead.
    let refused = try TSApplyBinary.run(["apply", "--device", test.device, test.manifest], in: work)
    #expect(refused.status == 1)
    let start = try #require(refused.stderr.range(of: "save the plan with '"), "\(refused.stderr)")
    let end = try #require(refused.stderr.range(of: "' and apply that file", range: start.upperBound..<refused.stderr.endIndex))
    let advice = String(refused.stderr[start.upperBound..<end.lowerBound])
    #expect(advice == test.advice.replacingOccurrences(of: "ROOT", with: root.path), "\(refused.stderr)")
    // Pasted into a shell in the same directory, it plans for that watch.
    let pasted = try TSApplyBinary.runShell(#""$TSAPPLY" "# + advice.dropFirst("tsapply ".count), in: work)
    #expect(pasted.status == 0, "\(pasted.stderr)")
    #expect(pasted.stdout.contains("Saved the plan to"), "\(pasted.stdout)")
    let applied = try TSApplyBinary.run(["apply", "changes.tfplan"], in: work)
    #expect(applied.status == 0, "\(applied.stderr)")
    let show = try TSApplyBinary.run(["device", "show", "--device", test.device], in: work)
    #expect(show.stdout.contains("Ann"), "\(show.stdout)\(show.stderr)")
  }

  /// The simulator's own advice for a watch not made yet names it absolute, without `..`, and
  /// pasted where it was printed, makes that watch.
  @Test(arguments: [("sim:../sp/s.json", "tsapply device init --device sim:ROOT/sp/s.json", "sp/s.json"),
                    ("sim:./a b/../w$x.json", #"tsapply device init --device "sim:ROOT/work/w\$x.json""#, "work/w$x.json")])
  func theAdviceToMakeAMissingWatchCanBePasted(_ device: String, _ expected: String, _ made: String) throws {
    let root = try TSApplyBinary.temporaryDirectory().resolvingSymlinksInPath()
    let work = root.appendingPathComponent("work")
    try FileManager.default.createDirectory(at: work.appendingPathComponent("a b"), withIntermediateDirectories: true)
    try "contacts: []\n".write(to: work.appendingPathComponent("m.yaml"), atomically: true, encoding: .utf8)
    let missing = try TSApplyBinary.run(["plan", "--device", device, "m.yaml"], in: work)
    #expect(missing.status == 1)
    let start = try #require(missing.stderr.range(of: "create one with '"), "\(missing.stderr)")
    let end = try #require(missing.stderr.range(of: "' (tsapply.simulator 4001)", range: start.upperBound..<missing.stderr.endIndex))
    let advice = String(missing.stderr[start.upperBound..<end.lowerBound])
    #expect(advice == expected.replacingOccurrences(of: "ROOT", with: root.path), "\(missing.stderr)")
    let pasted = try TSApplyBinary.runShell(#""$TSAPPLY" "# + advice.dropFirst("tsapply ".count), in: work)
    #expect(pasted.status == 0, "\(pasted.stderr)")
    #expect(FileManager.default.fileExists(atPath: root.appendingPathComponent(made).path))
  }
}
