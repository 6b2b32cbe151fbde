extension PlatformTable {
  /// The platform table as a Markdown table, one column per platform, for docs/platforms.md
  /// (a test keeps the page's copy equal to this; `tsapply device profiles --markdown` prints it).
  public static func markdownTable(_ platforms: [DeviceCapabilities] = all) -> String {
    var rows: [(String, (DeviceCapabilities) -> String)] = [
      ("built-in reminders", { caps in
        let kinds = ReminderKind.builtIns.filter { caps.reminders[$0] != nil }
        return kinds.map { "\($0.rawValue) (\($0.builtInID ?? ""))" }.joined(separator: ", ")
      }),
      ("custom reminders", { caps in caps.reminders.maxCustomReminders == 0 ? "none" : "\(caps.reminders.maxCustomReminders)" }),
    ]
    for operation in [ReminderOperation.replaceAll, .setReminder, .deleteReminder, .createCustomTemplate] {
      rows.append(("`\(operation.rawValue)`", { $0.reminders.operations.contains(operation) ? "yes" : "2004" }))
    }
    rows += [
      ("`once` (repeat days 0)", { $0.reminders.supportsOnce ? "stored" : "refused" }),
      ("schedules", { caps in
        let kinds = ReminderKind.allCases.compactMap { caps.reminders[$0] }
        let points = kinds.contains { $0.timeTypes.contains(.point) }
        return points ? "time points (≤ \(caps.reminders.maxTimePoints)) or period" : "period only"
      }),
      ("repeat days", { caps in
        ReminderKind.allCases.compactMap { caps.reminders[$0] }.allSatisfy(\.storesRepeatDays) ? "stored" : "always every day"
      }),
      ("name / notes bytes", { caps in
        guard let kind = ReminderKind.allCases.compactMap({ caps.reminders[$0] }).first else { return "—" }
        guard let name = kind.nameMaxBytes, let notes = kind.notesMaxBytes else { return "not stored" }
        return "\(name) / \(notes), longer " + (kind.truncatesLongText ? "cut" : "refused (4002)")
      }),
      ("lunch break", { caps in
        let parts = ReminderKind.allCases.compactMap { kind -> String? in
          guard let storage = caps.reminders[kind] else { return nil }
          return "\(kind.rawValue): " + (storage.lunchBreak == .times ? "flag and times" : storage.lunchBreak == .flagOnly ? "flag only" : "none")
        }
        let distinct = Set(parts.map { $0.split(separator: ":").last.map(String.init) ?? "" })
        return distinct.count == 1 ? String(distinct.first ?? "").trimmingSpacesAround : parts.joined(separator: "; ")
      }),
      ("custom template", { caps in caps.reminders.customTemplate.map(templateText) ?? "—" }),
      ("contacts", { caps in caps.contacts.maxContacts == 0 ? "not supported (2004)" : "\(caps.contacts.maxContacts)" }),
      ("emergency contacts", { caps in caps.contacts.supportsEmergencyContacts ? "\(caps.contacts.maxEmergencyContacts)" : "none" }),
      ("contact name / phone bytes", { "\($0.contacts.nameMaxBytes) / \($0.contacts.phoneMaxBytes)" }),
      ("short names", { $0.contacts.storesShortName ? "stored" : "not stored" }),
      ("listeners: contacts / emergency / SOS", { caps in
        [caps.contacts.contactsChangedListener, caps.contacts.emergencyContactsChangedListener, caps.contacts.sosRequestListener]
          .map { $0 ? "yes" : "2004" }.joined(separator: " / ")
      }),
    ]
    var lines = ["| | " + platforms.map { "`\($0.profile)`" }.joined(separator: " | ") + " |",
                 "|---|" + platforms.map { _ in "---|" }.joined()]
    for (label, value) in rows {
      lines.append("| \(label) | " + platforms.map(value).joined(separator: " | ") + " |")
    }
    return lines.joined(separator: "\n") + "\n"
  }

  /// `"自定义提醒", on, every day, 08:00–20:00 every 60 min, lunch break on 12:00–14:00`.
  static func templateText(_ template: Reminder) -> String {
    func time(_ minutes: Int) -> String { MinuteOfDay(rawValue: minutes)?.description ?? "\(minutes)" }
    let name = template.reminderName.isEmpty ? "no name" : "\"\(template.reminderName)\""
    let lunch = template.isLunchBreakDNDEnabled ? "lunch break on" : "lunch break off"
    return "\(name), \(template.isEnabled ? "on" : "off"), \(template.repeatDays), "
      + "\(time(template.startTime))–\(time(template.endTime)) every \(template.interval) min, "
      + "\(lunch) \(time(template.lunchBreakDNDStartTime))–\(time(template.lunchBreakDNDEndTime))"
  }
}

extension String {
  fileprivate var trimmingSpacesAround: String {
    String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
  }
}
