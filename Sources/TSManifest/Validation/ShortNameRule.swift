import Foundation
import TSModel

/// `short_name`: the index letter the watch sorts and searches contacts by.
///
/// The SDK promises a short name generated from the name (e.g. "Z" for 张三) but has no code that
/// generates one, so tsapply derives it (the rule is described in docs/manifest.md, "Contacts"):
/// the first letter of the name, as the ASCII capital that people who read that letter file it
/// under — ICU's `Any-Latin; Latin-ASCII` transliteration, then the first ASCII letter of the
/// result, upper-cased. Ł → "L", Ø → "O", Æ → "A", Đ → "D", ß → "S", Þ → "T", Жанна → "Z",
/// Ωμέγα → "O", 김민 → "G", 李明 → "L"; "#" when the name has no letter or its first letter has no
/// ASCII letter in its transliteration (😀, "123", Ɔ).
///
/// ICU is used only for letters of other scripts than Latin: creating ICU's transliterator costs
/// milliseconds of start-up (tens of milliseconds for Han), which a manifest of Latin names must
/// not pay. Latin letters get the same answer from their canonical decomposition (É → E + ◌́) or,
/// for the letters that have none (Ł, Ø, Æ, …), from `undecomposedLatin`; the tests compare both
/// paths with ICU for every letter of Latin-1 and Latin Extended-A. An explicit `short_name` must
/// not be empty.
enum ShortNameRule {
  /// The short name for a contact called `name`: "Łukasz" → "L", 李明 → "L", "123" → "#".
  static func derive(from name: String) -> String {
    if let capital = leadingASCIICapital(name) { return String(capital) }
    guard let letter = name.first(where: \.isLetter) else { return "#" }
    if let capital = latinCapital(letter) { return String(capital) }
    return transliteratedCapital(letter).map(String.init) ?? "#"
  }

  /// The common case read from the bytes: the first letter is an ASCII letter that no combining
  /// mark follows ("  alex" → A). `nil` when a non-ASCII byte comes first or follows the letter.
  private static func leadingASCIICapital(_ name: String) -> Character? {
    var name = name
    return name.withUTF8 { bytes in
      for index in bytes.indices {
        guard bytes[index] < 0x80 else { return nil }
        guard let capital = asciiCapital(Unicode.Scalar(bytes[index])) else { continue }
        return index + 1 == bytes.count || bytes[index + 1] < 0x80 ? capital : nil
      }
      return nil
    }
  }

  /// The ASCII capital of a Latin letter, found without ICU: an ASCII letter upper-cased, a letter
  /// without a canonical decomposition from `undecomposedLatin`, a letter with diacritics by the
  /// first scalar of its decomposition (Å → A; ǅ has none). `nil` for any other letter, which then
  /// goes through ICU (`transliteratedCapital`).
  static func latinCapital(_ letter: Character) -> Character? {
    guard let first = letter.unicodeScalars.first else { return nil }
    if first.isASCII { return asciiCapital(first) }
    if let capital = undecomposedLatin[first] { return capital }
    // A decomposition never moves the base letter: the first scalar's decomposition is enough.
    return asciiCapital(String(first).decomposedStringWithCanonicalMapping.unicodeScalars.first)
  }

  /// The ASCII capital of the first ASCII letter of `letter` transliterated by ICU's
  /// `Any-Latin; Latin-ASCII` (李 → "li" → L, Φ → "PH" → P), or `nil` when it has none.
  /// Each letter's answer is kept for the life of the process (`TransliterationCache`): ICU builds
  /// the transliterator again on every call, parsing its rules (about a fifth of the fuzz
  /// target's time went there), and a contact list repeats first letters (李, 王, 张 …).
  static func transliteratedCapital(_ letter: Character) -> Character? {
    TransliterationCache.shared.capital(of: letter) { letter in
      let latin = String(letter).applyingTransform(StringTransform(rawValue: "Any-Latin; Latin-ASCII"), reverse: false)
      return latin?.unicodeScalars.lazy.compactMap { asciiCapital($0) }.first
    }
  }

  /// The Latin letters of Latin-1 and Latin Extended-A that have no canonical decomposition,
  /// with the capital ICU's Latin-ASCII folds them to (Æ → "AE" → A, Þ → "TH" → T, ĸ → "q" → Q).
  static let undecomposedLatin: [Unicode.Scalar: Character] = [
    "Æ": "A", "æ": "A", "Ð": "D", "ð": "D", "Ø": "O", "ø": "O", "Þ": "T", "þ": "T", "ß": "S",
    "Đ": "D", "đ": "D", "Ħ": "H", "ħ": "H", "ı": "I", "Ĳ": "I", "ĳ": "I", "ĸ": "Q", "Ŀ": "L",
    "ŀ": "L", "Ł": "L", "ł": "L", "ŉ": "N", "Ŋ": "N", "ŋ": "N", "Œ": "O", "œ": "O", "Ŧ": "T",
    "ŧ": "T", "ſ": "S",
  ]

  /// `scalar` upper-cased when it is an ASCII letter.
  private static func asciiCapital(_ scalar: Unicode.Scalar?) -> Character? {
    guard let scalar, scalar.isASCII else { return nil }
    let capital = UInt8(scalar.value) & ~0x20  // a–z → A–Z; A–Z stay
    guard (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(capital) else { return nil }
    return Character(Unicode.Scalar(capital))
  }

  /// An explicit short name, or an error when it is empty, blank or holds a control character.
  static func check(_ shortName: Located<String>, field: @autoclosure () -> String, into diagnostics: inout [Diagnostic]) -> String? {
    guard !shortName.value.isEmpty else {
      diagnostics.append(.error(at: shortName.position, field: field(),
        "must not be empty; leave short_name out to derive it from the name"))
      return nil
    }
    return DisplayTextRule.check(shortName, field: field(), isName: true, into: &diagnostics)?.value
  }
}

/// The capitals ICU gave for letters, by letter; thread-safe, at most `limit` letters (then it
/// starts again, so a hostile manifest of distinct letters cannot grow it without bound).
final class TransliterationCache: @unchecked Sendable {
  static let shared = TransliterationCache()
  static let limit = 4096
  private let lock = NSLock()
  private var capitals: [Character: Character?] = [:]

  /// The capital of `letter`, from the cache or else from `compute` (run outside the lock).
  func capital(of letter: Character, _ compute: (Character) -> Character?) -> Character? {
    if let known = lock.withLock({ capitals[letter] }) { return known }
    let capital = compute(letter)
    lock.withLock {
      if capitals.count >= Self.limit { capitals.removeAll(keepingCapacity: true) }
      capitals[letter] = .some(capital)
    }
    return capital
  }
}
