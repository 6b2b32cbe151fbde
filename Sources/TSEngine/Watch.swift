import Foundation
import TSApply
import TSDevice
import TSManifest
import TSModel
import TSPlan

/// When tsapply last wrote to a watch, as its last-applied record says (`Watch.lastWrite`,
/// "Last applied" in `status --fleet`, docs/fleet.md).
public enum LastWrite: Sendable, Equatable {
  /// At this time: the record's `applied_at` (`LastApplied.appliedAt`).
  case at(Date)
  /// Never, as far as tsapply knows: the record has no `applied_at` and the history no apply
  /// that wrote. It was first written by an apply that found the watch matching already (a
  /// watch set up elsewhere, or moved to another phone and refreshed), and nothing was written
  /// since. Shown as `neverText`, `null` in JSON.
  case never

  /// What `status --fleet` shows for `never`: "none recorded", not "never" — the records are
  /// those of this machine (an agent's, a person's), and a watch moved from another agent or
  /// phone may well have been written by it (fresh-eyes finding).
  public static let neverText = "none recorded (matched already)"

  /// The time, for `at`.
  public var date: Date? { if case .at(let date) = self { date } else { nil } }
  /// Whether it is `never`.
  public var isNever: Bool { if case .never = self { true } else { false } }
}

/// One opened watch: its device, capabilities and state folder, and every operation the
/// front-ends run on it. Plans are read-only and take no lock; applies and restores hold the
/// whole-apply lock from the read that plans until verification.
public final class Watch: Sendable {
  /// The device.
  public let device: any Device
  /// Its capabilities, read when it was opened.
  public let capabilities: DeviceCapabilities
  /// Its state folder (backups, last-applied record, lock).
  public let home: WatchHome
  /// The `--device` value naming this watch in advice, `nil` for the default watch.
  public let adviceSpec: String?
  /// What to tell the user once about opening it (e.g. the default watch was created).
  public let notices: [String]
  let reconciler: Reconciler
  let now: @Sendable () -> Date

  init(opened: OpenedDevice, capabilities: DeviceCapabilities, home: WatchHome, now: @escaping @Sendable () -> Date) {
    device = opened.device
    self.capabilities = capabilities
    self.home = home
    adviceSpec = opened.adviceSpec
    notices = opened.notices
    var reconciler = Reconciler(device: opened.device, capabilities: capabilities)
    reconciler.deviceIdentity = opened.device.identity
    self.reconciler = reconciler
    self.now = now
  }

  /// The watch's identity (`Device.identity`).
  public var identity: String { device.identity }

  /// Releases the device.
  public func close() async { await device.close() }

  /// Refuses an output file (`export -o`, `plan -out`, `monitor --log`) at `path` (absolute)
  /// that would overwrite what this watch or tsapply itself keeps: the device's own files
  /// (`Device.storageFiles`: the simulated watch's state file and its lock) or anything in the
  /// state root (every watch's backups, locks, drift records and outboxes). Paths are compared
  /// with every symbolic link resolved (`FilePaths.resolved`), so no spelling gets past.
  /// - Throws: `SecureFileError` naming `path` and what it is.
  public func refuseOutput(at path: String) throws(SecureFileError) {
    let target = FilePaths.resolved(path)
    if device.storageFiles.contains(where: { FilePaths.resolved($0) == target }) {
      throw SecureFileError(path: path, reason: "it is the state file of the watch \(identity) (or its lock), which this command reads; writing there would destroy the watch: choose another file")
    }
    if FilePaths.isInside(target, directory: home.root) {
      throw SecureFileError(path: path, reason: "it is inside tsapply's own records (\(home.root): backups, locks, drift records); choose a file outside it")
    }
  }

  /// Reads everything tsapply manages on the watch.
  /// - Throws: `EngineError.device`.
  public func readState() async throws(EngineError) -> DeviceState {
    do { return try await reconciler.readState() } catch { throw .device(error) }
  }

  /// What tsapply last left on this watch, if recorded for its platform.
  public func lastApplied() -> DeviceState? {
    record()?.state
  }

  /// The last-applied record, if there is one for this watch's platform.
  func record() -> LastApplied? {
    usable(LastApplied.read(at: home.lastAppliedPath, device: identity))
  }

  /// `record` when it was recorded for this watch's platform.
  private func usable(_ record: LastApplied?) -> LastApplied? {
    guard let record, record.profile == capabilities.profile else { return nil }
    return record
  }

  /// When tsapply last wrote to this watch, as its records say (`LastWrite`,
  /// `lastWrite(of:home:)`); `nil` without a record for this watch's platform. An apply that
  /// finds nothing to change does not move it.
  public func lastWrite() -> LastWrite? {
    record().map { Self.lastWrite(of: $0, home: home) }
  }

  /// When tsapply last wrote to the watch whose records are in `home`, `record` being its
  /// last-applied record: at the record's `applied_at`; for a record without one (written by a
  /// tsapply from before it kept the time, or first by an apply that found the watch matching),
  /// at the end of the last apply or restore in its history known to have written
  /// (`HistoryEntry.wrote`); else `never`. No time is made up: neither the record file's time
  /// nor a refresh's is a write.
  static func lastWrite(of record: LastApplied, home: WatchHome) -> LastWrite {
    if let date = record.appliedAt.flatMap(ApplyHistory.parseTime) { return .at(date) }
    let entries = (try? ApplyHistory(home: home).read().entries) ?? []
    return entries.last(where: \.wrote).flatMap(\.date).map(LastWrite.at) ?? .never
  }

  /// Records that the watch holds `state` (and `ifLanded` if a write whose answer never came
  /// landed), tsapply having last written to it at `appliedAt`; a failure to write the record is
  /// reported as `EngineEvent.recordFailed`.
  /// `record` with a write whose outcome was unknown (`LastApplied.unconfirmed`) settled by
  /// `state`, the watch as just read holding the lock: when the watch holds that write in every
  /// resource it changes (`Drift.left(by:current:capabilities:)`), the write landed, and the
  /// record is rewritten saying so (its `applied_at` kept: settling is no write), whatever the
  /// apply that read it comes to — so the wearer putting back what was there before the write
  /// is drift from then on (it was "either state" while the record allowed both). A watch that
  /// holds the state from before the write leaves it unsettled: that is the write not landing or
  /// the wearer undoing it, which no read can tell apart.
  private func settled(_ record: LastApplied?, by state: DeviceState, events: @Sendable (EngineEvent) -> Void) -> LastApplied? {
    guard var record, let unconfirmed = record.unconfirmed,
          Drift.left(by: record, current: state, capabilities: capabilities) == unconfirmed else { return record }
    record.state = unconfirmed
    record.unconfirmed = nil
    self.record(unconfirmed, ifLanded: nil, appliedAt: record.appliedAt, events: events)
    return record
  }

  private func record(_ state: DeviceState, ifLanded: DeviceState?, appliedAt: String?, events: @Sendable (EngineEvent) -> Void) {
    do {
      try LastApplied(device: identity, profile: capabilities.profile, state: state, unconfirmed: ifLanded, appliedAt: appliedAt)
        .write(to: home.lastAppliedPath)
    } catch {
      events(.recordFailed(error))
    }
  }

  // MARK: Plan

