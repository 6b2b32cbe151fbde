import Testing
import TSPlan

/// `ChangeBrief`: what a drift line says about a resource — counts for contacts, which way a
/// switch went (SOS first among what a nurse must not miss), the other fields by name.
@Suite struct ChangeBriefTests {
  static let contact = FieldValue.object([FieldValue.KeyValue("name", .string("Mom")), FieldValue.KeyValue("phoneNum", .string("+15550100"))])

  @Test(arguments: [
    ("emergency", [FieldChange(field: "contacts", before: contact, after: nil), FieldChange(field: "isSosOn", before: .bool(true), after: .bool(false))],
     "emergency (1 removed, SOS switched off)"),
    ("emergency", [FieldChange(field: "isSosOn", before: .bool(false), after: .bool(true))], "emergency (SOS switched on)"),
    ("reminder.drinking", [FieldChange(field: "isEnabled", before: .bool(true), after: .bool(false))], "reminder.drinking (turned off)"),
    ("reminder.sedentary", [FieldChange(field: "interval", before: .integer(60), after: .integer(90)),
                            FieldChange(field: "timePoints", before: .list([]), after: .list([.integer(480)]))],
     "reminder.sedentary (period.every, at changed)"),
    ("contacts", [FieldChange(field: "contacts", before: nil, after: contact)], "contacts (1 added)"),
    ("reminder.custom[1]", [], "reminder.custom[1]"),
  ])
  func aChangeInAFewWords(address: String, fields: [FieldChange], expected: String) {
    #expect(ChangeBrief.text(address, fields) == expected)
  }

  /// A resource gone or new is said so, not as its fields changed (fresh-eyes fe90 #6: a reset
  /// watch's custom reminders, deleted, were told "name, enabled, repeat, schedule, at changed").
  @Test(arguments: [(Action.delete, "reminder.custom[\"Lunch\"] (deleted)"), (.create, "reminder.custom[\"Lunch\"] (added)"),
                    (.update, "reminder.custom[\"Lunch\"] (name, enabled, at changed)")])
  func aResourceGoneOrNewIsSaidSo(action: Action, expected: String) {
    let fields = [FieldChange(field: "reminderName", before: .string("Lunch"), after: nil), FieldChange(field: "isEnabled", before: .bool(true), after: nil),
                  FieldChange(field: "timePoints", before: .list([.integer(720)]), after: nil)]
    #expect(ChangeBrief.text("reminder.custom[\"Lunch\"]", fields, action: action) == expected)
  }
}
