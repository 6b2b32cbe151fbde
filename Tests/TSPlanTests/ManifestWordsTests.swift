import Foundation
import Testing
import TSModel
import TSTestSupport
@testable import TSPlan

/// The plan speaks the manifest: the human plan in the manifest's keys and spellings, the JSON
/// plan with the SDK's values and each change's manifest path and source (docs/plan.md).
@Suite struct ManifestWordsTests {
  /// No SDK field name reaches the human plan of any scenario (`ManifestWords`' table).
  @Test(arguments: Scenarios.all)
  func theHumanPlanHasNoSDKFieldName(_ scenario: Scenarios.Scenario) throws {
    let plan = try #require(scenario.result.plan)
    let text = HumanPlanRenderer(color: false, redact: false).render(plan)
    for sdk in ["reminderName", "isEnabled", "repeatDays", "timeType", "startTime", "endTime", "interval", "timePoints",
                "isLunchBreakDNDEnabled", "lunchBreakDNDStartTime", "lunchBreakDNDEndTime", "isSosOn", "phoneNum", "shortName"] {
      #expect(!text.contains(sdk), "\(scenario.name): \(sdk) in\n\(text)")
    }
  }

  /// Each field line of a custom reminder's update, as the manifest writes it.
  @Test func aCustomReminderUpdateInTheManifestsWords() throws {
    let plan = try #require(Scenarios.all.first { $0.name == "custom-update" }?.result.plan)
    let text = HumanPlanRenderer(color: false, redact: false).render(plan)
    #expect(text.contains("~ repeat          = weekend -> [mon, wed, fri]"), "\(text)")
    #expect(text.contains("- at              = [\"19:30\"] -> null"), "\(text)")
    #expect(text.contains("+ period          = {start = \"09:00\", end = \"18:00\", every = 2h}"), "\(text)")
    #expect(text.contains("~ lunch_break.end = \"14:00\" -> \"13:30\""), "\(text)")
    #expect(text.contains("~ enabled = true -> false"), "\(text)")
    #expect(text.contains("~ at      = [\"19:30\"] -> [\"08:00\", \"20:00\"]"), "\(text)")
  }

  /// `format_version` is 2, and every field change names its manifest path and source; the SDK
  /// fields stay under `field`, `before` and `after`.
  @Test func theJSONPlanCarriesManifestPaths() throws {
    let plan = try #require(Scenarios.all.first { $0.name == "custom-update" }?.result.plan)
    let json = try #require(try JSONSerialization.jsonObject(with: Data(JSONPlanRenderer.render(plan, redact: false).utf8)) as? [String: Any])
    #expect(json["format_version"] as? String == "2")
    let changes = try #require(json["resource_changes"] as? [[String: Any]])
    let walk = try #require(changes.first { $0["address"] as? String == #"reminder.custom["Walk"]"# })
    let fields = try #require(walk["fields"] as? [[String: Any]])
    let paths = Dictionary(uniqueKeysWithValues: fields.map { ($0["field"] as? String ?? "", $0["manifest_path"] as? String ?? "") })
    #expect(paths == ["repeatDays": "reminders.custom[2].repeat", "timeType": "reminders.custom[2].period",
                      "startTime": "reminders.custom[2].period.start", "endTime": "reminders.custom[2].period.end",
                      "interval": "reminders.custom[2].period.every", "notes": "reminders.custom[2].notes",
                      "lunchBreakDNDEndTime": "reminders.custom[2].lunch_break.end"], "\(paths)")
    let repeatField = try #require(fields.first { $0["field"] as? String == "repeatDays" })
    #expect(repeatField["before"] as? Int == 96 && repeatField["after"] as? Int == 21)
    let source = try #require(repeatField["source"] as? [String: Any])
    #expect(source["file"] as? String == "watch.yaml" && source["line"] as? Int == 54 && source["column"] as? Int == 7)
    let after = try #require(walk["after"] as? [String: Any])
    #expect(after["repeatDays"] as? Int == 21 && after["lunchBreakDNDEndTime"] as? Int == 810)
  }

  /// A contact removed points at the list that leaves it out; one added, at its entry.
  @Test func contactPathsAreTheEntriesOfTheList() throws {
    let plan = try #require(Scenarios.all.first { $0.name == "contacts-change" }?.result.plan)
    let fields = try #require(plan.resourceChanges.first?.fields)
    #expect(fields.map(\.manifestPath) == ["contacts[2]", "contacts", "contacts[1]"])
    #expect(fields.map { $0.source?.line } == [53, 50, 52])
  }
}
