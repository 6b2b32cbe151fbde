import TSModel

/// Text in a manifest's source that may hold a phone number, so that `--redact` can mask those
/// digits wherever they are printed (a message, an echoed source line), whatever separates them.
///
/// A phone can be written with any separator (`+49/176/…`, `555:0100`, a no-break space), in any
/// field (a mistyped `phone_numer:` key), or in a file YAML cannot read (`phone: +1: 555: 0100`),
/// so the candidates are generous:
/// - every scalar of the document (key or value, any field) that holds five or more digits, and
/// - on every source line whose key names a phone (`phone`, `tel`, `mobile`, `cell`, `fax`, or
///   a key containing one of them, such as `phone_number` or `telephone`), the rest of the line
///   after that key's colon, read or not.
/// Digits in other text are masked by `PhoneRedaction`'s phone-like rule instead.
public enum PhoneCandidates {
  /// Fewer digits than this are not a phone number worth masking (times have four).
  public static let minimumDigits = 5

  /// Words that make a key a phone's key, matched inside the key in any case.
  static let phoneKeyWords = ["phone", "tel", "mobile", "cell", "fax"]

  /// The candidates in `source` (UTF-8, as read): scalars and phone-key line rests with at
  /// least `minimumDigits` digits.
  public static func find(in source: [UInt8]) -> Set<String> {
    var found = Set<String>()
    if let root = YAMLReader.read(bytes: source, file: "").root {
      var stack = [root]
      while let node = stack.popLast() {
        switch node.content {
        case .scalar(let scalar): if holdsEnoughDigits(scalar.value) { found.insert(scalar.value) }
        case .mapping(let entries): stack += entries.flatMap { [$0.key, $0.value] }
        case .sequence(let items): stack += items
        }
      }
    }
    // ASCII text breaks lines at the ASCII line breaks, found by byte; other text also at
    // U+0085, U+2028 and U+2029 (`Character.isNewline`).
    let lines = source.allSatisfy { $0 < 0x80 }
      ? source.split(whereSeparator: { (0x0A...0x0D).contains($0) }).map { Substring(String(decoding: $0, as: UTF8.self)) }
      : String(decoding: source, as: UTF8.self).split(omittingEmptySubsequences: true, whereSeparator: \.isNewline)
    for line in lines {
      if let rest = restAfterPhoneKey(line), holdsEnoughDigits(rest) { found.insert(String(rest)) }
    }
    return found
  }

  /// The text after the colon of the first phone key on `line` (`phone: …`, `"tel": …`). A
  /// colon's key is the text back to the nearest separator (`keySeparators`, or a quote that
  /// does not stand right before the colon; a colon is not one, so in `a:phone:` the second key
  /// is `a:phone`). One pass over the line: the key only grows from colon to colon until a
  /// separator starts a new one, so whether it holds a phone word is followed as it grows (a
  /// line of colons and no spaces is not read once per colon).
  private static func restAfterPhoneKey(_ line: Substring) -> Substring? {
    var key: [UInt8] = []  // the current key, lowercased, as far as read (UTF-8)
    var checked = 0  // bytes of `key` already searched for a phone word
    var quoteClosed = false  // a quote ended the key: it stands for a colon right after it
    var index = line.startIndex
    while index < line.endIndex {
      let character = line[index]
      if quoteClosed && character != ":" {
        key.removeAll(keepingCapacity: true)
        checked = 0
      }
      quoteClosed = false
      if character == "\"" || character == "'" {
        quoteClosed = true
      } else if character == ":" {
        // A word could end in what was added since the last search: search from there back
        // by the longest word's length.
        let from = max(0, checked - longestPhoneKeyWord)
        if phoneKeyWords.contains(where: { key.dropFirst(from).elementsEqualAnywhere($0.utf8) }) {
          return line[line.index(after: index)...]
        }
        checked = key.count
        key.append(UInt8(ascii: ":"))
      } else if keySeparators.contains(character) {
        key.removeAll(keepingCapacity: true)
        checked = 0
      } else if let ascii = character.asciiValue {
        key.append(ascii >= UInt8(ascii: "A") && ascii <= UInt8(ascii: "Z") ? ascii + 32 : ascii)
      } else {
        key.append(contentsOf: character.lowercased().utf8)
      }
      index = line.index(after: index)
    }
    return nil
  }

  /// What ends a key when read back from its colon: white space, flow punctuation, a list
  /// dash and a complex-key mark (quotes are handled apart: they end a quoted key).
  private static let keySeparators: Set<Character> = [" ", "\t", "{", ",", "[", "-", "?"]
  private static let longestPhoneKeyWord = phoneKeyWords.map(\.utf8.count).max() ?? 0

  private static func holdsEnoughDigits(_ text: some StringProtocol) -> Bool {
    var count = 0
    for character in text where character.isNumber && character.unicodeScalars.count == 1 {
      count += 1
      if count >= minimumDigits { return true }
    }
    return false
  }
}

extension Collection where Element: Equatable {
  /// Whether `other` occurs in this collection as a contiguous run.
  fileprivate func elementsEqualAnywhere<Other: Collection>(_ other: Other) -> Bool where Other.Element == Element {
    guard !other.isEmpty else { return true }
    var start = startIndex
    while start != endIndex {
      if self[start...].starts(with: other) { return true }
      start = index(after: start)
    }
    return false
  }
}
