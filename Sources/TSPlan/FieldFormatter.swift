import TSModel

/// Formats field values for the human plan in the manifest's spelling: times as `"HH:MM"`,
/// intervals as durations (`60m`, `2h`, `1h30m`), repeat days as presets or day lists
/// (`workday`, `[mon, wed, fri]`), strings quoted, contacts as `{name = "…", phone = "…"}`.
/// Values are chosen by their SDK field (`phoneNum`, `repeatDays`, …) and objects' keys shown
/// in the manifest's words (`ManifestWords.contactKey`).
/// With `redact`, every `phoneNum` is masked (`PhoneRedaction`), with its fingerprint when
/// `fingerprints` are given (`"+******00" ‹kqztrb›`).
struct FieldFormatter {
  let redact: Bool
  var fingerprints: PhoneFingerprints? = nil

  private static let timeFields: Set<String> = ["startTime", "endTime", "lunchBreakDNDStartTime", "lunchBreakDNDEndTime"]

  /// `value` of `field`; `null` for no value.
  func format(_ value: FieldValue?, field: String) -> String {
    guard let value else { return "null" }
    switch (field, value) {
    case (_, .integer(let minutes)) where Self.timeFields.contains(field):
      return Self.time(minutes)
    case ("timePoints", .list(let points)):
      return "[" + points.map { format($0, field: "startTime") }.joined(separator: ", ") + "]"
    case ("interval", .integer(let minutes)):
      return Self.duration(minutes)
    case ("repeatDays", .integer(let mask)):
      return RepeatDays(rawValue: mask).description
    case ("phoneNum", .string(let phone)) where redact:
      return Self.quoted(PhoneRedaction.redact(phone)) + (fingerprints.map { " " + $0.tag(phone) } ?? "")
    default:
      return plain(value)
    }
  }

  /// Both sides of an object whose keys match, showing `old -> new` only for keys that differ.
  func formatChange(_ before: FieldValue?, _ after: FieldValue?, field: String) -> String {
    guard case .object(let old)? = before, case .object(let new)? = after else { return arrow(before, after, field: field) }
    let keys = (new.map(\.key) + old.map(\.key)).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
    let parts = keys.map { key -> String in
      let a = old.first { $0.key == key }?.value, b = new.first { $0.key == key }?.value
      let shown = ManifestWords.contactKey(key)
      return a == b ? "\(shown) = \(format(a, field: key))" : "\(shown) = " + arrow(a, b, field: key)
    }
    return "{" + parts.joined(separator: ", ") + "}"
  }

  /// `old -> new` of one field. Two phone numbers that mask alike, with no fingerprints to tell
  /// them apart (no redaction key yet), say that they differ: a changed emergency number read as
  /// unchanged (fresh-eyes fe106 #2).
  private func arrow(_ before: FieldValue?, _ after: FieldValue?, field: String) -> String {
    let (old, new) = (format(before, field: field), format(after, field: field))
    return "\(old) -> \(new)" + (redact && field == "phoneNum" && old == new && before != after ? " (another number, alike once masked)" : "")
  }

  private func plain(_ value: FieldValue) -> String {
    switch value {
    case .string(let text): Self.quoted(text)
    case .integer(let number): String(number)
    case .bool(let flag): String(flag)
    case .list(let items): "[" + items.map(plain).joined(separator: ", ") + "]"
    case .object(let entries):
      "{" + entries.map { "\(ManifestWords.contactKey($0.key)) = \(format($0.value, field: $0.key))" }.joined(separator: ", ") + "}"
    }
  }

  /// A reminder's schedule as the manifest writes it: `{start = "09:00", end = "18:00", every = 1h}`
  /// for a period, `["08:00", "20:00"]` for time points (sorted, as compared).
  func schedule(_ reminder: Reminder) -> String {
    guard reminder.timeType == .point else { return Self.period(reminder.startTime, reminder.endTime, every: reminder.interval) }
    return format(.list(Set(reminder.timePoints).sorted().map(FieldValue.integer)), field: "timePoints")
  }

  /// A period as the manifest writes it: `{start = "09:00", end = "18:00", every = 2h}`.
  static func period(_ start: Int, _ end: Int, every interval: Int) -> String {
    "{start = \(time(start)), end = \(time(end)), every = \(duration(interval))}"
  }

  /// `"HH:MM"` for 0...1439; other values (a watch can hold them) as the raw number.
  static func time(_ minutes: Int) -> String {
    MinuteOfDay(rawValue: minutes).map { "\"\($0)\"" } ?? String(minutes)
  }

  /// `45m`, `2h`, `1h30m`.
  static func duration(_ minutes: Int) -> String {
    guard minutes >= 60 else { return "\(minutes)m" }
    return minutes % 60 == 0 ? "\(minutes / 60)h" : "\(minutes / 60)h\(minutes % 60)m"
  }

  /// A double-quoted string with `"` and `\` escaped, and control characters escaped
  /// (`ControlCharacters.escaped`: `\e`, `\n`, `\u{7F}`), so text read from a watch cannot drive
  /// the terminal.
  static func quoted(_ text: String) -> String {
    var out = "\""
    for character in text {
      if character == "\"" || character == "\\" { out.append("\\") }
      out.append(character)
    }
    return ControlCharacters.escaped(out + "\"")
  }
}
