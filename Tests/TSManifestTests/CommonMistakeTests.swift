import Testing
import TSManifest
import TSModel
import TSTestSupport

/// Every mistake of issue 24's "Common mistakes" paragraph, answered with the corrected spelling
/// at the exact column (docs/manifest.md "Common mistakes and their fixes"). 1️⃣ marks where the
/// error points.
@Suite struct CommonMistakeTests {
  static let cases: [DiagnosticCase] = [
    DiagnosticCase(marked: "contacts:\n  1️⃣-{name: Anna, phone: \"+4477009001\"}\n", field: "",
                   message: "invalid YAML: mapping values are not allowed in this context; a list item needs a space after the dash: write - {name: Anna, phone: \"+4477009001\"}"),
    DiagnosticCase(marked: "contacts:\n  - {name: Anna, phone: 1️⃣“+44 7700 900123”}\n", field: "contacts[0].phone",
                   message: "\"“+44 7700 900123”\" is written in curly quotes (“ ”), which YAML does not read as quotes, so they are part of the value; write \"+44 7700 900123\" with straight quotes (\")"),
    DiagnosticCase(marked: "reminders:\n  medicine: {at: [1️⃣“08:00”]}\n", field: "reminders.medicine.at[0]",
                   message: "\"“08:00”\" is written in curly quotes (“ ”), which YAML does not read as quotes, so they are part of the value; write \"08:00\" with straight quotes (\")"),
    DiagnosticCase(marked: "reminders:\n  sedentary: {lunch_break: 1️⃣12:00-14:00}\n", field: "reminders.sedentary.lunch_break",
                   message: "\"12:00-14:00\" is not a lunch break: it is true, false or {start, end}; write lunch_break: {start: \"12:00\", end: \"14:00\"}"),
    DiagnosticCase(marked: "reminders:\n  medicine: {at: [1️⃣8am]}\n", field: "reminders.medicine.at[0]",
                   message: "\"8am\" is not a time of day (expected HH:MM, 00:00–23:59); write \"08:00\""),
    DiagnosticCase(marked: "reminders:\n  medicine: {at: [1️⃣8pm]}\n", field: "reminders.medicine.at[0]",
                   message: "\"8pm\" is not a time of day (expected HH:MM, 00:00–23:59); write \"20:00\""),
    DiagnosticCase(marked: "reminders:\n  medicine: {at: [1️⃣8.00]}\n", field: "reminders.medicine.at[0]",
                   message: "\"8.00\" is not a time of day (expected HH:MM, 00:00–23:59); write \"08:00\""),
    DiagnosticCase(marked: "reminders:\n  medicine: {at: [1️⃣0800]}\n", field: "reminders.medicine.at[0]",
                   message: "0800 is ambiguous; write a time as \"HH:MM\" or minutes from midnight without a leading zero: \"08:00\" if you meant hours and minutes"),
    DiagnosticCase(marked: "reminders:\n  medicine: {at: [1️⃣2000]}\n", field: "reminders.medicine.at[0]",
                   message: "2000 is not a time of day (expected minutes from midnight, 0–1439, or HH:MM); write \"20:00\" if you meant hours and minutes"),
    DiagnosticCase(marked: "reminders:\n  drinking: {period: {start: \"08:00\", end: \"20:00\", every: 1️⃣2 hours}}\n",
                   field: "reminders.drinking.period.every",
                   message: "\"2 hours\" is not a duration; write 2h (expected a duration such as 90m, 2h or 1h30m, or minutes as an integer)"),
    DiagnosticCase(marked: "reminders:\n  drinking: {period: {start: \"08:00\", end: \"20:00\", every: 1️⃣90 minutes}}\n",
                   field: "reminders.drinking.period.every",
                   message: "\"90 minutes\" is not a duration; write 1h30m (expected a duration such as 90m, 2h or 1h30m, or minutes as an integer)"),
    DiagnosticCase(marked: "reminders:\n  drinking: {repeat: 1️⃣Mon-Fri}\n", field: "reminders.drinking.repeat",
                   message: "\"Mon-Fri\" is not a repeat rule (a range of days is not written with a dash); write workday or [mon, tue, wed, thu, fri]"),
    DiagnosticCase(marked: "reminders:\n  drinking: {repeat: 1️⃣Mon-Wed}\n", field: "reminders.drinking.repeat",
                   message: "\"Mon-Wed\" is not a repeat rule (a range of days is not written with a dash); write [mon, tue, wed]"),
    DiagnosticCase(marked: "contacts:\n  - {name: Anna, phone: \"+44 771️⃣OO 900123\"}\n", field: "contacts[0].phone",
                   message: "\"+44 77OO 900123\" has the letter O where a digit belongs; write \"+44 7700 900123\" if you meant zero (tsapply never changes a number itself)"),
    DiagnosticCase(marked: "contacts:\n  - {name: Anna, phone: +44771️⃣O0900123}\n", field: "contacts[0].phone",
                   message: "\"+4477O0900123\" has the letter O where a digit belongs; write \"+447700900123\" if you meant zero (tsapply never changes a number itself)"),
    DiagnosticCase(marked: "reminders:\n  drinking: {period: {start: \"08:00\", end: \"20:00\", every: 1️⃣2}}\n",
                   field: "reminders.drinking.period.every",
                   message: "every: 2 without a unit is 2 minutes, most likely meant as hours; write 2h for two hours, or write minutes with their unit, such as 5m (2m if you do mean 2 minutes)"),
    // Fresh-eyes findings: mistakes answered without the fix.
    DiagnosticCase(marked: "reminders:\n  medicine: {at: [1️⃣\"24:00\"]}\n", field: "reminders.medicine.at[0]",
                   message: "\"24:00\" is not a time of day (expected HH:MM, 00:00–23:59); midnight is \"00:00\", and the day's last minute \"23:59\""),
    // A period's end of "24:00": "00:00" would be refused next (a period cannot cross midnight), so
    // the advice is the day's last minute alone (fresh-eyes fe101).
    DiagnosticCase(marked: "reminders:\n  drinking: {period: {start: \"08:00\", end: 1️⃣\"24:00\", every: 2h}}\n",
                   field: "reminders.drinking.period.end",
                   message: "\"24:00\" is not a time of day (expected HH:MM, 00:00–23:59); a period ends within its day: write \"23:59\" to end it at midnight"),
    DiagnosticCase(marked: "reminders:\n  sedentary: {lunch_break: {start: \"12:00\", end: 1️⃣\"24\"}}\n",
                   field: "reminders.sedentary.lunch_break.end",
                   message: "\"24\" is not a time of day (expected HH:MM, 00:00–23:59); a period ends within its day: write \"23:59\" to end it at midnight"),
    DiagnosticCase(marked: "reminders:\n  medicine: {at: [1️⃣\"0630\"]}\n", field: "reminders.medicine.at[0]",
                   message: "\"0630\" is not a time of day (expected HH:MM, 00:00–23:59); write \"06:30\""),
    DiagnosticCase(marked: "reminders:\n  drinking: {period: {start: \"08:00\", end: \"20:00\", every: 1️⃣1h30}}\n",
                   field: "reminders.drinking.period.every",
                   message: "\"1h30\" is not a duration; write 1h30m (expected a duration such as 90m, 2h or 1h30m, or minutes as an integer)"),
    DiagnosticCase(marked: "reminders:\n  drinking: {repeat: 1️⃣\"Mon,Wed,Fri\"}\n", field: "reminders.drinking.repeat",
                   message: "\"Mon,Wed,Fri\" is not a repeat rule (several days are a list); write [mon, wed, fri]"),
    DiagnosticCase(marked: "reminders:\n  drinking: {repeat: 1️⃣mon wed fri}\n", field: "reminders.drinking.repeat",
                   message: "\"mon wed fri\" is not a repeat rule (several days are a list); write [mon, wed, fri]"),
    DiagnosticCase(marked: "reminders:\n  drinking: {repeat: [1️⃣tues]}\n", field: "reminders.drinking.repeat[0]",
                   message: "\"tues\" is not a day name (expected mon…sun or monday…sunday); did you mean \"tue\"?"),
    DiagnosticCase(marked: "reminders:\n  drinking: {repeat: [1️⃣Thurs]}\n", field: "reminders.drinking.repeat[0]",
                   message: "\"Thurs\" is not a day name (expected mon…sun or monday…sunday); did you mean \"thu\"?"),
    DiagnosticCase(marked: "reminders:\n  drinking: {repeat: [1️⃣Mo]}\n", field: "reminders.drinking.repeat[0]",
                   message: "\"Mo\" is not a day name (expected mon…sun or monday…sunday); did you mean \"mon\"?"),
    DiagnosticCase(marked: "contacts:\n  - {name: Anna, phone: 1️⃣\"+44 7700–900001\"}\n", field: "contacts[0].phone",
                   message: "\"+44 7700–900001\" contains \"–\"; a phone number holds digits 0–9, one leading '+', and spaces, dashes, dots or parentheses as formatting; write \"+44 7700-900001\" with a plain dash (-)"),
    .valid("reminders:\n  drinking: {period: {start: \"08:00\", end: \"20:00\", every: 2m}}\n"),
    .valid("reminders:\n  drinking: {period: {start: \"08:00\", end: \"20:00\", every: 5}}\n"),
  ]

  @Test(arguments: cases)
  func answersWithTheFix(_ row: DiagnosticCase) { row.check() }
}
