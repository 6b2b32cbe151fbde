import Foundation
import Testing
import TSDevice
import TSEngine
import TSFleet
import TSModel
import TSMonitor
import TSPlan

/// Planning and applying a fleet of simulated watches concurrently through the engine: every
/// watch gets its merged manifest, failures stay with their watch, and the safety gate and
/// `-parallelism` hold per watch.
@Suite struct FleetRunnerTests {
  /// A fleet of five: three that work, one whose device does not exist, one whose own manifest
  /// has an error, and (npk) one the defaults' `once` reminder does not fit.
  static func fleet() throws -> FleetSpace {
    let space = try FleetSpace()
    try space.write("wards/ward-a.yaml", """
      reminders:
        custom:
          - {name: Lunch, repeat: everyday, at: ["12:00"]}
          - {name: Check-up, repeat: once, at: ["10:00"]}
      contacts:
        - {name: Ward desk, phone: "+15550100"}

      """)
    for name in ["room-1", "room-2", "room-3"] {
      try space.watch(name)
      try space.write("residents/\(name).yaml", "emergency:\n  sos: true\n  contacts:\n    - {name: Family \(name), phone: \"+1555011\(name.last!)\"}\n")
    }
    try space.write("residents/room-5.yaml", "contacts:\n  - {name: Niece, phone: \"12-AB\"}\n")
    try space.watch("room-5")
    try space.watch("room-6", profile: .npk)
    var fleet = "defaults: wards/ward-a.yaml\nwatches:\n"
    for name in ["room-1", "room-2", "room-3", "room-5"] {
      fleet += "  \(name): {device: \"sim:watches/\(name).json\", manifest: residents/\(name).yaml}\n"
    }
    fleet += "  room-4: {device: \"sim:watches/room-4.json\", manifest: residents/room-1.yaml}\n"
    fleet += "  room-6: {device: \"sim:watches/room-6.json\"}\n"
    try space.write("fleet.yaml", fleet)
    return space
  }

