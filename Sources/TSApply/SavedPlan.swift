import Foundation
import TSManifest
import TSModel
import TSPlan

/// A plan written by `tsapply plan -out FILE` and applied later by `tsapply apply FILE`.
///
/// It is bound to the manifest's content (SHA-256 of the file's bytes) and to the watch state the
/// plan was made from (`Plan.priorStateDigest`); `apply` refuses it as stale when either changed.
/// Written as JSON, mode 0600 (it holds contacts).
public struct SavedPlan: Hashable, Codable, Sendable {
  /// Version of the saved-plan format.
  public static let currentFormatVersion = 1

  /// Marks the file as a tsapply saved plan (`"tsapply_saved_plan": 1`).
  public var formatVersion: Int
  /// The manifest the plan was made from: its path relative to the saved plan's directory
  /// (`../watch.yaml`), so a plan made in one checkout applies in another checkout of the same
  /// repository (a CI job handing its plan to the next); plans written by earlier versions hold
  /// an absolute path, which is used as it is. See `manifestLocation(planPath:)`.
  public var manifestPath: String
  /// SHA-256 of the manifest's bytes when the plan was made.
  public var manifestDigest: String
  /// The watch the plan was made for (e.g. `sim:/abs/path.json`); `apply` uses it and refuses
  /// another. `nil` in plans that did not record it.
  public var device: String?
  /// The plan itself.
  public var plan: Plan

  /// A saved `plan` made from the manifest at `manifestPath` (relative to the plan file's
  /// directory) whose bytes hash to `manifestDigest` (SHA-256, hex), for the watch named `device`.
  public init(manifestPath: String, manifestDigest: String, device: String? = nil, plan: Plan) {
    self.formatVersion = Self.currentFormatVersion
    self.manifestPath = manifestPath
    self.manifestDigest = manifestDigest
    self.device = device
    self.plan = plan
  }

  enum CodingKeys: String, CodingKey {
    case formatVersion = "tsapply_saved_plan", manifestPath = "manifest_path"
    case manifestDigest = "manifest_sha256", device, plan
  }

  /// `manifestPath` as a path a process can open: relative paths resolved against the
  /// directory of the saved plan at `planPath` (absolute).
  public func manifestLocation(planPath: String) -> String {
    guard !manifestPath.hasPrefix("/") else { return manifestPath }
    let directory = (planPath as NSString).deletingLastPathComponent
    return ((directory as NSString).appendingPathComponent(manifestPath) as NSString).standardizingPath
  }

  /// The path of `target` relative to `directory` (both absolute), with `..` where needed.
  public static func relativePath(_ target: String, from directory: String) -> String {
    let to = (target as NSString).standardizingPath.split(separator: "/")
    let from = (directory as NSString).standardizingPath.split(separator: "/")
    var common = 0
    while common < min(to.count, from.count), to[common] == from[common] { common += 1 }
    let up = Array(repeating: "..", count: from.count - common)
    return (up + to[common...].map(String.init)).joined(separator: "/")
  }

  /// Writes the saved plan to `path` (absolute) with mode 0600, replacing an earlier saved plan.
  ///
  /// A plan never replaces anything else: the manifest it was made from, or any existing file
  /// that is not a tsapply saved plan (a manifest named by mistake, `plan -out watch.yaml`), is
  /// refused, so following advice cannot destroy a user's file.
  /// - Throws: `SecureFileError`, also when `path`'s directory does not exist (it is not created:
  ///   a mistyped `-out` path should not make directories).
  public func write(to path: String) throws(SecureFileError) {
    try Self.checkTarget(path, manifest: manifestLocation(planPath: path))
    try SecureFile.write(Array(canonicalJSON(self).utf8), to: path)
  }

