import Foundation
import TSApply
import TSDevice
import TSManifest
import TSModel
import TSPlan

/// The library every front-end (the command line, the bridge server, the monitor, the fleet
/// runner, the agent) drives a watch through. It owns the policy: opening a watch from a spec,
/// its identity and state folder, planning with drift, checking saved plans, the whole-apply
/// lock, the safety gate, backups, verification and the last-applied record. Front-ends parse
/// their input, call it, render what it returns and map it to their exit statuses.
///
/// ```swift
/// let engine = Engine(registry: registry, environment: env, currentDirectory: cwd)
/// let watch = try await engine.open(nil)               // --device, TSAPPLY_DEVICE, or the default
/// let planned = try await watch.plan(document)         // read-only, no lock
/// let outcome = try await watch.apply(document, options: ApplyOptions(approval: .automatic(allowDestroy: false),
///                                                                     command: "tsapply apply watch.yaml"))
/// ```
public struct Engine: Sendable {
  /// The device schemes known (`sim:` and, in the command line, `bridge:`).
  public var registry: DeviceRegistry
  /// Environment variables (device selection, simulation options, the state root).
  public var environment: [String: String]
  /// Absolute working directory.
  public var currentDirectory: String
  /// The state root (see `WatchHome.root(environment:currentDirectory:)`).
  public var stateRoot: String
  /// The clock that names backups and lock records; `Date()` by default (tests may fix it).
  public var now: @Sendable () -> Date

  /// An engine opening devices through `registry`, in `environment` and `currentDirectory`.
  public init(registry: DeviceRegistry, environment: [String: String], currentDirectory: String,
              now: @escaping @Sendable () -> Date = { Date() }) {
    self.registry = registry
    self.environment = environment
    self.currentDirectory = currentDirectory
    self.stateRoot = WatchHome.root(environment: environment, currentDirectory: currentDirectory)
    self.now = now
  }

  /// The start of the advice a missing simulated watch's error ends with (`StateFile`).
  static let createAdvice = "; create one with '"

  /// Why a watch tsapply has records of cannot be opened, without the advice to create one
  /// (`no simulated watch at PATH; create one with '…'`): it existed, so it is out of reach (its
  /// state file moved, its phone off), and a blank watch made in its place would be healed,
  /// planned and reported as if it were the wearer's (fresh-eyes finding).
  /// The default watch of a directory says instead that nothing was planned or applied with it
  /// (`SimulatorScheme.nothingYet`), which its records deny: that is left out too.
  public static func outOfReach(_ reason: String) -> String {
    let kept: String
    if let advice = reason.range(of: createAdvice), let end = reason[advice.upperBound...].firstIndex(of: "'") {
      kept = String(reason[..<advice.lowerBound]) + String(reason[reason.index(after: end)...])
    } else if let never = reason.range(of: SimulatorScheme.nothingYet) {
      kept = String(reason[..<never.lowerBound]) + String(reason[never.upperBound...])
    } else {
      return reason
    }
    return kept + "; tsapply has applied to this watch before, so it is out of reach, not new: bring it back (its state file, its phone or bridge) rather than making a blank one"
  }

  /// `error`, from opening the watch `spec` names, worded for a watch tsapply has applied to
  /// (`outOfReach`) when it is one; else as it is.
  public func reachable(_ error: DeviceError, spec: String?) -> DeviceError {
    let chosen = registry.chosenSpec(spec, environment: environment).spec
    guard error.message.contains(Self.createAdvice) || error.message.contains(SimulatorScheme.nothingYet),
          lastWrite(ofUnopened: chosen) != nil else { return error }
    var reached = error
    reached.message = Self.outOfReach(error.message)
    return reached
  }

  /// The canonical form of `spec` (`DeviceRegistry.canonicalSpec`: relative paths from this
  /// engine's working directory), without opening the watch: one key for every spelling of one
  /// watch, where the scheme can tell (a simulated watch's state file); `spec` itself otherwise.
  public func canonicalSpec(_ spec: String) -> String {
    registry.canonicalSpec(spec, context: DeviceOpenContext(environment: environment, currentDirectory: currentDirectory, mayCreate: false))
  }

