import Testing
import TSDevice

@Suite struct DeviceStatisticsTests {
  @Test func totalCallsAddsEveryOperation() {
    let stats = DeviceStatistics(calls: ["fetchAllReminders": 2, "setReminder": 3])
    #expect(stats.totalCalls == 5)
    #expect(DeviceStatistics().totalCalls == 0)
  }
}