  /// Whether a plan of the manifest at `manifest` (absolute) may be saved to `path`
  /// (absolute), without planning or writing anything: the checks of `write(to:)`, so a command
  /// can refuse a wrong `-out` before it reads the watch or prints a plan.
  /// - Throws: `SecureFileError` when `path`'s directory does not exist, or `path` is the
  ///   manifest, a directory, or an existing file that is not a saved plan.
  public static func checkTarget(_ path: String, manifest: String) throws(SecureFileError) {
    let directory = (path as NSString).deletingLastPathComponent
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
      throw SecureFileError(path: path, reason: "its directory \(directory) does not exist")
    }
    if SecureFile.resolvingSymlinks(manifest) == SecureFile.resolvingSymlinks(path) {
      throw SecureFileError(path: path, reason: "it is the manifest the plan was made from; save the plan to a new file such as changes.tfplan")
    }
    if SecureFile.exists(path) {
      if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
        throw SecureFileError(path: path, reason: "it is a directory; save the plan to a file such as changes.tfplan")
      }
      let existing = (try? ManifestSource.file(path: path, displayName: path).read(maxBytes: 1 << 20, noun: "saved plan").get()) ?? []
      let isPlan: Bool
      do { isPlan = try Self.parse(existing, path: path) != nil } catch { isPlan = true }  // a plan of another format
      guard isPlan else {
        throw SecureFileError(path: path, reason: "the file exists and is not a tsapply saved plan, so it is not replaced; save the plan to a new file such as changes.tfplan")
      }
    }
  }

  /// Reads `bytes` as a saved plan; `nil` when they are not one (e.g. a YAML manifest).
  /// - Throws: `SavedPlanError.unsupportedVersion` for a saved plan of another format version;
  ///   `.unreadable` for one that cannot be decoded, naming the field in plain words
  ///   (`DecodingProblem`), e.g. `plan.resourceChanges[0].action: "rename" is not an accepted value`.
  public static func parse(_ bytes: [UInt8], path: String) throws(SavedPlanError) -> SavedPlan? {
    guard bytes.first(where: { !$0.isASCIIWhitespace }) == UInt8(ascii: "{") else { return nil }
    struct Marker: Decodable {
      /// Whether the key is there at all, and its value when it is a whole number.
      var isPresent: Bool
      var version: Int?
      enum CodingKeys: String, CodingKey { case version = "tsapply_saved_plan" }
      init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        isPresent = container.contains(.version)
        version = try? container.decode(Int.self, forKey: .version)
      }
    }
    // A file named like a saved plan, or holding the marker key, is read as one: damaged, it is
    // refused as a saved plan, never read as a manifest (which `{}` would be, planning nothing).
    let named = path.hasSuffix(".tfplan")
    // A fleet's saved plan is read by `SavedFleetPlan.parse`, not refused here.
    if SavedFleetPlan.isFleetPlan(bytes) { return nil }
    guard let marker = try? JSONDecoder().decode(Marker.self, from: Data(bytes)), marker.isPresent else {
      let text = String(decoding: bytes.prefix(4096), as: UTF8.self)
      guard named || text.contains("\"tsapply_saved_plan\"") else { return nil }
      throw .unreadable(path: path, reason: "it is not JSON with \"tsapply_saved_plan\": \(currentFormatVersion) (cut short or edited?); make the plan again with 'tsapply plan -out'")
    }
    guard let version = marker.version else {
      throw .unreadable(path: path, reason: "\"tsapply_saved_plan\" must be the format number \(currentFormatVersion)")
    }
    guard version == currentFormatVersion else { throw .unsupportedVersion(path: path, version: version) }
    // JSONDecoder keeps one value of a key written twice without a word: refused, since which
    // one holds (a manifest path, a digest) is not clear.
    if let repeated = JSONReader.firstRepeatedKey(in: Data(bytes)) {
      throw .unreadable(path: path, reason: "\(repeated); make the plan again with 'tsapply plan -out'")
    }
    do {
      return try JSONDecoder().decode(SavedPlan.self, from: Data(bytes))
    } catch {
      throw .unreadable(path: path, reason: DecodingProblem.describe(error, in: Data(bytes)))
    }
  }

  /// Why the saved plan is stale against the manifest's current bytes (`nil`: unreadable) and
  /// the watch's current state: "the manifest watch.yaml changed", "the watch changed"; empty
  /// when it is fresh.
  public func staleness(manifestBytes: [UInt8]?, state: DeviceState) -> [String] {
    Self.staleness(of: plan, manifestDigest: manifestDigest, manifestBytes: manifestBytes, state: state)
  }

  /// Why `plan`, made from manifest bytes hashing to `manifestDigest`, is stale against the
  /// manifest's current bytes (`nil`: unreadable) and the watch's current state (`nil`: the
  /// watch is not compared, as for another watch than the plan's); empty when it is fresh.
  /// What every reviewed plan is checked with (a single watch's, a fleet's part).
  public static func staleness(of plan: Plan, manifestDigest: String, manifestBytes: [UInt8]?, state: DeviceState?) -> [String] {
    var reasons: [String] = []
    if let manifestBytes {
      if SHA256Digest.hex(of: manifestBytes) != manifestDigest { reasons.append("the manifest \(plan.manifestFile) changed") }
    } else {
      reasons.append("the manifest \(plan.manifestFile) can no longer be read")
    }
    if let state, state.fingerprint != plan.priorStateDigest { reasons.append("the watch changed") }
    return reasons
  }
}

/// Why a saved plan cannot be read.
public enum SavedPlanError: Error, Hashable, Sendable, CustomStringConvertible {
  /// The file is a saved plan of a format this version does not read.
  case unsupportedVersion(path: String, version: Int)
  /// The file looks like a saved plan but cannot be decoded.
  case unreadable(path: String, reason: String)

  public var description: String {
    switch self {
    case .unsupportedVersion(let path, let version):
      "\(path) is a saved plan of format \(version), which this tsapply (format \(SavedPlan.currentFormatVersion)) cannot apply"
    case .unreadable(let path, let reason):
      "\(path) is not a readable saved plan: \(reason)"
    }
  }
}

extension UInt8 {
  var isASCIIWhitespace: Bool { self == 0x20 || self == 0x0A || self == 0x0D || self == 0x09 }
}
