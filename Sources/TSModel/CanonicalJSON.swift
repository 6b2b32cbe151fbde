import Foundation

/// JSON with sorted keys and a trailing newline, so files are stable byte for byte (backups,
/// saved plans, last-applied records, the engine's watch records).
public func canonicalJSON<T: Encodable>(_ value: T) -> String {
  let encoder = JSONEncoder()
  encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
  // Encoding plain value types cannot fail; an empty object is the safe fallback.
  let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
  return String(decoding: data, as: UTF8.self) + "\n"
}
