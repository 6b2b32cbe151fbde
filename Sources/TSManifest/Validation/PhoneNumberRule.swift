import TSModel

/// A phone number is ASCII digits with at most one leading '+', 1–20 bytes, after removing
/// formatting (spaces, dashes, dots, parentheses). Anything else is refused, never repaired.
///
/// Source: sdk-facts.md §2.2–§2.3 (the SDK keeps only `0123456789+`, deleting every other
/// character, and then cuts to 20 bytes; FitCloud drops a phone over 20 bytes, §2.4). Deleting
/// letters or cutting digits turns a number into a different number, and a wrong emergency
/// number is worse than none, so tsapply refuses instead.
enum PhoneNumberRule {
  /// Most bytes the watch stores for a phone number.
  static let maxBytes = 20
  /// Characters that are formatting and removed before checking.
  static let formatting: Set<Character> = [" ", "-", ".", "(", ")"]

  /// The number without formatting, or an error naming the first problem.
  static func check(_ phone: Located<String>, field: String, into diagnostics: inout [Diagnostic]) -> Located<String>? {
    let cleaned = String(phone.value.filter { !formatting.contains($0) })
    if let problem = problem(in: cleaned, original: phone.value) {
      diagnostics.append(.error(at: phone.position, field: field, problem))
      return nil
    }
    return Located(cleaned, at: phone.position)
  }

  private static func problem(in cleaned: String, original: String) -> String? {
    if isStorable(cleaned) { return nil }
    let quoted = "\"\(original)\""
    if original.isEmpty { return "must not be empty" }
    if cleaned.contains(where: \.isLetter) {
      return "\(quoted) contains letters; write the number in digits only (letter numbers and extensions cannot be stored, and tsapply never guesses a number)"
    }
    if let odd = cleaned.first(where: { !$0.isASCII && $0.isNumber }) {
      return "\(quoted) contains \"\(odd)\", which is not an ASCII digit 0–9"
    }
    if cleaned.dropFirst().contains("+") {
      return "\(quoted) has a '+' after the start; '+' may only begin the number"
    }
    if let odd = cleaned.first(where: { !($0.isASCII && $0.isNumber) && $0 != "+" }) {
      return "\(quoted) contains \"\(odd)\"; a phone number holds digits 0–9, one leading '+', and spaces, dashes, dots or parentheses as formatting"
    }
    if !cleaned.contains(where: { $0.isASCII && $0.isNumber }) { return "\(quoted) has no digits" }
    if cleaned.utf8.count > maxBytes {
      return "\(quoted) is \(cleaned.utf8.count) bytes without formatting; the watch holds at most \(maxBytes), and tsapply never shortens a phone number"
    }
    return nil
  }

  /// The common case, checked on bytes: 1–20 bytes of ASCII digits with an optional leading '+'.
  private static func isStorable(_ cleaned: String) -> Bool {
    let bytes = cleaned.utf8
    let digits = bytes.first == UInt8(ascii: "+") ? bytes.dropFirst() : bytes[...]
    return bytes.count <= maxBytes && !digits.isEmpty && digits.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
  }
}
