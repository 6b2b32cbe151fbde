import Foundation
import TSApply
import TSDevice
import TSManifest
import TSModel
import TSPlan

/// The unattended reconcile step shared by every front-end that applies without a person — the
/// monitor healing drift (`tsapply monitor --reconcile`, `monitor --fleet`) and a fleet agent
/// applying a desired revision (`tsapply agent`): apply `document` with automatic approval
/// (the safety gate, backup, verification and records of `Watch.apply`) and classify what
/// happened once, so that every front-end reports and retries the same way.
///
/// The classification (docs/monitor.md, docs/fleet.md):
///
/// | outcome | when | front-ends |
/// |---|---|---|
/// | `noChanges` | the watch already matched | nothing to report beyond drift |
/// | `applied` | applied and verified | an `applied` event / status |
/// | `refusedUnsafe` | the safety gate refused (with `ApplyOptions.holdsBackUnsafe`, a monitor's heal: only when nothing safe was left to write; else `applied` with `ApplyReport.heldBackUnsafe`); `pending` names the findings the manifest's own pending change makes | reported, left alone |
/// | `invalid` | the manifest does not fit the watch | reported, not retried |
/// | `locked` | another tsapply holds the watch | tried again later, reported `retrying` |
/// | `retrying` | a transient failure (`EngineError.isTransient`) | tried again: an agent after `Backoff`, a monitor at its next check |
/// | `failed` | a final failure | reported, not retried until the desired state changes |
public enum Reconcile {
  /// What one unattended apply did.
  public enum Outcome: Sendable {
    /// The watch already matched.
    case noChanges(Plan)
    /// Applied and verified.
    case applied(ApplyReport)
    /// The safety gate refused an unsafe plan; nothing was written. `pending` are the findings
    /// the manifest itself makes against what the last apply left (a change edited into the
    /// manifest and not applied yet), the rest come from undoing what changed on the watch.
    case refusedUnsafe(Plan, findings: [SafetyFinding], pending: [SafetyFinding])
    /// The manifest does not fit the watch; nothing was written.
    case invalid(InvalidInput)
    /// Another tsapply holds the watch; nothing was read or written.
    case locked(LockFailure)
    /// A failure that trying again later can get past (`EngineError.isTransient`).
    case retrying(EngineError)
    /// A failure that trying again will not get past.
    case failed(EngineError)

    /// The outcome's word in events and statuses: `no_changes`, `applied`, `refused_unsafe`,
    /// `invalid`, `locked`, `retrying`, `failed`.
    public var word: String {
      switch self {
      case .noChanges: "no_changes"
      case .applied: "applied"
      case .refusedUnsafe: "refused_unsafe"
      case .invalid: "invalid"
      case .locked: "locked"
      case .retrying: "retrying"
      case .failed: "failed"
      }
    }

    /// The error, for the three failure outcomes that have one.
    public var error: EngineError? {
      switch self {
      case .retrying(let error), .failed(let error): error
      case .locked(let failure): .locked(failure)
      case .invalid(let input): .invalid(input)
      case .refusedUnsafe(let plan, let findings, _): .unsafe(plan, findings)
      case .noChanges, .applied: nil
      }
    }
  }

  /// Applies `document` to `watch` with automatic approval (`--allow-destroy` when
  /// `allowDestroy`) and classifies the result.
  /// - Parameters:
  ///   - options: The apply's options; `approval` is replaced by automatic approval, and
  ///     `listensWhileWriting` is off (the controller's own listeners hear the watch).
  public static func apply(_ document: ManifestDocument, to watch: Watch, allowDestroy: Bool,
                           options: ApplyOptions) async -> Outcome {
    var options = options
    options.approval = .automatic(allowDestroy: allowDestroy)
    options.listensWhileWriting = false
    do {
      switch try await watch.apply(document, options: options) {
      case .noChanges(let plan): return .noChanges(plan)
      case .applied(let report): return .applied(report)
      }
    } catch {
      switch error {
      case .unsafe(let plan, let findings):
        // Holding the manifest's own changes back, every finding comes from undoing what changed on the watch.
        let pending = options.holdsBackUnapplied ? [] : pendingFindings(findings, document: document, watch: watch)
        return .refusedUnsafe(plan, findings: findings, pending: pending)
      case .invalid(let input): return .invalid(input)
      case .locked(let failure): return .locked(failure)
      default: return error.isTransient ? .retrying(error) : .failed(error)
      }
    }
  }