  /// Reads the watch and plans `document` against it, with the drift since the last apply.
  /// Read-only: no lock, nothing written.
  /// - Throws: `EngineError.invalid` (subject "the manifest") when the manifest does not fit the
  ///   watch; `.device` when reading fails.
  public func plan(_ document: ManifestDocument) async throws(EngineError) -> PlannedChanges {
    let state = try await readState()
    return try plan(document, state: state)
  }

  /// Plans `document` against `state` (already read from this watch).
  func plan(_ document: ManifestDocument, state: DeviceState) throws(EngineError) -> PlannedChanges {
    try plan(document, state: state, last: record())
  }

  /// Plans `document` against `state`, with the drift since `last` (what the last apply left).
  private func plan(_ document: ManifestDocument, state: DeviceState, last: LastApplied?) throws(EngineError) -> PlannedChanges {
    try Self.plan(document, state: state, since: last, capabilities: capabilities, device: identity)
  }

  /// Plans `document` against `state` of a watch with `capabilities` whose identity is
  /// `device`, with the drift since `last` (none without a record): the one planning step of
  /// every plan, used as well for a state read elsewhere (an agent's report over MQTT,
  /// docs/fleet.md "Reported states"). No device call, nothing written.
  /// - Throws: `EngineError.invalid` (the document's subject) when the manifest does not fit.
  public static func plan(_ document: ManifestDocument, state: DeviceState, since last: LastApplied? = nil,
                          capabilities: DeviceCapabilities, device: String) throws(EngineError) -> PlannedChanges {
    let result = Drift.plan(document.manifest, state: state, since: last, capabilities: capabilities)
    guard var plan = result.plan else {
      throw .invalid(InvalidInput(subject: document.subject, diagnostics: Planner.diagnostics(read: document.warnings, planned: result.diagnostics),
                                  source: document.bytes))
    }
    plan.device = device
    plan.warnings = Planner.diagnostics(read: document.warnings, planned: plan.warnings)
    return PlannedChanges(plan: plan, state: state, manifest: document.manifest, record: last)
  }

  // MARK: Apply

  /// Makes the watch match `document`: lock, read, plan, approve (the safety gate for
  /// automatic approval), back up, apply, verify, record.
  /// - Throws: `EngineError`; every case but `.apply` means nothing was written.
  public func apply(_ document: ManifestDocument, options: ApplyOptions) async throws(EngineError) -> ApplyOutcome {
    try await holding(options) { () throws(EngineError) in
      let state = try await readState()
      let last = settled(record(), by: state, events: options.events)
      var held = document
      if options.holdsBackUnapplied, let last {
        held = try holdingBack(document, last: Drift.left(by: last, current: state, capabilities: capabilities))
      }
      var planned = try plan(held, state: state, last: last)
      var options = options
      // An unsafe plan's safe part, when asked for (`ApplyOptions.holdsBackUnsafe`).
      var unsafe: [SafetyFinding] = []
      if options.holdsBackUnsafe, case .automatic(allowDestroy: false) = options.approval {
        unsafe = planned.plan.unsafeFindings
        if !unsafe.isEmpty, let part = try? plan(holdingBack(unsafe: unsafe, in: held, state: state), state: state, last: last),
           !part.plan.isEmpty, part.plan.unsafeFindings.isEmpty {
          planned = part
          // Left as the watch holds it, what was held is still the wearer's change: drift.
          options.keepsDriftInRecord = true
        } else {
          unsafe = []
        }
      }
      let outcome = try await execute(planned, options: options, reviewed: false,
                                      source: (kind: document.subject == "the backup" ? "restore" : "apply", manifest: document.path))
      guard case .applied(var report) = outcome, !unsafe.isEmpty else { return outcome }
      report.heldBackUnsafe = unsafe
      return .applied(report)
    }
  }

  /// Applies a saved plan (from `plan -out`) exactly, after `check(_:state:)` finds nothing
  /// wrong; a saved plan counts as reviewed, so there is no question and no safety gate.
  /// - Throws: `EngineError.savedPlanRefused` with every reason it cannot be applied; others as `apply`.
  public func apply(saved: SavedPlanFile, options: ApplyOptions) async throws(EngineError) -> ApplyOutcome {
    try await holding(options) { () throws(EngineError) in
      let state = try await readState()
      let check = self.check(saved, state: state)
      guard let manifest = check.manifest, check.problems.isEmpty else { throw .savedPlanRefused(check.problems) }
      var plan = saved.saved.plan
      plan.device = identity
      return try await execute(PlannedChanges(plan: plan, state: state, manifest: manifest,
                                              record: settled(record(), by: state, events: options.events)), options: options,
                               reviewed: true, source: (kind: "apply", manifest: saved.manifestPath))
    }
  }

  /// Runs `body` holding the lock (and lease), released, lease given back, before returning.
  func holding<Value>(_ options: ApplyOptions,
                      _ body: () async throws(EngineError) -> Value) async throws(EngineError) -> Value {
    let held = try await hold(options)
    let result: Result<Value, EngineError>
    do { result = .success(try await body()) } catch { result = .failure(error) }
    await held.release()
    return try result.get()
  }

  /// Refreshes the last-applied record without writing to the watch (Terraform's
  /// `-refresh-only`): holding the lock, reads the watch and plans `document`; when nothing is to
  /// change, records what `options.refresh` says (the monitor: the drift the manifest accepts,
  /// `DriftReport.accepted`). Returns what is still drift since the record; `nil` when the plan
  /// has changes (nothing recorded: that is an apply's work) or there is no record.
  /// - Throws: as `apply` before its first write (`.locked`, `.device`, `.invalid`, `.records`).
  public func refreshRecord(_ document: ManifestDocument, options: ApplyOptions) async throws(EngineError) -> [ResourceChange]? {
    try await holding(options) { () throws(EngineError) in
      let state = try await readState()
      let planned = try plan(document, state: state, last: settled(record(), by: state, events: options.events))
      guard planned.plan.isEmpty, planned.record != nil else { return nil }
      refresh(planned, kept: keptInRecord(planned, options: options), options: options)
      return record().map { document.manifest.naming(Drift.changes(since: $0, current: planned.state, capabilities: capabilities), capabilities: capabilities) }
    }
  }

  /// Puts the watch back into the state a backup holds: the backup is checked with every
  /// manifest rule (it is a file a person can edit), then planned and applied like a manifest,
  /// with the same approval and safety gate. The current state is itself backed up first.
  /// - Throws: `EngineError.backup` for a backup of another platform; `.invalid` (subject "the
  ///   backup") when it breaks a rule; others as `apply`.
  public func restore(_ backup: Backup, file: String, options: ApplyOptions) async throws(EngineError) -> ApplyOutcome {
    guard backup.profile == capabilities.profile else {
      throw .backup(BackupError(path: file, reason: "it was taken from a '\(backup.profile)' watch; this watch is '\(capabilities.profile)'"))
    }
    let document = try Self.manifest(restoring: backup, file: file, capabilities: capabilities)
    return try await apply(document, options: options)
  }

  /// Exports what the watch holds as a complete manifest (`ManifestExport`), dated `date`.
  /// - Throws: `EngineError.device` when reading fails.
  public func export(date: Date) async throws(EngineError) -> ManifestExport.Output {
    let state = try await readState()
    do {
      return try ManifestExport.export(state, capabilities: capabilities, date: date)
    } catch {
      throw .device(DeviceError(.simulator, .dataFormatError, "cannot write the manifest: \(error)"))
    }
  }

