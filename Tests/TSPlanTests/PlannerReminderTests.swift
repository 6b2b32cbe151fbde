import Testing
import TSManifest
import TSModel
import TSTestSupport
@testable import TSPlan

/// One planner scenario: a manifest against a watch, and the expected change summary.
struct PlannerCase: Sendable, CustomTestStringConvertible {
  var name: String
  var capabilities: DeviceCapabilities = Profiles.roomy
  var state: DeviceState
  var manifest: Manifest
  var expected: [String]
  var testDescription: String { name }
}

@Suite struct PlannerReminderTests {
  static let cases: [PlannerCase] = [
    PlannerCase(name: "built-in update shows only changed managed fields",
      state: States.watch(),
      manifest: Build.manifest(reminders: Build.reminders(sedentary: Build.reminder(.sedentary, line: 3, enabled: true,
        repeatDays: .workday, schedule: Build.period("08:00", "18:00", every: 60)))),
      expected: ["~ reminder.sedentary: isEnabled repeatDays startTime"]),
    PlannerCase(name: "fields left out stay as the watch has them",
      state: States.watch(),
      manifest: Build.manifest(reminders: Build.reminders(drinking: Build.reminder(.drinking, line: 3, enabled: true))),
      expected: ["~ reminder.drinking: isEnabled"]),
    PlannerCase(name: "matching built-in gives no change",
      state: States.watch(),
      manifest: Build.manifest(reminders: Build.reminders(sedentary: Build.reminder(.sedentary, line: 3, enabled: false,
        repeatDays: .everyday, schedule: Build.period("09:00", "18:00", every: 60)))),
      expected: []),
    PlannerCase(name: "custom create carries every managed field",
      state: States.watch(),
      manifest: Build.manifest(reminders: Build.reminders(custom: [
        Build.custom(0, "Evening walk", line: 31, repeatDays: .weekend, schedule: Build.points(["19:30"]), notes: "Take the dog")])),
      expected: [#"+ reminder.custom["Evening walk"]: reminderName isEnabled repeatDays timeType timePoints notes"#]),
    PlannerCase(name: "custom matched by name is updated",
      state: States.watch(customs: [States.custom(32, "Evening walk")]),
      manifest: Build.manifest(reminders: Build.reminders(custom: [
        Build.custom(0, "Evening walk", line: 31, schedule: Build.points(["19:30", "20:00"]))])),
      expected: [#"~ reminder.custom["Evening walk"]: timePoints"#]),
    PlannerCase(name: "custom not in the list is deleted, built-ins never",
      state: States.watch(customs: [States.custom(32, "Old"), States.custom(33, "Keep")]),
      manifest: Build.manifest(reminders: Build.reminders(custom: [Build.custom(0, "Keep", line: 31)])),
      expected: [#"- reminder.custom["Old"]: reminderName isEnabled repeatDays timeType timePoints"#]),
    PlannerCase(name: "empty custom list deletes every custom and no built-in",
      state: States.watch(customs: [States.custom(32, "A"), States.custom(33, "B")]),
      manifest: Build.manifest(reminders: Build.reminders(custom: [])),
      expected: [#"- reminder.custom["A"]: reminderName isEnabled repeatDays timeType timePoints"#, #"- reminder.custom["B"]: reminderName isEnabled repeatDays timeType timePoints"#]),
    PlannerCase(name: "custom list left out leaves watch customs alone",
      state: States.watch(customs: [States.custom(32, "Old")]),
      manifest: Build.manifest(reminders: Build.reminders(drinking: Build.reminder(.drinking, line: 3, enabled: false))),
      expected: []),
    PlannerCase(name: "time points compare as a sorted set",
      state: States.watch(customs: [States.custom(32, "Pills", points: [1200, 480, 480])]),
      manifest: Build.manifest(reminders: Build.reminders(custom: [
        Build.custom(0, "Pills", line: 31, schedule: Build.points(["20:00", "08:00"]))])),
      expected: []),
    PlannerCase(name: "period fields are not compared for a time-point schedule",
      state: States.watch(customs: [{ var r = States.custom(32, "Pills", points: [480]); r.startTime = 1; return r }()]),
      manifest: Build.manifest(reminders: Build.reminders(custom: [
        Build.custom(0, "Pills", line: 31, schedule: Build.points(["08:00"]))])),
      expected: []),
    PlannerCase(name: "name cut the way fit stores it gives no perpetual diff",
      capabilities: Profiles.fit,
      state: States.watch(Profiles.fit, customs: [States.custom(32, "Take the blood pressure tablet")]),
      manifest: Build.manifest(reminders: Build.reminders(custom: [
        Build.custom(0, "Take the blood pressure tablets now", line: 31)])),
      expected: []),
    PlannerCase(name: "duplicate names on the watch: one matched, the rest deleted",
      state: States.watch(customs: [States.custom(32, "Walk"), States.custom(35, "Walk", enabled: false)]),
      manifest: Build.manifest(reminders: Build.reminders(custom: [Build.custom(0, "Walk", line: 31, enabled: true)])),
      expected: [#"- reminder.custom["Walk"]#35: reminderName isEnabled repeatDays timeType timePoints"#]),
    PlannerCase(name: "fit-basic lunch flag only and repeat everyday",
      capabilities: Profiles.fitBasic, state: States.watch(Profiles.fitBasic),
      manifest: Build.manifest(reminders: Build.reminders(sedentary: Build.reminder(.sedentary, line: 3,
        repeatDays: .everyday, lunch: LunchBreak(isEnabled: true)))),
      expected: ["~ reminder.sedentary: isLunchBreakDNDEnabled"]),
  ]

  @Test(arguments: cases)
  func plansTheExpectedChanges(_ scenario: PlannerCase) {
    let result = Planner.plan(scenario.manifest, state: scenario.state, capabilities: scenario.capabilities)
    #expect(!result.diagnostics.hasErrors, "\(result.diagnostics)")
    #expect(States.summary(result.plan) == scenario.expected)
  }

  @Test func updateAfterIsTheWatchReminderWithManagedFieldsOverlaidInStoredForm() throws {
    let watch = States.watch()
    let manifest = Build.manifest(reminders: Build.reminders(sedentary: Build.reminder(.sedentary, line: 3,
      schedule: Build.points(["10:00", "08:00"]))))
    let change = try #require(Planner.plan(manifest, state: watch, capabilities: Profiles.roomy).plan?.resourceChanges.first)
    var overlaid = try #require(watch.builtIn(.sedentary))
    overlaid.timeType = .point
    overlaid.timePoints = [480, 600]
    #expect(change.patch.map { $0.applying(to: watch.builtIn(.sedentary)!) } == overlaid)
    // The watch keeps only the active schedule: with time points, the period fields read back 0.
    var stored = overlaid
    (stored.startTime, stored.endTime, stored.interval) = (0, 0, 0)
    #expect(change.after == .reminder(stored))
  }

  @Test func customCreateIsEnabledByDefaultAndHasNoID() throws {
    let manifest = Build.manifest(reminders: Build.reminders(custom: [Build.custom(0, "Stretch", line: 31)]))
    let change = try #require(Planner.plan(manifest, state: States.watch(), capabilities: Profiles.roomy).plan?.resourceChanges.first)
    #expect(change.patch == ReminderPatch(name: "Stretch", isEnabled: true))
    guard case .reminder(let after)? = change.after else { Issue.record("no reminder after"); return }
    #expect(after.reminderId == "" && after.isEnabled && after.reminderName == "Stretch" && after.reminderType == .custom)
  }

  @Test func duplicateNamesOnTheWatchWarn() {
    let state = States.watch(customs: [States.custom(32, "Walk"), States.custom(35, "Walk")])
    let manifest = Build.manifest(reminders: Build.reminders(custom: [Build.custom(0, "Walk", line: 31)]))
    let result = Planner.plan(manifest, state: state, capabilities: Profiles.roomy)
    #expect(result.plan?.warnings.map(\.description) == [
      #"watch.yaml:32:7: warning: reminders.custom[0].name: the watch holds 2 custom reminders named "Walk" (IDs 32, 35); tsapply keeps ID 32 and deletes the others"#,
    ])
  }

  @Test func unmanagedManifestGivesAnEmptyPlan() {
    let state = States.watch(customs: [States.custom(32, "Old")], contacts: [Contact(name: "A", phoneNum: "1")])
    let result = Planner.plan(Build.manifest(), state: state, capabilities: Profiles.roomy)
    #expect(result.plan?.isEmpty == true)
    #expect(result.plan?.priorStateDigest == state.fingerprint)
  }
}
