import TSModel

/// Schema-typed scalars: a scalar's type comes from the field that holds it, never from YAML
/// 1.1 guessing. `phone: 0123456` stays "0123456", `06:30` is a time, `name: No` is text.
extension DecodingContext {
  /// The words YAML 1.1 read as booleans and tsapply does not, with the boolean they meant.
  static let yamlOneOneBooleans: [String: Bool] = [
    "yes": true, "y": true, "on": true, "no": false, "n": false, "off": false,
  ]

  /// Any scalar as text, exactly as written (plain scalars are not typed).
  public mutating func text(_ node: YAMLNode, path: String) -> String? {
    guard let scalar = node.scalar, !node.isNull else {
      error(node.position, path, "expected text, found \(node.kindDescription)")
      return nil
    }
    guard hasStandardTag(node, path: path, allowing: ["str"]) else { return nil }
    return scalar.value
  }

  /// The booleans of YAML 1.2's core schema, the spellings tsapply reads (unquoted).
  static let coreSchemaBooleans: [String: Bool] = [
    "true": true, "True": true, "TRUE": true, "false": false, "False": false, "FALSE": false,
  ]

  /// `true` or `false` (also `True`, `TRUE`, `False`, `FALSE`: YAML 1.2's core schema), unquoted.
  /// `yes`/`no`/`on`/`off` and quoted booleans are errors with a hint.
  mutating func bool(_ node: YAMLNode, path: String) -> Bool? {
    guard let scalar = node.scalar, !node.isNull else {
      error(node.position, path, "expected true or false, found \(node.kindDescription)")
      return nil
    }
    guard hasStandardTag(node, path: path, allowing: ["bool"]) else { return nil }
    if scalar.isPlain, let value = Self.coreSchemaBooleans[scalar.value] { return value }
    let lowered = scalar.value.lowercased()
    if scalar.isPlain, let meant = Self.yamlOneOneBooleans[lowered] {
      error(node.position, path, "\"\(scalar.value)\" is not a boolean; write \(meant) (tsapply reads only true and false)")
    } else if !scalar.isPlain, lowered == "true" || lowered == "false" {
      error(node.position, path, "\"\(scalar.value)\" is quoted, so it is text; write \(lowered) without quotes")
    } else if let meant = Suggestion.closest(to: scalar.value, in: ["true", "false"]) {
      error(node.position, path, "expected true or false, found \"\(scalar.value)\"; did you mean \(meant)?")
    } else {
      error(node.position, path, "expected true or false, found \"\(scalar.value)\"")
    }
    return nil
  }

  /// A plain decimal integer (ASCII digits, optional sign), untagged or tagged `!!int`; `nil`
  /// without a report when the scalar is not one, so callers can try other forms.
  public func plainInteger(_ node: YAMLNode) -> Int? {
    guard let scalar = node.scalar, scalar.isPlain, node.tag == nil || node.tag == Self.standardTag("int") else { return nil }
    var digits = Substring(scalar.value)
    let negative = digits.first == "-"
    if digits.first == "-" || digits.first == "+" { digits = digits.dropFirst() }
    guard !digits.isEmpty, digits.count <= 9, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(digits) else {
      return nil
    }
    return negative ? -value : value
  }

  /// A time of day: "HH:MM" or "H:MM" (24-hour), or an integer of minutes from midnight.
  /// The range (0–1439) is `TimeOfDayRule`'s.
  mutating func time(_ node: YAMLNode, path: String) -> MinuteOfDay? {
    guard let scalar = node.scalar, !node.isNull else {
      error(node.position, path, "expected a time of day (HH:MM), found \(node.kindDescription)")
      return nil
    }
    guard hasStandardTag(node, path: path, allowing: ["str", "int"]) else { return nil }
    if let minutes = plainInteger(node) {
      if scalar.value.count > 1, scalar.value.hasPrefix("0") {
        var message = "\(scalar.value) is ambiguous; write a time as \"HH:MM\" or minutes from midnight without a leading zero"
        if let meant = MistakeHints.hoursAndMinutes(scalar.value) { message += ": \"\(meant)\" if you meant hours and minutes" }
        error(node.position, path, message)
        return nil
      }
      return TimeOfDayRule.check(minutes: minutes, text: scalar.value, at: node.position, field: path, into: &diagnostics)
    }
    let parts = scalar.value.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count == 2, (1...2).contains(parts[0].count), parts[1].count == 2,
          parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
          let hour = Int(parts[0]), let minute = Int(parts[1]) else {
      error(node.position, path, TimeOfDayRule.notATime(scalar.value, field: path))
      return nil
    }
    return TimeOfDayRule.check(hour: hour, minute: minute, text: scalar.value, at: node.position, field: path,
                               into: &diagnostics)
  }

  /// A duration in minutes: "90m", "2h", "1h30m", or an integer of minutes. After hours, the
  /// minutes are 0–59 (`1h60m` is an error, not 120 minutes).
  mutating func duration(_ node: YAMLNode, path: String) -> Int? {
    let expected = "expected a duration such as 90m, 2h or 1h30m, or minutes as an integer"
    guard let scalar = node.scalar, !node.isNull else {
      error(node.position, path, "\(expected), found \(node.kindDescription)")
      return nil
    }
    guard hasStandardTag(node, path: path, allowing: ["str", "int"]) else { return nil }
    if let minutes = plainInteger(node) {
      PeriodRule.checkInteger(every: Located(minutes, at: node.position), field: path, into: &diagnostics)
      return minutes
    }
    guard let parts = Self.parseDuration(scalar.value) else {
      let meant = MistakeHints.duration(scalar.value).map { "; write \($0)" } ?? ""
      error(node.position, path, "\"\(scalar.value)\" is not a duration\(meant) (\(expected))")
      return nil
    }
    if parts.hours != nil, let minutes = parts.minutes, minutes > 59 {
      error(node.position, path,
        "\"\(scalar.value)\" is not a duration: after hours, the minutes must be 0–59 (write \(Self.durationText(parts.total)) or \(parts.total)m; \(expected))")
      return nil
    }
    return parts.total
  }

  /// The hours and minutes written in "2h", "90m" or "1h30m", and the total in minutes; `nil`
  /// for any other text. Whether the minutes after hours are 0–59 is the caller's check.
  static func parseDuration(_ text: String) -> (hours: Int?, minutes: Int?, total: Int)? {
    var rest = Substring(text)
    var values: [String: Int] = [:]
    for unit in ["h", "m"] {
      let digits = rest.prefix { $0.isASCII && $0.isNumber }
      guard !digits.isEmpty, rest.dropFirst(digits.count).hasPrefix(unit), digits.count <= 6, let value = Int(digits) else {
        continue
      }
      values[unit] = value
      rest = rest.dropFirst(digits.count + unit.count)
    }
    guard !values.isEmpty, rest.isEmpty else { return nil }
    return (values["h"], values["m"], (values["h"] ?? 0) * 60 + (values["m"] ?? 0))
  }

  /// `45m`, `2h` or `1h30m` for a number of minutes.
  static func durationText(_ minutes: Int) -> String {
    guard minutes >= 60 else { return "\(minutes)m" }
    return minutes % 60 == 0 ? "\(minutes / 60)h" : "\(minutes / 60)h\(minutes % 60)m"
  }
}
