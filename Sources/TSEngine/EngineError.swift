import TSApply
import TSModel
import TSPlan

/// Why an engine call did not do what was asked. Every case says whether the watch was
/// written; only `.apply` can follow writes.
public enum EngineError: Error, Sendable, CustomStringConvertible {
  /// The device could not be opened or answered an error; nothing was written.
  case device(DeviceError)
  /// The input (a manifest, or a backup read as one) does not fit the watch or is invalid:
  /// every problem, with `source` (the bytes the positions refer to) when there is one. Nothing
  /// was written.
  case invalid(InvalidInput)
  /// The whole-apply lock (or a bridge's lease) is held by someone else; nothing was read or written.
  case locked(LockFailure)
  /// `--auto-approve` without `--allow-destroy` on an unsafe plan: the findings, nothing written.
  case unsafe(Plan, [SafetyFinding])
  /// The person asked did not approve; nothing was written.
  case declined
  /// A saved plan cannot be applied (stale, for another watch, edited): every reason, nothing written.
  case savedPlanRefused([Diagnostic])
  /// A backup cannot be restored (unreadable, another platform); nothing written.
  case backup(BackupError)
  /// The watch's state folder cannot be written, so no backup can be taken; nothing written.
  case records(SecureFileError)
  /// The apply itself failed: before the first write (backup), part-way, or in verification.
  case apply(ApplyError)
  /// `drift` was asked for, and the last-applied record exists but cannot be used; nothing written.
  case lastApplied(LastAppliedError)

  /// Where the watch's state before the apply was backed up, when an apply failed after
  /// taking its backup (`.apply`); the path is tsapply's own, never personal data.
  public var backupPath: String? {
    if case .apply(let error) = self { error.backupPath } else { nil }
  }

  /// Whether an unattended caller (a monitor healing, an agent applying a revision) should try
  /// the same thing again later: the watch was out of reach or busy, another tsapply held it,
  /// the records could not be written, or an apply stopped part-way for such a reason (a rerun
  /// plans from what the watch holds, so it converges). Final: the input is invalid, the plan is
  /// unsafe or was declined, the watch refused a write for its content, verification showed the
  /// watch stores something else — trying again gives the same answer, so it waits for a new
  /// manifest. The one classification every front-end uses (docs/apply.md "Transient and final
  /// failures").
  public var isTransient: Bool {
    switch self {
    case .device(let error): error.isTransient
    case .locked, .records: true
    case .apply(let error): error.isTransient
    case .invalid, .unsafe, .declined, .savedPlanRefused, .backup, .lastApplied: false
    }
  }

  public var description: String {
    switch self {
    case .device(let error): "\(error)"
    case .invalid(let input):
      "\(input.errorCount) error\(input.errorCount == 1 ? "" : "s") in \(input.subject); the watch was not touched"
    case .locked(let failure): "\(failure); nothing was read or written"
    case .unsafe(_, let findings):
      "refusing to apply without review: this plan " + findings.map(\.description).joined(separator: "; ")
        + ". Nothing was written"
    case .declined: "the change was not approved; the watch was not touched"
    case .savedPlanRefused(let problems): problems.map(\.message).joined(separator: "; ")
    case .backup(let error): "\(error)"
    case .records(let error): "cannot keep tsapply's records for this watch, so nothing was written: \(error)"
    case .apply(let error): "\(error)"
    case .lastApplied(let error): "\(error)"
    }
  }
}

/// Input that cannot be applied, with every problem found.
public struct InvalidInput: Sendable {
  /// What the problems are in: `the manifest` or `the backup`.
  public var subject: String
  /// Errors and warnings, sorted by position.
  public var diagnostics: [Diagnostic]
  /// The bytes the positions refer to (for source excerpts), when there are any.
  public var source: [UInt8]?

  /// Problems in `subject`; `source` is what their positions point into.
  public init(subject: String, diagnostics: [Diagnostic], source: [UInt8]?) {
    self.subject = subject
    self.diagnostics = diagnostics.sortedByPosition()
    self.source = source
  }

  /// Number of errors.
  public var errorCount: Int { diagnostics.filter { $0.severity == .error }.count }
}
