import Foundation
import Testing
import TSFleet
import TSModel
import TSPlan

/// The totals line under a fleet's table counts watches in words that are right for any count.
@Suite struct FleetReportTests {
  static func row(_ name: String, _ verdict: FleetVerdict) -> FleetWatchReport {
    FleetWatchReport(name: name, device: "sim:\(name).json", verdict: verdict, elapsed: .zero)
  }

  static let counts = PlanCounts(add: 1, change: 0, destroy: 0)

  @Test(arguments: [
    ([FleetVerdict.changes(counts)], "1 watch: 1 with changes."),
    ([.changes(counts), .changes(counts)], "2 watches: 2 with changes."),
    ([.noChanges], "1 watch: 1 with no changes."),
    ([.applied(counts), .failed("x"), .noChanges], "3 watches: 1 applied, 1 failed, 1 with no changes."),
    ([.drift(count: 1, pending: 0, hasRecord: true), .drift(count: 0, pending: 0, hasRecord: true),
      .drift(count: 0, pending: 0, hasRecord: false)], "3 watches: 1 drifted, 1 with no drift, 1 with no record."),
    ([.pending("offline"), .publish("r2")], "2 watches: 1 pending, 1 to publish."),
  ])
  func theTotalsLineCountsInWords(_ verdicts: [FleetVerdict], _ totals: String) {
    let report = FleetReport(operation: "plan", fleetFile: "fleet.yaml",
                             watches: verdicts.enumerated().map { Self.row("w\($0.offset)", $0.element) })
    #expect(report.table().hasSuffix("\n\n" + totals + "\n"), "\(report.table())")
  }
}
