import Foundation
import TSManifest
import TSModel

/// A minimal JSON Schema (draft 2020-12) validator covering exactly the keywords
/// `ManifestSchema` uses, written here because no JSON Schema library is available to the
/// package (no package dependencies). Any other keyword is reported as unsupported, so the
/// tests notice when the schema starts using one.
///
/// Supported: `$ref` (local `#/$defs/NAME`), `type`, `enum`, `const`, `pattern` (via
/// NSRegularExpression; the schema's patterns use only syntax ECMA-262 and ICU share),
/// `minLength`/`maxLength` (Unicode code points), `minimum`, `maximum`, `exclusiveMinimum`,
/// `exclusiveMaximum`, `items`, `minItems`, `maxItems`, `uniqueItems`, `properties`,
/// `required`, `additionalProperties` (boolean), `anyOf`, `not`, `if`/`then`. Annotations
/// (`$schema`, `$defs`, `title`, `description`, `examples`) are ignored.
public struct JSONSchemaValidator: Sendable {
  public static let assertions: Set<String> = [
    "$ref", "type", "enum", "const", "pattern", "minLength", "maxLength", "minimum", "maximum",
    "exclusiveMinimum", "exclusiveMaximum", "items", "minItems", "maxItems", "uniqueItems", "properties",
    "required", "additionalProperties", "anyOf", "not", "if", "then",
  ]
  public static let annotations: Set<String> = ["$schema", "$defs", "title", "description", "examples"]

  private let root: JSONValue

  public init(schema: JSONValue) { root = schema }

  /// The schema `ManifestSchema.json()` prints, decoded.
  public static func manifest() throws -> JSONSchemaValidator {
    JSONSchemaValidator(schema: try JSONDecoder().decode(JSONValue.self, from: Data(ManifestSchema.json().utf8)))
  }

  /// Every failed assertion, as `path: message`; empty when `instance` is valid.
  public func errors(_ instance: JSONValue) -> [String] {
    var errors: [String] = []
    validate(instance, root, path: "$", into: &errors)
    return errors
  }

  private func validate(_ instance: JSONValue, _ schema: JSONValue, path: String, into errors: inout [String]) {
    guard case .object(let keywords) = schema else {
      errors.append("\(path): schema is not an object")
      return
    }
    for (keyword, value) in keywords.sorted(by: { $0.key < $1.key }) {
      if Self.annotations.contains(keyword) { continue }
      guard Self.assertions.contains(keyword) else {
        errors.append("\(path): unsupported keyword \(keyword)")
        continue
      }
      check(keyword, value, instance, keywords, path: path, into: &errors)
    }
  }

  private func passes(_ instance: JSONValue, _ schema: JSONValue, path: String) -> Bool {
    var errors: [String] = []
    validate(instance, schema, path: path, into: &errors)
    return errors.isEmpty
  }

