import TSModel

/// State shared while decoding one manifest: the file name and every diagnostic found so far.
/// Decoding never stops at the first problem; each reader reports and returns `nil`.
///
/// Public so that other files tsapply reads by schema (a fleet's `fleet.yaml`, in TSFleet)
/// decode with the same rules: typed scalars, standard tags only, unknown keys with a
/// suggestion, a null value reported with a hint.
public struct DecodingContext: Sendable {
  /// The file as the user named it.
  public let file: String
  /// Problems found so far, unsorted.
  public var diagnostics: [Diagnostic] = []
  /// The contact list being decoded: the names as written of contacts whose names were cut,
  /// by field path (`DuplicateContactRule.cutAlike`); emptied at the end of each list.
  var cutNames: [String: String] = [:]

  /// A context for `file`, with no problems yet.
  public init(file: String) { self.file = file }

  /// Records an error at `position` about `field`.
  public mutating func error(_ position: SourcePosition, _ field: String, _ message: String) {
    diagnostics.append(.error(at: position, field: field, message))
  }

  /// Records a warning at `position` about `field`.
  public mutating func warning(_ position: SourcePosition, _ field: String, _ message: String) {
    diagnostics.append(.warning(at: position, field: field, message))
  }

  /// Reads `node` as a mapping whose keys are among `keys`.
  ///
  /// Reports a node of another type ("expected a mapping with keys …"), keys that are not
  /// scalars, and unknown keys (with a "did you mean" suggestion, or where a misplaced key
  /// belongs: `MistakeHints.misplacedTimePoints`); the known entries are kept.
  public mutating func mapping(_ node: YAMLNode, path: String, keys: [String]) -> MappingFields? {
    guard hasStandardTag(node, path: path, allowing: ["map"]) else { return nil }
    guard case .mapping(let entries) = node.content else {
      error(node.position, path, "expected a mapping with keys \(keys.joined(separator: ", ")), found \(node.kindDescription)")
      return nil
    }
    var fields = MappingFields(path: path, entries: FieldEntries(entries))
    for index in entries.indices {
      let keyNode = entries[index].key  // the key only: the value is read when its field is
      guard let key = keyNode.scalar?.value else {
        error(keyNode.position, path, "keys must be plain words, found \(keyNode.kindDescription) as a key")
        fields.entries.leaveOut(index)
        continue
      }
      guard hasStandardTag(keyNode, path: path, allowing: ["str"]) else {
        fields.entries.leaveOut(index)
        continue
      }
      guard keys.contains(key) else {
        fields.entries.leaveOut(index)
        var message = "unknown key \"\(key)\""
        if let hint = MistakeHints.misplacedTimePoints(key: key, in: path, allowed: keys) ?? MistakeHints.misplacedReminderKey(key: key, in: path)
          ?? MistakeHints.misplacedPeriodKey(key: key, in: path) {
          message += "; " + hint
        } else if let suggestion = Suggestion.closest(to: key, in: keys) {
          message += "; did you mean \"\(suggestion)\"?"
        } else {
          message += " (expected one of: \(keys.joined(separator: ", ")))"
        }
        error(keyNode.position, DecodingContext.join(path, key), message)
        continue
      }
    }
    return fields
  }

  /// Reads `node` as a list, reporting any other type.
  public mutating func sequence(_ node: YAMLNode, path: String, expected: String) -> [YAMLNode]? {
    guard hasStandardTag(node, path: path, allowing: ["seq"]) else { return nil }
    guard case .sequence(let items) = node.content else {
      error(node.position, path, "expected a list of \(expected), found \(node.kindDescription)")
      return nil
    }
    return items
  }

  /// The resolved form of YAML's standard tag `!!name` (`tag:yaml.org,2002:name`).
  static func standardTag(_ name: String) -> String { "tag:yaml.org,2002:" + name }