  @Test func plansEveryWatchAndKeepsEachFailureWithItsWatch() async throws {
    let space = try Self.fleet()
    let loaded = try space.load()
    let peak = Peak()
    let results = await FleetRunner(engine: space.engine, parallelism: 2).run(loaded.members, progress: { peak.see($0) }) {
      _, document, watch throws(EngineError) in try await watch.plan(document).plan
    }
    #expect(results.map(\.member.name) == ["room-1", "room-2", "room-3", "room-5", "room-4", "room-6"])
    #expect(peak.most <= 2)
    for result in results.prefix(3) {
      let plan = try result.outcome.get()
      #expect(plan.resourceChanges.map(\.address.rawValue) == ["contacts", "emergency", "reminder.custom[\"Check-up\"]", "reminder.custom[\"Lunch\"]"])
    }
    guard case .failure(.input(let input)) = results[3].outcome,
          case .failure(.engine(.device(let missing))) = results[4].outcome,
          case .failure(.engine(.invalid(let unfit))) = results[5].outcome else {
      Issue.record("unexpected outcomes: \(results.map(\.outcome))")
      return
    }
    #expect(input.diagnostics.map(\.description).first?.hasPrefix("residents/room-5.yaml:2:26: error: contacts[0].phone:") == true)
    #expect(missing.message.hasPrefix("no simulated watch at \(space.directory)/watches/room-4.json"))
    // Plan-time problems with values from the defaults name the defaults' file and line.
    #expect(unfit.diagnostics.filter { $0.severity == .error }.map { "\($0.position!) \($0.field)" }
            == ["wards/ward-a.yaml:4:32 reminders.custom[1].repeat", "wards/ward-a.yaml:5:1 contacts"])
  }

  /// Each watch's manifests are read as the runner starts the watch and dropped when it is done
  /// (10,000 watches are planned holding the manifests of the ten under way only,
  /// docs/fleet.md "Scale"); `FleetMember.document` reads once and keeps what it read; a failed
  /// watch keeps the bytes its diagnostics point into.
  @Test func readsEachWatchsManifestsAsItStartsAndKeepsThemOnlyForAFailure() async throws {
    let space = try Self.fleet()
    let loaded = try space.load()
    func emergency(_ name: String) -> String { "emergency:\n  sos: true\n  contacts:\n    - {name: \(name), phone: \"+15550129\"}\n" }
    // Edited after the fleet was loaded: the runner uses the file as it is when the watch starts.
    try space.write("residents/room-2.yaml", emergency("Edited"))
    let results = await FleetRunner(engine: space.engine, parallelism: 2).run(loaded.members) { _, document, _ throws(EngineError) in
      String(decoding: document.bytes, as: UTF8.self)
    }
    #expect(try results[1].outcome.get().hasPrefix(emergency("Edited")))
    // Nothing was kept for it: `document` reads the file now, and keeps what it read.
    try space.write("residents/room-2.yaml", emergency("Later"))
    let member = loaded.members[1]
    #expect(String(decoding: try member.document.get().bytes, as: UTF8.self).hasPrefix(emergency("Later")))
    try space.write("residents/room-2.yaml", emergency("Last"))
    #expect(String(decoding: try member.document.get().bytes, as: UTF8.self).hasPrefix(emergency("Later")))
    // room-5 failed on its manifest: its report quotes the file as it was read, fixed since.
    try space.write("residents/room-5.yaml", "contacts: []\n")
    guard case .failure(.input(let problem)) = results[3].outcome else {
      Issue.record("room-5 did not fail on its manifest: \(results[3].outcome)")
      return
    }
    #expect(problem.diagnostics.first?.position?.file == "residents/room-5.yaml")
    #expect(String(decoding: results[3].member.sources["residents/room-5.yaml"] ?? [], as: UTF8.self).contains("12-AB"))
  }

  @Test func appliesConcurrentlyWithTheSafetyGatePerWatch() async throws {
    let space = try Self.fleet()
    // room-2 holds an emergency contact the manifest would replace: unsafe for an unattended apply.
    let watch = try await space.engine.open("sim:watches/room-2.json")
    let seeded = ManifestDocumentFixture.document("emergency:\n  sos: true\n  contacts:\n    - {name: Old, phone: \"+15550199\"}\n")
    _ = try await watch.apply(seeded, options: ApplyOptions(approval: .automatic(allowDestroy: false), command: "test"))
    let loaded = try space.load(["room-1", "room-2", "room-3", "room-4"])
    let results = await FleetRunner(engine: space.engine).run(loaded.members) { _, document, watch throws(EngineError) in
      try await watch.apply(document, options: ApplyOptions(approval: .automatic(allowDestroy: false), command: "tsapply apply --fleet"))
    }
    #expect(results.map { (try? $0.outcome.get()).map { if case .applied = $0 { "applied" } else { "no changes" } } ?? "failed" }
            == ["applied", "failed", "applied", "failed"])
    guard case .failure(.engine(.unsafe(_, let findings))) = results[1].outcome else {
      Issue.record("room-2 was not stopped by the safety gate: \(results[1].outcome)")
      return
    }
    #expect(!findings.isEmpty)
    #expect(try await space.state("room-2").emergency?.contacts.map(\.name) == ["Old"])
    #expect(try await space.state("room-1").contacts.map(\.name) == ["Ward desk"])
    #expect(try await space.state("room-3").emergency?.contacts.map(\.name) == ["Family room-3"])
    // Applied watches plan no changes afterwards.
    let again = await FleetRunner(engine: space.engine).run(try space.load(["room-1", "room-3"]).members) {
      _, document, watch throws(EngineError) in try await watch.plan(document).plan
    }
    #expect(again.allSatisfy { (try? $0.outcome.get().isEmpty) == true })
  }

  @Test func aRequestedStopStartsNoOtherWatch() async throws {
    let space = try Self.fleet()
    let stop = StoppedAfterFirst()
    let loaded = try space.load(["room-1", "room-2", "room-3"])
    let results = await FleetRunner(engine: space.engine, parallelism: 1, stop: stop).run(loaded.members) {
      _, document, watch throws(EngineError) in
      stop.trip()
      return try await watch.plan(document).plan
    }
    #expect(results.map { if case .failure(.interrupted) = $0.outcome { "interrupted" } else { "ran" } } == ["ran", "interrupted", "interrupted"])
  }
}

