import Foundation
import Testing
import TSApply
import TSDevice
import TSFleet
import TSModel
import TSPlan
import TSTestSupport

/// What a person reads of a fleet's report: watches with identical outcomes grouped, failures
/// and unsafe plans first, the table collapsed for large fleets, `--summary`, `--only`, and the
/// Markdown for a pull request (golden files).
@Suite struct FleetReviewTests {
  /// The plan of `yaml` against a fresh simulated watch (default profile) holding `contacts`.
  static func plan(_ yaml: String, contacts: [Contact] = []) async throws -> Plan {
    let device = SimulatedDevice(profile: .default)
    for contact in contacts { try device.simulateContactAdd(contact) }
    let reconciler = try await Reconciler.connect(device)
    let (_, result) = try await reconciler.plan(try manifest(yaml, file: "m.yaml"))
    return try #require(result.plan, "\(result.diagnostics)")
  }

  static let interval = "reminders:\n  drinking: {enabled: false, repeat: everyday, period: {start: \"08:00\", end: \"22:00\", every: 3h}}\n"

  /// 1,000 watches: 950 with one changed field, 46 whose contacts are cleared (unsafe), 1 with
  /// no changes... and 3 failed, in an order that mixes them.
  static func report(operation: String = "plan") async throws -> FleetReport {
    let interval = try await plan(Self.interval)
    let clear = try await plan("contacts: []\n", contacts: [Contact(name: "Ann", phoneNum: "+447700900456"),
                                                            Contact(name: "Bo", phoneNum: "+447700900457")])
    let none = try await plan("contacts: []\n")
    let rows = (0..<1000).map { index -> FleetWatchReport in
      let name = String(format: "room-%04d", index)
      let manifests = ["residents/\(name).yaml", "wards/ward-a.yaml"]
      switch index {
      case 17, 503, 998:
        return FleetWatchReport(name: name, device: "sim:watches/\(name).json", verdict: .failed("no simulated watch at watches/\(name).json"),
                                elapsed: .zero, section: "Error: no simulated watch at watches/\(name).json\n", manifests: manifests)
      case 900..<946:
        return FleetWatchReport(name: name, device: "sim:watches/\(name).json", verdict: .changes(clear.counts), elapsed: .zero,
                                plan: clear, manifests: manifests)
      case 999:
        return FleetWatchReport(name: name, device: "sim:watches/\(name).json", verdict: .noChanges, elapsed: .zero,
                                plan: none, manifests: ["wards/ward-a.yaml"])
      default:
        return FleetWatchReport(name: name, device: "sim:watches/\(name).json", verdict: .changes(interval.counts), elapsed: .zero,
                                plan: interval, manifests: manifests)
      }
    }
    return FleetReport(operation: operation, fleetFile: "fleet.yaml", watches: rows)
  }

  static let renderer = HumanPlanRenderer(color: false, redact: true)

  @Test func aThousandWatchesReviewInAFewGroups() async throws {
    let text = try await Self.report().review(renderer: Self.renderer)
    expectGolden(text, "review-1000.txt")
    #expect(!text.contains("7700900456"), "a masked number leaked")
  }

  /// Rows as over MQTT (no plan): a group's headline says the changes pending beside no drift,
  /// and a watch of its own whose agent undid a wearer's change says its result before the
  /// warning (fresh-eyes findings: "26 watches: no drift" for watches a change had not reached;
  /// only the warning shown).
  @Test func planlessRowsSayTheirPendingChangesAndTheirResult() {
    let drift = (0..<22).map { index in
      FleetWatchReport(name: String(format: "room-%02d", index), device: "bridge:b/\(index)", verdict: .drift(count: 0, pending: 1, hasRecord: true),
                       elapsed: .zero)
    }
    let drifted = FleetReport(operation: "drift", fleetFile: "fleet.yaml", watches: drift).review(renderer: Self.renderer)
    #expect(drifted.contains("=== 22 watches: no drift (0 drifted, 1 pending)\n"), "\(drifted)")
    var applied = (0..<22).map { index in
      FleetWatchReport(name: String(format: "room-%02d", index), device: "bridge:b/\(index)", verdict: .applied(PlanCounts(add: 0, change: 1, destroy: 0)),
                       elapsed: .zero)
    }
    applied[5].verdict = .applied(PlanCounts(add: 0, change: 2, destroy: 0))
    applied[5].section = "Warning: undid what was changed on the watch since the last apply: contacts (1 added)\n"
    let text = FleetReport(operation: "apply", fleetFile: "fleet.yaml", watches: applied).review(renderer: Self.renderer)
    #expect(text.contains("=== room-05  device bridge:b/5\napplied (+0 ~2 -0)\nWarning: undid what was changed on the watch"), "\(text)")
    #expect(text.contains("=== 21 watches: applied (+0 ~1 -0)"), "\(text)")
  }

