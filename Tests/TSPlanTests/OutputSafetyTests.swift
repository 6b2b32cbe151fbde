import Testing
import TSModel
@testable import TSPlan

/// Phone-like text masked in free text (`--redact` for diagnostics), and control characters
/// from the watch escaped in the human plan.
@Suite struct OutputSafetyTests {
  @Test(arguments: [
    ("+15550100100 is also the phone of \"A\" on line 3", "+*********00 is also the phone of \"A\" on line 3"),
    ("  - {name: A, phone: \"+1 (555) 010-0100\"}", "  - {name: A, phone: \"+* (***) ***-**00\"}"),
    ("phone: \"+1-555-010-0100\"", "phone: \"+*-***-***-**00\""),
    ("\"+1 555 0100 ext 12\" contains letters", "\"+* *** **00 ext 12\" contains letters"),
    ("555.010.0102", "***.***.**02"),
    ("at 08:00, line 12, column 1234, 32 bytes", "at 08:00, line 12, column 1234, 32 bytes"),
    ("1234", "1234"),
    ("12345", "***45"),
  ])
  func masksPhoneLikeRuns(_ text: String, _ expected: String) {
    #expect(PhoneRedaction.redactPhoneLike(text) == expected)
  }

  @Test func controlCharactersFromTheWatchAreEscapedInTheHumanPlan() {
    let hostile = "\u{1B}[2J\u{1B}[31mRED"
    let reminder = Reminder(reminderId: "7", reminderName: hostile, reminderType: .custom)
    let contact = Contact(name: "\u{1B}]0;pwned\u{07}", phoneNum: "+15550100")
    let plan = Plan(manifestFile: "watch.yaml", profile: "npk", priorStateDigest: "", resourceChanges: [
      ResourceChange(address: .custom(hostile), action: .delete, fields: [FieldChange(field: "reminderName", before: .string(hostile), after: nil)],
                     before: .reminder(reminder), after: nil),
      ResourceChange(address: .contacts, action: .update,
                     fields: [FieldChange(field: "contacts", before: .object([.init("name", .string(contact.name))]), after: nil)],
                     before: .contacts([contact]), after: .contacts([])),
    ])
    for color in [false, true] {
      let text = HumanPlanRenderer(color: color, redact: false).render(plan)
      let withoutColor = text.replacingOccurrences(of: #"\u{1B}\[[0-9;]*m"#, with: "", options: .regularExpression)
      #expect(ControlCharacters.first(in: withoutColor) == nil, "\(withoutColor.debugDescription)")
      #expect(text.contains("reminder.custom[\"\\e[2J\\e[31mRED\"]"))
      #expect(text.contains("\\e]0;pwned\\u{7}"))
    }
  }
}
