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
  /// The manifest's own diagnostics (`read`) with the plan's for a platform (`planned`), each
  /// once, sorted by position. A plan's warning at a name (a contact's the platform keeps
  /// shorter than the manifest rules' 32 bytes: npk, 31) replaces the manifest's at that name,
  /// which told of the 32-byte cut: one warning saying what this watch keeps (fresh-eyes fe96
  /// #7: "stored as … (32 bytes)" and "(31 bytes)" at one name).
  public static func diagnostics(read: [Diagnostic], planned: [Diagnostic]) -> [Diagnostic] {
    let names = Set(planned.filter { $0.severity == .warning && $0.field.hasSuffix(".name") }.map { "\($0.position.map(\.description) ?? "") \($0.field)" })
    let kept = names.isEmpty ? read : read.filter { diagnostic in
      diagnostic.severity != .warning || !names.contains("\(diagnostic.position.map(\.description) ?? "") \(diagnostic.field)")
    }
    return (kept + planned.filter { !read.contains($0) }).sortedByPosition()
  }

  /// Plans `manifest` against the watch `state` with `capabilities`. The plan's
  /// `priorStateDigest` is `state`'s fingerprint, hashed when first read (`DeferredDigest`).
  public static func plan(_ manifest: Manifest, state: DeviceState, capabilities: DeviceCapabilities) -> PlanResult {
    let part = parts(manifest, state: state, capabilities: capabilities)
    let diagnostics = part.diagnostics.sortedByPosition()
    guard !diagnostics.hasErrors else { return PlanResult(plan: nil, diagnostics: diagnostics) }
    let plan = Plan(manifestFile: manifest.file, profile: capabilities.profile, priorState: state,
                    resourceChanges: part.changes, warnings: diagnostics.filter { $0.severity == .warning })
    return PlanResult(plan: plan, diagnostics: diagnostics)
  }

  /// The changes `manifest` asks of `state`, whatever the diagnostics say: for a manifest made
  /// from a watch's own state (drift: `StateManifest`), whose values the watch holds however a
  /// manifest's checks judge them (notes or a phone past the manifest's limits must not hide
  /// drift). Never for a person's manifest: its errors stop the plan (`plan`).
  public static func changes(_ manifest: Manifest, state: DeviceState, capabilities: DeviceCapabilities) -> [ResourceChange] {
    parts(manifest, state: state, capabilities: capabilities).changes
  }

  /// Every section of `manifest` planned against `state`, joined.
  private static func parts(_ manifest: Manifest, state: DeviceState, capabilities: DeviceCapabilities) -> PlanPart {
    var part = PlanPart()
    if let reminders = manifest.reminders {
      part.merge(ReminderPlanner.plan(reminders, state: state, capabilities: capabilities))
    }
    if let contacts = manifest.contacts {
      let referred = manifest.emergency?.contacts?.value.compactMap { $0.reference?.value } ?? []
      part.merge(ContactPlanner.plan(contacts, state: state, capabilities: capabilities, referred: referred))
    }
    if let emergency = manifest.emergency {
      part.merge(EmergencyPlanner.plan(emergency, state: state, capabilities: capabilities))
    }
    return part
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
