import Testing
import TSManifest
import TSModel
import TSTestSupport

/// The list items that are not entries of their own (docs/manifest.md "Removing an inherited
/// entry", "One contact in both lists"): each mistake is an error at its place, with the fix.
@Suite struct ListEntryTests {
  static let desk = "contacts:\n  - {name: Ward desk, phone: \"+15550100\"}\n"

  static let cases: [DiagnosticCase] = [
    .valid("reminders:\n  custom:\n    - {name: Lunch, remove: true}\n    - {name: Walk, at: [\"19:30\"]}\n"),
    // Only removals, in a file of its own: the list is empty, and the watch's entries all go.
    DiagnosticCase(marked: "reminders:\n  1️⃣custom:\n    - {name: Lunch, remove: true}\n", field: "reminders.custom",
                   message: "holds only removals and this file stands alone, so it asks for no custom reminders at all: every one on the watch will be deleted; list the ones to keep, or leave reminders.custom out to leave them unmanaged",
                   severity: .warning),
    .valid(desk + "emergency:\n  sos: true\n  contacts:\n    - {contact: Ward desk}\n"),
    .valid("contacts:\n  - {name: Night nurse, remove: true}\n  - {name: Ward desk, phone: \"+15550100\"}\n"),
    DiagnosticCase(marked: "contacts:\n  - {name: Ward desk, remove: true, 1️⃣phone: \"+15550100\"}\n",
                   field: "contacts[0].phone",
                   message: "an entry with remove: true holds only its name (it removes the contact of that name); leave out phone"),
    DiagnosticCase(marked: "reminders:\n  custom:\n    - {name: Lunch, remove: 1️⃣false}\n", field: "reminders.custom[0].remove",
                   message: "remove: false removes nothing; leave the key out, or write remove: true"),
    DiagnosticCase(marked: "reminders:\n  custom:\n    - 1️⃣{remove: true}\n", field: "reminders.custom[0]",
                   message: "name is required with remove: true (the name of the entry to remove)"),
    DiagnosticCase(marked: "reminders:\n  custom:\n    - {name: Lunch, at: [\"12:00\"]}\n    - {name: 1️⃣Lunch, remove: true}\n",
                   field: "reminders.custom[1]",
                   message: "\"Lunch\" is also given in this list; keep the entry or its removal, not both"),
    DiagnosticCase(marked: desk + "  - 1️⃣{contact: Ward desk}\n", field: "contacts[1]",
                   message: "contact: refers to a contact of this list, so it is written under emergency.contacts; here write name and phone"),
    DiagnosticCase(marked: desk + "emergency:\n  contacts:\n    - {contact: Ward desk, 1️⃣phone: \"+15550100\"}\n",
                   field: "emergency.contacts[0].phone",
                   message: "a reference (contact: NAME) takes the contact's name, phone and short name from contacts:; leave out phone, or write the contact out without contact:"),
    // A reference to a contact whose declaration has an error: only that error, not "none of that name is declared".
    DiagnosticCase(marked: "contacts:\n  - {name: Anna (daughter), phone: \"+44 771️⃣OO 900123\"}\nemergency:\n  contacts:\n    - {contact: Anna (daughter)}\n",
                   field: "contacts[0].phone",
                   message: "\"+44 77OO 900123\" has the letter O where a digit belongs; write \"+44 7700 900123\" if you meant zero (tsapply never changes a number itself)"),
    DiagnosticCase(marked: desk + "emergency:\n  contacts:\n    - {contact: 1️⃣Ward dsk}\n", field: "emergency.contacts[0].contact",
                   message: "refers to the contact \"Ward dsk\", but none of that name is declared under contacts: in this file; declare it under contacts:, or write name and phone here instead of contact:; did you mean \"Ward desk\"?"),
    DiagnosticCase(marked: desk + "emergency:\n  contacts:\n    - {name: Ward desk, phone: \"+15550100\"}\n    - {contact: 1️⃣Ward desk}\n",
                   field: "emergency.contacts[1]",
                   message: "duplicate contact \"Ward desk\": also listed on line 5, column 7 of watch.yaml"),
    // A bare name, and a name with more to it than the declared one: the fix offered.
    DiagnosticCase(marked: desk + "emergency:\n  contacts:\n    - 1️⃣Ward desk\n", field: "emergency.contacts[0]",
                   message: "expected a mapping with keys name, phone, short_name, found text; to name a contact declared under contacts:, write - {contact: Ward desk}, or write it out: - {name: Ward desk, phone: \"…\"}"),
    DiagnosticCase(marked: desk + "emergency:\n  contacts:\n    - {contact: 1️⃣Ward desk (nights)}\n", field: "emergency.contacts[0].contact",
                   message: "refers to the contact \"Ward desk (nights)\", but none of that name is declared under contacts: in this file; declare it under contacts:, or write name and phone here instead of contact:; did you mean \"Ward desk\"?"),
    // The other order: the reference first, the same contact written out after it.
    DiagnosticCase(marked: desk + "emergency:\n  contacts:\n    - {contact: Ward desk}\n    - 1️⃣{name: Ward desk, phone: \"+15550100\"}\n",
                   field: "emergency.contacts[1]",
                   message: "duplicate contact \"Ward desk\": also listed on line 5, column 17 of watch.yaml (as contact: Ward desk)"),
    // A reference must name one contact: a name declared twice with different phones, or two
    // names the watch stores alike (cut to 32 bytes), is an error, not the last one silently.
    DiagnosticCase(marked: "contacts:\n  - {name: Anna, phone: \"+447700900001\"}\n  - {name: Anna, phone: \"+447700900002\"}\n"
                     + "emergency:\n  sos: true\n  contacts: [{contact: 1️⃣Anna}]\n",
                   field: "emergency.contacts[0].contact",
                   message: "refers to the contact \"Anna\", but this name is declared 2 times (watch.yaml lines 2 and 3) with different phones, so it could be either; give each its own name, or write name and phone here instead of contact:"),
  ]

