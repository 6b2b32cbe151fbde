import Foundation
import TSApply
import TSDevice
import TSEngine
import TSManifest
import TSModel
import TSPlan

// Healing (`--reconcile`): what the monitor does about a drift, and the drift event that says it
// (docs/monitor.md "Drift and healing"). The apply, its safety gate and what counts as transient are the
// engine's (`Reconcile`); this part only decides when to try and how to word the outcome.
extension Monitor {
  /// What healing did about a drift.
  enum HealOutcome {
    /// Not asked to heal.
    case off
    /// Already tried for this drift and manifest; nothing new to do.
    case unchanged
    /// Applied and verified; `heldBack` when the manifest's own changes were held back;
    /// `notHealed` the drifted resources the apply did not change back (`Reconcile.notUndone`):
    /// what changed is not set by the manifest, so applying its pending change left it as is,
    /// or undoing it is unsafe (`ApplyReport.heldBackUnsafe`, the heal's safe part written);
    /// `pendingUnsafe`: of the findings held back, those the manifest's own pending change makes.
    case applied(ApplyReport, heldBack: HeldBack?, notHealed: [ResourceChange], pendingUnsafe: [SafetyFinding])
    /// The engine's safety gate refused it: `findings` of the heal's plan, and which of them
    /// the manifest's own pending change makes (planned against what the last apply left),
    /// not undoing what changed on the watch.
    case unsafe([SafetyFinding], pending: [SafetyFinding])
    /// The manifest does not manage what drifted: nothing to apply.
    case nothing
    /// The hourly budget is spent: the watch keeps drifting back.
    case rateLimited
    /// The apply failed for a reason that can pass (`Reconcile.Outcome.retrying`, or
    /// `.locked`: another tsapply holds the watch's lock), as an agent's `retrying` status:
    /// tried again at the next check, due at `next` (`nil` with `--once`: the next run), within
    /// the budget; `attempt` counts the attempts in a row for this drift and manifest that
    /// failed so (1 after the first). `written`: every write reached the watch and only the
    /// read verifying them failed (`ApplyFailure.readBackFailed`), so the heal is not known to
    /// have failed: the next check reads the watch and says whether it holds.
    case retrying(String, attempt: Int, next: Date?, written: Bool = false)
    /// The apply failed for good (`Reconcile.Outcome.failed`, `.invalid`): the same apply gets
    /// the same answer, so it is tried again only when the drift or the manifest changes.
    case failed(String)

    var retryable: Bool {
      if case .retrying = self { true } else { false }
    }

    /// For `retrying`, after `healing` / `healing the drift`: `failed for a reason that can
    /// pass (attempt 2): …; retrying at the next check, by 2026-12-01T09:36:02.118Z`; with
    /// `--once` (no next check in this process, no count of the runs before): `failed for a
    /// reason that can pass: …; the next run of 'tsapply monitor --once' tries again`. When every
    /// write was made (`written`): `wrote its changes, not verified: …; the next check reads the
    /// watch again, by …` (with `--once`: `the next run of 'tsapply monitor --once' reads it again`).
    var retryText: String {
      guard case .retrying(let reason, let attempt, let next, let written) = self else { return "" }
      if written {
        guard let next else { return "wrote its changes, not verified: \(reason); the next run of 'tsapply monitor --once' reads the watch again" }
        return "wrote its changes, not verified (attempt \(attempt)): \(reason); the next check reads the watch again, by \(MonitorEvent.timestamp(next))"
      }
      guard let next else { return "failed for a reason that can pass: \(reason); the next run of 'tsapply monitor --once' tries again" }
      return "failed for a reason that can pass (attempt \(attempt)): \(reason); retrying at the next check, by \(MonitorEvent.timestamp(next))"
    }

    /// For `retrying` while the monitor runs, the fields an agent's `retrying` status has:
    /// `attempt` and `next_retry` (ISO 8601, when the next check is due; neither with `--once`);
    /// and `written: true` when every write was made and only verifying them failed.
    var retryFields: [String: JSONValue] {
      guard case .retrying(_, let attempt, let next, let written) = self else { return [:] }
      var fields: [String: JSONValue] = written ? ["written": .bool(true)] : [:]
      if let next { fields.merge(["attempt": .integer(attempt), "next_retry": .string(MonitorEvent.timestamp(next))]) { $1 } }
      return fields
    }

