import Foundation
import TSApply
import TSDevice
import TSManifest
import TSModel
import TSPlan
import TSTestSupport

/// An in-memory simulated watch of `profile` holding `state`, with optional injected faults.
func watch(_ profile: PlatformProfile, state: DeviceState? = nil, faults: [SimulationOptions.Fault] = []) -> SimulatedDevice {
  SimulatedDevice(profile: profile, state: state, options: SimulationOptions(faults: faults))
}

/// Plans `manifest` on `device` and applies it; returns the report. Backups go to `directory`.
@discardableResult
func planAndApply(_ manifest: Manifest, on device: any Device, backups directory: String,
                  progress: @Sendable (ReconcileEvent) -> Void = { _ in }) async throws -> ApplyReport {
  let reconciler = try await Reconciler.connect(device)
  let (state, result) = try await reconciler.plan(manifest)
  guard let plan = result.plan else { throw PlanningFailed(diagnostics: result.diagnostics) }
  return try await reconciler.apply(plan, manifest: manifest, state: state, backupDirectory: directory, now: Date(), progress: progress)
}

/// Planning produced errors.
struct PlanningFailed: Error, CustomStringConvertible {
  var diagnostics: [Diagnostic]
  var description: String { diagnostics.map(\.description).joined(separator: "\n") }
}

/// The plan of `manifest` against what `device` holds now.
func currentPlan(_ manifest: Manifest, on device: any Device) async throws -> PlanResult {
  try await Reconciler.connect(device).plan(manifest).result
}

/// A seeded generator for `profile`.
func generator(_ profile: PlatformProfile, seed: UInt64) -> Generator {
  Generator(random: SplitMix64(state: seed), capabilities: profile.capabilities)
}

/// A fresh temporary directory for backups.
func backupDirectory() throws -> String {
  try TSApplyBinary.temporaryDirectory().appendingPathComponent("backups").path
}
