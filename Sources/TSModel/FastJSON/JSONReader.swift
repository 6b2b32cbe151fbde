import Foundation

/// A strict, allocation-light reader of the JSON tsapply writes itself (state files, records),
/// used as a fast path in front of `JSONDecoder` (docs/performance.md, "Planning a watch").
///
/// It reads only a narrow form of JSON: objects whose keys a type's `FastJSONDecodable`
/// conformance names, arrays, strings (every JSON escape, valid UTF-8 only), integers that fit
/// an `Int` (no fraction, no exponent, no leading zero), `true`, `false` and `null`, separated by
/// JSON's four whitespace bytes. Anything else, an unknown or repeated key included, is a
/// `Miss`: the caller then decodes the same bytes with `JSONDecoder`, which gives the result or
/// the error it always gave. So the fast path may give up on any input, but when it returns a
/// value that value is the one `JSONDecoder` returns (the records fuzz target checks this on
/// every input it reads: docs/fuzzing.md).
///
/// Foundation's `JSONDecoder` costs about 40 µs per KB of these files on this machine, most of
/// it in generic metadata lookups and reference counting; this reader costs about a tenth.
public struct JSONReader {
  /// The reader gave up: the input is not in the narrow form it reads (not an error of the
  /// input; `JSONDecoder` decides that).
  public struct Miss: Error {
    /// A miss (conformances in other modules throw it for a key they do not know).
    public init() {}
  }

  /// An object key: the raw bytes between its quotes (a key with an escape is a `Miss`, since no
  /// key tsapply writes has one). Matched against string literals in a `switch`.
  public struct Key {
    let bytes: UnsafeBufferPointer<UInt8>

    /// Whether the key is exactly `literal` (ASCII).
    public static func ~= (literal: StaticString, key: Key) -> Bool {
      literal.withUTF8Buffer { literal in
        literal.count == key.bytes.count && (literal.isEmpty || memcmp(literal.baseAddress!, key.bytes.baseAddress!, literal.count) == 0)
      }
    }
  }

  private let bytes: UnsafeBufferPointer<UInt8>
  private var index = 0
  /// Nesting of objects and arrays; deeper than `depthLimit` is a `Miss` (no record nests deeper).
  private var depth = 0
  private static let depthLimit = 64

  private init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

  /// `T` read from the whole of `data`, or `nil` when the fast path gives up (decode with
  /// `JSONDecoder` then).
  public static func decode<T: FastJSONDecodable>(_ type: T.Type, from data: Data) -> T? {
    data.withUnsafeBytes { raw in
      var reader = JSONReader(raw.bindMemory(to: UInt8.self))
      do throws(Miss) {
        let value = try T(json: &reader)
        reader.skipWhitespace()
        return reader.index == reader.bytes.count ? value : nil
      } catch {
        return nil
      }
    }
  }

  // MARK: Structure

  /// Reads an object, calling `field` with each key and the reader placed at its value; `field`
  /// must read the value (or throw `Miss` for a key it does not know).
  public mutating func object(_ field: (Key, inout JSONReader) throws(Miss) -> Void) throws(Miss) {
    try open(UInt8(ascii: "{"))
    defer { depth -= 1 }
    if try peek() == UInt8(ascii: "}") { index += 1; return }
    while true {
      let key = try key()
      try expect(UInt8(ascii: ":"))
      try field(key, &self)
      switch try next() {
      case UInt8(ascii: ","): continue
      case UInt8(ascii: "}"): return
      default: throw Miss()
      }
    }
  }

  /// Reads an array of `Element`.
  public mutating func array<Element: FastJSONDecodable>(of _: Element.Type = Element.self) throws(Miss) -> [Element] {
    try open(UInt8(ascii: "["))
    defer { depth -= 1 }
    var elements: [Element] = []
    if try peek() == UInt8(ascii: "]") { index += 1; return elements }
    while true {
      elements.append(try Element(json: &self))
      switch try next() {
      case UInt8(ascii: ","): continue
      case UInt8(ascii: "]"): return elements
      default: throw Miss()
      }
    }
  }

  /// Reads a value into `slot`; a second value for the same key (a repeated key, which
  /// `JSONDecoder` may resolve either way) is a `Miss`.
  public mutating func field<T: FastJSONDecodable>(_ slot: inout T?) throws(Miss) {
    guard slot == nil else { throw Miss() }
    slot = try T(json: &self)
  }