  /// Shows the plan, approves it (unless `reviewed`), backs up, applies, verifies and records:
  /// the last-applied record, and (once a backup was taken, so the watch may have been written)
  /// an entry of the apply history saying what `source` (its kind and manifest) came to.
  func execute(_ planned: PlannedChanges, options: ApplyOptions, reviewed: Bool,
               source: (kind: String, manifest: String?)) async throws(EngineError) -> ApplyOutcome {
    let plan = planned.plan
    options.events(.planned(plan))
    // What the record keeps as the last apply left it, whatever the watch holds (`keptInRecord`).
    let kept = keptInRecord(planned, options: options)
    let keeping = Self.keeping(kept)
    if plan.isEmpty {
      refresh(planned, kept: kept, options: options)
      return .noChanges(plan)
    }
    if !reviewed {
      switch options.approval {
      case .ask(let confirm):
        guard await confirm(plan) else { throw .declined }
      case .automatic(let allowDestroy):
        let unsafe = plan.unsafeFindings
        if !allowDestroy && !unsafe.isEmpty { throw .unsafe(plan, unsafe) }
      }
    }
    options.stop.begin()
    defer { options.stop.end() }
    let heard = options.listensWhileWriting ? await listenWhileWriting(plan, events: options.events)
      : options.announcements?.begin(kinds: announcedKinds(plan))
    defer { options.announcements?.end() }
    // While the watch's announcements are heard, what the read-back found changed on the watch
    // is held until they are in: a list the watch announced is said once, by the announcement
    // (who, and whether it was written over), not also as a change the read-back found
    // (fresh-eyes finding: two warnings saying nearly the same).
    let foundByReadBack = Locked<[ResourceChange]>([])
    func sayFoundByReadBack(exceptAnnounced announced: Set<DeviceEvent.Kind>) {
      // A list's changes are its `contacts` fields (the emergency resource's SOS switch is not).
      let rest = foundByReadBack.value.filter { change in
        !announced.contains { change.address == Self.address(of: $0) && change.fields.allSatisfy { $0.field == "contacts" } }
      }
      if !rest.isEmpty { options.events(.reconcile(.changedWhileWriting(rest))) }
    }
    let report: ApplyReport
    do {
      report = try await reconciler.apply(plan, manifest: planned.manifest, state: planned.state,
                                          backupDirectory: home.backupDirectory, now: now(),
                                          shouldStop: { options.stop.isRequested },
                                          recorded: planned.record.map { Drift.left(by: $0, current: planned.state, capabilities: capabilities) },
                                          record: { self.record(keeping($0), ifLanded: $1.map(keeping), appliedAt: ApplyHistory.timeText(self.now()),
                                                                events: options.events) },
                                          progress: { progress in
                                            // In the history before the first write: a process killed while writing leaves it there.
                                            if case .backedUp(let path) = progress {
                                              self.appendHistory(planned.plan, source: source, options: options, result: HistoryEntry.started,
                                                                 error: nil, backup: path)
                                            }
                                            if heard != nil, case .changedWhileWriting(let drift) = progress {
                                              foundByReadBack.mutate { $0 += drift }
                                              return
                                            }
                                            options.events(.reconcile(progress))
                                          })
    } catch {
      if let backup = error.backupPath {
        appendHistory(planned.plan, source: source, options: options, result: options.stop.isRequested ? "interrupted" : "failed",
                      error: error.description, backup: backup, reached: Self.reached(planned.plan, failure: error))
      }
      if let heard {
        let announced = await reportChanges(heard, over: error.reached ?? planned.state, plannedFrom: planned.state, unwritten: Self.unwritten(error),
                                            kept: Self.kept(error), events: options.events)
        sayFoundByReadBack(exceptAnnounced: announced)
        // The apply's own listener hears only new events: a list announced as the plan found it,
        // and read back so after a lost answer, was put back on the watch during the write.
        if options.listensWhileWriting, case .partial(let failure, _) = error, case .outcomeUnknown(_, .notApplied) = failure.cause {
          let back = heard.value.filter { kind, contacts in
            failure.failed.contains(Self.address(of: kind)) && contacts == Self.list(of: kind, in: planned.state)
          }
          if !back.isEmpty { options.events(.putBackOnWatchDuringApply(lists: back)) }
        }
      }
      throw .apply(error)
    }
    appendHistory(planned.plan, source: source, options: options, result: "applied", error: nil, backup: report.backupPath,
                  reached: (planned.plan.counts, [], []))
    if let heard {
      // Read back as the manifest gives it — but a change announced meanwhile may have come
      // after that read: each announced list is read once more (`keptAfterVerifying`).
      let announced = await reportChanges(heard, over: report.finalState ?? planned.state, plannedFrom: planned.state, unwritten: [], kept: nil,
                                          verified: report.finalState, events: options.events)
      sayFoundByReadBack(exceptAnnounced: announced)
    }
    return .applied(report)
  }

  /// The drift of `planned` (changes on the watch since the last apply) an apply that keeps
  /// drift out of its record leaves there as the last apply left it: every drifted resource
  /// its plan does not write, except those the manifest itself changes on what the last apply
  /// left (`Drift.left`) — the watch holds the manifest's own change there, which is what
  /// tsapply would have written. Empty without a record or drift.
  /// Records what the watch holds, `planned` having found nothing to change, but for `kept`
  /// (drift that stays as the last apply left it, `keptDrift`): so a record left stale (a
  /// process killed between a write and its record, an older tsapply) stops showing as drift,
  /// and so does a wearer's change the manifest now holds (`ApplyOptions.refresh`). Nothing was
  /// written now: the time of the last write is kept, and a record without one (first written
  /// by an apply that found the watch matching) stays without one.
  private func refresh(_ planned: PlannedChanges, kept: [ResourceChange], options: ApplyOptions) {
    let appliedAt = planned.record?.appliedAt
    let refreshed = Self.keeping(kept)(planned.state)
    if planned.record != LastApplied(device: identity, profile: capabilities.profile, state: refreshed, appliedAt: appliedAt) {
      record(refreshed, ifLanded: nil, appliedAt: appliedAt, events: options.events)
    }
  }

  /// A state with the `kept` drift as the last apply left it (`ResourceChange.before`).
  private static func keeping(_ kept: [ResourceChange]) -> @Sendable (DeviceState) -> DeviceState {
    { kept.isEmpty ? $0 : $0.taking(kept, addresses: Set(kept.map(\.address)), as: .recorded) }
  }

  /// The drift of `planned` the record keeps as the last apply left it: all `keptDrift` for an
  /// apply that keeps drift out of its record (`ApplyOptions.keepsDriftInRecord`) and for a
  /// refresh of what the manifest accepts; for the rest (a person's apply, which showed the
  /// drift in its plan, docs/plan.md "Drift"), only that of resources the manifest does not
  /// state at all (`Manifest.states`) — a section a manifest leaves out was not looked at, so
  /// applying it does not make a change there tsapply's (fresh-eyes finding: SOS switched off
  /// on the watch, then an apply of a manifest of reminders only, and `drift` of the manifest
  /// with the emergency list said "No drift" for good).
  func keptInRecord(_ planned: PlannedChanges, options: ApplyOptions) -> [ResourceChange] {
    if options.keepsDriftInRecord || (planned.plan.isEmpty && options.refresh == .accepted) { return keptDrift(planned) }
    // A plan neither writes nor changes what its manifest does not state: no need to plan again (`keptDrift`).
    return planned.plan.resourceDrift.filter { !planned.manifest.states($0.address) }
  }

