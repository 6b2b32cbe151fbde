import Foundation
import Testing
import TSDevice
import TSManifest
import TSModel
import TSTestSupport

/// Property: manifests with comments beside flow mappings and flow sequences (the case where a
/// reorder and a comment-column edit used to overlap and trap) format without crashing, keep
/// every comment in its column, are idempotent, and mean the same as the original.
@Suite struct FormatCommentPropertyTests {
  static let iterations = 80

  @Test(arguments: PlatformProfile.all.map(\.name))
  func commentsBesideFlowCollections(_ name: String) throws {
    let profile = try PlatformProfile.named(name)
    var random = generator(profile, seed: UInt64(name.utf8.count * 7_919 + 11))
    var checked = 0, reordered = 0
    for iteration in 0..<Self.iterations {
      let manifest = random.manifest()
      let canonical = try ManifestEncoder.encode(manifest)
      guard ManifestLoader.load(bytes: Array(canonical.utf8), file: "c.yaml").manifest != nil else { continue }
      let messy = try YAMLWriter.write(FormatPropertyTests.messy(ManifestEncoder.node(manifest), random: &random))
      let commented = Self.commentingFlowLines(messy, random: &random)
      let label = "iteration \(iteration) on \(name):\n\(commented)"
      let first = ManifestFormatter.format(bytes: Array(commented.utf8), file: "m.yaml")
      let formatted = try #require(first.formatted, "\(label)\n\(first.diagnostics)")
      let text = String(decoding: formatted, as: UTF8.self)
      checked += 1
      if text.contains("}") && text != commented { reordered += 1 }
      let second = ManifestFormatter.format(bytes: formatted, file: "m.yaml")
      #expect(second.formatted == formatted && !second.isChanged, "not idempotent: \(label)\n\(text)")
      #expect(Self.commentsKeptColumns(text, original: commented), "comment moved: \(label)\n\(text)")
      #expect(try Self.meaning(text) == Self.meaning(commented), "\(label)")
    }
    #expect(checked > Self.iterations / 2)
    #expect(reordered > checked / 2)
  }

  /// The shipped examples mutated the way the fuzzer did: one-line flow mappings shuffled,
  /// times and durations respelled, comments added beside flow collections.
  @Test(arguments: ["watch.yaml", "family.yaml", "minimal.yaml"])
  func mutatedExamples(_ name: String) throws {
    let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("examples/\(name)")
    let original = try String(contentsOf: url, encoding: .utf8)
    var random = SplitMix64(state: UInt64(name.utf8.count))
    for iteration in 0..<60 {
      let mutated = original.split(separator: "\n", omittingEmptySubsequences: false)
        .map { Self.mutate(String($0), random: &random) }.joined(separator: "\n")
      let label = "\(name), iteration \(iteration):\n\(mutated)"
      let result = ManifestFormatter.format(bytes: Array(mutated.utf8), file: name)
      let formatted = try #require(result.formatted, "\(label)\n\(result.diagnostics)")
      let text = String(decoding: formatted, as: UTF8.self)
      #expect(ManifestFormatter.format(bytes: formatted, file: name).isChanged == false, "not idempotent: \(label)\n\(text)")
      #expect(Self.commentsKeptColumns(text, original: mutated), "comment moved: \(label)\n\(text)")
      #expect(try Self.meaning(text) == Self.meaning(mutated), "\(label)")
    }
  }

  /// One line of an example, mutated: a flat one-line flow mapping's entries shuffled, quoted
  /// times unquoted and unpadded, `1h` as `60m`, and maybe a comment after a closing bracket.
  static func mutate(_ line: String, random: inout SplitMix64) -> String {
    var line = line
    if let open = line.firstIndex(of: "{"), line.hasSuffix("}"), !line.contains("#"),
       !line[line.index(after: open)...].dropLast().contains(where: { "{}[]".contains($0) }) {
      let entries = line[line.index(after: open)...].dropLast().components(separatedBy: ", ").shuffled(using: &random)
      line = line[..<open] + "{" + entries.joined(separator: ", ") + "}"
    }
    if Bool.random(using: &random) {
      line = line.replacingOccurrences(of: #""0?([0-9]{1,2}:[0-9]{2})""#, with: "$1", options: .regularExpression)
        .replacingOccurrences(of: "every: 1h}", with: "every: 60m}")
    }
    guard line.hasSuffix("}") || line.hasSuffix("]"), Int.random(in: 0..<100, using: &random) < 70 else { return line }
    return line + String(repeating: " ", count: Int.random(in: 1...6, using: &random)) + "# note"
  }

  /// Mutated shipped-style snippets: flow mappings with keys out of order and a comment beside.
  @Test(arguments: [
    "version: 1\nreminders:\n  drinking:\n    period: {end: \"18:00\", start: \"09:00\", every: 60m}   # x\n",
    "version: 1\nreminders:\n  medicine: {at: [9:00], repeat: Monday}   # x\n",
    "version: 1\nreminders:\n  medicine: {at: [9:00, 600], repeat: [Saturday, sun]} # x\n",
    "version: 1\ncontacts:\n  - {phone: +15550100, name: Alex}      # friend\n",
    "version: 1\nreminders:\n  sedentary: {lunch_break: {end: 840, start: 720}, period: {every: 90, end: 1080, start: 540}}  #c\n",
  ])
  func knownCrashers(_ source: String) throws {
    let result = ManifestFormatter.format(bytes: Array(source.utf8), file: "m.yaml")
    let formatted = try #require(result.formatted, "\(result.diagnostics)")
    let text = String(decoding: formatted, as: UTF8.self)
    #expect(result.isChanged)
    #expect(Self.commentsKeptColumns(text, original: source), "\(text)")
    #expect(ManifestFormatter.format(bytes: formatted, file: "m.yaml").isChanged == false, "\(text)")
    #expect(try Self.meaning(text) == Self.meaning(source))
  }

  /// `text` with a comment (1–6 spaces away) after some lines that end in `}`, `]` or a value.
  static func commentingFlowLines(_ text: String, random: inout Generator) -> String {
    text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
      guard !line.isEmpty, line.last == "}" || line.last == "]" || random.chance(20), random.chance(70) else { return String(line) }
      return line + String(repeating: " ", count: 1 + random.count(5)) + "# note"
    }.joined(separator: "\n")
  }

  /// The (line, column) of every `#` that starts a comment (the generator's comments only).
  static func commentColumns(_ text: String) -> [Int] {
    text.split(separator: "\n").compactMap { line in
      line.range(of: " #").map { line.unicodeScalars.distance(from: line.unicodeScalars.startIndex, to: $0.lowerBound) }
    }
  }

  /// Every comment is in its original column, or further right with one space before it (the
  /// value grew past the padding; at least one space is kept).
  static func commentsKeptColumns(_ text: String, original: String) -> Bool {
    let now = commentColumns(text), before = commentColumns(original)
    let lines = text.split(separator: "\n").filter { $0.contains(" #") }
    return now.count == before.count && zip(zip(now, before), lines).allSatisfy { pair, line in
      pair.0 == pair.1 || (pair.0 > pair.1 && !line.contains("  #"))
    }
  }

  /// What a manifest means: its canonical encoding.
  static func meaning(_ text: String) throws -> String {
    let loaded = ManifestLoader.load(bytes: Array(text.utf8), file: "m.yaml")
    let manifest = try #require(loaded.manifest, "\(loaded.diagnostics)")
    return try ManifestEncoder.encode(manifest)
  }
}