  /// The closing note's target: a one-field change on 1,000 watches fits in 40 lines.
  @Test func aOneFieldChangeOnAThousandWatchesFitsInFortyLines() async throws {
    let interval = try await Self.plan(Self.interval)
    let rows = (0..<1000).map { index in
      FleetWatchReport(name: String(format: "room-%04d", index), device: "sim:\(index).json", verdict: .changes(interval.counts),
                       elapsed: .zero, plan: interval, manifests: ["residents/\(index).yaml", "wards/ward-a.yaml"])
    }
    let text = FleetReport(operation: "plan", fleetFile: "fleet.yaml", watches: rows).review(renderer: Self.renderer)
    #expect(text.split(separator: "\n", omittingEmptySubsequences: false).count - 1 <= 40, "\(text)")
    #expect(text.contains("=== 1000 watches: ~ reminder.drinking { ~ period.every = 2h -> 3h }\n"))
  }

  @Test func summaryIsOneLinePerGroup() async throws {
    expectGolden(try await Self.report().review(renderer: Self.renderer, options: FleetReviewOptions(summary: true)), "review-1000-summary.txt")
  }

  @Test func markdownCollapsesEachGroup() async throws {
    let markdown = try await Self.report().markdown(renderer: Self.renderer)
    expectGolden(markdown, "review-1000.md")
    #expect(markdown.count < FleetReport.markdownLimit)
  }

  @Test(arguments: [
    ("failed", ["room-0017", "room-0503", "room-0998"]),
    ("failed,changed", (0..<999).map { String(format: "room-%04d", $0) }),
    ("drift", []),
  ])
  func onlyShowsTheWatchesAsked(_ words: String, _ names: [String]) async throws {
    let report = try await Self.report()
    let filter = try #require(FleetFilter(words: words))
    #expect(report.watches.filter(filter.matches).map(\.name) == names)
    let text = report.review(renderer: Self.renderer, options: FleetReviewOptions(only: filter))
    #expect(text.hasSuffix("Shown: \(names.count) of 1000 watches (--only \(words)).\n"), "\(text)")
  }

