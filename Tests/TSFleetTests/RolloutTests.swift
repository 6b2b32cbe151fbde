import Foundation
import Testing
import TSDevice
import TSEngine
import TSFleet
import TSManifest
import TSModel
import TSPlan

/// Staged rollouts (docs/fleet.md "Staged rollouts"): how a policy splits a fleet into waves,
/// when failures abort it, and — through the engine on simulated fleets of 5 and 1,000 watches,
/// some made to fail with `TSAPPLY_SIM_FAULT` — which watches were written, how the rollout
/// ended and what its record says.
@Suite struct RolloutTests {
  static func names(_ count: Int) -> [String] { (1...count).map { String(format: "w%04d", $0) } }

  /// (policy, fleet size, wave sizes)
  static let waveCases: [(RolloutPolicy, Int, [Int])] = [
    (RolloutPolicy(), 5, [5]),
    (RolloutPolicy(canary: .size(.count(2))), 5, [2, 3]),
    (RolloutPolicy(canary: .size(.count(2)), batch: .count(2)), 5, [2, 2, 1]),
    (RolloutPolicy(canary: .size(.count(9))), 5, [5]),
    (RolloutPolicy(canary: .size(.percent(5))), 5, [1, 4]),          // 5% of 5 rounds up to 1
    (RolloutPolicy(canary: .size(.percent(5)), batch: .percent(25)), 5, [1, 2, 2]),
    (RolloutPolicy(batch: .count(1)), 5, [1, 1, 1, 1, 1]),
    (RolloutPolicy(canary: .size(.count(2)), batch: .percent(25)), 1000, [2, 250, 250, 250, 248]),
    (RolloutPolicy(canary: .size(.percent(1)), batch: .percent(10)), 1000, [10] + Array(repeating: 100, count: 9) + [90]),
    (RolloutPolicy(canary: .size(.count(2))), 1000, [2, 998]),
    (RolloutPolicy(batch: .percent(100)), 1000, [1000]),
  ]

  @Test(arguments: 0..<waveCases.count) func wavesSplitTheFleetInOrder(_ index: Int) {
    let (policy, count, sizes) = Self.waveCases[index]
    let names = Self.names(count)
    let waves = policy.waves(of: names)
    #expect(waves.map(\.count) == sizes, "\(policy.summary) over \(count)")
    #expect(waves.flatMap { $0 } == names, "every watch once, in fleet order")
  }

  @Test func namedCanariesGoFirstInFleetOrderAndUnknownNamesAreSkipped() {
    let policy = RolloutPolicy(canary: .names(["w0004", "w0002", "nope"]), batch: .count(2))
    #expect(policy.waves(of: Self.names(5)) == [["w0002", "w0004"], ["w0001", "w0003"], ["w0005"]])
  }

  /// (max_failures, failed, attempted, aborts)
  static let limitCases: [(RolloutPolicy.Size, Int, Int, Bool)] = [
    (.count(0), 0, 2, false), (.count(0), 1, 2, true), (.count(1), 1, 5, false), (.count(1), 2, 5, true),
    (.percent(10), 1, 10, false), (.percent(10), 1, 9, true), (.percent(10), 2, 10, true), (.percent(0), 1, 1000, true),
    (.percent(50), 1, 2, false), (.percent(50), 2, 2, true), (.percent(100), 1000, 1000, false),
  ]

