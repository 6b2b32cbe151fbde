import Foundation
import Testing
import TSDevice
import TSEngine
import TSFleet
import TSModel
import TSMonitor

/// A staged rollout as the watches hold it (docs/fleet.md "Staged rollouts"): a monitor's heal
/// of a watch the rollout has not reached carries none of the unreleased change, and the
/// rollout's summary counts what the watches hold, not only what its waves recorded.
@Suite struct RolloutWatchesTests {
  /// A fleet of `count` watches `w1`… on `defaults.yaml` (the drinking reminder every `every`,
  /// one emergency contact, SOS on), each applied.
  struct Fleet {
    let space: FleetSpace
    let store: RolloutStore
    let count: Int

    init(_ count: Int) async throws {
      space = try FleetSpace()
      self.count = count
      var text = "defaults: defaults.yaml\nwatches:\n"
      for index in 1...count {
        try space.watch("w\(index)")
        text += "  w\(index): {device: \"sim:watches/w\(index).json\"}\n"
      }
      try space.write("fleet.yaml", text)
      store = RolloutStore(root: space.directory + "/state", fleetPath: space.directory + "/fleet.yaml")
      try setInterval("2h")
      _ = await apply(Array(1...count))
    }

    func setInterval(_ every: String) throws {
      try space.write("defaults.yaml", """
        reminders:
          drinking:
            enabled: true
            repeat: everyday
            period: {start: "08:00", end: "20:00", every: \(every)}
        emergency:
          sos: true
          contacts:
            - {name: Ward desk, phone: "+15550100"}

        """)
    }

    /// Applies the manifests to the watches `indices` (1-based) as `apply --fleet` does.
    @discardableResult
    func apply(_ indices: [Int]) async -> [FleetWatchReport] {
      let names = Set(indices.map { "w\($0)" })
      let members = ((try? space.load().members) ?? []).filter { names.contains($0.name) }
      let results = await FleetRunner(engine: space.engine).run(members) { _, document, watch throws(EngineError) in
        try await watch.apply(document, options: ApplyOptions(approval: .automatic(allowDestroy: false), command: "test"))
      }
      return results.map { result in
        FleetWatchReport(name: result.member.name, device: result.member.device,
                         verdict: (try? result.outcome.get()).map { $0.plan.isEmpty ? .noChanges : .applied($0.plan.counts) } ?? .failed("failed"),
                         elapsed: .zero)
      }
    }

    /// The drinking reminder's interval on watch `index`, in minutes.
    func interval(_ index: Int) async throws -> Int? {
      try await space.state("w\(index)").reminders.first { $0.reminderType == .drinking }?.interval
    }

    /// `status --fleet`'s rows.
    func rows() async throws -> [FleetStatusRow] {
      await FleetStatus.direct(try space.load().members, runner: FleetRunner(engine: space.engine))
    }
  }

  @Test func aHealOfAWatchAPausedRolloutHasNotReachedWritesTheEmergencyContactsBackAndHoldsBackTheNewInterval() async throws {
    let fleet = try await Fleet(3)
    let before = try await fleet.interval(3)
    try fleet.setInterval("90m")
    // The rollout's canary (w1) gets the new interval; it pauses.
    let loaded = try fleet.space.load()
    let policy = RolloutPolicy(canary: .size(.count(1)), pause: .manual)
    let record = try await RolloutRunner(store: fleet.store).run(RolloutRecord(fleet: "fleet.yaml", members: loaded.members, policy: policy,
                                                                              startedBy: "test@host", now: Date())) { names, _ in
      await fleet.apply(names.map { Int($0.dropFirst())! })
    }.record
    #expect(record.phase == .paused)
    #expect(try await fleet.interval(1) == 90)
    // The wearer clears w3's emergency contacts; the reconciling monitor heals it.
    let device = try SimulatedDevice(path: fleet.space.directory + "/watches/w3.json")
    try device.simulateEmergencyChange(contacts: [], sosOn: false)
    let events = Inbox<MonitorEvent>()
    var template = MonitorSettings(manifestPath: "", manifestName: "", reconcile: true)
    template.commandLine = "tsapply monitor --reconcile --fleet fleet.yaml"
    let monitors = FleetMonitor.monitors(for: loaded.members, fleetPath: fleet.space.directory + "/fleet.yaml", fleetName: "fleet.yaml",
                                         engine: fleet.space.engine, template: template, notifiers: [], emit: { events.add($0) },
                                         notice: { _ in }, rollout: fleet.store)
    #expect(try await monitors[2].checkOnce())
    let state = try await fleet.space.state("w3")
    #expect(state.emergency?.contacts.map(\.name) == ["Ward desk"], "the SOS contacts are healed")
    #expect(state.emergency?.isSosOn == true)
    #expect(try await fleet.interval(3) == before, "the unreleased interval is held back")
    let applied = try #require(events.items.first { $0.kind == .applied })
    #expect(applied.fields["addresses"] == .array([.string("emergency")]))
    #expect(applied.fields["held_back"] == .array([.string("reminder.drinking")]))
    #expect(applied.message.contains("held back the manifest's change to reminder.drinking"))
    #expect(applied.message.contains("the rollout of fleet.yaml is paused; continue it with 'tsapply apply --fleet fleet.yaml --continue'"))
    // status --fleet and the summary agree: w3 does not have the revision.
    var observed = try #require(try fleet.store.load())
    observed.observe(try await fleet.rows(), members: loaded.members)
    #expect(observed.withRevision == ["w1"])
    #expect(observed.withoutRevision == ["w2", "w3"])
    // Once the rollout completes, a heal carries the manifests again.
    _ = try await RolloutRunner(store: fleet.store).run(observed) { names, _ in await fleet.apply(names.map { Int($0.dropFirst())! }) }
    #expect(fleet.store.holdBackReason(fleetFile: "fleet.yaml") == nil)
  }