  /// Of `plan`'s changes, those on the watch after its apply failed with `error` (what the
  /// watch's history records as `reached`: `Watch.reached`); zero when the failure came before
  /// any write could be made (no backup was taken: nothing was written).
  public static func reached(_ plan: Plan, failure error: EngineError) -> PlanCounts {
    guard case .apply(let failure) = error, failure.backupPath != nil else { return .zero }
    return Watch.reached(plan, failure: failure).counts
  }

  /// Of `plan`'s changes, how many may or may not be on the watch after its apply failed with
  /// `error`: a write whose answer was lost and whose list could not be read back
  /// (`HistoryEntry.unknown`); 0 when every outcome is known.
  public static func unknown(_ plan: Plan, failure error: EngineError) -> Int {
    guard case .apply(let failure) = error, failure.backupPath != nil else { return 0 }
    return Watch.reached(plan, failure: failure).unknown.count
  }

  /// The unsafe findings of the manifest's own change: `document` planned against what the last
  /// apply left (none without a record), with that change's counts — not the refused plan's,
  /// which also undo what changed on the watch since — and only of the kinds in `findings`.
  static func pendingFindings(_ findings: [SafetyFinding], document: ManifestDocument, watch: Watch) -> [SafetyFinding] {
    pendingFindings(findings, document: document, last: watch.lastApplied(), capabilities: watch.capabilities)
  }

  /// `pendingFindings(_:document:watch:)` against `last`, what the last apply left (read before
  /// an apply that records anew: a heal that wrote its safe part, `ApplyReport.heldBackUnsafe`).
  public static func pendingFindings(_ findings: [SafetyFinding], document: ManifestDocument, last: DeviceState?,
                                     capabilities: DeviceCapabilities) -> [SafetyFinding] {
    guard let last else { return [] }
    let kinds = Set(findings.map(\.kind))
    return (Planner.plan(document.manifest, state: last, capabilities: capabilities).plan?.unsafeFindings ?? [])
      .filter { kinds.contains($0.kind) }
  }

  /// The resources of `drift` that the apply of `report` did not change back: `drift` is what
  /// changed on the watch since the last apply (`before` = `recorded`, the state that apply left;
  /// `after` = the watch when the heal began), compared with the state the apply verified
  /// (`ApplyReport.finalState`). A resource changed on the watch is kept when every field that
  /// changed still holds the watch's value — fields the manifest does not set, which applying it
  /// leaves as the watch has them, even while it applies the manifest's own pending change — and
  /// a resource added or removed on the watch while it still is. A resource the apply changed back
  /// in part (a contact re-added beside a short name the manifest does not give) is not kept.
  /// Empty when the apply changed every drifted resource back; all of `drift` when nothing was
  /// read back. `drift` named as `manifest` names it (`Manifest.naming`: a report's drift is).
  public static func notUndone(_ drift: [ResourceChange], by report: ApplyReport, recorded: DeviceState, manifest: Manifest,
                               capabilities: DeviceCapabilities) -> [ResourceChange] {
    guard let final = report.finalState else { return drift }
    let left = Dictionary(manifest.naming(Drift.changes(since: recorded, current: final, capabilities: capabilities), capabilities: capabilities)
                            .map { ($0.address, $0) },
                          uniquingKeysWith: { first, _ in first })
    return drift.filter { change in
      guard let now = left[change.address], now.action == change.action else { return false }
      return change.action != .update || change.fields.allSatisfy(now.fields.contains)
    }
  }

