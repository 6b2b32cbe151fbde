import Foundation
import TSDevice
import TSManifest
import TSModel
import TSPlan

/// Plans and applies one manifest against one watch: read the state, plan, and apply with a
/// staleness check, a backup before the first write, and verification by reading back.
public struct Reconciler: Sendable {
  /// The watch.
  public var device: any Device
  /// The watch's capabilities, read once when connecting.
  public var capabilities: DeviceCapabilities
  /// The device's identity (e.g. `sim:/abs/path.json`), written into backups so a restore goes
  /// back to the same watch; `nil` when unknown.
  public var deviceIdentity: String?

  /// A reconciler for `device`, whose `capabilities` were already read (see `connect(_:)`);
  /// `deviceIdentity` starts `nil`.
  public init(device: any Device, capabilities: DeviceCapabilities) {
    self.device = device
    self.capabilities = capabilities
  }

  /// Reads the watch's capabilities and returns a reconciler for it.
  /// - Throws: `DeviceError` from the capabilities call.
  public static func connect(_ device: any Device) async throws(DeviceError) -> Reconciler {
    Reconciler(device: device, capabilities: try await device.capabilities())
  }

  /// Reads everything tsapply manages on the watch.
  public func readState() async throws(DeviceError) -> DeviceState {
    try await device.readState(capabilities: capabilities)
  }

  /// Reads the state and plans `manifest` against it (the engine's `Watch.plan` adds the drift
  /// since the last apply).
  public func plan(_ manifest: Manifest) async throws(DeviceError) -> (state: DeviceState, result: PlanResult) {
    let state = try await readState()
    return (state, Planner.plan(manifest, state: state, capabilities: capabilities))
  }