  /// (the record's phase, the lock held, the words)
  static let reasonCases: [(RolloutRecord.Phase?, Bool, String?)] = [
    (nil, false, nil),
    (.completed, false, nil),
    (.paused, false, "the rollout of fleet.yaml is paused; continue it with 'tsapply apply --fleet fleet.yaml --continue' or abort it with 'tsapply apply --fleet fleet.yaml --abort'"),
    (.aborted, false, "the rollout of fleet.yaml was aborted; apply the change with 'tsapply apply --fleet fleet.yaml', or start a new rollout"),
    (.running, true, "the rollout of fleet.yaml is running and has not released the change to every watch"),
    (.running, false, "the rollout of fleet.yaml was interrupted; continue it with 'tsapply apply --fleet fleet.yaml --continue' or abort it with 'tsapply apply --fleet fleet.yaml --abort'"),
  ]

  /// The summary's advice: `--continue` / `--abort` only for a rollout paused or left by a
  /// process that ended; one a live process runs says so (it advised --continue, which would
  /// wait for that process's lock).
  @Test(arguments: [(RolloutRecord.Phase.paused, false, true), (.running, true, false), (.running, false, true), (.waiting, true, false),
                    (.waiting, false, true)])
  func theSummaryAdvisesContinueOnlyWhenNoProcessRunsIt(phase: RolloutRecord.Phase, held: Bool, advisesContinue: Bool) async throws {
    let fleet = try await Fleet(2)
    var record = RolloutRecord(fleet: "fleet.yaml", members: try fleet.space.load().members, policy: RolloutPolicy(), startedBy: "ana@ward-pc", now: Date())
    record.phase = phase
    try fleet.store.save(record)
    let lock = held ? try await fleet.store.lock(command: "test") : nil
    defer { lock?.release() }
    let summary = try #require(try fleet.store.load()).summary(fleetFile: "fleet.yaml")
    #expect(summary.contains("--continue") == advisesContinue, "\(summary)")
    #expect(summary.contains("Another process is running it (started by ana@ward-pc)") == !advisesContinue, "\(summary)")
  }

