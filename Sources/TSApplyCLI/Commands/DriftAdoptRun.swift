import Foundation
import TSApply
import TSEngine
import TSManifest
import TSModel
import TSPlan

/// `tsapply drift --adopt`: the command line's side of adopting drift (`Watch.adoption(of:…)`,
/// `DriftAdoption`): says what was adopted and what not, shows the unified diff of the manifest
/// (numbers masked with `--redact`, as `plan --redact` masks them), asks as `apply` does, then
/// rewrites the manifest (keeping its mode) and records the adopted resources
/// (`Watch.recordAdopted`). Shared by one watch and a fleet's watch.
package struct DriftAdoptRun {
  package var watch: Watch
  package var autoApprove: Bool
  package var redact: Bool
  package var context: CommandContext
  /// Recorded as the lock's holder while the record is written.
  package var commandLine: String
  /// For a fleet's watch: what else to say about what was not adopted (values its layers set).
  package var scopeNote: String? = nil
  /// The manifest the watch gets from a text of the file (a fleet's watch: merged with its
  /// layers); `nil`: the text alone.
  package var merge: (@Sendable ([UInt8]) -> Manifest?)? = nil
  /// The command that applies the manifest to the watch, for advice (a fleet's watch:
  /// `tsapply apply --fleet FILE --watch NAME`); `nil`: `tsapply apply` of the manifest.
  package var applyCommand: String? = nil
  /// How advice names adopting again at a terminal, when not `tsapply drift --adopt` with the
  /// watch and the manifest (a fleet's watch: `tsapply drift --adopt --fleet F --watch W`).
  package var adoptCommand: String? = nil

  /// A run on `watch`, as the command line asks.
  package init(watch: Watch, autoApprove: Bool, redact: Bool, context: CommandContext, commandLine: String) {
    self.watch = watch
    self.autoApprove = autoApprove
    self.redact = redact
    self.context = context
    self.commandLine = commandLine
  }

  /// Adopts the drift of `report` into the manifest `manifest` (absolute path, name as written,
  /// the bytes the report was made from).
  /// - Throws: `CommandFailure` when there is no record, the adoption is refused or declined,
  ///   the file changed meanwhile, or it cannot be written.
  package func run(_ report: DriftReport, manifest: (path: String, displayName: String, bytes: [UInt8])) async throws -> ExitStatus {
    let out = context.stdout
    guard report.hasRecord else {
      throw CommandFailure("no record of an apply to this watch: drift cannot be told, so there is nothing to adopt; run 'tsapply apply' first")
    }
    guard !report.drift.isEmpty else {
      out.write("No drift: the watch holds what the last apply left; nothing to adopt into \(manifest.displayName).\n")
      return .success
    }
    let outcome: DriftAdoption.Outcome
    do { outcome = try watch.adoption(of: report, manifest: manifest.bytes, file: manifest.displayName, merge: merge) } catch {
      throw CommandFailure(error.description)
    }
    let mask = PhoneRedaction.Mask(redact: redact, manifest: manifest.bytes, changes: report.drift)
    for adopted in outcome.adopted {
      out.write("Adopting \(mask.address(adopted.address)): \(mask.text(adopted.edits.joined(separator: ", "))).\n")
    }
    for address in outcome.unmanaged where !outcome.unstated.contains(address) {
      out.write("Keeping \(mask.address(address)): \(manifest.displayName) does not manage what changed, so apply leaves it as the watch has it.\n")
    }
    for address in outcome.unstated {
      out.write("Not adopted \(mask.address(address)): \(manifest.displayName) does not state it at all, so it stays drift for a manifest "
        + "that does (adopt it into that one).\n")
    }
    for (address, reason) in outcome.notAdopted {
      out.write("Not adopted \(mask.address(address)): \(mask.text(reason)).\n")
    }
    if !outcome.notAdopted.isEmpty, let scopeNote { out.write(scopeNote + "\n") }
    // SOS switched off or emergency contacts changed on the watch, made what the manifest asks:
    // said before the question, with the way that keeps SOS as the manifest has it (fresh-eyes
    // finding: adopting, as the advice said, turned SOS off in the manifest without a word).
    let adoptedAddresses = Set(outcome.adopted.map(\.address))
    let adoptedDrift = report.drift.filter { adoptedAddresses.contains($0.address) }
    if adoptedDrift.putSOSAtRisk {
      // Said the way it goes: a press that would reach no one (SOS off, or no emergency contact
      // left) is at risk; one that would reach others than the file says (the wearer switched
      // SOS on, or changed a number) is told so (fresh-eyes fe99: "a press may reach no one"
      // for SOS switched on).
      let reachesNoOne = adoptedDrift.contains { change in
        guard change.address == .emergency, case .emergency(let now)? = change.after else { return false }
        return !now.isSosOn || now.contacts.isEmpty
      }
      let apply = applyCommand ?? CLIWatch(watch: watch, context: context).command("apply", manifest.displayName)
      // No question to answer no to: an unattended adoption does not make SOS at risk what the
      // manifest asks (fresh-eyes fe96 #8: "answer no", and no question was asked).
      guard !autoApprove else {
        // Each command whole, with the watch and the manifest, to paste (fresh-eyes fe99 #3).
        let adopt = adoptCommand ?? CLIWatch(watch: watch, context: context).command("drift --adopt", manifest.displayName)
        throw CommandFailure("not adopted with --auto-approve: " + (reachesNoOne ? "it puts SOS at risk" : "it changes whom an SOS press reaches")
          + "; run '\(adopt)' at a terminal to answer, or '\(apply)' to write " + (reachesNoOne ? "SOS" : "the emergency list as \(manifest.displayName) has it")
          + " back; nothing was written")
      }
      out.write((reachesNoOne ? "Warning: this puts SOS at risk: " : "Warning: this changes whom an SOS press reaches: ")
        + "the SOS switch or emergency contacts as changed on the watch become what \(manifest.displayName) asks for, so a press may reach "
        + (reachesNoOne ? "no one or not whom it says now" : "others than it says now") + ". To keep SOS as \(manifest.displayName) "
        + "has it, answer no and apply it instead ('\(apply)' writes it back).\n")
    }
    let agreed = outcome.agreed
    guard outcome.text != manifest.bytes else {
      // Nothing to write, yet drift would stop reporting these: asked as a write is (fresh-eyes
      // finding: recorded without a question, also without a terminal).
      if !agreed.isEmpty {
        guard try confirm(manifest.displayName, question: "Do you want drift to stop reporting "
                            + agreed.sorted().map(mask.address).joined(separator: ", ") + " (the watch's values recorded as adopted)?") else {
          throw CommandFailure("adoption declined: nothing was recorded")
        }
        try await record(report, agreed)
      }
      out.write(outcome.notAdopted.isEmpty ? "Nothing to write into \(manifest.displayName).\n"
                : "Nothing was written into \(manifest.displayName)." + Self.stillUndone(outcome, mask: mask) + "\n")
      return outcome.notAdopted.isEmpty ? .success : .failure
    }
    out.write("\n" + mask.text(UnifiedDiff.diff(String(decoding: manifest.bytes, as: UTF8.self), String(decoding: outcome.text, as: UTF8.self),
                                               file: manifest.displayName)))
    guard try confirm(manifest.displayName) else {
      throw CommandFailure("adoption declined: \(manifest.displayName) was not changed")
    }
    // The file is rewritten only if it still holds what was adopted into (an editor may have
    // saved it meanwhile).
    let current = ManifestInput.source(manifest.path, context: context).read()
    guard case .success(let bytes) = current, bytes == manifest.bytes else {
      throw CommandFailure("\(manifest.displayName) changed while adopting; it was not rewritten: run 'tsapply drift --adopt' again")
    }
    do { try ManifestInput.rewrite(outcome.text, at: manifest.path) } catch { throw CommandFailure(error.description) }
    try await record(report, agreed)
    out.write("\nAdopted \(outcome.adopted.count) \(outcome.adopted.count == 1 ? "resource" : "resources") into \(manifest.displayName): 'tsapply plan' no longer undoes what was adopted."
      + Self.stillUndone(outcome, mask: mask) + "\n")
    return outcome.notAdopted.isEmpty ? .success : .failure
  }

  /// What the next apply of the adopted manifest still undoes, planned against the watch
  /// (`DriftAdoption.Outcome.undone`): ` The next apply still undoes what changed in emergency.`;
  /// ` What was not adopted, the manifest already gives as the watch holds it: …` when something
  /// was not adopted yet the plan changes nothing there; empty when everything was adopted.
  static func stillUndone(_ outcome: DriftAdoption.Outcome, mask: PhoneRedaction.Mask) -> String {
    if !outcome.undone.isEmpty {
      return " The next apply still undoes what changed in " + outcome.undone.map(mask.address).joined(separator: ", ") + "."
    }
    return outcome.notAdopted.isEmpty ? "" : " What was not adopted, the manifest already gives as the watch holds it: the next apply does not undo it."
  }

  /// Records `addresses` as the watch holds them, so drift stops reporting them.
  private func record(_ report: DriftReport, _ addresses: Set<ResourceAddress>) async throws {
    do { try await watch.recordAdopted(report, addresses: addresses, command: commandLine) } catch {
      throw CommandFailure("the manifest states the watch's values, but the drift record was not updated (drift still reports them until the next apply): \(error)")
    }
  }

  /// `--auto-approve`, or 'yes' at a terminal; without a terminal it refuses, as `apply` does.
  private func confirm(_ file: String, question: String? = nil) throws -> Bool {
    if autoApprove { return true }
    guard context.stdinIsTerminal else {
      throw CommandFailure("refusing to adopt without confirmation: standard input is not a terminal.\n  Re-run with --auto-approve.")
    }
    context.stdout.write("""

      \(question ?? "Do you want to write these changes into \(file)?")
        Only 'yes' will be accepted to approve.

        Enter a value: 
      """)
    return context.readLine()?.trimmingCharacters(in: .whitespaces) == "yes"
  }
}
