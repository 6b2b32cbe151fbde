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
    let text = String(decoding: source, as: UTF8.self)
    for line in text.split(omittingEmptySubsequences: true, whereSeparator: \.isNewline) {
      if let rest = restAfterPhoneKey(line), holdsEnoughDigits(rest) { found.insert(String(rest)) }
    }
    return found
  }

  /// The text after the colon of the first phone key on `line` (`phone: …`, `"tel": …`).
  private static func restAfterPhoneKey(_ line: Substring) -> Substring? {
    var index = line.startIndex
    while let colon = line[index...].firstIndex(of: ":") {
      let key = line[..<colon].reversed().prefix { !" \t{,[-?\"'".contains($0) }.reversed()
      let lowered = String(key).lowercased()
      if phoneKeyWords.contains(where: { lowered.contains($0) }) { return line[line.index(after: colon)...] }
      index = line.index(after: colon)
    }
    return nil
  }

  private static func holdsEnoughDigits(_ text: some StringProtocol) -> Bool {
    var count = 0
    for character in text where character.isNumber && character.unicodeScalars.count == 1 {
      count += 1
      if count >= minimumDigits { return true }
    }
    return false
  }
}
