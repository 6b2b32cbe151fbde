import Testing
import TSManifest
import TSModel

@Suite struct ManifestModelTests {
  @Test func builtInSubscriptReturnsOnlyBuiltIns() {
    let p = SourcePosition(file: "w.yaml", line: 1, column: 1)
    let sedentary = ManifestReminder(kind: .sedentary, position: p, path: "reminders.sedentary")
    let reminders = ManifestReminders(position: p, sedentary: sedentary)
    #expect(reminders[builtIn: .sedentary] == sedentary)
    #expect(reminders[builtIn: .drinking] == nil)
    #expect(reminders[builtIn: .custom] == nil)
  }
}
