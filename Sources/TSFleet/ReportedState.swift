import Foundation
import TSDevice
import TSEngine
import TSManifest
import TSModel
import TSPlan

/// A watch's state as its agent last read it: published by the agent retained with QoS 1 on
/// the watch's state topic (`tsapply/v1/SITE/WATCH-ID/state`) whenever an apply's verification
/// read-back or a drift check reads a state other than the one it last published
/// (`DeviceState.fingerprint` compared; nothing is sent when it is the same), so that
/// `tsapply plan --fleet` over MQTT plans each watch's manifests against it (docs/fleet.md
/// "Reported states"). One line of canonical JSON; `state` in the `Codable` form of the
/// simulator's state files and the last-applied records:
///
/// ```json
/// {"agent":"a01","device":"sim:/srv/watches/room-12.json","format_version":"1","profile":"default",
///  "read_at":"2026-12-05T01:20:03Z","state":{"contacts":[…],"emergency":{…},"reminders":[…]},"watch_id":"room-12"}
/// ```
///
/// It holds the wearer's contacts: personal data, readable only by the publisher (the example
/// ACL gives the topic the access of desired documents; a monitor gets none).
public struct ReportedState: Codable, Sendable, Equatable {
  /// The format's version.
  public var formatVersion = "1"
  /// The agent that read the watch.
  public var agent: String
  /// The watch's ID in the topics.
  public var watchID: String
  /// The watch's identity on the agent's side (`Device.identity`).
  public var device: String
  /// The platform profile of the watch (`DeviceCapabilities.profile`): the planner plans against
  /// that platform's capacities and stored fields.
  public var profile: String
  /// When the agent read it, ISO 8601 UTC with seconds.
  public var readAt: String
  /// What the watch held.
  public var state: DeviceState

  enum CodingKeys: String, CodingKey {
    case formatVersion = "format_version", agent, watchID = "watch_id", device, profile, readAt = "read_at", state
  }

  /// A report by `agent` of `state`, read at `readAt` from the watch `watchID` (`device`, of
  /// platform `profile`).
  public init(agent: String, watchID: String, device: String, profile: String, readAt: String, state: DeviceState) {
    self.agent = agent
    self.watchID = watchID
    self.device = device
    self.profile = profile
    self.readAt = readAt
    self.state = state
  }

  /// The report as canonical JSON on one line (keys sorted: `canonicalJSON`).
  public func encoded() -> [UInt8] { Array(canonicalJSON(self, pretty: false).utf8) }

  /// The largest report read (a last-applied record's bound, `ManifestSource.maxRecordBytes`);
  /// a 50-contact watch's is under 4 KB (docs/fleet.md "Reported states").
  public static let maxBytes = ManifestSource.maxRecordBytes

  /// A report from its JSON; `nil` for anything else (another format version, more than
  /// `maxBytes`, included).
  public static func decode(_ payload: [UInt8]) -> ReportedState? {
    guard payload.count <= maxBytes, let report = try? JSONDecoder().decode(Self.self, from: Data(payload)), report.formatVersion == "1" else { return nil }
    return report
  }

  /// When the agent read the watch; `nil` when `read_at` is not a time.
  public var readTime: Date? { InternetTime.date(readAt) }

  /// `document` planned against the reported state through the engine's planner
  /// (`Watch.plan(_:state:since:capabilities:device:)`, as `plan --fleet` plans a watch it reads
  /// itself), with no last-applied record: what publishing `document` would change, as the
  /// agent last read the watch; drift since the agent's last apply cannot be told from here.
  /// - Throws: `EngineError.invalid` when the manifest does not fit the watch's platform, or
  ///   `.device` when the report names a platform this tsapply does not know.
  public func plan(_ document: ManifestDocument) throws(EngineError) -> Plan {
    let profile: PlatformProfile
    do { profile = try PlatformProfile.named(self.profile) } catch { throw .device(error) }
    return try Watch.plan(document, state: state, capabilities: profile.capabilities, device: device).plan
  }
}
