import TSModel

/// A phone number is ASCII digits with at most one leading '+', 1–20 bytes, after removing
/// formatting (spaces, dashes, dots, parentheses). Anything else is refused, never repaired.
///
/// Source: docs/platforms.md "Contacts" (the SDK keeps only `0123456789+`, deleting every other
/// character, and then cuts to 20 bytes; FitCloud drops a phone over 20 bytes, docs/platforms.md "Contacts"). Deleting
/// letters or cutting digits turns a number into a different number, and a wrong emergency
/// number is worse than none, so tsapply refuses instead.
enum PhoneNumberRule {
  /// Most bytes the watch stores for a phone number.
  static let maxBytes = 20
  /// Characters that are formatting and removed before checking.
  static let formatting: Set<Character> = [" ", "-", ".", "(", ")"]

  /// The number without formatting, or an error naming the first problem. `isPlain`: the
  /// value was written unquoted, so a YAML number such as `-5` or `1.5` is refused rather than
  /// read as the digits it happens to contain.
  static func check(_ phone: Located<String>, isPlain: Bool, field: @autoclosure () -> String,
                    into diagnostics: inout [Diagnostic]) -> Located<String>? {
    // Most phones are stored as written: digits and an optional leading '+', which no check below
    // refuses (a plain `+15550100` or `0123` is not a YAML number other than a non-negative
    // integer) and from which there is no formatting to remove.
    if isStorable(phone.value) { return phone }
    return checkFormatted(phone, isPlain: isPlain, field: field(), into: &diagnostics)
  }

  /// `check` without the shortcut for a phone stored as written: formatting removed, then each
  /// problem looked for. The tests compare the two.
  static func checkFormatted(_ phone: Located<String>, isPlain: Bool, field: @autoclosure () -> String,
                             into diagnostics: inout [Diagnostic]) -> Located<String>? {
    if let inner = MistakeHints.curlyQuoted(phone.value) {
      diagnostics.append(.error(at: phone.position, field: field(), MistakeHints.curlyQuoteMessage(phone.value, inner: inner)))
      return nil
    }
    let yamlProblem = (isPlain ? numberProblem(phone.value) : nil) ?? signProblem(phone.value)
    // A letter O (or l, I) where a digit belongs is shown at the letter, with the number meant.
    // Only a number with an ASCII letter is looked at (most phones reach here for their formatting).
    if yamlProblem == nil, phone.value.utf8.contains(where: { ($0 | 0x20) >= UInt8(ascii: "a") && ($0 | 0x20) <= UInt8(ascii: "z") }),
       let lookalike = MistakeHints.digitLookalikes(phone.value) {
      var at = phone.position
      at.column += (isPlain ? 0 : 1) + lookalike.offset
      diagnostics.append(.error(at: at, field: field(),
        "\"\(phone.value)\" has the letter \(lookalike.letter) where a digit belongs; write \"\(lookalike.meant)\" if you meant \(lookalike.letter == "O" || lookalike.letter == "o" ? "zero" : "one") (tsapply never changes a number itself)"))
      return nil
    }
    let cleaned = removingFormatting(phone.value)
    if let problem = yamlProblem ?? problem(in: cleaned, original: phone.value) ?? separatorProblem(phone.value)
      ?? trunkPrefixProblem(phone.value) {
      diagnostics.append(.error(at: phone.position, field: field(), problem))
      return nil
    }
    return Located(cleaned, at: phone.position)
  }

  /// An international number with a `(0)` after its country code (`+44 (0)7700 900456`): the 0
  /// is the trunk prefix dialled only inside the country, so removing the parentheses as
  /// formatting would store a different number (`+4407700900456`), one that does not connect.
  /// Refused with the spelling to write; tsapply never drops the 0 itself.
  static func trunkPrefixProblem(_ text: String) -> String? {
    // The byte check first: Foundation's `range(of:)` costs more than the rest of a number's
    // checks, and almost no number has a parenthesis.
    guard text.utf8.first == UInt8(ascii: "+"), text.utf8.contains(UInt8(ascii: "(")), let range = text.range(of: "(0)") else { return nil }
    var meant = text
    meant.removeSubrange(range)
    meant = meant.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
    return "\"\(text)\" has \"(0)\", the prefix dialled only inside the country: kept, it makes another number "
      + "(\(removingFormatting(text))); write \"\(meant)\" (the international number without the 0), or the number without the country code "
      + "and with the 0 (tsapply never changes a number itself)"
  }