/// The most watches seen running at once.
final class Peak: @unchecked Sendable {
  private let lock = NSLock()
  private var value = 0
  func see(_ progress: FleetProgress) {
    lock.lock()
    value = max(value, progress.running.count)
    lock.unlock()
  }
  var most: Int {
    lock.lock()
    defer { lock.unlock() }
    return value
  }
}

/// A stop request that trips when told.
final class StoppedAfterFirst: StopRequest, @unchecked Sendable {
  private let lock = NSLock()
  private var tripped = false
  func trip() {
    lock.lock()
    tripped = true
    lock.unlock()
  }
  func begin() {}
  func end() {}
  var isRequested: Bool {
    lock.lock()
    defer { lock.unlock() }
    return tripped
  }

  /// `status --fleet`'s "Last applied" is when an apply last wrote to the watch: an apply that
  /// finds nothing to change (refreshing the record to a reminder the wearer switched on or off,
  /// which the manifest states (drinking) without saying whether it is on) does not move it; one that
  /// writes does.
  @Test func lastAppliedIsWhenAnApplyLastWroteToTheWatch() async throws {
    let space = try FleetSpace()
    try space.oneWatch("contacts:\n  - {name: A, phone: \"+15550100\"}\nreminders:\n  drinking: {repeat: workday}\n")
    let runner = FleetRunner(engine: space.engine)
    func apply() async throws -> String? {
      let results = await runner.run(try space.load().members) { _, document, watch throws(EngineError) in
        try await watch.apply(document, options: ApplyOptions(approval: .automatic(allowDestroy: false), command: "test"))
      }
      if case .failure(let failure) = results.first?.outcome { Issue.record("\(failure)") }
      return await FleetStatus.direct(try space.load().members, runner: runner).first?.lastApplied
    }
    let applied = try #require(try await apply())
    try await Task.sleep(for: .milliseconds(1_100))
    try SimulatedDevice(path: space.directory + "/watches/room-1.json").simulateReminderToggle(id: "1")
    let record = try await space.engine.open("sim:watches/room-1.json").home.lastAppliedPath
    let before = try FileManager.default.attributesOfItem(atPath: record)[.modificationDate] as? Date
    #expect(try await apply() == applied)
    #expect(try FileManager.default.attributesOfItem(atPath: record)[.modificationDate] as? Date != before, "the record was refreshed")
    try await Task.sleep(for: .milliseconds(1_100))
    try space.write("residents/room-1.yaml", "contacts:\n  - {name: B, phone: \"+15550100\"}\nreminders:\n  drinking: {repeat: workday}\n")
    let written = try await apply()
    #expect(written != nil && written != applied)
    // Out of reach (its file gone): unreachable, and its records still say when it was last applied.
    try FileManager.default.moveItem(atPath: space.directory + "/watches/room-1.json", toPath: space.directory + "/room-1.away")
    let away = try #require(await FleetStatus.direct(try space.load().members, runner: runner).first)
    #expect(away.state == "unreachable" && away.lastApplied == written && away.lastSeen == nil, "\(away)")
    // A monitor that found the outage says when it last read the watch: "last seen" (fresh-eyes
    // finding: `-`, though the monitor's page knew it).
    let identity = space.engine.canonicalSpec(try space.load().members[0].device)
    let monitorRecord = HandledEvents(path: WatchHome(identity: identity, root: space.engine.stateRoot).monitorEventsPath, watch: identity)
    // Read after the last apply (its records are older than the read).
    let seen = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 100).rounded(.down))
    let text = { (date: Date) in ISO8601DateFormatter().string(from: date) }
    try monitorRecord.outage(since: seen.addingTimeInterval(30), lastSeen: seen)
    let known = try #require(await FleetStatus.direct(try space.load().members, runner: runner).first)
    #expect(known.state == "unreachable" && known.lastSeen == text(seen) && !known.sosAtRisk, "\(known)")
    // That read found SOS at risk: said as of then (fresh-eyes finding: the page said it, status nothing).
    try monitorRecord.seen(seen, sosAtRisk: true, exactly: true)
    let rows = await FleetStatus.direct(try space.load().members, runner: runner)
    let atRisk = try #require(rows.first)
    #expect(atRisk.state == "unreachable" && atRisk.sosAtRisk, "\(atRisk)")
    #expect(atRisk.shownNote?.hasPrefix(Alerts.sosAtRisk + "; as its monitor last read it (\(text(seen))), before it went out of reach; ") == true,
            "\(atRisk.shownNote ?? "")")
    // A monitor stopped while the watch answered, the watch gone since: last seen as it stopped.
    try monitorRecord.outage(since: nil, lastSeen: nil)
    try monitorRecord.seen(seen.addingTimeInterval(90), sosAtRisk: false, exactly: true)
    let stopped = try #require(await FleetStatus.direct(try space.load().members, runner: runner).first)
    #expect(stopped.lastSeen == text(seen.addingTimeInterval(90)) && !stopped.sosAtRisk, "\(stopped)")
    // An apply that wrote after the monitor's read read the watch later and left it as its
    // manifest says: last seen then, not SOS at risk (fresh-eyes finding: SOS at risk stayed
    // after an apply had turned SOS back on).
    try monitorRecord.seen(seen.addingTimeInterval(-10_000), sosAtRisk: true, exactly: true)
    let after = try #require(await FleetStatus.direct(try space.load().members, runner: runner).first)
    #expect(after.lastSeen == written && !after.sosAtRisk, "\(after)")
  }
}

