import TSApplyCLI
import Foundation
import TSEngine
import TSFleet
import TSModel
import TSPlan

/// `apply --fleet` as a staged rollout (docs/fleet.md "Staged rollouts"): the waves, the
/// failure limit and the pauses are `RolloutRunner`'s; this front end asks once, applies (or,
/// over MQTT, publishes) each wave through the same paths as an apply of the whole fleet, and
/// prints where the rollout stands.
extension FleetSession {
  /// A staged rollout this apply starts, continues or aborts.
  struct RolloutRequest {
    /// The policy: the fleet file's `rollout:` with the options over it; `nil` for
    /// `--continue` and `--abort`, and for a plain apply refused because a rollout is paused.
    var policy: RolloutPolicy?
    /// Where the fleet's rollout record is.
    var store: RolloutStore
  }

  /// The fleet's rollout records.
  var rolloutStore: RolloutStore {
    RolloutStore(root: engine.stateRoot, fleetPath: loaded.fleet.directory + "/" + (fleetFile as NSString).lastPathComponent)
  }

  /// The rollout this apply is part of: asked for (`rollout:`, an option, `--continue`,
  /// `--abort`), or a paused one of this fleet, which a plain apply must not pass by; `nil` to
  /// apply every watch at once.
  /// - Throws: `UsageError` for an option value that is not a size, pause or watch.
  func rolloutRequest() throws(UsageError) -> RolloutRequest? {
    let store = rolloutStore
    if options.rollout.resume || options.rollout.abort { return RolloutRequest(policy: nil, store: store) }
    if let policy = try rolloutPolicy() { return RolloutRequest(policy: policy, store: store) }
    if let record = try? store.load(), record.phase.isResumable { return RolloutRequest(policy: nil, store: store) }
    return nil
  }

  /// The fleet file's `rollout:` with the options given over it; `nil` when neither says anything.
  func rolloutPolicy() throws(UsageError) -> RolloutPolicy? {
    let given = options.rollout
    guard loaded.fleet.rollout != nil || given.hasPolicy else { return nil }
    var policy = loaded.fleet.rollout?.value ?? RolloutPolicy()
    func size(_ text: String, _ option: String, zero: Bool) throws(UsageError) -> RolloutPolicy.Size {
      switch RolloutPolicy.Size.parse(text, zero: zero) {
      case .success(let size): return size
      case .failure(let problem): throw UsageError("\(option) \(problem)")
      }
    }
    if let text = given.canary {
      if text.allSatisfy({ $0.isNumber || $0 == "%" }) {
        policy.canary = .size(try size(text, "--canary", zero: false))
      } else {
        let names = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        let known = loaded.fleet.watches.map(\.name.value)
        for name in names where !known.contains(name) {
          var message = "--canary names \"\(name)\", which is not a watch of \(fleetFile)"
          if let meant = Suggestion.closest(to: name, in: known) { message += "; did you mean \"\(meant)\"?" }
          throw UsageError(message)
        }
        policy.canary = .names(names)
      }
    }
    if let text = given.batch { policy.batch = try size(text, "--batch", zero: false) }
    if let text = given.maxFailures { policy.maxFailures = try size(text, "--max-failures", zero: true) }
    if let text = given.pause {
      switch RolloutPolicy.Pause.parse(text) {
      case .success(let pause): policy.pause = pause
      case .failure(let problem): throw UsageError("--pause \(problem)")
      }
    }
    return policy
  }

