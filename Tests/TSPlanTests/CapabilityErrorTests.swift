import Testing
import TSManifest
import TSModel
import TSTestSupport
@testable import TSPlan

/// A manifest that does not fit a watch, and the exact diagnostics expected.
struct CapabilityCase: Sendable, CustomTestStringConvertible {
  var name: String
  var capabilities: DeviceCapabilities
  /// The watch's state; the platform's factory state when `nil`.
  var state: DeviceState? = nil
  var manifest: Manifest
  var expected: [String]
  var testDescription: String { name }
}

@Suite struct CapabilityErrorTests {
  static func customs(_ count: Int) -> [ManifestReminder] {
    (0..<count).map { Build.custom($0, "Custom \($0)", line: 31 + 8 * $0) }
  }
  static func contactList(_ count: Int) -> [(String, String)] {
    (0..<count).map { ("Person \($0)", "+1555010\($0)") }
  }
  static var noContacts: DeviceCapabilities {
    var capabilities = Profiles.npk
    capabilities.contacts.maxContacts = 0
    return capabilities
  }
  static var noEmergency: DeviceCapabilities {
    var capabilities = Profiles.fw
    capabilities.contacts.supportsEmergencyContacts = false
    capabilities.contacts.maxEmergencyContacts = 0
    return capabilities
  }
  static var strictNames: DeviceCapabilities {
    var capabilities = Profiles.npk
    capabilities.reminders.custom?.nameMaxBytes = 12
    return capabilities
  }