  /// When tsapply last wrote to the watch `spec` names, from its records alone, without opening
  /// it (for a watch that cannot be reached: `status --fleet`); `nil` when its spec has no
  /// canonical form without the device (`DeviceScheme.canonicalSpec`: a bridge's watch) or it
  /// has no record. The record of any platform counts (the watch's platform is not known).
  public func lastWrite(ofUnopened spec: String) -> LastWrite? {
    let identity = canonicalSpec(spec)
    let home = WatchHome(identity: identity, root: stateRoot)
    guard let record = LastApplied.read(at: home.lastAppliedPath, device: identity) else { return nil }
    return Watch.lastWrite(of: record, home: home)
  }

  /// Whether `spec` (`nil`: `TSAPPLY_DEVICE`, else the default) names the default watch and these
  /// records say tsapply applied to it: then it is never made on first use — its file gone, it
  /// is out of reach, not new (`reachable`), by every command that opens it.
  public func isAppliedDefault(_ spec: String?) -> Bool {
    let chosen = registry.chosenSpec(spec, environment: environment)
    return chosen.isDefault && lastWrite(ofUnopened: chosen.spec) != nil
  }

  /// Opens the watch `spec` names (`nil`: `TSAPPLY_DEVICE`, else the registry's default) and
  /// reads its capabilities; with `mayCreate: false` (read-only commands) not even the default
  /// simulated watch is created, nor ever in the place of one these records say tsapply applied to.
  /// - Throws: `EngineError.records` when the state root is not a directory
  ///   (`WatchHome.rootProblem`), before the device is opened; `EngineError.device` when the
  ///   spec is unknown or the watch cannot be reached.
  public func open(_ spec: String?, mayCreate: Bool = true) async throws(EngineError) -> Watch {
    if let problem = WatchHome.rootProblem(stateRoot) { throw .records(problem) }
    // The default watch is made on first use, not in the place of one tsapply applied to: that
    // one is out of reach (`reachable`), and a blank watch made for it was planned and shown as
    // everything changed on the watch (fresh-eyes finding).
    let mayCreate = mayCreate && !isAppliedDefault(spec)
    let opened: OpenedDevice
    let capabilities: DeviceCapabilities
    do {
      opened = try await registry.open(spec, environment: environment, currentDirectory: currentDirectory,
                                       mayCreate: mayCreate)
      capabilities = try await opened.device.capabilities()
    } catch {
      throw .device(reachable(error, spec: spec))
    }
    return Watch(opened: opened, capabilities: capabilities,
                 home: WatchHome(identity: opened.device.identity, root: stateRoot), now: now)
  }
}

/// A manifest as read for planning: the decoded manifest, the warnings found while loading it,
/// its bytes (a saved plan is bound to their SHA-256) and where it came from.
public struct ManifestDocument: Sendable {
  /// The decoded, validated manifest.
  public var manifest: Manifest
  /// Warnings from reading and validating it (errors never reach a document).
  public var warnings: [Diagnostic]
  /// The file's bytes as read.
  public var bytes: [UInt8]
  /// Absolute path of the file; `nil` for standard input.
  public var path: String?
  /// What the document is, in errors that refuse its plan: "the manifest", or "the backup" for
  /// a backup stated as a manifest by `restore`.
  public var subject: String

  /// A document from its parts.
  public init(manifest: Manifest, warnings: [Diagnostic] = [], bytes: [UInt8], path: String?, subject: String = "the manifest") {
    self.manifest = manifest
    self.warnings = warnings
    self.bytes = bytes
    self.path = path
    self.subject = subject
  }
}

/// A plan made against a watch, with the state it was made from.
public struct PlannedChanges: Sendable {
  /// The plan: its changes, drift since the last apply, warnings, the watch's identity.
  public var plan: Plan
  /// The watch's state when planned; an apply checks each list against it before writing.
  public var state: DeviceState
  /// The manifest the plan was made from.
  public var manifest: Manifest
  /// The last-applied record the plan's drift was told from (read once per plan).
  var record: LastApplied?
}

