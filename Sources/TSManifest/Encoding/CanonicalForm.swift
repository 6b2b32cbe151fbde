import TSModel

/// The canonical spelling of manifest values and the canonical key order, shared by
/// `ManifestEncoder` (`tsapply export`) and `ManifestFormatter` (`tsapply fmt`), so an exported
/// manifest is already formatted.
///
/// - Times: double-quoted `"HH:MM"` (zero-padded, 24-hour), e.g. `"06:30"`.
/// - Durations (`every`): whole hours as `2h`, whole minutes under an hour as `45m`, otherwise
///   `1h30m`; plain.
/// - Repeat rules: a preset name (`everyday`, `workday`, `weekend`, `once`) when the days match
///   one, else a flow list of three-letter day names, Monday first: `[mon, wed, fri]`.
/// - Booleans: `true` and `false` (`True`, `FALSE`… are read, and written in lower case).
/// - Phones: double-quoted. Text (names, notes): plain unless YAML would read it as null or a
///   YAML 1.1 boolean, then double-quoted (libyaml quotes anything else that needs it).
/// - Keys: the order of the format reference (docs/manifest.md), e.g. a reminder's `name`,
///   `enabled`, `repeat`, `period`, `at`, `lunch_break`, `notes`.
public enum CanonicalForm {
  /// `"HH:MM"` without the quotes.
  public static func time(_ time: MinuteOfDay) -> String { time.description }

  /// A duration of `minutes` in its one spelling: `2h`, `45m` or `1h30m`. Zero or negative
  /// values (which validation refuses) are written as plain minutes.
  public static func duration(_ minutes: Int) -> String {
    guard minutes > 0 else { return String(minutes) }
    let hours = minutes / 60, rest = minutes % 60
    if hours == 0 { return "\(rest)m" }
    return rest == 0 ? "\(hours)h" : "\(hours)h\(rest)m"
  }

  /// The repeat rule for `days`: a preset name, or a flow list of day names.
  public static func repeatNode(_ days: RepeatDays) -> YAMLOutputNode {
    if let preset = RepeatDays.presets.first(where: { $0.days == days }) { return .scalar(preset.name, .plain) }
    return .sequence(days.dayNames.map { .scalar($0, .plain) }, flow: true)
  }

  /// The canonical three-letter name of a day word (`Monday` → `mon`); `nil` when not a day.
  static func dayName(_ word: String) -> String? {
    guard let day = RepeatDaysRule.dayNames[word.lowercased()] else { return nil }
    return RepeatDays.days.first { $0.day == day }?.name
  }

  /// The style text is written in: double-quoted when YAML would otherwise read it as null or a
  /// YAML 1.1 boolean (so other tools read it as the same text), plain otherwise.
  public static func textStyle(_ text: String) -> YAMLScalar.Style {
    let lowered = text.lowercased()
    if YAMLScalar.nullSpellings.contains(text) || lowered == "null" || ["true", "false"].contains(lowered)
      || DecodingContext.yamlOneOneBooleans[lowered] != nil {
      return .doubleQuoted
    }
    return .plain
  }

  /// Keys of each mapping of the format, in canonical order.
  static let rootKeys = ManifestDecoder.rootKeys
  static let reminderSectionKeys = ManifestDecoder.reminderSectionKeys
  static let reminderKeys = ManifestDecoder.reminderKeys
  static let periodKeys = ManifestDecoder.periodKeys
  static let lunchBreakKeys = ManifestDecoder.lunchBreakKeys
  static let contactKeys = ManifestDecoder.contactKeys
  static let emergencyKeys = ManifestDecoder.emergencyKeys
}
