import Foundation
import Testing
import TSFuzz
import TSManifest
import TSModel
import TSBridge

/// The fuzz dictionaries stay in step with the formats: every manifest key of the JSON Schema
/// is in the manifest dictionary, and every key of the record seeds is in the records one (so a
/// new key is fuzzed by name from the day it is added).
@Suite struct DictionaryTests {
  /// The entries of the libFuzzer dictionary at `path` (package-relative), unescaped.
  static func entries(_ path: String) throws -> Set<String> {
    let text = try String(contentsOfFile: (packageRoot as NSString).appendingPathComponent(path), encoding: .utf8)
    var entries = Set<String>()
    for line in text.split(separator: "\n") where !line.hasPrefix("#") {
      guard let open = line.firstIndex(of: "\""), line.last == "\"" else {
        Issue.record("\(path): not a dictionary entry: \(line)")
        continue
      }
      var bytes: [UInt8] = []
      var characters = line[line.index(after: open)..<line.index(before: line.endIndex)].utf8.makeIterator()
      while let byte = characters.next() {
        guard byte == UInt8(ascii: "\\"), let escaped = characters.next() else {
          bytes.append(byte)
          continue
        }
        if escaped == UInt8(ascii: "x"), let high = characters.next(), let low = characters.next(),
           let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) {
          bytes.append(value)
        } else {
          bytes.append(escaped)
        }
      }
      entries.insert(String(decoding: bytes, as: UTF8.self))
    }
    return entries
  }

  /// Every key under `properties` in `schema`, at any depth.
  static func propertyNames(_ value: JSONValue) -> Set<String> {
    switch value {
    case .object(let members):
      var names = Set<String>()
      if case .object(let properties)? = members["properties"] { names.formUnion(properties.keys) }
      for member in members.values { names.formUnion(propertyNames(member)) }
      return names
    case .array(let items):
      return items.reduce(into: Set()) { $0.formUnion(propertyNames($1)) }
    default:
      return []
    }
  }

  /// Every object key in `value`, at any depth.
  static func keys(_ value: JSONValue) -> Set<String> {
    switch value {
    case .object(let members): members.reduce(into: Set(members.keys)) { $0.formUnion(keys($1.value)) }
    case .array(let items): items.reduce(into: Set()) { $0.formUnion(keys($1)) }
    default: []
    }
  }

  @Test func everyManifestKeyIsInTheDictionary() throws {
    let manifest = try #require(FuzzTargets.named("manifest")?.dictionary)
    let schema = try JSONDecoder().decode(JSONValue.self, from: Data(ManifestSchema.json().utf8))
    let names = Self.propertyNames(schema)
    #expect(names.count > 15)
    let missing = names.subtracting(try Self.entries(manifest))
    #expect(missing.isEmpty, "missing from \(manifest): \(missing.sorted())")
  }

  @Test func everyRecordKeyIsInTheDictionary() throws {
    let records = try #require(FuzzTargets.named("records")?.dictionary)
    let folder = (packageRoot as NSString).appendingPathComponent("Tests/TSFuzzTests/Corpus/records")
    var names = Set<String>()
    for name in try FileManager.default.contentsOfDirectory(atPath: folder) where name.hasSuffix(".json") {
      let data = try Data(contentsOf: URL(fileURLWithPath: (folder as NSString).appendingPathComponent(name)))
      names.formUnion(Self.keys(try JSONDecoder().decode(JSONValue.self, from: data)))
    }
    #expect(names.count > 30)
    let missing = names.subtracting(try Self.entries(records))
    #expect(missing.isEmpty, "missing from \(records): \(missing.sorted())")
  }

  /// Every method of protocol v1 and every key the bridge seeds send (quoted, as they appear on
  /// the wire) is in the bridge dictionary.
  @Test func everyBridgeMethodAndKeyIsInTheDictionary() throws {
    let bridge = try #require(FuzzTargets.named("bridge")?.dictionary)
    let entries = try Self.entries(bridge)
    let folder = (packageRoot as NSString).appendingPathComponent("Tests/TSFuzzTests/Corpus/bridge")
    var keys = Set<String>()
    for name in try FileManager.default.contentsOfDirectory(atPath: folder) {
      let data = try Data(contentsOf: URL(fileURLWithPath: (folder as NSString).appendingPathComponent(name)))
      for line in data.split(separator: UInt8(ascii: "\n")).dropFirst() where line.count > 2 {
        if let value = try? JSONDecoder().decode(JSONValue.self, from: Data(line.dropFirst(2))) { keys.formUnion(Self.keys(value)) }
      }
    }
    #expect(keys.count > 15)
    let missing = BridgeMethod.allCases.map(\.rawValue).filter { !entries.contains($0) }
      + keys.map { "\"\($0)\"" }.filter { !entries.contains($0) }
    #expect(missing.isEmpty, "missing from \(bridge): \(missing.sorted())")
  }
}
