import TSModel
import Foundation

/// The corrected spelling for the mistakes people make most in a manifest (issue 24, "Common
/// mistakes"; docs/manifest.md "Common mistakes and their fixes"): each function returns what to
/// write instead, or `nil` when the text is not that mistake. tsapply never uses a correction:
/// it is only shown, in the error.
enum MistakeHints {
  /// The curly (typographic) quotes a word processor or phone keyboard puts in, as pairs.
  static let curlyQuotes: [(open: Character, close: Character)] = [("“", "”"), ("‘", "’"), ("„", "“"), ("«", "»"), ("”", "”")]

  /// The text inside curly quotes (`“08:00”` → `08:00`), which YAML reads as part of a plain
  /// value, not as quotes.
  static func curlyQuoted(_ text: String) -> String? {
    // Every curly quote is beyond ASCII, so text that ends in an ASCII byte has none as its last
    // character: decided from one byte, without counting characters (most values).
    guard let last = text.utf8.last, last >= 0x80 else { return nil }
    guard text.count >= 2, let first = text.first, let last = text.last,
          curlyQuotes.contains(where: { $0.open == first && $0.close == last }) else { return nil }
    return String(text.dropFirst().dropLast())
  }

  /// The message for a value written in curly quotes: names them and gives the straight-quoted spelling.
  static func curlyQuoteMessage(_ text: String, inner: String) -> String {
    "\"\(text)\" is written in curly quotes (\(text.first!) \(text.last!)), which YAML does not read as quotes, so they are part of the value; write \"\(inner)\" with straight quotes (\")"
  }

  /// The time meant by `8am`, `8 pm`, `8:30pm`, `8.00`, `8.30`, `8h00`, `08h30`; `nil` otherwise.
  static func time(_ text: String) -> MinuteOfDay? {
    var rest = Substring(text.lowercased().replacingOccurrences(of: " ", with: "").replacingOccurrences(of: ".m.", with: "m"))
    var half: String?
    for suffix in ["am", "pm", "a", "p"] where rest.hasSuffix(suffix) {
      half = String(suffix.prefix(1))
      rest = rest.dropLast(suffix.count)
      break
    }
    let hourDigits = rest.prefix { $0.isASCII && $0.isNumber }
    guard (1...2).contains(hourDigits.count), var hour = Int(hourDigits) else { return nil }
    rest = rest.dropFirst(hourDigits.count)
    var minute = 0
    if let separator = rest.first {
      guard ".:h".contains(separator) else { return nil }
      let minuteDigits = rest.dropFirst()
      guard minuteDigits.count == 2, minuteDigits.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(minuteDigits) else { return nil }
      // "8:30" alone is a time already; only the separators YAML does not read are a mistake.
      if separator == ":", half == nil { return nil }
      minute = value
    } else if half == nil {
      return nil
    }
    if let half {
      guard (1...12).contains(hour) else { return nil }
      hour = hour % 12 + (half == "p" ? 12 : 0)
    }
    return MinuteOfDay(hour: hour, minute: minute)
  }

  /// The time `digits` means read as hours and minutes (`0800` → 08:00, `2000` → 20:00), for a
  /// 3- or 4-digit integer; `nil` when that is not a time.
  static func hoursAndMinutes(_ digits: String) -> MinuteOfDay? {
    guard (3...4).contains(digits.count), let value = Int(digits) else { return nil }
    return MinuteOfDay(hour: value / 100, minute: value % 100)
  }

  /// The duration meant by `2 hours`, `2 hrs`, `90 minutes`, `90 min`, `1.5h`, `1.5 hours`,
  /// `1h30`: its tsapply spelling (`2h`, `90m`, `1h30m`); `nil` otherwise.
  static func duration(_ text: String) -> String? {
    let lowered = text.lowercased().trimmingCharacters(in: .whitespaces)
    // `1h30`: hours, then minutes without their unit.
    let halves = lowered.split(separator: "h", omittingEmptySubsequences: false)
    if halves.count == 2, let hours = Int(halves[0]), let minutes = Int(halves[1]), hours >= 0, (1...59).contains(minutes),
       halves[1].count == 2 || minutes < 10 {
      return DecodingContext.durationText(hours * 60 + minutes)
    }
    let number = lowered.prefix { ($0.isASCII && $0.isNumber) || $0 == "." || $0 == "," }
    guard !number.isEmpty, let value = Double(number.replacingOccurrences(of: ",", with: ".")), value > 0 else { return nil }
    let unit = lowered.dropFirst(number.count).trimmingCharacters(in: .whitespaces)
    let minutes: Double
    if ["h", "hr", "hrs", "hour", "hours", "std", "stunden"].contains(unit) {
      minutes = value * 60
    } else if ["m", "min", "mins", "minute", "minutes", "minuten"].contains(unit) {
      minutes = value
    } else {
      return nil
    }
    guard minutes == minutes.rounded(), minutes <= 1439 else { return nil }
    return DecodingContext.durationText(Int(minutes))
  }