  /// Starts, continues (`--continue`) or aborts (`--abort`) the fleet's rollout, holding its
  /// lock throughout. Exit status: 0 when it completed without failures or paused; 1 when it
  /// aborted (the message says how many watches have the new revision), a watch failed, or it
  /// was interrupted.
  func applyStaged(_ settings: ApplyRun.Settings, _ request: RolloutRequest) async throws -> ExitStatus {
    let store = request.store
    let lock: WatchLock
    do { lock = try await store.lock(command: context.commandLine) } catch { throw CommandFailure(error.description) }
    defer { lock.release() }
    stop.begin()
    defer { stop.end() }
    let runner = RolloutRunner(store: store, stop: stop)
    var existing: RolloutRecord?
    do { existing = try store.load() } catch {
      // A new rollout replaces a record that cannot be read; continuing or aborting needs it.
      if request.policy == nil { throw CommandFailure(error.description) }
      existing = nil
    }
    // This process holds the rollout's lock: one the record says runs was left by a process that ended.
    if let phase = existing?.phase, phase == .running || phase == .waiting { existing?.isInterrupted = true }
    let paused = existing.flatMap { $0.phase.isResumable ? $0 : nil }
    var record: RolloutRecord
    if options.rollout.abort || options.rollout.resume {
      guard let paused else {
        throw CommandFailure("\(fleetFile) has no paused rollout to \(options.rollout.abort ? "abort" : "continue")"
          + (existing.map { " (its last one \($0.phaseWord) at \($0.updated))" } ?? ""))
      }
      if options.rollout.abort {
        let aborted: RolloutRecord
        do { aborted = try runner.abort(paused, by: Operator.current) } catch { throw CommandFailure(error.description) }
        // What it leaves is what the watches hold, read as status --fleet reads them.
        return try endRollout(await observed(aborted), rows: [:])
      }
      let names = Set(paused.names)
      let members = loaded.members.filter { names.contains($0.name) }
      if let missing = paused.names.first(where: { name in !members.contains { $0.name == name } }) {
        throw CommandFailure("\(fleetFile) no longer has the watch \(missing) of the paused rollout; abort it with 'tsapply apply --fleet \(fleetFile) --abort' and start a new one")
      }
      guard RolloutRecord.revision(of: members) == paused.revision else {
        throw CommandFailure("the manifests changed since this rollout started (\(paused.started)); a changed manifest starts a new rollout with its canary: "
          + "abort this one with 'tsapply apply --fleet \(fleetFile) --abort', then apply again")
      }
      record = paused
    } else {
      if let paused {
        throw CommandFailure("a rollout of \(fleetFile) is \(paused.phaseWord) after wave \(paused.nextWave) of \(paused.waves.count) "
          + "(started \(paused.started) by \(paused.startedBy)): continue it with 'tsapply apply --fleet \(fleetFile) --continue' "
          + "or abort it with 'tsapply apply --fleet \(fleetFile) --abort'")
      }
      guard let policy = request.policy else { throw CommandFailure("no rollout policy") }
      record = RolloutRecord(fleet: fleetFile, members: loaded.members, policy: policy, startedBy: Operator.current, now: Date())
    }
    // The watches of a wave a process was killed in that it did not record: this run finds
    // them as that process left them.
    let killedWave = record.isInterrupted && record.phase == .running && record.nextWave < record.waves.count
      ? record.waves[record.nextWave].filter { record.watches[$0] == nil } : []
    let remaining = Set(record.waves[record.nextWave...].flatMap { $0 })
    let members = loaded.members.filter { remaining.contains($0.name) }
    let scoped = with(members: members)
    let waveCount = record.waves.count - record.nextWave
    let note = " in \(waveCount) wave\(waveCount == 1 ? "" : "s") (\(record.policy))"
    var approved: [String: Plan]?
    var planRows: [String: FleetWatchReport] = [:]
    if !settings.autoApprove {
      if let broker {
        try scoped.confirmPublishing(members, broker: broker, note: note)
      } else {
        switch try await scoped.planAndConfirm(settings, question: "roll these actions out to", note: note) {
        case .finished(let status): return status
        case .approved(let report, let plans):
          approved = plans
          for row in report.watches { planRows[row.name] = row }
        }
      }
    }
    let broker = self.broker, plans = approved, planned = planRows, context = self.context, json = self.json
    let wave: @Sendable ([String], RolloutTally) async -> [FleetWatchReport] = { names, tally in
      let chosen = Set(names)
      let waveMembers = members.filter { chosen.contains($0.name) }
      if let broker {
        // Published together: the wave's statuses are judged when its wait ends.
        do { return try await scoped.with(members: waveMembers).publish(waveMembers, settings, broker: broker) } catch {
          let reason = (error as? CommandFailure)?.message ?? "\(error)"
          return waveMembers.map { FleetWatchReport(name: $0.name, device: $0.device, verdict: .failed(reason), elapsed: .zero) }
        }
      }
      // No watch of the wave starts once the tally says stop (Ctrl-C, or a count max_failures
      // passed); those not started have no row.
      let session = scoped.with(startGate: tally) { tally.finished($0) }
      let notStarted = FleetFailure.interrupted.description
      guard let plans else {
        return await session.with(members: waveMembers).applied(settings, approved: nil).filter { $0.verdict != .failed(notStarted) }
      }
      let done = await session.with(members: waveMembers.filter { plans[$0.name] != nil }).applied(settings, approved: plans)
        .filter { $0.verdict != .failed(notStarted) }
      // A watch with nothing approved (nothing to change, or its plan failed) counts as planned.
      for member in waveMembers where plans[member.name] == nil { if let row = planned[member.name] { tally.finished(row) } }
      return waveMembers.compactMap { member in done.first { $0.name == member.name } ?? (plans[member.name] == nil ? planned[member.name] : nil) }
    }
    let hasCanary = record.policy.hasPrefix("canary"), fleetFile = self.fleetFile
    let events: @Sendable (RolloutEvent) -> Void = { event in
      guard !json else { return }
      switch event {
      case .waveStarting(let index, let total, let names):
        let label = index == 0 && hasCanary ? " (canary)" : ""
        let shown = names.prefix(10).joined(separator: ", ") + (names.count > 10 ? ", and \(names.count - 10) more" : "")
        context.stdout.write("\n--- Wave \(index + 1) of \(total)\(label): \(counted(names.count, "watch", "watches")): \(shown)\n\n")
      case .waiting(let pause):
        context.stdout.write("\n--- Pausing \(DurationText.text(pause)) before the next wave (Ctrl-C pauses the rollout; 'tsapply apply --fleet \(fleetFile) --continue' resumes it).\n")
      }
    }
    do {
      let (ended, rows) = try await runner.run(record, events: events, wave: wave)
      // Aborted or paused, what it leaves is what the watches hold (a failed watch's write may
      // have landed; a watch of a later wave may hold the revision already: it said "7 do not
      // (7 not started)" of watches that all held it).
      let observe = ended.phase == .aborted || ended.phase == .paused || ended.phase == .waiting
      return try endRollout(observe ? await observed(ended) : ended, rows: rows, bodies: approved == nil, killedWave: killedWave)
    } catch let error as SecureFileError {
      throw CommandFailure("cannot write the rollout's record: \(error); no later wave was started")
    }
  }

