import Testing
import TSManifest
import TSModel
import TSTestSupport

/// Structure: unknown keys, null sections, empty files, versions, wrong types, and the scalar
/// typing traps of YAML 1.1 (`06:30`, `phone: 0123456`, `name: No`, `yes`).
@Suite struct StructureTests {
  static let cases: [DiagnosticCase] = [
    .valid("version: 1\ncontacts: []\n"),
    .valid("reminders: {}\n"),
    DiagnosticCase(marked: "1️⃣contact: []\n", field: "contact", message: "unknown key \"contact\"; did you mean \"contacts\"?"),
    DiagnosticCase(marked: "1️⃣remiders: {}\n", field: "remiders", message: "unknown key \"remiders\"; did you mean \"reminders\"?"),
    DiagnosticCase(marked: "reminders:\n  1️⃣sedentry: {enabled: true}\n", field: "reminders.sedentry",
                   message: "unknown key \"sedentry\"; did you mean \"sedentary\"?"),
    DiagnosticCase(marked: "reminders:\n  drinking:\n    1️⃣lunch: false\n", field: "reminders.drinking.lunch",
                   message: "unknown key \"lunch\" (expected one of: name, enabled, repeat, period, at, lunch_break, notes)"),
    DiagnosticCase(marked: "1️⃣", field: "", message: "manifest is empty; write at least one of the sections reminders, contacts, emergency"),
    DiagnosticCase(marked: "1️⃣# just a comment\n", field: "",
                   message: "manifest is empty; write at least one of the sections reminders, contacts, emergency"),
    DiagnosticCase(marked: "1️⃣---\n", field: "",
                   message: "manifest is empty; write at least one of the sections reminders, contacts, emergency"),
    DiagnosticCase(marked: "contacts:1️⃣\n", field: "contacts",
                   message: "has no value; remove the key to leave the watch's contacts unmanaged, or write contacts: [] to remove them all"),
    DiagnosticCase(marked: "reminders: 1️⃣~\n", field: "reminders",
                   message: "has no value; remove the key to leave reminders unmanaged, or list reminders under it"),
    DiagnosticCase(marked: "emergency: 1️⃣null\n", field: "emergency",
                   message: "has no value; remove the key to leave emergency contacts and SOS unmanaged, or give sos and contacts under it"),
    DiagnosticCase(marked: "reminders:\n  sedentary:1️⃣\n", field: "reminders.sedentary",
                   message: "has no value; remove the key to leave the sedentary reminder unmanaged"),
    DiagnosticCase(marked: "version: 1️⃣2\n", field: "version", message: "unsupported manifest version 2; this tsapply reads version 1"),
    DiagnosticCase(marked: "version: 1️⃣\"1\"\n", field: "version", message: "\"1\" is quoted, so it is text; write version: 1 without quotes"),
    DiagnosticCase(marked: "version: 1️⃣'1'\ncontacts: []\n", field: "version", message: "\"1\" is quoted, so it is text; write version: 1 without quotes"),
    DiagnosticCase(marked: "version: 1️⃣\"one\"\n", field: "version", message: "expected the manifest format version 1, found \"one\""),
    DiagnosticCase(marked: "1️⃣- contacts\n", field: "",
                   message: "expected a mapping with keys version, reminders, contacts, emergency, found a list"),
    DiagnosticCase(marked: "contacts: 1️⃣{name: A}\n", field: "contacts",
                   message: "expected a list of contacts, e.g. - {name: Alex, phone: \"+15550100\"}, found a mapping"),
    DiagnosticCase(marked: "contacts:\n  - 1️⃣Alex\n", field: "contacts[0]",
                   message: "expected a mapping with keys name, phone, short_name, found text"),
    DiagnosticCase(marked: "contacts: []\n1️⃣[a]: 1\n", field: "", message: "keys must be plain words, found a list as a key"),
  ]

  @Test(arguments: cases)
  func structure(_ row: DiagnosticCase) { row.check() }

  @Test func unquotedTimeIsNotSexagesimal() throws {
    let result = load("reminders:\n  medicine:\n    at: [06:30]\n")
    #expect(result.manifest?.reminders?.medicine?.schedule?.value == .timePoints([try #require(MinuteOfDay(hour: 6, minute: 30))]))
  }

  @Test func unquotedPhoneKeepsItsLeadingZeroAndPlus() throws {
    let contacts = try #require(load("contacts:\n  - {name: A, phone: 0123456}\n  - {name: B, phone: +15550100}\n").manifest?.contacts?.value)
    #expect(contacts.map(\.phone.value) == ["0123456", "+15550100"])
  }

  @Test func noIsAName() throws {
    let contact = try #require(load("contacts:\n  - {name: No, phone: \"1\"}\n").manifest?.contacts?.value.first)
    #expect(contact.name.value == "No")
  }

  @Test func everyFieldKeepsItsPosition() throws {
    let text = MarkedText("""
      1️⃣reminders:
        custom:
          - 2️⃣name: 3️⃣Walk
            repeat: 4️⃣[sat]
            at: 5️⃣["19:30"]
      6️⃣contacts:
        - 7️⃣{name: 8️⃣Alex, phone: 9️⃣"1"}

      """)
    let manifest = try #require(load(text.text).manifest)
    let walk = try #require(manifest.reminders?.custom?.value.first)
    #expect(manifest.reminders?.position == text.position("1️⃣"))
    #expect(walk.position == text.position("2️⃣"))
    #expect(walk.name?.position == text.position("3️⃣"))
    #expect(walk.repeatDays?.position == text.position("4️⃣"))
    #expect(walk.schedule?.position == text.position("5️⃣"))
    #expect(walk.path == "reminders.custom[0]")
    #expect(walk.kind == .custom)
    #expect(manifest.contacts?.position == text.position("6️⃣"))
    let alex = try #require(manifest.contacts?.value.first)
    #expect(alex.position == text.position("7️⃣"))
    #expect(alex.name.position == text.position("8️⃣"))
    #expect(alex.phone.position == text.position("9️⃣"))
  }

  @Test func everyProblemIsReportedSortedByPosition() {
    let result = load("reminders:\n  drinking:\n    enabled: yes\n    repeat: weekday\ncontacts:\n  - {name: A, phone: abc}\n")
    #expect(result.diagnostics.map { "\($0.position?.line ?? 0):\($0.position?.column ?? 0)" } == ["3:14", "4:13", "6:22"])
    #expect(result.manifest == nil)
  }

  @Test func absentSectionsAreUnmanaged() throws {
    let manifest = try #require(load("reminders:\n  drinking: {enabled: true}\n").manifest)
    #expect(manifest.contacts == nil)
    #expect(manifest.emergency == nil)
    #expect(manifest.reminders?.sedentary == nil)
    #expect(manifest.reminders?.custom == nil)
    let drinking = try #require(manifest.reminders?.drinking)
    #expect(drinking.schedule == nil && drinking.repeatDays == nil && drinking.notes == nil && drinking.lunchBreak == nil)
  }
}
