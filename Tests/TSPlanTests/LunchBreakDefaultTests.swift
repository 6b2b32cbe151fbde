import Testing
import TSManifest
import TSModel
import TSTestSupport
@testable import TSPlan

/// `reminders.lunch_break`: the lunch break of every reminder that sets none of its own, as far
/// as the watch stores one for it (docs/manifest.md "One lunch break for every reminder").
@Suite struct LunchBreakDefaultTests {
  struct Case: Sendable, CustomTestStringConvertible {
    var name: String
    var capabilities: DeviceCapabilities
    var yaml: String
    var expected: [String]
    var testDescription: String { name }
  }

  static let section = "reminders:\n  lunch_break: {start: \"12:00\", end: \"13:30\"}\n"

  static let cases: [Case] = [
    Case(name: "reminders without their own get the default's times", capabilities: Profiles.roomy,
         yaml: section + "  sedentary: {enabled: true}\n  drinking: {enabled: true}\n",
         expected: ["~ reminder.drinking: isEnabled isLunchBreakDNDEnabled lunchBreakDNDStartTime lunchBreakDNDEndTime",
                    "~ reminder.sedentary: isEnabled isLunchBreakDNDEnabled lunchBreakDNDStartTime lunchBreakDNDEndTime"]),
    Case(name: "a reminder's own lunch break wins", capabilities: Profiles.roomy,
         yaml: section + "  sedentary: {enabled: true, lunch_break: false}\n",
         expected: ["~ reminder.sedentary: isEnabled"]),
    Case(name: "where only the switch is stored, only the switch; where none, nothing", capabilities: Profiles.fitBasic,
         yaml: section + "  sedentary: {enabled: true}\n  drinking: {enabled: true}\n",
         expected: ["~ reminder.drinking: isEnabled", "~ reminder.sedentary: isEnabled isLunchBreakDNDEnabled"]),
    Case(name: "custom reminders get it too", capabilities: Profiles.roomy,
         yaml: section + "  custom:\n    - {name: Walk, at: [\"19:30\"]}\n",
         expected: [#"+ reminder.custom["Walk"]: reminderName isEnabled timeType timePoints isLunchBreakDNDEnabled lunchBreakDNDStartTime lunchBreakDNDEndTime"#]),
  ]

  @Test(arguments: cases)
  func appliesToTheRemindersWithoutTheirOwn(_ row: Case) throws {
    let loaded = ManifestLoader.load(bytes: Array(row.yaml.utf8), file: "watch.yaml")
    let manifest = try #require(loaded.manifest, "\(loaded.diagnostics)")
    let result = Planner.plan(manifest, state: States.watch(row.capabilities), capabilities: row.capabilities)
    #expect(!result.diagnostics.hasErrors, "\(result.diagnostics)")
    #expect(States.summary(result.plan).sorted() == row.expected.sorted(), "\(States.summary(result.plan))")
  }

  /// A lunch break from the default names the default as what asks for it, at its line; a
  /// reminder's own field names the reminder.
  @Test func theDefaultIsTheManifestPathOfWhatItSets() throws {
    let yaml = Self.section + "  sedentary: {enabled: true}\n"
    let manifest = try #require(ManifestLoader.load(bytes: Array(yaml.utf8), file: "watch.yaml").manifest)
    let plan = try #require(Planner.plan(manifest, state: States.watch(Profiles.roomy), capabilities: Profiles.roomy).plan)
    let fields = try #require(plan.resourceChanges.first { $0.address == .builtIn(.sedentary) }?.fields)
    #expect(fields.map(\.manifestPath) == ["reminders.sedentary.enabled", "reminders.lunch_break", "reminders.lunch_break.start",
                                          "reminders.lunch_break.end"])
    #expect(fields.map { $0.source?.line } == [3, 2, 2, 2])
  }

  /// `lunch_break: true` switches the break on for the hours the watch already holds, which no
  /// field of the change shows: the plan's line says them (fresh-eyes fe96 #5: "I can't tell
  /// from the plan when the watch will stay quiet").
  @Test func switchingOnShowsTheHoursTheWatchHolds() throws {
    var state = States.watch(Profiles.roomy)
    let index = try #require(state.reminders.firstIndex { $0.reminderId == ReminderKind.drinking.builtInID })
    state.reminders[index].isLunchBreakDNDEnabled = false
    state.reminders[index].lunchBreakDNDStartTime = 720
    state.reminders[index].lunchBreakDNDEndTime = 780
    let yaml = "reminders:\n  drinking: {lunch_break: true}\n"
    let manifest = try #require(ManifestLoader.load(bytes: Array(yaml.utf8), file: "watch.yaml").manifest)
    let plan = try #require(Planner.plan(manifest, state: state, capabilities: Profiles.roomy).plan)
    let text = HumanPlanRenderer(color: false, redact: false).render(plan)
    let line = text.split(separator: "\n").first { $0.contains("lunch_break") }.map(String.init)
    #expect(line?.hasPrefix("      ~ lunch_break = false -> true (12:00–13:00, the hours the watch holds)") == true, "\(text)")
    // Where only the switch is stored, no hours are said (fresh-eyes fe97 #5: "00:00–00:00" on fit-basic).
    var basic = States.watch(Profiles.fitBasic)
    let sedentary = try #require(basic.reminders.firstIndex { $0.reminderId == ReminderKind.sedentary.builtInID })
    basic.reminders[sedentary].isLunchBreakDNDEnabled = false
    let switchOnly = try #require(ManifestLoader.load(bytes: Array("reminders:\n  sedentary: {lunch_break: true}\n".utf8), file: "watch.yaml").manifest)
    let basicPlan = try #require(Planner.plan(switchOnly, state: basic, capabilities: Profiles.fitBasic).plan)
    let basicText = HumanPlanRenderer(color: false, redact: false).render(basicPlan)
    #expect(basicText.contains("~ lunch_break = false -> true") && !basicText.contains("the hours the watch holds"), "\(basicText)")
  }
}
