import TSManifest
import TSModel

/// Builds `Manifest` values directly (the YAML decoder is another helper's work), with
/// deterministic positions: a reminder at line L has `name` on L+1, `enabled` L+2, `repeat` L+3,
/// the schedule L+4, `lunch_break` L+5, `notes` L+6 (all at column 7); a contact at line L has
/// its name at column 13 and its phone at column 30.
public enum Build {
  public static let file = "watch.yaml"

  /// A manifest whose apply on a factory-fresh default watch makes four changes, written in
  /// this order: the two reminders (read at call 4, written at 5), the contacts (read at 6,
  /// written at 7), the emergency contacts (read at 8, written at 9) — for faults at a chosen call.
  public static let fourChanges = """
    contacts:
      - {name: Ann, phone: "+15550100"}
    reminders:
      sedentary: {enabled: true}
      drinking: {enabled: true}
    emergency:
      sos: true
      contacts:
        - {name: Sam, phone: "+15550101"}

    """

  public static func at(_ line: Int, _ column: Int) -> SourcePosition { SourcePosition(file: file, line: line, column: column) }

  public static func minutes(_ text: String) -> MinuteOfDay {
    let parts = text.split(separator: ":").compactMap { Int($0) }
    return MinuteOfDay(hour: parts[0], minute: parts[1]) ?? MinuteOfDay(rawValue: 0)!
  }

  public static func points(_ times: [String]) -> ReminderSchedule { .timePoints(times.map(minutes).sorted()) }

  public static func period(_ start: String, _ end: String, every: Int) -> ReminderSchedule {
    .period(start: minutes(start), end: minutes(end), interval: every)
  }

  public static func reminder(_ kind: ReminderKind, path: String? = nil, line: Int, name: String? = nil, enabled: Bool? = nil,
                       repeatDays: RepeatDays? = nil, schedule: ReminderSchedule? = nil, lunch: LunchBreak? = nil,
                       notes: String? = nil) -> ManifestReminder {
    ManifestReminder(kind: kind, position: at(line, 5), path: path ?? "reminders.\(kind.rawValue)",
                     name: name.map { Located($0, at: at(line + 1, 7)) },
                     isEnabled: enabled.map { Located($0, at: at(line + 2, 7)) },
                     repeatDays: repeatDays.map { Located($0, at: at(line + 3, 7)) },
                     schedule: schedule.map { Located($0, at: at(line + 4, 7)) },
                     lunchBreak: lunch.map { Located($0, at: at(line + 5, 7)) },
                     notes: notes.map { Located($0, at: at(line + 6, 7)) })
  }

  public static func custom(_ index: Int, _ name: String, line: Int, enabled: Bool? = nil, repeatDays: RepeatDays? = nil,
                     schedule: ReminderSchedule? = nil, lunch: LunchBreak? = nil, notes: String? = nil) -> ManifestReminder {
    reminder(.custom, path: "reminders.custom[\(index)]", line: line, name: name, enabled: enabled,
             repeatDays: repeatDays, schedule: schedule, lunch: lunch, notes: notes)
  }

  public static func reminders(line: Int = 2, sedentary: ManifestReminder? = nil, drinking: ManifestReminder? = nil,
                        medicine: ManifestReminder? = nil, custom: [ManifestReminder]? = nil,
                        customLine: Int = 30) -> ManifestReminders {
    ManifestReminders(position: at(line, 1), sedentary: sedentary, drinking: drinking, medicine: medicine,
                      custom: custom.map { Located($0, at: at(customLine, 3)) })
  }

  public static func contact(_ path: String, _ name: String, _ phone: String, line: Int, shortName: String? = nil) -> ManifestContact {
    let derived = name.first.map { String($0).uppercased() } ?? "#"
    return ManifestContact(position: at(line, 5), path: path, name: Located(name, at: at(line, 13)),
                           phone: Located(phone, at: at(line, 30)), shortName: shortName ?? derived,
                           shortNameIsExplicit: shortName != nil)
  }

  /// `contacts:` at `line` with one contact per following line.
  public static func contacts(line: Int = 50, _ entries: [(String, String)]) -> Located<[ManifestContact]> {
    Located(entries.enumerated().map { index, entry in
      contact("contacts[\(index)]", entry.0, entry.1, line: line + 1 + index)
    }, at: at(line, 1))
  }

  public static func emergency(line: Int = 80, sos: Bool? = nil, contacts: [(String, String)]? = nil) -> ManifestEmergency {
    ManifestEmergency(position: at(line, 1), isSosOn: sos.map { Located($0, at: at(line + 1, 8)) },
                      contacts: contacts.map { entries in
                        Located(entries.enumerated().map { index, entry in
                          contact("emergency.contacts[\(index)]", entry.0, entry.1, line: line + 3 + index)
                        }, at: at(line + 2, 3))
                      })
  }

  public static func manifest(reminders: ManifestReminders? = nil, contacts: Located<[ManifestContact]>? = nil,
                       emergency: ManifestEmergency? = nil) -> Manifest {
    Manifest(file: file, reminders: reminders, contacts: contacts, emergency: emergency)
  }
}
