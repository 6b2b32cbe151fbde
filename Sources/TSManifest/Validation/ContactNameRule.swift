import TSModel

/// A contact's name is non-empty; a name over 32 bytes of UTF-8 is stored cut, with a warning
/// that shows the exact stored value.
///
/// Source: docs/platforms.md "Contacts" (the contact factory refuses an empty name and cuts a longer one to
/// 32 bytes) and docs/platforms.md "Contacts" (the SDK's cut works on UTF-16 units and can split a letter from its
/// accent, a flag or a ZWJ emoji). tsapply is stricter: it cuts at a grapheme-cluster boundary,
/// so the stored name is always whole characters with no space left at its end, and reports
/// the result.
enum ContactNameRule {
  /// Most bytes of UTF-8 the watch stores for a contact name.
  static let maxBytes = 32

  /// The name as the watch will store it, or an error when it is empty, blank or holds a control
  /// character (`DisplayTextRule`).
  static func check(_ name: Located<String>, field: @autoclosure () -> String, into diagnostics: inout [Diagnostic]) -> Located<String>? {
    guard !name.value.isEmpty else {
      diagnostics.append(.error(at: name.position, field: field(), "must not be empty"))
      return nil
    }
    guard let name = DisplayTextRule.check(name, field: field(), isName: true, into: &diagnostics) else { return nil }
    let bytes = name.value.utf8.count
    guard bytes > maxBytes else { return name }
    let stored = TextTruncation.cutName(name.value, maxBytes: maxBytes)
    guard !stored.isEmpty else {
      diagnostics.append(.error(at: name.position, field: field(),
        "is \(bytes) bytes and its first character alone is longer than \(maxBytes) bytes; the watch could store nothing of it"))
      return nil
    }
    diagnostics.append(.warning(at: name.position, field: field(),
      "is \(bytes) bytes; the watch stores at most \(maxBytes), so it will be stored as \"\(stored)\" (\(stored.utf8.count) bytes)"))
    return Located(stored, at: name.position)
  }
}
