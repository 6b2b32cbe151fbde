import Foundation
import Testing
import TSApply
@testable import TSDevice
import TSEngine
import TSModel

/// Records that never lie: whatever call of an apply fails, and however (no effect, or taking
/// effect with its answer lost), `drift` afterwards shows none of tsapply's own writes, and a
/// rerun converges to a watch that `drift` calls unchanged. On every platform profile.
@Suite struct RecordTruthTests {
  /// The manifest applied first on a `capabilities` watch (`changed` false), and the one whose
  /// apply is faulted: every part of it changes something.
  static func manifest(_ capabilities: DeviceCapabilities, changed: Bool) -> String {
    var yaml = """
      version: 1
      reminders:
        sedentary: {enabled: \(changed), period: {start: "09:00", end: "18:00", every: 1h}}
        drinking: {enabled: \(!changed)}

      """
    if capabilities.reminders.custom != nil {
      yaml += changed
        ? "  custom:\n    - {name: Walk, repeat: weekend, at: [\"19:30\"]}\n    - {name: Pills, repeat: everyday, at: [\"08:00\"]}\n"
        : "  custom:\n    - {name: Old, repeat: everyday, at: [\"10:00\"]}\n"
    }
    if capabilities.contacts.maxContacts > 0 {
      yaml += changed
        ? "contacts:\n  - {name: Ann, phone: \"+15550100\"}\n  - {name: Bob, phone: \"+15550111\"}\n"
        : "contacts:\n  - {name: Ann, phone: \"+15550100\"}\n"
    }
    if capabilities.contacts.supportsEmergencyContacts {
      yaml += "emergency:\n  sos: \(changed)\n  contacts:\n    - {name: Sam, phone: \"\(changed ? "+15550101" : "+15550199")\"}\n"
    }
    return yaml
  }

  /// (fault as `TSAPPLY_SIM_FAULT` with N for the call, profiles it runs on)
  static let faults: [(String, [String])] = [
    ("fail@N", PlatformProfile.all.map(\.name)),
    ("lands-then-fails@N", PlatformProfile.all.map(\.name)),
    ("lands-then-fails@N:9309", ["default", "fit"]),
    ("fail@N:1001", ["default"]),
  ]

  static let cases: [(String, String)] = faults.flatMap { fault, profiles in profiles.map { (fault, $0) } }

