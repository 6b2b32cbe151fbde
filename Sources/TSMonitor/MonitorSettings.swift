import Foundation
import TSEngine
import TSModel

/// What a monitor watches and what it may do: the front-end's options, parsed.
public struct MonitorSettings: Sendable {
  /// The watch (`--device`; `nil`: `TSAPPLY_DEVICE`, else the default). Never created.
  public var deviceSpec: String?
  /// Absolute path of the manifest, read again at every check (so a `git pull` is picked up).
  public var manifestPath: String
  /// The manifest as the user named it, for messages.
  public var manifestName: String
  /// The watch's name in its events' `watch` (a fleet's name for it, `monitor --fleet`), its
  /// identity then in the `device` field; `nil`: events name the watch by its identity.
  public var watchName: String?
  /// How often the watch is read (`--interval`, default 5 minutes).
  public var interval: Duration
  /// Whether drift is healed through the engine's apply (`--reconcile`).
  public var reconcile: Bool
  /// Whether healing may make unsafe changes (`--allow-destroy`); without it the engine's
  /// safety gate refuses them and the drift is reported and left alone.
  public var allowDestroy: Bool
  /// Heals allowed in any hour (`--max-applies-per-hour`, default 6).
  public var maxAppliesPerHour: Int
  /// Whether events show phone numbers (`--show-sensitive`); masked by default.
  public var showSensitive: Bool
  /// The command line, recorded as the holder of the monitor lock and of each heal's apply lock.
  public var commandLine: String
  /// The `plan` that shows this watch's pending change, for advice (`tsapply plan --device SPEC
  /// FILE`; in a fleet `tsapply plan --fleet FILE --watch NAME`).
  public var planCommand = "tsapply plan"
  /// Waits between reconnection attempts.
  public var reconnect: Backoff.Policy
  /// Waits between delivery attempts of one notifier (`Backoff.Policy.sosDelivery`: at most 30 s).
  public var delivery: Backoff.Policy
  /// How long a stopping monitor waits for deliveries under way.
  public var stopGrace: Duration
  /// Where each check gets its manifest when it is not one file: a fleet's watch, whose
  /// manifest is its own merged over the fleet's defaults (TSFleet). Called at every check, so
  /// an edit of either file is picked up; `.failure` with the errors that stop the check. `nil`:
  /// `manifestPath` is read.
  public var manifestProvider: (@Sendable () -> Result<ManifestDocument, ManifestProblem>)?
  /// Asked before each heal: why the manifest's own changes must not reach this watch yet, in
  /// words (`the rollout of fleet.yaml is paused; continue or abort it`), or `nil` when they
  /// may. With a reason the heal holds them back (`ApplyOptions.holdsBackUnapplied`): it only
  /// undoes the drift, back to what the last apply left, and its events name what was held
  /// back and why. A fleet's watch a staged rollout has not reached (TSFleet, docs/fleet.md
  /// "Staged rollouts"); `nil`: never held back.
  public var holdBack: (@Sendable () -> String?)?
  /// Whether a watch that cannot be opened at the first try (a simulated watch's file missing,
  /// a bridge that does not answer) is an outage — reported `offline` at once and tried again
  /// with backoff — rather than an error that ends the monitor. A fleet's monitor sets it: one
  /// watch missing at start must neither stop the others nor go unwatched in silence
  /// (docs/fleet.md "Monitoring a fleet"). `false`: `tsapply monitor`'s exit 1.
  public var retriesFirstOpen = false

  /// The default interval: five minutes.
  public static let defaultInterval = Duration.seconds(300)
  /// The default `--max-applies-per-hour`.
  public static let defaultMaxAppliesPerHour = 6

  /// Settings for watching the manifest at `manifestPath` (absolute; `manifestName` as the user
  /// wrote it); the rest as the options' defaults.
  public init(manifestPath: String, manifestName: String, deviceSpec: String? = nil,
              interval: Duration = MonitorSettings.defaultInterval, reconcile: Bool = false, allowDestroy: Bool = false,
              maxAppliesPerHour: Int = MonitorSettings.defaultMaxAppliesPerHour, showSensitive: Bool = false,
              commandLine: String = "tsapply monitor") {
    self.manifestPath = manifestPath
    self.manifestName = manifestName
    self.deviceSpec = deviceSpec
    self.interval = interval
    self.reconcile = reconcile
    self.allowDestroy = allowDestroy
    self.maxAppliesPerHour = maxAppliesPerHour
    self.showSensitive = showSensitive
    self.commandLine = commandLine
    reconnect = Self.reconnectPolicy(interval: interval)
    delivery = .sosDelivery
    stopGrace = .seconds(5)
  }

  /// Reconnection waits for `interval`: from one second (or the interval, when shorter), doubling,
  /// up to the interval (at least one second, at most five minutes), so a watch is tried again
  /// at least as often as it would be read.
  public static func reconnectPolicy(interval: Duration) -> Backoff.Policy {
    Backoff.Policy(initial: min(.seconds(1), interval), maximum: min(.seconds(300), max(.seconds(1), interval)))
  }
}

/// Errors that keep a check from using a watch's manifest, from a `manifestProvider`.
public struct ManifestProblem: Error, Sendable {
  /// The errors, each with its file, line and column.
  public var errors: [Diagnostic]
  /// The watch is no longer managed (a fleet file that no longer names it): not an error to
  /// report; the check is skipped while whoever runs the monitor stops it (`monitor --fleet`
  /// stops it at its next look at the fleet file, with a `removed` event).
  public var notManaged = false
  /// The problem of `errors`.
  public init(_ errors: [Diagnostic]) { self.errors = errors }
}
