import TSModel

/// Masks phone numbers, which are personal data, for `--redact` output.
public enum PhoneRedaction {
  /// Every digit but the last two becomes `*`; a leading `+` stays: `+15550100` → `+******00`.
  /// A number of two digits or fewer is masked whole (`12` → `**`), so no complete number is
  /// ever shown. Characters other than digits are kept as they are.
  public static func redact(_ phone: String) -> String {
    let digitCount = phone.filter(\.isASCIIDigit).count
    let keep = digitCount > 2 ? 2 : 0
    var seen = 0
    var result = ""
    for character in phone {
      if character.isASCIIDigit {
        seen += 1
        result.append(seen > digitCount - keep ? character : "*")
      } else {
        result.append(character)
      }
    }
    return result
  }

  /// `text` with each of `phones` replaced by its redacted form wherever it stands alone (not
  /// inside a longer run of digits); longer numbers first so one number inside another is safe.
  public static func redact(_ text: String, phones: Set<String>) -> String {
    var result = text
    for phone in phones.sorted(by: { $0.count > $1.count }) where !phone.isEmpty {
      result = replaceStandalone(phone, with: redact(phone), in: result)
    }
    return result
  }

  /// Free text (e.g. a warning message) with every phone of `phones` and every other standalone
  /// run of five or more digits (with an optional leading `+`) redacted. Times and byte counts
  /// in messages have at most four digits, so they stay readable.
  public static func redactText(_ text: String, phones: Set<String>) -> String {
    var runs = phones
    var run = ""
    for character in text + " " {
      if character.isASCIIDigit || (character == "+" && run.isEmpty) {
        run.append(character)
      } else {
        if run.filter(\.isASCIIDigit).count >= 5 { runs.insert(run) }
        run = ""
      }
    }
    return redact(text, phones: runs)
  }

  /// Every phone number held in `plan` (before/after values of contacts and emergency).
  public static func phones(in plan: Plan) -> Set<String> {
    var phones = Set<String>()
    for change in plan.resourceChanges + plan.resourceDrift {
      for value in [change.before, change.after].compactMap({ $0 }) {
        switch value {
        case .contacts(let contacts): phones.formUnion(contacts.map(\.phoneNum))
        case .emergency(let emergency): phones.formUnion(emergency.contacts.map(\.phoneNum))
        case .reminder: break
        }
      }
    }
    return phones
  }

  private static func replaceStandalone(_ target: String, with replacement: String, in text: String) -> String {
    let characters = Array(text), pattern = Array(target)
    var output = ""
    var index = 0
    while index < characters.count {
      let end = index + pattern.count
      if end <= characters.count, Array(characters[index..<end]) == pattern,
         !(index > 0 && isNumberCharacter(characters[index - 1])),
         !(end < characters.count && characters[end].isASCIIDigit) {
        output += replacement
        index = end
      } else {
        output.append(characters[index])
        index += 1
      }
    }
    return output
  }

  private static func isNumberCharacter(_ character: Character) -> Bool {
    character.isASCIIDigit || character == "+"
  }
}

extension Character {
  /// `0`…`9` only (not other scripts' digits).
  var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