  func keptDrift(_ planned: PlannedChanges) -> [ResourceChange] {
    guard let record = planned.record, !planned.plan.resourceDrift.isEmpty else { return [] }
    let written = Set(planned.plan.resourceChanges.map(\.address))
    let left = Drift.left(by: record, current: planned.state, capabilities: capabilities)
    let ownChanges = Planner.plan(planned.manifest, state: left, capabilities: capabilities).plan?.resourceChanges ?? []
    let own = Dictionary(ownChanges.map { ($0.address, $0) }) { first, _ in first }
    var kept = planned.plan.resourceDrift.filter { !written.contains($0.address) && own[$0.address] == nil }
    // Drifted, and written by this apply elsewhere only (the manifest's own edit of it: Lunch's
    // time, while the wearer switched it off): the wearer's change is still on the watch, so the
    // record holds the resource as the apply would have left it without that change — the
    // record's, with the manifest's edit — and it stays drift (fresh-eyes finding: an agent's
    // record took Lunch switched off as its own: "in sync", drift 0).
    let undone = Set(planned.plan.undoing(planned.plan.resourceDrift))
    // So is one it changes back only in part (another tool moved a reminder's time, the wearer
    // switched it off; the manifest's time is written back, `enabled` stays as the watch has it:
    // `Plan.leaves`): the wearer's switch stays drift, never "what tsapply left".
    for change in planned.plan.resourceDrift
    where written.contains(change.address) && (!undone.contains(change.address) || !planned.plan.leaves(change).isEmpty) {
      var asLeft = change
      asLeft.before = Self.adoptingAdded(own[change.address]?.after ?? change.before, recorded: change.before,
                                         written: planned.plan.resourceChanges.first { $0.address == change.address }?.after)
      kept.append(asLeft)
    }
    return kept
  }

  /// `left`, a contact list as an apply would have left it without the wearer's change, with each
  /// contact it holds that `recorded` (the list as the last apply left it) does not — one the
  /// manifest's own change adds — taken as this apply writes it (`written`: same name and
  /// number), when it does: the wearer added it first, the manifest declares it, and the apply
  /// leaves it as the watch holds it (a short name the manifest does not state stays empty).
  /// That is what tsapply wrote, so it is not drift; as a new contact would be derived, it
  /// stayed drift that no apply writes (fresh-eyes fe103 #1). Other values are returned as given.
  static func adoptingAdded(_ left: ResourceValue?, recorded: ResourceValue?, written: ResourceValue?) -> ResourceValue? {
    func adopting(_ list: [Contact], recorded: [Contact], written: [Contact]) -> [Contact] {
      let known = Set(recorded.map(\.name))
      return list.map { contact in
        guard !known.contains(contact.name) else { return contact }
        return written.first { $0.name == contact.name && $0.phoneNum == contact.phoneNum } ?? contact
      }
    }
    switch (left, recorded, written) {
    case (.contacts(let list)?, .contacts(let before)?, .contacts(let after)?):
      return .contacts(adopting(list, recorded: before, written: after))
    case (.emergency(var list)?, .emergency(let before)?, .emergency(let after)?):
      list.contacts = adopting(list.contacts, recorded: before.contacts, written: after.contacts)
      return .emergency(list)
    default:
      return left
    }
  }

  /// The watch's apply history (docs/apply.md "History").
  public var history: ApplyHistory { ApplyHistory(home: home) }

  /// Appends what an apply of `plan` came to to the history (under the lock the apply holds);
  /// a failure to write it is reported as `EngineEvent.historyFailed`.
  /// `reached`: of the plan's changes, those that reached the watch, the resources of the step
  /// that failed and those whose outcome is unknown (`HistoryEntry.reached`; `nil` for `started`).
  private func appendHistory(_ plan: Plan, source: (kind: String, manifest: String?), options: ApplyOptions,
                             result: String, error: String?, backup: String?,
                             reached: (counts: PlanCounts, failed: [ResourceAddress], unknown: [ResourceAddress])? = nil) {
    let counts = plan.counts
    let names = { (addresses: [ResourceAddress]) in addresses.isEmpty ? nil : addresses.map(\.rawValue) }
    let entry = HistoryEntry(sequence: 0, time: ApplyHistory.timeText(now()), kind: source.kind, user: Operator.user, host: Operator.host,
                             command: options.command, device: identity, manifest: source.manifest,
                             commit: source.manifest.flatMap(GitCommit.head(of:)), plan: ApplyHistory.digest(of: plan),
                             add: counts.add, change: counts.change, destroy: counts.destroy, result: result, error: error,
                             backup: backup, previous: "", hash: "", reached: reached?.counts,
                             failedAt: reached.flatMap { names($0.failed) }, unknown: reached.flatMap { names($0.unknown) })
    do { try history.append(entry) } catch { options.events(.historyFailed(error)) }
  }

  /// What of `plan` reached the watch when its apply failed with `failure`: the changes of the
  /// steps that ran (and of the one whose lost answer reads back as applied), counted by action;
  /// the resources of the step that failed; those whose write's outcome is unknown (its list
  /// read back as neither, or not at all). Every write was answered when only reading back or
  /// verification failed: all of the plan then.
  static func reached(_ plan: Plan, failure: ApplyError) -> (counts: PlanCounts, failed: [ResourceAddress], unknown: [ResourceAddress]) {
    guard case .partial(let partial, _) = failure else {
      switch failure {
      case .stateChanged, .backupFailed: return (PlanCounts(add: 0, change: 0, destroy: 0), [], [])
      default: return (plan.counts, [], [])
      }
    }
    let applied = Set(partial.applied)
    var reached = plan
    reached.resourceChanges = plan.resourceChanges.filter { applied.contains($0.address) }
    if case .outcomeUnknown(_, .unreadable) = partial.cause { return (reached.counts, [], partial.failed) }
    if case .outcomeUnknown(_, .other) = partial.cause { return (reached.counts, [], partial.failed) }
    return (reached.counts, partial.failed, [])
  }

  // MARK: Listening while writing

  /// The lists the watch announced while an apply wrote, by kind (the last announcement wins).
  final class Heard: @unchecked Sendable {
    private let lock = NSLock()
    private var lists: [DeviceEvent.Kind: [Contact]] = [:]
    func add(_ kind: DeviceEvent.Kind, _ contacts: [Contact]) { lock.withLock { lists[kind] = contacts } }
    var value: [DeviceEvent.Kind: [Contact]] { lock.withLock { lists } }
  }

  /// How long after the last write an announcement of a change made just before it may still
  /// arrive (a simulated watch's listener polls every 100 ms; a bridge's stream pushes).
  static let announcementDelay: Duration = .milliseconds(250)

  /// Starts listening for changes on the watch to the lists `plan` writes, where the platform
  /// announces them; `nil` when it writes none of them or announces none. When the listener does
  /// not hear the watch in time, `events` is told (`EngineEvent.notHearingTheWatch`).
  private func listenWhileWriting(_ plan: Plan, events: @Sendable (EngineEvent) -> Void) async -> Heard? {
    let kinds = announcedKinds(plan)
    guard !kinds.isEmpty else { return nil }
    let heard = Heard()
    let hears = await device.listen(to: kinds, after: nil) { report in
      if case .event(let event) = report, let contacts = event.contacts { heard.add(event.kind, contacts) }
    }
    if !hears { events(.notHearingTheWatch(lists: kinds.map(Self.address(of:)).sorted())) }
    return heard
  }

