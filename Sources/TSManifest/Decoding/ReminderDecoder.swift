import TSModel

extension ManifestDecoder {
  static let reminderSectionKeys = ["lunch_break", "sedentary", "drinking", "medicine", "custom"]
  static let reminderKeys = ["name", "enabled", "repeat", "period", "at", "lunch_break", "notes"]
  static let periodKeys = ["start", "end", "every"]
  static let lunchBreakKeys = ["start", "end"]

  /// The `reminders:` section: built-ins by kind, and the complete `custom:` list.
  mutating func reminders(_ node: YAMLNode, keyPosition: SourcePosition) -> ManifestReminders? {
    guard let fields = context.mapping(node, path: "reminders", keys: Self.reminderSectionKeys) else { return nil }
    var section = ManifestReminders(position: keyPosition)
    if let entry = fields.entries["lunch_break"], let lunch = lunchBreak(entry.value, path: "reminders.lunch_break") {
      section.lunchBreak = Located(lunch, at: entry.value.position)
      section.lunchBreakKeys = Self.keyPositions(of: entry)
    }
    // A reminder's own keys written beside it rather than under it (each also reported as
    // unknown here, `MistakeHints.misplacedReminderKey`): an empty reminder is told to take them.
    let beside = MistakeHints.reminderKeysBeside(in: node)
    for kind in ReminderKind.builtIns {
      let path = fields.path(kind.rawValue)
      let hint = beside.isEmpty ? "remove the key to leave the \(kind.rawValue) reminder unmanaged"
        : "the keys below it (\(beside.joined(separator: ", "))) stand beside it, not under it: indent them under \(kind.rawValue): "
          + "to give them to it, or remove the key to leave the \(kind.rawValue) reminder unmanaged"
      guard let entry = fields.entries[kind.rawValue], let present = context.present(entry.value, path: path, hint: hint) else { continue }
      var reminder = reminder(present, kind: kind, path: path)
      reminder?.keyPosition = entry.key.position
      switch kind {
      case .sedentary: section.sedentary = reminder
      case .drinking: section.drinking = reminder
      default: section.medicine = reminder
      }
    }
    if let entry = fields.entries["custom"],
       let list = context.present(entry.value, path: "reminders.custom",
         hint: "remove the key to leave custom reminders unmanaged, or write custom: [] to delete them all") {
      section.custom = customReminders(list).map { Located($0, at: entry.key.position) }
    }
    return section
  }

  private mutating func customReminders(_ node: YAMLNode) -> [ManifestReminder]? {
    if misplacedTimePoints(in: node, path: "reminders.custom") { return nil }
    guard let items = context.sequence(node, path: "reminders.custom", expected: "reminders, e.g. - {name: Walk, at: [\"19:30\"]}") else {
      return nil
    }
    var reminders: [ManifestReminder] = []
    var aliases: [SourcePosition?] = []
    var removed: [ManifestRemoval] = []
    for (index, item) in items.enumerated() {
      let path = "reminders.custom[\(index)]"
      if removal(item, list: .customReminders, path: path, into: &removed) { continue }
      guard let reminder = reminder(item, kind: .custom, path: path) else { continue }
      if reminder.name == nil, case .mapping = item.content, !item.hasKey("name") {
        context.error(item.position, path, "name is required (names identify custom reminders)")
      }
      reminders.append(reminder)
      aliases.append(item.aliasPosition)
    }
    CustomReminderNameRule.check(Array(zip(reminders, aliases)), into: &context.diagnostics)
    checkRemovals(removed, given: reminders.compactMap { $0.name?.value })
    removals += removed
    return reminders
  }

