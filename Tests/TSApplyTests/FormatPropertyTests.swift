import Foundation
import Testing
import TSDevice
import TSManifest
import TSModel
import TSTestSupport

/// Property: for many generated manifests written in a messy but valid spelling (times unpadded,
/// plain or single-quoted, durations as minutes, phones plain, day names long and capitalised,
/// every mapping's keys reversed but the `reminders:` section's, whose order fmt keeps), `fmt` gives exactly the canonical text that `ManifestEncoder`
/// writes, and the formatted manifest decodes to the same manifest. Spellings that carry a
/// warning (integer times, integer intervals under 5) are not used: `fmt` keeps those as
/// written (FormatterTests).
@Suite struct FormatPropertyTests {
  static let iterations = 60

  @Test(arguments: PlatformProfile.all.map(\.name))
  func messyManifestsFormatToCanonicalText(_ name: String) throws {
    let profile = try PlatformProfile.named(name)
    var random = generator(profile, seed: UInt64(name.utf8.count * 31_337))
    var changed = 0, checked = 0
    for iteration in 0..<Self.iterations {
      let manifest = random.manifest()
      let canonical = try ManifestEncoder.encode(manifest)
      // The generator builds plan-level manifests; some break file-level rules (sos without
      // emergency contacts, names fit only for truncating platforms). Only valid files format.
      guard ManifestLoader.load(bytes: Array(canonical.utf8), file: "canonical.yaml").manifest != nil else { continue }
      checked += 1
      let messy = try YAMLWriter.write(Self.messy(ManifestEncoder.node(manifest), random: &random))
      let result = ManifestFormatter.format(bytes: Array(messy.utf8), file: "messy.yaml")
      let formatted = try #require(result.formatted, "iteration \(iteration) on \(name): \(result.diagnostics)\n\(messy)")
      #expect(String(decoding: formatted, as: UTF8.self) == canonical, "iteration \(iteration) on \(name):\n\(messy)")
      #expect(result.isChanged == (messy != canonical))
      if result.isChanged { changed += 1 }
    }
    #expect(checked > Self.iterations / 2, "only \(checked) valid manifests on \(name)")
    #expect(changed > checked / 2)
  }

  /// `node` re-spelled in valid, non-canonical ways, keys reversed.
  static func messy(_ node: YAMLOutputNode, key: String = "", random: inout Generator) -> YAMLOutputNode {
    switch node {
    case let .mapping(entries, flow):
      // The `reminders:` section keeps the order it is written in (fmt never reorders it).
      let ordered = key == "reminders" ? entries : entries.reversed()
      return .mapping(ordered.map { ($0.key, messy($0.value, key: $0.key, random: &random)) }, flow: flow)
    case let .sequence(items, flow):
      return .sequence(items.map { messy($0, key: key == "at" ? "time" : key, random: &random) }, flow: flow)
    case let .scalar(text, style):
      return messyScalar(text, style: style, key: key, random: &random)
    }
  }

  private static func messyScalar(_ text: String, style: YAMLScalar.Style, key: String,
                                  random: inout Generator) -> YAMLOutputNode {
    switch key {
    case "start", "end", "time":
      let parts = text.split(separator: ":").compactMap { Int($0) }
      guard parts.count == 2 else { return .scalar(text, style) }
      return .scalar("\(parts[0]):\(text.suffix(2))", random.chance(50) ? .plain : .singleQuoted)
    case "every":
      return text.durationMinutes < 5 ? .scalar(text, style) : .scalar(String(text.durationMinutes), .plain)
    case "phone":
      return .scalar(text, random.chance(50) ? .plain : .singleQuoted)
    case "repeat":
      let long = ["mon": "Monday", "tue": "TUESDAY", "wed": "Wednesday", "thu": "thu", "fri": "Fri", "sat": "Saturday", "sun": "sun"]
      return .scalar(long[text] ?? text.capitalized, .plain)
    default:
      return .scalar(text, style)
    }
  }
}

extension String {
  /// Minutes in a canonical duration (`2h`, `45m`, `1h30m`).
  fileprivate var durationMinutes: Int {
    var total = 0, number = 0
    for character in self {
      if let digit = character.wholeNumberValue { number = number * 10 + digit; continue }
      total += character == "h" ? number * 60 : number
      number = 0
    }
    return total + number
  }
}