/// What happened to an apply (or a restore) that did not fail.
public enum ApplyOutcome: Sendable {
  /// The watch already matched; nothing was written and no backup was taken.
  case noChanges(Plan)
  /// The plan was applied and verified.
  case applied(ApplyReport)

  /// The plan that was shown.
  public var plan: Plan {
    switch self {
    case .noChanges(let plan): plan
    case .applied(let report): report.plan
    }
  }
}

/// Who approves an apply.
public enum Approval: Sendable {
  /// A person: the closure shows the plan's findings, asks, and returns whether the answer
  /// approves (interactive `apply`).
  case ask(@Sendable (Plan) async -> Bool)
  /// Nobody (`--auto-approve`, a monitor healing drift, an agent): an unsafe plan is refused
  /// unless `allowDestroy` (`--allow-destroy`).
  case automatic(allowDestroy: Bool)
}

/// What an apply that finds nothing to change (the watch matches its manifest) records as
/// what the last apply left (`ApplyOptions.refresh`, docs/apply.md "The last-applied record").
public enum RecordRefresh: Sendable {
  /// What the watch holds, as Terraform's refresh does: a person's apply, an agent's revision
  /// (which keeps drift with `ApplyOptions.keepsDriftInRecord`).
  case watch
  /// Only the drift the manifest accepts — resources it changed since the last apply and the
  /// watch holds as it asks (the wearer's change written into the manifest, `Watch.keptDrift`);
  /// drift in what it does not manage stays as the last apply left it, so it is still reported.
  /// The monitor's heals.
  case accepted
}

/// How an apply runs: approval, lock waiting, interruption and progress.
public struct ApplyOptions: Sendable {
  /// Who approves (ignored for saved plans: running one is the approval).
  public var approval: Approval
  /// How long to wait for another apply's lock (`-lock-timeout`); 0 tries once.
  public var lockTimeout: Duration
  /// The front-end's command, recorded as the lock holder (e.g. `tsapply apply watch.yaml`).
  public var command: String
  /// Asked between steps; a request stops the apply cleanly with a partial-apply report.
  public var stop: any StopRequest
  /// Progress and notices, in order.
  public var events: @Sendable (EngineEvent) -> Void
  /// What an apply that finds nothing to change refreshes the last-applied record to.
  public var refresh = RecordRefresh.watch
  /// Whether the last-applied record keeps out what changed on the watch since the last apply
  /// (the plan's `resourceDrift`) and this apply did not write over: such a resource stays in
  /// the record as the last apply left it, so it is still drift afterwards — after a refresh
  /// (nothing to change) and after an apply that wrote something else — unless the manifest
  /// itself changes it and the watch holds that change (`Watch.keptDrift`). For applies nobody
  /// reviews and that report drift on their own (an agent's revisions, docs/fleet.md "What an
  /// agent does"): the record describes only what tsapply wrote and verified. Off: a person's
  /// apply starts from what the watch holds, as Terraform's refresh does (docs/plan.md "Drift").
  public var keepsDriftInRecord = false
  /// Whether the apply listens for contact changes made on the watch while it writes (where
  /// the platform has the listeners): the SDK has no conditional write, so a change made in the
  /// instant between the read before a write and the write is overwritten; listening, the apply
  /// reports it (`EngineEvent.changedOnWatchDuringApply`) and keeps it in a backup. On by
  /// default (every person's apply, one watch or a fleet); `Reconcile.apply` turns it off: the
  /// monitor and agents listen on their own and report the watch's changes as drift. Costs
  /// `Watch.announcementDelay` after an apply that wrote an announced list.
  public var listensWhileWriting = true
  /// Without `listensWhileWriting`: the announcements of a listener the caller holds on the
  /// watch already (a monitor's, an agent's; the platform's listeners are one per kind, so the
  /// apply cannot register its own beside them). The caller passes every event its listener hears
  /// to `WatchAnnouncements.heard(_:)`; those that come while the apply writes are reported
  /// as its own listener's would be (`EngineEvent.changedOnWatchDuringApply`, with a backup).
  public var announcements: WatchAnnouncements?
  /// Whether the apply holds back the manifest's own changes: every resource the manifest
  /// would change on what the last apply left (`Watch.unapplied(_:)`) is planned as the
  /// last-applied record holds it (`Watch.holdingBack(_:last:)`), so the apply only undoes drift
  /// and carries nothing new. The fleet monitor's heal of a watch a staged rollout has not
  /// reached yet (docs/fleet.md "Staged rollouts"). Without a record it changes nothing.
  public var holdsBackUnapplied = false
  /// Whether an automatic apply without `allowDestroy` whose plan is unsafe writes its safe
  /// part instead of refusing the whole: each section holding a resource an unsafe finding is
  /// about (`SafetyFinding.addresses`: the contacts, the custom reminders, the emergency list
  /// with SOS) is left out of the manifest, so planned as the watch holds it (`Watch.holdingBack(unsafe:in:)`), the
  /// rest is applied, the record keeps what was left as drift (as `keepsDriftInRecord`), and
  /// the report names the findings left out (`ApplyReport.heldBackUnsafe`). When nothing safe
  /// is left to write, or the sections cannot be held, the plan is refused as without it. The
  /// monitor's heal (docs/monitor.md "Drift and healing"): SOS switched back on while removing
  /// the contacts the wearer added is refused.
  public var holdsBackUnsafe = false