  /// `record` with what its watches hold now (`RolloutRecord.observe`), read as `status
  /// --fleet` reads them (read-only); as it was when they cannot be read (over MQTT, the broker).
  func observed(_ record: RolloutRecord) async -> RolloutRecord {
    var record = record
    let names = Set(record.names)
    let rows: [FleetStatusRow]
    if let broker {
      guard let site = try? await statusRows(broker) else { return record }
      rows = site.rows
    } else {
      rows = await FleetStatus.direct(loaded.members.filter { names.contains($0.name) },
                                      runner: FleetRunner(engine: engine, parallelism: options.parallelism))
    }
    record.observe(rows, members: loaded.everyMember, read: options.watches.isEmpty ? nil : Set(rows.map(\.name)))
    return record
  }

  /// Prints where `record` ended — the review of every watch of the rollout (`rows` for those
  /// this run handled, each failed one with its whole log as `apply --fleet` shows it, the
  /// record's results for the others) and the summary, or the JSON report with a `rollout`
  /// object — and returns the exit status (module doc of `applyStaged`). `bodies`: whether the
  /// review shows applied watches' plans (not when the approval showed them).
  /// `killedWave`: the watches of the wave an earlier process was killed in before it recorded
  /// them; one this run found with nothing to change is said to hold the revision, most likely
  /// from that process (its row says only what this run did).
  private func endRollout(_ record: RolloutRecord, rows: [String: FleetWatchReport], bodies: Bool = true,
                          killedWave: [String] = []) throws -> ExitStatus {
    let names = Set(record.names)
    let watches = loaded.members.filter { names.contains($0.name) }.map { member in
      guard var row = rows[member.name] else {
        // Not run now: its result as its wave recorded it (an earlier run), or not started; not
        // a time of this run.
        var row = record.row(member.name, device: member.device)
        row.timeNote = record.watches[member.name] != nil || row.details["rollout_state"] == .string("has the revision (read from the watch)")
          ? "earlier run" : "-"
        return row
      }
      row.details.merge(record.row(member.name, device: member.device).details) { mine, _ in mine }
      return row
    }
    var report = FleetReport(operation: "apply", fleetFile: fleetFile, watches: watches)
    report.rollout = record.json
    if json {
      context.stdout.write(report.json())
    } else {
      var review = reviewOptions
      review.bodies = bodies
      let found = killedWave.filter { rows[$0]?.verdict == .noChanges }
      let note = found.isEmpty ? "" : "\(found.count == 1 ? "" : "The watches ")\(found.prefix(10).joined(separator: ", "))"
        + (found.count > 10 ? " and \(found.count - 10) more" : "") + " of wave \(record.waveNumber(of: found[0])) had nothing left to change: "
        + "\(found.count == 1 ? "it holds" : "they hold") the new revision, most likely written by the run that was interrupted in that wave.\n"
      context.stdout.write("\n" + report.review(renderer: renderer, options: review) + note + "\n" + record.summary(fleetFile: fleetFile))
    }
    // The counts are of the watches the summary counts (`--watch`: those selected).
    let have = record.withRevision.count, total = record.counted.count, unknown = record.unknownRevision.count
    switch record.phase {
    case .aborted:
      throw CommandFailure("the rollout was aborted after wave \(min(record.nextWave, record.waves.count)) of \(record.waves.count) (\(record.reason ?? "aborted")): "
        + "\(have) of \(counted(total, "watch", "watches"))\(record.selected == nil ? "" : " selected (--watch)") have the new revision, \(total - have - unknown) do not"
        + (unknown > 0 ? ", \(unknown) not known" : ""))
    case .paused, .waiting, .running:
      if record.reason?.hasPrefix("interrupted") == true {
        throw CommandFailure("interrupted: the rollout is paused after wave \(record.nextWave) of \(record.waves.count); "
          + "continue it with 'tsapply apply --fleet \(fleetFile) --continue'")
      }
      return .success
    case .completed:
      let failed = report.watches.filter { $0.verdict.isFailure || $0.verdict.isRetrying }
      if !failed.isEmpty { throw Self.failed(failed, of: total) }
      return .success
    }
  }
}