  /// The list an announcement of `kind` is about: `contacts` or `emergency` (an SOS press is
  /// about neither; taken as `emergency`, never asked).
  static func address(of kind: DeviceEvent.Kind) -> ResourceAddress { kind == .contactsChanged ? .contacts : .emergency }

  /// That list as `state` holds it.
  static func list(of kind: DeviceEvent.Kind, in state: DeviceState) -> [Contact]? {
    kind == .contactsChanged ? state.contacts : state.emergency?.contacts
  }

  /// The kinds of announcement of the lists `plan` writes that the platform announces.
  private func announcedKinds(_ plan: Plan) -> Set<DeviceEvent.Kind> {
    let written = Set(plan.resourceChanges.map(\.address))
    var kinds: Set<DeviceEvent.Kind> = []
    if written.contains(.contacts) && capabilities.contacts.contactsChangedListener { kinds.insert(.contactsChanged) }
    if written.contains(.emergency) && capabilities.contacts.emergencyContactsChangedListener { kinds.insert(.emergencyContactsChanged) }
    return kinds
  }

  /// The lists an apply that failed with `error` never wrote: those after the step that
  /// failed, and that step's own when it stopped before its write (the list changed on the
  /// watch, a stop request).
  static func unwritten(_ error: ApplyError) -> Set<ResourceAddress> {
    guard case .partial(let failure, _) = error else { return [] }
    var addresses = Set(failure.notApplied)
    switch failure.cause {
    case .changedOnWatch, .interrupted: addresses.formUnion(failure.failed)
    case .device, .outcomeUnknown: break
    }
    return addresses
  }

  /// What the read-back of an apply that failed with `error` says of each list a watch
  /// announces: after a verification that found the list otherwise than written, the watch
  /// still holds a change to it (`true`), and so after a lost answer whose list read back as
  /// neither what was sent nor what was there; verified as written, it does not (`false`); not
  /// read back (the apply stopped before), not known (absent).
  static func kept(_ error: ApplyError) -> [DeviceEvent.Kind: Bool] {
    // A lost answer whose list read back as neither what was sent nor what was there: the
    // watch holds a change made on it (fresh-eyes finding: "may have written over that
    // change" while the read-back showed the watch held it).
    let lists: [DeviceEvent.Kind] = [.contactsChanged, .emergencyContactsChanged]
    if case .partial(let failure, _) = error, case .outcomeUnknown(_, .other) = failure.cause {
      let failed = Set(failure.failed)
      return Dictionary(uniqueKeysWithValues: lists.filter { failed.contains(address(of: $0)) }.map { ($0, true) })
    }
    guard case .verificationFailed(let remaining?, _, _, _) = error else { return [:] }
    let differing = Set(remaining.resourceChanges.map(\.address))
    return Dictionary(uniqueKeysWithValues: lists.map { ($0, differing.contains(address(of: $0))) })
  }

  /// After an apply verified as planned (`verified`, its read-back): whether the watch still
  /// holds each announced list's change, read once more now — the change may have come after
  /// the read-back (`true`: the list differs from the read-back; `false`: it reads as written).
  /// Not known (absent) when the read fails or there was no read-back.
  private func keptAfterVerifying(_ kinds: Dictionary<DeviceEvent.Kind, [Contact]>.Keys, verified: DeviceState?) async -> [DeviceEvent.Kind: Bool] {
    guard let verified else { return [:] }
    var kept: [DeviceEvent.Kind: Bool] = [:]
    for kind in kinds {
      switch kind {
      case .contactsChanged:
        if let now = try? await device.getAllContacts() { kept[kind] = now != verified.contacts }
      case .emergencyContactsChanged:
        if let now = try? await device.getEmergencyContacts() { kept[kind] = now != verified.emergency }
      default:
        break
      }
    }
    return kept
  }

  /// After the writes: waits for late announcements, then reports what the watch announced
  /// during the apply, backing up `state` with the announced lists in it so that `tsapply
  /// restore` can bring them back. The lists reported.
  @discardableResult
  private func reportChanges(_ heard: Heard, over state: DeviceState, plannedFrom: DeviceState, unwritten: Set<ResourceAddress>,
                             kept: [DeviceEvent.Kind: Bool]?, verified: DeviceState? = nil,
                             events: @Sendable (EngineEvent) -> Void) async -> Set<DeviceEvent.Kind> {
    try? await Task.sleep(for: Self.announcementDelay)
    // A list this apply did not write was not written over: the apply's own report says what
    // happened to it (e.g. the change it found just before writing, which stopped it). Nor was
    // a list the watch already held when the plan was read: an announcement of a change made
    // before the apply (a listener registered as the apply began replays what it missed) is
    // drift the plan saw, not a change made while it wrote (fresh-eyes finding: an agent
    // restarted after the wearer cleared the emergency list said the list was changed "while
    // it wrote", with a backup of a state the watch never held).
    let lists = heard.value.filter { kind, contacts in
      !unwritten.contains(Self.address(of: kind)) && contacts != Self.list(of: kind, in: plannedFrom)
    }
    guard !lists.isEmpty else { return [] }
    var announced = state
    if let contacts = lists[.contactsChanged] { announced.contacts = contacts }
    if let contacts = lists[.emergencyContactsChanged] { announced.emergency?.contacts = contacts }
    let time = now()
    let path = try? Backup(createdAt: time, profile: capabilities.profile, device: identity, state: announced)
      .write(into: home.backupDirectory, at: time)
    var outcome = kept ?? [:]
    if kept == nil { outcome = await keptAfterVerifying(lists.keys, verified: verified) }
    events(.changedOnWatchDuringApply(lists: lists, backupPath: path, kept: outcome.filter { lists[$0.key] != nil }))
    return Set(lists.keys)
  }

  // MARK: Lock

  /// The local lock, and the device's lease where it offers one, both held until `release()`.
  final class Held: @unchecked Sendable {
    let local: WatchLock
    /// The device's own apply lock (`Device.applyLockPath`), when it has one.
    let onDevice: WatchLock?
    let lease: (device: any LeasableDevice, lease: DeviceLease, renewal: Task<Void, Never>)?
    init(local: WatchLock, onDevice: WatchLock?, lease: (device: any LeasableDevice, lease: DeviceLease, renewal: Task<Void, Never>)?) {
      self.local = local
      self.onDevice = onDevice
      self.lease = lease
    }
    /// Gives the lease back (awaited, so a process that exits next leaves the watch free at
    /// once), then the device's lock and the local lock.
    func release() async {
      if let lease {
        lease.renewal.cancel()
        await lease.device.releaseLease(lease.lease)
      }
      onDevice?.release()
      local.release()
    }
  }

  /// Seconds a bridge lease lives without renewal; it is renewed every third of that.
  static let leaseTimeToLive = 60

  /// How often a leased watch is asked for its lease again while `-lock-timeout` waits: from a
  /// quarter second, doubling, at most every 5 s (a 90 s wait is about 20 requests, not 360),
  /// and never past the moment the lease expires.
  static let leaseWait = Backoff.Policy(initial: .milliseconds(250), maximum: .seconds(5))

