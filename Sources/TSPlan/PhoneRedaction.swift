import TSModel

/// Masks phone numbers, which are personal data, for `--redact` output.
public enum PhoneRedaction {
  /// Every digit but the last two becomes `*`; a leading `+` stays: `+15550100` → `+******00`.
  /// A number of two digits or fewer is masked whole (`12` → `**`), so no complete number is
  /// ever shown. Characters other than digits are kept as they are.
  public static func redact(_ phone: String) -> String {
    let digitCount = phone.filter(\.isPhoneDigit).count
    let keep = digitCount > 2 ? 2 : 0
    var seen = 0
    var result = ""
    for character in phone {
      if character.isPhoneDigit {
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

  /// Free text (e.g. a warning message) with every phone of `phones` and everything phone-like
  /// (`redactPhoneLike`) redacted.
  public static func redactText(_ text: String, phones: Set<String>) -> String {
    redactPhoneLike(redact(text, phones: phones))
  }

  /// Characters that may appear inside a written phone number besides digits.
  private static let phoneFormatting: Set<Character> = ["+", " ", "-", ".", "(", ")"]

  /// Free text (a diagnostic message, an echoed manifest line) with every phone-like run masked:
  /// a run of digits, '+', spaces, dashes, dots and parentheses that holds five or more digits
  /// has all its digits but the last two replaced by `*`, formatting kept:
  /// `phone: "+1 (555) 010-0100"` → `phone: "+* (***) ***-**00"`. Times (`08:00`), byte counts,
  /// lines and columns have at most four digits in a run, so they stay readable.
  public static func redactPhoneLike(_ text: String) -> String {
    var output = ""
    var run = ""
    for character in text {
      if character.isPhoneDigit || phoneFormatting.contains(character) {
        run.append(character)
        continue
      }
      output += maskedRun(run) + String(character)
      run = ""
    }
    return output + maskedRun(run)
  }

  private static func maskedRun(_ run: String) -> String {
    run.filter(\.isPhoneDigit).count >= 5 ? redact(run) : run
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
         !(end < characters.count && characters[end].isPhoneDigit) {
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
    character.isPhoneDigit || character == "+"
  }
}

extension Character {
  /// Any decimal digit, ASCII or not (e.g. full-width １), so a number written in other digits
  /// is masked too; a digit carrying combining marks (`0` + U+0742, a keycap `1️⃣`) still reads
  /// as that digit, so it counts (and is masked whole) too.
  var isPhoneDigit: Bool {
    unicodeScalars.first?.properties.numericType == .decimal
  }
}
