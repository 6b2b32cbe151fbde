import Testing
import TSManifest
import TSModel
import TSTestSupport
@testable import TSPlan

@Suite struct RenderGoldenTests {
  @Test(arguments: Scenarios.all)
  func humanText(_ scenario: Scenarios.Scenario) throws {
    let plan = try #require(scenario.result.plan, "\(scenario.result.diagnostics)")
    expectGolden(HumanPlanRenderer(color: false, redact: false).render(plan), "\(scenario.name).txt")
  }

  @Test(arguments: Scenarios.all)
  func json(_ scenario: Scenarios.Scenario) throws {
    let plan = try #require(scenario.result.plan, "\(scenario.result.diagnostics)")
    expectGolden(JSONPlanRenderer.render(plan, redact: false), "\(scenario.name).json")
  }

  /// A paired contact's new number is shown in place, and stays visible (as a change) when redacted.
  @Test func redactedNumberChange() throws {
    let scenario = try #require(Scenarios.all.first { $0.name == "emergency-number-change" })
    let plan = try #require(scenario.result.plan)
    expectGolden(HumanPlanRenderer(color: false, redact: true).render(plan), "emergency-number-change-redacted.txt")
  }

  @Test func capabilityErrors() {
    let result = Scenarios.capabilityErrors.result
    #expect(result.plan == nil)
    expectGolden(result.diagnostics.map(\.description).joined(separator: "\n") + "\n", "capability-errors.txt")
  }

  /// The source comments of a block line up at its longest line that fits within
  /// `HumanPlanRenderer.sourceColumn`; a line beyond it (a contact with a long name, a long
  /// list of times) keeps its comment two spaces after it and does not push the others out.
  @Test func longNamesDoNotPushTheSourceComments() throws {
    let yaml = """
      reminders:
        medicine:
          enabled: true
          at: ["06:00", "07:00", "08:00", "09:00", "10:00", "11:00", "12:00", "13:00", "14:00", "15:00"]
          repeat: workday
        custom:
          - name: Take the blood pressure tablet
            at: ["19:30"]
            notes: With water
      contacts:
        - name: Alexandra Maria Doe-Smithsonian
          phone: "+15550100"
        - name: Bo
          phone: "+15550101"
        - name: Christopher
          phone: "+15550102"
      """
    let loaded = ManifestLoader.load(bytes: Array(yaml.utf8), file: "watch.yaml")
    let manifest = try #require(loaded.manifest, "\(loaded.diagnostics)")
    let result = Planner.plan(manifest, state: Profiles.factoryState(Profiles.roomy), capabilities: Profiles.roomy)
    let plan = try #require(result.plan, "\(result.diagnostics)")
    expectGolden(HumanPlanRenderer(color: false, redact: false).render(plan), "long-names.txt")
  }

  @Test func colourOnlyWhenAsked() throws {
    let plan = try #require(Scenarios.all.last?.result.plan)
    #expect(!HumanPlanRenderer(color: false, redact: false).render(plan).contains("\u{1B}["))
    let coloured = HumanPlanRenderer(color: true, redact: false).render(plan)
    #expect(coloured.contains("\u{1B}[31m-\u{1B}[0m") && coloured.contains("\u{1B}[32m+\u{1B}[0m"))
  }

  @Test(arguments: [(PlanCounts(add: 0, change: 0, destroy: 0), "empty"), (PlanCounts(add: 1, change: 0, destroy: 0), "custom-create"),
                    (PlanCounts(add: 0, change: 0, destroy: 2), "custom-delete"), (PlanCounts(add: 1, change: 3, destroy: 1), "mixed-fit")])
  func countsFollowTheActions(_ counts: PlanCounts, _ name: String) throws {
    let scenario = try #require(Scenarios.all.first { $0.name == name })
    #expect(scenario.result.plan?.counts == counts)
  }
}
