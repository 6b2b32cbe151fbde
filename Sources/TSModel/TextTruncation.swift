/// The SDK's byte truncation, `-[NSString(Tool) truncateToMaxBytes:]` (docs/platforms.md "Contacts").
///
/// The SDK keeps the longest prefix of UTF-16 code units whose UTF-8 form fits in `maxBytes`.
/// Swift strings cannot hold a lone surrogate, so this cuts at Unicode scalar (code point)
/// boundaries, which is the same for every text in the Basic Multilingual Plane and keeps a
/// whole non-BMP scalar out rather than leaving half of it. It is not grapheme-aware, exactly
/// like the SDK: a combining accent or a ZWJ emoji sequence may be split.
public enum TextTruncation {
  /// `text` cut to at most `maxBytes` bytes of UTF-8 at a code-point boundary; `text` itself
  /// when it already fits. `maxBytes` ≤ 0 gives "".
  public static func truncate(_ text: String, maxBytes: Int) -> String {
    guard text.utf8.count > maxBytes else { return text }
    var used = 0
    var scalars = String.UnicodeScalarView()
    for scalar in text.unicodeScalars {
      let size = String(scalar).utf8.count
      if used + size > maxBytes { break }
      used += size
      scalars.append(scalar)
    }
    return String(scalars)
  }

  /// `text` cut to at most `maxBytes` bytes of UTF-8 at a grapheme-cluster boundary: whole
  /// characters only, so a letter never loses its accent and a flag or ZWJ emoji is never split.
  /// Stricter than the SDK's cut (`truncate`); tsapply uses it for what it writes, and the watch
  /// then has nothing left to cut.
  public static func truncateAtGraphemes(_ text: String, maxBytes: Int) -> String {
    var result = ""
    var used = 0
    for character in text {
      let size = character.utf8.count
      guard used + size <= maxBytes else { break }
      result.append(character)
      used += size
    }
    return result
  }

  /// A name cut as tsapply writes it: `truncateAtGraphemes`, then, when it was cut, without the
  /// whitespace and invisible characters the cut left at its end (`"Anna Emergency 0"` cut
  /// after "Anna Emergency " is written as `"Anna Emergency"`). A name's edges are never blank
  /// in a manifest (a trailing space is an error there: the watch keeps it, so two names would
  /// differ by an invisible character), and a cut must not make one; a name that fits is
  /// returned unchanged.
  public static func cutName(_ name: String, maxBytes: Int) -> String {
    guard name.utf8.count > maxBytes else { return name }
    return InvisibleCharacters.trimmed(truncateAtGraphemes(name, maxBytes: maxBytes))
  }
}
