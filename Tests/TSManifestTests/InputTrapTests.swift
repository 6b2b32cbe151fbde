import Testing
import TSManifest
import TSModel
import TSTestSupport

/// Input that surprised users and messages that misled them: each row is a manifest with the
/// one diagnostic it must give (position, field, message).
@Suite struct InputTrapTests {
  /// `count` contacts, one a line; the marker 1️⃣ before the name of contact `markedIndex`.
  static func contacts(_ count: Int, markedIndex: Int) -> String {
    "contacts:\n" + (0..<count).map { "  - {name: \($0 == markedIndex ? "1️⃣" : "")C\($0), phone: \"1\"}\n" }.joined()
  }

  static let nodeBounds: [DiagnosticCase] = [
    // 3 nodes (root, key, list) + 5 a contact: node 100 001 is contact 20 000's name (index 19 999).
    DiagnosticCase(marked: contacts(20_001, markedIndex: 19_999), field: "",
                   message: "the document has more than 100000 nodes (keys, values, lists and mappings), more than a manifest may hold; reading stopped"),
  ]

  static func medicineAt(_ value: String) -> String { "reminders:\n  medicine:\n    at: [\"06:00\", 1️⃣\(value)]\n" }
  static let minutes = "(an integer time counts minutes from midnight)"

  /// `minutes` (an integer time) "most likely meant as" `spoken`, written `meant`, being `time`.
  static func ambiguous(_ minutes: String, _ time: String, _ meant: String, _ spoken: String) -> String {
    "\(minutes) is \(time) \(Self.minutes), most likely meant as \(spoken); write \"\(meant)\" for \(spoken), or \"\(time)\" if you do mean \(time)"
  }

  /// A time of day written as an integer is minutes. 1–23 is an error naming both readings
  /// (medicine at 8 and 20 moved to 00:08 and 00:20 under --auto-approve, fresh-eyes finding);
  /// any other is valid and warned about, with the clock time it is and the "HH:MM" to write
  /// for the reading people usually mean.
  static let integerTimes: [DiagnosticCase] = [
    ("9", ambiguous("9", "00:09", "09:00", "nine o'clock")),
    ("12", ambiguous("12", "00:12", "12:00", "twelve o'clock")),
    ("21", ambiguous("21", "00:21", "21:00", "21:00")),
    ("1", ambiguous("1", "00:01", "01:00", "one o'clock")),
  ].map { DiagnosticCase(marked: medicineAt($0.0), field: "reminders.medicine.at[1]", message: $0.1) } + [
    ("800", "800 is 13:20 \(minutes); write \"08:00\" if you meant eight o'clock, or \"13:20\" to keep this time"),
    ("830", "830 is 13:50 \(minutes); write \"08:30\" if you meant 08:30, or \"13:50\" to keep this time"),
    ("100", "100 is 01:40 \(minutes); write \"01:00\" if you meant one o'clock, or \"01:40\" to keep this time"),
    ("1439", "1439 is 23:59 \(minutes); write \"14:39\" if you meant 14:39, or \"23:59\" to keep this time"),
    ("0", "0 is 00:00 \(minutes); write \"00:00\" to say so"),
    ("24", "24 is 00:24 \(minutes); write \"00:24\" to say so"),
    ("60", "60 is 01:00 \(minutes); write \"01:00\" to say so"),
    ("390", "390 is 06:30 \(minutes); write \"06:30\" to say so"),
    ("!!int 480", "480 is 08:00 \(minutes); write \"08:00\" to say so"),
  ].map { DiagnosticCase(marked: medicineAt($0.0), field: "reminders.medicine.at[1]", message: $0.1, severity: .warning) } + [
    DiagnosticCase(marked: "reminders:\n  drinking:\n    period: {start: 1️⃣600, end: \"20:00\", every: 1h}\n",
                   field: "reminders.drinking.period.start",
                   message: "600 is 10:00 \(minutes); write \"06:00\" if you meant six o'clock, or \"10:00\" to keep this time",
                   severity: .warning),
    DiagnosticCase(marked: "reminders:\n  drinking:\n    lunch_break: {start: \"11:00\", end: 1️⃣1300}\n",
                   field: "reminders.drinking.lunch_break.end",
                   message: "1300 is 21:40 \(minutes); write \"13:00\" if you meant 13:00, or \"21:40\" to keep this time",
                   severity: .warning),
    .valid(medicineAt("\"13:20\"")), .valid(medicineAt("08:00")),
  ]

