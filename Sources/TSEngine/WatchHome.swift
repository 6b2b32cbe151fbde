import Foundation
import TSManifest
import TSApply
import TSModel

/// The folder where tsapply keeps what it knows about one watch, whatever the working
/// directory and whatever kind of device it is: `<state root>/watches/<16 hex digits>/`, the
/// digits the start of the SHA-256 of the watch's identity.
///
/// ```
/// watch.json           identity and platform, for people and `tsapply status` (0600)
/// lock                 the whole-apply lock (flock; holder written inside)
/// backups/             the state before each apply, <UTC time>.json (0600)
/// last-applied.json    what the last successful apply left, for drift (0600)
/// monitor.lock         held by the one `tsapply monitor` watching this watch (flock)
/// outbox/              SOS events not yet delivered by every notifier, <event id>.json (0600)
/// monitor-events.json  the last watch event the monitor handled and its SOS numbering, so a
///                      restarted monitor replays what it missed (0600)
/// agent-status.json    the last status `tsapply agent` published for it, read back when the
///                      agent starts again (0600)
/// history.jsonl        every apply and restore, append-only and hash-chained (`ApplyHistory`, 0600)
/// history.head         the history's entry count and last hash (0600)
/// ```
///
/// The state root is `$TSAPPLY_STATE_DIR`, else `$XDG_STATE_HOME/tsapply`, else
/// `~/.local/state/tsapply` (the XDG base-directory convention for state); directories are
/// created 0700 (docs/apply.md "Where tsapply keeps its records").
public struct WatchHome: Hashable, Sendable {
  /// Environment variable overriding the state root.
  public static let stateDirectoryVariable = "TSAPPLY_STATE_DIR"

  /// The watch's identity (`Device.identity`).
  public var identity: String
  /// Absolute path of the watch's folder.
  public var directory: String
  /// The state root it is in (absolute): every watch's records, and the fleets' outboxes.
  public var root: String

  /// The folder of the watch `identity` under the state `root` (absolute).
  public init(identity: String, root: String) {
    self.identity = identity
    self.root = root
    self.directory = root + "/watches/" + Self.folderName(identity)
  }

  /// The 16 hex digits naming the folder of `identity`.
  public static func folderName(_ identity: String) -> String {
    String(SHA256Digest.hex(of: Array(identity.utf8)).prefix(16))
  }

  /// The state root for `environment`, made absolute against `currentDirectory`.
  public static func root(environment: [String: String], currentDirectory: String) -> String {
    func absolute(_ path: String) -> String {
      path.hasPrefix("/") ? path : (currentDirectory as NSString).appendingPathComponent(path)
    }
    if let explicit = environment[stateDirectoryVariable], !explicit.isEmpty { return absolute(explicit) }
    if let xdg = environment["XDG_STATE_HOME"], !xdg.isEmpty { return absolute(xdg) + "/tsapply" }
    let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
    return absolute(home) + "/.local/state/tsapply"
  }

  /// Why the state root `root` cannot hold tsapply's records: it, or one of its parents, exists
  /// and is not a directory (e.g. `$TSAPPLY_STATE_DIR` names a file). `nil` when it is a
  /// directory or can be created.
  public static func rootProblem(_ root: String) -> SecureFileError? {
    guard let blocker = FilePaths.nonDirectory(in: root) else { return nil }
    return SecureFileError(path: root, reason: FilePaths.notADirectory(root, blocker: blocker)
      + "; tsapply keeps its records (backups, locks, drift) in this state directory ($\(stateDirectoryVariable), else $XDG_STATE_HOME/tsapply, else ~/.local/state/tsapply): name a directory, or move the file away")
  }

  /// `backups/`: one file per apply, the state before its first write.
  public var backupDirectory: String { directory + "/backups" }
  /// `last-applied.json`: the verified state after the last successful apply.
  public var lastAppliedPath: String { directory + "/last-applied.json" }

  /// `agent-status.json`: the last status an agent published for the watch (`WatchStatus`).
  public var agentStatusPath: String { directory + "/agent-status.json" }
  /// `agent-desired.json`: the desired document an agent last applied to the watch (as it came,
  /// 0600: it holds contacts), so a restarted agent keeps checking the watch against it when the
  /// broker no longer holds it (docs/fleet.md "What an agent does").
  public var agentDesiredPath: String { directory + "/agent-desired.json" }
  /// The publications an agent handled for the watch, oldest first (`FleetAgent`): a document of
  /// one older than the newest is not applied (docs/fleet.md "A broker that lost its newest
  /// documents").
  public var agentPublicationsPath: String { directory + "/agent-publications.json" }
  /// `lock`: the file the whole-apply lock is taken on.
  public var lockPath: String { directory + "/lock" }
  /// `monitor.lock`: held by the monitor watching this watch, so a second one refuses.
  public var monitorLockPath: String { directory + "/monitor.lock" }
  /// `outbox/`: a monitor's undelivered SOS events (docs/monitor.md "Delivery").
  public var outboxDirectory: String { directory + "/outbox" }
  /// `monitor-events.json`: the last event the monitor handled (`HandledEvents`, docs/monitor.md "Missed events").
  public var monitorEventsPath: String { directory + "/monitor-events.json" }
  /// `monitor-heal.json`: the drift a monitor is healing, kept while the heal's apply runs, so a
  /// monitor killed meanwhile reports it when it starts again (`HealIntent`, docs/monitor.md
  /// "Drift and healing").
  public var monitorHealPath: String { directory + "/monitor-heal.json" }
  /// `agent-events.json`: the last event a fleet agent handled for the watch (`HandledEvents`,
  /// docs/fleet.md "SOS").
  public var agentEventsPath: String { directory + "/agent-events.json" }
  /// `watch.json`: which watch this folder is about.
  public var recordPath: String { directory + "/watch.json" }

  /// What `watch.json` holds.
  public struct Record: Hashable, Codable, Sendable {
    /// The watch's identity.
    public var identity: String
    /// Its platform profile when last seen.
    public var profile: String
  }

  /// Creates the folder (0700) and writes `watch.json` when it is missing or names another
  /// profile.
  /// - Throws: `SecureFileError` when the folder or the record cannot be written.
  public func prepare(profile: String) throws(SecureFileError) {
    try SecureFile.createDirectory(directory)
    let record = Record(identity: identity, profile: profile)
    if self.record() == record { return }
    // Not fsynced: it only says whose folder this is, and every start writes it again when it
    // is missing or differs (a fleet monitor's first start prepares a thousand folders).
    try SecureFile.write(Array(canonicalJSON(record).utf8), to: recordPath, durable: false)
  }

  /// The record in `watch.json`, if readable.
  public func record() -> Record? {
    guard let bytes = try? ManifestSource.file(path: recordPath, displayName: recordPath)
      .read(maxBytes: ManifestSource.maxRecordBytes, noun: "watch record").get() else { return nil }
    return try? JSONDecoder().decode(Record.self, from: Data(bytes))
  }
}
