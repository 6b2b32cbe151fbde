import Testing
import TSManifest
import TSModel
import TSTestSupport

/// Input written at the wrong place, answered with where it belongs and how to move it
/// (`MistakeHints.misplacedTimePoints`, `MistakeHints.splitContact`; docs/manifest.md "Common
/// mistakes and their fixes"). 1️⃣ marks where the error points.
@Suite struct MisplacedInputTests {
  static let example = "at: is a list of times under one reminder, e.g. medicine: {at: [\"08:00\"]}"
  static let atParentLevel = "unknown key \"at\"; at: cannot stand directly under reminders:; it belongs to one reminder: "
    + "indent it under the reminder it is for (sedentary:, drinking:, medicine: or an item of custom:); \(example)"

  /// `at:` at each place people put it by mistake.
  static let timePoints: [DiagnosticCase] = [
    DiagnosticCase(marked: "reminders:\n  1️⃣at: [\"08:00\"]\n", field: "reminders.at", message: atParentLevel),
    // Dedented one level too far, below the reminder it was meant for.
    DiagnosticCase(marked: "reminders:\n  medicine:\n    repeat: everyday\n  1️⃣at: [\"08:00\"]\n", field: "reminders.at", message: atParentLevel),
    DiagnosticCase(marked: "reminders: {medicine: {enabled: true}, 1️⃣at: [\"08:00\"]}\n", field: "reminders.at", message: atParentLevel),
    DiagnosticCase(marked: "1️⃣at: [\"08:00\"]\n", field: "at",
                   message: "unknown key \"at\"; at: cannot stand at the top level; it belongs to one reminder: indent it under the "
                     + "reminder it is for (sedentary:, drinking:, medicine: or an item of custom:); \(example)"),
    DiagnosticCase(marked: "reminders:\n  medicine:\n    repeat:\n      1️⃣at: [\"08:00\"]\n", field: "reminders.medicine.repeat.at",
                   message: "at: does not go under repeat:; write it beside repeat: at the reminder's level, not indented under it; \(example)"),
    DiagnosticCase(marked: "reminders:\n  drinking: {repeat: {1️⃣at: [\"08:00\"]}}\n", field: "reminders.drinking.repeat.at",
                   message: "at: does not go under repeat:; write it beside repeat: at the reminder's level, not indented under it; \(example)"),
    DiagnosticCase(marked: "reminders:\n  drinking:\n    period:\n      start: \"08:00\"\n      end: \"20:00\"\n      every: 1h\n      1️⃣at: [\"09:00\"]\n",
                   field: "reminders.drinking.period.at",
                   message: "unknown key \"at\"; at: does not go inside period:; a reminder has either period or at: to remind at fixed times, "
                     + "replace period: with at: under the reminder; \(example)"),
    DiagnosticCase(marked: "reminders:\n  sedentary: {lunch_break: {start: \"12:00\", end: \"13:00\", 1️⃣at: [\"12:30\"]}}\n",
                   field: "reminders.sedentary.lunch_break.at",
                   message: "unknown key \"at\"; at: does not go under lunch_break:; write it beside lunch_break: at the reminder's level, "
                     + "not indented under it; \(example)"),
    DiagnosticCase(marked: "reminders:\n  custom:\n    1️⃣at: [\"08:00\"]\n", field: "reminders.custom.at",
                   message: "custom: is a list of reminders, each with its own at:; write - {name: Walk, at: [\"19:30\"]} under custom:; \(example)"),
    DiagnosticCase(marked: "1️⃣reminders.at: [\"08:00\"]\n", field: "reminders.at",
                   message: "unknown key \"reminders.at\"; \"reminders.at\" is one key: YAML does not nest keys written with dots; write at: "
                     + "indented under the reminder it is for (sedentary:, drinking:, medicine: or an item of custom:); \(example)"),
    DiagnosticCase(marked: "1️⃣reminders.medicine.at: [\"08:00\"]\n", field: "reminders.medicine.at",
                   message: "unknown key \"reminders.medicine.at\"; \"reminders.medicine.at\" is one key: YAML does not nest keys written "
                     + "with dots; write at: indented under medicine:; \(example)"),
    DiagnosticCase(marked: "reminders:\n  1️⃣medicine.at: [\"08:00\"]\n", field: "reminders.medicine.at",
                   message: "unknown key \"medicine.at\"; \"medicine.at\" is one key: YAML does not nest keys written with dots; write at: "
                     + "indented under medicine:; \(example)"),
    // Where `at:` belongs: no hint, no error.
    .valid("reminders:\n  medicine: {repeat: everyday, at: [\"08:00\"]}\n  custom:\n    - {name: Walk, at: [\"19:30\"]}\n"),
  ]

