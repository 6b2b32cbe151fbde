/// One resource change in a few words, for the lines people act on (the monitor's drift event,
/// an agent's drift message, the status page's reasons): `emergency (1 removed, SOS switched
/// off)`, `reminder.drinking (turned off)`, `reminder.sedentary (interval changed)`. Contacts are
/// counted (`ContactCounts`), never named; a switch says which way it went; other fields are
/// named. The plan and `drift` show the values.
public enum ChangeBrief {
  /// `address (what)`, or the address alone when no field changed; `address (deleted)` or
  /// `address (added)` for a resource gone or new (`action`), whatever its fields; `address` as
  /// given (masked by the caller when it must be).
  public static func text(_ address: String, _ fields: [FieldChange], action: Action = .update) -> String {
    switch action {
    case .delete: return address + " (deleted)"
    case .create: return address + " (added)"
    case .update: break
    }
    let words = parts(fields)
    return words.isEmpty ? address : address + " (" + words.joined(separator: ", ") + ")"
  }

  /// The manifest key a change of the SDK field `field` is told by: `enabled`, `repeat`,
  /// `period.every`; `schedule` for `timeType` (`ManifestWords.key`).
  public static func key(_ field: String) -> String {
    field == "timeType" ? "schedule" : ManifestWords.key(field)
  }

  /// The words for `fields`: contact counts first, then each switch, then the other fields.
  public static func parts(_ fields: [FieldChange]) -> [String] {
    var words: [String] = []
    let counts = ContactCounts(fields)
    if !counts.isEmpty { words.append(counts.summary) }
    var others: [String] = []
    for change in fields where change.field != "contacts" {
      switch (change.field, change.after) {
      case ("isSosOn", .bool(let on)?): words.append(on ? "SOS switched on" : "SOS switched off")
      case ("isEnabled", .bool(let on)?): words.append(on ? "turned on" : "turned off")
      case (_, .bool(let on)?) where change.before != nil: words.append("\(ManifestWords.key(change.field)) \(on ? "on" : "off")")
      default:
        let key = key(change.field)
        if !others.contains(key) { others.append(key) }
      }
    }
    if !others.isEmpty { words.append(others.joined(separator: ", ") + " changed") }
    return words
  }
}
