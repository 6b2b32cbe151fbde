import Foundation
import Testing
import TSFuzz

/// One input of one fuzz target: a seed, or a reproducer saved from a fuzz run.
struct FuzzInput: Sendable, CustomTestStringConvertible {
  var target: String
  /// Package-relative path.
  var path: String
  var testDescription: String { "\(target): \(path)" }
}

/// The package root, found from this file (Tests/TSFuzzTests/ReplayTests.swift).
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
  .deletingLastPathComponent().path

/// Every seed and every saved reproducer of every fuzz target passes the target's properties
/// (the same functions the fuzzer checks). A file that libFuzzer saved from a crash or a broken
/// property, copied into `Tests/TSFuzzTests/Reproducers/TARGET/`, is a regression test from
/// then on (docs/fuzzing.md "When a run finds something").
///
/// Each input runs in an exit test, in a process of its own, so an input that still crashes
/// tsapply fails this test with the file's name and the crash report instead of ending the test
/// run.
@Suite struct ReplayTests {
  static let seeds = FuzzTargets.all.flatMap { target in
    SeedFiles.paths(target, root: packageRoot).map { FuzzInput(target: target.name, path: $0) }
  }

  static let reproducers = FuzzTargets.all.flatMap { target in
    SeedFiles.files(in: FuzzTargets.reproducerDirectory(target.name), root: packageRoot)
      .filter { !$0.hasSuffix(".md") }
      .map { FuzzInput(target: target.name, path: $0) }
  }

  @Test func everyTargetHasSeeds() {
    for target in FuzzTargets.all {
      #expect(Self.seeds.filter { $0.target == target.name }.count >= 5, "\(target.name) has too few seeds")
    }
  }

  @Test(arguments: seeds)
  func seedPasses(_ input: FuzzInput) async {
    await Self.replay(input)
  }

  @Test(arguments: reproducers)
  func reproducerPasses(_ input: FuzzInput) async {
    await Self.replay(input)
  }

  /// Runs `input` through its target's properties in a child process. A broken property is
  /// reported by the child on standard error (it then exits normally, so its message reaches
  /// this test); a crash fails the exit condition (replay the file with `script/fuzz TARGET FILE`
  /// for the crash report).
  static func replay(_ input: FuzzInput) async {
    let target = input.target, path = (packageRoot as NSString).appendingPathComponent(input.path)
    let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent],
                               "\(input.path) crashed; see it with script/fuzz \(target) \(input.path)") {
      [target = target as String, path = path as String] in
      guard let fuzzTarget = FuzzTargets.named(target), let data = FileManager.default.contents(atPath: path) else {
        FileHandle.standardError.write(Data("\(Self.marker) cannot read \(path), or there is no target \(target)\n".utf8))
        return
      }
      do throws(PropertyFailure) {
        try await fuzzTarget.check(Array(data))
      } catch {
        FileHandle.standardError.write(Data("\(Self.marker) \(error)\n".utf8))
      }
    }
    let errors = result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
    if let start = errors.range(of: marker) {
      Issue.record("\(input.path): \(errors[start.upperBound...])")
    }
  }

  /// Starts the child's report of a broken property.
  static let marker = "[replay failed]"
}
