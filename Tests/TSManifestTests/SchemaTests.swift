import Foundation
import Testing
@testable import TSManifest
import TSModel
import TSTestSupport

/// The JSON Schema itself: examples validate against it, every property is described, it uses
/// only the keywords the test validator implements, and it is built from the validator's
/// constants and key lists.
@Suite struct SchemaTests {
  static let examples: [String] = {
    let directory = TSApplyBinary.packageRoot.appendingPathComponent("examples")
    let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
    return names.filter { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") }.sorted()
  }()

  static func schemaValue() throws -> JSONValue {
    try JSONDecoder().decode(JSONValue.self, from: Data(ManifestSchema.json().utf8))
  }

  @Test func examplesAreFound() {
    #expect(Set(["watch.yaml", "minimal.yaml", "family.yaml"]).isSubset(of: Set(Self.examples)))
  }

  @Test(arguments: examples)
  func exampleValidatesAgainstTheSchema(_ name: String) throws {
    let url = TSApplyBinary.packageRoot.appendingPathComponent("examples").appendingPathComponent(name)
    let text = try String(contentsOf: url, encoding: .utf8)
    let instance = try #require(YAMLInstance.from(text))
    #expect(try JSONSchemaValidator.manifest().errors(instance) == [])
    #expect(ManifestLoader.load(bytes: Array(text.utf8), file: name).manifest != nil)
  }

  @Test func declaresDraft2020AndVersion1() throws {
    guard case .object(let root) = try Self.schemaValue() else { Issue.record("not an object"); return }
    #expect(root["$schema"] == .string("https://json-schema.org/draft/2020-12/schema"))
    guard case .object(let properties)? = root["properties"], case .object(let version)? = properties["version"] else {
      Issue.record("no version property"); return
    }
    #expect(version["const"] == .integer(ManifestDecoder.currentVersion))
  }

  /// Every keyword is one the test validator checks or an annotation; every property has a
  /// description (editors show it as hover help); every object refuses unknown keys.
  @Test func keywordsDescriptionsAndClosedObjects() throws {
    var problems: [String] = []
    walk(try Self.schemaValue(), path: "#", problems: &problems)
    #expect(problems == [])
  }

  private func walk(_ value: JSONValue, path: String, problems: inout [String]) {
    guard case .object(let schema) = value else { return }
    let known = JSONSchemaValidator.assertions.union(JSONSchemaValidator.annotations)
    for keyword in schema.keys where !known.contains(keyword) { problems.append("\(path): keyword \(keyword)") }
    if schema["type"] == .string("object"), schema["additionalProperties"] != .bool(false) {
      problems.append("\(path): object without additionalProperties: false")
    }
    if case .object(let properties)? = schema["properties"] {
      for (key, property) in properties {
        guard case .object(let members) = property else { continue }
        if members["description"] == nil, members["const"] == nil { problems.append("\(path)/properties/\(key): no description") }
      }
    }
    for (keyword, child) in schema {
      switch child {
      case .object(let members) where ["properties", "$defs"].contains(keyword):
        for (key, sub) in members { walk(sub, path: "\(path)/\(keyword)/\(key)", problems: &problems) }
      case .array(let items) where keyword == "anyOf":
        for (index, sub) in items.enumerated() { walk(sub, path: "\(path)/anyOf/\(index)", problems: &problems) }
      case .object where ["items", "not", "if", "then"].contains(keyword):
        walk(child, path: "\(path)/\(keyword)", problems: &problems)
      default: break
      }
    }
  }

  /// The object schemas list exactly the keys the decoder accepts, and the limits are the
  /// validator's constants.
  @Test func builtFromTheValidatorsKeysAndLimits() throws {
    let schema = ManifestSchema.schema
    let reminder = try #require(schema.defs?["reminder"])
    let keySets: [(JSONSchema?, [String])] = [
      (schema, ManifestDecoder.rootKeys),
      (schema.properties?["reminders"], ManifestDecoder.reminderSectionKeys),
      (reminder, ManifestDecoder.reminderKeys),
      (reminder.properties?["period"], ManifestDecoder.periodKeys),
      (reminder.properties?["lunch_break"]?.anyOf?.last, ManifestDecoder.lunchBreakKeys),
      (schema.defs?["contact"], ManifestDecoder.contactKeys),
      (schema.properties?["emergency"], ManifestDecoder.emergencyKeys),
    ]
    for (object, keys) in keySets {
      #expect(Set(object?.properties?.keys.map { $0 } ?? []) == Set(keys))
      #expect(object?.additionalProperties == false)
    }
    #expect(reminder.properties?["at"]?.maxItems == TimePointsRule.maxCount)
    #expect(reminder.properties?["name"]?.maxLength == ReminderTextRule.maxNameBytes)
    #expect(reminder.properties?["notes"]?.maxLength == ReminderTextRule.maxNotesBytes)
    let minutes = try #require(schema.defs?["time"]?.anyOf?.last?.anyOf)
    #expect(minutes.map { part in part.minimum.flatMap { low in part.maximum.map { low...$0 } } } == TimeOfDayRule.integers)
    #expect(minutes.first?.minimum == MinuteOfDay.range.lowerBound && minutes.last?.maximum == MinuteOfDay.range.upperBound, "\(minutes)")
    #expect(schema.defs?["contact"]?.required == ["name", "phone"])
    #expect(reminder.properties?["period"]?.required == ManifestDecoder.periodKeys)
  }

  /// The case-insensitive pattern accepts every spelling the validator's tables hold, in any case.
  @Test(arguments: ManifestSchema.presetWords + ManifestSchema.dayWords)
  func repeatPatternCoversEverySpelling(_ word: String) throws {
    let pattern = try #require(ManifestSchema.repeatRule.anyOf?.first?.pattern)
    for spelling in [word, word.uppercased(), word.prefix(1).uppercased() + word.dropFirst()] {
      var diagnostics: [Diagnostic] = []
      #expect(spelling.range(of: pattern, options: .regularExpression) != nil, "\(spelling)")
      #expect(RepeatDaysRule.check(word: Located(spelling, at: SourcePosition(file: "w", line: 1, column: 1)), field: "r",
                                   into: &diagnostics) != nil)
    }
  }
}