  /// Reads a value or `null` into `slot`, as `decodeIfPresent` reads an optional property
  /// (`.some(nil)` for `null`); a repeated key is a `Miss`.
  public mutating func optionalField<T: FastJSONDecodable>(_ slot: inout T??) throws(Miss) {
    guard slot == nil else { throw Miss() }
    if try peek() == UInt8(ascii: "n") {
      try literal("null")
      slot = .some(nil)
    } else {
      slot = .some(try T(json: &self))
    }
  }

  // MARK: Scalars

  /// Reads a string: every JSON escape, surrogate pairs joined; invalid UTF-8, a control byte or
  /// a lone surrogate is a `Miss`.
  public mutating func string() throws(Miss) -> String {
    try expect(UInt8(ascii: "\""))
    let start = index
    // Whether a byte above ASCII was seen: text of ASCII only is valid UTF-8 as it is, and is
    // made a string without the generic validation (about 6 % of planning a fleet went there).
    var high: UInt8 = 0
    while index < bytes.count {
      let byte = bytes[index]
      if byte == UInt8(ascii: "\"") {
        defer { index += 1 }
        if high < 0x80 { return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self) }
        return try validated(start..<index)
      }
      high |= byte
      if byte == UInt8(ascii: "\\") { return try escapedString(from: start) }
      if byte < 0x20 { throw Miss() }
      index += 1
    }
    throw Miss()
  }

  /// Reads an integer that fits an `Int`.
  public mutating func int() throws(Miss) -> Int {
    skipWhitespace()
    let negative = index < bytes.count && bytes[index] == UInt8(ascii: "-")
    if negative { index += 1 }
    let start = index
    var magnitude = 0
    while index < bytes.count, case let digit = bytes[index] &- UInt8(ascii: "0"), digit < 10 {
      // 18 digits always fit; longer numbers are left to JSONDecoder.
      guard index - start < 18 else { throw Miss() }
      magnitude = magnitude * 10 + Int(digit)
      index += 1
    }
    guard index > start, !(bytes[start] == UInt8(ascii: "0") && index - start > 1) else { throw Miss() }
    // A fraction or an exponent: JSONDecoder decides whether it is an integer.
    if index < bytes.count, [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[index]) { throw Miss() }
    return negative ? -magnitude : magnitude
  }

  /// Reads `true` or `false`.
  public mutating func bool() throws(Miss) -> Bool {
    if try peek() == UInt8(ascii: "t") {
      try literal("true")
      return true
    }
    try literal("false")
    return false
  }

  // MARK: Repeated keys

  /// A key written twice in one JSON object: `path` is the object's place (`state.contacts[2]`,
  /// `""` at the top level), lines are 1-based.
  public struct RepeatedKey: Hashable, Sendable, CustomStringConvertible {
    /// Where the object stands, as a field path (`state.contacts[2]`); `""` for the top level.
    public var path: String
    /// The key, unescaped.
    public var key: String
    /// Line of the key's first copy.
    public var firstLine: Int
    /// Line of its second copy.
    public var secondLine: Int

    /// `state.contacts[2]: the key "name" is written twice (lines 14 and 15) …`.
    public var description: String {
      (path.isEmpty ? "" : path + ": ")
        + "the key \"\(key)\" is written twice (lines \(firstLine) and \(secondLine)); JSON readers keep one or the other, so which one holds is not clear"
    }
  }

  /// The first key written twice in one object of `data` (found as its second copy is read), or
  /// `nil` when there is none before the end or before text this reader cannot follow (not
  /// JSON, nested deeper than 64; `JSONDecoder` then says what is wrong with it).
  /// `JSONDecoder` keeps one of the two values without a word, so the readers of state files,
  /// records and saved plans refuse such a file instead (a hand edit gone wrong).
  public static func firstRepeatedKey(in data: Data) -> RepeatedKey? {
    data.withUnsafeBytes { raw in
      var reader = JSONReader(raw.bindMemory(to: UInt8.self))
      var path: [PathComponent] = []
      do throws(Miss) {
        return try reader.repeatedKey(path: &path)
      } catch {
        return nil
      }
    }
  }

  private enum PathComponent {
    case key(String)
    case index(Int)
  }

  /// Reads one value, returning the first repeated key inside it.
  private mutating func repeatedKey(path: inout [PathComponent]) throws(Miss) -> RepeatedKey? {
    switch try peek() {
    case UInt8(ascii: "{"):
      try open(UInt8(ascii: "{"))
      defer { depth -= 1 }
      if try peek() == UInt8(ascii: "}") { index += 1; return nil }
      var seen: [String: Int] = [:]
      while true {
        skipWhitespace()
        let offset = index
        let key = try string()
        try expect(UInt8(ascii: ":"))
        if let first = seen[key] {
          return RepeatedKey(path: Self.text(of: path), key: key, firstLine: line(at: first), secondLine: line(at: offset))
        }
        seen[key] = offset
        path.append(.key(key))
        if let found = try repeatedKey(path: &path) { return found }
        path.removeLast()
        switch try next() {
        case UInt8(ascii: ","): continue
        case UInt8(ascii: "}"): return nil
        default: throw Miss()
        }
      }
    case UInt8(ascii: "["):
      try open(UInt8(ascii: "["))
      defer { depth -= 1 }
      if try peek() == UInt8(ascii: "]") { index += 1; return nil }
      var position = 0
      while true {
        path.append(.index(position))
        if let found = try repeatedKey(path: &path) { return found }
        path.removeLast()
        position += 1
        switch try next() {
        case UInt8(ascii: ","): continue
        case UInt8(ascii: "]"): return nil
        default: throw Miss()
        }
      }
    case UInt8(ascii: "\""):
      try skipString()
    case UInt8(ascii: "t"):
      try literal("true")
    case UInt8(ascii: "f"):
      try literal("false")
    case UInt8(ascii: "n"):
      try literal("null")
    default:
      try skipNumber()
    }
    return nil
  }

  /// A string value passed over, escapes and all, without decoding it.
  private mutating func skipString() throws(Miss) {
    try expect(UInt8(ascii: "\""))
    while index < bytes.count {
      switch bytes[index] {
      case UInt8(ascii: "\""): index += 1; return
      case UInt8(ascii: "\\"): index += 2
      default: index += 1
      }
    }
    throw Miss()
  }

  /// A number of any JSON form passed over.
  private mutating func skipNumber() throws(Miss) {
    let start = index
    while index < bytes.count, case let byte = bytes[index],
          (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || [UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."),
                                                                    UInt8(ascii: "e"), UInt8(ascii: "E")].contains(byte) {
      index += 1
    }
    guard index > start else { throw Miss() }
  }

  /// The 1-based line of byte `offset`.
  private func line(at offset: Int) -> Int {
    1 + bytes[..<min(offset, bytes.count)].reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
  }

  private static func text(of path: [PathComponent]) -> String {
    path.reduce(into: "") { text, component in
      switch component {
      case .key(let key): text += text.isEmpty ? key : "." + key
      case .index(let index): text += "[\(index)]"
      }
    }
  }

  // MARK: Bytes

  private mutating func skipWhitespace() {
    while index < bytes.count {
      switch bytes[index] {
      case 0x20, 0x0A, 0x0D, 0x09: index += 1
      default: return
      }
    }
  }

  /// The next byte after whitespace, not consumed.
  private mutating func peek() throws(Miss) -> UInt8 {
    skipWhitespace()
    guard index < bytes.count else { throw Miss() }
    return bytes[index]
  }

  /// The next byte after whitespace, consumed.
  private mutating func next() throws(Miss) -> UInt8 {
    let byte = try peek()
    index += 1
    return byte
  }

  private mutating func expect(_ byte: UInt8) throws(Miss) {
    guard try next() == byte else { throw Miss() }
  }

  private mutating func open(_ byte: UInt8) throws(Miss) {
    try expect(byte)
    depth += 1
    guard depth <= Self.depthLimit else { throw Miss() }
  }

  /// `word` (`true`, `false`, `null`), which must not run on into a letter or digit.
  private mutating func literal(_ word: StaticString) throws(Miss) {
    skipWhitespace()
    let matches = word.withUTF8Buffer { word in
      bytes.count - index >= word.count && word.elementsEqual(bytes[index..<index + word.count])
    }
    guard matches else { throw Miss() }
    index += word.utf8CodeUnitCount
    if index < bytes.count, case let byte = bytes[index], byte.isASCIIAlphanumeric { throw Miss() }
  }

  private mutating func key() throws(Miss) -> Key {
    try expect(UInt8(ascii: "\""))
    let start = index
    while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
      if bytes[index] == UInt8(ascii: "\\") || bytes[index] < 0x20 { throw Miss() }
      index += 1
    }
    guard index < bytes.count else { throw Miss() }
    defer { index += 1 }
    return Key(bytes: UnsafeBufferPointer(rebasing: bytes[start..<index]))
  }

  private func validated(_ range: Range<Int>) throws(Miss) -> String {
    guard let string = Self.string(validatingUTF8: UnsafeBufferPointer(rebasing: bytes[range])) else { throw Miss() }
    return string
  }

  /// `bytes` as a string, or `nil` when they are not valid UTF-8 (`JSONDecoder` refuses those).
  private static func string(validatingUTF8 bytes: UnsafeBufferPointer<UInt8>) -> String? {
    if #available(macOS 15, *) { return String(validating: bytes, as: UTF8.self) }
    return String(bytes: bytes, encoding: .utf8)
  }

  /// The rest of a string whose first escape is at `index` (its text began at `start`).
  private mutating func escapedString(from start: Int) throws(Miss) -> String {
    var utf8 = Array(bytes[start..<index])
    while index < bytes.count {
      let byte = bytes[index]
      index += 1
      switch byte {
      case UInt8(ascii: "\""):
        guard let string = utf8.withUnsafeBufferPointer(Self.string(validatingUTF8:)) else { throw Miss() }
        return string
      case UInt8(ascii: "\\"):
        guard index < bytes.count else { throw Miss() }
        let escape = bytes[index]
        index += 1
        switch escape {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escape)
        case UInt8(ascii: "b"): utf8.append(0x08)
        case UInt8(ascii: "f"): utf8.append(0x0C)
        case UInt8(ascii: "n"): utf8.append(0x0A)
        case UInt8(ascii: "r"): utf8.append(0x0D)
        case UInt8(ascii: "t"): utf8.append(0x09)
        case UInt8(ascii: "u"): utf8.append(contentsOf: try escapedScalar())
        default: throw Miss()
        }
      case 0..<0x20:
        throw Miss()
      default:
        utf8.append(byte)
      }
    }
    throw Miss()
  }

  /// The UTF-8 of a `\uXXXX` escape (its `u` read), with the low half of a surrogate pair.
  private mutating func escapedScalar() throws(Miss) -> [UInt8] {
    var value = try hexQuad()
    if (0xD800..<0xDC00).contains(value) {
      guard bytes.count - index >= 2, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else { throw Miss() }
      index += 2
      let low = try hexQuad()
      guard (0xDC00..<0xE000).contains(low) else { throw Miss() }
      value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
    }
    guard let scalar = Unicode.Scalar(value) else { throw Miss() }
    return Array(String(Character(scalar)).utf8)
  }

  private mutating func hexQuad() throws(Miss) -> UInt32 {
    guard bytes.count - index >= 4 else { throw Miss() }
    var value: UInt32 = 0
    for _ in 0..<4 {
      let byte = bytes[index]
      let digit: UInt8
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
      case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
      case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
      default: throw Miss()
      }
      value = value << 4 | UInt32(digit)
      index += 1
    }
    return value
  }
}