  /// `text` without the `formatting` characters; ASCII text is filtered by bytes straight into
  /// the new string, and returned as is when it holds none.
  static func removingFormatting(_ text: String) -> String {
    var text = text
    let kind = text.withUTF8 { bytes in
      bytes.contains { $0 >= 0x80 } ? 2 : bytes.contains(where: isFormattingByte) ? 1 : 0
    }
    switch kind {
    case 0: return text
    case 1:
      return text.withUTF8 { bytes in
        String(unsafeUninitializedCapacity: bytes.count) { buffer in
          var count = 0
          for byte in bytes where !isFormattingByte(byte) {
            buffer[count] = byte
            count += 1
          }
          return count
        }
      }
    default: return String(text.filter { !formatting.contains($0) })
    }
  }

  /// Whether the ASCII byte `byte` is one of `formatting` (a bit mask of them, so the check
  /// needs no table).
  private static func isFormattingByte(_ byte: UInt8) -> Bool {
    byte < 64 && (formattingMask >> UInt64(byte)) & 1 == 1
  }

  /// Bit `b` set for each ASCII byte `b` of `formatting` (all of which are below 64).
  private static let formattingMask: UInt64 = formatting.reduce(0) { mask, character in
    mask | 1 << UInt64(character.asciiValue!)
  }