extension FleetRunnerTests {
  /// A fleet of one watch with `manifest` as its own, applied.
  static func applied(_ manifest: String) async throws -> (FleetSpace, FleetRunner) {
    let space = try FleetSpace()
    try space.oneWatch(manifest)
    let runner = FleetRunner(engine: space.engine)
    _ = await runner.run(try space.load().members) { _, document, watch throws(EngineError) in
      try await watch.apply(document, options: ApplyOptions(approval: .automatic(allowDestroy: false), command: "test"))
    }
    return (space, runner)
  }

  /// `status --fleet` of a watch whose first apply found it matching: `none recorded (matched already)`.
  @Test func aWatchThatMatchedAlreadyWasNeverApplied() async throws {
    let (space, runner) = try await Self.applied("version: 1\n")
    let rows = await FleetStatus.direct(try space.load().members, runner: runner)
    try #require(rows.count == 1)
    #expect(rows[0].state == "in sync" && rows[0].lastApplied == nil && rows[0].neverApplied)
    #expect(FleetStatus.table(rows, withAgents: false).contains("none recorded (matched already)"))
  }
}

extension FleetRunnerTests {
  /// A watch whose manifest has errors is `invalid`, and its drift (which needs no manifest) is
  /// still shown: a wearer's change is not hidden behind the YAML mistake.
  @Test func anInvalidManifestDoesNotHideTheWatchsDrift() async throws {
    let (space, runner) = try await Self.applied("contacts:\n  - {name: A, phone: \"+15550100\"}\n")
    try space.write("residents/room-1.yaml", "contacts: [\n")
    let clean = try #require(await FleetStatus.direct(try space.load().members, runner: runner).first)
    #expect(clean.state == "invalid" && clean.drift == 0 && clean.lastApplied != nil, "\(clean)")
    try SimulatedDevice(path: space.directory + "/watches/room-1.json").simulateContactAdd(Contact(name: "Zed", phoneNum: "+15550199"))
    let drifted = try #require(await FleetStatus.direct(try space.load().members, runner: runner).first)
    #expect(drifted.state == "invalid" && drifted.drift == 1, "\(drifted)")
    #expect(drifted.note?.contains("drifted since the last apply") == true, "\(drifted)")
  }

