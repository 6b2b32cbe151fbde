import Foundation
import TSApply
import TSDevice
import TSEngine
import TSManifest
import TSModel
import TSPlan

// Checking: one read of the watch, what it found (drift, its resolution, a manifest problem, the
// watch offline) and the events that say it (docs/monitor.md "Drift and healing"). Healing a
// drift found here is `Monitor+Heal.swift`.
extension Monitor {
  // MARK: Checks

  /// What one check found.
  enum CheckResult {
    case clean
    /// Drift reported; `healFailed`: why the heal asked for (`--reconcile`) failed, in a
    /// sentence that says whether the next check tries again.
    case drifted(healFailed: String?)
    case offline(DeviceError)
    case failed(String)
  }

  /// What the loop remembers between checks.
  struct Tracking {
    /// The `online` event of a connection not yet confirmed by a read of the watch: told by the
    /// check whose read succeeds, before its own events. A bridge answers for a watch out of its
    /// range, so opening it is no proof (said at every reconnect before, a watch out of range
    /// went offline and online every second, the backoff reset each time, and its `offline`
    /// alert never came: fresh-eyes finding).
    var unconfirmedOnline: (listening: [Listener: String], offlineFor: TimeInterval?)?
    /// Whether the last check that read the watch found SOS at risk (its emergency list drifted):
    /// kept with an outage (`HandledEvents.Outage.sosAtRisk`), what is known while it cannot be read.
    var sosAtRisk = false
    /// The drift reported last: its signature (digest of its changes), event id and the
    /// addresses it named (as shown).
    var reported: (signature: String, id: String, addresses: [JSONValue])?
    /// The id of the drift `monitor-heal.json` keeps as reported and open (`Monitor.keepOpenDrift`);
    /// `nil` when it keeps none.
    var keptOpen: String?
    /// How many entries the watch's history had when the drift reported last was found — for a
    /// drift that superseded one still open, when that one was (`ApplyHistory.count`): an apply
    /// after them that is not this monitor's wrote over it (`Monitor.overwrite`); `nil` when not
    /// known (a drift taken up after a restart).
    var reportedHistory: Int?
    /// What healing did about the drift reported last (`HealOutcome.word`), as its event said.
    var reportedOutcome: String?
    /// The last heal attempt: for which drift and manifest, whether to try again (it failed
    /// for a reason that can pass), and how many attempts in a row failed so.
    var lastHeal: (key: String, retry: Bool, attempts: Int)?
    /// The last heal's `retrying` outcome while its retry is not due yet (`HealOutcome.retrying`'s
    /// `next`, the next periodic check): a check before then (the watch reconnected, or was
    /// changed in a way that leaves the drift as it was) reports it, and does not try again.
    var retryWaiting: HealOutcome?
    /// Whether a heal undid the drift since it was reported (so its end is the heal's doing).
    var healed = false
    /// What the drift reported last (`reported`) was measured against — the record then — and
    /// its changes; `nil` when not known (a drift replayed after a kill). When it ends with the
    /// watch still holding what those changes left, in each resource they name, the record took
    /// the change: accepted, not undone. An apply that wrote over it while changing something
    /// else in the same resource (a contact put back beside a rename) left the watch differing
    /// from the old record there too, but not as the drift did: not accepted.
    var reportedAgainst: (record: DeviceState, drift: [ResourceChange])?
    /// Whether the record was refreshed to drift the manifest accepts (`Monitor.accept`) since
    /// the drift was reported (so its end is the manifest's doing).
    var accepted = false
    /// The drifted resources (masked addresses) a heal's apply left as the watch holds them
    /// (`HealOutcome.applied`'s `notHealed`): its end is that apply recording them, not a heal.
    var notHealed: [String] = []
    /// Healing gave up (the watch keeps drifting back) while the manifest had this digest.
    var suspendedFor: String?
    /// The last heal failed after a write over the drift reached the watch (`heal`): when the
    /// drift ends, the heal ended it (`resolved`, `healed: true`), not the wearer.
    var failedHealWroteOverDrift = false
    /// Of the drift the last heal was for, what it wrote back before it failed part-way: said in
    /// that drift event (`written_before_failing`), so a run with no next check (`--once`) does
    /// not leave them listed as not healed (fresh-eyes finding).
    var failedHealWrote: [ResourceAddress] = []
    /// The last heal's words for a contact change the watch announced while it wrote
    /// (`Reconcile.changedDuringApply`), said with that heal's outcome.
    var changedDuringHeal: String?
    var budget: ApplyBudget
    /// Whether `budget` counts the heals the watch's history lists from before this run
    /// (`ApplyBudget.count`), done at the first heal.
    var budgetCounted = false
    /// The last manifest problem reported, so each is reported once.
    var manifestProblem: String?
    var noRecordNoted = false
    /// Whether this monitor forwards the watch's SOS: the long-running one (`run()`) listens
    /// for it, a single check (`checkOnce()`, `--once`) listens to nothing, so its notes must
    /// not say SOS is still forwarded.
    var forwardsSOS = false
  }