  private func hold(_ options: ApplyOptions) async throws(EngineError) -> Held {
    do { try home.prepare(profile: capabilities.profile) } catch { throw .records(error) }
    let holder = WatchLock.currentHolder(command: options.command, now: now())
    // Tried once, then (with `-lock-timeout`) waited for, saying whom for.
    func lock(_ path: String) async throws(EngineError) -> WatchLock {
      do {
        return try await WatchLock.acquire(at: path, holder: holder, timeout: .zero)
      } catch {
        guard case .held(let current, _, _) = error, options.lockTimeout > .zero else { throw .locked(error) }
        options.events(.waitingForLock(current))
        do {
          return try await WatchLock.acquire(at: path, holder: holder, timeout: options.lockTimeout)
        } catch {
          throw .locked(error)
        }
      }
    }
    let local = try await lock(home.lockPath)
    // The device's own lock, taken second whatever the state folder (so two processes never
    // wait on each other's first lock).
    var onDevice: WatchLock?
    if let path = device.applyLockPath {
      do {
        onDevice = try await lock(path)
      } catch {
        local.release()
        throw error
      }
    }
    guard let leasable = device as? any LeasableDevice else { return Held(local: local, onDevice: onDevice, lease: nil) }
    let clock = ContinuousClock()
    let start = clock.now
    var backoff = Backoff(Self.leaseWait)
    while true {
      do {
        let lease = try await leasable.acquireLease(holder: holder, timeToLive: Self.leaseTimeToLive)
        let renewal = Task {
          while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(Self.leaseTimeToLive / 3))
            if Task.isCancelled { break }
            try? await leasable.renewLease(lease, timeToLive: Self.leaseTimeToLive)
          }
        }
        return Held(local: local, onDevice: onDevice, lease: (leasable, lease, renewal))
      } catch {
        let waited = clock.now - start
        guard case .held(let current, let expiresIn) = error else {
          onDevice?.release()
          local.release()
          if case .device(let deviceError) = error { throw .device(deviceError) }
          throw .locked(.leased(by: nil, watch: identity, waited: waited, expiresIn: nil, holderEnded: false))
        }
        let ended = current.map(WatchLock.hasEnded) ?? false
        if waited >= options.lockTimeout {
          onDevice?.release()
          local.release()
          throw .locked(.leased(by: current, watch: identity, waited: waited, expiresIn: expiresIn, holderEnded: ended))
        }
        if backoff.attempts == 0 {
          options.events(.waitingForLease(.leased(by: current, watch: identity, waited: .zero, expiresIn: expiresIn, holderEnded: ended)))
        }
        var pause = min(backoff.next(), options.lockTimeout - waited)
        if let expiresIn { pause = min(pause, .seconds(expiresIn)) }
        try? await Task.sleep(for: pause)
      }
    }
  }
}

extension Watch {
  /// A backup stated as a manifest and checked with every manifest rule, so an edited backup
  /// (`repeatDays: -1`, a phone `abc`) is refused, never written.
  /// - Throws: `EngineError.invalid` (subject "the backup").
  static func manifest(restoring backup: Backup, file: String, capabilities: DeviceCapabilities) throws(EngineError) -> ManifestDocument {
    try manifest(stating: backup.state, file: file, subject: "the backup", capabilities: capabilities)
  }

  /// `state` stated as a manifest and checked with every manifest rule (`subject` names it in
  /// errors: "the backup", "the last-applied record").
  /// - Throws: `EngineError.invalid` (subject `subject`).
  /// The emergency section as `state` holds it — every contact with its short name, or none,
  /// as stored — for a manifest that leaves the list as it is; `nil` when it cannot be stated.
  static func emergencyAsHeld(_ state: DeviceState, capabilities: DeviceCapabilities) -> ManifestEmergency? {
    guard var emergency = (try? manifest(stating: state, file: "the watch", subject: "the watch", capabilities: capabilities))?.manifest.emergency,
          var contacts = emergency.contacts?.value, let stored = state.emergency?.contacts, stored.count == contacts.count else { return nil }
    for index in contacts.indices {
      contacts[index].shortName = stored[index].shortName ?? ""
      contacts[index].shortNameIsExplicit = true
    }
    emergency.contacts?.value = contacts
    return emergency
  }

  static func manifest(stating state: DeviceState, file: String, subject: String, capabilities: DeviceCapabilities) throws(EngineError) -> ManifestDocument {
    let (stated, problems) = StateManifest.manifest(for: state, capabilities: capabilities, file: file)
    if problems.hasErrors { throw .invalid(InvalidInput(subject: subject, diagnostics: problems, source: nil)) }
    let yaml: [UInt8]
    do {
      yaml = Array(try ManifestEncoder.encode(stated).utf8)
    } catch {
      throw .invalid(InvalidInput(subject: subject, diagnostics: [.error(at: nil, field: "", "\(error)")], source: nil))
    }
    let checked = ManifestLoader.load(bytes: yaml, file: "\(file) (as a manifest)")
    guard var manifest = checked.manifest, !checked.diagnostics.hasErrors else {
      throw .invalid(InvalidInput(subject: subject, diagnostics: checked.diagnostics.filter { $0.severity == .error },
                                  source: yaml))
    }
    // A contact the backup holds without a short name is restored without one. A manifest
    // cannot say "none" (a short_name left out is derived from the name), so the contacts read
    // back are told: the empty short name, as stated.
    if var contacts = manifest.contacts?.value, let held = stated.contacts?.value, held.count == contacts.count {
      for index in contacts.indices where !held[index].shortNameIsExplicit {
        contacts[index].shortName = ""
        contacts[index].shortNameIsExplicit = true
      }
      manifest.contacts?.value = contacts
    }
    return ManifestDocument(manifest: manifest, warnings: [], bytes: yaml, path: nil, subject: subject)
  }

  /// The resources `document` would change on what the last apply left: its own changes, not
  /// applied yet (empty without a last-applied record, or when it does not fit the watch).
  /// With `current` (the watch as just read), a write the record holds as unconfirmed counts as
  /// applied where the watch holds it (`Drift.left`).
  public func unapplied(_ document: ManifestDocument, current: DeviceState? = nil) -> [ResourceAddress] {
    guard let record = record() else { return [] }
    let last = current.map { Drift.left(by: record, current: $0, capabilities: capabilities) } ?? record.state
    return Planner.plan(document.manifest, state: last, capabilities: capabilities).plan?.resourceChanges.map(\.address) ?? []
  }