  static let cases: [CapabilityCase] = [
    CapabilityCase(name: "more custom reminders than the watch holds", capabilities: Profiles.fit,
      manifest: Build.manifest(reminders: Build.reminders(custom: customs(6))),
      expected: ["watch.yaml:30:3: error: reminders.custom: 6 custom reminders, but the watch (profile fit) holds at most 5: remove 1, or join reminders that repeat alike into one with several times (`at: [\"08:00\", \"20:00\"]`)"]),
    CapabilityCase(name: "a built-in the platform has but the watch lacks", capabilities: Profiles.roomy,
      state: DeviceState(reminders: [], emergency: EmergencyContacts(contacts: [], isSosOn: false)),
      manifest: Build.manifest(reminders: Build.reminders(medicine: Build.reminder(.medicine, line: 3, enabled: true))),
      expected: ["watch.yaml:3:5: error: reminders.medicine: the watch holds no medicine reminder (ID 2), although its platform (profile default) always has one; the SDK cannot create built-in reminders, so tsapply cannot add it. Reset the watch to its factory settings (a simulated one with 'tsapply device init --force'), or remove `reminders.medicine` from the manifest"]),
    CapabilityCase(name: "custom list on a watch without custom reminders", capabilities: Profiles.fitBasic,
      manifest: Build.manifest(reminders: Build.reminders(custom: customs(1))),
      expected: ["watch.yaml:30:3: error: reminders.custom: the watch (profile fit-basic) has no custom reminders; remove the custom list or write `custom: []`"]),
    CapabilityCase(name: "built-in the platform lacks", capabilities: Profiles.fitBasic,
      manifest: Build.manifest(reminders: Build.reminders(medicine: Build.reminder(.medicine, line: 3, enabled: true))),
      expected: ["watch.yaml:3:5: error: reminders.medicine: the watch (profile fit-basic) has no medicine reminder; remove `reminders.medicine`"]),
    CapabilityCase(name: "once where unsupported", capabilities: Profiles.npk,
      manifest: Build.manifest(reminders: Build.reminders(sedentary: Build.reminder(.sedentary, line: 3, repeatDays: .once))),
      expected: ["watch.yaml:6:7: error: reminders.sedentary.repeat: `once` (no repeat day) is not supported by the watch (profile npk); choose at least one day"]),
    CapabilityCase(name: "time points where only a period is stored", capabilities: Profiles.fitBasic,
      manifest: Build.manifest(reminders: Build.reminders(sedentary: Build.reminder(.sedentary, line: 3, schedule: Build.points(["08:00"])))),
      expected: ["watch.yaml:7:7: error: reminders.sedentary.at: the watch (profile fit-basic) stores only a period for the sedentary reminder; use `period: {start, end, every}` instead of `at`"]),
    CapabilityCase(name: "more time points than the watch holds", capabilities: Profiles.npk,
      manifest: Build.manifest(reminders: Build.reminders(drinking: Build.reminder(.drinking, line: 3,
        schedule: Build.points((8...18).map { "\($0):00" })))),
      expected: ["watch.yaml:7:7: error: reminders.drinking.at: 11 time points, but the watch (profile npk) holds at most 10 per reminder: remove 1, or use `period: {start, end, every}` for times evenly spaced"]),
    CapabilityCase(name: "lunch-break times where only the flag is stored", capabilities: Profiles.fitBasic,
      manifest: Build.manifest(reminders: Build.reminders(sedentary: Build.reminder(.sedentary, line: 3,
        lunch: LunchBreak(isEnabled: true, window: .init(start: Build.minutes("12:00"), end: Build.minutes("13:00")))))),
      expected: ["watch.yaml:8:7: error: reminders.sedentary.lunch_break: the watch (profile fit-basic) stores only whether the lunch break is on for the sedentary reminder, not its times; write `lunch_break: true` or `false`"]),
    CapabilityCase(name: "lunch break where there is none", capabilities: Profiles.fitBasic,
      manifest: Build.manifest(reminders: Build.reminders(drinking: Build.reminder(.drinking, line: 3, lunch: LunchBreak(isEnabled: true)))),
      expected: ["watch.yaml:8:7: error: reminders.drinking.lunch_break: the watch (profile fit-basic) has no lunch break for the drinking reminder; remove `lunch_break`"]),
    CapabilityCase(name: "repeat days where they are not stored", capabilities: Profiles.fitBasic,
      manifest: Build.manifest(reminders: Build.reminders(sedentary: Build.reminder(.sedentary, line: 3, repeatDays: .workday))),
      expected: ["watch.yaml:6:7: error: reminders.sedentary.repeat: the watch (profile fit-basic) repeats the sedentary reminder every day and stores no repeat days; remove `repeat` or write `everyday`"]),
    CapabilityCase(name: "name beyond the limit where the platform rejects", capabilities: strictNames,
      manifest: Build.manifest(reminders: Build.reminders(custom: [Build.custom(0, "Evening walk 2", line: 31)])),
      expected: [#"watch.yaml:32:7: error: reminders.custom[0].name: "Evening walk 2" is 14 bytes, but the watch (profile npk) stores at most 12 bytes of name for custom reminder "Evening walk 2""#]),
    CapabilityCase(name: "name beyond the limit where the platform truncates", capabilities: Profiles.fit,
      manifest: Build.manifest(reminders: Build.reminders(custom: [Build.custom(0, "体操体操体操体操体操体操", line: 31)])),
      expected: [#"watch.yaml:32:7: warning: reminders.custom[0].name: "体操体操体操体操体操体操" is 36 bytes; the watch (profile fit) stores at most 30 bytes and will keep "体操体操体操体操体操""#]),
    CapabilityCase(name: "a cut name keeps whole characters and no space at its end (found by the manifest fuzz target)",
      capabilities: Profiles.fit,
      manifest: Build.manifest(reminders: Build.reminders(custom: [Build.custom(0, "Call family now 👨‍👩‍👧", line: 31)])),
      expected: [#"watch.yaml:32:7: warning: reminders.custom[0].name: "Call family now 👨‍👩‍👧" is 34 bytes; the watch (profile fit) stores at most 30 bytes and will keep "Call family now""#]),
    CapabilityCase(name: "names that collide once truncated", capabilities: Profiles.fit,
      manifest: Build.manifest(reminders: Build.reminders(custom: [
        Build.custom(0, "Take the blood pressure tablet A", line: 31), Build.custom(1, "Take the blood pressure tablet B", line: 39)])),
      expected: [
        #"watch.yaml:32:7: warning: reminders.custom[0].name: "Take the blood pressure tablet A" is 32 bytes; the watch (profile fit) stores at most 30 bytes and will keep "Take the blood pressure tablet""#,
        #"watch.yaml:40:7: error: reminders.custom[1].name: "Take the blood pressure tablet B" and "Take the blood pressure tablet A" (reminders.custom[0]) are both stored as "Take the blood pressure tablet" on the watch (profile fit); make them differ within the first 30 bytes"#,
        #"watch.yaml:40:7: warning: reminders.custom[1].name: "Take the blood pressure tablet B" is 32 bytes; the watch (profile fit) stores at most 30 bytes and will keep "Take the blood pressure tablet""#,
      ]),
    CapabilityCase(name: "notes where not stored are ignored", capabilities: Profiles.fitBasic,
      manifest: Build.manifest(reminders: Build.reminders(sedentary: Build.reminder(.sedentary, line: 3, notes: "Stand up"))),
      expected: ["watch.yaml:9:7: warning: reminders.sedentary.notes: the watch (profile fit-basic) does not store notes for the sedentary reminder; the value is ignored"]),
    CapabilityCase(name: "more contacts than the watch holds", capabilities: Profiles.fit,
      manifest: Build.manifest(contacts: Build.contacts(contactList(11))),
      expected: ["watch.yaml:50:1: error: contacts: 11 contacts, but the watch (profile fit) holds at most 10: remove 1 of them"]),
    CapabilityCase(name: "contacts on a watch without regular contacts", capabilities: noContacts,
      manifest: Build.manifest(contacts: Build.contacts(contactList(1))),
      expected: ["watch.yaml:50:1: error: contacts: the watch (profile npk) does not store regular contacts; remove the `contacts` section (in a fleet, a layer for these watches can write contacts: [])"]),
    CapabilityCase(name: "emergency on a watch without emergency support", capabilities: noEmergency,
      manifest: Build.manifest(emergency: Build.emergency(sos: false)),
      expected: ["watch.yaml:80:1: error: emergency: the watch (profile fw) has no emergency contacts or SOS; remove the `emergency` section"]),
    CapabilityCase(name: "more emergency contacts than the watch holds", capabilities: Profiles.npk,
      manifest: Build.manifest(emergency: Build.emergency(sos: true, contacts: contactList(2))),
      expected: ["watch.yaml:82:3: error: emergency.contacts: 2 emergency contacts, but the watch (profile npk) holds at most 1: remove 1 of them"]),
    CapabilityCase(name: "contact name cut, phone beyond the limit refused", capabilities: Profiles.npk,
      manifest: Build.manifest(emergency: Build.emergency(sos: true, contacts: [("Alexandra Maria Doe-Smithsonian!", "+12345678901234567890123456789012")])),
      expected: [
        #"watch.yaml:83:13: warning: emergency.contacts[0].name: "Alexandra Maria Doe-Smithsonian!" is 32 bytes; the watch (profile npk) stores contact names of at most 31 bytes, so it will be stored as "Alexandra Maria Doe-Smithsonian" (31 bytes)"#,
        "watch.yaml:83:30: error: emergency.contacts[0].phone: the phone number is 33 bytes, but the watch (profile npk) stores phone numbers of at most 31 bytes; tsapply never shortens a phone number",
      ]),
    CapabilityCase(name: "contact names that are the same once cut (fresh-eyes finding: two doctors stored alike, told apart by nothing the plan said)",
      capabilities: Profiles.fit,
      manifest: Build.manifest(contacts: Build.contacts([("Dr. Margaret Elizabeth Thompson-Smythe (GP)", "+441234567801"),
                                                         ("Dr. Margaret Elizabeth Thompson-Smythe (dentist)", "+441234567802")])),
      expected: [
        #"watch.yaml:51:13: warning: contacts[0].name: "Dr. Margaret Elizabeth Thompson-Smythe (GP)" is 43 bytes; the watch (profile fit) stores contact names of at most 32 bytes, so it will be stored as "Dr. Margaret Elizabeth Thompson-" (32 bytes)"#,
        #"watch.yaml:52:13: warning: contacts[1].name: "Dr. Margaret Elizabeth Thompson-Smythe (dentist)" and "Dr. Margaret Elizabeth Thompson-Smythe (GP)" (line 51) are both stored as "Dr. Margaret Elizabeth Thompson-" on the watch (profile fit), so the watch, its plans and drift tell them apart only by phone number; make them differ within the first 32 bytes"#,
        #"watch.yaml:52:13: warning: contacts[1].name: "Dr. Margaret Elizabeth Thompson-Smythe (dentist)" is 48 bytes; the watch (profile fit) stores contact names of at most 32 bytes, so it will be stored as "Dr. Margaret Elizabeth Thompson-" (32 bytes)"#,
      ]),
    CapabilityCase(name: "a time inside the lunch break the template gives a new custom reminder (fresh-eyes finding: seen nowhere in the plan)",
      capabilities: Profiles.roomy,
      manifest: Build.manifest(reminders: Build.reminders(custom: [Build.custom(0, "Insulin", line: 31, schedule: Build.points(["12:30", "18:00"]))])),
      expected: [#"watch.yaml:35:7: warning: reminders.custom[0].at: custom reminder "Insulin" reminds at 12:30, inside its lunch-break do-not-disturb window 12:00–14:00 (the watch gives every new custom reminder one; the manifest gives none), when the watch may stay silent; write `lunch_break: false` for it, or move the time out of the window"#]),
    CapabilityCase(name: "a period wholly inside its lunch break (fresh-eyes finding: a reminder that may never sound, said nowhere)",
      capabilities: Profiles.roomy,
      manifest: Build.manifest(reminders: Build.reminders(custom: [Build.custom(0, "Walk", line: 31, schedule: Build.period("12:00", "14:00", every: 30),
                                                                               lunch: LunchBreak(isEnabled: true, window: .init(start: MinuteOfDay(rawValue: 660)!, end: MinuteOfDay(rawValue: 900)!)))])),
      expected: [#"watch.yaml:35:7: warning: reminders.custom[0].period: custom reminder "Walk" reminds only from 12:00 to 14:00, all inside its lunch-break do-not-disturb window 11:00–15:00 (as the manifest gives it), so the watch may never sound it; write `lunch_break: false` for it, or move the period out of the window"#]),
    CapabilityCase(name: "no warning for a period that reaches out of its lunch break", capabilities: Profiles.roomy,
      manifest: Build.manifest(reminders: Build.reminders(custom: [Build.custom(0, "Walk", line: 31, schedule: Build.period("09:00", "14:00", every: 30))])),
      expected: []),
    CapabilityCase(name: "no warning once the manifest turns that lunch break off", capabilities: Profiles.roomy,
      manifest: Build.manifest(reminders: Build.reminders(custom: [Build.custom(0, "Insulin", line: 31, schedule: Build.points(["12:30"]),
                                                                               lunch: LunchBreak(isEnabled: false))])),
      expected: []),
    CapabilityCase(name: "SOS on with no emergency contact in the final state", capabilities: Profiles.roomy,
      manifest: Build.manifest(emergency: Build.emergency(sos: true)),
      expected: ["watch.yaml:81:8: error: emergency.sos: SOS would be on with no emergency contact; add one under `emergency.contacts` or write `sos: false`"]),
    CapabilityCase(name: "explicit short name on a watch that does not store short names", capabilities: Profiles.fit,
      manifest: Build.manifest(contacts: Located([Build.contact("contacts[0]", "Ann", "+15550100", line: 51, shortName: "X")],
                                                 at: Build.at(50, 1))),
      expected: [#"watch.yaml:51:5: warning: contacts[0].short_name: the watch (profile fit) does not store short names; "X" is ignored"#]),
    CapabilityCase(name: "lunch break on without times where the watch holds none", capabilities: Profiles.npk,
      manifest: Build.manifest(reminders: Build.reminders(sedentary: Build.reminder(.sedentary, line: 3, lunch: LunchBreak(isEnabled: true)))),
      expected: ["watch.yaml:8:7: error: reminders.sedentary.lunch_break: the sedentary reminder on the watch has no valid lunch-break times (0–0 minutes); give them: `lunch_break: {start: \"12:00\", end: \"14:00\"}`"]),
  ]

  @Test(arguments: cases)
  func reportsExactDiagnostics(_ scenario: CapabilityCase) {
    let state = scenario.state ?? Profiles.factoryState(scenario.capabilities)
    let result = Planner.plan(scenario.manifest, state: state, capabilities: scenario.capabilities)
    #expect(result.diagnostics.map(\.description) == scenario.expected)
    #expect((result.plan == nil) == result.diagnostics.hasErrors)
  }
}
