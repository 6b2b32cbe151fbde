import Testing
import TSManifest
import TSModel
import TSTestSupport
@testable import TSPlan

/// Named plans for golden files, redaction and safety tests: each action kind, and one mix.
enum Scenarios {
  static let alex = Contact(name: "Alex Doe", phoneNum: "+15550100", shortName: "A")
  static let sam = Contact(name: "Sam Roe", phoneNum: "+15550101", shortName: "S")
  static let kim = Contact(name: "Kim Li", phoneNum: "+15550102", shortName: "K")

  struct Scenario: Sendable, CustomTestStringConvertible {
    var name: String
    var capabilities: DeviceCapabilities
    var state: DeviceState
    var manifest: Manifest
    var testDescription: String { name }

    var result: PlanResult { Planner.plan(manifest, state: state, capabilities: capabilities) }
  }

  static let all: [Scenario] = [
    Scenario(name: "empty", capabilities: Profiles.roomy, state: States.watch(),
      manifest: Build.manifest(reminders: Build.reminders(drinking: Build.reminder(.drinking, line: 3, enabled: false)))),
    Scenario(name: "builtin-update", capabilities: Profiles.roomy, state: States.watch(),
      manifest: Build.manifest(reminders: Build.reminders(sedentary: Build.reminder(.sedentary, line: 3, enabled: true,
        repeatDays: .workday, schedule: Build.period("09:00", "18:00", every: 90),
        lunch: LunchBreak(isEnabled: true, window: .init(start: Build.minutes("12:00"), end: Build.minutes("14:00"))))))),
    Scenario(name: "custom-create", capabilities: Profiles.roomy, state: States.watch(),
      manifest: Build.manifest(reminders: Build.reminders(custom: [
        Build.custom(0, "Evening walk", line: 31, repeatDays: [.monday, .wednesday, .friday],
                     schedule: Build.points(["19:30", "07:15"]), notes: "Take the dog")]))),
    Scenario(name: "custom-delete", capabilities: Profiles.roomy,
      state: States.watch(customs: [States.custom(32, "Walk"), States.custom(33, "Old \"one\""), States.custom(34, "Walk")]),
      manifest: Build.manifest(reminders: Build.reminders(custom: [Build.custom(0, "Walk", line: 31)]))),
    // A custom reminder changed in every way the manifest says it: custom[2] switches from
    // time points to a period, changes its days and its lunch break's end; custom[1] moves its time.
    Scenario(name: "custom-update", capabilities: Profiles.roomy,
      state: States.watch(customs: [States.custom(32, "Stretch"), States.custom(33, "Pills"), States.custom(34, "Walk")]),
      manifest: Build.manifest(reminders: Build.reminders(custom: [
        Build.custom(0, "Stretch", line: 31),
        Build.custom(1, "Pills", line: 41, enabled: false, schedule: Build.points(["08:00", "20:00"])),
        Build.custom(2, "Walk", line: 51, repeatDays: [.monday, .wednesday, .friday],
                     schedule: Build.period("09:00", "18:00", every: 120),
                     lunch: LunchBreak(isEnabled: true, window: .init(start: Build.minutes("12:00"), end: Build.minutes("13:30"))),
                     notes: "Take the dog")]))),
    Scenario(name: "contacts-change", capabilities: Profiles.roomy, state: States.watch(contacts: [alex, sam, kim]),
      manifest: Build.manifest(contacts: Build.contacts([("Alex Doe", "+15550100"), ("Samuel Roe", "+15550101"),
                                                         ("Lee Park", "+15550103")]))),
    Scenario(name: "contacts-clear", capabilities: Profiles.fit, state: States.watch(Profiles.fit, contacts: [alex, sam, kim]),
      manifest: Build.manifest(contacts: Build.contacts([]))),
    Scenario(name: "emergency-sos-off", capabilities: Profiles.roomy,
      state: States.watch(emergency: EmergencyContacts(contacts: [sam], isSosOn: true)),
      manifest: Build.manifest(emergency: Build.emergency(sos: false, contacts: []))),
    Scenario(name: "emergency-sos-on", capabilities: Profiles.npk,
      state: States.watch(Profiles.npk, emergency: EmergencyContacts(contacts: [], isSosOn: false)),
      manifest: Build.manifest(emergency: Build.emergency(sos: true, contacts: [("Sam Roe", "+15550101")]))),
    Scenario(name: "emergency-number-change", capabilities: Profiles.roomy,
      state: States.watch(emergency: EmergencyContacts(contacts: [Contact(name: "Mom", phoneNum: "+15550100", shortName: "M")],
                                                       isSosOn: true)),
      manifest: Build.manifest(emergency: Build.emergency(sos: true, contacts: [("Mom", "+15550199")]))),
    Scenario(name: "mixed-fit", capabilities: Profiles.fit,
      state: States.watch(Profiles.fit, customs: [States.custom(32, "Stretch")], contacts: [alex],
                          emergency: EmergencyContacts(contacts: [sam], isSosOn: true)),
      manifest: Build.manifest(
        reminders: Build.reminders(
          medicine: Build.reminder(.medicine, line: 3, enabled: true, schedule: Build.points(["08:00", "20:00"])),
          custom: [Build.custom(0, "Take the blood pressure tablets now", line: 31, repeatDays: .once,
                                schedule: Build.points(["21:00"]))]),
        contacts: Build.contacts([("Alex Doe", "+15550100"), ("Kim Li", "+15550102")]),
        emergency: Build.emergency(sos: true, contacts: [("Kim Li", "+15550102")]))),
  ]

  /// A manifest with several capability errors on fit-basic, for the diagnostics golden.
  static let capabilityErrors = Scenario(name: "capability-errors", capabilities: Profiles.fitBasic,
    state: States.watch(Profiles.fitBasic),
    manifest: Build.manifest(
      reminders: Build.reminders(
        sedentary: Build.reminder(.sedentary, line: 3, repeatDays: .weekend, schedule: Build.points(["08:00"]),
          lunch: LunchBreak(isEnabled: true, window: .init(start: Build.minutes("12:00"), end: Build.minutes("13:00"))),
          notes: "Stand up"),
        drinking: Build.reminder(.drinking, line: 12, lunch: LunchBreak(isEnabled: true)),
        medicine: Build.reminder(.medicine, line: 21, enabled: true),
        custom: [Build.custom(0, "Walk", line: 31)]),
      contacts: Build.contacts((0..<11).map { ("Person \($0)", "+1555010\($0)") }),
      emergency: Build.emergency(sos: true, contacts: [("Sam Roe", "+15550101"), ("Kim Li", "+15550102")])))
}