  @Test(arguments: integerTimes)
  func integerTimesAreRefusedOrWarnedAbout(_ row: DiagnosticCase) { row.check() }

  static func drinkingEvery(_ value: String) -> String {
    "reminders:\n  drinking:\n    period: {start: \"08:00\", end: \"20:00\", every: 1️⃣\(value)}\n"
  }

  /// An integer interval under 5 is minutes, most likely meant as hours: an error asking for the unit.
  static let integerIntervals: [DiagnosticCase] = [
    ("2", "every: 2 without a unit is 2 minutes, most likely meant as hours; write 2h for two hours, or write minutes with their unit, such as 5m (2m if you do mean 2 minutes)"),
    ("1", "every: 1 without a unit is 1 minute, most likely meant as hours; write 1h for one hour, or write minutes with their unit, such as 5m (1m if you do mean 1 minute)"),
    ("4", "every: 4 without a unit is 4 minutes, most likely meant as hours; write 4h for four hours, or write minutes with their unit, such as 5m (4m if you do mean 4 minutes)"),
  ].map { DiagnosticCase(marked: drinkingEvery($0.0), field: "reminders.drinking.period.every", message: $0.1) }
    + [.valid(drinkingEvery("5")), .valid(drinkingEvery("2m")), .valid(drinkingEvery("2h")), .valid(drinkingEvery("90"))]

  @Test(arguments: integerIntervals)
  func smallIntegerIntervalsAreWarnedAbout(_ row: DiagnosticCase) { row.check() }

