import Foundation
import TSModel

/// The manifest as canonical JSON: what a fleet's desired document carries to an agent
/// (docs/fleet.md "Desired documents").
///
/// It is the canonical form `ManifestEncoder` writes as YAML, with YAML's plain `true` and
/// `false` as JSON booleans, `version` as a number and every other scalar as a string (times
/// `"08:00"`, durations `"1h30m"`, repeat words, names, phones); keys sorted, no white space.
/// JSON is YAML's flow style, so reading it back is `ManifestLoader` reading YAML: one schema,
/// the same rules and diagnostics with line and column in the JSON text.
public enum ManifestJSON {
  /// The JSON value of `manifest`.
  public static func value(_ manifest: Manifest) -> JSONValue {
    json(ManifestEncoder.node(manifest), key: nil)
  }

  /// The canonical text of `manifest`: compact, keys sorted, UTF-8 unescaped.
  public static func text(_ manifest: Manifest) -> String {
    encoded(value(manifest))
  }

  /// `value` as compact JSON with keys sorted, slashes and non-ASCII text as they are, and
  /// control characters escaped: the canonical spelling of a document, written directly (a
  /// fleet hashes and sends a thousand of these per apply; `JSONEncoder` costs ten times more).
  public static func encoded(_ value: JSONValue) -> String {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(4096)
    write(value, to: &bytes)
    return String(decoding: bytes, as: UTF8.self)
  }

  private static func write(_ value: JSONValue, to bytes: inout [UInt8]) {
    switch value {
    case .null: bytes += "null".utf8
    case .bool(let flag): bytes += (flag ? "true" : "false").utf8
    case .integer(let number): bytes += String(number).utf8
    case .number(let number): bytes += (number.isFinite ? "\(number)" : "null").utf8
    case .string(let string): quote(string, to: &bytes)
    case .array(let items):
      bytes.append(UInt8(ascii: "["))
      for (index, item) in items.enumerated() {
        if index > 0 { bytes.append(UInt8(ascii: ",")) }
        write(item, to: &bytes)
      }
      bytes.append(UInt8(ascii: "]"))
    case .object(let entries):
      bytes.append(UInt8(ascii: "{"))
      for (index, key) in entries.keys.sorted().enumerated() {
        if index > 0 { bytes.append(UInt8(ascii: ",")) }
        quote(key, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        write(entries[key]!, to: &bytes)
      }
      bytes.append(UInt8(ascii: "}"))
    }
  }

  /// `string` as a JSON string: `"` and `\` escaped, control characters as `\n`, `\t`… or
  /// `\u00XX`, every other byte of its UTF-8 as it is.
  private static func quote(_ string: String, to bytes: inout [UInt8]) {
    bytes.append(UInt8(ascii: "\""))
    for byte in string.utf8 {
      switch byte {
      case UInt8(ascii: "\""): bytes += #"\""#.utf8
      case UInt8(ascii: "\\"): bytes += #"\\"#.utf8
      case 0x0A: bytes += #"\n"#.utf8
      case 0x0D: bytes += #"\r"#.utf8
      case 0x09: bytes += #"\t"#.utf8
      case 0x08: bytes += #"\b"#.utf8
      case 0x0C: bytes += #"\f"#.utf8
      case 0..<0x20:
        let hex = Array("0123456789abcdef".utf8)
        bytes += #"\u00"#.utf8
        bytes.append(hex[Int(byte >> 4)])
        bytes.append(hex[Int(byte & 0xF)])
      default: bytes.append(byte)
      }
    }
    bytes.append(UInt8(ascii: "\""))
  }

  private static func json(_ node: YAMLOutputNode, key: String?) -> JSONValue {
    switch node {
    case .scalar(let text, let style):
      if key == "version", let number = Int(text) { return .integer(number) }
      if style == .plain, text == "true" || text == "false" { return .bool(text == "true") }
      return .string(text)
    case .sequence(let items, _):
      return .array(items.map { json($0, key: nil) })
    case .mapping(let entries, _):
      return .object(Dictionary(entries.map { ($0.key, json($0.value, key: $0.key)) }) { first, _ in first })
    }
  }
}

extension ManifestLoader {
  /// Decodes the manifest held by `node`, a part of a larger YAML or JSON document (a desired
  /// document's `manifest`), with every rule `load(bytes:file:)` applies; positions name `file`
  /// and the lines and columns of that document.
  public static func load(node: YAMLNode?, file: String) -> ManifestLoadResult {
    var decoder = ManifestDecoder(file: file)
    var manifest = decoder.decode(node)
    let diagnostics = decoder.context.diagnostics
    if diagnostics.hasErrors { manifest = nil }
    return ManifestLoadResult(manifest: manifest, diagnostics: diagnostics.sortedByPosition(), source: nil)
  }
}
