import Foundation
import TSModel
import TSPlan

/// Drift: what changed on the watch outside tsapply (on the watch itself, or from another tool)
/// since the last successful apply.
///
/// Computed with the planner, so it compares exactly what plans compare: the current state,
/// stated as a manifest (`StateManifest`), is planned against the state the last apply left. The
/// resulting changes have `before` = last applied and `after` = now. Pure.
public enum Drift {
  /// The drifted resources; empty when the watch still holds what the last apply left.
  public static func changes(since lastApplied: DeviceState, current: DeviceState,
                             capabilities: DeviceCapabilities) -> [ResourceChange] {
    let (manifest, _) = StateManifest.manifest(for: current, capabilities: capabilities, file: "watch")
    return Planner.plan(manifest, state: lastApplied, capabilities: capabilities, fingerprint: false).plan?.resourceChanges ?? []
  }
}

/// The state a successful apply left on one watch, kept so the next plan can show drift.
///
/// Stored as JSON in the watch's state folder (`last-applied.json`, mode 0600: it holds
/// contacts; the engine's `WatchHome` keeps one folder per watch identity).
public struct LastApplied: Hashable, Codable, Sendable {
  /// Version of the last-applied record's format.
  public static let currentFormatVersion = 1

  /// `format_version` in JSON; always `currentFormatVersion` when written.
  public var formatVersion: Int
  /// The device the state belongs to (e.g. `sim:/abs/path/.tsapply/device.json`).
  public var device: String
  /// Platform profile; a record from another platform is ignored.
  public var profile: String
  /// The verified state after the apply.
  public var state: DeviceState

  /// The record of `state`, verified on the `profile` watch named `device` after an apply.
  public init(device: String, profile: String, state: DeviceState) {
    self.formatVersion = Self.currentFormatVersion
    self.device = device
    self.profile = profile
    self.state = state
  }

  enum CodingKeys: String, CodingKey {
    case formatVersion = "format_version", device, profile, state
  }

  /// The record at `path` for `device`, or `nil` when there is none or it cannot be used
  /// (another format or device): drift is a courtesy, never a reason to fail a plan.
  public static func read(at path: String, device: String) -> LastApplied? {
    guard let data = FileManager.default.contents(atPath: path),
          let record = try? JSONDecoder().decode(LastApplied.self, from: data),
          record.formatVersion == currentFormatVersion, record.device == device else { return nil }
    return record
  }

  /// Writes the record to `path` (0600), replacing the previous one.
  public func write(to path: String) throws(SecureFileError) {
    try SecureFile.write(Array(canonicalJSON(self).utf8), to: path)
  }
}