  /// The issue's example: a period meant as 09:00–21:00 every two hours is 00:09–00:21 every two
  /// minutes, and each of its three integers is an error saying so.
  @Test func aPeriodOfIntegersGetsAWarningForEach() {
    let text = MarkedText("reminders:\n  drinking:\n    period: {start: 1️⃣9, end: 2️⃣21, every: 3️⃣2}\n")
    let result = load(text.text)
    #expect(result.manifest == nil)
    #expect(result.diagnostics == [
      .error(at: text.position("1️⃣"), field: "reminders.drinking.period.start", Self.ambiguous("9", "00:09", "09:00", "nine o'clock")),
      .error(at: text.position("2️⃣"), field: "reminders.drinking.period.end", Self.ambiguous("21", "00:21", "21:00", "21:00")),
      .error(at: text.position("3️⃣"), field: "reminders.drinking.period.every",
             "every: 2 without a unit is 2 minutes, most likely meant as hours; write 2h for two hours, or write minutes with their unit, such as 5m (2m if you do mean 2 minutes)"),
    ])
  }

  static func custom(_ name: String) -> String { "reminders:\n  custom:\n    - name: 1️⃣\(name)\n      at: [\"08:00\"]\n" }
  static func contact(_ name: String, list: String = "contacts") -> String {
    let indent = list == "contacts" ? "" : "  "
    return (list == "contacts" ? "contacts:\n" : "emergency:\n  contacts:\n") + "\(indent)  - name: 1️⃣\(name)\n\(indent)    phone: \"1\"\n"
  }
  static func edge(_ written: String, _ edge: String, _ character: String, _ trimmed: String) -> String {
    "\"\(written)\" \(edge) with \(character); remove it (the watch keeps it, so \"\(written)\" and \"\(trimmed)\" would be different names)"
  }

  /// A name that begins or ends with white space or an invisible character is refused, naming it.
  static let namesWithEdges: [DiagnosticCase] = [
    DiagnosticCase(marked: custom("\"Walk \""), field: "reminders.custom[0].name", message: edge("Walk ", "ends", "U+0020 SPACE", "Walk")),
    DiagnosticCase(marked: custom("\"  Walk\""), field: "reminders.custom[0].name", message: edge("  Walk", "begins", "U+0020 SPACE", "Walk")),
    DiagnosticCase(marked: custom("\"Walk\u{00A0}\""), field: "reminders.custom[0].name",
                   message: edge("Walk\u{00A0}", "ends", "U+00A0 NO-BREAK SPACE", "Walk")),
    DiagnosticCase(marked: custom("\"Walk\u{200B}\""), field: "reminders.custom[0].name",
                   message: edge("Walk\u{200B}", "ends", "U+200B ZERO WIDTH SPACE", "Walk")),
    DiagnosticCase(marked: custom("\"\u{202E}Walk\""), field: "reminders.custom[0].name",
                   message: edge("\u{202E}Walk", "begins", "U+202E RIGHT-TO-LEFT OVERRIDE", "Walk")),
    DiagnosticCase(marked: "reminders:\n  drinking:\n    name: 1️⃣\"Drink \"\n", field: "reminders.drinking.name",
                   message: edge("Drink ", "ends", "U+0020 SPACE", "Drink")),
    DiagnosticCase(marked: contact("\"Mom \""), field: "contacts[0].name", message: edge("Mom ", "ends", "U+0020 SPACE", "Mom")),
    DiagnosticCase(marked: contact("\"\u{3000}李明\""), field: "contacts[0].name",
                   message: edge("\u{3000}李明", "begins", "U+3000 IDEOGRAPHIC SPACE", "李明")),
    DiagnosticCase(marked: contact("\"Sam\u{2009}\"", list: "emergency"), field: "emergency.contacts[0].name",
                   message: edge("Sam\u{2009}", "ends", "U+2009 THIN SPACE", "Sam")),
    DiagnosticCase(marked: "contacts:\n  - {name: Al, phone: \"1\", short_name: 1️⃣\" A\"}\n", field: "contacts[0].short_name",
                   message: edge(" A", "begins", "U+0020 SPACE", "A")),
    DiagnosticCase(marked: custom("\"\u{200B}\""), field: "reminders.custom[0].name",
                   message: "is blank (only white space and invisible characters); a name needs at least one visible character"),
    DiagnosticCase(marked: contact("\"\u{301}Emile\""), field: "contacts[0].name",
                   message: "\"\u{301}Emile\" begins with U+0301 COMBINING ACUTE ACCENT, a combining mark with no letter before it to sit on; the watch would show it on its own or drop it"),
    .valid("contacts:\n  - {name: \"E\u{301}mile\", phone: \"1\"}\n"),
    .valid("reminders:\n  custom:\n    - name: \"Evening walk\"\n      at: [\"08:00\"]\n"),
    .valid("contacts:\n  - {name: \"Gran ❤️\", phone: \"1\"}\n  - {name: 👨‍👩‍👧, phone: \"2\"}\n  - {name: \"山田\u{3000}太郎\", phone: \"3\"}\n"),
  ]

  @Test(arguments: namesWithEdges)
  func namesMayNotBeginOrEndWithWhiteSpace(_ row: DiagnosticCase) { row.check() }

  static let mappingValues = "invalid YAML: mapping values are not allowed in this context"
  static let quote = "a value that holds \": \" must be quoted"

  /// An unquoted value holding ": " keeps libyaml's position and message, with a hint that shows
  /// the line's key and value quoted.
  static let colonInValue: [DiagnosticCase] = [
    DiagnosticCase(marked: "reminders:\n  custom:\n    - name: Walk1️⃣: park\n      at: [\"08:00\"]\n", field: "",
                   message: "\(mappingValues); \(quote): name: \"Walk: park\""),
    DiagnosticCase(marked: "reminders:\n  custom:\n    - name: Walk1️⃣: park  # the long one\n      at: [\"08:00\"]\n", field: "",
                   message: "\(mappingValues); \(quote): name: \"Walk: park\""),
    DiagnosticCase(marked: "reminders:\n  sedentary:\n    notes: Stand up1️⃣: stretch: walk\n", field: "",
                   message: "\(mappingValues); \(quote): notes: \"Stand up: stretch: walk\""),
    DiagnosticCase(marked: "reminders:\n  custom:\n    - name: It's1️⃣: fun\n", field: "",
                   message: "\(mappingValues); \(quote): name: \"It's: fun\""),
    DiagnosticCase(marked: "reminders:\n  custom:\n    - name: Say \"hi\"1️⃣: now\n", field: "",
                   message: "\(mappingValues); \(quote): name: 'Say \"hi\": now'"),
    DiagnosticCase(marked: "reminders:\n  custom:\n    - {name: Walk1️⃣: park, at: [\"08:00\"]}\n", field: "",
                   message: "invalid YAML: did not find expected ',' or '}' (while parsing a flow mapping at line 3, column 7); \(quote): name: \"Walk: park\""),
    // Not a value holding ": ": a quoted value followed by a colon, a key indented under a value.
    DiagnosticCase(marked: "reminders:\n  custom:\n    - notes: \"a\"1️⃣: b\n", field: "", message: mappingValues),
    DiagnosticCase(marked: "reminders:\n  custom:\n    - name: Walk\n        park1️⃣: x\n", field: "",
                   message: "\(mappingValues); this line is indented further than \"name: Walk\" above, so it reads as part of that value: start it at column 7, as name: is"),
    .valid("reminders:\n  custom:\n    - name: \"Walk: park\"\n      at: [\"08:00\"]\n"),
    .valid("reminders:\n  custom:\n    - name: Walk:park\n      at: [\"08:00\"]\n"),
  ]

  /// A key one space deeper than the key of the list item above it (`- name: Tom` then
  /// `     phone: …`, the block layout of contacts and custom reminders) gets the hint a key
  /// under `key: value` gets, with the column of the item's first key (fresh-eyes finding).
  static let overIndentedInListItems: [DiagnosticCase] = [
    DiagnosticCase(marked: "contacts:\n  - name: Tom\n     phone1️⃣: \"+1 555 0100\"\n", field: "",
                   message: "\(mappingValues); this line is indented further than \"name: Tom\" above, so it reads as part of that value: start it at column 5, as name: is"),
    DiagnosticCase(marked: "reminders:\n  custom:\n    - name: Walk\n        at1️⃣: [\"10:00\"]\n", field: "",
                   message: "\(mappingValues); this line is indented further than \"name: Walk\" above, so it reads as part of that value: start it at column 7, as name: is"),
    DiagnosticCase(marked: "reminders:\n  medicine:\n    enabled: true\n     at1️⃣: [\"08:00\"]\n", field: "",
                   message: "\(mappingValues); this line is indented further than \"enabled: true\" above, so it reads as part of that value: start it at column 5, as enabled: is"),
    .valid("contacts:\n  - name: Tom\n    phone: \"+1 555 0100\"\n"),
  ]

  @Test(arguments: overIndentedInListItems)
  func aKeyIndentedUnderAListItemsValueSaysWhereToStart(_ row: DiagnosticCase) { row.check() }

  @Test(arguments: colonInValue)
  func aColonInAnUnquotedValueHintsToQuoteIt(_ row: DiagnosticCase) { row.check() }

  static func phone(_ value: String) -> String { "contacts:\n  - name: Alex\n    phone: 1️⃣\(value)\n" }
  static let phoneFormatting = "a phone number holds digits 0–9, one leading '+', and spaces, dashes, dots or parentheses as formatting"

  /// A character one cannot see in a phone is named by code point; one that can be seen is quoted.
  static let invisibleInPhones: [DiagnosticCase] = [
    ("\"+1\u{00A0}555 0100\"", "\"+1\u{00A0}555 0100\" contains U+00A0 NO-BREAK SPACE; \(phoneFormatting)"),
    ("\"+1\\t555\"", "\"+1\t555\" contains U+0009 CHARACTER TABULATION; \(phoneFormatting)"),
    ("\"555\u{200B}0100\"", "\"555\u{200B}0100\" contains U+200B ZERO WIDTH SPACE; \(phoneFormatting)"),
    ("\"555\u{202F}0100\"", "\"555\u{202F}0100\" contains U+202F NARROW NO-BREAK SPACE; \(phoneFormatting)"),
    ("\"555\u{2010}0100\"", "\"555\u{2010}0100\" contains \"\u{2010}\"; \(phoneFormatting); write \"555-0100\" with a plain dash (-)"),
    ("\"555/0100\"", "\"555/0100\" contains \"/\"; \(phoneFormatting)"),
  ].map { DiagnosticCase(marked: phone($0.0), field: "contacts[0].phone", message: $0.1) }

  @Test(arguments: invisibleInPhones)
  func invisibleCharactersInPhonesAreNamed(_ row: DiagnosticCase) { row.check() }

  @Test(arguments: nodeBounds)
  func aLongFileIsNotABillionLaughs(_ row: DiagnosticCase) { row.check() }
}