  @Test(arguments: 0..<limitCases.count) func maxFailuresCountsOrTakesAShareOfTheWatchesTried(_ index: Int) {
    let (limit, failed, attempted, aborts) = Self.limitCases[index]
    #expect(RolloutPolicy(maxFailures: limit).isExceeded(failed: failed, attempted: attempted) == aborts,
            "max_failures \(limit): \(failed) of \(attempted)")
  }

  /// (text, zero allowed, parsed or nil)
  static let sizeCases: [(String, Bool, RolloutPolicy.Size?)] = [
    ("2", false, .count(2)), ("25%", false, .percent(25)), ("0", false, nil), ("0", true, .count(0)), ("0%", true, .percent(0)),
    ("101%", true, nil), ("-1", true, nil), ("two", true, nil), ("", true, nil), ("5 %", true, nil), ("100%", false, .percent(100)),
  ]

  @Test(arguments: 0..<sizeCases.count) func sizesAreCountsOrPercentages(_ index: Int) {
    let (text, zero, expected) = Self.sizeCases[index]
    #expect((try? RolloutPolicy.Size.parse(text, zero: zero).get()) == expected, "\"\(text)\"")
  }

  // MARK: The fleet file

  @Test func theFleetFileDeclaresARolloutAndEachMistakeIsNamedAtItsPlace() throws {
    let space = try FleetSpace()
    try space.write("m.yaml", "contacts:\n  - {name: Ward, phone: \"+15550100\"}\n")
    let watches = "watches:\n  a: {device: \"sim:a.json\", manifest: m.yaml}\n  b: {device: \"sim:b.json\", manifest: m.yaml}\n"
    try space.write("fleet.yaml", "rollout:\n  canary: [b]\n  batch: 25%\n  pause: manual\n  max_failures: 10%\n" + watches)
    let policy = try space.load().fleet.rollout?.value
    #expect(policy == RolloutPolicy(canary: .names(["b"]), batch: .percent(25), pause: .manual, maxFailures: .percent(10)))
    try space.write("fleet.yaml", "rollout: {canary: 2, pause: 10m}\n" + watches)
    #expect(try space.load().fleet.rollout?.value == RolloutPolicy(canary: .size(.count(2)), pause: .duration(.seconds(600))))

    let mistakes: [(String, String)] = [
      ("rollout: {canary: 0}", "1:19: error: rollout.canary: must be at least 1"),
      ("rollout: {batch: 120%}", "1:18: error: rollout.batch: a percentage must be from 1% to 100%"),
      ("rollout: {pause: soon}", "1:18: error: rollout.pause: expected a duration such as 0s, 30s, 10m or 1h (at most 168h), or manual"),
      ("rollout: {max_failures: lots}", "1:25: error: rollout.max_failures: expected a number of watches"),
      ("rollout: {canary: [c]}", "1:20: error: rollout.canary: the canary \"c\" is not a watch of this fleet"),
      ("rollout: {canery: 2}", "1:11: error: rollout.canery: unknown key \"canery\"; did you mean \"canary\"?"),
    ]
    for (line, expected) in mistakes {
      try space.write("fleet.yaml", line + "\n" + watches)
      do {
        _ = try space.load()
        Issue.record("\(line) was accepted")
      } catch {
        let text = error.problem.diagnostics.map(\.description).joined(separator: "\n")
        #expect(text.contains(expected), "\(line): \(text)")
      }
    }
  }

  // MARK: Rollouts through the engine

  /// A fleet of `count` watches `w0001`… on the defaults only (one contact the watches lack),
  /// the watches in `failing` made to fail on their first device call (a dropped link).
  struct Fleet {
    let space: FleetSpace
    let loaded: LoadedFleet
    let failing: Set<String>
    let store: RolloutStore

    init(_ count: Int, failing: Set<String>) throws {
      space = try FleetSpace()
      try space.write("defaults.yaml", "contacts:\n  - {name: Ward desk, phone: \"+15550100\"}\n")
      var text = "defaults: defaults.yaml\nwatches:\n"
      for name in RolloutTests.names(count) {
        try space.watch(name)
        text += "  \(name): {device: \"sim:watches/\(name).json\"}\n"
      }
      try space.write("fleet.yaml", text)
      loaded = try space.load()
      self.failing = failing
      store = RolloutStore(root: space.directory + "/state", fleetPath: space.directory + "/fleet.yaml")
    }

    /// Applies one wave through the fleet runner (the watches in `failing` through an engine
    /// whose simulator drops the link at the first call), rows as `apply --fleet` makes them.
    /// With `tally`, no watch starts once it says stop (those have no row), and it is told each
    /// row as the watch finishes, as `apply --fleet` does.
    func apply(_ names: [String], tally: RolloutTally? = nil, parallelism: Int = 10) async -> [FleetWatchReport] {
      let members = loaded.members.filter { names.contains($0.name) }
      var faulty = space.engine
      faulty.environment["TSAPPLY_SIM_FAULT"] = "disconnect@1"
      var rows: [FleetWatchReport] = []
      for (engine, group) in [(space.engine, members.filter { !failing.contains($0.name) }), (faulty, members.filter { failing.contains($0.name) })] {
        let runner = FleetRunner(engine: engine, parallelism: parallelism, stop: tally ?? NoStopRequest())
        let results = await runner.run(group, finished: { _, result in
          if case .failure(.interrupted) = result.outcome { return }
          tally?.finished(FleetWatchReport(name: result.member.name, device: "-", verdict: (try? result.outcome.get()) == nil ? .failed("") : .noChanges,
                                           elapsed: .zero))
        }) { _, document, watch throws(EngineError) in
          try await watch.apply(document, options: ApplyOptions(approval: .automatic(allowDestroy: false), command: "test"))
        }
        rows += results.filter { result in
          if case .failure(.interrupted) = result.outcome { return false }
          return true
        }.map { result in
          switch result.outcome {
          case .success(let outcome):
            let verdict: FleetVerdict = outcome.plan.isEmpty ? .noChanges : .applied(outcome.plan.counts)
            return FleetWatchReport(name: result.member.name, device: result.member.device, verdict: verdict, elapsed: result.elapsed)
          case .failure(let failure):
            return FleetWatchReport(name: result.member.name, device: result.member.device, verdict: .failed(failure.description), elapsed: result.elapsed)
          }
        }
      }
      return rows
    }

    /// The watches that hold the defaults' contact.
    func written() async throws -> [String] {
      var names: [String] = []
      for name in RolloutTests.names(loaded.members.count) where try await space.state(name).contacts.contains(where: { $0.name == "Ward desk" }) {
        names.append(name)
      }
      return names
    }

    func run(_ policy: RolloutPolicy, record: RolloutRecord? = nil, parallelism: Int = 10) async throws -> RolloutRecord {
      let start = record ?? RolloutRecord(fleet: "fleet.yaml", members: loaded.members, policy: policy, startedBy: "test@host", now: Date())
      let fleet = self
      return try await RolloutRunner(store: store).run(start) { names, tally in await fleet.apply(names, tally: tally, parallelism: parallelism) }.record
    }
  }

  /// (fleet size, failing watches, policy, phase, waves done, watches written, attempted)
  static let runCases: [(Int, Set<String>, RolloutPolicy, RolloutRecord.Phase, Int, Int, Int)] = [
    // Fails everywhere: the canary is all it touches.
    (5, Set(names(5)), RolloutPolicy(canary: .size(.count(2)), maxFailures: .count(0)), .aborted, 1, 0, 2),
    (1000, Set(names(1000)), RolloutPolicy(canary: .size(.count(2)), batch: .percent(25), maxFailures: .count(0)), .aborted, 1, 0, 2),
    (1000, Set(names(1000)), RolloutPolicy(canary: .size(.percent(1)), maxFailures: .percent(10)), .aborted, 1, 0, 10),
    // One bad watch, tolerated by count, or not.
    (5, ["w0003"], RolloutPolicy(canary: .size(.count(1)), batch: .count(2), maxFailures: .count(1)), .completed, 3, 4, 5),
    (5, ["w0003"], RolloutPolicy(canary: .size(.count(1)), batch: .count(2), maxFailures: .count(0)), .aborted, 2, 2, 3),
    // By percentage: 1 of 3 tried is 33%, more than 20%.
    (5, ["w0003"], RolloutPolicy(canary: .size(.count(1)), batch: .count(2), maxFailures: .percent(20)), .aborted, 2, 2, 3),
    (5, ["w0003"], RolloutPolicy(canary: .size(.count(1)), batch: .count(2), maxFailures: .percent(40)), .completed, 3, 4, 5),
    // All good; a manual pause stops after the canary.
    (5, [], RolloutPolicy(canary: .size(.count(2)), batch: .count(2)), .completed, 3, 5, 5),
    (5, [], RolloutPolicy(canary: .names(["w0005"]), pause: .manual), .paused, 1, 1, 1),
    (1000, [], RolloutPolicy(canary: .size(.count(2)), pause: .manual), .paused, 1, 2, 2),
  ]

  @Test(arguments: 0..<runCases.count) func aRolloutStopsWhereItsPolicySays(_ index: Int) async throws {
    let (count, failing, policy, phase, wavesDone, written, attempted) = Self.runCases[index]
    let fleet = try Fleet(count, failing: failing)
    let record = try await fleet.run(policy)
    #expect(record.phase == phase, "\(policy.summary): \(record.reason ?? "")")
    #expect(record.nextWave == wavesDone)
    #expect(record.attempted == attempted)
    let holding = try await fleet.written()
    #expect(holding.count == written, "\(holding)")
    // The record says what the watches hold.
    #expect(record.withRevision == holding)
    #expect(record.withoutRevision.count == count - written)
    #expect(try fleet.store.load() == record, "the record on disk is the one returned")
  }

  /// (parallelism, max_failures, watches tried in all) — 2 canaries that work, then one wave
  /// of 18 that all fail.
  static let midWaveCases: [(Int, RolloutPolicy.Size, Int)] = [
    (1, .count(0), 3),    // the first failure stops the wave
    (1, .count(2), 5),    // the third does
    (3, .count(0), 5),    // the first failure stops it; the 3 already started finish
    (1, .percent(10), 20), // a percentage is judged when the wave ends
  ]

  @Test(arguments: 0..<midWaveCases.count) func aCountMaxFailuresStopsAWaveStartingWatches(_ index: Int) async throws {
    let (parallelism, limit, tried) = Self.midWaveCases[index]
    let fleet = try Fleet(20, failing: Set(Self.names(20).dropFirst(2)))
    let record = try await fleet.run(RolloutPolicy(canary: .names(["w0001", "w0002"]), maxFailures: limit), parallelism: parallelism)
    #expect(record.phase == .aborted && record.nextWave == 2)
    #expect(record.attempted == tried, "max_failures \(limit), parallelism \(parallelism)")
    #expect(try await fleet.written() == ["w0001", "w0002"])
    #expect(record.row("w0020", device: "-").verdict == (tried < 20 ? .pending("not applied: the rollout was aborted during wave 2 of 2, before this watch started")
                                                                      : record.row("w0020", device: "-").verdict))
  }

  @Test func aPausedRolloutContinuesFromItsRecordAndAnAbortedOneStartsNoOtherWave() async throws {
    let fleet = try Fleet(5, failing: [])
    let policy = RolloutPolicy(canary: .size(.count(1)), batch: .count(2), pause: .manual)
    var record = try await fleet.run(policy)
    #expect(record.phase == .paused && record.nextWave == 1)
    #expect(try await fleet.written() == ["w0001"])
    // What `apply --fleet --continue` does: the next wave, from the record on disk.
    record = try await fleet.run(policy, record: try #require(try fleet.store.load()))
    #expect(record.phase == .paused && record.nextWave == 2)
    #expect(try await fleet.written() == ["w0001", "w0002", "w0003"])
    #expect(record.summary(fleetFile: "fleet.yaml").contains("paused after wave 2 of 3"))
    // `--abort`: nothing more is written.
    record = try RolloutRunner(store: fleet.store).abort(record, by: "ana@ward")
    #expect(try fleet.store.load()?.phase == .aborted)
    #expect(record.withoutRevision == ["w0004", "w0005"])
    #expect(record.row("w0005", device: "sim:watches/w0005.json").verdict == .pending("not applied: the rollout was aborted before wave 3 of 3"))
    #expect(try await fleet.written() == ["w0001", "w0002", "w0003"])
  }

  @Test func aTimedPauseWaitsBetweenWavesAndTheRecordSaysWhenTheNextStarts() async throws {
    let fleet = try Fleet(3, failing: [])
    let seen = Inbox<String>()
    let start = ContinuousClock.now
    let policy = RolloutPolicy(canary: .size(.count(1)), pause: .duration(.milliseconds(300)))
    let record = RolloutRecord(fleet: "fleet.yaml", members: fleet.loaded.members, policy: policy, startedBy: "t@h", now: Date())
    let ended = try await RolloutRunner(store: fleet.store).run(record, events: { event in
      if case .waiting = event { seen.add((try? fleet.store.load()).map { "\($0.phase.rawValue) \($0.resumeAt != nil)" } ?? "none") }
    }) { names, _ in await fleet.apply(names) }.record
    #expect(ContinuousClock.now - start >= .milliseconds(300))
    #expect(seen.items == ["waiting true"])
    #expect(ended.phase == .completed && ended.withRevision.count == 3)
  }

  /// A stop (Ctrl-C) requested `delay` after the first wave ended.
  final class StopAfterFirstWave: StopRequest, @unchecked Sendable {
    let ended = Inbox<ContinuousClock.Instant>()
    let delay: Duration
    init(delay: Duration) { self.delay = delay }
    func begin() {}
    func end() {}
    var isRequested: Bool { ended.items.first.map { ContinuousClock.now - $0 >= delay } ?? false }
  }

  /// (stop delay after the first wave, pause, reason, next wave)
  static let stopCases: [(Duration, RolloutPolicy.Pause, String, Int)] = [
    // Ctrl-C during a wave: the wave is applied again by --continue (some may not have started).
    (.zero, .duration(.zero), "interrupted during wave 1", 0),
    (.zero, .manual, "interrupted during wave 1", 0),
    // Ctrl-C during a timed pause: the rollout pauses at once, the next wave not started.
    (.milliseconds(200), .duration(.seconds(60)), "interrupted while pausing", 1),
  ]

  @Test(arguments: 0..<stopCases.count) func aStopLeavesTheRolloutPausedForContinue(_ index: Int) async throws {
    let (delay, pause, reason, next) = Self.stopCases[index]
    let fleet = try Fleet(5, failing: [])
    let stop = StopAfterFirstWave(delay: delay)
    let policy = RolloutPolicy(canary: .size(.count(1)), batch: .count(2), pause: pause)
    let record = RolloutRecord(fleet: "fleet.yaml", members: fleet.loaded.members, policy: policy, startedBy: "t@h", now: Date())
    var ended = try await RolloutRunner(store: fleet.store, stop: stop).run(record) { names, _ in
      let rows = await fleet.apply(names)
      stop.ended.add(ContinuousClock.now)
      return rows
    }.record
    let firstWaveEnded = try #require(stop.ended.items.first)
    #expect(ContinuousClock.now - firstWaveEnded < .seconds(30), "a stop ends the pause of 60s")
    #expect(ended.phase == .paused && ended.reason == reason && ended.nextWave == next, "\(ended.reason ?? "") \(ended.nextWave)")
    #expect(try await fleet.written() == ["w0001"])
    // --continue: from the record on disk, to the end (a manual pause stops after the next wave;
    // a timed one is shortened here to keep the test short).
    var resumed = try #require(try fleet.store.load())
    if case .duration = pause { resumed.pause = "0s" }
    ended = try await fleet.run(policy, record: resumed)
    #expect(ended.withRevision == (pause == .manual ? ["w0001"] : ["w0001", "w0002", "w0003", "w0004", "w0005"]), "\(ended.phase)")
  }

  /// (each wave's row verdicts, max_failures, phase, waves done, the abort's reason) — rows as a
  /// wave over MQTT returns them, no engine involved. A watch left pending is said apart from
  /// one that failed (fresh-eyes finding: "2 of 2 watches failed or did not report (2)").
  static let verdictCases: [([FleetVerdict], RolloutPolicy.Size, RolloutRecord.Phase, Int, String?)] = [
    ([.applied(PlanCounts(add: 0, change: 1, destroy: 0)), .noChanges], .count(0), .completed, 3, nil),
    // An agent offline or silent when the wave's wait ended: not shown to work, counted.
    ([.applied(PlanCounts(add: 0, change: 1, destroy: 0)), .pending("agent a1 is offline")], .count(0), .aborted, 1,
     "1 of 2 watches did not report, more than max_failures 0 allows"),
    ([.pending("agent a1 is offline"), .pending("agent a1 is offline")], .count(0), .aborted, 1,
     "2 of 2 watches did not report, more than max_failures 0 allows"),
    ([.failed("invalid"), .pending("agent a1 is offline")], .count(0), .aborted, 1,
     "1 of 2 watches failed and 1 did not report, more than max_failures 0 allows"),
    ([.applied(PlanCounts(add: 0, change: 1, destroy: 0)), .pending("agent a1 is offline")], .count(3), .completed, 3, nil),
    ([.retrying("still retrying"), .noChanges], .count(0), .aborted, 1, "1 of 2 watches failed, more than max_failures 0 allows"),
    ([.refused("refused by agent a1"), .noChanges], .percent(50), .completed, 3, nil),
    ([.refused("refused by agent a1"), .failed("invalid")], .percent(50), .aborted, 1, "2 of 2 watches failed, more than max_failures 50% allows"),
    // The safety gate refused an unsafe plan (`--auto-approve` without `--allow-destroy`):
    // nothing written, counted.
    ([.refused("refusing to apply without review: this plan removes contacts"), .noChanges], .count(0), .aborted, 1,
     "1 of 2 watches failed, more than max_failures 0 allows"),
  ]

  @Test(arguments: 0..<verdictCases.count) func whatCountsAgainstMaxFailures(_ index: Int) async throws {
    let (verdicts, limit, phase, waves, reason) = Self.verdictCases[index]
    let fleet = try Fleet(6, failing: [])
    let record = RolloutRecord(fleet: "fleet.yaml", members: fleet.loaded.members,
                               policy: RolloutPolicy(canary: .size(.count(2)), batch: .count(2), maxFailures: limit), startedBy: "t@h", now: Date())
    let ended = try await RolloutRunner(store: fleet.store).run(record) { names, _ in
      zip(names, verdicts).map { FleetWatchReport(name: $0, device: "-", verdict: $1, elapsed: .zero) }
    }.record
    #expect(ended.phase == phase && ended.nextWave == waves, "\(verdicts) max_failures \(limit): \(ended.reason ?? "")")
    #expect(ended.reason == reason)
    // The record gives the canary's result back as its wave reported it (`refused` stays refused).
    #expect(ended.row("w0001", device: "-").verdict == verdicts[0])
  }

  /// A watch whose agent went offline during its wave without reporting on it (killed in the
  /// middle of its apply) may hold part of the revision: the record keeps that, so the row,
  /// the abort's reason and the summary say so — not "pending" as if untouched (fresh-eyes
  /// finding).
  @Test func aWatchWhoseAgentWentDuringItsWaveMayHoldPartOfIt() async throws {
    let fleet = try Fleet(4, failing: [])
    let record = RolloutRecord(fleet: "fleet.yaml", members: fleet.loaded.members,
                               policy: RolloutPolicy(canary: .size(.count(2)), batch: .count(2), maxFailures: .count(0)), startedBy: "t@h", now: Date())
    let ended = try await RolloutRunner(store: fleet.store).run(record) { names, _ in
      names.map { name in
        var row = FleetWatchReport(name: name, device: "-", verdict: .pending("agent a1 is offline"), elapsed: .zero)
        row.mayHoldPart = name == "w0001"
        return row
      }
    }.record
    #expect(ended.phase == .aborted)
    #expect(ended.reason == "2 of 2 watches did not report (1 of them lost its agent during the wave and may hold part of the revision), more than max_failures 0 allows",
            "\(ended.reason ?? "")")
    #expect(ended.row("w0001", device: "-").mayHoldPart && !ended.row("w0002", device: "-").mayHoldPart)
    #expect(ended.unknownRevision == ["w0001"] && ended.withoutRevision.contains("w0002"), "\(ended.unknownRevision) \(ended.withoutRevision)")
  }

  @Test func theRevisionChangesWithAnyWatchsManifests() throws {
    let fleet = try Fleet(3, failing: [])
    let before = RolloutRecord.revision(of: fleet.loaded.members)
    try fleet.space.write("defaults.yaml", "contacts:\n  - {name: Ward desk, phone: \"+15550199\"}\n")
    #expect(RolloutRecord.revision(of: try fleet.space.load().members) != before)
  }
}
