import Testing
import TSModel

@Suite struct DeviceStateLookupTests {
  @Test func builtInsAreFoundByFixedID() {
    let state = DeviceState(reminders: [
      Reminder(reminderId: "1", reminderType: .drinking),
      Reminder(reminderId: "32", reminderType: .custom),
    ])
    #expect(state.builtIn(.drinking)?.reminderId == "1")
    #expect(state.builtIn(.sedentary) == nil)
    #expect(state.customReminders.map(\.reminderId) == ["32"])
  }
}