/// What `--redact` treats as a phone in a manifest's source (`PhoneCandidates`).
@Suite struct PhoneCandidatesTests {
  @Test func scalarsWithFiveDigitsAndPhoneKeyLinesAreCandidates() {
    let source = """
      contacts:
        - {name: Room 12345, phone: "+49/176/9876"}
        - {name: B, phone_numer: '555:0100'}
      reminders:
        medicine: {at: ["08:00", "20:00"]}

      """
    #expect(PhoneCandidates.find(in: Array(source.utf8)) == ["Room 12345", "+49/176/9876", "555:0100",
                                                              " \"+49/176/9876\"}", " '555:0100'}"])
  }

  /// A file YAML cannot read still has the rest of its phone lines found.
  @Test func aFileThatIsNotYAMLStillHasItsPhoneLines() {
    let source = "contacts:\n  - name: A\n    phone: +1: 555: 0100\n    Tel: 44 20 7946 0000  # office\n"
    #expect(PhoneCandidates.find(in: Array(source.utf8)) == [" +1: 555: 0100", " 44 20 7946 0000  # office"])
  }

  /// A key runs back from its colon to the nearest separator, earlier colons included, and the
  /// first colon whose key names a phone starts the candidate.
  @Test(arguments: [
    ("x: a:phone: 12345", " 12345"), ("a:Phone:b: 12345", "b: 12345"), ("pho:ne: 12345", nil),
    ("{TEL: 12345, b: 1}", " 12345, b: 1}"), ("\"cell\": 12345", " 12345"), ("- fax:12345", "12345"),
    ("ph one: 12345", nil), ("mobile 12345", nil), ("telephone_numbers:::12345", "::12345"),
  ] as [(String, String?)])
  func aPhoneKeyIsReadBackToItsSeparator(_ line: String, _ candidate: String?) {
    // An unclosed flow list first: YAML cannot read the file, so only the line rests count.
    #expect(PhoneCandidates.find(in: Array(("[\n" + line + "\n").utf8)) == Set(candidate.map { [$0] } ?? []))
  }

  /// Lines end at "\r\n" as at "\n", and in text that is not ASCII at U+2028 too.
  @Test func linesEndAtEveryLineBreak() {
    #expect(PhoneCandidates.find(in: Array("[\r\nphone: 12345\r\ntel: 67890\r\n".utf8)) == [" 12345", " 67890"])
    #expect(PhoneCandidates.find(in: Array("[\nphone: 12345\u{2028}tel: 67890 é\n".utf8)) == [" 12345", " 67890 é"])
  }

  /// A line of thousands of colons and no separator is read once, not once per colon (it
  /// used to take seconds under `--redact`).
  @Test func aLongLineOfColonsIsReadInOnePass() {
    let line = String(repeating: "ab:", count: 20_000) + "phone: 12345"
    let found = PhoneCandidates.find(in: Array(line.utf8))
    #expect(found.contains(" 12345"))
  }
}