  /// Reads the manifest and the watch, reports drift and its end, heals when asked.
  func check(_ watch: Watch, _ tracking: inout Tracking) async -> CheckResult {
    let document: ManifestDocument
    if let provider = settings.manifestProvider {
      switch provider() {
      case .success(let supplied): document = supplied
      // A watch the fleet file no longer names: no alert; its monitor is being stopped.
      case .failure(let problem) where problem.notManaged: return .failed(problem.errors.first?.message ?? "no longer managed")
      case .failure(let problem): return await manifestProblem(problem.errors, watch: watch, &tracking)
      }
    } else {
      let loaded = ManifestLoader.load(path: settings.manifestPath, displayName: settings.manifestName)
      guard let manifest = loaded.manifest, let bytes = loaded.source else {
        return await manifestProblem(loaded.diagnostics.filter { $0.severity == .error }, source: loaded.source, watch: watch, &tracking)
      }
      document = ManifestDocument(manifest: manifest, warnings: loaded.diagnostics.filter { $0.severity == .warning },
                                  bytes: bytes, path: settings.manifestPath)
    }
    if settings.manifestProvider != nil { shownManifest.set(document.manifest.file) }
    let bytes = document.bytes
    var report: DriftReport
    do {
      report = try await watch.drift(document)
    } catch {
      switch error {
      case .device(let deviceError): return .offline(deviceError)
      case .invalid(let input):
        return await manifestProblem(input.diagnostics.filter { $0.severity == .error }, source: input.source, watch: watch, &tracking)
      default: return .failed(mask(error.description))
      }
    }
    // The watch answered: a connection waiting for that is `online` now, before what this check finds.
    confirmOnline(watch, &tracking)
    // The manifest usable again: a drift reported while it was not (`reconcile: invalid`) is
    // reported anew with what healing does about it now.
    if tracking.manifestProblem != nil, let reported = tracking.reported { tracking.reported = ("", reported.id, reported.addresses) }
    tracking.manifestProblem = nil
    // The wearer's change the manifest now holds is recorded, and is no longer drift.
    if let left = await accept(watch, document, report: report) {
      report.drift = left
      tracking.accepted = true
    }
    // Told before the events of a check that finds drift, and after the `resolved` of one that
    // finds it over: that event, in the log, is what closes the drift alert (`Alerts`).
    let check = MonitorCheck(time: now(), hasRecord: report.hasRecord, drift: report.drift.count,
                             pending: report.unapplied.count, holdsManifest: report.holdsManifest,
                             sosAtRisk: report.drift.putSOSAtRisk)
    tracking.sosAtRisk = check.sosAtRisk && check.drift > 0
    if !report.hasRecord || !report.drift.isEmpty { checked?(check) }
    guard report.hasRecord else {
      if !tracking.noRecordNoted {
        tracking.noRecordNoted = true
        // "SOS is still forwarded" only by a monitor that forwards it (not `--once`), where the
        // watch reports SOS at all (not on Npk).
        let forwarded = tracking.forwardsSOS && !(locked { refusals.contains(Listener.sos.rawValue) })
        notice("No record of an apply to \(watch.identity): drift cannot be told until tsapply applies a manifest to it"
          + (forwarded ? " (SOS is still forwarded)." : "."))
      }
      return .clean
    }
    tracking.noRecordNoted = false
    guard !report.drift.isEmpty else {
      if let reported = tracking.reported {
        var fields: [String: JSONValue] = ["drift_id": .string(reported.id), "healed": .bool(tracking.healed)]
        var message = tracking.healed ? "the drift is healed: the watch holds what the last apply left" : "the watch holds what the last apply left again"
        // Not healed, and the watch still holds what changed: the record took it (drift --adopt,
        // or an apply that recorded the watch as it is) — accepted, not undone on the watch
        // ("again" said so after an adoption: fresh-eyes finding).
        let stillHeld = !tracking.healed && tracking.reportedAgainst.map { reported in
          let now = document.manifest.naming(Drift.changes(since: reported.record, current: report.state, capabilities: watch.capabilities),
                                             capabilities: watch.capabilities)
          let held = Dictionary(now.map { ($0.address, $0.after) }) { first, _ in first }
          return !reported.drift.isEmpty && Set(now.map(\.address)) == Set(reported.drift.map(\.address))
            && reported.drift.allSatisfy { held[$0.address] == $0.after }
        } == true
        // Of a drift the record took, what the manifest does not set as the wearer left it (its
        // own changes on what the drift was measured against do not touch it: a short name it
        // derives, a field it leaves out): taken as the watch holds it, not adopted into the
        // manifest, which an apply leaves so (fresh-eyes fe94 D6: "adopted …, the change is
        // accepted" for short names nobody adopted).
        var unset: [ResourceChange] = []
        if stillHeld, tracking.notHealed.isEmpty, let against = tracking.reportedAgainst {
          let own = watch.own(document, on: against.record)
          unset = against.drift.filter { !own.contains($0.address) }
        }
        if tracking.accepted {
          fields["accepted"] = .bool(true)
          message = "\(manifestName) now holds what changed on the watch: the change is accepted, and recorded as what the last apply left"
        } else if !unset.isEmpty {
          let shown = PhoneRedaction.Mask(redact: !settings.showSensitive, manifest: bytes, changes: unset)
          let addresses = unset.map { shown.text($0.address.rawValue) }
          fields["not_healed"] = .array(addresses.map(JSONValue.string))
          message = "the drift in \(addresses.joined(separator: ", ")) is not undone: an apply (or 'tsapply drift --adopt') recorded it "
            + "as the watch holds it (\(manifestName) does not set what changed)"
        } else if stillHeld && tracking.notHealed.isEmpty {
          fields["accepted"] = .bool(true)
          message = "the watch still holds what changed, now recorded as what the last apply left (adopted into \(manifestName) "
            + "with 'tsapply drift --adopt', or taken by an apply): the change is accepted"
        } else if !tracking.notHealed.isEmpty {
          fields["not_healed"] = .array(tracking.notHealed.map(JSONValue.string))
          message = "the drift in \(tracking.notHealed.joined(separator: ", ")) is not healed: the heal's apply recorded it as the watch holds it "
            + "(\(manifestName) does not set what changed)"
        } else if !tracking.healed, let over = overwrite(watch, after: tracking.reportedHistory) {
          // Not the wearer undoing it: someone's apply wrote over it (fresh-eyes fe91 #4).
          fields["overwritten_by"] = .object(over.fields)
          message += ": " + over.words
        }
        emit(.resolved, watch: watch.identity, message: message, fields: fields)
      }
      checked?(check)
      tracking.reported = nil
      tracking.reportedAgainst = nil
      tracking.reportedHistory = nil
      tracking.healed = false
      tracking.accepted = false
      tracking.notHealed = []
      tracking.lastHeal = nil
      tracking.retryWaiting = nil
      tracking.suspendedFor = nil
      return .clean
    }
    var changes = JSONPlanRenderer.changes(report.drift, redact: false)
    let signature = SHA256Digest.hex(of: Array(MonitorEvent.compact(changes).utf8))
    let manifestDigest = SHA256Digest.hex(of: bytes)
    let isNew = signature != tracking.reported?.signature
    if let suspended = tracking.suspendedFor, suspended != manifestDigest { tracking.suspendedFor = nil }
    // When it was found: the drift event's time, however long a heal takes.
    let detected = now()
    // The watch's history then, for a drift new: an apply after it wrote over the drift (`overwrite`).
    // One that supersedes a drift still open keeps that one's count: the apply whose record of
    // its coming write made this check read the watch before the write landed (what is left of
    // the drift against that write, reported anew) wrote over the drift all the same, and its
    // history entry came before this read (fresh-eyes fe94 D6: "holds what the last apply left
    // again", naming no apply, for an explicit short name a person's apply wrote back).
    let historyCount = isNew ? (tracking.reported.flatMap { _ in tracking.reportedHistory } ?? watch.history.count) : tracking.reportedHistory
    var shown = PhoneRedaction.Mask(redact: !settings.showSensitive, manifest: bytes, changes: report.drift)
    var outcome = HealOutcome.off
    if settings.reconcile {
      let key = signature + manifestDigest
      // Spent, the budget holds back heals that would write; a drift the manifest gives no
      // change for is still nothing to heal (fresh-eyes finding: "keeps drifting back", failed,
      // for a short name the manifest does not give).
      if tracking.suspendedFor != nil, !report.pending.isEmpty {
        outcome = .rateLimited
      } else if key == tracking.lastHeal?.key, let waiting = tracking.retryWaiting, case .retrying(_, _, let due?, _) = waiting, now() < due {
        // Retried at the next periodic check, not at every reconnect: a flaky link that drops at
        // each attempt retried it as fast as the monitor reconnects.
        outcome = waiting
      } else if key != tracking.lastHeal?.key || tracking.lastHeal?.retry == true {
        let attempt = tracking.lastHeal.map { $0.key == key && $0.retry ? $0.attempts + 1 : 1 } ?? 1
        if isNew { keepHealIntent(report, changes: changes, watch: watch, mask: shown, at: detected) }
        outcome = await heal(watch, document, report: report, attempt: attempt, &tracking)
        tracking.lastHeal = (key, outcome.retryable, outcome.retryable ? attempt : 0)
        tracking.retryWaiting = outcome.retryable ? outcome : nil
        if case .rateLimited = outcome { tracking.suspendedFor = manifestDigest }
      } else {
        outcome = .unchanged
      }
    }
    // What the heal's own read found changed beside what this check read — the wearer changed
    // more meanwhile, in another resource or the same one — is reported with it: nothing a heal
    // undoes goes unreported (fresh-eyes findings: a contact removed 0.2 s after the emergency
    // list was healed back unreported; a contact added to a list whose removal was being
    // healed, removed by the heal, named by no event).
    var foundByHeal = false
    if case .applied(let applied, _, _, _) = outcome {
      let extra = applied.plan.resourceDrift.filter { change in
        !report.drift.contains { $0.address == change.address && $0.fields == change.fields }
      }
      if !extra.isEmpty {
        foundByHeal = true
        let further = Set(extra.map(\.address))
        report.drift = (report.drift.filter { !further.contains($0.address) } + extra).sorted { $0.address < $1.address }
        changes = JSONPlanRenderer.changes(report.drift, redact: false)
        shown = PhoneRedaction.Mask(redact: !settings.showSensitive, manifest: bytes, changes: report.drift)
      }
    }
    // The same drift, reported refused, failed or given up on, and its manifest changed since:
    // what healing does about it now is said anew (a drift event that supersedes it), so the
    // page and the alerts do not keep a refusal the manifest no longer makes (fresh-eyes finding).
    // So is one reported `retrying` whose next try is refused, fails for good or is held back:
    // the page kept "being retried", naming a lock long released (fresh-eyes fe89 #2).
    let settled = ["unsafe", "failed", "rate_limited"]
    let outcomeChanged = !isNew && tracking.reported != nil && outcome.word != tracking.reportedOutcome
      && (settled.contains(tracking.reportedOutcome ?? "") && outcome.word != "unchanged"
          || tracking.reportedOutcome == "retrying" && settled.contains(outcome.word))
    let driftID: String
    if isNew || outcomeChanged || foundByHeal {
      var event = driftEvent(report, changes: changes, outcome: outcome, watch: watch, mask: shown, at: detected)
      if outcome.word == "failed" || outcome.word == "retrying", !tracking.failedHealWrote.isEmpty {
        let written = tracking.failedHealWrote.map { shown.text($0.rawValue) }
        event.fields["written_before_failing"] = .array(written.map(JSONValue.string))
        event.message += " (it wrote \(written.joined(separator: ", ")) back before it stopped)"
      }
      let addresses: [JSONValue] = if case .array(let named)? = event.fields["addresses"] { named } else { [] }
      // The drift reported before, not over (no `resolved`) but changed — a heal wrote part of
      // it, or the wearer changed more: this event replaces it, and says what of it is no longer
      // drift, so a receiver that tracks drift by id closes the earlier one.
      if let earlier = tracking.reported {
        event.fields["supersedes"] = .string(earlier.id)
        let settled = earlier.addresses.filter { !addresses.contains($0) }
        if !settled.isEmpty { event.fields["no_longer_drifted"] = .array(settled) }
      }
      emitEvent(event)
      unlink(watch.home.monitorHealPath)
      driftID = event.id
      tracking.reported = (signature, event.id, addresses)
      tracking.reportedAgainst = watch.lastApplied().map { (record: $0, drift: report.drift) }
      tracking.reportedHistory = historyCount
      tracking.reportedOutcome = outcome.word
      tracking.healed = false
      tracking.accepted = false
      tracking.notHealed = []
    } else {
      driftID = tracking.reported?.id ?? ""
    }
    tracking.failedHealWrote = []
    if tracking.failedHealWroteOverDrift {
      tracking.healed = true
      tracking.failedHealWroteOverDrift = false
    }
    switch outcome {
    case .applied(let applied, let heldBack, let notHealed, let pendingUnsafe):
      let healed = shown.adding(applied.plan)
      let words = HealWords(drift: report.drift, own: report.own, applied: applied, notHealed: notHealed, pendingUnsafe: pendingUnsafe,
                            manifest: manifestName, planCommand: settings.planCommand, mask: healed)
      tracking.healed = notHealed.isEmpty
      // The heal wrote and verified: the watch holds the manifest's emergency list but for what
      // it did not heal, so SOS is at risk only by that — also for an `offline` before the
      // recheck reads it (fresh-eyes finding: "SOS at risk" on a watch the heal had just put
      // right, docs/monitor.md "Offline and online").
      tracking.sosAtRisk = notHealed.putSOSAtRisk
      tracking.notHealed = words.notHealed
      var fields: [String: JSONValue] = [
        "drift_id": .string(driftID), "added": .integer(applied.added), "changed": .integer(applied.changed),
        "destroyed": .integer(applied.destroyed), "backup": applied.backupPath.map(JSONValue.string) ?? .null,
        "addresses": .array(applied.plan.resourceChanges.map { .string(healed.text($0.address.rawValue)) }),
      ]
      if !notHealed.isEmpty { fields["not_healed"] = .array(words.notHealed.map(JSONValue.string)) }
      if let heldBack {
        fields["held_back"] = .array(heldBack.addresses.map { .string(healed.text($0.rawValue)) })
        fields["held_back_reason"] = .string(heldBack.reason)
      }
      if let during = tracking.changedDuringHeal { fields["changed_during_apply"] = .string(during) }
      emit(.applied, watch: watch.identity,
           message: "\(words.applied): \(applied.added) added, \(applied.changed) changed, \(applied.destroyed) destroyed"
             + (applied.backupPath.map { " (backup \($0))" } ?? "") + words.appliedLeft + (heldBack.map { healed.message($0.text) } ?? "")
             + (tracking.changedDuringHeal.map { "; " + $0 } ?? ""),
           fields: fields)
      mailbox.post(.recheck)
    case .failed(let message) where !isNew:
      emit(.error, watch: watch.identity, message: "healing the drift failed again: \(message)",
           fields: ["reason": .string("apply"), "reconcile": .string(outcome.word), "drift_id": .string(driftID), "error": .string(message)])
    case .retrying(let message, let attempt, _, _) where !isNew && attempt == 1:
      // Said when the drift's heal turns transient (its manifest changed); later attempts that
      // fail the same way are the state the drift event and this already told.
      emit(.error, watch: watch.identity, message: "healing the drift \(outcome.retryText)",
           fields: outcome.retryFields.merging(["reason": .string("apply"), "reconcile": .string(outcome.word), "drift_id": .string(driftID),
                                                "error": .string(message)]) { $1 })
    default:
      break
    }
    // Every write of the heal was made and only the read verifying them failed: the watch is
    // read again after the reconnect backoff's first wait, not at the next periodic check, so
    // the drift it wrote back ends then (fresh-eyes finding: shown for an `--interval` more,
    // while `status --fleet` said in sync). The heal itself is not tried again before it is due.
    if case .retrying(_, _, _, true) = outcome { mailbox.post(.recheck, after: settings.reconnect.initial) }
    switch outcome {
    case .failed(let message): return .drifted(healFailed: "healing the drift failed: \(message)")
    case .retrying: return .drifted(healFailed: "healing the drift \(outcome.retryText)")
    default: return .drifted(healFailed: nil)
    }
  }

