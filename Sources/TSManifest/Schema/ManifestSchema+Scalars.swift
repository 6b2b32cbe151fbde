import TSModel

/// The scalar definitions of the manifest schema: times, durations, repeat rules, text, phones.
/// Each is built from the constant the validator uses, so the two cannot drift apart.
extension ManifestSchema {
  /// "H:MM" or "HH:MM" on a 24-hour clock, 0:00–23:59 (`TimeOfDayRule`, `MinuteOfDay(hour:minute:)`).
  static let timePattern = "^(?:[01]?[0-9]|2[0-3]):[0-5][0-9]$"
  /// Most digits the validator reads in one part of a duration (`DecodingContext.parseDuration`).
  static let durationDigits = 6
  /// "90m", "2h" or "1h30m" (`DecodingContext.parseDuration`); after hours, minutes 0–59
  /// (leading zeros allowed up to `durationDigits` digits, as the validator reads them).
  static let durationPattern =
    "^(?:[0-9]{1,\(durationDigits)}h(?:0{0,\(durationDigits - 2)}[0-5]?[0-9]m)?|[0-9]{1,\(durationDigits)}m)$"
  /// Formatting characters a phone may hold (`PhoneNumberRule.formatting`), as a regex class.
  static let phoneFormattingClass = "[ .()-]"
  /// ASCII digits with at most one leading '+', 1–20 bytes without formatting (so at most 19
  /// digits after a '+'), formatting anywhere except a '-' before the number (`PhoneNumberRule`).
  static var phonePattern: String {
    let f = phoneFormattingClass
    let digits = "[0-9]\(f)*"
    return "^(?! *-)\(f)*(?:\\+\(f)*(?:\(digits)){1,\(PhoneNumberRule.maxBytes - 1)}|(?:\(digits)){1,\(PhoneNumberRule.maxBytes)})$"
  }

  /// The spellings of one day, lowercase: `mon`…`sun`, `monday`…`sunday` (`RepeatDaysRule.dayNames`).
  static var dayWords: [String] { RepeatDays.days.map(\.name) + RepeatDaysRule.fullDayNames }
  /// The preset names: everyday, workday, weekend, once (`RepeatDays.presets`).
  static var presetWords: [String] { RepeatDays.presets.map(\.name) }

  /// A pattern matching exactly `words` in any case: JSON Schema patterns are ECMA-262 without
  /// flags, so every letter is spelled `[xX]`.
  static func caseInsensitivePattern(_ words: [String]) -> String {
    let alternatives = words.map { word in
      word.map { character in
        character.isLetter ? "[\(character.lowercased())\(character.uppercased())]" : String(character)
      }.joined()
    }
    return "^(?:" + alternatives.joined(separator: "|") + ")$"
  }

  static var scalarDefinitions: [String: JSONSchema] {
    ["time": time, "duration": duration, "repeat": repeatRule, "dayName": dayName, "phone": phone]
  }

  static var time: JSONSchema {
    var text = JSONSchema(type: [.string], description: "A time of day, \"HH:MM\" or \"H:MM\" on a 24-hour clock (00:00–23:59).")
    text.pattern = timePattern
    text.examples = [.string("08:00"), .string("19:30")]
    var minutes = JSONSchema(type: [.integer], description: """
      Minutes from midnight, \(MinuteOfDay.range.lowerBound)–\(MinuteOfDay.range.upperBound), but not 1–23 (hours, surely: \
      8 is an error, write "08:00").
      """)
    minutes.anyOf = TimeOfDayRule.integers.map { range in
      var part = JSONSchema(type: [.integer])
      part.minimum = range.lowerBound
      part.maximum = range.upperBound
      return part
    }
    var schema = JSONSchema(description: """
      A time of day: "HH:MM" or "H:MM" (24-hour, 00:00–23:59), or minutes from midnight (0, or 24–1439: \
      1–23 are hours, surely). "24:00", "23:60", "7pm", 8 and 0630 are errors.
      """)
    schema.anyOf = [text, minutes]
    return schema
  }

