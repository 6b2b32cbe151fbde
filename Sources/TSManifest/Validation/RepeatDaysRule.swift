import TSModel

/// `repeat`: a preset, one day, or a list of days, mapped to the SDK's bit mask.
///
/// Source: docs/platforms.md "Values and units" (`TSRemindersRepeat`: Monday = bit 0 … Sunday = bit 6; Workday 31,
/// Weekend 96, Everyday 127; the pre-beta8 name of Sat+Sun was `eTSReminderRepeatWeekday`) and
/// docs/platforms.md "Repeat days and once" (0, "once", is refused by Npk and accepted by Fit, so it is checked against the device
/// at plan time). Day names are case-insensitive, full or three letters. `weekday` is refused
/// because the SDK's old name means the opposite of what English readers expect.
enum RepeatDaysRule {
  /// Every accepted spelling of a day: `mon`, `monday`, … `sun`, `sunday`.
  static let dayNames: [String: RepeatDays] = {
    var names: [String: RepeatDays] = [:]
    for (index, entry) in RepeatDays.days.enumerated() {
      names[entry.name] = entry.day
      names[fullDayNames[index]] = entry.day
    }
    return names
  }()

  /// The full day names, Monday first (SDK bit order), beside `RepeatDays.days`' short names.
  static let fullDayNames = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

  /// 0 for Monday … 6 for Sunday, for a day name in any case; `nil` for anything else.
  static func dayIndex(_ name: String) -> Int? {
    guard let day = dayNames[name.lowercased()] else { return nil }
    return RepeatDays.days.firstIndex { $0.day == day }
  }

  static let expected = "expected everyday, workday, weekend, once, a day name, or a list of days such as [mon, wed, fri]"

  /// A preset (`everyday`, `workday`, `weekend`, `once`) or a single day name.
  static func check(word: Located<String>, field: String, into diagnostics: inout [Diagnostic]) -> RepeatDays? {
    let lowered = word.value.lowercased()
    if let preset = RepeatDays.presets.first(where: { $0.name == lowered }) { return preset.days }
    if let day = dayNames[lowered] { return day }
    diagnostics.append(.error(at: word.position, field: field, unknownWordMessage(word.value)))
    return nil
  }

  /// A list of day names: non-empty, each day once.
  static func check(days: [Located<String>], listPosition: SourcePosition, field: String,
                    into diagnostics: inout [Diagnostic]) -> RepeatDays? {
    guard !days.isEmpty else {
      diagnostics.append(.error(at: listPosition, field: field,
        "the list of days is empty; list at least one day, or write once"))
      return nil
    }
    var mask = RepeatDays()
    var seen: [RepeatDays: SourcePosition] = [:]
    var valid = true
    for (index, word) in days.enumerated() {
      guard let day = dayNames[word.value.lowercased()] else {
        var message = "\"\(word.value)\" is not a day name (expected mon…sun or monday…sunday)"
        if let meant = abbreviatedDay(word.value) { message += "; did you mean \"\(meant)\"?" }
        if word.value.lowercased().hasPrefix("weekday") { message = weekdayMessage(word.value) }
        diagnostics.append(.error(at: word.position, field: "\(field)[\(index)]", message))
        valid = false
        continue
      }
      if let first = seen[day] {
        diagnostics.append(.error(at: word.position, field: "\(field)[\(index)]",
          "\"\(word.value)\" is listed twice (first on line \(first.line), column \(first.column))"))
        valid = false
      }
      seen[day] = seen[day] ?? word.position
      mask.insert(day)
    }
    return valid ? mask : nil
  }

  /// The short name of the one day `word` begins (`tues`, `Thurs`, `Mo`: two letters or more of
  /// its full name); `nil` when none or several do (`t`, `s`).
  static func abbreviatedDay(_ word: String) -> String? {
    let lowered = word.lowercased()
    guard lowered.count >= 2 else { return nil }
    let matching = fullDayNames.indices.filter { fullDayNames[$0].hasPrefix(lowered) }
    return matching.count == 1 ? RepeatDays.days[matching[0]].name : nil
  }

  /// `[mon, wed, fri]` for days written as one word (`Mon,Wed,Fri`, `mon wed fri`, `mon/fri`):
  /// every part a day name or one `abbreviatedDay` stands for; `nil` otherwise.
  static func dayList(_ word: String) -> String? {
    let parts = word.split(whereSeparator: { $0 == "," || $0 == "/" || $0 == ";" || $0 == " " || $0 == "&" }).map(String.init)
    guard parts.count >= 2 else { return nil }
    let days = parts.map { part in dayIndex(part).map { RepeatDays.days[$0].name } ?? abbreviatedDay(part) }
    guard days.allSatisfy({ $0 != nil }) else { return nil }
    return "[" + days.compactMap { $0 }.joined(separator: ", ") + "]"
  }

  private static func unknownWordMessage(_ word: String) -> String {
    if word.lowercased().hasPrefix("weekday") { return weekdayMessage(word) }
    if let list = dayList(word) { return "\"\(word)\" is not a repeat rule (several days are a list); write \(list)" }
    if let meant = MistakeHints.repeatRange(word) {
      return "\"\(word)\" is not a repeat rule (a range of days is not written with a dash); write \(meant)"
    }
    var message = "\"\(word)\" is not a repeat rule"
    // Words meaning every day that are not near "everyday" in spelling.
    if ["daily", "all", "always", "alldays", "all days", "each day"].contains(word.lowercased()) {
      return message + "; write everyday (\(expected))"
    }
    let candidates = RepeatDays.presets.map(\.name) + dayNames.keys.sorted()
    if let suggestion = Suggestion.closest(to: word, in: candidates) { message += "; did you mean \"\(suggestion)\"?" }
    return message + " (\(expected))"
  }

  private static func weekdayMessage(_ word: String) -> String {
    "\"\(word)\" is ambiguous: the SDK's eTSReminderRepeatWeekday means Saturday+Sunday; write workday (Monday–Friday) or weekend (Saturday+Sunday)"
  }
}
