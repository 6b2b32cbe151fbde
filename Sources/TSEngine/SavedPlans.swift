import Foundation
import TSApply
import TSManifest
import TSModel
import TSPlan

/// A saved plan as read from its file.
public struct SavedPlanFile: Sendable {
  /// The plan and what it is bound to.
  public var saved: SavedPlan
  /// Absolute path of the plan file.
  public var path: String

  /// A saved plan read from `path`.
  public init(saved: SavedPlan, path: String) {
    self.saved = saved
    self.path = path
  }

  /// Absolute path of the manifest the plan was made from.
  public var manifestPath: String { saved.manifestLocation(planPath: path) }

  /// Reads `path` as a saved plan; `nil` when the file is not one (e.g. a YAML manifest), so a
  /// command can treat it as a manifest instead.
  /// - Throws: `SavedPlanError` for a saved plan of another format or one that cannot be decoded.
  public static func read(_ path: String) throws(SavedPlanError) -> SavedPlanFile? {
    guard case .success(let bytes) = ManifestSource.file(path: path, displayName: path).read() else { return nil }
    return try SavedPlan.parse(bytes, path: path).map { SavedPlanFile(saved: $0, path: path) }
  }
}

extension Watch {
  /// Saves `planned` (made from `document`, which must have a path) to `path` (absolute, 0600)
  /// for a later `apply(saved:options:)`: bound to the manifest's SHA-256 and to this watch.
  /// - Throws: `SecureFileError` when it cannot be written, or `path` is the manifest, an
  ///   existing file that is not a saved plan, or one of this watch's or tsapply's own files
  ///   (`refuseOutput(at:)`).
  public func save(_ planned: PlannedChanges, document: ManifestDocument, to path: String) throws(SecureFileError) -> SavedPlan {
    try refuseOutput(at: path)
    let manifest = document.path ?? ""
    let relative = SavedPlan.relativePath(manifest, from: (path as NSString).deletingLastPathComponent)
    let saved = SavedPlan(manifestPath: relative, manifestDigest: SHA256Digest.hex(of: document.bytes),
                          device: identity, plan: planned.plan)
    try saved.write(to: path)
    return saved
  }

  /// Every reason `file` cannot be applied to this watch in `state`, and the manifest it was
  /// made from when that can still be read: made for another watch; the manifest unreadable,
  /// changed or now invalid; the watch changed; or the plan's changes differ from what planning
  /// the manifest again gives (an edited plan file), so only what the planner produces, with
  /// every check, is ever written. One function, returning diagnostics, for every front-end.
  public func check(_ file: SavedPlanFile, state: DeviceState) -> (manifest: Manifest?, problems: [Diagnostic]) {
    let saved = file.saved
    let name = (file.path as NSString).lastPathComponent
    let bytes = try? ManifestSource.file(path: file.manifestPath, displayName: saved.plan.manifestFile).read().get()
    let loaded = bytes.map { ManifestLoader.load(bytes: $0, file: saved.plan.manifestFile) }
    var problems = reviewProblems(saved.plan, recorded: [saved.device, saved.plan.device].compactMap { $0 }, name: name,
                                  manifestDigest: saved.manifestDigest, manifestBytes: bytes, manifest: loaded?.manifest, state: state)
    if let loaded, loaded.manifest == nil { problems += loaded.diagnostics.filter { $0.severity == .error } }
    return (loaded?.manifest, problems)
  }

  /// Every reason the reviewed `plan` (named `name` in messages) cannot be applied to this
  /// watch in `state`: made for another watch (`recorded`: the identities it names; none is
  /// refused too, so deleting a key cannot move a plan to another watch); the manifest
  /// unreadable (`manifestBytes` nil) or changed since (`manifestDigest`); the watch changed; or
  /// the plan's changes differ from what planning `manifest` again gives (an edited plan), so
  /// only what the planner produces, with every check, is ever written.
  func reviewProblems(_ plan: Plan, recorded: [String], name: String, manifestDigest: String, manifestBytes: [UInt8]?,
                      manifest: Manifest?, state: DeviceState) -> [Diagnostic] {
    var problems: [Diagnostic] = []
    func problem(_ text: String) { problems.append(.error(at: nil, field: "", text)) }
    let other = recorded.first(where: { $0 != identity })
    if let other {
      problem("\(name) was made for the watch \(other); it cannot be applied to \(identity)")
    } else if recorded.isEmpty {
      problem("\(name) does not name the watch it was made for (was it edited?); make the plan again with 'tsapply plan -out'")
    }
    // This watch is compared with the plan only when it is the plan's: another watch's state
    // says nothing of whether the plan's own watch changed.
    let stale = SavedPlan.staleness(of: plan, manifestDigest: manifestDigest, manifestBytes: manifestBytes,
                                    state: other == nil ? state : nil)
    if !stale.isEmpty {
      var text = "the saved plan is stale: \(stale.joined(separator: " and ")) since the plan was made"
      // Only the watch changed, and to what the manifest gives: most likely this plan was applied
      // already (fresh-eyes fe101: "stale" alone read as someone else having changed the watch).
      if stale == ["the watch changed"], other == nil, let manifest, Planner.plan(manifest, state: state, capabilities: capabilities).plan?.isEmpty == true {
        text += "; it holds what the manifest gives now (was the plan applied already?), so nothing is left to apply"
      }
      problem(text)
    }
    if problems.isEmpty, let manifest {
      let replanned = Planner.plan(manifest, state: state, capabilities: capabilities).plan?.resourceChanges
      // A plan saved before format version 2 has no manifest paths or sources to compare.
      if (plan.formatVersion == "1" ? replanned?.map(\.withoutOrigins) : replanned) != plan.resourceChanges {
        problem("\(name) does not hold the changes its manifest gives for this watch (was it edited?)")
      }
    }
    return problems
  }

  /// Applies `plan`, one watch's part of a fleet's saved plan (`SavedFleetPlan`), made from
  /// manifests whose bytes hashed to `manifestsDigest` and that are now `document`: after the
  /// checks of a saved plan (`reviewProblems`), exactly that plan, with no question and no
  /// safety gate (it was reviewed).
  /// - Throws: `EngineError.savedPlanRefused` with every reason the part cannot be applied
  ///   (nothing written); others as `apply`.
  public func apply(reviewed plan: Plan, name: String, manifestsDigest: String, document: ManifestDocument,
                    options: ApplyOptions) async throws(EngineError) -> ApplyOutcome {
    try await holding(options) { () throws(EngineError) in
      let state = try await readState()
      let problems = reviewProblems(plan, recorded: plan.device.map { [$0] } ?? [], name: name, manifestDigest: manifestsDigest,
                                    manifestBytes: document.bytes, manifest: document.manifest, state: state)
      guard problems.isEmpty else { throw .savedPlanRefused(problems) }
      var plan = plan
      plan.device = identity
      return try await execute(PlannedChanges(plan: plan, state: state, manifest: document.manifest, record: record()),
                               options: options, reviewed: true, source: (kind: "apply", manifest: document.path))
    }
  }
}