  /// Rows without a plan (a broker's statuses): failures group only with the same reason;
  /// others group by result, the headline showing their reason only when it is the same for all.
  @Test func rowsWithoutAPlanGroupByResultAndFailuresByReason() {
    let rows = [
      FleetWatchReport(name: "a", device: "sim:a.json", verdict: .pending("agent a01 offline"), elapsed: .zero),
      FleetWatchReport(name: "b", device: "sim:b.json", verdict: .pending("agent a02 offline"), elapsed: .zero),
      FleetWatchReport(name: "c", device: "sim:c.json", verdict: .failed("refused: unsafe"), elapsed: .zero),
      FleetWatchReport(name: "d", device: "sim:d.json", verdict: .failed("invalid"), elapsed: .zero),
      FleetWatchReport(name: "e", device: "sim:e.json", verdict: .publish("revision 1"), elapsed: .zero),
      FleetWatchReport(name: "f", device: "sim:f.json", verdict: .publish("revision 1"), elapsed: .zero),
    ]
    let text = FleetReport(operation: "apply", fleetFile: "fleet.yaml", watches: rows)
      .review(renderer: Self.renderer, options: FleetReviewOptions(summary: true))
    #expect(text == """
      c: failed: refused: unsafe
      d: failed: invalid
      2 watches (a, b): pending (their reasons or counts differ: --json has each watch's)
      2 watches (e, f): to publish: revision 1

      6 watches: 2 pending, 2 failed, 2 to publish.

      """, "\(text)")
  }

  /// Rows with one plan grouped though their reasons differ (each names the agent serving its
  /// watch) say the reasons differ, not the first row's as everyone's (fresh-eyes fe90 #7: four
  /// watches of two agents under "agent a1 still holds the watch").
  @Test func rowsWithOnePlanAndDifferentReasonsDoNotShowTheFirstOnesReason() async throws {
    let plan = try await Self.plan("contacts:\n  - {name: Mom, phone: \"+15550100\"}\n")
    let rows = [("a", "agent a1 still holds the watch"), ("b", "agent a2 still holds the watch"), ("c", "agent a1 still holds the watch")].map {
      FleetWatchReport(name: $0.0, device: "sim:\($0.0).json", verdict: .publish($0.1), elapsed: .zero, plan: plan)
    }
    let text = FleetReport(operation: "plan", fleetFile: "fleet.yaml", watches: rows)
      .review(renderer: Self.renderer, options: FleetReviewOptions(summary: true))
    #expect(text.hasPrefix("3 watches (a, b, c): to publish (their reasons differ: --json has each watch's)\n"), "\(text)")
    #expect(!text.contains("agent a1"), "\(text)")
    let same = FleetReport(operation: "plan", fleetFile: "fleet.yaml", watches: [rows[0], rows[2]])
      .review(renderer: Self.renderer, options: FleetReviewOptions(summary: true))
    #expect(same.hasPrefix("2 watches (a, c): to publish: agent a1 still holds the watch"), "\(same)")
  }

  /// Two different numbers that mask alike (`+******00`) are two groups, not one change, even
  /// without fingerprints.
  @Test func numbersMaskedAlikeAreNotGroupedAsOneChange() async throws {
    let a = try await Self.plan("contacts:\n  - {name: Mom, phone: \"+15550100\"}\n")
    let b = try await Self.plan("contacts:\n  - {name: Mom, phone: \"+15550200\"}\n")
    let rows = [("a", a), ("b", b)].map { name, plan in
      FleetWatchReport(name: name, device: "sim:\(name).json", verdict: .changes(plan.counts), elapsed: .zero, plan: plan)
    }
    let text = FleetReport(operation: "plan", fleetFile: "fleet.yaml", watches: rows).review(renderer: Self.renderer)
    #expect(text.contains("=== a  device sim:a.json\n") && text.contains("=== b  device sim:b.json\n"), "\(text)")
    #expect(!text.contains("5550100") && !text.contains("5550200"))
  }

  /// `plan --fleet`'s review in bounded memory (`FleetReviewPlans`: one plan kept per body, the
  /// other rows reduced as they finish, in any order) reads exactly as the review of every
  /// watch's own plan: groups, headlines, source comments (kept only where every watch of a
  /// group has its change at the same place), the summary, `--only`.
  @Test func aReviewKeepingOnePlanPerBodyReadsAsTheReviewOfEveryPlan() async throws {
    let full = try await Self.report()
    var rows = full.watches
    // One change set in different files (sources differ), another in the same file twice.
    let ann = "contacts:\n  - {name: Ann, phone: \"+15550100\"}\n", bo = "contacts:\n  - {name: Bo, phone: \"+15550200\"}\n"
    for (name, file, yaml) in [("own-a", "a.yaml", ann), ("same-1", "s.yaml", bo), ("own-b", "b.yaml", ann), ("same-2", "s.yaml", bo)] {
      let device = SimulatedDevice(profile: .default)
      let reconciler = try await Reconciler.connect(device)
      let plan = try #require(try await reconciler.plan(try manifest(yaml, file: file)).1.plan)
      rows.append(FleetWatchReport(name: name, device: "sim:\(name).json", verdict: .changes(plan.counts), elapsed: .zero,
                                   plan: plan, manifests: [file]))
    }
    let plans = FleetReviewPlans()
    var reduced = rows
    // Rows finish in any order: the first in fleet order must still be the one whose plan is kept.
    var generator = SplitMix64(state: 7)
    for index in rows.indices.shuffled(using: &generator) {
      guard let plan = reduced[index].plan, !reduced[index].verdict.isFailure else { continue }
      reduced[index].reviewed = plans.add(plan, index: index)
      reduced[index].plan = nil
    }
    let expected = FleetReport(operation: "plan", fleetFile: "fleet.yaml", watches: rows)
    let actual = FleetReport(operation: "plan", fleetFile: "fleet.yaml", watches: plans.shown(reduced))
    for renderer in [Self.renderer, HumanPlanRenderer(color: false, redact: false)] {
      for options in [FleetReviewOptions(), FleetReviewOptions(summary: true), FleetReviewOptions(only: .changed),
                      FleetReviewOptions(summary: true, only: [.failed, .changed])] {
        #expect(actual.review(renderer: renderer, options: options) == expected.review(renderer: renderer, options: options))
      }
    }
    let text = actual.review(renderer: Self.renderer)
    #expect(text.components(separatedBy: "=== 2 watches: ~ contacts").count == 3, "\(text)")
    #expect(text.contains("# s.yaml:") && !text.contains("# a.yaml:") && !text.contains("# b.yaml:"), "\(text)")
  }

  @Test(arguments: ["", "failed,", "stale", "changed, bogus"])
  func onlyRefusesUnknownWords(_ words: String) {
    #expect(FleetFilter(words: words) == nil)
  }

  /// The CLI's list of `--only` words (TSApplyCLI cannot see TSFleet) is this one.
  @Test func theCommandLineKnowsTheSameWords() {
    #expect(FleetFilter.words.map(\.word) == ["failed", "changed", "drift", "pending"])
  }

  /// A small fleet shows each watch under its own header (device, merged manifests) and the
  /// whole table.
  @Test func aSmallFleetShowsEveryWatchAndTheTable() async throws {
    let interval = try await Self.plan(Self.interval)
    let rows = ["a", "b"].map { name in
      FleetWatchReport(name: name, device: "sim:\(name).json", verdict: .changes(interval.counts), elapsed: .zero, plan: interval,
                       manifests: name == "a" ? ["residents/a.yaml", "wards/w.yaml"] : ["wards/w.yaml"])
    }
    let text = FleetReport(operation: "plan", fleetFile: "fleet.yaml", watches: rows).review(renderer: Self.renderer)
    #expect(text.contains("=== 2 watches: ~ reminder.drinking { ~ period.every = 2h -> 3h }\n    a, b\n    manifests: 2 different sets"), "\(text)")
    #expect(text.contains("\nWatch  Result   Changes   Time\na      changes  +0 ~1 -0  0.0s\nb      changes  +0 ~1 -0  0.0s\n"), "\(text)")
  }
}