  /// A manifest that cannot be used: said once (an `error` event, `reason: manifest`), and the
  /// watch still compared with what the last apply left (`Watch.driftSinceRecord`: drift needs
  /// no manifest), so a change on the watch — SOS switched off — is reported while the manifest
  /// has errors (`reconcile: invalid`: nothing is healed until it is fixed; what it still asks
  /// of the watch is not known, `pending: null`), and its end too.
  /// `source`: the manifest's bytes, when read: its numbers are masked as written, as
  /// `validate --redact` masks them (a letter in a number left digit runs of it readable, fe106 #1).
  private func manifestProblem(_ errors: [Diagnostic], source: [UInt8]? = nil, watch: Watch, _ tracking: inout Tracking) async -> CheckResult {
    let masked = PhoneRedaction.Mask(redact: !settings.showSensitive, manifest: source)
    let text = errors.prefix(3).map { masked.text($0.description) }.joined(separator: "; ")
      + (errors.count > 3 ? "; and \(errors.count - 3) more" : "")
    // A fleet's watch: the files with the errors, not the watch's usual name for its manifests.
    let files = Array(Set(errors.compactMap { $0.position?.file })).sorted()
    let name = settings.manifestProvider != nil && !files.isEmpty ? files.joined(separator: ", ") : manifestName
    let message = "cannot use \(name): \(text.isEmpty ? "it could not be read" : text); nothing is healed or applied until it is fixed"
    if tracking.manifestProblem != message {
      tracking.manifestProblem = message
      emit(.error, watch: watch.identity, message: message, fields: ["reason": .string("manifest")])
    }
    let found: (drift: [ResourceChange], lastWrite: LastWrite)?
    do { found = try await watch.driftSinceRecord() } catch {
      if case .device(let deviceError) = error { return .offline(deviceError) }
      return .failed(message)
    }
    // The watch was read: `online` first when a connection waited for that (as for a usable
    // manifest, before what the check finds), then seen now, its drift since the last apply
    // known, its manifest still not usable (fresh-eyes finding: "last seen" stood still).
    confirmOnline(watch, &tracking)
    tracking.sosAtRisk = found?.drift.putSOSAtRisk ?? false
    checked?(MonitorCheck(time: now(), hasRecord: found != nil, drift: found?.drift.count ?? 0, pending: 0,
                          sosAtRisk: tracking.sosAtRisk, manifestUsable: false))
    guard let drift = found?.drift else { return .failed(message) }
    if drift.isEmpty {
      if let reported = tracking.reported {
        emit(.resolved, watch: watch.identity, message: "the watch holds what the last apply left again",
             fields: ["drift_id": .string(reported.id), "healed": .bool(false)])
        tracking.reported = nil
      }
      return .failed(message)
    }
    let changes = JSONPlanRenderer.changes(drift, redact: false)
    let signature = SHA256Digest.hex(of: Array(MonitorEvent.compact(changes).utf8))
    guard signature != tracking.reported?.signature else { return .failed(message) }
    let shown = PhoneRedaction.Mask(redact: !settings.showSensitive, manifest: [], changes: drift)
    let addresses = drift.map { JSONValue.string(shown.text($0.address.rawValue)) }
    var fields: [String: JSONValue] = [
      "changes": settings.showSensitive ? changes : JSONPlanRenderer.masked(changes, of: drift),
      "addresses": .array(addresses), "reconcile": .string("invalid"), "pending": .null,
      "sos_at_risk": .bool(drift.putSOSAtRisk),
    ]
    if let earlier = tracking.reported { fields["supersedes"] = .string(earlier.id) }
    let event = MonitorEvent(time: now(), watch: watch.identity, kind: .drift,
                             message: "\(Reconcile.driftSummary(drift, address: shown.address)) changed on the watch since the last apply; "
                               + "not healed: \(name) cannot be used, so nothing is applied until it is fixed",
                             fields: fields)
    emitEvent(event)
    tracking.reported = (signature, event.id, addresses)
    tracking.reportedAgainst = watch.lastApplied().map { (record: $0, drift: drift) }
    return .failed(message)
  }
  /// Whether a history entry's `command` is a monitor's heal (`tsapply monitor …`, any options,
  /// this process's or an earlier one's): a heal is never "an apply that wrote over" what
  /// changed on the watch (fresh-eyes fe102 #2: a monitor restarted with `--serve` added took the
  /// earlier one's heal for a person's apply and advised restoring its backup, which held SOS off).
  static func isHeal(_ command: String) -> Bool {
    let words = command.split(separator: " ", maxSplits: 2)
    return words.count >= 2 && words[0].hasSuffix("tsapply") && words[1] == "monitor"
  }