    /// The `reconcile` field of a drift event.
    var word: String {
      switch self {
      case .off: "off"
      case .unchanged: "unchanged"
      case .applied: "applied"
      case .unsafe: "unsafe"
      case .nothing: "nothing"
      case .rateLimited: "rate_limited"
      case .retrying: "retrying"
      case .failed: "failed"
      }
    }
  }

  /// The manifest's own changes a heal held back (`MonitorSettings.holdBack`): their
  /// addresses and why.
  struct HeldBack {
    var addresses: [ResourceAddress]
    var reason: String

    /// `; held back the manifest's change to reminder.drinking: the rollout of fleet.yaml is paused; …`
    var text: String {
      "; held back the manifest's change to \(addresses.map(\.rawValue).joined(separator: ", ")) (not released to this watch): \(reason)"
    }
  }

  /// Records the drift `document` accepts (`DriftReport.accepted`: the wearer's change written
  /// into the manifest) as what the last apply left, writing nothing to the watch
  /// (`Watch.refreshRecord`), when nothing else is pending. Returns what is still drift; `nil`
  /// when nothing was refreshed (the watch is locked or unreadable, or changed since: the heal
  /// that follows does the same, or more).
  func accept(_ watch: Watch, _ document: ManifestDocument, report: DriftReport) async -> [ResourceChange]? {
    guard settings.reconcile, report.pending.isEmpty, !report.accepted.isEmpty else { return nil }
    var options = ApplyOptions(approval: .automatic(allowDestroy: false), lockTimeout: .zero, command: settings.commandLine,
                               stop: MonitorStop(monitor: self)) { _ in }
    options.refresh = .accepted
    return try? await watch.refreshRecord(document, options: options)
  }