  /// `document` with its own changes held back (`ApplyOptions.holdsBackUnapplied`): each
  /// section that holds a resource it would change on `last` (what the last apply left) —
  /// a built-in reminder, the custom reminders, the contacts, the emergency contacts with the
  /// SOS switch — is replaced by that section as `last` holds it, its removals dropped, so the
  /// result planned against `last` changes nothing. Planned against the watch, it undoes the
  /// drift in what the manifest manages (an emptied emergency list is written back) and
  /// nothing else.
  /// - Throws: `EngineError.invalid` (subject "the last-applied record") when the record cannot
  ///   be stated as a manifest, or some of the manifest's changes cannot be held back (they are
  ///   named); nothing is written then.
  func holdingBack(_ document: ManifestDocument, last: DeviceState) throws(EngineError) -> ManifestDocument {
    let changed = Planner.plan(document.manifest, state: last, capabilities: capabilities).plan?.resourceChanges.map(\.address) ?? []
    guard !changed.isEmpty else { return document }
    let stated = try Self.manifest(stating: last, file: "the last-applied record", subject: "the last-applied record",
                                   capabilities: capabilities).manifest
    let manifest = Self.replacing(Set(changed), in: document.manifest, with: stated)
    let left = Planner.plan(manifest, state: last, capabilities: capabilities).plan?.resourceChanges.map(\.address.rawValue) ?? ["the manifest"]
    guard left.isEmpty else {
      throw .invalid(InvalidInput(subject: "the last-applied record", diagnostics: [
        .error(at: nil, field: "", "the manifest's own change to \(left.joined(separator: ", ")) cannot be held back; nothing was written"),
      ], source: nil))
    }
    return ManifestDocument(manifest: manifest, warnings: document.warnings, bytes: document.bytes, path: document.path, subject: document.subject)
  }
}

extension Watch {
  /// `manifest` with each section that holds one of `addresses` — a built-in reminder, the
  /// custom reminders (any custom address: they are one list), the contacts, the emergency
  /// contacts with the SOS switch — replaced by that section of `stated`, its removals dropped;
  /// without `stated`, left out (the manifest no longer manages it).
  static func replacing(_ addresses: Set<ResourceAddress>, in manifest: Manifest, with stated: Manifest?) -> Manifest {
    var manifest = manifest
    for address in addresses {
      if address == .contacts {
        manifest.contacts = stated?.contacts
        manifest.removals.removeAll { $0.list == .contacts }
      } else if address == .emergency {
        manifest.emergency = stated?.emergency
        manifest.removals.removeAll { $0.list == .emergencyContacts }
      } else if address == .builtIn(.sedentary) {
        manifest.reminders?.sedentary = stated?.reminders?.sedentary
      } else if address == .builtIn(.drinking) {
        manifest.reminders?.drinking = stated?.reminders?.drinking
      } else if address == .builtIn(.medicine) {
        manifest.reminders?.medicine = stated?.reminders?.medicine
      } else {
        manifest.reminders?.custom = stated?.reminders?.custom
        manifest.removals.removeAll { $0.list == .customReminders }
      }
    }
    return manifest
  }

  /// Whether `address` is in a section `replacing` holds for the `heldBack` findings' addresses
  /// (`ApplyOptions.holdsBackUnsafe`): one of them, or any custom reminder when one is (the
  /// custom reminders are one list).
  public static func holds(_ address: ResourceAddress, heldBack: [SafetyFinding]) -> Bool {
    let held = heldBack.flatMap(\.addresses)
    return held.contains(address) || (address.isCustomReminder && held.contains(where: \.isCustomReminder))
  }

  /// `document` with the sections of the resources the `unsafe` findings are about left out, so
  /// that the plan leaves them as the watch holds them (`ApplyOptions.holdsBackUnsafe`) — left
  /// out rather than stated as the watch holds them, which a watch holding two custom reminders
  /// of one name cannot be.
  /// The SOS switch is kept when only the emergency list is unsafe to write (an emergency contact
  /// the wearer added, or the manifest's own removal of one, beside SOS switched off): the list is
  /// held as the watch holds it and the manifest's switch is written (fresh-eyes fe102 #3: SOS
  /// stayed off for an emergency contact added beside it).
  func holdingBack(unsafe: [SafetyFinding], in document: ManifestDocument, state: DeviceState) -> ManifestDocument {
    var manifest = Self.replacing(Set(unsafe.flatMap(\.addresses)), in: document.manifest, with: nil)
    if let sos = document.manifest.emergency?.isSosOn, unsafe.contains(where: { $0.addresses.contains(.emergency) }),
       !unsafe.contains(.disablesSOS), var held = Self.emergencyAsHeld(state, capabilities: capabilities) {
      held.isSosOn = sos
      manifest.emergency = held
    }
    return ManifestDocument(manifest: manifest, warnings: document.warnings, bytes: document.bytes, path: document.path, subject: document.subject)
  }
}

/// What `tsapply drift` and the monitor find: what changed on the watch since the last apply,
/// told apart from what the manifest would still change.
public struct DriftReport: Sendable {
  /// Whether this watch has a last-applied record; without one, drift cannot be told.
  public var hasRecord: Bool
  /// Resources changed on the watch since the last apply: `before` = what the apply left,
  /// `after` = what the watch holds now.
  public var drift: [ResourceChange]
  /// The manifest planned against the watch now: its changes are what is pending (they include
  /// undoing the drift the manifest manages).
  public var pending: Plan
  /// The watch's state when read.
  public var state: DeviceState
  /// When tsapply last wrote to the watch, from the same record as the drift (`Watch.lastWrite`);
  /// `nil` without a record.
  public var lastWrite: LastWrite? = nil
  /// The resources the manifest itself changes on what the last apply left (`Drift.left`):
  /// with `drift`, what tells its own pending changes from undoing drift. Empty without a record.
  public var own: Set<ResourceAddress> = []

  /// The manifest's own changes not applied yet: `pending` without what only undoes `drift`
  /// (`DriftRenderer.unapplied`). What drift reports, statuses and the page count as pending.
  public var unapplied: [ResourceChange] { DriftRenderer.unapplied(pending, drift: drift, own: own) }

  /// The drifted resources the manifest accepts: it changed them since the last apply (`own`)
  /// and the watch holds them as it asks (nothing pending for them) — the wearer's change
  /// written into the manifest. A heal refreshes the record to them (`RecordRefresh.accepted`).
  public var accepted: Set<ResourceAddress> {
    let planned = Set(pending.resourceChanges.map(\.address))
    return Set(drift.map(\.address)).filter { own.contains($0) && !planned.contains($0) }
  }

  /// Whether the last apply left what the manifest gives: there is a record, and whatever is
  /// pending only undoes drift (a staged rollout's "has the new revision", docs/fleet.md) — a
  /// change of its own to a resource that also drifted is not applied yet.
  public var holdsManifest: Bool { hasRecord && unapplied.isEmpty }
}

extension Watch {
  /// What changed on the watch since the last apply, and when tsapply last wrote to it, without
  /// a manifest: drift compares the watch with what tsapply last left, and needs the manifest
  /// only for what is pending. `nil` when there is no record. What `status --fleet` shows for a
  /// watch whose manifest has errors, so a wearer's change is not hidden behind them.
  /// Read-only: no lock, nothing written.
  /// - Throws: `EngineError.device` when reading fails.
  public func driftSinceRecord() async throws(EngineError) -> (drift: [ResourceChange], lastWrite: LastWrite)? {
    let (state, record) = try await readWithRecord()
    guard let last = usable(try? record.get()) else { return nil }
    return (Drift.changes(since: last, current: state, capabilities: capabilities), Self.lastWrite(of: last, home: home))
  }