  /// One line for an unattended apply (a heal, an agent's revision) during which the watch
  /// announced a change made on it (`EngineEvent.changedOnWatchDuringApply`): which lists, who
  /// they hold (`mask` hides their numbers), whether the apply wrote over the change (`kept`)
  /// and where the list is kept, with the command that brings it back to `device`, e.g. `while
  /// it wrote, the watch's contacts were changed on the watch itself (it announced 2 contacts:
  /// Ann (+1•••0111), Pat (+1•••0177)); the apply wrote over that change; a backup holds it:
  /// 'tsapply restore --device sim:w.json B' brings it back`.
  public static func changedDuringApply(_ lists: [DeviceEvent.Kind: [Contact]], backupPath: String?, kept: [DeviceEvent.Kind: Bool],
                                        device: String, mask: (String) -> String) -> String {
    var parts: [String] = []
    for (kind, contacts) in lists.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
      let list = kind == .contactsChanged ? "contacts" : "emergency contacts"
      let names = contacts.map { mask("\($0.name) (\($0.phoneNum))") }.joined(separator: ", ")
      let outcome = switch kept[kind] {
      case true?: "the watch still holds that change, so it is drift now"
      case false?: "the apply wrote over that change"
      case nil: "the apply may have written over that change"
      }
      parts.append("the watch's \(list) were changed on the watch itself (it announced "
                   + "\(contacts.count) \(contacts.count == 1 ? String(list.dropLast()) : list)\(names.isEmpty ? "" : ": " + names)); \(outcome)")
    }
    var text = "while it wrote, " + parts.joined(separator: "; and ")
    // The watch holds the change: nothing to bring back, a restore would only undo the apply.
    if let backupPath, !lists.keys.allSatisfy({ kept[$0] == true }) {
      text += "; a backup holds \(lists.count == 1 ? "that list" : "those lists"): "
        + "'tsapply restore --device \(ShellWord.quoted(device)) \(ShellWord.quoted(backupPath))' brings \(lists.count == 1 ? "it" : "them") back"
    }
    return text
  }

  /// What a refused plan is made of, in words: what `subject` (`the revision`, `the manifest`)
  /// would change itself (`pending`, from `refusedUnsafe`) and what changed on the watch since
  /// the last apply, which applying would undo (`plan.resourceDrift`, each list with its counts;
  /// what the plan does not change back said apart: `Plan.splitting`),
  /// e.g. `the revision would change: removes 1 contact; changed on the watch since the last
  /// apply: contacts (3 added), which applying would undo`. `nil` when the plan has no record
  /// to tell them apart by (no drift and no pending finding). `address` renders an address
  /// (a masked one where numbers are hidden).
  public static func attribution(_ plan: Plan, pending: [SafetyFinding], subject: String,
                                 address: (ResourceAddress) -> String = \.rawValue) -> String? {
    guard !pending.isEmpty || !plan.resourceDrift.isEmpty else { return nil }
    var parts = [pending.isEmpty ? "\(subject)'s own change is safe"
                   : "\(subject) would change: " + pending.map(\.description).joined(separator: "; ")]
    if !plan.resourceDrift.isEmpty {
      // Only what the plan changes back is undone (`Plan.undoing`): a switch the
      // manifest does not set stays as the wearer left it (fresh-eyes finding: "Walk (turned
      // off), which applying would undo", and applying left it off).
      // A resource changed back in part is said in both, each with its part (`Plan.splitting`).
      let (undoing, staying) = plan.splitting(plan.resourceDrift)
      var words = "changed on the watch since the last apply: "
      if !undoing.isEmpty { words += driftSummary(undoing, address: address) + ", which applying would undo" }
      if !staying.isEmpty {
        words += (undoing.isEmpty ? "" : "; and ") + driftSummary(staying, address: address) + ", which applying would leave as it is"
      }
      parts.append(words)
    }
    return parts.joined(separator: "; ")
  }

  /// Drifted resources as one line, each in a few words (`ChangeBrief`), e.g. `contacts (3
  /// added), emergency (SOS switched off), reminder.drinking (period.every changed)`.
  public static func driftSummary(_ drift: [ResourceChange], address: (ResourceAddress) -> String = \.rawValue) -> String {
    drift.map { ChangeBrief.text(address($0.address), $0.fields, action: $0.action) }.joined(separator: ", ")
  }
}
