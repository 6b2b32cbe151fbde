import Foundation
import TSModel

/// `short_name`: the index letter the watch sorts and searches contacts by.
///
/// Source: sdk-facts.md §2.3 (the SDK header promises a short name generated from the name, e.g.
/// "Z" for 张三, but no generation code exists; only Fw stores it). tsapply derives it itself:
/// the first letter of the name, transliterated to Latin with ICU (Foundation's
/// `applyingTransform(.toLatin)`, then `.stripDiacritics`), upper-cased; "#" when the name has no
/// letter or the letter has no Latin form. An explicit `short_name` must not be empty.
enum ShortNameRule {
  /// The short name for a contact called `name`: 李明 → "L", "Émile" → "E", "123" → "#".
  static func derive(from name: String) -> String {
    guard let letter = name.first(where: \.isLetter) else { return "#" }
    // ASCII letters need no transliteration (and ICU's transform is the costly part).
    if letter.isASCII { return letter.uppercased() }
    let latin = String(letter).applyingTransform(.toLatin, reverse: false) ?? String(letter)
    let plain = latin.applyingTransform(.stripDiacritics, reverse: false) ?? latin
    guard let first = plain.unicodeScalars.first(where: { $0.properties.isAlphabetic }), first.isASCII else {
      return "#"
    }
    return String(first).uppercased()
  }

  /// An explicit short name, or an error when it is empty, blank or holds a control character.
  static func check(_ shortName: Located<String>, field: String, into diagnostics: inout [Diagnostic]) -> String? {
    guard !shortName.value.isEmpty else {
      diagnostics.append(.error(at: shortName.position, field: field,
        "must not be empty; leave short_name out to derive it from the name"))
      return nil
    }
    return DisplayTextRule.check(shortName, field: field, isName: true, into: &diagnostics)?.value
  }
}