  @Test(arguments: timePoints)
  func saysWhereAtBelongs(_ row: DiagnosticCase) { row.check() }

  static let periodExample = "e.g. period: {start: \"09:00\", end: \"18:00\", every: 90m}"

  /// A period's keys written directly under the reminder (fresh-eyes fe96 #9: `every: 90m`
  /// was only an unknown key).
  static let periodKeys: [DiagnosticCase] = [
    DiagnosticCase(marked: "reminders:\n  drinking:\n    1️⃣every: 90m\n", field: "reminders.drinking.every",
                   message: "unknown key \"every\"; every: goes inside period:, with start: and end:; \(periodExample)"),
    DiagnosticCase(marked: "reminders:\n  custom:\n    - {name: Walk, 1️⃣start: \"09:00\"}\n", field: "reminders.custom[0].start",
                   message: "unknown key \"start\"; start: goes inside period:, with end: and every:; \(periodExample)"),
    DiagnosticCase(marked: "reminders:\n  sedentary: {period: {start: \"09:00\", end: \"18:00\", every: 1h}, 1️⃣end: \"19:00\"}\n",
                   field: "reminders.sedentary.end",
                   message: "unknown key \"end\"; end: goes inside period:, with start: and every:; \(periodExample)"),
  ]

  @Test(arguments: periodKeys)
  func saysWhereAPeriodsKeysBelong(_ row: DiagnosticCase) { row.check() }

