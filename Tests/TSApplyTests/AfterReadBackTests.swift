import Foundation
import Testing
import TSApply
import TSDevice
import TSManifest
import TSModel
import TSPlan
import TSTestSupport

/// Property: on every platform profile, a plan's `after` for every created or updated reminder
/// is exactly what the watch holds once the plan is applied (the device-assigned ID of a created
/// reminder aside). The plan reads its template and stored form from the one platform table, the
/// simulated watch stores through the same table, so a JSON plan never promises what the watch
/// will not keep (Fit's template once promised lunch break on; the watch kept it off).
@Suite struct AfterReadBackTests {
  static let iterations = 40

  @Test(arguments: PlatformProfile.all.map(\.name))
  func afterIsWhatTheWatchReadsBack(_ name: String) async throws {
    let profile = try PlatformProfile.named(name)
    var random = generator(profile, seed: UInt64(name.utf8.count * 104_729))
    let backups = try backupDirectory()
    var compared = 0
    for iteration in 0..<Self.iterations {
      let device = watch(profile)
      _ = try? await planAndApply(random.manifest(), on: device, backups: backups)
      let manifest = random.manifest()
      guard let plan = try await currentPlan(manifest, on: device).plan else { continue }
      try await planAndApply(manifest, on: device, backups: backups)
      let after = try await device.fetchAllReminders()
      for change in plan.resourceChanges {
        guard case .reminder(let promised)? = change.after else { continue }
        compared += 1
        switch change.action {
        case .update:
          let held = after.first { $0.reminderId == promised.reminderId }
          #expect(held == promised, "iteration \(iteration) on \(name): \(change.address)")
        case .create:
          // Custom names are unique on the watch after an apply (the planner deletes duplicates);
          // the ID may be one a deleted reminder had.
          let held = after.first { $0.reminderType == .custom && $0.reminderName == promised.reminderName }
          var expected = promised
          expected.reminderId = held?.reminderId ?? ""
          #expect(held == expected, "iteration \(iteration) on \(name): \(change.address)")
        case .delete:
          break
        }
      }
    }
    #expect(compared > Self.iterations / 4, "only \(compared) reminder changes compared on \(name)")
  }
}