  // One keyword; keywords that do not apply to the instance's type pass.
  private func check(_ keyword: String, _ value: JSONValue, _ instance: JSONValue, _ schema: [String: JSONValue],
                     path: String, into errors: inout [String]) {
    func fail(_ message: String) { errors.append("\(path): \(message)") }
    switch (keyword, value, instance) {
    case ("$ref", .string(let reference), _):
      guard reference.hasPrefix("#/$defs/"), case .object(let top) = root, case .object(let defs)? = top["$defs"],
            let target = defs[String(reference.dropFirst("#/$defs/".count))] else {
        return fail("cannot resolve \(reference)")
      }
      validate(instance, target, path: path, into: &errors)
    case ("type", _, _):
      let names: [String] = if case .array(let items) = value { items.compactMap { if case .string(let s) = $0 { s } else { nil } } }
                            else if case .string(let name) = value { [name] } else { [] }
      if !names.contains(where: { Self.hasType(instance, $0) }) { fail("expected type \(names.joined(separator: " or ")), found \(instance)") }
    case ("enum", .array(let options), _):
      if !options.contains(where: { Self.equal($0, instance) }) { fail("\(instance) is not one of \(options)") }
    case ("const", _, _):
      if !Self.equal(value, instance) { fail("\(instance) is not \(value)") }
    case ("pattern", .string(let pattern), .string(let text)):
      guard let regex = try? NSRegularExpression(pattern: pattern) else { return fail("bad pattern \(pattern)") }
      if regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) == nil { fail("\"\(text)\" does not match \(pattern)") }
    case ("minLength", .integer(let limit), .string(let text)):
      if text.unicodeScalars.count < limit { fail("\"\(text)\" is shorter than \(limit)") }
    case ("maxLength", .integer(let limit), .string(let text)):
      if text.unicodeScalars.count > limit { fail("\"\(text)\" is longer than \(limit)") }
    case ("minimum", _, _), ("maximum", _, _), ("exclusiveMinimum", _, _), ("exclusiveMaximum", _, _):
      checkBound(keyword, value, instance, fail: fail)
    case ("items", _, .array(let items)):
      for (index, item) in items.enumerated() { validate(item, value, path: "\(path)[\(index)]", into: &errors) }
    case ("minItems", .integer(let limit), .array(let items)):
      if items.count < limit { fail("\(items.count) items, fewer than \(limit)") }
    case ("maxItems", .integer(let limit), .array(let items)):
      if items.count > limit { fail("\(items.count) items, more than \(limit)") }
    case ("uniqueItems", .bool(true), .array(let items)):
      for (index, item) in items.enumerated() where items[..<index].contains(where: { Self.equal($0, item) }) {
        fail("item \(index) repeats an earlier item")
      }
    case ("properties", .object(let properties), .object(let members)):
      for (key, member) in members.sorted(by: { $0.key < $1.key }) {
        if let property = properties[key] { validate(member, property, path: "\(path).\(key)", into: &errors) }
      }
    case ("required", .array(let keys), .object(let members)):
      for case .string(let key) in keys where members[key] == nil { fail("\(key) is required") }
    case ("additionalProperties", .bool(false), .object(let members)):
      let known: Set<String> = if case .object(let properties)? = schema["properties"] { Set(properties.keys) } else { [] }
      for key in members.keys.sorted() where !known.contains(key) { fail("unknown property \(key)") }
    case ("anyOf", .array(let options), _):
      if !options.contains(where: { passes(instance, $0, path: path) }) { fail("matches none of anyOf") }
    case ("not", _, _):
      if passes(instance, value, path: path) { fail("matches the schema under not") }
    case ("if", _, _):
      if passes(instance, value, path: path), let then = schema["then"] { validate(instance, then, path: path, into: &errors) }
    default:
      break  // not applicable to this instance type (or `then`, handled with `if`)
    }
  }

  private func checkBound(_ keyword: String, _ bound: JSONValue, _ instance: JSONValue, fail: (String) -> Void) {
    guard let limit = bound.numberValue, let number = instance.numberValue else { return }
    let ok = switch keyword {
    case "minimum": number >= limit
    case "maximum": number <= limit
    case "exclusiveMinimum": number > limit
    default: number < limit
    }
    if !ok { fail("\(number) violates \(keyword) \(limit)") }
  }

  /// JSON Schema's type test: an integer is any number with no fractional part.
  static func hasType(_ value: JSONValue, _ type: String) -> Bool {
    switch (type, value) {
    case ("null", .null), ("boolean", .bool), ("string", .string), ("array", .array), ("object", .object): true
    case ("integer", .integer), ("number", .integer), ("number", .number): true
    case ("integer", .number(let number)): number.rounded() == number && number.isFinite
    default: false
    }
  }

  /// JSON Schema equality: numbers compare by value (1 == 1.0).
  static func equal(_ a: JSONValue, _ b: JSONValue) -> Bool {
    if let x = a.numberValue, let y = b.numberValue { return x == y }
    switch (a, b) {
    case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy { equal($0, $1) }
    case (.object(let x), .object(let y)):
      return x.count == y.count && x.allSatisfy { key, value in y[key].map { equal(value, $0) } ?? false }
    default: return a == b
    }
  }
}
