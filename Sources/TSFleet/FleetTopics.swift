/// The MQTT topics of a fleet (docs/fleet.md "Topics"), all under `tsapply/v1/SITE/`:
///
/// | topic | who publishes | retained | QoS | holds |
/// |---|---|---|---|---|
/// | `tsapply/v1/SITE/WATCH-ID/desired` | `tsapply apply --fleet` | yes | 1 | `DesiredDocument` |
/// | `tsapply/v1/SITE/WATCH-ID/status` | the agent | yes | 1 | `WatchStatus` |
/// | `tsapply/v1/SITE/WATCH-ID/events` | the agent | no | 1 | `FleetEvent` |
/// | `tsapply/v1/SITE/WATCH-ID/state` | the agent | yes | 1 | `ReportedState` (personal data: contacts) |
/// | `tsapply/v1/SITE/WATCH-ID/sos` | the agent | yes | 1 | `RecentSOS`: the watch's newest presses |
/// | `tsapply/v1/SITE/agent/AGENT-ID/state` | the agent (its will when it goes) | yes | 1 | `AgentState` |
///
/// A watch's topics have five levels and an agent's six, so no name can make one the other.
public enum FleetTopics {
  /// The prefix of every topic: the protocol and its version.
  public static let root = "tsapply/v1"

  /// What a watch topic carries.
  public enum Kind: String, Sendable, CaseIterable {
    /// The desired document.
    case desired
    /// The agent's retained status of the watch.
    case status
    /// The agent's events about the watch.
    case events
    /// The watch's state as its agent last read it (`ReportedState`): contacts included, so
    /// the broker's ACL gives it the access of desired documents (docs/fleet.md "Security").
    case state
    /// The watch's newest SOS presses (`RecentSOS`), retained and published again at every
    /// connection, so a monitor that was not connected when a press was published gets it.
    case sos
  }

  /// `tsapply/v1/SITE/WATCH-ID/KIND`.
  public static func watch(site: String, watch: String, _ kind: Kind) -> String {
    "\(root)/\(site)/\(watch)/\(kind.rawValue)"
  }

  /// `tsapply/v1/SITE/+/KIND`: that kind for every watch of the site.
  public static func every(_ kind: Kind, site: String) -> String { "\(root)/\(site)/+/\(kind.rawValue)" }

  /// `tsapply/v1/SITE/agent/AGENT-ID/state`.
  public static func agent(site: String, agent: String) -> String { "\(root)/\(site)/agent/\(agent)/state" }

  /// `tsapply/v1/SITE/agent/+/state`: every agent of the site.
  public static func everyAgent(site: String) -> String { "\(root)/\(site)/agent/+/state" }

  /// The site, watch ID and kind of a watch topic; `nil` for any other topic.
  public static func parseWatch(_ topic: String) -> (site: String, watch: String, kind: Kind)? {
    let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
    guard levels.count == 5, levels[0] == "tsapply", levels[1] == "v1", let kind = Kind(rawValue: String(levels[4])) else {
      return nil
    }
    return (String(levels[2]), String(levels[3]), kind)
  }

  /// The agent ID of an agent topic; `nil` for any other topic.
  public static func parseAgent(_ topic: String) -> String? {
    let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
    guard levels.count == 6, levels[0] == "tsapply", levels[1] == "v1", levels[3] == "agent", levels[5] == "state" else {
      return nil
    }
    return String(levels[4])
  }

  /// The watch ID of the watch a device spec names: the part of the spec that names the watch
  /// itself, the same on the machine that publishes and on the agent's:
  ///
  /// | spec | watch ID |
  /// |---|---|
  /// | `bridge:ward-a/AA:BB:CC:DD:EE:12` | `AA:BB:CC:DD:EE:12` |
  /// | `bridge:ward-a` | `ward-a` |
  /// | `sim:watches/room-12.json` | `room-12` |
  public static func watchID(forSpec spec: String) -> String {
    let location = spec.firstIndex(of: ":").map { String(spec[spec.index(after: $0)...]) } ?? spec
    var last = String(location.split(separator: "/").last ?? Substring(location))
    if spec.hasPrefix("sim:"), last.hasSuffix(".json") { last.removeLast(5) }
    return last
  }

  /// Characters a site, watch ID or agent ID may hold: they are topic levels, and ACL
  /// patterns match them.
  static let nameCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:-")

  /// Why `name` cannot be a topic level (empty, longer than 64 characters, or holding anything
  /// but letters, digits, `.`, `_`, `:` and `-`); `nil` when it can.
  public static func problem(with name: String) -> String? {
    if name.isEmpty { return "is empty" }
    if name.count > 64 { return "is longer than 64 characters" }
    if let bad = name.first(where: { !nameCharacters.contains($0) }) {
      return "holds \(bad == " " ? "a space" : "'\(bad)'"), which cannot be part of an MQTT topic here (letters, digits, '.', '_', ':' and '-' only)"
    }
    return nil
  }
}