  /// The same watch with SOS switched off on it: SOS at risk is said (fresh-eyes finding: only
  /// "drifted"); then out of reach: `unreachable`, with the manifest's errors beside it, and its
  /// records' last apply (fresh-eyes finding: `invalid`, a paperwork problem, for a missing watch).
  @Test func anInvalidManifestHidesNeitherSOSAtRiskNorAWatchOutOfReach() async throws {
    let (space, runner) = try await Self.applied("contacts:\n  - {name: A, phone: \"+15550100\"}\nemergency:\n  sos: true\n  contacts:\n    - {name: Mom, phone: \"+15550110\"}\n")
    try space.write("residents/room-1.yaml", "contacts: [\n")
    try SimulatedDevice(path: space.directory + "/watches/room-1.json").simulateEmergencyChange(contacts: [], sosOn: false)
    let rows = await FleetStatus.direct(try space.load().members, runner: runner)
    let off = try #require(rows.first)
    #expect(off.state == "invalid" && off.drift == 1 && off.sosAtRisk, "\(off)")
    #expect(FleetStatus.table(rows, withAgents: false).contains("room-1: SOS at risk: "), "\(FleetStatus.table(rows, withAgents: false))")
    try FileManager.default.moveItem(atPath: space.directory + "/watches/room-1.json", toPath: space.directory + "/room-1.away")
    let away = try #require(await FleetStatus.direct(try space.load().members, runner: runner).first)
    #expect(away.state == "unreachable" && away.lastApplied != nil && away.drift == nil, "\(away)")
    #expect(away.note?.contains("out of reach") == true && away.note?.contains("its manifest has errors") == true, "\(away)")
  }
}

extension FleetRunnerTests {
  /// `status --fleet` says which drift puts SOS at risk (SOS switched off on the watch), in the
  /// row's note and as `sos_at_risk` in JSON; a contact added is drift only (fresh-eyes finding:
  /// both read "drift 1").
  @Test func aDriftThatPutsSOSAtRiskIsSaidInTheStatus() async throws {
    let (space, runner) = try await Self.applied("contacts:\n  - {name: A, phone: \"+15550100\"}\nemergency:\n  sos: true\n  contacts:\n    - {name: Mom, phone: \"+15550110\"}\n")
    let device = try SimulatedDevice(path: space.directory + "/watches/room-1.json")
    try device.simulateContactAdd(Contact(name: "Zed", phoneNum: "+15550199"))
    let added = try #require(await FleetStatus.direct(try space.load().members, runner: runner).first)
    #expect(added.state == "drift" && !added.sosAtRisk && added.shownNote == nil, "\(added)")
    try device.simulateEmergencyChange(contacts: [], sosOn: false)
    let rows = await FleetStatus.direct(try space.load().members, runner: runner)
    let off = try #require(rows.first)
    #expect(off.state == "drift" && off.sosAtRisk, "\(off)")
    #expect(FleetStatus.table(rows, withAgents: false).contains("room-1: SOS at risk: "), "\(FleetStatus.table(rows, withAgents: false))")
    #expect(FleetStatus.json(rows, fleetFile: "fleet.yaml").contains("\"sos_at_risk\" : true"), "\(FleetStatus.json(rows, fleetFile: "fleet.yaml"))")
  }
}
