import Foundation

/// JSON with sorted keys and a trailing newline, so files are stable byte for byte (backups,
/// saved plans, last-applied records, the engine's watch records).
public func canonicalJSON<T: Encodable>(_ value: T) -> String {
  canonicalJSON(value, pretty: true) + "\n"
}

/// `value` as JSON with sorted keys, pretty-printed or on one line (`pretty: false`, for one
/// record per line: the apply history), without a trailing newline.
public func canonicalJSON<T: Encodable>(_ value: T, pretty: Bool) -> String {
  let encoder = JSONEncoder()
  encoder.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
  // Encoding plain value types cannot fail; an empty object is the safe fallback.
  let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
  return String(decoding: data, as: UTF8.self)
}
