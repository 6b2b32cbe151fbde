import Foundation

/// A `DecodingError` met while reading a JSON record (a simulated watch's state file, a backup,
/// a saved plan), in plain words: `path: reason`, e.g.
/// `reminders[0].reminderName: missing`, `reminders[0].reminderName: expected text, found a
/// number`, `reminders[0].startTime: expected an integer, found 1.5` (docs/device.md, "State
/// file": a corrupted file is named with the field's path and what was expected).
///
/// What was found is read from the file itself (parsed as plain JSON), so the reason never
/// repeats Foundation's wording (`No value associated with key CodingKeys(…)`). Values are not
/// quoted except for numbers and unaccepted enumeration values, so contact details do not end up
/// in error messages.
public enum DecodingProblem {
  /// `path: reason` for `error`, the failure to decode `data`; any other error as it describes itself.
  public static func describe(_ error: any Error, in data: Data) -> String {
    guard let decoding = error as? DecodingError else { return "\(error)" }
    let document = try? JSONDecoder().decode(JSONValue.self, from: data)
    switch decoding {
    case .dataCorrupted(let context) where context.codingPath.isEmpty:
      if let document, let found = firstNonInteger(document, path: []) {
        return "\(pathText(found.path)): expected an integer, found \(found.number)"
      }
      return "top level: not valid JSON"
    case .dataCorrupted(let context):
      let found = document.flatMap { value(at: context.codingPath, in: $0) }.map(literal) ?? "this value"
      return "\(pathText(context.codingPath)): \(found) is not an accepted value"
    case .keyNotFound(let key, let context):
      return "\(pathText(context.codingPath + [key])): missing"
    case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
      let found = document.flatMap { value(at: context.codingPath, in: $0) }.map(kind) ?? "something else"
      return "\(pathText(context.codingPath)): expected \(expected(type)), found \(found)"
    @unknown default:
      return "\(decoding)"
    }
  }

  /// What a value of `type` is, in words: `text`, `an integer`, `a list`, …
  static func expected(_ type: Any.Type) -> String {
    switch ObjectIdentifier(type) {
    case ObjectIdentifier(String.self): "text"
    case ObjectIdentifier(Int.self), ObjectIdentifier(Int32.self), ObjectIdentifier(Int64.self): "an integer"
    case ObjectIdentifier(Double.self), ObjectIdentifier(Float.self): "a number"
    case ObjectIdentifier(Bool.self): "true or false"
    case ObjectIdentifier([Any].self): "a list"
    case ObjectIdentifier([String: Any].self): "an object"
    default: "a value of type \(type)"
    }
  }

  /// What `value` is, in words: `null`, `true or false`, `a number`, `text`, `a list`, `an object`.
  static func kind(_ value: JSONValue) -> String {
    switch value {
    case .null: "null"
    case .bool: "true or false"
    case .integer, .number: "a number"
    case .string: "text"
    case .array: "a list"
    case .object: "an object"
    }
  }

  /// A number or short text as written, anything else by its kind.
  private static func literal(_ value: JSONValue) -> String {
    switch value {
    case .integer(let number): "\(number)"
    case .number(let number): "\(number)"
    case .string(let text) where text.count <= 32: "\"\(text)\""
    default: kind(value)
    }
  }

  /// The value at `path` in `document`, if there is one.
  static func value(at path: [any CodingKey], in document: JSONValue) -> JSONValue? {
    var current = document
    for key in path {
      switch current {
      case .array(let items):
        guard let index = key.intValue, items.indices.contains(index) else { return nil }
        current = items[index]
      case .object(let members):
        guard let member = members[key.stringValue] else { return nil }
        current = member
      default:
        return nil
      }
    }
    return current
  }

  /// `reminders[0].startTime` from coding keys (`.name` for a key, `[index]` for a position).
  static func pathText(_ path: [any CodingKey]) -> String {
    pathText(path.map { key in key.intValue.map { "[\($0)]" } ?? ".\(key.stringValue)" })
  }

  private static func pathText(_ components: [String]) -> String {
    let path = components.joined()
    return path.isEmpty ? "top level" : String(path.dropFirst(path.hasPrefix(".") ? 1 : 0))
  }

  /// The first number that is not a whole `Int`, in key order. Foundation reports such a number
  /// (1.5, 1e30) as "not valid JSON" at the top level; the state file has no fractional fields,
  /// so any such number is what the decoder refused.
  private static func firstNonInteger(_ value: JSONValue, path: [String]) -> (path: [String], number: Double)? {
    switch value {
    case .number(let number):
      return (path, number)
    case .array(let items):
      for (index, item) in items.enumerated() {
        if let found = firstNonInteger(item, path: path + ["[\(index)]"]) { return found }
      }
      return nil
    case .object(let members):
      for key in members.keys.sorted() {
        if let member = members[key], let found = firstNonInteger(member, path: path + [".\(key)"]) { return found }
      }
      return nil
    case .null, .bool, .integer, .string:
      return nil
    }
  }
}

/// A versioned file's header and its whole contents, decoded from one JSON value in one pass
/// (parsing is most of a decode's cost): `header` is `nil` when it does not decode, and the
/// decode throws when `Body` does not. A reader that refuses the file decodes it again from the
/// top level for its message, since `JSONDecoder` words an error well only there.
public struct HeaderAndBody<Header: Decodable, Body: Decodable>: Decodable {
  /// The header (format, version), when it decodes.
  public var header: Header?
  /// The whole file as `Body`.
  public var body: Body

  /// Both, as read some other way (`JSONReader`).
  public init(header: Header?, body: Body) {
    self.header = header
    self.body = body
  }

  /// Decodes both from the same value.
  public init(from decoder: any Decoder) throws {
    header = try? Header(from: decoder)
    body = try Body(from: decoder)
  }
}
