import TSApply
import TSModel
import TSPlan

extension Monitor {
  /// What an applied heal did about a drift, in the events' words: the drifted resources it
  /// undid, the manifest's pending change it applied besides (what it changed that undoes no
  /// drift, and what it changed in a drifted resource the manifest itself changes since the last
  /// apply, `DriftReport.own`: a reset watch healed with an emergency number not applied before),
  /// and the drift it left as the watch holds it (`HealOutcome.applied`'s `notHealed`) because
  /// the manifest does not set what changed. `mask` renders addresses.
  struct HealWords {
    /// The masked addresses of the drift left as the watch holds it.
    var notHealed: [String]
    private var healed: [String]
    private var pending: [String]
    private var fields: String
    private var manifest: String

    init(drift: [ResourceChange], own: Set<ResourceAddress>, applied: ApplyReport, notHealed: [ResourceChange], manifest: String,
         mask: PhoneRedaction.Mask) {
      let left = Set(notHealed.map(\.address))
      let undone = drift.map(\.address).filter { !left.contains($0) }
      self.notHealed = notHealed.map { mask.text($0.address.rawValue) }
      healed = undone.map { mask.text($0.rawValue) }
      pending = applied.plan.resourceChanges.map(\.address).filter { !undone.contains($0) || own.contains($0) }.map { mask.text($0.rawValue) }
      // `(enabled)` for one resource, `(reminder.custom["Lunch"]: enabled; contacts: …)` for more.
      let keys = notHealed.map { change in
        (mask.text(change.address.rawValue), change.fields.map { mask.text(ChangeBrief.key($0.field)) }
          .reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }.joined(separator: ", "))
      }.filter { !$0.1.isEmpty }
      fields = keys.isEmpty ? "" : " (" + (notHealed.count == 1 ? keys[0].1 : keys.map { "\($0.0): \($0.1)" }.joined(separator: "; ")) + ")"
      self.manifest = manifest
    }

    /// The drift event's account: `healing it` (`; applying watch.yaml's pending change to
    /// emergency` when it does), or `not healed: watch.yaml does not set what changed in
    /// reminder.custom["Lunch"] (enabled); applying watch.yaml's pending change to reminder.drinking`.
    var drift: String {
      var text = notHealed.isEmpty ? "healing it" : "not healed: \(manifest) does not set what changed in \(notHealed.joined(separator: ", "))\(fields)"
      if !notHealed.isEmpty, !healed.isEmpty { text += "; healing \(healed.joined(separator: ", "))" }
      if !pending.isEmpty { text += "; applying \(manifest)'s pending change to \(pending.joined(separator: ", "))" }
      return text
    }

    /// What the `applied` event says was applied, before its counts: `healed the drift`, or
    /// `healed the drift in …`, each with ` and applied watch.yaml's pending change to …` when
    /// it did (that alone when it healed none).
    var applied: String {
      var parts: [String] = []
      if notHealed.isEmpty {
        parts.append("healed the drift")
      } else if !healed.isEmpty {
        parts.append("healed the drift in \(healed.joined(separator: ", "))")
      }
      if !pending.isEmpty { parts.append("applied \(manifest)'s pending change to \(pending.joined(separator: ", "))") }
      return parts.joined(separator: " and ")
    }

    /// What the `applied` event says after its counts about the drift it left: empty, or
    /// `; the drift in reminder.custom["Lunch"] is not healed: watch.yaml does not set what changed (enabled)`.
    var appliedLeft: String {
      notHealed.isEmpty ? "" : "; the drift in \(notHealed.joined(separator: ", ")) is not healed: \(manifest) does not set what changed\(fields)"
    }
  }
}
