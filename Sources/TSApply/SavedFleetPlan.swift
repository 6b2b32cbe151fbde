import Foundation
import TSManifest
import TSModel
import TSPlan

/// A fleet's plan written by `tsapply plan --fleet FILE -out PLANFILE` and applied later by
/// `tsapply apply PLANFILE` (docs/fleet.md "Fleet CI").
///
/// One part per watch, each bound as a single watch's saved plan is (`SavedPlan`): to the watch
/// it was made for (`plan.device`, and the device spec in the fleet file), to the bytes of the
/// manifests merged for it (its own and the defaults: `manifestsDigest`), and to the watch state
/// it was made from (`plan.priorStateDigest`). Applying it checks each part on its own: a part
/// whose manifests or watch changed is refused and its watch not touched, the others are applied.
/// Written as JSON, mode 0600 (it holds contacts).
public struct SavedFleetPlan: Hashable, Codable, Sendable {
  /// Version of the format.
  public static let currentFormatVersion = 1

  /// Marks the file as a fleet's saved plan (`"tsapply_saved_fleet_plan": 1`).
  public var formatVersion: Int
  /// The fleet file, relative to the saved plan's directory (as `SavedPlan.manifestPath`).
  public var fleetPath: String
  /// One part per watch planned, in fleet order (watches that failed to plan have none).
  public var watches: [Part]
  /// The watches chosen for the plan that could not be planned (their manifests had errors,
  /// the watch could not be read): applying the plan leaves them alone and says so.
  public var unplanned: [String]

  /// One watch's reviewed plan.
  public struct Part: Hashable, Codable, Sendable {
    /// The watch's name in the fleet.
    public var name: String
    /// Its device spec in the fleet file when the plan was made.
    public var device: String
    /// SHA-256 of the bytes of the manifests merged for it (its own, then the defaults:
    /// `ManifestDocument.bytes` of the fleet's member).
    public var manifestsDigest: String
    /// The plan (its `device` is the watch's identity).
    public var plan: Plan

    /// A part for the watch `name`.
    public init(name: String, device: String, manifestsDigest: String, plan: Plan) {
      self.name = name
      self.device = device
      self.manifestsDigest = manifestsDigest
      self.plan = plan
    }

    enum CodingKeys: String, CodingKey {
      case name, device, manifestsDigest = "manifests_sha256", plan
    }
  }

  /// A saved fleet plan of the fleet file at `fleetPath` (relative to the plan file's directory).
  public init(fleetPath: String, watches: [Part], unplanned: [String] = []) {
    formatVersion = Self.currentFormatVersion
    self.fleetPath = fleetPath
    self.watches = watches
    self.unplanned = unplanned
  }

  enum CodingKeys: String, CodingKey {
    case formatVersion = "tsapply_saved_fleet_plan", fleetPath = "fleet_path", watches, unplanned
  }

  /// `fleetPath` as a path a process can open, resolved against the directory of the saved
  /// plan at `planPath` (absolute).
  public func fleetLocation(planPath: String) -> String {
    guard !fleetPath.hasPrefix("/") else { return fleetPath }
    let directory = (planPath as NSString).deletingLastPathComponent
    return ((directory as NSString).appendingPathComponent(fleetPath) as NSString).standardizingPath
  }

  /// Writes the plan to `path` (absolute), mode 0600, with the checks of `SavedPlan.write(to:)`:
  /// never over the fleet file or a file that is not a saved plan.
  /// - Throws: `SecureFileError`.
  public func write(to path: String) throws(SecureFileError) {
    try SavedPlan.checkTarget(path, manifest: fleetLocation(planPath: path))
    try SecureFile.write(Array(canonicalJSON(self).utf8), to: path)
  }

  /// Whether `bytes` are a JSON object with the key `tsapply_saved_fleet_plan` at the top.
  public static func isFleetPlan(_ bytes: [UInt8]) -> Bool {
    struct Marker: Decodable {
      var isPresent: Bool
      enum CodingKeys: String, CodingKey { case version = "tsapply_saved_fleet_plan" }
      init(from decoder: any Decoder) throws {
        isPresent = try decoder.container(keyedBy: CodingKeys.self).contains(.version)
      }
    }
    guard bytes.first(where: { !$0.isASCIIWhitespace }) == UInt8(ascii: "{") else { return false }
    return (try? JSONDecoder().decode(Marker.self, from: Data(bytes)))?.isPresent == true
  }

  /// Reads `bytes` as a fleet's saved plan; `nil` when they are not one.
  /// - Throws: `SavedPlanError` for one of another format, with a key written twice, or that
  ///   cannot be decoded (naming the field, `DecodingProblem`).
  public static func parse(_ bytes: [UInt8], path: String) throws(SavedPlanError) -> SavedFleetPlan? {
    guard isFleetPlan(bytes) else { return nil }
    struct Version: Decodable {
      var version: Int?
      enum CodingKeys: String, CodingKey { case version = "tsapply_saved_fleet_plan" }
    }
    let version = (try? JSONDecoder().decode(Version.self, from: Data(bytes)))?.version
    guard let version else {
      throw .unreadable(path: path, reason: "\"tsapply_saved_fleet_plan\" must be the format number \(currentFormatVersion)")
    }
    guard version == currentFormatVersion else { throw .unsupportedVersion(path: path, version: version) }
    if let repeated = JSONReader.firstRepeatedKey(in: Data(bytes)) {
      throw .unreadable(path: path, reason: "\(repeated); make the plan again with 'tsapply plan --fleet FILE -out'")
    }
    do {
      return try JSONDecoder().decode(SavedFleetPlan.self, from: Data(bytes))
    } catch {
      throw .unreadable(path: path, reason: DecodingProblem.describe(error, in: Data(bytes)))
    }
  }
}