private extension UInt8 {
  var isASCIIAlphanumeric: Bool {
    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(self)
      || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(self)
  }
}

/// A type `JSONReader` can read without `JSONDecoder`, exactly as its `Decodable` conformance
/// reads the same JSON (see `JSONReader` for the narrow form it accepts).
public protocol FastJSONDecodable: Decodable {
  /// Reads one value at the reader's position; throws `Miss` for anything it would not read
  /// exactly as `init(from:)` does.
  init(json reader: inout JSONReader) throws(JSONReader.Miss)
}

extension String: FastJSONDecodable {
  public init(json reader: inout JSONReader) throws(JSONReader.Miss) { self = try reader.string() }
}

extension Int: FastJSONDecodable {
  public init(json reader: inout JSONReader) throws(JSONReader.Miss) { self = try reader.int() }
}

extension Bool: FastJSONDecodable {
  public init(json reader: inout JSONReader) throws(JSONReader.Miss) { self = try reader.bool() }
}

extension Array: FastJSONDecodable where Element: FastJSONDecodable {
  public init(json reader: inout JSONReader) throws(JSONReader.Miss) { self = try reader.array(of: Element.self) }
}

extension FastJSONDecodable where Self: RawRepresentable, RawValue == Int {
  /// A raw value that names no case is a `Miss` (`JSONDecoder` refuses it).
  public static func read(rawValue reader: inout JSONReader) throws(JSONReader.Miss) -> Self {
    guard let value = Self(rawValue: try reader.int()) else { throw JSONReader.Miss() }
    return value
  }
}