  /// Whether `node` is untagged or carries one of the standard tags `names` (`str`, `int`,
  /// `bool`, `map`, `seq`). Any other tag (`!foo`, `!!binary`, `!`) is reported naming it: the
  /// field decides a value's type, so a tag that asks for another type is never ignored.
  public mutating func hasStandardTag(_ node: YAMLNode, path: String, allowing names: [String]) -> Bool {
    guard let tag = node.tag else { return true }
    if names.contains(where: { Self.standardTag($0) == tag }) { return true }
    let prefix = Self.standardTag("")
    let written = tag.hasPrefix(prefix) ? "!!" + tag.dropFirst(prefix.count) : tag
    let allowed = names.map { "!!" + $0 }.joined(separator: " or ")
    error(node.position, path, "unsupported tag \(written); tsapply types values by their field, so only \(allowed) may be written here (remove the tag)")
    return false
  }

  /// `node` unless it is null; a null section is reported with `hint`, which says what to write
  /// instead (remove the key to leave it unmanaged, or write an empty list).
  public mutating func present(_ node: YAMLNode, path: String, hint: String) -> YAMLNode? {
    guard node.isNull else { return node }
    error(node.position, path, "has no value; \(hint)")
    return nil
  }

  /// `parent.key`, or `key` at the top level. Built by copying bytes into one allocation:
  /// every field read makes a path, whether or not a diagnostic uses it.
  public static func join(_ parent: String, _ key: String) -> String {
    parent.isEmpty ? key : concatenated(parent, ".", key, "")
  }

  /// `parent[index]`, the field path of a list item, built as `join` is.
  static func item(_ parent: String, _ index: Int) -> String {
    concatenated(parent, "[", String(index), "]")
  }

  /// The four texts one after the other.
  private static func concatenated(_ a: String, _ b: String, _ c: String, _ d: String) -> String {
    var (a, b, c, d) = (a, b, c, d)
    return a.withUTF8 { a in b.withUTF8 { b in c.withUTF8 { c in d.withUTF8 { d in
      String(unsafeUninitializedCapacity: a.count + b.count + c.count + d.count) { buffer in
        var end = 0
        func append(_ part: UnsafeBufferPointer<UInt8>) {
          _ = UnsafeMutableBufferPointer(rebasing: buffer[end..<(end + part.count)]).initialize(from: part)
          end += part.count
        }
        append(a)
        append(b)
        append(c)
        append(d)
        return end
      }
    } } } }
  }
}

/// The known entries of a mapping, by key, with the mapping's field path.
public struct MappingFields: Sendable {
  /// Field path of the mapping, e.g. `reminders.sedentary`.
  public let path: String
  /// Entries by key (unknown keys already reported and left out).
  public var entries: FieldEntries

  /// The value node for `key`, if written.
  public subscript(key: String) -> YAMLNode? { entries.value(forKey: key) }

  /// The field path of `key` inside this mapping.
  public func path(_ key: String) -> String { DecodingContext.join(path, key) }
}

/// A mapping's entries by key, read from the mapping's own entry list (shared with the tree, not
/// copied into a table per mapping): a schema mapping has a handful of keys, and a scan of them
/// costs less than hashing. Entries that are not fields (reported keys) are left out.
public struct FieldEntries: Sendable {
  private let written: [YAMLMappingEntry]
  /// Indices in `written` of the entries left out; almost always empty.
  private var leftOut: [Int] = []

  /// The entries of a mapping, as written (keys are unique: the YAML layer drops duplicates).
  init(_ written: [YAMLMappingEntry]) { self.written = written }

  /// Leaves the entry at `index` of the written entries out.
  mutating func leaveOut(_ index: Int) { leftOut.append(index) }

  /// The entry written under `key`, unless it is left out.
  public subscript(key: String) -> YAMLMappingEntry? { index(of: key).map { written[$0] } }

  /// The value written under `key`, unless it is left out (without copying the key node).
  public func value(forKey key: String) -> YAMLNode? { index(of: key).map { written[$0].value } }

  private func index(of key: String) -> Int? {
    written.indices.first { written[$0].keyText == key && !leftOut.contains($0) }
  }
}