  /// Applies `plan`, made from `manifest`, to the watch.
  ///
  /// Steps: save the state the plan was made from as a backup (0600) into `backupDirectory`; run
  /// the device calls in `ApplyOrder`, each list checked against `state` just before its first
  /// write (`Applier`), so a change made on the watch since planning stops the apply instead of
  /// being overwritten; read back what was written and plan again: anything left is a
  /// verification failure.
  ///
  /// - Parameters:
  ///   - state: The watch state `plan` was made from (its fingerprint is the plan's `priorStateDigest`).
  ///   - backupDirectory: Absolute path of the directory for backups (`.tsapply/backups`).
  ///   - now: The time that names the backup.
  ///   - shouldStop: Asked between steps; `true` stops the apply cleanly (Ctrl-C).
  ///   - recorded: What the last apply left (the last-applied record's state), or `nil`.
  ///   - record: Told what the watch holds whenever that changes, for the last-applied record:
  ///     just before each write (the state so far, and the state if the write lands), after
  ///     the apply (the state read back; when that read fails, the state the writes left), and
  ///     after a failure that came after a write (what was reached; the second state when a
  ///     lost answer left the write's outcome unknown). Never called when nothing was sent.
  ///     Until the apply is read back, a part it has not written is told as `recorded` has it
  ///     (`Drift.left(holding:plannedFrom:recorded:)`), so a change made on the watch before
  ///     this apply stays drift when the apply stops before writing over it.
  ///   - progress: Receives progress events (the backup path first, then steps and calls).
  /// - Returns: What was done, with the backup path and device statistics.
  /// - Throws: `ApplyError`; nothing is written to the watch before the backup exists.
  public func apply(_ plan: Plan, manifest: Manifest, state: DeviceState, backupDirectory: String,
                    now: Date, shouldStop: @Sendable () -> Bool = { false }, recorded: DeviceState? = nil,
                    record: @Sendable (_ holds: DeviceState, _ ifLanded: DeviceState?) -> Void = { _, _ in },
                    progress: @Sendable (ReconcileEvent) -> Void = { _ in }) async throws(ApplyError) -> ApplyReport {
    guard state.fingerprint == plan.priorStateDigest else { throw .stateChanged }
    guard !plan.isEmpty else { return ApplyReport(plan: plan, backupPath: nil, applied: [], steps: [], finalState: state) }
    let backupPath: String
    do {
      backupPath = try Backup(createdAt: now, profile: capabilities.profile, device: deviceIdentity, state: state).write(into: backupDirectory, at: now)
    } catch { throw .backupFailed(error) }
    progress(.backedUp(path: backupPath))
    let steps = ApplyOrder.steps(for: plan, state: state, capabilities: capabilities,
                                 customOrder: manifest.reminders?.custom?.value.compactMap { $0.name?.value } ?? [])
    let applier = Applier(device: device, allowsOnce: capabilities.reminders.supportsOnce, storedForm: capabilities.reminders)
    // What tsapply has left so far: this apply's writes, and the last apply's record elsewhere.
    let left: @Sendable (DeviceState) -> DeviceState = { Drift.left(holding: $0, plannedFrom: state, recorded: recorded) }
    let applied: [ResourceAddress], reached: DeviceState
    do {
      (applied, reached) = try await applier.execute(steps, expected: state, shouldStop: shouldStop,
                                                     willWrite: { record(left($0), left($1)) }) { progress(.apply($0)) }
    } catch {
      if let reached = error.reached { record(left(reached), error.unconfirmed.map(left)) }
      throw .partial(error, backupPath: backupPath)
    }
    let after: DeviceState
    do {
      after = try await readBack(steps, over: state)
    } catch {
      record(left(reached), nil)
      throw .readBackFailed(error, backupPath: backupPath)
    }
    // Read back otherwise than this apply's writes left the watch: changed on the watch while
    // it wrote (a reminder switched: no listener announces reminders). The record keeps each
    // such resource as the apply left it, so the change is drift, never "what tsapply left"
    // (fresh-eyes finding: a reminder switched during the apply was recorded as its own write).
    let during = Drift.changes(since: reached, current: after, capabilities: capabilities)
    let kept = during.isEmpty ? after : after.taking(during, addresses: Set(during.map(\.address)), as: .recorded)
    if !during.isEmpty { progress(.changedWhileWriting(during)) }
    let check = Planner.plan(manifest, state: after, capabilities: capabilities)
    if let remaining = check.plan, remaining.isEmpty {
      record(kept, nil)
      return ApplyReport(plan: plan, backupPath: backupPath, applied: applied, steps: steps, finalState: after, changedWhileWriting: during)
    }
    // Read back otherwise than planned: a list written that reads back otherwise was changed on
    // the watch while this apply wrote, so the record keeps what was written and the change
    // stays drift, never "what tsapply left" (`Drift.recorded(readBack:wrote:plannedFrom:recorded:)`).
    record(Drift.recorded(readBack: kept, wrote: reached, plannedFrom: state, recorded: recorded), nil)
    throw .verificationFailed(remaining: check.plan, diagnostics: check.diagnostics, backupPath: backupPath, readBack: after)
  }
}

extension Reconciler {
  /// Reads back only what `steps` wrote, taking the rest from `state` (the calls did not touch
  /// it): one to three calls instead of always three.
  func readBack(_ steps: [ApplyStep], over state: DeviceState) async throws(DeviceError) -> DeviceState {
    var after = state
    if steps.contains(where: \.writesReminders) { after.reminders = try await device.fetchAllReminders() }
    for step in steps {
      if case .setAllContacts = step { after.contacts = try await device.getAllContacts() }
      if case .setEmergencyContacts = step { after.emergency = try await device.getEmergencyContacts() }
    }
    return after
  }
}

/// Progress of `Reconciler.apply`.
public enum ReconcileEvent: Sendable {
  /// The backup was written to `path`.
  case backedUp(path: String)
  /// A step or device call progressed.
  case apply(ApplyProgress)
  /// The read-back found these resources otherwise than the apply's writes left them: changed on
  /// the watch while it wrote (`before` = as the apply left it, `after` = read back). Told before
  /// the apply ends (verified or not); the record keeps them as the apply left them.
  case changedWhileWriting([ResourceChange])
}

/// The outcome of a successful apply.
public struct ApplyReport: Sendable {
  /// The plan that was applied.
  public var plan: Plan
  /// Where the state before the apply was saved; `nil` when there was nothing to do.
  public var backupPath: String?
  /// Resources changed, in order.
  public var applied: [ResourceAddress]
  /// The steps that ran.
  public var steps: [ApplyStep]
  /// The watch's state as verified after the apply; `nil` when nothing ran and no state was given.
  public var finalState: DeviceState?
  /// Resources the read-back found otherwise than this apply's writes left them: changed on the
  /// watch while it wrote (`before` = as the apply left it, `after` = read back). The record
  /// keeps them as the apply left them, so they are drift.
  public var changedWhileWriting: [ResourceChange] = []
  /// The unsafe findings this apply left out (the engine's `ApplyOptions.holdsBackUnsafe`): the
  /// whole plan had them, so the resources they are about were planned as the watch held them
  /// and not written; empty when nothing was left out.
  public var heldBackUnsafe: [SafetyFinding] = []

