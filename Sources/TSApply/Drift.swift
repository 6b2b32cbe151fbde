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
    return Planner.plan(manifest, state: lastApplied, capabilities: capabilities).plan?.resourceChanges ?? []
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
    (try? load(at: path, device: device)) ?? nil
  }

  /// The record at `path` for `device`; `nil` only when there is no file. `tsapply drift`
  /// uses this: asked for drift on purpose, a record that exists but cannot be used is an
  /// error, not a silent "no record" (a cron check would report "no drift" forever).
  /// - Throws: `LastAppliedError` when the file cannot be read, is not a last-applied record
  ///   (the field in plain words, `DecodingProblem`), is of another format version, or was
  ///   recorded for another device.
  public static func load(at path: String, device: String) throws(LastAppliedError) -> LastApplied? {
    guard FileManager.default.fileExists(atPath: path) else { return nil }
    guard let data = FileManager.default.contents(atPath: path) else {
      throw LastAppliedError(path: path, reason: "the file cannot be read")
    }
    let record: LastApplied
    do {
      record = try RecordFile.decode(LastApplied.self, from: data, currentVersion: currentFormatVersion, kind: "last-applied record")
    } catch {
      throw LastAppliedError(path: path, reason: error.reason)
    }
    guard record.device == device else {
      throw LastAppliedError(path: path, reason: "it was recorded for \(record.device), not \(device)")
    }
    return record
  }

  /// Writes the record to `path` (0600), replacing the previous one.
  public func write(to path: String) throws(SecureFileError) {
    try SecureFile.write(Array(canonicalJSON(self).utf8), to: path)
  }
}

/// A last-applied record that exists but cannot be used (`LastApplied.load`).
public struct LastAppliedError: Error, Hashable, Sendable, CustomStringConvertible {
  /// The record's path.
  public var path: String
  /// What is wrong, in plain words.
  public var reason: String

  /// The refusal of the record at `path` for `reason`.
  public init(path: String, reason: String) {
    self.path = path
    self.reason = reason
  }

  /// `the last-applied record PATH cannot be used: REASON; …` with what to do.
  public var description: String {
    "the last-applied record \(path) cannot be used: \(reason); drift cannot be told from it. "
      + "Remove it and run 'tsapply apply' to record the watch again"
  }
}

/// Reading the record without `JSONDecoder` when it is in the form tsapply writes (`JSONReader`;
/// `RecordFile` falls back to `JSONDecoder` for anything else).
extension LastApplied: VersionedRecord {
  public init(json reader: inout JSONReader) throws(JSONReader.Miss) {
    var formatVersion: Int?, device: String?, profile: String?, state: DeviceState?
    try reader.object { (key, reader) throws(JSONReader.Miss) in
      switch key {
      case "format_version": try reader.field(&formatVersion)
      case "device": try reader.field(&device)
      case "profile": try reader.field(&profile)
      case "state": try reader.field(&state)
      default: throw JSONReader.Miss()
      }
    }
    guard let formatVersion, let device, let profile, let state else { throw JSONReader.Miss() }
    self.formatVersion = formatVersion
    self.device = device
    self.profile = profile
    self.state = state
  }
}
