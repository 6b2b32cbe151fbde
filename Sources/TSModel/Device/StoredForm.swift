/// Why a watch would refuse to store a reminder (the simulated watch answers 4002 with this
/// detail; the planner finds the same problems earlier as manifest errors).
public struct StoredFormRefusal: Error, Hashable, Sendable, CustomStringConvertible {
  /// What is wrong, e.g. `name of reminder 33 is 40 bytes, the watch stores at most 32`.
  public var detail: String
  /// A refusal saying `detail`.
  public init(_ detail: String) { self.detail = detail }
  public var description: String { detail }
}

extension ReminderCapabilities {
  /// The kind a watch stores under `id`: "0", "1", "2" are the built-ins, anything else is
  /// custom (the type is derived from the ID on read; docs/platforms.md "Reminder IDs").
  public static func kind(ofID id: String) -> ReminderKind {
    ReminderKind.builtIns.first { $0.builtInID == id } ?? .custom
  }

  /// `reminder` exactly as a watch with these capabilities holds it after storing it under `id`:
  /// the one definition of the stored form, used by the simulated watch to store and by the
  /// planner to say what a change's `after` will read back as.
  ///
  /// - The type follows the ID; names and notes are cut to their byte limit (code-point
  ///   truncation, `TextTruncation`) where the platform cuts them, and read back "" where it
  ///   does not store them.
  /// - Only the active schedule is kept: time points clear start, end and interval to 0; a
  ///   period clears the time points. A time type the kind does not store becomes a period.
  /// - Repeat days read back every day where they are not stored; lunch-break times read back
  ///   0/0 where only the flag is stored, and flag and times off/0/0 where there is none.
  /// - Throws: `StoredFormRefusal` when the kind does not exist on the platform, text is longer
  ///   than a platform that refuses long text takes, or there are more time points than it holds.
  public func storedForm(of reminder: Reminder, id: String) throws(StoredFormRefusal) -> Reminder {
    let kind = Self.kind(ofID: id)
    guard let caps = self[kind] else { throw StoredFormRefusal("the watch has no \(kind.rawValue) reminder (ID \(id))") }
    var r = reminder
    r.reminderId = id
    r.reminderType = kind.reminderType
    r.reminderName = try Self.text(r.reminderName, limit: caps.nameMaxBytes, cut: caps.truncatesLongText, field: "name", id: id)
    r.notes = try Self.text(r.notes, limit: caps.notesMaxBytes, cut: caps.truncatesLongText, field: "notes", id: id)
    if !caps.storesRepeatDays { r.repeatDays = .everyday }
    if !caps.timeTypes.contains(r.timeType) { r.timeType = .period }
    if r.timeType == .point {
      guard r.timePoints.count <= maxTimePoints else {
        throw StoredFormRefusal("reminder \(id) has \(r.timePoints.count) time points, the watch holds at most \(maxTimePoints)")
      }
      (r.startTime, r.endTime, r.interval) = (0, 0, 0)
    } else {
      r.timePoints = []
    }
    switch caps.lunchBreak {
    case .none: (r.isLunchBreakDNDEnabled, r.lunchBreakDNDStartTime, r.lunchBreakDNDEndTime) = (false, 0, 0)
    case .flagOnly: (r.lunchBreakDNDStartTime, r.lunchBreakDNDEndTime) = (0, 0)
    case .times: break
    }
    return r
  }

  private static func text(_ value: String, limit: Int?, cut: Bool, field: String, id: String) throws(StoredFormRefusal) -> String {
    guard let limit else { return "" }
    guard value.utf8.count > limit else { return value }
    if cut { return TextTruncation.truncate(value, maxBytes: limit) }
    throw StoredFormRefusal("\(field) of reminder \(id) is \(value.utf8.count) bytes, the watch stores at most \(limit)")
  }
}