  /// One reminder; fields left out stay `nil` (the watch's value is kept).
  private mutating func reminder(_ node: YAMLNode, kind: ReminderKind, path: String) -> ManifestReminder? {
    guard let fields = context.mapping(node, path: path, keys: Self.reminderKeys) else { return nil }
    var reminder = ManifestReminder(kind: kind, position: node.position, path: path)
    if case .mapping(let entries) = node.content {
      for entry in entries { reminder.keyPositions.merge(Self.keyPositions(of: entry)) { first, _ in first } }
    }
    if let value = fields["name"], let text = context.text(value, path: fields.path("name")) {
      reminder.name = ReminderTextRule.checkName(Located(text, at: value.aliasPosition ?? value.position), field: fields.path("name"),
                                                 into: &context.diagnostics)
    }
    if let value = fields["enabled"], let flag = context.bool(value, path: fields.path("enabled")) {
      reminder.isEnabled = Located(flag, at: value.position)
    }
    if let value = fields["repeat"], let days = repeatDays(value, path: fields.path("repeat")) {
      reminder.repeatDays = Located(days, at: value.position)
    }
    reminder.schedule = schedule(fields)
    if let value = fields["lunch_break"], let lunch = lunchBreak(value, path: fields.path("lunch_break")) {
      reminder.lunchBreak = Located(lunch, at: value.position)
    }
    if let value = fields["notes"], let text = context.text(value, path: fields.path("notes")) {
      reminder.notes = ReminderTextRule.checkNotes(Located(text, at: value.position), field: fields.path("notes"),
                                                   into: &context.diagnostics)
    }
    return reminder
  }

  /// `period` or `at`, never both.
  /// Both are still read when both are written, so their own problems are reported too.
  private mutating func schedule(_ fields: MappingFields) -> Located<ReminderSchedule>? {
    var schedule: Located<ReminderSchedule>?
    if let node = fields["period"], let period = period(node, path: fields.path("period")) {
      schedule = Located(period, at: node.position)
    }
    if let node = fields["at"], let points = timePoints(node, path: fields.path("at")) {
      schedule = Located(.timePoints(points), at: node.position)
    }
    if let period = fields.entries["period"], let at = fields.entries["at"] {
      let second = period.key.position < at.key.position ? at.key : period.key
      context.error(second.position, fields.path(second.scalar?.value ?? "at"),
                    "a reminder has either period or at (time points), not both")
      return nil
    }
    return schedule
  }

  private mutating func period(_ node: YAMLNode, path: String) -> ReminderSchedule? {
    guard let fields = context.mapping(node, path: path, keys: Self.periodKeys) else { return nil }
    let start = requiredTime(fields, "start", in: node)
    let end = requiredTime(fields, "end", in: node)
    var every: Located<Int>?
    if let value = fields["every"] {
      every = context.duration(value, path: fields.path("every")).map { Located($0, at: value.position) }
    } else {
      context.error(node.position, path, "every is required (e.g. every: 60m)")
    }
    guard let start, let end, let every else { return nil }
    return PeriodRule.check(start: start, end: end, every: every, field: path, into: &context.diagnostics)
  }

  private mutating func timePoints(_ node: YAMLNode, path: String) -> [MinuteOfDay]? {
    guard let items = context.sequence(node, path: path, expected: "times, e.g. [\"08:00\", \"20:00\"]") else { return nil }
    var points: [(index: Int, time: Located<MinuteOfDay>)] = []
    var valid = true
    for (index, item) in items.enumerated() {
      if let time = context.time(item, path: "\(path)[\(index)]") {
        points.append((index, Located(time, at: item.position)))
      } else {
        valid = false
      }
    }
    let sorted = TimePointsRule.check(points, writtenCount: items.count, listPosition: node.position, field: path, into: &context.diagnostics)
    return valid ? sorted : nil
  }