  /// Reads the watch and its last-applied record as of one moment: the record is read before
  /// and after the watch, and both again (up to three times) when they differ — an apply that
  /// wrote and recorded while the watch was read (its record is written before each write,
  /// `LastApplied.unconfirmed`). Compared across that moment, the watch before the apply and
  /// the record after it showed tsapply's own write undone, as a change made on the watch
  /// (fresh-eyes finding: a person's apply beside a monitor raised "SOS at risk").
  /// - Throws: `EngineError.device` when reading fails.
  private func readWithRecord() async throws(EngineError) -> (state: DeviceState, record: Result<LastApplied?, LastAppliedError>) {
    let load = { () -> Result<LastApplied?, LastAppliedError> in
      Result { () throws(LastAppliedError) in try LastApplied.load(at: self.home.lastAppliedPath, device: self.identity) }
    }
    var before = load()
    for attempt in 1...3 {
      let state = try await readState()
      let after = load()
      if after == before || attempt == 3 { return (state, after) }
      before = after
    }
    return (try await readState(), load())
  }

  /// Compares the watch with the last-applied record (drift) and with `document` (pending).
  /// Read-only: no lock, nothing written.
  /// - Throws: `EngineError.invalid` when the manifest does not fit the watch; `.device`.
  public func drift(_ document: ManifestDocument) async throws(EngineError) -> DriftReport {
    // The record as of the moment the watch was read. Asked for on purpose, one that exists but
    // cannot be used is an error (plan ignores it), reported after the manifest's own problems.
    let (state, record) = try await readWithRecord()
    let last = usable(try? record.get())
    let planned = try plan(document, state: state, last: last)
    if case .failure(let error) = record { throw .lastApplied(error) }
    // Recorded when the watch was of another platform (reset since with another profile): not
    // "no record" either (fresh-eyes finding: `drift` exited 0 saying drift cannot be told).
    if case .success(let other?) = record, last == nil {
      throw .lastApplied(LastAppliedError(path: home.lastAppliedPath,
                                          reason: "it was recorded while the watch was of platform \(other.profile), and it is of \(capabilities.profile) now "
                                            + "(reset or set up again since?)"))
    }
    var report = DriftReport(hasRecord: last != nil, drift: planned.plan.resourceDrift, pending: planned.plan, state: state)
    report.lastWrite = last.map { Self.lastWrite(of: $0, home: home) }
    if let last, !report.drift.isEmpty {
      report.own = own(document, on: Drift.left(by: last, current: state, capabilities: capabilities))
    }
    return report
  }

  /// The resources `document` itself changes on `left` (what an apply left on the watch): what
  /// it asks otherwise than that state — its own changes, not undoing drift (`DriftReport.own`).
  /// A drifted resource outside it is one the manifest does not set as the wearer left it (a
  /// field or short name it does not give): recording the watch as it is does not make the
  /// manifest hold that change. Pure: nothing is read or written.
  public func own(_ document: ManifestDocument, on left: DeviceState) -> Set<ResourceAddress> {
    Set(Planner.plan(document.manifest, state: left, capabilities: capabilities).plan?.resourceChanges.map(\.address) ?? [])
  }
}

extension Watch {
  /// `tsapply drift --adopt`: the manifest text `bytes` (named `file`) with the drift of
  /// `report` written into it (`DriftAdoption`), checked by planning it against the state the
  /// report read. Nothing is written.
  /// - Throws: `DriftAdoption.Refusal` when the edited text would not load or would change what
  ///   the manifest asks of resources that did not drift.
  /// `merge` gives the manifest the watch gets from a text of the file (in a fleet: merged with
  /// its layers, `FleetMember.merged(own:named:)`); by default the text alone.
  public func adoption(of report: DriftReport, manifest bytes: [UInt8], file: String,
                       merge: (([UInt8]) -> Manifest?)? = nil) throws(DriftAdoption.Refusal) -> DriftAdoption.Outcome {
    let problem = { (text: [UInt8]) -> String? in
      // Its field and words, not its line: the line is in the edited text, not in the file.
      ManifestLoader.load(bytes: text, file: file).diagnostics.first { $0.severity == .error }
        .map { $0.field.isEmpty ? $0.message : "`\($0.field)` \($0.message)" }
    }
    var outcome = try DriftAdoption.adopt(report.drift, into: bytes, file: file, capabilities: capabilities, pending: report.pending,
                                          problem: problem) { text in
      guard let manifest = merge.map({ $0(text) }) ?? ManifestLoader.load(bytes: text, file: file).manifest else { return nil }
      return Planner.plan(manifest, state: report.state, capabilities: capabilities).plan
    }
    // What the manifest does not state at all stays drift for the manifests that do, as an
    // apply of it leaves it (`keptInRecord`): not taken into the record.
    if let manifest = merge.map({ $0(bytes) }) ?? ManifestLoader.load(bytes: bytes, file: file).manifest {
      outcome.unstated = outcome.unmanaged.filter { !manifest.states($0) }
    }
    return outcome
  }

  /// Once the manifest states them, records the adopted resources of `report` as the watch
  /// holds them (`LastApplied.adopting`), so drift no longer reports them. Holds the watch's lock
  /// (`command` recorded as its holder) and first checks, under it, that the record still gives
  /// the drift the report found: an apply in between makes it refuse.
  /// - Throws: `EngineError.locked`; `.records` when the record changed meanwhile or cannot be written.
  public func recordAdopted(_ report: DriftReport, addresses: Set<ResourceAddress>, command: String) async throws(EngineError) {
    let held = try await hold(ApplyOptions(approval: .automatic(allowDestroy: false), command: command))
    var failure: EngineError?
    // The same changes, whatever words name them (the report's are the manifest's: `Manifest.naming`).
    let values = { (changes: [ResourceChange]) in changes.map { [$0.before, $0.after] } }
    if let record = record(), values(Drift.changes(since: record, current: report.state, capabilities: capabilities)) == values(report.drift) {
      do { try record.adopting(report.drift, addresses: addresses).write(to: home.lastAppliedPath) } catch { failure = .records(error) }
    } else {
      failure = .records(SecureFileError(path: home.lastAppliedPath,
        reason: "the last-applied record changed since the watch was read (another apply?); run 'tsapply drift --adopt' again"))
    }
    await held.release()
    if let failure { throw failure }
  }
}

/// The contact changes a caller's own listener hears on a watch, handed to the applies it makes
/// (`ApplyOptions.announcements`): a monitor or an agent listens on the watch all along, and
/// the platform's listeners are one per kind, so an apply it makes cannot register its own.
/// Every event the listener hears goes to `heard(_:)`; only those that come while an apply
/// writes (between its `begin` and `end`), of the lists it writes, are kept, and the apply
/// reports them (`EngineEvent.changedOnWatchDuringApply`) as its own listener's.
public final class WatchAnnouncements: @unchecked Sendable {
  private let lock = NSLock()
  private var collecting: (kinds: Set<DeviceEvent.Kind>, heard: Watch.Heard)?

  public init() {}

  /// Takes what the caller's listener reported (any report: only a contact list's
  /// announcement during an apply is kept).
  public func heard(_ report: ListenerReport) {
    guard case .event(let event) = report, let contacts = event.contacts else { return }
    lock.withLock {
      guard let collecting, collecting.kinds.contains(event.kind) else { return }
      collecting.heard.add(event.kind, contacts)
    }
  }

  /// Starts keeping announcements of `kinds` (the lists an apply writes); `nil` when there are none.
  func begin(kinds: Set<DeviceEvent.Kind>) -> Watch.Heard? {
    guard !kinds.isEmpty else { return nil }
    let heard = Watch.Heard()
    lock.withLock { collecting = (kinds, heard) }
    return heard
  }

  /// Stops keeping them (the apply ended).
  func end() { lock.withLock { collecting = nil } }
}
