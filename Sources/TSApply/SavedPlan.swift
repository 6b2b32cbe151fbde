import Foundation
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
  /// Absolute path of the manifest the plan was made from.
  public var manifestPath: String
  /// SHA-256 of the manifest's bytes when the plan was made.
  public var manifestDigest: String
  /// The watch the plan was made for (e.g. `sim:/abs/path.json`); `apply` uses it and refuses
  /// another. `nil` in plans that did not record it.
  public var device: String?
  /// The plan itself.
  public var plan: Plan

  /// A saved `plan` made from the manifest at `manifestPath` (absolute) whose bytes hash to
  /// `manifestDigest` (SHA-256, hex), for the watch named `device`.
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

  /// Writes the saved plan to `path` with mode 0600, replacing an existing file.
  /// - Throws: `SecureFileError`, also when `path`'s directory does not exist (it is not created:
  ///   a mistyped `-out` path should not make directories).
  public func write(to path: String) throws(SecureFileError) {
    let directory = (path as NSString).deletingLastPathComponent
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
      throw SecureFileError(path: path, reason: "its directory \(directory) does not exist")
    }
    try SecureFile.write(Array(canonicalJSON(self).utf8), to: path)
  }

  /// Reads `bytes` as a saved plan; `nil` when they are not one (e.g. a YAML manifest).
  /// - Throws: `SavedPlanError.unsupportedVersion` for a saved plan of another format version.
  public static func parse(_ bytes: [UInt8], path: String) throws(SavedPlanError) -> SavedPlan? {
    guard bytes.first(where: { !$0.isASCIIWhitespace }) == UInt8(ascii: "{") else { return nil }
    struct Marker: Decodable {
      var version: Int?
      enum CodingKeys: String, CodingKey { case version = "tsapply_saved_plan" }
    }
    guard let marker = try? JSONDecoder().decode(Marker.self, from: Data(bytes)), let version = marker.version else {
      return nil
    }
    guard version == currentFormatVersion else { throw .unsupportedVersion(path: path, version: version) }
    do {
      return try JSONDecoder().decode(SavedPlan.self, from: Data(bytes))
    } catch {
      throw .unreadable(path: path, reason: "\(error)")
    }
  }

  /// Checks the saved plan against the manifest's current bytes and the watch's current state.
  /// - Throws: `SavedPlanError.stale` saying which of the two changed.
  public func checkFresh(manifestBytes: [UInt8]?, state: DeviceState) throws(SavedPlanError) {
    var reasons: [String] = []
    if let manifestBytes {
      if SHA256Digest.hex(of: manifestBytes) != manifestDigest { reasons.append("the manifest \(manifestPath) changed") }
    } else {
      reasons.append("the manifest \(manifestPath) can no longer be read")
    }
    if state.fingerprint != plan.priorStateDigest { reasons.append("the watch changed") }
    guard reasons.isEmpty else { throw .stale(reasons: reasons) }
  }
}

/// Why a saved plan cannot be applied.
public enum SavedPlanError: Error, Hashable, Sendable, CustomStringConvertible {
  /// The manifest or the watch changed since the plan was made.
  case stale(reasons: [String])
  /// The file is a saved plan of a format this version does not read.
  case unsupportedVersion(path: String, version: Int)
  /// The file looks like a saved plan but cannot be decoded.
  case unreadable(path: String, reason: String)

  public var description: String {
    switch self {
    case .stale(let reasons):
      "saved plan is stale: \(reasons.joined(separator: " and ")) since the plan was made; run 'tsapply plan' again"
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