  /// The repeat rule meant by a range of days (`Mon-Fri`, `mon–fri`, `Monday to Friday`,
  /// `Sat-Sun`): `workday` or `weekend` with the list, or the list of days.
  static func repeatRange(_ text: String) -> String? {
    let lowered = text.lowercased()
    var parts: [String] = []
    for separator in ["-", "–", "—", " to ", ".."] where lowered.contains(separator) {
      parts = lowered.components(separatedBy: separator).map { $0.trimmingCharacters(in: .whitespaces) }
      break
    }
    guard parts.count == 2, let from = RepeatDaysRule.dayIndex(parts[0]), let to = RepeatDaysRule.dayIndex(parts[1]), from < to else { return nil }
    let list = "[" + RepeatDays.days[from...to].map(\.name).joined(separator: ", ") + "]"
    switch (from, to) {
    case (0, 4): return "workday or \(list)"
    case (5, 6): return "weekend or \(list)"
    case (0, 6): return "everyday"
    default: return list
    }
  }

  /// `lunch_break: 12:00-14:00` (a range where a switch or `{start, end}` is expected): the mapping to write.
  static func lunchBreakRange(_ text: String) -> String? {
    for separator in ["-", "–", "—", " to "] where text.contains(separator) {
      let parts = text.components(separatedBy: separator).map { $0.trimmingCharacters(in: .whitespaces) }
      guard parts.count == 2, let start = strictTime(parts[0]), let end = strictTime(parts[1]) else { continue }
      return "lunch_break: {start: \"\(start)\", end: \"\(end)\"}"
    }
    return nil
  }

  /// `H:MM`/`HH:MM` or a spelling `time(_:)` reads.
  private static func strictTime(_ text: String) -> MinuteOfDay? {
    let parts = text.split(separator: ":", omittingEmptySubsequences: false)
    if parts.count == 2, (1...2).contains(parts[0].count), parts[1].count == 2, let hour = Int(parts[0]), let minute = Int(parts[1]) {
      return MinuteOfDay(hour: hour, minute: minute)
    }
    return time(text)
  }

  /// Letters that stand for digits in a phone number (`O` for 0, `l` and `I` for 1): the number
  /// with them replaced, and the first one's offset in Unicode scalars; `nil` when it holds any
  /// other letter.
  static func digitLookalikes(_ phone: String) -> (meant: String, offset: Int, letter: Character)? {
    let lookalikes: [Character: Character] = ["O": "0", "o": "0", "l": "1", "I": "1"]
    var meant = ""
    var first: (Int, Character)?
    for (offset, character) in phone.enumerated() {
      if let digit = lookalikes[character] {
        meant.append(digit)
        if first == nil { first = (offset, character) }
      } else if character.isLetter {
        return nil
      } else {
        meant.append(character)
      }
    }
    guard let first else { return nil }
    return (meant, first.0, first.1)
  }

  /// `-{name: Anna}` or `-[a, b]` at the start of `line` (after its indentation): a list item
  /// without the space YAML needs after the dash. The dash's column (1-based) and the line as it
  /// should be written.
  static func dashWithoutSpace(line: String) -> (column: Int, fixed: String)? {
    let indentation = line.prefix { $0 == " " }
    let rest = line.dropFirst(indentation.count)
    guard rest.hasPrefix("-"), let next = rest.dropFirst().first, "{[\"'".contains(next) else { return nil }
    // `---` and `-1` are not list items.
    guard !rest.hasPrefix("--") else { return nil }
    return (indentation.count + 1, "- " + rest.dropFirst())
  }
  /// The keys of one reminder (`ManifestDecoder.reminderKeys`) that the reminders section
  /// cannot hold, written in the section mapping `node`, in their order: written beside a
  /// reminder instead of indented under it. `at` among them (it has its own message too).
  static func reminderKeysBeside(in node: YAMLNode) -> [String] {
    guard case .mapping(let entries) = node.content else { return [] }
    return entries.compactMap(\.key.scalar?.value).filter { isReminderKeyOnly($0) }
  }

  /// Whether `key` is a key of one reminder and not of the reminders section.
  private static func isReminderKeyOnly(_ key: String) -> Bool {
    ManifestDecoder.reminderKeys.contains(key) && !ManifestDecoder.reminderSectionKeys.contains(key)
  }

  /// The message for a key of one reminder other than `at` (`name`, `enabled`, `repeat`,
  /// `period`, `notes`) written directly in the reminders section (`path` `reminders`): it
  /// belongs under a reminder. `nil` for any other key or place.
  static func misplacedReminderKey(key: String, in path: String) -> String? {
    guard path == "reminders", key != "at", isReminderKeyOnly(key) else { return nil }
    return "\(key): belongs to one reminder: indent it under the reminder it is for (sedentary:, drinking:, medicine: or an item of custom:)"
  }

