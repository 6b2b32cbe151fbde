import TSModel
import TSManifest

/// The outcome of planning: a plan when the manifest fits the watch, and every diagnostic.
public struct PlanResult: Sendable {
  /// The plan; `nil` when any diagnostic is an error (the watch must not be touched).
  public var plan: Plan?
  /// Errors and warnings, sorted by position (`Array<Diagnostic>.sortedByPosition()`).
  public var diagnostics: [Diagnostic]

  /// A result as given (the planner sorts `diagnostics`).
  public init(plan: Plan?, diagnostics: [Diagnostic]) {
    self.plan = plan
    self.diagnostics = diagnostics
  }
}

/// The pure planner: (Manifest, DeviceState, DeviceCapabilities) → Plan. No device calls, no
/// clock, no files.
///
/// Each section is planned by a small function (built-in reminders, custom reminders, contacts,
/// emergency) and the parts are joined. Sections left out of the manifest are unmanaged and give
/// no change. Only fields the manifest manages and the platform stores are compared, in the
/// stored form (see `ReminderField`, `ReminderChecks`, `ContactPlanner`), so planning again after
/// applying a plan gives an empty plan. Capability problems are errors with the manifest position
/// (docs/plan.md lists them).
public enum Planner {
  /// Plans `manifest` against the watch `state` with `capabilities`. The plan's
  /// `priorStateDigest` is `state`'s fingerprint, hashed when first read (`DeferredDigest`).
  public static func plan(_ manifest: Manifest, state: DeviceState, capabilities: DeviceCapabilities) -> PlanResult {
    var part = PlanPart()
    if let reminders = manifest.reminders {
      part.merge(ReminderPlanner.plan(reminders, state: state, capabilities: capabilities))
    }
    if let contacts = manifest.contacts {
      part.merge(ContactPlanner.plan(contacts, state: state, capabilities: capabilities))
    }
    if let emergency = manifest.emergency {
      part.merge(EmergencyPlanner.plan(emergency, state: state, capabilities: capabilities))
    }
    let diagnostics = part.diagnostics.sortedByPosition()
    guard !diagnostics.hasErrors else { return PlanResult(plan: nil, diagnostics: diagnostics) }
    let plan = Plan(manifestFile: manifest.file, profile: capabilities.profile, priorState: state,
                    resourceChanges: part.changes, warnings: diagnostics.filter { $0.severity == .warning })
    return PlanResult(plan: plan, diagnostics: diagnostics)
  }
}

/// Changes and diagnostics from planning one part of a manifest.
struct PlanPart {
  var changes: [ResourceChange] = []
  var diagnostics: [Diagnostic] = []

  mutating func merge(_ other: PlanPart) {
    changes += other.changes
    diagnostics += other.diagnostics
  }
}