  /// Heals `report`'s drift by applying `document` (the `attempt`th try in a row for this drift
  /// and manifest), within the hourly budget.
  func heal(_ watch: Watch, _ document: ManifestDocument, report: DriftReport, attempt: Int,
                    _ tracking: inout Tracking) async -> HealOutcome {
    let time = now()
    // The heals made before this run (a cron's `--once`, a monitor before a restart), read once.
    if !tracking.budgetCounted {
      tracking.budgetCounted = true
      tracking.budget.count((try? watch.history.read().entries) ?? [], now: time)
    }
    // A plan with nothing to write costs no heal: it is `nothing`, whatever the budget.
    guard tracking.budget.allows(at: time) || report.pending.isEmpty else {
      let used = tracking.budget.used(at: time), failed = tracking.budget.failed(at: time)
      let what = failed == used ? "healing keeps failing" : "the watch keeps drifting back"
      emit(.error, watch: watch.identity,
           message: "\(what): \(tracking.budget.spentWords(at: time)) (--max-applies-per-hour \(settings.maxAppliesPerHour)); leaving it alone until a check finds no drift or \(manifestName) changes",
           fields: ["reason": .string("keeps_drifting_back"), "applies_last_hour": .integer(used), "failed_last_hour": .integer(failed)])
      return .rateLimited
    }
    let during = Locked<String?>(nil)
    let show = settings.showSensitive, device = watch.identity
    var options = ApplyOptions(approval: .automatic(allowDestroy: settings.allowDestroy), lockTimeout: .zero,
                               command: settings.commandLine, stop: MonitorStop(monitor: self)) { event in
      guard case .changedOnWatchDuringApply(let lists, let backupPath, let kept) = event else { return }
      during.set(Reconcile.changedDuringApply(lists, backupPath: backupPath, kept: kept, device: device) {
        show ? $0 : PhoneRedaction.redactPhoneLike($0)
      })
    }
    options.refresh = .accepted
    options.announcements = announcements
    // A heal part of which is unsafe heals the rest (SOS back on beside contacts the wearer
    // added), and says what it left (fresh-eyes finding: the whole heal refused, SOS left off).
    options.holdsBackUnsafe = true
    defer { tracking.changedDuringHeal = during.value }
    // The manifest's own changes a staged rollout has not released to this watch stay out of the heal.
    var heldBack: HeldBack?
    if let reason = settings.holdBack?() {
      let addresses = watch.unapplied(document, current: report.state)
      if !addresses.isEmpty {
        options.holdsBackUnapplied = true
        heldBack = HeldBack(addresses: addresses, reason: reason)
      }
    }
    // What the last apply left, before the heal's apply records the watch anew: what tells undone drift from kept.
    let recorded = watch.lastApplied()
    let outcome = await Reconcile.apply(document, to: watch, allowDestroy: settings.allowDestroy, options: options)
    switch outcome {
    case .noChanges: return .nothing
    case .applied(let applied):
      tracking.budget.record(at: time)
      let notHealed = recorded.map { Reconcile.notUndone(report.drift, by: applied, recorded: $0, manifest: document.manifest,
                                                                    capabilities: watch.capabilities) } ?? report.drift
      let pendingUnsafe = applied.heldBackUnsafe.isEmpty ? []
        : Reconcile.pendingFindings(applied.heldBackUnsafe, document: document, last: recorded, capabilities: watch.capabilities)
      return .applied(applied, heldBack: heldBack, notHealed: notHealed, pendingUnsafe: pendingUnsafe)
    case .refusedUnsafe(_, let findings, let pending): return .unsafe(findings, pending: pending)
    case .locked(let failure): return .retrying(failure.description, attempt: attempt, next: nextPoll.value)
    case .invalid, .retrying, .failed:
      // A final failure is counted like an apply, so a heal that keeps failing is not tried more
      // often either. One that can pass (a dropped link, a timeout) is not: it is tried once per
      // check (`Tracking.retryWaiting`), which bounds it, and the budget is what stops the
      // monitor fighting a wearer — a flaky link spent it and left SOS off for an hour.
      if case .retrying = outcome {} else { tracking.budget.record(at: time, failed: true) }
      // A write over the drift that reached the watch before the failure (a lost answer read
      // back as applied is among them) healed that part: said when the drift ends.
      switch outcome.error {
      case .apply(.partial(let partial, _))?:
        let landed = Set(partial.applied)
        tracking.failedHealWrote = report.drift.map(\.address).filter(landed.contains)
        // A write whose answer was lost and could not be read back may have landed: not said
        // written, but when the drift then ends, the heal ended it (fresh-eyes finding: `healed:
        // false`, "holds what the last apply left again", for SOS its write had restored).
        var mayHaveLanded = landed
        if case .outcomeUnknown(let error, .unreadable) = partial.cause, error.mayHaveTakenEffect { mayHaveLanded.formUnion(partial.failed) }
        tracking.failedHealWroteOverDrift = report.drift.contains { mayHaveLanded.contains($0.address) }
      case .apply(.readBackFailed)?:
        // Every write reached the watch; only the read that verifies them failed.
        tracking.failedHealWroteOverDrift = !report.drift.isEmpty
      default:
        break
      }
      let reason = mask(outcome.error?.description ?? outcome.word, sparing: outcome.error?.backupPath) + (heldBack?.text ?? "")
        + (during.value.map { "; " + $0 } ?? "")
      if case .retrying = outcome {
        let written: Bool
        if case .apply(.readBackFailed)? = outcome.error { written = true } else { written = false }
        return .retrying(reason, attempt: attempt, next: nextPoll.value, written: written)
      }
      return .failed(reason)
    }
  }

