import TSModel

/// Time points (`at`): at least one, at most 10, no time twice; held sorted.
///
/// Sources: docs/platforms.md "Reminder validation" (point reminders need a non-empty `timePoints`, each 0…1439, else
/// 3002) and docs/platforms.md "Capacity" (the Npk protocol holds at most 10 time points, `kRemindTimesCount 10`; the
/// SDK does not check it and the device would refuse with 4002). Duplicates are refused
/// because the watch would hold the same alarm twice.
enum TimePointsRule {
  /// Most time points one reminder holds.
  static let maxCount = 10

  /// The sorted time points, or errors at the list (`listPosition`) or at the duplicate item.
  /// `points` pairs each readable time with its index in the written list (for the field
  /// path); `writtenCount` is how many items the list has, readable or not.
  static func check(_ points: [(index: Int, time: Located<MinuteOfDay>)], writtenCount: Int, listPosition: SourcePosition,
                    field: String, into diagnostics: inout [Diagnostic]) -> [MinuteOfDay]? {
    var valid = true
    if writtenCount == 0 {
      diagnostics.append(.error(at: listPosition, field: field, "needs at least one time (e.g. at: [\"08:00\"])"))
      valid = false
    }
    if writtenCount > maxCount {
      diagnostics.append(.error(at: listPosition, field: field,
        "holds \(writtenCount) times; a reminder holds at most \(maxCount)"))
      valid = false
    }
    var seen: [MinuteOfDay: SourcePosition] = [:]
    for (index, point) in points {
      if let first = seen[point.value] {
        diagnostics.append(.error(at: point.position, field: "\(field)[\(index)]",
          "\(point.value) is listed twice (first on line \(first.line), column \(first.column))"))
        valid = false
      } else {
        seen[point.value] = point.position
      }
    }
    return valid ? points.map(\.time.value).sorted() : nil
  }
}