  static var duration: JSONSchema {
    var text = JSONSchema(type: [.string], description: "Hours and/or minutes: 90m, 2h, 1h30m.")
    text.pattern = durationPattern
    text.examples = [.string("60m"), .string("2h"), .string("1h30m")]
    var minutes = JSONSchema(type: [.integer], description: "Minutes; under \(PeriodRule.integerIntervalUnitBelow) only with the unit (2m), since every: 2 was most likely meant as 2h.")
    minutes.minimum = PeriodRule.integerIntervalUnitBelow
    minutes.maximum = MinuteOfDay.range.upperBound - MinuteOfDay.range.lowerBound
    var schema = JSONSchema(description: """
      How often the reminder fires: 90m, 2h, 1h30m, or an integer of minutes (5 or more). At least 1 minute and \
      at most end − start (checked by tsapply validate).
      """)
    schema.anyOf = [text, minutes]
    return schema
  }

  static var dayName: JSONSchema {
    var schema = JSONSchema(type: [.string], description: "A day: mon … sun or monday … sunday, in any case.")
    schema.pattern = caseInsensitivePattern(dayWords)
    schema.examples = RepeatDays.days.map { .string($0.name) }
    return schema
  }

  static var repeatRule: JSONSchema {
    var word = JSONSchema(type: [.string], description: """
      A preset (everyday = Monday–Sunday, workday = Monday–Friday, weekend = Saturday+Sunday, once = \
      no repeat; once is checked against the watch at plan time) or one day name, in any case. \
      "weekday" is refused: the SDK's eTSReminderRepeatWeekday means Saturday+Sunday.
      """)
    word.pattern = caseInsensitivePattern(presetWords + dayWords)
    word.examples = presetWords.map { .string($0) }
    var list = JSONSchema(type: [.array], description: "The days to repeat on, e.g. [mon, wed, fri]; at least one, each day once.")
    list.items = .reference("dayName", description: "A day: mon … sun or monday … sunday, in any case.")
    list.minItems = 1
    list.maxItems = RepeatDays.days.count
    list.uniqueItems = true
    var schema = JSONSchema(description: "The days the reminder repeats on: everyday, workday, weekend, once, a day name, or a list of days such as [mon, wed, fri].")
    schema.anyOf = [word, list]
    return schema
  }

  static var phone: JSONSchema {
    var schema = JSONSchema(type: [.string, .integer], description: """
      A phone number: ASCII digits with at most one leading '+', 1–\(PhoneNumberRule.maxBytes) digits; spaces, \
      dashes, dots and parentheses are formatting and removed. Letters, extensions and a '+' in the \
      middle are errors: tsapply never changes a number. Quote it ("+15550100") to keep it text; \
      an unquoted negative or fractional number (-5, 1.5) is an error.
      """)
    schema.pattern = phonePattern
    let bound = (0..<PhoneNumberRule.maxBytes).reduce(1.0) { value, _ in value * 10 }
    schema.minimum = 0  // an unquoted -5 or 1.5 is a YAML number, not a phone (PhoneNumberRule.numberProblem)
    schema.exclusiveMaximum = bound
    return schema
  }

  /// Text: any scalar is read as text (the field decides the type, never YAML's guessing), so an
  /// unquoted number or boolean is text too. `maxBytes` is a UTF-8 byte limit: JSON Schema's
  /// maxLength counts characters, so the limit is written as maxLength (a necessary bound, since
  /// a text of more characters always has more bytes) and tsapply validate stays authoritative.
  static func text(_ description: String, minLength: Int? = nil, maxBytes: Int? = nil) -> JSONSchema {
    var text = description
    if let maxBytes {
      text += " At most \(maxBytes) bytes of UTF-8; maxLength counts characters, so longer non-ASCII text is caught by tsapply validate, which is authoritative."
    }
    var schema = JSONSchema(type: [.string, .number, .boolean], description: text)
    schema.minLength = minLength
    schema.maxLength = maxBytes
    return schema
  }
}