  /// Options; the lock is tried once, nothing stops the apply, events are dropped by default.
  public init(approval: Approval, lockTimeout: Duration = .zero, command: String,
              stop: any StopRequest = NoStopRequest(), events: @escaping @Sendable (EngineEvent) -> Void = { _ in }) {
    self.approval = approval
    self.lockTimeout = lockTimeout
    self.command = command
    self.stop = stop
    self.events = events
  }
}

/// What the engine reports while it works.
public enum EngineEvent: Sendable {
  /// The lock is taken by `holder`; waiting up to the lock timeout.
  case waitingForLock(LockHolder?)
  /// The watch's lease on its bridge is held (`LockFailure.leased`, with who holds it, whether
  /// that holder still runs and when the lease expires); waiting up to the lock timeout.
  case waitingForLease(LockFailure)
  /// The plan is ready (shown before approval; for saved plans, the plan being applied).
  case planned(Plan)
  /// The backup was written, a step or call progressed.
  case reconcile(ReconcileEvent)
  /// The apply succeeded but its last-applied record (for drift) could not be written.
  case recordFailed(SecureFileError)
  /// The apply's entry could not be appended to the watch's apply history (docs/apply.md "History").
  case historyFailed(SecureFileError)
  /// While the apply was writing, the watch announced a change made on it (its contacts or
  /// emergency contacts listener, `ApplyOptions.listensWhileWriting`). `lists` holds each list
  /// the watch announced last (by kind); `backupPath` a backup of the watch with those lists,
  /// which `tsapply restore` brings back (`nil` when it could not be written); `kept` what the
  /// apply's read-back says of each list: `true` — the watch still holds the change (it reads
  /// back otherwise than written: the change is drift, not written over), `false` — the apply
  /// wrote over it (read back as written), absent — not known (the apply stopped before reading
  /// it back).
  case changedOnWatchDuringApply(lists: [DeviceEvent.Kind: [Contact]], backupPath: String?, kept: [DeviceEvent.Kind: Bool])
  /// The apply could not listen while it writes (`ApplyOptions.listensWhileWriting`): the
  /// device's listener did not hear the watch in time (a bridge's event stream that did not
  /// open), so a change made on the watch to `lists` while the apply writes them may be written
  /// over without `changedOnWatchDuringApply` (fresh-eyes finding: nothing said so).
  case notHearingTheWatch(lists: [ResourceAddress])
  /// While the apply was writing `lists` (by kind), the watch announced each as it was when
  /// the plan was made, and the write's answer was lost with the list reading back so: a
  /// change made on the watch put the list back, undoing this apply's write to it if that
  /// landed — the read alone says "not applied" (fresh-eyes finding: "Nothing reached the
  /// watch … run it again", with no word of the change). Its own listener's only.
  case putBackOnWatchDuringApply(lists: [DeviceEvent.Kind: [Contact]])
}
