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

  /// `value` as compact JSON with sorted keys (the canonical spelling of a document).
  public static func encoded(_ value: JSONValue) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    guard let data = try? encoder.encode(value) else { return "null" }
    return String(decoding: data, as: UTF8.self)
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
