import Foundation
import Testing
import TSApply
import TSDevice
import TSEngine
import TSModel

/// An apply that holds back the manifest's own changes (`ApplyOptions.holdsBackUnapplied`, the
/// fleet monitor's heal of a watch a staged rollout has not reached): it undoes what changed on
/// the watch, back to what the last apply left, and writes none of the manifest's new changes.
@Suite struct HoldBackTests {
  /// The reconcile tests' contacts and emergency contacts, with reminders.
  static let start = ReconcileOutcomeTests.start + """
    reminders:
      drinking:
        enabled: true
        period: {start: "08:00", end: "20:00", every: 2h}
      custom:
        - {name: Lunch, at: ["12:00"]}

    """

  /// What the wearer does on the watch.
  enum WearerChange { case none, emergencyCleared, contactRemoved }

  /// (case, the manifest's new change as (from, to) in `start`, the wearer's change, the outcome's word)
  static let cases: [(String, (String, String), WearerChange, String)] = [
    ("a new interval, emergency cleared", ("every: 2h", "every: 90m"), .emergencyCleared, "applied"),
    ("a new contact, emergency cleared", ("- {name: Ann, phone: \"+15550100\"}", "- {name: Ann, phone: \"+15550100\"}\n  - {name: Bob, phone: \"+15550101\"}"),
     .emergencyCleared, "applied"),
    ("a new emergency contact, emergency cleared", ("- {name: Dad, phone: \"+15550111\"}", "- {name: Dad, phone: \"+15550111\"}\n    - {name: Eve, phone: \"+15550112\"}"),
     .emergencyCleared, "applied"),
    ("a new custom reminder, a contact removed", ("- {name: Lunch, at: [\"12:00\"]}", "- {name: Lunch, at: [\"12:00\"]}\n    - {name: Walk, at: [\"16:00\"]}"),
     .contactRemoved, "applied"),
    ("SOS switched off, a contact removed", ("sos: true", "sos: false"), .contactRemoved, "applied"),
    ("a new interval, nothing changed on the watch", ("every: 2h", "every: 90m"), .none, "no_changes"),
  ]

  @Test(arguments: cases.indices)
  func onlyTheDriftIsUndone(_ index: Int) async throws {
    let (name, (from, to), change, word) = Self.cases[index]
    let space = try Workspace()
    _ = try await space.open().apply(try space.document(Self.start), options: Workspace.automatic(false))
    let left = try await space.state()
    let device = try SimulatedDevice(path: space.directory + "/watch.json")
    switch change {
    case .none: break
    case .emergencyCleared: try device.simulateEmergencyChange(contacts: [], sosOn: false)
    case .contactRemoved: try device.simulateContactRemove(name: "Ann")
    }
    let changed = Self.start.replacingOccurrences(of: from, with: to)
    #expect(changed != Self.start, "\(name)")
    let watch = try await space.open()
    let document = try space.document(changed)
    #expect(!watch.unapplied(document).isEmpty, "\(name): the manifest has a change of its own")
    var options = ApplyOptions(approval: .automatic(allowDestroy: false), command: "test")
    options.holdsBackUnapplied = true
    let outcome = await Reconcile.apply(document, to: watch, allowDestroy: false, options: options)
    #expect(outcome.word == word, "\(name): \(outcome.error.map { "\($0)" } ?? "")")
    #expect(try await space.state() == left, "\(name): the watch holds what the last apply left")
    // Without holding back, the same apply carries the change.
    let carried = await Reconcile.apply(document, to: watch, allowDestroy: true,
                                        options: ApplyOptions(approval: .automatic(allowDestroy: true), command: "test"))
    let after = try await space.state()
    #expect(carried.word == "applied" && after != left, "\(name)")
  }

  /// An apply killed after its write landed and before it recorded it leaves the write as the
  /// record's `unconfirmed`. The watch holds it, and drift and status count it as applied; a
  /// heal holding the manifest's changes back must keep it too, not write the record's older
  /// state back over it (a fresh-eyes tester's canary had its new interval undone by a heal).
  @Test func aHealKeepsAWriteThatLandedBeforeItsApplyWasKilled() async throws {
    let space = try Workspace()
    let watch = try await space.open()
    _ = try await watch.apply(try space.document(Self.start), options: Workspace.automatic(false))
    let left = try await space.state()
    let changed = try space.document(Self.start.replacingOccurrences(of: "every: 2h", with: "every: 90m"))
    _ = try await watch.apply(changed, options: Workspace.automatic(false))
    let written = try await space.state()
    // As the killed apply left its record: the older state, and the write it was making.
    try LastApplied(device: watch.identity, profile: watch.capabilities.profile, state: left, unconfirmed: written)
      .write(to: watch.home.lastAppliedPath)
    let device = try SimulatedDevice(path: space.directory + "/watch.json")
    try device.simulateEmergencyChange(contacts: [], sosOn: false)
    let now = try await space.state()
    #expect(watch.unapplied(changed, current: now).isEmpty, "the write landed: nothing of the manifest is unapplied")
    #expect(watch.unapplied(changed).contains(.builtIn(.drinking)), "without the watch, the record's older state is all there is")
    var options = ApplyOptions(approval: .automatic(allowDestroy: false), command: "test")
    options.holdsBackUnapplied = true
    let outcome = await Reconcile.apply(changed, to: try await space.open(), allowDestroy: false, options: options)
    #expect(outcome.word == "applied", "\(outcome.error.map { "\($0)" } ?? "")")
    #expect(try await space.state() == written, "the emergency contacts are back and the landed interval is kept")
  }
}