  /// A reference with a typo to a contact declared with an error: both errors, the reference's
  /// with the closest name, said to have an error of its own (fresh-eyes finding: no "did you
  /// mean", though a valid contact of that name got one).
  @Test func aMisspelledReferenceToAContactWithAnErrorSuggestsItsName() {
    let result = load("contacts:\n  - {name: Anna (daughter), phone: \"+44 77OO 900123\"}\nemergency:\n  contacts:\n    - {contact: Ana (daughter)}\n")
    #expect(result.diagnostics.map(\.field) == ["contacts[0].phone", "emergency.contacts[0].contact"], "\(result.diagnostics)")
    #expect(result.diagnostics.last?.position == SourcePosition(file: "watch.yaml", line: 5, column: 17), "\(result.diagnostics)")
    #expect(result.diagnostics.last?.message == "refers to the contact \"Ana (daughter)\", but none of that name is declared under contacts: in this "
      + "file; declare it under contacts:, or write name and phone here instead of contact:; did you mean \"Anna (daughter)\"? (declared with "
      + "an error of its own: fix that too)", "\(result.diagnostics)")
  }

  /// A reference to a contact whose name the watch stores cut (over 32 bytes) names that
  /// contact: it was dropped from the emergency list (and `sos: true` then said "no emergency
  /// contact").
  @Test func aReferenceToTwoNamesStoredAlikeIsAnError() {
    let result = load("contacts:\n  - {name: Margaret Elizabeth Featherstonehaugh, phone: \"+447700900001\"}\n"
                      + "  - {name: Margaret Elizabeth Featherstonehaughs, phone: \"+447700900002\"}\n"
                      + "emergency:\n  sos: true\n  contacts: [{contact: Margaret Elizabeth Featherstonehaugh}]\n")
    #expect(result.manifest == nil)
    #expect(result.diagnostics.filter { $0.severity == .error }.map(\.description) == [
      "watch.yaml:6:24: error: emergency.contacts[0].contact: refers to the contact \"Margaret Elizabeth Featherstonehaugh\", but the watch stores 2 contacts declared in watch.yaml lines 2 and 3 as \"Margaret Elizabeth Featherstoneh\" (names cut to 32 bytes) with different phones, so it could be either; give each a name that differs in its first 32 bytes, or write name and phone here instead of contact:",
    ])
  }

  @Test func aReferenceToALongNameNamesThatContact() throws {
    let result = load("contacts:\n  - {name: \"Margaret Elizabeth Featherstonehaugh\", phone: \"+44 7700 900002\"}\n"
                      + "emergency:\n  sos: true\n  contacts:\n    - {contact: \"Margaret Elizabeth Featherstonehaugh\"}\n")
    let manifest = try #require(result.manifest, "\(result.diagnostics)")
    #expect(manifest.emergency?.contacts?.value.map { "\($0.name.value) \($0.phone.value)" } == ["Margaret Elizabeth Featherstoneh +447700900002"])
    #expect(result.diagnostics.map(\.severity) == [.warning], "\(result.diagnostics)")
  }

  @Test(arguments: cases)
  func reports(_ row: DiagnosticCase) { row.check() }

  @Test func aRemovalIsKeptAndTheListHoldsOnlyEntries() throws {
    let manifest = try #require(load("contacts:\n  - {name: Night nurse, remove: true}\n  - {name: Ward desk, phone: \"+15550100\"}\n").manifest)
    #expect(manifest.contacts?.value.map(\.name.value) == ["Ward desk"])
    #expect(manifest.removals.map { "\($0.list.rawValue) \($0.name.value) \($0.path)" } == ["contacts Night nurse contacts[0]"])
  }
}