  /// `false` (off), `true` (on, keep the watch's times) or `{start, end}` (on with times).
  private mutating func lunchBreak(_ node: YAMLNode, path: String) -> LunchBreak? {
    if case .mapping = node.content {
      guard let fields = context.mapping(node, path: path, keys: Self.lunchBreakKeys) else { return nil }
      guard let start = requiredTime(fields, "start", in: node), let end = requiredTime(fields, "end", in: node),
            let window = LunchBreakRule.check(start: start, end: end, field: path, into: &context.diagnostics) else {
        return nil
      }
      return LunchBreak(isEnabled: true, window: window)
    }
    guard node.scalar != nil, !node.isNull else {
      context.error(node.position, path, "expected true, false or {start: \"12:00\", end: \"14:00\"}, found \(node.kindDescription)")
      return nil
    }
    if let text = node.scalar?.value, let meant = MistakeHints.lunchBreakRange(text) {
      context.error(node.position, path,
        "\"\(text)\" is not a lunch break: it is true, false or {start, end}; write \(meant)")
      return nil
    }
    return context.bool(node, path: path).map { LunchBreak(isEnabled: $0) }
  }

  private mutating func repeatDays(_ node: YAMLNode, path: String) -> RepeatDays? {
    if misplacedTimePoints(in: node, path: path) { return nil }
    let isList = if case .sequence = node.content { true } else { false }
    guard context.hasStandardTag(node, path: path, allowing: [isList ? "seq" : "str"]) else { return nil }
    if case .sequence(let items) = node.content {
      var words: [Located<String>] = []
      for (index, item) in items.enumerated() {
        guard let text = context.text(item, path: "\(path)[\(index)]") else { return nil }
        words.append(Located(text, at: item.position))
      }
      return RepeatDaysRule.check(days: words, listPosition: node.position, field: path, into: &context.diagnostics)
    }
    guard let scalar = node.scalar, !node.isNull else {
      context.error(node.position, path, "\(RepeatDaysRule.expected), found \(node.kindDescription)")
      return nil
    }
    return RepeatDaysRule.check(word: Located(scalar.value, at: node.position), field: path, into: &context.diagnostics)
  }

  /// Whether `node`, a value that is not a mapping by the schema (`repeat`, `custom`), is a
  /// mapping holding `at:`: then that is reported at the key, saying where `at:` belongs
  /// (`MistakeHints.misplacedTimePoints`), instead of the value's type.
  private mutating func misplacedTimePoints(in node: YAMLNode, path: String) -> Bool {
    guard case .mapping(let entries) = node.content, let at = entries.first(where: { $0.keyText == "at" }),
          let hint = MistakeHints.misplacedTimePoints(key: "at", in: path, allowed: []) else { return false }
    context.error(at.key.position, DecodingContext.join(path, "at"), hint)
    return true
  }

  /// The time under a required key; a missing key is an error at the mapping.
  private mutating func requiredTime(_ fields: MappingFields, _ key: String, in node: YAMLNode) -> Located<MinuteOfDay>? {
    guard let value = fields[key] else {
      context.error(node.position, fields.path, "\(key) is required (e.g. \(key): \"12:00\")")
      return nil
    }
    return context.time(value, path: fields.path(key)).map { Located($0, at: value.position) }
  }
}

extension ManifestDecoder {
  /// The position of `entry`'s key by its text, and of the keys of a mapping it holds by their
  /// paths under it (`period` → `period`, `period.start`, `period.end`, `period.every`): where
  /// each field is written (`ManifestReminder.keyPositions`). Keys that are not text are skipped.
  static func keyPositions(of entry: YAMLMappingEntry) -> [String: SourcePosition] {
    guard let key = entry.keyText else { return [:] }
    var positions = [key: entry.key.position]
    if case .mapping(let entries) = entry.value.content {
      for inner in entries {
        if let text = inner.keyText { positions[DecodingContext.join(key, text)] = inner.key.position }
      }
    }
    return positions
  }
}

extension YAMLNode {
  /// Whether this mapping has an entry whose key is `key`.
  func hasKey(_ key: String) -> Bool {
    guard case .mapping(let entries) = content else { return false }
    return entries.contains { $0.keyText == key }
  }

  /// The text keys of this mapping, in the order written; empty for any other node.
  var keyTexts: [String] {
    guard case .mapping(let entries) = content else { return [] }
    return entries.compactMap(\.keyText)
  }
}
