import Foundation
import Testing
import TSApply
import TSDevice
import TSManifest
import TSModel
import TSPlan
import TSTestSupport

/// Property: on every platform profile, for many generated manifests and watch states, apply
/// (through the real simulated watch and the real applier) then plan gives an empty plan.
@Suite struct ApplyConvergenceTests {
  static let iterations = 40

  @Test(arguments: PlatformProfile.all.map(\.name))
  func applyThenPlanIsEmpty(_ name: String) async throws {
    let profile = try PlatformProfile.named(name)
    var random = generator(profile, seed: UInt64(name.utf8.count * 7919))
    let backups = try backupDirectory()
    var changed = 0
    for iteration in 0..<Self.iterations {
      let device = watch(profile)
      // A varied starting state: whatever a first generated manifest leaves on the watch.
      let first = random.manifest()
      _ = try? await planAndApply(first, on: device, backups: backups)
      let manifest = random.manifest()
      let result = try await currentPlan(manifest, on: device)
      guard let plan = result.plan else { continue }
      if !plan.isEmpty { changed += 1 }
      do {
        try await planAndApply(manifest, on: device, backups: backups)
      } catch {
        Issue.record("iteration \(iteration) on \(name): \(error)")
        return
      }
      let again = try await currentPlan(manifest, on: device)
      #expect(again.plan?.isEmpty == true, "iteration \(iteration) on \(name): \(again.plan?.resourceChanges.map(\.address) ?? [])")
    }
    #expect(changed > Self.iterations / 3, "only \(changed) of \(Self.iterations) manifests changed anything on \(name)")
  }
}
