import TSModel

/// A JSON Schema (draft 2020-12) as a Swift value: the keywords `ManifestSchema` uses, encoded
/// with `JSONEncoder` under their JSON names (`$ref`, `$defs`, `enum`, …).
///
/// Only the keywords tsapply's manifest schema needs are modelled; a keyword left `nil` is not
/// written. Nested schemas (`items`, `not`, `if`, `then`) are held in one-element arrays so
/// the type can be a value type.
public struct JSONSchema: Hashable, Sendable, Encodable {
  /// JSON Schema's primitive types.
  public enum InstanceType: String, Hashable, Sendable, Encodable {
    case null, boolean, integer, number, string, array, object
  }

  /// `$schema`: the dialect URI (root only).
  public var schemaDialect: String?
  /// `title`: a short name shown by editors.
  public var title: String?
  /// Hover help in editors; every property of the manifest schema has one.
  public var description: String?
  /// A reference to a definition, e.g. `#/$defs/time`.
  public var ref: String?
  /// `$defs`: named definitions, referenced as `#/$defs/NAME` (root only).
  public var defs: [String: JSONSchema]?
  /// One type, or several (any of them).
  public var type: [InstanceType]?
  /// `enum`: the instance equals one of these.
  public var enumValues: [JSONValue]?
  /// `const`: the instance equals this value.
  public var const: JSONValue?
  /// An ECMA-262 regular expression (no inline flags: case-insensitivity is spelled `[aA]`).
  public var pattern: String?
  /// Counted in Unicode code points, not bytes (JSON Schema §6.3.1).
  public var minLength: Int?
  /// Counted in Unicode code points, not bytes (JSON Schema §6.3.1).
  public var maxLength: Int?
  /// `minimum`: numbers at least this.
  public var minimum: Int?
  /// `maximum`: numbers at most this.
  public var maximum: Int?
  /// `exclusiveMinimum`: numbers greater than this.
  public var exclusiveMinimum: Double?
  /// `exclusiveMaximum`: numbers less than this.
  public var exclusiveMaximum: Double?
  /// `minItems`: arrays have at least this many items.
  public var minItems: Int?
  /// `maxItems`: arrays have at most this many items.
  public var maxItems: Int?
  /// `uniqueItems`: no two items of an array are equal (whole values, not a field of them).
  public var uniqueItems: Bool?
  /// `properties`: the schema of each known key of an object.
  public var properties: [String: JSONSchema]?
  /// `required`: keys an object must have.
  public var required: [String]?
  /// `additionalProperties: false` refuses keys not in `properties`.
  public var additionalProperties: Bool?
  /// `anyOf`: the instance matches at least one of these.
  public var anyOf: [JSONSchema]?
  /// `examples`: sample values (editors may offer them as completions).
  public var examples: [JSONValue]?
  private var nested: [Nested: JSONSchema] = [:]

  private enum Nested: Hashable, Sendable { case items, not, `if`, then }

  /// A schema with only `type` and `description` set (both optional).
  public init(type: [InstanceType]? = nil, description: String? = nil) {
    self.type = type
    self.description = description
  }

  /// The schema of every item of an array.
  public var items: JSONSchema? {
    get { nested[.items] }
    set { nested[.items] = newValue }
  }
  /// A schema the instance must not match.
  public var not: JSONSchema? {
    get { nested[.not] }
    set { nested[.not] = newValue }
  }
  /// With `then`: when the instance matches `if`, it must match `then`.
  public var `if`: JSONSchema? {
    get { nested[.if] }
    set { nested[.if] = newValue }
  }
  /// The schema an instance matching `if` must match.
  public var then: JSONSchema? {
    get { nested[.then] }
    set { nested[.then] = newValue }
  }

  private enum CodingKeys: String, CodingKey {
    case schemaDialect = "$schema", title, description, ref = "$ref", defs = "$defs", type
    case enumValues = "enum", const, pattern, minLength, maxLength, minimum, maximum
    case exclusiveMinimum, exclusiveMaximum, minItems, maxItems, uniqueItems, properties, required
    case additionalProperties, anyOf, examples, items, not, `if`, then
  }

  /// Writes the keywords that are set, under their JSON names; one type as a string, several as an array.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encodeIfPresent(schemaDialect, forKey: .schemaDialect)
    try container.encodeIfPresent(title, forKey: .title)
    try container.encodeIfPresent(description, forKey: .description)
    try container.encodeIfPresent(ref, forKey: .ref)
    try container.encodeIfPresent(defs, forKey: .defs)
    if let type {
      if type.count == 1 { try container.encode(type[0], forKey: .type) } else { try container.encode(type, forKey: .type) }
    }
    try container.encodeIfPresent(enumValues, forKey: .enumValues)
    try container.encodeIfPresent(const, forKey: .const)
    try container.encodeIfPresent(pattern, forKey: .pattern)
    try container.encodeIfPresent(minLength, forKey: .minLength)
    try container.encodeIfPresent(maxLength, forKey: .maxLength)
    try container.encodeIfPresent(minimum, forKey: .minimum)
    try container.encodeIfPresent(maximum, forKey: .maximum)
    try container.encodeIfPresent(exclusiveMinimum, forKey: .exclusiveMinimum)
    try container.encodeIfPresent(exclusiveMaximum, forKey: .exclusiveMaximum)
    try container.encodeIfPresent(minItems, forKey: .minItems)
    try container.encodeIfPresent(maxItems, forKey: .maxItems)
    try container.encodeIfPresent(uniqueItems, forKey: .uniqueItems)
    try container.encodeIfPresent(properties, forKey: .properties)
    try container.encodeIfPresent(required, forKey: .required)
    try container.encodeIfPresent(additionalProperties, forKey: .additionalProperties)
    try container.encodeIfPresent(anyOf, forKey: .anyOf)
    try container.encodeIfPresent(examples, forKey: .examples)
    try container.encodeIfPresent(items, forKey: .items)
    try container.encodeIfPresent(not, forKey: .not)
    try container.encodeIfPresent(self.if, forKey: .if)
    try container.encodeIfPresent(then, forKey: .then)
  }

  /// `{"$ref": "#/$defs/<name>"}` with a description.
  public static func reference(_ name: String, description: String) -> JSONSchema {
    var schema = JSONSchema(description: description)
    schema.ref = "#/$defs/\(name)"
    return schema
  }
}