  /// A plain scalar that YAML reads as a number other than a non-negative integer (`-5`, `1.5`,
  /// `+1.5`, `.5`, `1e5`): refused, since the digits left after removing '-' and '.' are a
  /// different number from the one YAML sees. `+15550100` and `0123456` stay phones.
  static func numberProblem(_ text: String) -> String? {
    // Most plain phones are `+` and digits, or hold a byte no YAML number has (a space): both
    // are decided from the bytes, without building the regexes (which costs more than the rest
    // of a contact's checks).
    let bytes = text.utf8
    let digits = bytes.first == UInt8(ascii: "+") ? bytes.dropFirst() : bytes[...]
    if !digits.isEmpty && digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) { return nil }
    if !bytes.allSatisfy({ $0 < 0x80 && yamlNumberBytes[Int($0)] }) { return nil }
    guard text.wholeMatch(of: yamlNumber) != nil, text.wholeMatch(of: /\+?[0-9]+/) == nil else { return nil }
    return "\(text) is a number in YAML, not a phone number; write the phone as text in quotes, e.g. phone: \"+15550100\""
  }

  /// The bytes `yamlNumber` can match (ASCII only): digits, signs, the point, and the letters of
  /// exponents, `0o`, `0x`, hexadecimal digits, `.inf` and `.nan` in their spellings.
  private static let yamlNumberBytes: [Bool] = (0..<128).map { byte in
    "0123456789+-.eEoxabcdefABCDEFinINFNaA".utf8.contains(UInt8(byte))
  }

  /// YAML 1.2 core-schema numbers (integers, octal, hexadecimal, floats, infinities, NaN).
  private static var yamlNumber: Regex<Substring> {
    /[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|0o[0-7]+|0x[0-9a-fA-F]+|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)/
  }

  /// A number that begins with '-' (after leading spaces): a dash is formatting between digits,
  /// and a phone number has no sign.
  private static func signProblem(_ text: String) -> String? {
    var text = text
    // ASCII text is its own characters: look at the bytes; other text by characters.
    let minus = text.withUTF8 { bytes -> Bool? in
      guard !bytes.contains(where: { $0 >= 0x80 }) else { return nil }
      return bytes.first { $0 != UInt8(ascii: " ") } == UInt8(ascii: "-")
    } ?? (text.drop(while: { $0 == " " }).first == "-")
    guard minus else { return nil }
    return "\"\(text)\" begins with '-'; a phone number has no sign (dashes are formatting between digits only)"
  }

  /// A dash or dot with no digit on one side (`1-`, `(-)1`, `+-1`, `.1`), spaces and parentheses
  /// between them aside: dashes and dots are formatting between digits only, as the sign rule
  /// says, so a number that ends or starts with one is a typo, not a format.
  private static func separatorProblem(_ text: String) -> String? {
    var text = text
    let problem = text.withUTF8 { bytes -> (mark: UInt8, digitBefore: Bool)? in
      func digit(from index: Int, step: Int) -> Bool {
        var index = index + step
        while bytes.indices.contains(index), [UInt8(ascii: " "), UInt8(ascii: "("), UInt8(ascii: ")")].contains(bytes[index]) { index += step }
        return bytes.indices.contains(index) && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index])
      }
      for index in bytes.indices where bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: ".") {
        let before = digit(from: index, step: -1)
        if !before || !digit(from: index, step: 1) { return (bytes[index], before) }
      }
      return nil
    }
    guard let problem else { return nil }
    return "\"\(text)\" has '\(Character(Unicode.Scalar(problem.mark)))' without a digit on \(problem.digitBefore ? "its right" : "its left"); dashes and dots are formatting between digits only"
  }

  private static func problem(in cleaned: String, original: String) -> String? {
    if isStorable(cleaned) { return nil }
    let quoted = "\"\(original)\""
    if original.isEmpty { return "must not be empty; write the number the watch calls, e.g. \"+44 7700 900123\", or remove the contact" }
    if cleaned.contains(where: \.isLetter) {
      return "\(quoted) contains letters; write the number in digits only (letter numbers and extensions cannot be stored, and tsapply never guesses a number)"
    }
    if let odd = cleaned.first(where: { !$0.isASCII && $0.isNumber }) {
      return "\(quoted) contains \"\(odd)\", which is not an ASCII digit 0–9"
    }
    if cleaned.dropFirst().contains("+") {
      return "\(quoted) has a '+' after the start; '+' may only begin the number"
    }
    if let odd = cleaned.unicodeScalars.first(where: { !("0"..."9").contains($0) && $0 != "+" }) {
      // A no-break space, a tab or a zero-width space is named, since quoting it shows nothing.
      let message = "\(quoted) contains \(InvisibleCharacters.quotedOrNamed(odd)); a phone number holds digits 0–9, one leading '+', and spaces, dashes, dots or parentheses as formatting"
      // A typographic dash (an en or em dash, a minus sign) that a word processor put in.
      let dashes: Set<Unicode.Scalar> = ["\u{2010}", "\u{2011}", "\u{2012}", "\u{2013}", "\u{2014}", "\u{2212}"]
      guard dashes.contains(odd) else { return message }
      let fixed = String(String.UnicodeScalarView(original.unicodeScalars.map { dashes.contains($0) ? "-" : $0 }))
      return message + "; write \"\(fixed)\" with a plain dash (-)"
    }
    if !cleaned.contains(where: { $0.isASCII && $0.isNumber }) { return "\(quoted) has no digits" }
    if cleaned.utf8.count > maxBytes {
      return "\(quoted) is \(cleaned.utf8.count) bytes without formatting; the SDK keeps at most \(maxBytes) bytes of a number (it cuts a longer one), and tsapply never shortens a phone number"
    }
    return nil
  }

  /// The common case, checked on bytes: 1–20 bytes of ASCII digits with an optional leading '+'.
  static func isStorable(_ text: String) -> Bool {
    var cleaned = text
    return cleaned.withUTF8 { bytes in
      let digits = bytes.first == UInt8(ascii: "+") ? bytes.dropFirst() : bytes[...]
      return bytes.count <= maxBytes && !digits.isEmpty && digits.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }
  }
}

/// How a manifest states a phone number, for code that writes manifests from a watch (`export`,
/// `restore`): formatting (spaces, dashes, dots, parentheses) is removed when a manifest is read,
/// so a number the watch holds with formatting cannot be stated exactly.
public enum PhoneFormatting {
  /// `number` as a manifest that holds it would give it: without formatting.
  public static func removed(from number: String) -> String {
    PhoneNumberRule.removingFormatting(number)
  }
}