  /// The message for a period's key (`start`, `end`, `every`) written directly under a reminder
  /// (field path `path`: `reminders.drinking`, `reminders.custom[0]`), which a reminder does
  /// not have: it goes inside `period:`. `nil` for any other key or place.
  static func misplacedPeriodKey(key: String, in path: String) -> String? {
    let keys = ["start", "end", "every"]
    guard keys.contains(key), path.hasPrefix("reminders."), !path.contains(".period"), !path.contains(".lunch_break"),
          path.split(separator: ".").count == 2 else { return nil }
    return "\(key): goes inside period:, with \(keys.filter { $0 != key }.map { $0 + ":" }.joined(separator: " and ")); "
      + "e.g. period: {start: \"09:00\", end: \"18:00\", every: 90m}"
  }

  /// The example every misplaced-`at` message ends with: where `at:` belongs.
  private static let atExample = "at: is a list of times under one reminder, e.g. medicine: {at: [\"08:00\"]}"

  /// The message for a key meaning a reminder's time points (`at`) written where the mapping
  /// whose field path is `path` cannot hold it: the reminders section or the root (the parent
  /// level), inside `period:`, `lunch_break:` or `repeat:`, directly in `custom:` (a list), or
  /// as a dotted key (`reminders.at`, `medicine.at`), which YAML reads as one key. `nil` for any
  /// other key or place, and for a mapping of another file (a fleet's, read with the same
  /// `DecodingContext`): `allowed` (its keys) must hold `reminders` at the root, and any other
  /// path be under `reminders`. Each message says where `at:` belongs and what to move.
  static func misplacedTimePoints(key: String, in path: String, allowed: [String]) -> String? {
    guard path.isEmpty ? allowed.contains("reminders") : path.hasPrefix("reminders") else { return nil }
    if key != "at" {
      guard key.hasSuffix(".at"), path.isEmpty || path == "reminders" else { return nil }
      let owner = key.dropLast(3).split(separator: ".").last.map(String.init) ?? ""
      let under = ["reminders", ""].contains(owner) ? "the reminder it is for (sedentary:, drinking:, medicine: or an item of custom:)"
        : "\(owner):"
      return "\"\(key)\" is one key: YAML does not nest keys written with dots; write at: indented under \(under); \(atExample)"
    }
    let parts = path.split(separator: ".").map(String.init)
    switch (parts.count, parts.last) {
    case (0, _), (1, "reminders"):
      return "at: cannot stand \(parts.isEmpty ? "at the top level" : "directly under reminders:"); it belongs to one reminder: "
        + "indent it under the reminder it is for (sedentary:, drinking:, medicine: or an item of custom:); \(atExample)"
    case (2, "custom"):
      return "custom: is a list of reminders, each with its own at:; write - {name: Walk, at: [\"19:30\"]} under custom:; \(atExample)"
    case (_, "period"?):
      return "at: does not go inside period:; a reminder has either period or at: to remind at fixed times, replace period: with at: "
        + "under the reminder; \(atExample)"
    case (_, "repeat"?), (_, "lunch_break"?):
      return "at: does not go under \(parts.last!):; write it beside \(parts.last!): at the reminder's level, not indented under it; \(atExample)"
    default:
      return nil
    }
  }

  /// The dash that starts the list item whose content starts at `item` (`- phone: …`,
  /// `- {phone: …}`): the `-` before it on its line, across spaces, in `source`; `item` itself
  /// when there is none there (the item's content starts on a line of its own).
  static func listDash(before item: SourcePosition, in source: [UInt8]) -> SourcePosition {
    guard let line = YAMLSourceCheck.line(item.line, in: source) else { return item }
    let scalars = Array(line.unicodeScalars)
    var index = min(item.column - 1, scalars.count)
    while index > 0, scalars[index - 1] == " " { index -= 1 }
    guard index > 0, index < item.column - 1, scalars[index - 1] == "-" else { return item }
    return SourcePosition(file: item.file, line: item.line, column: index)
  }

  /// Two adjacent list items that look like one contact split over two dashes: the first holds
  /// only `name` and the second only `phone`, or the other way round (`keys` are each item's
  /// keys as written). The message for the second item; `nil` when they are not such a pair.
  static func splitContact(first: [String], second: [String]) -> String? {
    guard first.count == 1, second.count == 1, let a = first.first, let b = second.first,
          Set([a, b]) == ["name", "phone"] else { return nil }
    return "this entry and the one above look like one contact split over two dashes (one has only \(a):, this one only \(b):); "
      + "remove the - before \(b): and indent \(b): under \(a):, at the same column"
  }
}
