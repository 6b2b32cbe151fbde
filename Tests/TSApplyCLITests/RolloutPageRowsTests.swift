import Foundation
import Testing
@testable import TSApplyNetworkCLI
import TSMonitor

/// The status page's rollout summary counts the watches from what the monitors last read of
/// them, as `status --fleet` counts them (docs/monitor.md "Rollouts").
@Suite struct RolloutPageRowsTests {
  static let members = ["w1", "w2", "w3", "w4", "w5"].map { StatusBoard.Member(name: $0, labels: [], device: "sim:\($0).json") }

  @Test func eachWatchHoldsItsManifestsAsItsMonitorOrAgentLastSaid() {
    let board = StatusBoard(members: Self.members, offlineThreshold: .seconds(60))
    let now = Date()
    board.checked("w1", MonitorCheck(time: now, hasRecord: true, drift: 0, pending: 0, holdsManifest: true))
    board.checked("w2", MonitorCheck(time: now, hasRecord: true, drift: 0, pending: 1, holdsManifest: false))
    board.reported("w4", AgentReport(state: "in sync", drift: 0, pending: 0, appliedRevision: "new"))
    board.reported("w5", AgentReport(state: "in sync", drift: 0, pending: 0, appliedRevision: "old"))
    let rows = MonitorCommand.rolloutRows(board.snapshot().rows, current: ["w4": ["new", "new-destroy"], "w5": ["new", "new-destroy"]])
    #expect(rows.map(\.holdsManifests) == [true, false, nil, true, false])
    #expect(rows[2].state == "checking", "w3 not read yet: not known")
    // A rollout started after those reads: what a watch held then says nothing of its revision
    // (the manifests were edited since); an agent's applied revision still does.
    let later = MonitorCommand.rolloutRows(board.snapshot().rows, current: ["w4": ["new", "new-destroy"], "w5": ["new", "new-destroy"]],
                                           since: now.addingTimeInterval(1))
    #expect(later.map(\.holdsManifests) == [nil, nil, nil, true, false])
  }
}
