import TSApplyCLI
import Foundation
import TSBridgeClient
import TSEngine
import TSFleet
import TSMonitor
import TSStatusPage
import TSModel
import TSMQTT

extension MonitorCommand {
  /// `tsapply monitor --fleet FILE`: a monitor per watch of the fleet, each with its merged
  /// manifests, all printing to the same outputs; or, for a fleet over MQTT, its agents' events
  /// followed on the broker (docs/fleet.md "Monitoring a fleet").
  func runFleet(_ context: CommandContext) async throws -> ExitStatus {
    let session = try FleetSession.load(fleet, redact: !showSensitive, json: false, context: context)
    let (notifiers, alertNotifiers) = try makeNotifiers(context)
    let output = try EventOutput(log: log.map(context.resolve), json: json, context: context)
    let stderr = context.stderr
    // The page's SOS presses and the alerts are kept per fleet: per site and broker over MQTT, per fleet file otherwise.
    // The fleet file as the kernel finds it: `./fleet.yaml`, `fleet.yaml` and a link to it are one fleet.
    let key = { (file: String) in
      session.engine.stateRoot + "/fleets/" + WatchHome.folderName(session.broker.map { $0.site + "@" + $0.settings.address.description } ?? file)
    }
    let fleetFolder = MonitorState.kept(at: key(FilePaths.resolved(context.resolve(session.fleetFile))),
                                        formerly: key(context.resolve(session.fleetFile)))
    let board = page.host == nil ? nil
      : StatusBoard(members: FleetMonitor.boardMembers(session.loaded.members), offlineThreshold: page.offlineAfter,
                    showSensitive: showSensitive, storePath: fleetFolder + "/status-page.json")
    var server: StatusPageServer?
    if let board { server = try page.start(board: board, heading: session.fleetFile, context: context, write: output.write) }
    defer { server?.stop() }
    // The manifests as they are now (read again when a file changes), for the page over MQTT and the rollout's summary.
    let manifests = FleetManifests(path: context.resolve(session.fleetFile), displayName: session.fleetFile,
                                   registry: session.engine.registry, environment: session.engine.environment, loaded: session.loaded)
    let revisions = FleetMonitor.ManifestRevisions(manifests)
    let rolloutWatch = board.map {
      Self.followRollout(session.rolloutStore, fleetFile: session.fleetFile, names: session.loaded.everyMember.map(\.name),
                         manifests: manifests, revisions: revisions, on: $0)
    }
    defer { rolloutWatch?.cancel() }
    if session.broker == nil, let note = alerting.unheardPressesNote(
      sosNotifiers: notifiers.count, alertNotifiers: alertNotifiers.count,
      bridged: session.loaded.members.contains { $0.device.hasPrefix(BridgeScheme.prefix) }) {
      stderr.write(note + "\n")
    }
    // Alerts are counted by the page's metrics as every other event (fresh-eyes finding: `kind="alert"` stayed 0).
    let alerts = alerting.alerts(directory: fleetFolder + "/alerts", notifiers: alertNotifiers, offlineAfter: page.offlineAfter,
                                 context: context, emit: { event in
                                   output.write(event)
                                   board?.record(event, for: [])
                                 })
    let observers: [any MonitorObserver] = [board as (any MonitorObserver)?, alerts].compactMap { $0 }
    await alerts?.start()
    let clock = alertClock(alerts)
    defer { clock?.cancel() }
    if let broker = session.broker {
      guard !once, !reconcile else {
        throw UsageError("over MQTT the agents check and apply; --once and --reconcile are for watches tsapply reaches itself (see 'tsapply status --fleet')")
      }
      let outbox = fleetFolder + "/outbox"
      let follower: FleetMonitor.Follower
      do {
        // The page compares the agents' statuses with what the manifests give now (not the
        // desired documents: the monitor's broker user may not read them).
        let current: @Sendable (String) -> Result<[String], FleetInputProblem> = { name in revisions.revisions(of: name) }
        follower = try FleetMonitor.Follower(site: broker.site, settings: broker.settings, outboxDirectory: outbox,
                                             eventsDirectory: fleetFolder + "/monitor-events", notifiers: notifiers,
                                             delivery: MonitorSettings(manifestPath: "", manifestName: "").delivery,
                                             emit: output.write, notice: { stderr.write($0 + "\n") }, observers: observers,
                                             names: Dictionary(session.loaded.members.map { ($0.watch.watchID, $0.name) },
                                                               uniquingKeysWith: { first, _ in first }),
                                             revisions: current, fleetFile: session.fleetFile)
        try await follower.start(within: AgentCommand.firstConnection)
      } catch {
        throw CommandFailure("cannot follow the events on \(broker.settings.address): \(error)")
      }
      stderr.write("Following the events of site \(broker.site) on \(broker.settings.address); Ctrl-C stops.\n")
      // Unless --watch chose the watches, the fleet file is followed as for direct watches.
      let following = !fleet.watches.isEmpty ? nil
        : FleetMonitor.followFleetFile(manifests, members: session.loaded.members, fleetFile: session.fleetFile, follower: follower,
                                       board: board, now: session.engine.now, emit: output.write, observers: observers,
                                       notice: { stderr.write($0 + "\n") })
      let (signal, signals) = await AgentCommand.firstStopSignal()
      following?.cancel()
      stderr.write("\(StopSignals.name(signal)) received: stopping the monitor (send it again to quit at once).\n")
      await follower.stop(grace: .seconds(5))
      await alerts?.stop(grace: .seconds(5))
      signals.end()
      return .success
    }
    var template = MonitorSettings(manifestPath: "", manifestName: "", interval: interval, reconcile: reconcile,
                                   allowDestroy: allowDestroy, maxAppliesPerHour: maxApplies, showSensitive: showSensitive)
    template.commandLine = context.commandLine
    // A watch that cannot be opened at start is offline (reported, tried again), not a monitor
    // that ends in silence while the others run.
    template.retriesFirstOpen = true
    let makeMonitors = { (members: [FleetMember]) in
      FleetMonitor.monitors(for: members, fleetPath: context.resolve(session.fleetFile),
                            fleetName: session.fleetFile, engine: session.engine, template: template,
                            notifiers: notifiers, emit: output.write, notice: { stderr.write($0 + "\n") }, observers: observers,
                            rollout: session.rolloutStore, manifests: manifests)
    }
    if once {
      let monitors = makeMonitors(session.loaded.members)
      let results = await withTaskGroup(of: Result<Bool, MonitorError>.self) { group in
        for monitor in monitors {
          group.addTask {
            do throws(MonitorError) { return .success(try await monitor.checkOnce()) } catch { return .failure(error) }
          }
        }
        return await group.reduce(into: []) { $0.append($1) }
      }
      let failures = results.compactMap { if case .failure(let error) = $0 { error } else { nil } }
      if !failures.isEmpty {
        throw CommandFailure("\(failures.count) of \(counted(monitors.count, "watch", "watches")) could not be checked: " + failures.map { "\($0)" }.joined(separator: "; "))
      }
      return results.contains { (try? $0.get()) == true } ? .changesPresent : .success
    }
    let supervisor = FleetMonitor.Supervisor(
      fleetFile: session.fleetFile, engine: session.engine, members: session.loaded.members, everyMember: session.loaded.everyMember,
      follows: fleet.watches.isEmpty, manifests: manifests, board: board,
      monitored: MonitoredWatches(path: fleetFolder + "/monitored-watches.json"), interval: interval,
      emit: output.write, observers: observers, notice: { stderr.write($0 + "\n") })
    let signals = StopSignals { signal in
      stderr.write("\(StopSignals.name(signal)) received: stopping the monitors (send it again to quit at once).\n")
      supervisor.stop()
    }
    signals.begin()
    defer { signals.end() }
    let failures = await supervisor.run(make: makeMonitors, template: template, notifiers: notifiers)
    await alerts?.stop(grace: .seconds(5))
    stderr.write("Monitors stopped.\n")
    if !failures.isEmpty { throw CommandFailure(failures.joined(separator: "\n")) }
    return .success
  }

