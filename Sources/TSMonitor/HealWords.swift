import TSApply
import TSEngine
import TSModel
import TSPlan

extension Monitor {
  /// What an applied heal did about a drift, in the events' words: the drifted resources it
  /// undid, the manifest's pending change it applied besides (what it changed that undoes no
  /// drift, and what it changed in a drifted resource the manifest itself changes since the last
  /// apply, `DriftReport.own`: a reset watch healed with an emergency number not applied before),
  /// and the drift it left as the watch holds it (`HealOutcome.applied`'s `notHealed`): because
  /// the manifest does not set what changed, or because undoing it is unsafe and the heal wrote
  /// only its safe part (`ApplyReport.heldBackUnsafe`). `mask` renders addresses.
  struct HealWords {
    /// The masked addresses of the drift left as the watch holds it (both reasons).
    var notHealed: [String]
    /// Of those, the ones left because the heal held them back as unsafe.
    private var unsafeLeft: [String]
    /// The held-back findings' words: those of undoing the wearer's change, and those of the
    /// manifest's own pending change (`pendingUnsafe`).
    private var undoingWords: String
    private var pendingWords: String
    private var healed: [String]
    private var pending: [String]
    private var fields: String
    private var manifest: String
    private var planCommand: String

    init(drift: [ResourceChange], own: Set<ResourceAddress>, applied: ApplyReport, notHealed allLeft: [ResourceChange],
         pendingUnsafe: [SafetyFinding], manifest: String, planCommand: String, mask: PhoneRedaction.Mask) {
      let left = Set(allLeft.map(\.address))
      let undone = drift.map(\.address).filter { !left.contains($0) }
      self.notHealed = allLeft.map { mask.text($0.address.rawValue) }
      let isHeld = { (address: ResourceAddress) in Watch.holds(address, heldBack: applied.heldBackUnsafe) }
      // Held as the watch holds it, also when the heal wrote part of it (SOS switched on beside an
      // emergency list left as it is): the list is left, said so.
      unsafeLeft = drift.filter { isHeld($0.address) }.map { mask.text($0.address.rawValue) }
      let pendingKinds = Set(pendingUnsafe.map(\.kind))
      undoingWords = mask.text(applied.heldBackUnsafe.filter { !pendingKinds.contains($0.kind) }.map(\.description).joined(separator: "; "))
      pendingWords = mask.text(pendingUnsafe.map(\.description).joined(separator: "; "))
      let notHealed = allLeft.filter { !isHeld($0.address) }
      healed = undone.map { mask.text($0.rawValue) }
      // A held resource's own pending change was held back with it (`held`), not applied.
      pending = applied.plan.resourceChanges.map(\.address).filter { !undone.contains($0) || own.contains($0) }
        .filter { pendingUnsafe.isEmpty || !isHeld($0) }.map { mask.text($0.rawValue) }
      // `(enabled)` for one resource, `(reminder.custom["Lunch"]: enabled; contacts: …)` for more.
      let keys = notHealed.map { change in
        (mask.text(change.address.rawValue), change.fields.map { mask.text(ChangeBrief.key($0.field)) }
          .reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }.joined(separator: ", "))
      }.filter { !$0.1.isEmpty }
      fields = keys.isEmpty ? "" : " (" + (notHealed.count == 1 ? keys[0].1 : keys.map { "\($0.0): \($0.1)" }.joined(separator: "; ")) + ")"
      self.manifest = manifest
      self.planCommand = planCommand
    }

    /// The drift event's account: `healing it` (`; applying watch.yaml's pending change to
    /// emergency` when it does), or `not healed: watch.yaml does not set what changed in
    /// reminder.custom["Lunch"] (enabled); applying watch.yaml's pending change to reminder.drinking`;
    /// for a heal that wrote its safe part, what it held back and why (`held`).
    var drift: String {
      var text = notSet.isEmpty ? "" : "not healed: \(manifest) does not set what changed in \(notSet.joined(separator: ", "))\(fields)"
      if !unsafeLeft.isEmpty { text += (text.isEmpty ? "" : "; ") + "not healed: " + unsafeText(unsafeLeft.joined(separator: ", ")) }
      if text.isEmpty { text = "healing it" }
      if !notHealed.isEmpty, !healed.isEmpty { text += "; healing \(healed.joined(separator: ", "))" }
      if !pending.isEmpty { text += "; applying \(manifest)'s pending change to \(pending.joined(separator: ", "))" }
      return text + held
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
    /// `; the drift in reminder.custom["Lunch"] is not healed: watch.yaml does not set what
    /// changed (enabled)`, or `; the drift in contacts is not healed: undoing it is unsafe
    /// (removes 3 contacts); left as the watch holds it (--allow-destroy would allow it)`.
    var appliedLeft: String {
      var text = notSet.isEmpty ? "" : "; the drift in \(notSet.joined(separator: ", ")) is not healed: \(manifest) does not set what changed\(fields)"
      if !unsafeLeft.isEmpty { text += "; the drift in \(unsafeLeft.joined(separator: ", ")) is not healed: " + unsafeText("it") }
      return text + held
    }

    /// The masked addresses of the drift left because the manifest does not set what changed.
    private var notSet: [String] { notHealed.filter { !unsafeLeft.contains($0) } }

    /// Why `what` (drift held back as unsafe) is left: undoing it is unsafe, or the manifest's
    /// own unsafe pending change to it is held back with it.
    private func unsafeText(_ what: String) -> String {
      undoingWords.isEmpty ? "\(what == "it" ? "it" : what) is left as the watch holds it, with \(manifest)'s own pending change to it, which is unsafe"
        : "undoing \(what == "it" ? "it" : "the change to " + what) is unsafe (\(undoingWords)); left as the watch holds it (--allow-destroy would allow it)"
    }

    /// The manifest's own unsafe pending change the heal held back: empty, or `; held back
    /// watch.yaml's own pending change, which is unsafe (removes 1 emergency contact): review it
    /// with 'tsapply plan' and apply it yourself`.
    private var held: String {
      pendingWords.isEmpty ? ""
        : "; held back \(manifest)'s own pending change, which is unsafe (\(pendingWords)): review it with '\(planCommand)' and apply it yourself"
    }
  }
}