  /// A reminder's keys written at its own level instead of under it: the reminder "has no
  /// value", and each key is unknown in the reminders section. Both say to indent the keys
  /// under the reminder; the reminder's message no longer only says to remove its key, which
  /// would leave the reminder unmanaged (fresh-eyes finding).
  @Test(arguments: [("medicine", ["enabled", "at"]), ("drinking", ["name", "repeat", "notes"]), ("sedentary", ["period"])])
  func aRemindersKeysWrittenBesideItAreToBeIndentedUnderIt(kind: String, keys: [String]) {
    let lines = keys.map { key in
      switch key {
      case "at": "  at: [\"08:00\"]\n"
      case "period": "  period: {start: \"09:00\", end: \"17:00\", every: 1h}\n"
      case "repeat": "  repeat: everyday\n"
      case "enabled": "  enabled: true\n"
      default: "  \(key): Tea\n"
      }
    }
    let result = load("reminders:\n  \(kind):\n" + lines.joined())
    let empty = result.diagnostics.first { $0.field == "reminders.\(kind)" }
    #expect(empty?.message == "has no value; the keys below it (\(keys.joined(separator: ", "))) stand beside it, not under it: indent them "
      + "under \(kind): to give them to it, or remove the key to leave the \(kind) reminder unmanaged", "\(result.diagnostics)")
    // At the reminder's empty value (after its colon), and at each key.
    #expect(empty?.position == SourcePosition(file: "watch.yaml", line: 2, column: "  \(kind):".count + 1), "\(result.diagnostics)")
    for (index, key) in keys.enumerated() where key != "at" {
      let stray = result.diagnostics.first { $0.field == "reminders.\(key)" }
      #expect(stray?.position == SourcePosition(file: "watch.yaml", line: 3 + index, column: 3), "\(result.diagnostics)")
      #expect(stray?.message == "unknown key \"\(key)\"; \(key): belongs to one reminder: indent it under the reminder it is for "
        + "(sedentary:, drinking:, medicine: or an item of custom:)", "\(result.diagnostics)")
    }
    #expect(result.manifest == nil)
  }

  static func split(_ first: String, _ second: String) -> String {
    "this entry and the one above look like one contact split over two dashes (one has only \(first):, this one only \(second):); "
      + "remove the - before \(second): and indent \(second): under \(first):, at the same column"
  }

  /// One contact written over two dashes, in both orders, block and flow, in both lists: the
  /// error points at the second dash.
  static let splitContacts: [DiagnosticCase] = [
    DiagnosticCase(marked: "contacts:\n  - name: Alice\n  1️⃣- phone: \"+1 555 0100\"\n", field: "contacts[1]", message: split("name", "phone")),
    DiagnosticCase(marked: "contacts:\n  - phone: \"+1 555 0100\"\n  1️⃣- name: Alice\n", field: "contacts[1]", message: split("phone", "name")),
    DiagnosticCase(marked: "contacts:\n  - {name: Alice}\n  1️⃣- {phone: \"+15550100\"}\n", field: "contacts[1]", message: split("name", "phone")),
    DiagnosticCase(marked: "contacts:\n  - {name: Bob, phone: \"+15550101\"}\n  - name: Alice\n  1️⃣- phone: \"+1 555 0100\"\n"
                     + "  - {name: Carol, phone: \"+15550102\"}\n", field: "contacts[2]", message: split("name", "phone")),
    DiagnosticCase(marked: "emergency:\n  contacts:\n    - name: Alice\n    1️⃣- phone: \"+1 555 0100\"\n", field: "emergency.contacts[1]",
                   message: split("name", "phone")),
    DiagnosticCase(marked: "emergency:\n  sos: true\n  contacts:\n    - phone: \"+1 555 0100\"\n    1️⃣- name: Alice\n",
                   field: "emergency.contacts[1]", message: split("phone", "name")),
    // A flow list has no dash: the error points at the second item.
    DiagnosticCase(marked: "contacts: [{name: Alice}, 1️⃣{phone: \"+15550100\"}]\n", field: "contacts[1]", message: split("name", "phone")),
    // A list the reader does not capture (an anchor in it) is decoded from the tree: the same answer.
    DiagnosticCase(marked: "contacts:\n  - &a {name: Bob, phone: \"+15550101\"}\n  - name: Alice\n  1️⃣- phone: \"+1 555 0100\"\n",
                   field: "contacts[2]", message: split("name", "phone")),
  ]

  @Test(arguments: splitContacts)
  func answersASplitContactOnce(_ row: DiagnosticCase) {
    row.check()
    // The same diagnostics whether the list is captured from the reader's events or read from the tree.
    let text = Array(MarkedText(row.marked).text.utf8)
    let captured = ManifestLoader.load(bytes: text, file: "watch.yaml")
    let tree = ManifestLoader.load(bytes: text, file: "watch.yaml", capturesContactLists: false)
    #expect(captured.diagnostics == tree.diagnostics)
  }

  /// Items that are not one contact split in two keep their own messages.
  @Test(arguments: [
    ("contacts:\n  - name: Alice\n  - {name: Bob, phone: \"+15550101\"}\n  - phone: \"+15550100\"\n",
     ["contacts[0]: phone is required", "contacts[2]: name is required"]),
    ("contacts:\n  - name: Alice\n  - name: Bob\n", ["contacts[0]: phone is required", "contacts[1]: phone is required"]),
    ("contacts:\n  - {name: Alice, short_name: Al}\n  - phone: \"+15550100\"\n",
     ["contacts[0]: phone is required", "contacts[1]: name is required"]),
  ])
  func leavesOtherIncompleteItems(_ text: String, _ expected: [String]) {
    for captures in [true, false] {
      let result = ManifestLoader.load(bytes: Array(text.utf8), file: "watch.yaml", capturesContactLists: captures)
      #expect(result.diagnostics.map { "\($0.field): \($0.message)" } == expected)
    }
  }
}
