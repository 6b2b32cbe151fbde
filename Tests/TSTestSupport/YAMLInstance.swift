import Foundation
import TSManifest
import TSModel

/// A YAML document as an editor's YAML language server sees it: a JSON value, with plain
/// scalars typed by YAML 1.2's core schema (`true`/`True`/`TRUE` are booleans, `[-+]?[0-9]+`,
/// `0o17` and `0x1F` integers, floats, `~`/`null`/empty null; everything else and every quoted
/// scalar a string). Written here because libyaml leaves tag resolution to its caller.
/// Aliases and merge keys are already applied by `YAMLReader`; keys written in a mapping win
/// over merged ones.
public enum YAMLInstance {
  /// The document in `text` as a JSON value; `nil` when it is not readable YAML (syntax error).
  /// An empty document is `null`.
  public static func from(_ text: String) -> JSONValue? {
    let read = YAMLReader.read(bytes: Array(text.utf8), file: "watch.yaml")
    guard let root = read.root else { return read.diagnostics.isEmpty ? .null : nil }
    return value(root)
  }

  static func value(_ node: YAMLNode) -> JSONValue {
    switch node.content {
    case .scalar(let scalar):
      guard scalar.isPlain, node.tag == nil else { return .string(scalar.value) }
      return coreSchema(scalar.value)
    case .sequence(let items):
      return .array(items.map(value))
    case .mapping(let entries):
      var members: [String: JSONValue] = [:]
      for entry in entries where !entry.isMerged { members[entry.keyText ?? "\(entry.key)"] = value(entry.value) }
      for entry in entries where entry.isMerged {
        let key = entry.keyText ?? "\(entry.key)"
        if members[key] == nil { members[key] = value(entry.value) }
      }
      return .object(members)
    }
  }

  /// A plain scalar resolved by YAML 1.2's core schema (YAML 1.2.2 §10.3.2).
  static func coreSchema(_ text: String) -> JSONValue {
    if YAMLScalar.nullSpellings.contains(text) { return .null }
    if ["true", "True", "TRUE"].contains(text) { return .bool(true) }
    if ["false", "False", "FALSE"].contains(text) { return .bool(false) }
    if matches(text, "^[-+]?[0-9]+$") {
      return Int(text.hasPrefix("+") ? String(text.dropFirst()) : text).map(JSONValue.integer) ?? .number(Double(text) ?? 0)
    }
    if matches(text, "^0o[0-7]+$"), let value = Int(text.dropFirst(2), radix: 8) { return .integer(value) }
    if matches(text, "^0x[0-9a-fA-F]+$"), let value = Int(text.dropFirst(2), radix: 16) { return .integer(value) }
    if matches(text, "^[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?$"), let value = Double(text) { return .number(value) }
    if matches(text, "^[-+]?\\.(inf|Inf|INF)$") { return .number(text.hasPrefix("-") ? -.infinity : .infinity) }
    if matches(text, "^\\.(nan|NaN|NAN)$") { return .number(.nan) }
    return .string(text)
  }

  private static func matches(_ text: String, _ pattern: String) -> Bool {
    text.range(of: pattern, options: .regularExpression) != nil
  }
}