  @Test(arguments: cases)
  func driftNeverShowsTsapplysOwnWrites(_ fault: String, _ profileName: String) async throws {
    let profile = try PlatformProfile.named(profileName)
    let first = Self.manifest(profile.capabilities, changed: false)
    let second = Self.manifest(profile.capabilities, changed: true)
    // How many link calls the faulted apply makes when nothing fails.
    let clean = try Workspace(profile: profile)
    _ = try await clean.open().apply(try clean.document(first), options: Workspace.automatic(true))
    let counted = try await clean.open()
    _ = try await counted.apply(try clean.document(second), options: Workspace.automatic(true))
    let device = try #require(counted.device as? SimulatedDevice)
    let calls = await device.statistics().totalCalls
    #expect(calls > 4)

    for call in 1...calls {
      let label = "\(profileName) \(fault.replacingOccurrences(of: "N", with: "\(call)"))"
      let workspace = try Workspace(profile: profile)
      _ = try await workspace.open().apply(try workspace.document(first), options: Workspace.automatic(true))
      let faulted = try await workspace.open(fault: fault.replacingOccurrences(of: "N", with: "\(call)"))
      let secondDocument = try workspace.document(second)
      var failure: EngineError?
      do {
        _ = try await faulted.apply(secondDocument, options: Workspace.automatic(true))
      } catch {
        failure = error
      }
      // A write that landed without its answer is applied and the apply goes on: only a fault
      // at a read (or a write that did not land) fails it.
      #expect(failure != nil || fault.hasPrefix("lands"), "\(label): the apply did not fail")
      if case .apply(.partial(let partial, _))? = failure, case .outcomeUnknown(_, let found) = partial.cause {
        // A lost answer is judged against what the earlier steps left; a landed one never stops.
        #expect(found == .notApplied && !fault.hasPrefix("lands"), "\(label): \(found)")
      }

      let document = try workspace.document(second)
      let afterFailure = try await workspace.open().drift(document)
      #expect(afterFailure.hasRecord, "\(label)")
      #expect(afterFailure.drift.isEmpty, "\(label): drift after the failure: \(afterFailure.drift.map(\.address.rawValue))")

      _ = try await workspace.open().apply(document, options: Workspace.automatic(true))
      let afterRerun = try await workspace.open().drift(document)
      #expect(afterRerun.drift.isEmpty && afterRerun.pending.isEmpty,
              "\(label): after the rerun: drift \(afterRerun.drift.map(\.address.rawValue)), pending \(afterRerun.pending.resourceChanges.map(\.address.rawValue))")
    }
  }

  /// A change made on the watch before an apply stays drift when the apply stops (at any call,
  /// failing or with its answer lost) before it writes over it: the record keeps what the last
  /// apply left for every part this apply did not write. Only what it did write stops being
  /// drift. A rerun that converges leaves no drift.
  @Test(arguments: ["fail@N", "lands-then-fails@N"])
  func aChangeOnTheWatchStaysDriftUntilAnApplyWritesOverIt(_ fault: String) async throws {
    let profile = PlatformProfile.default
    let first = Self.manifest(profile.capabilities, changed: false)
    let second = Self.manifest(profile.capabilities, changed: true)
    for call in 1...12 {
      let label = fault.replacingOccurrences(of: "N", with: "\(call)")
      let workspace = try Workspace(profile: profile)
      _ = try await workspace.open().apply(try workspace.document(first), options: Workspace.automatic(true))
      // The wearer (or a carer's phone) clears the emergency list, adds a contact and turns the
      // drinking reminder off.
      let onWatch = try #require(try await workspace.open().device as? SimulatedDevice)
      try onWatch.simulateEmergencyChange(contacts: [], sosOn: false)
      try onWatch.simulateContactAdd(Contact(name: "Zed", phoneNum: "+15550188"))
      _ = try onWatch.simulateReminderToggle(id: try #require(ReminderKind.drinking.builtInID))
      let document = try workspace.document(second)
      let changed = Set(try await workspace.open().drift(document).drift.map(\.address))
      #expect(changed.count == 3, "\(label): \(changed.map(\.rawValue))")

      do {
        _ = try await workspace.open(fault: label).apply(document, options: Workspace.automatic(true))
      } catch {}
      let after = try await workspace.open().drift(document)
      let drift = Set(after.drift.map(\.address)), pending = Set(after.pending.resourceChanges.map(\.address))
      #expect(drift.isSubset(of: changed), "\(label): tsapply's own writes as drift: \(drift.subtracting(changed).map(\.rawValue))")
      #expect(changed.intersection(pending).isSubset(of: drift),
              "\(label): a change on the watch no apply wrote over is no longer drift: \(changed.intersection(pending).subtracting(drift).map(\.rawValue))")

      _ = try await workspace.open().apply(document, options: Workspace.automatic(true))
      let converged = try await workspace.open().drift(document)
      #expect(converged.drift.isEmpty && converged.pending.isEmpty, "\(label): after the rerun: \(converged.drift.map(\.address.rawValue))")
    }
  }

  /// A default watch with the first manifest applied; the second manifest, not applied.
  static func appliedFirst() async throws -> (Workspace, ManifestDocument, Watch) {
    let workspace = try Workspace()
    let first = try workspace.document(manifest(PlatformProfile.default.capabilities, changed: false))
    let second = try workspace.document(manifest(PlatformProfile.default.capabilities, changed: true), name: "second.yaml")
    let watch = try await workspace.open()
    _ = try await watch.apply(first, options: Workspace.automatic(true))
    return (workspace, second, watch)
  }

  /// A stale record (a process killed between a write and its record) is refreshed by an apply
  /// that finds nothing to change, so drift stops reporting the apply's own change.
  @Test func anApplyWithNothingToChangeRefreshesAStaleRecord() async throws {
    let (workspace, second, watch) = try await Self.appliedFirst()
    let stale = try Data(contentsOf: URL(fileURLWithPath: watch.home.lastAppliedPath))
    _ = try await watch.apply(second, options: Workspace.automatic(true))
    try stale.write(to: URL(fileURLWithPath: watch.home.lastAppliedPath))
    #expect(try await workspace.open().drift(second).drift.isEmpty == false, "the stale record shows no drift")

    guard case .noChanges = try await workspace.open().apply(second, options: Workspace.automatic(true)) else {
      Issue.record("the rerun changed something")
      return
    }
    #expect(try await workspace.open().drift(second).drift.isEmpty)
  }

  /// When tsapply last wrote (`Watch.lastWrite`, "Last applied") moves with a write, not with a
  /// refresh, and is never made up: a record without `applied_at` (from a tsapply before it
  /// kept it) gives the end of the last apply in the history that wrote, never its file's time;
  /// with no such apply it says `never`, and keeps saying so across the refreshes of applies
  /// that find nothing to change.
  @Test func aRefreshKeepsTheTimeOfTheLastWriteAndNeverMakesOneUp() async throws {
    let (workspace, second, watch) = try await Self.appliedFirst()
    let path = watch.home.lastAppliedPath
    let stale = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
    let written = try #require(stale["applied_at"] as? String)
    #expect(watch.lastWrite() == .at(try #require(ApplyHistory.parseTime(written))))
    _ = try await watch.apply(second, options: Workspace.automatic(true))
    var matched = stale
    matched["applied_at"] = nil
    try JSONSerialization.data(withJSONObject: matched).write(to: URL(fileURLWithPath: path))
    try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_780_000_000)], ofItemAtPath: path)
    let ended = try #require(try watch.history.read().entries.last)
    let endedAt = try #require(ended.date)
    #expect(ended.result == "applied" && watch.lastWrite() == .at(endedAt))
    // No history that says it wrote either: never, not the file's time.
    try FileManager.default.removeItem(atPath: watch.history.path)
    try FileManager.default.removeItem(atPath: watch.history.headPath)
    #expect(watch.lastWrite() == .never)
    guard case .noChanges = try await workspace.open().apply(second, options: Workspace.automatic(true)) else {
      Issue.record("the rerun changed something")
      return
    }
    #expect(LastApplied.read(at: path, device: watch.identity)?.appliedAt == nil)
    #expect(watch.lastWrite() == .never)
    #expect(try await workspace.open().drift(second).drift.isEmpty)
  }

  /// A watch that already held the manifest (set up elsewhere, or moved to another phone): the
  /// apply that finds it matching records it, and tsapply has never written to it.
  @Test func aWatchThatMatchedAlreadyWasNeverWritten() async throws {
    let workspace = try Workspace()
    let watch = try await workspace.open()
    #expect(watch.lastWrite() == nil)
    let factory = try workspace.document("version: 1\n")
    guard case .noChanges = try await watch.apply(factory, options: Workspace.automatic(true)) else {
      Issue.record("a factory watch did not match an empty manifest")
      return
    }
    #expect(watch.lastApplied() != nil && watch.lastWrite() == .never)
    _ = try await watch.apply(try workspace.document("contacts:\n  - {name: Ann, phone: \"+15550100\"}\n"), options: Workspace.automatic(true))
    #expect(watch.lastWrite()?.date != nil)
  }

  /// A write whose outcome was unknown (its answer lost, the read-back failed too) is settled by
  /// the next apply that reads the watch holding it, even one that fails before it writes: the
  /// record then says the write landed, so the wearer putting the old list back is drift
  /// (fresh-eyes finding: `drift` said "No drift" for good, the record still allowing either).
  @Test func anApplyThatReadsAnUnconfirmedWriteLandedSettlesTheRecord() async throws {
    let workspace = try Workspace()
    let ann = "contacts:\n  - {name: Ann, phone: \"+15550100\"}\n"
    let bob = ann + "  - {name: Bob, phone: \"+15550111\"}\n"
    _ = try await workspace.open().apply(try workspace.document(ann), options: Workspace.automatic())
    // The calls: read the watch (3), read the contacts before writing (4), write them (5: it
    // lands, its answer is lost), read them back (6: fails).
    let lost = try await workspace.open(fault: "lands-then-fails@5,fail@6")
    do {
      _ = try await lost.apply(try workspace.document(bob), options: Workspace.automatic())
      Issue.record("the faulted apply did not fail")
    } catch {}
    let unsettled = try #require(LastApplied.read(at: lost.home.lastAppliedPath, device: lost.identity))
    #expect(unsettled.unconfirmed?.contacts.map(\.name) == ["Ann", "Bob"] && unsettled.state.contacts.map(\.name) == ["Ann"])
    // The next apply reads the watch (Bob is there: the write landed), then fails before writing.
    let failing = try await workspace.open(fault: "fail@4")
    do {
      _ = try await failing.apply(try workspace.document(bob + "  - {name: Cid, phone: \"+15550122\"}\n"), options: Workspace.automatic())
      Issue.record("the second faulted apply did not fail")
    } catch {
      guard case EngineError.apply(let failure)? = error as? EngineError else { Issue.record("\(error)"); return }
      #expect(failure.reached == nil, "it wrote")
    }
    let settled = try #require(LastApplied.read(at: failing.home.lastAppliedPath, device: failing.identity))
    #expect(settled.unconfirmed == nil && settled.state.contacts.map(\.name) == ["Ann", "Bob"])
    #expect(settled.appliedAt == unsettled.appliedAt, "settling is no new write")
    // The wearer removes Bob: the watch holds the list from before the write, which is drift now.
    let device = try #require(try await workspace.open().device as? SimulatedDevice)
    #expect(try device.simulateContactRemove(name: "Bob") == 1)
    let drift = try await workspace.open().drift(try workspace.document(bob)).drift
    #expect(drift.map(\.address) == [.contacts])
  }

  /// A record holding a write whose outcome is unknown: the watch holding either state is no
  /// drift; anything else is.
  @Test(arguments: [("the write did not land", 0, false), ("the write landed", 1, false), ("changed on the watch", 2, true)])
  func anUnconfirmedWriteIsNotDrift(_ name: String, _ holds: Int, _ drifted: Bool) {
    let profile = PlatformProfile.default
    var before = profile.factoryState
    before.contacts = [Contact(name: "Ann", phoneNum: "+15550100", shortName: "A")]
    var landed = before
    landed.contacts.append(Contact(name: "Bob", phoneNum: "+15550111", shortName: "B"))
    var other = before
    other.contacts = [Contact(name: "Zed", phoneNum: "+15550199", shortName: "Z")]
    let record = LastApplied(device: "sim:/w.json", profile: profile.name, state: before, unconfirmed: landed)
    let drift = Drift.changes(since: record, current: [before, landed, other][holds], capabilities: profile.capabilities)
    #expect(drift.isEmpty != drifted, "\(name): \(drift.map(\.address.rawValue))")
  }

  /// The watch changed after a write whose outcome is unknown (its apply killed or cut off): the
  /// drift is said against whichever of the two states is nearer to what the watch holds — the
  /// write that landed is not shown as the wearer's (fresh-eyes finding: the contact tsapply had
  /// just written was listed as added on the watch, beside the wearer's removal).
  @Test(arguments: [
    // Bob is there: the write landed; only Ann's removal is the wearer's.
    ("landed, then Ann removed on the watch", ["Bob"], ["- Ann"]),
    // Bob is not: it did not land; Zed is the wearer's.
    ("not landed, then Zed added on the watch", ["Ann", "Zed"], ["+ Zed"]),
  ])
  func driftAfterAnUnconfirmedWriteIsSaidAgainstTheNearerState(_ name: String, _ holds: [String], _ said: [String]) {
    let profile = PlatformProfile.default
    let people = ["Ann": "+15550100", "Bob": "+15550111", "Zed": "+15550199"]
    func contact(_ name: String) -> Contact { Contact(name: name, phoneNum: people[name] ?? "", shortName: String(name.prefix(1))) }
    var before = profile.factoryState
    before.contacts = [contact("Ann")]
    var landed = before
    landed.contacts.append(contact("Bob"))
    var now = before
    now.contacts = holds.map(contact)
    let record = LastApplied(device: "sim:/w.json", profile: profile.name, state: before, unconfirmed: landed)
    let drift = Drift.changes(since: record, current: now, capabilities: profile.capabilities)
    let fields = drift.flatMap(\.fields).map { change -> String in
      let value = change.after ?? change.before
      guard case .object(let entries)? = value, case .string(let contactName)? = entries.first?.value else { return "?" }
      return (change.after == nil ? "- " : change.before == nil ? "+ " : "~ ") + contactName
    }
    #expect(drift.map(\.address) == [.contacts] && fields == said, "\(name): \(fields)")
  }

  /// A drift check whose slow read of the watch overlaps a person's apply (the apply writes and
  /// records after the check read the contacts, before it read the record) reports no drift:
  /// the record is taken as of the moment the watch was read. Compared across that moment, the
  /// apply's own write read as undone on the watch (fresh-eyes finding: a monitor beside a
  /// person's apply raised "SOS at risk"). Whatever the timing, the check must not report drift.
  @Test func aDriftCheckOverlappingAnApplyDoesNotReportTheApplysOwnWrite() async throws {
    let workspace = try Workspace()
    let before = try workspace.document("contacts:\n  - {name: Ann, phone: \"+15550100\"}\n")
    _ = try await workspace.open().apply(before, options: Workspace.automatic())
    let after = try workspace.document("contacts:\n  - {name: Ann, phone: \"+15550100\"}\n  - {name: Bo, phone: \"+15550101\"}\n")
    let slow = try await Engine(registry: DeviceRegistry(schemes: [SimulatorScheme()], defaultSpec: "sim:.tsapply/device.json"),
                                environment: ["TSAPPLY_STATE_DIR": workspace.directory + "/state", "TSAPPLY_SIM_LATENCY": "300,0"],
                                currentDirectory: workspace.directory).open(workspace.spec)
    async let checked = slow.drift(after)
    // Reminders are read at once, then contacts after 300 ms, emergency after 600: the apply
    // lands between the contacts' read and the record's.
    try await Task.sleep(for: .milliseconds(450))
    _ = try await workspace.open().apply(after, options: Workspace.automatic())
    let report = try await checked
    #expect(report.drift.isEmpty, "\(report.drift.map(\.address))")
    #expect(report.pending.isEmpty)
  }
}