  /// Reads the fleet's rollout record (kept by `apply --fleet` in its own process) every 2 s
  /// into the page's board, so a paused or aborted rollout shows on the page as `status --fleet`
  /// prints it, its watches counted from what the monitors last read of them (`rolloutRows`)
  /// against the fleet's watches as the fleet file and their manifests are now (`manifests`,
  /// else `names` when the fleet file cannot be read; `revisions`:
  /// a monitor started before the manifests were edited and the rollout begun compares with
  /// what the rollout published); a record that cannot be read says so.
  static func followRollout(_ store: RolloutStore, fleetFile: String, names: [String], manifests: FleetManifests,
                            revisions: FleetMonitor.ManifestRevisions, on board: StatusBoard) -> Task<Void, Never> {
    Task {
      while !Task.isCancelled {
        do throws(SecureFileError) {
          board.rollout(try store.load().map { loaded in
            var record = loaded
            // The fleet file as it is now: a rollout over a watch added since the monitor
            // started has its revision over that watch too.
            let named = (try? manifests.members().map(\.name)) ?? names
            let members = named.compactMap { name in (try? manifests.member(name)) ?? nil }
            let current = Dictionary(members.map(\.name).compactMap { name in (try? revisions.revisions(of: name).get()).map { (name, $0) } },
                                     uniquingKeysWith: { first, _ in first })
            record.observe(rolloutRows(board.snapshot().rows, current: current, since: InternetTime.date(record.started)), members: members)
            return StatusBoard.Rollout(phase: record.phaseWord, lines: record.summary(fleetFile: fleetFile).split(separator: "\n").map(String.init),
                                json: record.json)
          })
        } catch {
          board.rollout(StatusBoard.Rollout(phase: "unknown", lines: ["The fleet's rollout record cannot be read: \(error)"],
                                            json: .object(["phase": .string("unknown"), "reason": .string(error.description)])))
        }
        try? await Task.sleep(for: .seconds(2))
      }
    }
  }

  /// The page's rows as `status --fleet` rows for a rollout's summary: whether each watch holds
  /// its manifests as its monitor last read it (directly), or as its agent's applied revision
  /// says against `current` (the revisions its manifests give now, by name, over MQTT); not
  /// known while it is offline or not read yet.
  /// `since`: when the rollout started; a watch its monitor last read before then (directly) is
  /// not known yet — that read compared it with the manifests as they were, before the edit the
  /// rollout carries (the page said "3 of 3 have the new revision" of watches holding the old one).
  static func rolloutRows(_ rows: [StatusBoard.Row], current: [String: [String]], since: Date? = nil) -> [FleetStatusRow] {
    rows.map { row in
      // Not read while it is offline, or while the monitor cannot see it (`not known`).
      let seen = row.offlineSince == nil && row.state != "not known"
      var status = FleetStatusRow(name: row.name, device: row.device, state: row.offlineSince == nil ? row.state : "offline")
      if seen {
        if let applied = row.appliedRevision {
          status.holdsManifests = current[row.name]?.contains(applied) == true
        } else if let since, let read = row.lastSeen, read < since {
          status.holdsManifests = nil
        } else {
          status.holdsManifests = row.holdsManifest
        }
      }
      return status
    }
  }
}
