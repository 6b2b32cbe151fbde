import TSModel

/// Renders a drift report (`tsapply drift`): what changed on the watch since the last apply
/// (drift), apart from what the manifest would still change (pending).
///
/// Text: a `Drift:` section with one block per drifted resource (`# contacts has changed`, as in
/// the plan's drift note), a `Pending:` section with the plan's blocks, and one summary line. JSON:
/// `{format_version, device, profile, manifest, has_record, drift: [resource change], pending:
/// {the plan's JSON}, counts: {drift, pending}}`, keys sorted; `--redact` masks every phone,
/// with its fingerprint when `fingerprints` are given (as the plan does).
public enum DriftRenderer {
  /// The human report, ending with a newline.
  /// `own`: the resources the manifest itself changes on what the last apply left
  /// (`unapplied(_:drift:own:)`).
  public static func text(drift: [ResourceChange], pending: Plan, hasRecord: Bool, color: Bool, redact: Bool,
                          fingerprints: PhoneFingerprints? = nil, own: Set<ResourceAddress>) -> String {
    let renderer = HumanPlanRenderer(color: color, redact: redact, fingerprints: fingerprints)
    let watch = HumanPlanRenderer.watchPhrase(pending)
    var lines: [String] = []
    if !hasRecord {
      lines += ["No record of an apply to \(watch): drift cannot be told until tsapply applies a manifest to it.", ""]
    } else if drift.isEmpty {
      lines += [renderer.paint("No drift.", .bold, .green) + " \(watch.prefix(1).uppercased() + watch.dropFirst()) holds what the last apply left.", ""]
    } else {
      lines += [renderer.paint("Drift:", .bold) + " changed on \(watch) since the last \"tsapply apply\":", ""]
      for change in drift { lines += renderer.block(change, plan: pending, drift: true) + [""] }
    }
    let own = unapplied(pending, drift: drift, own: own)
    let undoing = pending.resourceChanges.filter { change in !own.contains { $0.address == change.address } }
    if pending.isEmpty {
      lines.append(renderer.paint("Nothing pending.", .bold, .green) + " The watch matches \(pending.manifestFile).")
    } else if own.isEmpty {
      // Only the drift's undo: nobody edited the manifest.
      lines.append(renderer.paint("Nothing pending", .bold, .green) + " in \(pending.manifestFile) itself: applying it would only undo the drift above ("
        + undoing.map(\.address.rawValue).joined(separator: ", ") + ").")
    } else {
      lines += [renderer.paint("Pending:", .bold) + " \(pending.manifestFile) has changes not applied yet:", ""]
      for change in own { lines += renderer.block(change, plan: pending) + [""] }
      let counts = (add: own.filter { $0.action == .create }.count, change: own.filter { $0.action == .update }.count,
                    destroy: own.filter { $0.action == .delete }.count)
      lines.append("Pending: \(counts.add) to add, \(counts.change) to change, \(counts.destroy) to destroy"
        + (own.count == pending.resourceChanges.count ? HumanPlanRenderer.listItems(pending) : "") + ".")
      if !undoing.isEmpty {
        lines.append("Applying it would also undo the drift above (" + undoing.map(\.address.rawValue).joined(separator: ", ") + ").")
      }
    }
    if hasRecord { lines.append("Drift: \(drift.count) \(drift.count == 1 ? "resource" : "resources") changed on the watch.") }
    return lines.joined(separator: "\n") + "\n"
  }

  /// The JSON report, ending with a newline.
  public static func json(drift: [ResourceChange], pending: Plan, hasRecord: Bool, redact: Bool,
                          fingerprints: PhoneFingerprints? = nil, own: Set<ResourceAddress>) -> String {
    JSONValue.object(object(drift: drift, pending: pending, hasRecord: hasRecord, redact: redact, fingerprints: fingerprints, own: own))
      .encoded() + "\n"
  }

  /// The JSON report's object (for documents that embed it: a fleet's report).
  public static func object(drift: [ResourceChange], pending: Plan, hasRecord: Bool, redact: Bool,
                            fingerprints: PhoneFingerprints? = nil, own: Set<ResourceAddress>) -> [String: JSONValue] {
    var root: [String: JSONValue] = [
      "format_version": .string(Plan.currentFormatVersion),
      "profile": .string(pending.profile),
      "manifest": .string(pending.manifestFile),
      "has_record": .bool(hasRecord),
      "drift": .array(drift.map(JSONPlanRenderer.resourceChange)),
      "pending": .object(JSONPlanRenderer.object(pending, redact: redact, fingerprints: fingerprints)),
      "counts": .object(["drift": .integer(drift.count), "pending": .integer(unapplied(pending, drift: drift, own: own).count)]),
    ]
    if let device = pending.device { root["device"] = .string(device) }
    if redact {
      let known = PhoneRedaction.KnownPhones(PhoneRedaction.numbers(in: pending).union(PhoneRedaction.numbers(in: drift)))
      root = root.mapValues { $0.redactingPhones(known: known, fingerprints: fingerprints) }
    }
    return root
  }

  /// The changes of `pending` (the manifest planned against the watch now) that are the
  /// manifest's own: those of resources that did not drift, and those of drifted resources the
  /// manifest itself changes on what the last apply left (`own`: the addresses of the manifest
  /// planned against that state). A change of a drifted resource the manifest leaves as the last
  /// apply left it only undoes the wearer's change: drift, not pending — whatever else of the
  /// resource differs (a field the manifest does not set). What "pending" counts and shows
  /// (docs/plan.md "Drift").
  public static func unapplied(_ pending: Plan, drift: [ResourceChange], own: Set<ResourceAddress>) -> [ResourceChange] {
    let drifted = Set(drift.map(\.address))
    return pending.resourceChanges.filter { !drifted.contains($0.address) || own.contains($0.address) }
  }
}