  /// A paused rollout whose manifests were edited since it started: `--continue` is refused
  /// then, so the summary advises only `--abort` and a new apply (it advised --continue).
  @Test func aPausedRolloutWhoseManifestsChangedAdvisesAbort() async throws {
    let fleet = try await Fleet(2)
    var record = RolloutRecord(fleet: "fleet.yaml", members: try fleet.space.load().members, policy: RolloutPolicy(), startedBy: "t", now: Date())
    record.phase = .paused
    try fleet.setInterval("3h")
    record.observe(try await fleet.rows(), members: try fleet.space.load().members)
    let summary = record.summary(fleetFile: "fleet.yaml")
    #expect(summary.contains("Its manifests changed since it started, so '--continue' is refused: stop it with 'tsapply apply --fleet fleet.yaml --abort'"),
            "\(summary)")
    #expect(!summary.contains("Continue with"), "\(summary)")
  }

  @Test(arguments: 0..<reasonCases.count) func aHealHoldsBackWhileTheRolloutIsNotCompleted(_ index: Int) async throws {
    let (phase, held, words) = Self.reasonCases[index]
    let fleet = try await Fleet(2)
    if let phase {
      var record = RolloutRecord(fleet: "fleet.yaml", members: try fleet.space.load().members, policy: RolloutPolicy(), startedBy: "t", now: Date())
      record.phase = phase
      try fleet.store.save(record)
    }
    let lock = held ? try await fleet.store.lock(command: "test") : nil
    defer { lock?.release() }
    #expect(fleet.store.holdBackReason(fleetFile: "fleet.yaml") == words)
  }

  /// A rollout completed over one watch chosen with --watch (after an aborted one) released the
  /// change to that watch only: the others' heals still hold it back (fresh-eyes test: a
  /// one-watch apply undid an aborted rollout's hold-back for the whole fleet).
  @Test func aRolloutOfSomeWatchesReleasesTheChangeToThoseOnly() async throws {
    let fleet = try await Fleet(2)
    let members = try fleet.space.load().members
    var record = RolloutRecord(fleet: "fleet.yaml", members: members.filter { $0.name == "w2" }, policy: RolloutPolicy(),
                               startedBy: "t", now: Date())
    record.phase = .completed
    try fleet.store.save(record)
    #expect(fleet.store.holdBackReason(fleetFile: "fleet.yaml", watch: "w2") == nil)
    let words = try #require(fleet.store.holdBackReason(fleetFile: "fleet.yaml", watch: "w1"))
    #expect(words.hasPrefix("the last rollout of fleet.yaml (started ") && words.contains("was of 1 watch chosen with --watch, not this one"), "\(words)")
  }

  /// A watch of the rollout removed from the fleet file: the summary says so — not that the
  /// manifests changed — and shows what the waves recorded.
  @Test func aWatchRemovedFromTheFleetFileIsNamedInTheSummary() async throws {
    let fleet = try await Fleet(3)
    let members = try fleet.space.load().members
    var record = RolloutRecord(fleet: "fleet.yaml", members: members, policy: RolloutPolicy(), startedBy: "t", now: Date())
    record.observe(try await fleet.rows(), members: members.filter { $0.name != "w3" })
    #expect(record.observedNote == "its watch w3 is no longer in fleet.yaml, so what the watches hold cannot be compared with its revision; "
              + "what it recorded of each watch is shown", "\(record.observedNote ?? "nil")")
    #expect(record.summary(fleetFile: "fleet.yaml").contains("Not read from the watches: its watch w3 is no longer in fleet.yaml"))
  }

  /// Watches whose manifests cannot be used hold no revision of them: "Without it", named so,
  /// and the counts add up to the watches of the rollout (they did not: 8 of 4, fresh-eyes test).
  @Test func watchesWithAnInvalidManifestAreWithoutTheRevisionAndTheCountsAddUp() async throws {
    let fleet = try await Fleet(4)
    let members = try fleet.space.load().members
    var record = RolloutRecord(fleet: "fleet.yaml", members: members, policy: RolloutPolicy(canary: .size(.count(2)), batch: .count(2)),
                               startedBy: "test@host", now: Date())
    record.watches["w1"] = RolloutRecord.WatchResult(wave: 1, result: "failed", at: "2026-12-04T00:00:00Z")
    record.watches["w2"] = RolloutRecord.WatchResult(wave: 1, result: "failed", at: "2026-12-04T00:00:00Z")
    record.phase = .aborted
    record.observe(members.map { FleetStatusRow(name: $0.name, device: $0.device, state: "invalid", note: "2 emergency contacts; fit holds 1") },
                   members: members)
    let summary = record.summary(fleetFile: "fleet.yaml")
    #expect(summary.contains("0 of 4 watches have the new revision \(record.revision) (as read from the watches now), 4 do not (2 failed, 2 not started)."),
            "\(summary)")
    #expect(summary.contains("Without it: w1 (invalid manifest), w2 (invalid manifest), w3 (invalid manifest), w4 (invalid manifest)\n"), "\(summary)")
    #expect(!summary.contains("Not known"), "\(summary)")
  }

  /// The watches without the revision are counted by what their wave recorded, so the parts
  /// add up: an interrupted one is neither failed nor not started (fresh-eyes report: "2 do not
  /// (0 failed, 0 not started)").
  @Test func theWatchesWithoutTheRevisionAddUpWhateverTheirWaveRecorded() async throws {
    let (fleet, members, started) = try await Self.started(4)
    var record = started
    await fleet.apply([1])
    for (name, result) in [("w1", "applied"), ("w2", "interrupted"), ("w3", "failed")] {
      record.watches[name] = try JSONDecoder().decode(RolloutRecord.WatchResult.self, from: Data(#"{"wave": 1, "result": "\#(result)", "at": "-"}"#.utf8))
    }
    record.observe(try await fleet.rows(), members: members)
    let summary = record.summary(fleetFile: "fleet.yaml")
    #expect(summary.contains("1 of 4 watches have the new revision \(record.revision) (as read from the watches now), 3 do not (1 failed, 1 not started, 1 interrupted)."),
            "\(summary)")
    // Left pending by its wave (its agent away): said as pending, not as failed — it counts
    // against max_failures, yet nothing failed on it (fresh-eyes finding: "4 failed").
    record.watches["w3"] = try JSONDecoder().decode(RolloutRecord.WatchResult.self, from: Data(#"{"wave": 1, "result": "pending", "at": "-"}"#.utf8))
    let pending = record.summary(fleetFile: "fleet.yaml")
    #expect(pending.contains("3 do not (0 failed, 1 not started, 1 interrupted, 1 pending in its wave)."), "\(pending)")
  }

  /// A fleet of `count` watches whose interval changes to 90m, and a rollout of it (canary 3,
  /// batch 4) just started: its record says running, no watch has a result yet.
  static func started(_ count: Int) async throws -> (Fleet, [FleetMember], RolloutRecord) {
    let fleet = try await Fleet(count)
    try fleet.setInterval("90m")
    let members = try fleet.space.load().members
    let record = RolloutRecord(fleet: "fleet.yaml", members: members, policy: RolloutPolicy(canary: .size(.count(3)), batch: .count(4)),
                               startedBy: "test@host", now: Date())
    return (fleet, members, record)
  }

  @Test func aRolloutLeftRunningByAKilledProcessIsInterruptedAndItsSummaryCountsWhatTheWatchesHold() async throws {
    // What a process killed in the middle of wave 1 (of canary 3, batch 4) leaves: the record
    // says running, no result yet, while w1–w3 were written.
    let (fleet, members, started) = try await Self.started(5)
    var record = started
    try fleet.store.save(record)
    await fleet.apply([1, 2, 3])
    record = try #require(try fleet.store.load())
    #expect(record.isInterrupted, "no process holds its lock")
    guard case .object(let json) = record.json else { Issue.record("not an object"); return }
    #expect(json["phase"] == .string("interrupted"))
    record.observe(try await fleet.rows(), members: members)
    let summary = record.summary(fleetFile: "fleet.yaml")
    #expect(summary.contains("interrupted during wave 1 of 2: the process running it ended"), "\(summary)")
    #expect(summary.contains("3 of 5 watches have the new revision \(record.revision) (as read from the watches now), 2 do not (0 failed, 2 not started)"), "\(summary)")
    #expect(summary.contains("With the new revision: w1, w2, w3\n"))
    #expect(summary.contains("Without it: w4, w5\n"))
    #expect(summary.contains("--continue"))
    // Read from the watch: applied as far as it shows, not "no changes" (which said the killed wave changed nothing there).
    #expect(record.row("w2", device: "-").verdict == .applied(.zero) && record.row("w2", device: "-").reached == "has it (read)")
    // Killed while pausing between waves.
    var waiting = record
    waiting.phase = .waiting
    waiting.nextWave = 1
    try fleet.store.save(waiting)
    #expect(try fleet.store.load()?.summary(fleetFile: "fleet.yaml").contains("interrupted while pausing after wave 1 of 2: the process running it ended") == true)
    try fleet.store.save(record)
    // While a process holds its lock, it is running.
    let lock = try await fleet.store.lock(command: "test")
    #expect(try fleet.store.load()?.isInterrupted == false)
    lock.release()
    // An aborted rollout's failed watch applied since counts as having the revision.
    record = try RolloutRunner(store: fleet.store).abort(record, by: "ana@ward")
    record.watches["w4"] = try JSONDecoder().decode(RolloutRecord.WatchResult.self, from: Data(#"{"wave": 2, "result": "failed", "at": "-"}"#.utf8))
    await fleet.apply([4])
    record.observe(try await fleet.rows(), members: members)
    #expect(record.withRevision == ["w1", "w2", "w3", "w4"])
    #expect(!record.summary(fleetFile: "fleet.yaml").contains("w4 (failed)"))
    #expect(record.failed == ["w4"], "its wave's failure still counts against max_failures")
    // Manifests changed since: the watches say nothing of its revision.
    try fleet.setInterval("75m")
    record.observe(try await fleet.rows(), members: try fleet.space.load().members)
    #expect(record.observed == nil)
    #expect(record.summary(fleetFile: "fleet.yaml").contains("Not read from the watches: the manifests changed since it started"))
  }

  /// (`--watch` selection, with the revision, without it, the counts' words) — w1–w3 hold the
  /// rollout's revision (w3 applied since its wave failed), w4 and w5 not. A selection is
  /// compared for the watches read and the summary is of those only, saying so: the others are
  /// not counted from their waves' results (a failed wave may have landed, a killed one recorded
  /// nothing: "Without it: r01 (failed)" of a watch holding it, fresh-eyes test); the manifests
  /// (unchanged) are not said to have changed.
  static let selectionCases: [([String], [String], [String], String)] = [
    ([], ["w1", "w2", "w3"], ["w4", "w5"], "3 of 5 watches have"),
    (["w3"], ["w3"], [], "1 of the 1 watch selected (--watch) have"),
    (["w3", "w4"], ["w3"], ["w4"], "1 of the 2 watches selected (--watch) have"),
    // Read, not from the waves' results: w2's wave said failed; it holds the revision.
    (["w2"], ["w2"], [], "1 of the 1 watch selected (--watch) have"),
    (["w5"], [], ["w5"], "0 of the 1 watch selected (--watch) have"),
  ]

  @Test(arguments: 0..<selectionCases.count) func statusOfSomeWatchesComparesOnlyThoseItRead(_ index: Int) async throws {
    let (selection, with, without, counts) = Self.selectionCases[index]
    let fleet = try await Fleet(5)
    try fleet.setInterval("90m")
    let every = try fleet.space.load().members
    var record = RolloutRecord(fleet: "fleet.yaml", members: every, policy: RolloutPolicy(canary: .size(.count(2)), batch: .count(3)),
                               startedBy: "test@host", now: Date())
    await fleet.apply([1, 2, 3])
    record.watches["w1"] = RolloutRecord.WatchResult(wave: 1, result: "applied", at: "-")
    record.watches["w2"] = RolloutRecord.WatchResult(wave: 1, result: selection == ["w2"] ? "failed" : "applied", at: "-")
    record.watches["w3"] = RolloutRecord.WatchResult(wave: 2, result: "failed", at: "-")
    record.watches["w4"] = RolloutRecord.WatchResult(wave: 2, result: "failed", at: "-")
    record.watches["w5"] = RolloutRecord.WatchResult(wave: 2, result: "failed", at: "-")
    record.nextWave = 2
    record.phase = .aborted
    // What status --fleet [--watch …] does: rows of the selection, the revision over the whole fleet.
    let loaded = try fleet.space.load(selection)
    let rows = await FleetStatus.direct(loaded.members, runner: FleetRunner(engine: fleet.space.engine))
    record.observe(rows, members: loaded.everyMember, read: selection.isEmpty ? nil : Set(rows.map(\.name)))
    let summary = record.summary(fleetFile: "fleet.yaml")
    #expect(record.withRevision == with, "\(summary)")
    #expect(record.withoutRevision == without, "\(summary)")
    #expect(summary.contains("\(counts) the new revision \(record.revision) (as read from the watches now)"), "\(summary)")
    #expect(summary.contains("Not counted: the rollout's other") == !selection.isEmpty, "\(summary)")
    #expect(!summary.contains("manifests changed"), "\(summary)")
    guard case .object(let json) = record.json else { Issue.record("not an object"); return }
    #expect(json["observed"] == .bool(true))
  }

  /// `--abort` of a rollout whose process was killed in wave 2 (its watches written, their
  /// results not recorded): aborted after wave 2, not 1 (fresh-eyes test: "aborted after wave 1
  /// of 4" while 7 of 15 had the revision).
  @Test func anAbortAfterAProcessKilledInAWaveCountsThatWave() async throws {
    let fleet = try await Fleet(5)
    try fleet.setInterval("90m")
    let members = try fleet.space.load().members
    var record = RolloutRecord(fleet: "fleet.yaml", members: members, policy: RolloutPolicy(canary: .size(.count(1)), batch: .count(2)),
                               startedBy: "test@host", now: Date())
    record.watches["w1"] = RolloutRecord.WatchResult(wave: 1, result: "applied", at: "-")
    record.nextWave = 1
    record.phase = .running
    try fleet.store.save(record)
    await fleet.apply([1, 2, 3])
    var aborted = try RolloutRunner(store: fleet.store).abort(try #require(try fleet.store.load()), by: "ana@ward")
    #expect(aborted.nextWave == 2)
    #expect(try fleet.store.load()?.nextWave == 2, "written")
    aborted.observe(try await fleet.rows(), members: members)
    let summary = aborted.summary(fleetFile: "fleet.yaml")
    #expect(summary.contains("aborted after wave 2 of 3: aborted by ana@ward; wave 2 was interrupted"), "\(summary)")
    #expect(summary.contains("3 of 5 watches have the new revision"), "\(summary)")
    #expect(aborted.row("w5", device: "-").verdict == .pending("not applied: the rollout was aborted before wave 3 of 3"))
    // The killed wave's watches are recorded interrupted: once the manifests change (the watches
    // say nothing of its revision), they are not known, never "not started" (fresh-eyes test).
    #expect(try fleet.store.load()?.watches["w2"]?.result == "interrupted")
    try fleet.setInterval("75m")
    aborted.observe(try await fleet.rows(), members: try fleet.space.load().members)
    let changed = aborted.summary(fleetFile: "fleet.yaml")
    #expect(changed.contains("1 of 5 watches have the new revision \(aborted.revision), 2 do not (0 failed, 2 not started), 2 not known."), "\(changed)")
    #expect(changed.contains("Not known: w2 (interrupted in wave 2), w3 (interrupted in wave 2)\n"),
            "\(changed)")
    #expect(aborted.row("w3", device: "-").verdict == .unknown("interrupted in wave 2"))
    // A watch whose apply failed after part of it reached the watch is not known either.
    aborted.watches["w4"] = RolloutRecord.WatchResult(wave: 3, result: "failed", at: "-", reached: "1 of 2 applied")
    #expect(aborted.holding("w4") == .unknown("failed in wave 3 with 1 of 2 applied"))
    // A paused rollout aborted keeps its wave.
    var paused = record
    paused.phase = .paused
    #expect(try RolloutRunner(store: fleet.store).abort(paused, by: "ana@ward").nextWave == 1)
  }

  @Test func aWatchThatCannotBeReadIsNotKnown() async throws {
    let fleet = try await Fleet(2)
    try FileManager.default.removeItem(atPath: fleet.space.directory + "/watches/w2.json")
    let members = try fleet.space.load().members
    var record = RolloutRecord(fleet: "fleet.yaml", members: members, policy: RolloutPolicy(), startedBy: "t", now: Date())
    record.observe(try await fleet.rows(), members: members)
    #expect(record.withRevision == ["w1"])
    #expect(record.unknownRevision == ["w2"])
    #expect(record.summary(fleetFile: "fleet.yaml").contains("Not known: w2 (unreachable)"))
  }

  /// Over MQTT a refusal can come after the agent's earlier attempt wrote part of the revision
  /// (fe17 defect 5): the wave's record keeps what the watch holds of it, and the summary never
  /// lists the watch as untouched — not known from the record alone, and "without it" with
  /// what it holds once read.
  @Test func aRefusalAfterAPartialWriteIsRecordedWithWhatTheWatchHolds() async throws {
    let fleet = try await Fleet(2)
    try fleet.setInterval("90m")
    let loaded = try fleet.space.load()
    let start = RolloutRecord(fleet: "fleet.yaml", members: loaded.members, policy: RolloutPolicy(canary: .size(.count(1)), pause: .manual),
                              startedBy: "test@host", now: Date())
    var record = try await RolloutRunner(store: fleet.store).run(start) { names, _ in
      names.map { name in
        var row = FleetWatchReport(name: name, device: "memory:\(name)", verdict: .refused("refused by agent a1: unsafe"), elapsed: .zero)
        row.reached = "1 of 2 applied"
        row.partlyApplied = true
        return row
      }
    }.record
    #expect(record.watches["w1"]?.reached == "1 of 2 applied")
    let recorded = record.summary(fleetFile: "fleet.yaml")
    #expect(recorded.contains("Not known: w1 (refused in wave 1 with 1 of 2 applied)"), "\(recorded)")
    record.observe(try await fleet.rows(), members: loaded.members)
    let read = record.summary(fleetFile: "fleet.yaml")
    #expect(read.contains("Without it: w1 (refused, holds part of it: 1 of 2 applied), w2\n"), "\(read)")
  }
}