  /// The apply that ended a drift by writing over it — not a monitor's heal: another `tsapply
  /// apply` or `restore` (a person's, an agent's) in the watch's history after its first `count`
  /// entries (as many as it had when the drift was found), the last one that wrote or had begun
  /// to (`started`: its backup taken, the drift read as over while it runs). Its words ("an apply
  /// by ana@ward-pc at … ('tsapply apply …') wrote over what had changed on the watch; its backup
  /// … holds the watch as it was before it …") and fields (`user`, `host`, `time`, `command`,
  /// `backup`); `nil` when there is none, or `count` is not known.
  func overwrite(_ watch: Watch, after count: Int?) -> (words: String, fields: [String: JSONValue])? {
    guard let count, watch.history.count > count,
          let entry = (try? watch.history.read().entries)?.dropFirst(count)
            .last(where: { ($0.wrote || $0.result == HistoryEntry.started) && !Self.isHeal($0.command) && $0.command != settings.commandLine })
    else { return nil }
    var fields: [String: JSONValue] = ["user": .string(entry.user), "host": .string(entry.host), "time": .string(entry.time),
                                       "command": .string(entry.command)]
    var words = "\(entry.kind == "restore" ? "a restore" : "an apply") by \(entry.user)@\(entry.host) at \(entry.time) ('\(entry.command)') wrote over what had changed on the watch"
    if let backup = entry.backup {
      fields["backup"] = .string(backup)
      words += "; its backup \(backup) holds the watch as it was before it ('tsapply restore' brings that back)"
    }
    return (words, fields)
  }
}