  /// The drift event for `report`, whose drift `changes` renders (`JSONPlanRenderer.changes`,
  /// unmasked); `mask` hides the numbers of its addresses and findings, and the changes are
  /// masked, unless `--show-sensitive` was given.
  func driftEvent(_ report: DriftReport, changes: JSONValue, outcome: HealOutcome, watch: Watch,
                          mask: PhoneRedaction.Mask, at time: Date) -> MonitorEvent {
    let addresses = report.drift.map { mask.text($0.address.rawValue) }
    var fields: [String: JSONValue] = [
      "changes": settings.showSensitive ? changes : JSONPlanRenderer.masked(changes, of: report.drift),
      "addresses": .array(addresses.map(JSONValue.string)),
      "sos_at_risk": .bool(report.drift.putSOSAtRisk),
      "reconcile": .string(outcome.word),
      "pending": .integer(report.unapplied.count),
    ]
    let what = Reconcile.driftSummary(report.drift, address: mask.address)
    let result: String
    switch outcome {
    case .off: result = "not healed (--reconcile not given)"
    case .unchanged: result = "healing already tried"
    case .applied(let applied, let heldBack, let notHealed, let pendingUnsafe):
      let words = HealWords(drift: report.drift, own: report.own, applied: applied, notHealed: notHealed, pendingUnsafe: pendingUnsafe,
                            manifest: manifestName, planCommand: settings.planCommand,
                            mask: mask.adding(applied.plan))
      if !notHealed.isEmpty { fields["not_healed"] = .array(words.notHealed.map(JSONValue.string)) }
      if !applied.heldBackUnsafe.isEmpty {
        fields["held_back_unsafe"] = JSONPlanRenderer.findings(applied.heldBackUnsafe, mask: mask)
        fields["pending_findings"] = JSONPlanRenderer.findings(pendingUnsafe, mask: mask)
      }
      result = words.drift + (heldBack.map { mask.message($0.text) } ?? "")
      if let heldBack {
        fields["held_back"] = .array(heldBack.addresses.map { .string(mask.text($0.rawValue)) })
        fields["held_back_reason"] = .string(heldBack.reason)
      }
    case .unsafe(let findings, let pending):
      fields["findings"] = JSONPlanRenderer.findings(findings, mask: mask)
      fields["pending_findings"] = JSONPlanRenderer.findings(pending, mask: mask)
      // `pending` carries the manifest's own counts; a finding of another kind comes only from undoing.
      let undoing = findings.filter { finding in !pending.contains { $0.kind == finding.kind } }
      let text = { (findings: [SafetyFinding]) in mask.text(findings.map(\.description).joined(separator: "; ")) }
      var parts: [String] = []
      if !undoing.isEmpty { parts.append("undoing it is unsafe (\(text(undoing)))") }
      if !pending.isEmpty {
        parts.append("a heal would also apply \(manifestName)'s own pending change, which is unsafe (\(text(pending))); "
                     + "review it with '\(settings.planCommand)' and apply it yourself")
      }
      result = "not healed: " + parts.joined(separator: "; and ") + "; left alone (--allow-destroy would allow it)"
    case .nothing:
      result = "the watch still matches \(manifestName) (it does not manage what changed, or accepts it, "
        + "like a short name it does not give), so there is nothing to heal"
    case .rateLimited: result = "not healed: the watch keeps drifting back"
    case .retrying(let reason, _, _, _):
      fields["error"] = .string(reason)
      fields.merge(outcome.retryFields) { $1 }
      result = "healing \(outcome.retryText)"
    case .failed(let reason):
      fields["error"] = .string(reason)
      result = "healing failed: \(reason); not tried again until the drift or \(manifestName) changes"
    }
    return MonitorEvent(time: time, watch: watch.identity, kind: .drift,
                        message: "\(what) changed on the watch since the last apply; \(result)", fields: fields)
  }

  /// Keeps the drift about to be healed on disk (`HealIntent`) as the event a monitor killed
  /// during the heal reports when it starts again: `reconcile: interrupted`. A file that cannot
  /// be written is an `error` event; the heal goes on.
  func keepHealIntent(_ report: DriftReport, changes: JSONValue, watch: Watch, mask: PhoneRedaction.Mask, at time: Date) {
    var event = driftEvent(report, changes: changes, outcome: .off, watch: watch, mask: mask, at: time)
    event.fields["reconcile"] = .string("interrupted")
    event.message = "\(Reconcile.driftSummary(report.drift, address: mask.address)) changed on the watch since the last apply; "
      + "the monitor stopped while healing it (if its apply had begun writing, 'tsapply history' lists it as unfinished), so whether the heal reached the watch is read at the next check"
    do throws(SecureFileError) { try HealIntent.write(event, to: watch.home.monitorHealPath) } catch {
      emit(.error, watch: watch.identity, message: "cannot keep the drift being healed in \(watch.home.monitorHealPath): \(error); a monitor stopped during this heal would not report it",
           fields: ["reason": .string("heal_intent")])
    }
  }
}