  /// Resources created.
  public var added: Int { plan.resourceChanges.filter { $0.action == .create }.count }
  /// Resources updated.
  public var changed: Int { plan.resourceChanges.filter { $0.action == .update }.count }
  /// Resources deleted.
  public var destroyed: Int { plan.resourceChanges.filter { $0.action == .delete }.count }
}

/// Why an apply did not complete.
public enum ApplyError: Error, Sendable, CustomStringConvertible {
  /// The state given is not the one the plan was made from; nothing was written.
  case stateChanged
  /// The backup could not be written; nothing was written to the watch.
  case backupFailed(SecureFileError)
  /// Every write succeeded, but reading the watch back to verify failed.
  case readBackFailed(DeviceError, backupPath: String)
  /// A device call failed part-way; some changes may have been applied.
  case partial(PartialApplyFailure, backupPath: String)
  /// Every call succeeded, but reading back shows the watch does not match the manifest;
  /// `readBack` is what it holds (every write of the apply in it).
  case verificationFailed(remaining: Plan?, diagnostics: [Diagnostic], backupPath: String, readBack: DeviceState)

  /// Whether running the apply again later can succeed where this one failed: the watch was out
  /// of reach or busy (`DeviceError.isTransient`), a write's answer was lost and the watch may
  /// hold it, the run was interrupted, the watch changed meanwhile, or the backup could not be
  /// written, or every write was made and only the read verifying them failed (whatever its
  /// code: the next check reads again; fresh-eyes finding, a heal that had restored SOS was
  /// "failed, not tried again" after a 4002 on that read). A rerun plans from what the watch
  /// holds. Verification failures and refused writes are final — also a write answered with an
  /// error that is not a refusal by its code (1001 unknown) when reading back shows it did not
  /// land: as final as its error.
  public var isTransient: Bool {
    switch self {
    case .stateChanged, .backupFailed, .readBackFailed: true
    case .partial(let failure, _):
      switch failure.cause {
      case .device(let error), .outcomeUnknown(let error, found: .notApplied): error.isTransient
      case .changedOnWatch, .interrupted, .outcomeUnknown: true
      }
    case .verificationFailed: false
    }
  }

  /// What the watch holds as far as this apply knows, after a part-way failure that came after
  /// a write (`PartialApplyFailure.reached`) or a verification that read back otherwise
  /// (`readBack`); `nil` otherwise.
  public var reached: DeviceState? {
    switch self {
    case .partial(let failure, _): failure.reached
    case .verificationFailed(_, _, _, let readBack): readBack
    default: nil
    }
  }

  /// Where the watch's state before the apply was backed up, when the apply got that far.
  public var backupPath: String? {
    switch self {
    case .stateChanged, .backupFailed: nil
    case .readBackFailed(_, let path), .partial(_, let path), .verificationFailed(_, _, let path, _): path
    }
  }

  /// The failure in words, without advice: a command to run names the watch and the manifest,
  /// which only the front end knows (a monitor's bare "Run 'tsapply plan' to check", followed,
  /// planned another watch: fresh-eyes finding).
  public var description: String {
    switch self {
    case .stateChanged:
      "the plan was not made from this watch state; nothing was written"
    case .backupFailed(let error):
      "cannot back up the watch before applying, so nothing was written: \(error)"
    case .readBackFailed(let error, let backupPath):
      "every change was written, but reading the watch back to verify failed: \(error). Backup of the previous state: \(backupPath)"
    case .partial(let failure, let backupPath):
      "apply stopped part-way: \(failure.cause). Backup of the previous state: \(backupPath)"
    case .verificationFailed(_, _, let backupPath, _):
      "the watch does not match the manifest after applying. Backup of the previous state: \(backupPath)"
    }
  }
}
