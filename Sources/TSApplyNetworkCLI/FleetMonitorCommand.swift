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
    // A watch the fleet file no longer names (docs/fleet.md "Monitoring a fleet"): it leaves the
    // page, its open alerts are closed (by the `removed` event), and stderr says so; `what`
    // says what becomes of it, `done` what this monitor did.
    func removed(_ leaving: [String], devices: [String: String], _ what: String, _ done: String) {
      board?.remove(leaving)
      for name in leaving {
        let event = MonitorEvent(time: session.engine.now(), watch: name, kind: .removed,
                                 message: "\(session.fleetFile) no longer names this watch: \(what)",
                                 fields: ["fleet": .string(session.fleetFile), "device": devices[name].map(JSONValue.string) ?? .null])
        output.write(event)
        for observer in observers { observer.record(event, for: [name]) }
      }
      stderr.write("\(session.fleetFile) no longer names \(counted(leaving.count, "watch", "watches")) (\(leaving.joined(separator: ", "))): "
                   + "\(done) \(leaving.count == 1 ? "it" : "them").\n")
    }
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
        try await follower.start(within: .seconds(30))
      } catch {
        throw CommandFailure("cannot follow the events on \(broker.settings.address): \(error)")
      }
      stderr.write("Following the events of site \(broker.site) on \(broker.settings.address); Ctrl-C stops.\n")
      // Unless --watch chose the watches, the fleet file is followed as for direct watches: a
      // watch added joins the page and the alerts, one removed leaves them (its events are still
      // shown, under its identity, and its SOS presses still delivered: the agents still serve it).
      let following = !fleet.watches.isEmpty ? nil : Task {
        var membership = FleetMonitor.Membership(session.loaded.members.map(\.name))
        var members = Dictionary(session.loaded.members.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        while !Task.isCancelled {
          try? await Task.sleep(for: .seconds(5))
          guard !Task.isCancelled, let current = try? manifests.members() else { continue }
          board?.relabel(FleetMonitor.boardMembers(current))
          let leaving = membership.leaving(Set(current.map(\.name)))
          let added = current.filter { !membership.names.contains($0.name) }
          membership.join(added.map(\.name))
          for member in added { members[member.name] = member }
          guard !leaving.isEmpty || !added.isEmpty else { continue }
          follower.rename(Dictionary(members.values.filter { membership.names.contains($0.name) }.map { ($0.watch.watchID, $0.name) },
                                     uniquingKeysWith: { first, _ in first }))
          if !leaving.isEmpty {
            removed(leaving, devices: members.mapValues(\.device), "it left the status page and its alerts are closed; what its agent "
                      + "still reports of it is shown under its identity, and its SOS presses are still delivered", "stopped following")
            for name in leaving { members[name] = nil }
          }
          if !added.isEmpty {
            // Said before the page shows them.
            stderr.write("\(session.fleetFile) names \(counted(added.count, "more watch", "more watches")) (\(added.map(\.name).joined(separator: ", "))): "
                         + "following \(added.count == 1 ? "it" : "them") too.\n")
            board?.add(FleetMonitor.boardMembers(added))
          }
        }
      }
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
    let monitors = makeMonitors(session.loaded.members)
    if once {
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
    // Devices an earlier run monitored that no member has now (a watch removed from the fleet
    // file, or given another device, while it ran or while it was stopped), whose outboxes still
    // hold SOS presses: delivered now (`MonitoredWatches`).
    let monitored = MonitoredWatches(path: fleetFolder + "/monitored-watches.json")
    let waiting = monitored.waiting(members: session.loaded.everyMember, engine: session.engine)
    let deliverers = FleetMonitor.deliverers(for: waiting, engine: session.engine, template: template, notifiers: notifiers, emit: output.write,
                                             notice: { stderr.write($0 + "\n") }, observers: observers)
    if !waiting.isEmpty {
      stderr.write("Delivering the SOS presses left in the outbox\(waiting.count == 1 ? "" : "es") of \(counted(waiting.count, "device", "devices")) "
                   + "\(session.fleetFile) no longer names (\(waiting.map { "\($0.name)'s \($0.device)" }.joined(separator: ", "))); "
                   + "\(waiting.count == 1 ? "it is" : "they are") not monitored.\n")
    }
    // The monitors still running (watches added to the fleet file join while it runs, watches
    // removed from it leave), how many, and whether a stop was asked for.
    let running = Locked(monitors + deliverers)
    let live = Locked(0)
    let stopping = Locked(false)
    let signals = StopSignals { signal in
      stderr.write("\(StopSignals.name(signal)) received: stopping the monitors (send it again to quit at once).\n")
      stopping.set(true)
      for monitor in running.value { monitor.stop() }
    }
    signals.begin()
    defer { signals.end() }
    let look = min(interval, .seconds(5))
    let failures = await withTaskGroup(of: String?.self) { group in
      func start(_ monitor: Monitor, name: String) {
        live.mutate { $0 += 1 }
        group.addTask {
          defer {
            running.mutate { $0.removeAll { $0 === monitor } }
            live.mutate { $0 -= 1 }
          }
          do throws(MonitorError) {
            try await monitor.run()
            return nil
          } catch {
            // Said now, not only when the others stop: this watch is no longer watched by this
            // process (another monitor that holds its lock still watches it).
            if case .locked = error {
              stderr.write("\(name): not monitored by this process: \(error); the monitor that holds it goes on watching it.\n")
            } else {
              stderr.write("\(name): its monitor stopped: \(error); this watch is not monitored until tsapply monitor --fleet is started again.\n")
            }
            return "\(name): \(error)"
          }
        }
      }
      for (monitor, member) in zip(monitors, session.loaded.members) { start(monitor, name: member.name) }
      for deliverer in deliverers { start(deliverer, name: deliverer.settings.watchName ?? "") }
      // Unless --watch chose the watches: a watch added to the fleet file gets a monitor of its
      // own at the next look, so its SOS presses are forwarded without a restart; one removed
      // from it (missing at two looks in a row, so a file caught half-written stops nothing) has
      // its monitor stopped, leaves the page, and a `removed` event says so. Watching goes on
      // while the fleet file names no watch, until one is added.
      var membership = FleetMonitor.Membership(session.loaded.everyMember.map(\.name))
      var devices = Dictionary(session.loaded.everyMember.map { ($0.name, $0.device) }, uniquingKeysWith: { first, _ in first })
      // The devices running monitors hold (canonical specs). A monitor that is stopping — retiring
      // while it delivers what it heard, or only delivering — from one of `wanted` is stopped now,
      // so that the watch the fleet file now gives that device gets it at a next look.
      func handOver(_ wanted: [String]) -> Set<String> {
        let canonical = session.engine.canonicalSpec
        let wanted = Set(wanted.map(canonical))
        var busy: Set<String> = []
        for monitor in running.value {
          guard let device = monitor.settings.deviceSpec.map(canonical) else { continue }
          busy.insert(device)
          if wanted.contains(device), monitor.isStopping { monitor.stop() }
        }
        return busy
      }
      while !stopping.value, live.value > 0 || membership.names.isEmpty {
        try? await Task.sleep(for: look)
        guard !stopping.value, fleet.watches.isEmpty, let current = try? manifests.members() else { continue }
        board?.relabel(FleetMonitor.boardMembers(current))
        let leaving = membership.leaving(Set(current.map(\.name)))
        if !leaving.isEmpty {
          // Retired, not stopped: an SOS it heard and has not delivered yet is still delivered.
          for monitor in running.value where leaving.contains(monitor.settings.watchName ?? "") { monitor.retire() }
          removed(leaving, devices: devices, "its monitor stopped, so it is not checked and its SOS presses are not heard "
                    + "(one heard already is still delivered)", "stopped monitoring")
        }
        // A watch the fleet file now gives another device (the resident's watch replaced, its
        // entry corrected): its monitor moves to it — the old device's retires (what it heard is
        // still delivered), one for the new device starts. It went on watching the old device
        // under the name, and the new watch's SOS presses reached no one (fresh-eyes finding).
        // Another spelling of the same device is no move.
        let canonical = session.engine.canonicalSpec
        let moved = current.filter { member in
          membership.names.contains(member.name) && !leaving.contains(member.name)
            && devices[member.name].map { canonical($0) != canonical(member.device) } == true
        }
        if !moved.isEmpty {
          let names = Set(moved.map(\.name))
          for monitor in running.value where names.contains(monitor.settings.watchName ?? "") { monitor.retire() }
          // A device another monitor still holds — two watches swapping devices, the other's
          // monitor retiring (delivering what it heard) — is taken at a look after that monitor
          // stopped: started now, its monitor would find the device's lock held and end
          // (fresh-eyes finding: both watches of a swap went unmonitored). That monitor is
          // stopped, not left retrying a receiver that is down (its grace, then what is left
          // stays in the outbox, which the device's new monitor delivers).
          let busy = handOver(moved.map(\.device))
          let ready = moved.filter { !busy.contains(canonical($0.device)) }
          if !ready.isEmpty {
            monitored.add(ready)
            for member in ready { devices[member.name] = member.device }
            board?.replace(FleetMonitor.boardMembers(ready))
            let more = makeMonitors(ready)
            running.mutate { $0 += more }
            stderr.write("\(session.fleetFile) gives \(ready.map { "\($0.name) the device \($0.device)" }.joined(separator: ", ")): "
                         + "monitoring \(ready.count == 1 ? "it" : "them") there; the monitor of the device before stops.\n")
            for (monitor, member) in zip(more, ready) { start(monitor, name: member.name) }
            if stopping.value { for monitor in more { monitor.stop() } }
          }
        }
        // A watch whose device a running monitor still watches (renamed in the fleet file: the
        // old name's monitor is stopping and holds the watch's monitor lock) joins once it stopped.
        let busy = handOver(current.filter { !membership.names.contains($0.name) }.map(\.device))
        let added = current.filter { !membership.names.contains($0.name) && !busy.contains(canonical($0.device)) }
        guard !added.isEmpty else { continue }
        monitored.add(added)
        membership.join(added.map(\.name))
        for member in added { devices[member.name] = member.device }
        board?.add(FleetMonitor.boardMembers(added))
        let more = makeMonitors(added)
        running.mutate { $0 += more }
        stderr.write("\(session.fleetFile) names \(counted(added.count, "more watch", "more watches")) (\(added.map(\.name).joined(separator: ", "))): monitoring \(added.count == 1 ? "it" : "them") too.\n")
        for (monitor, member) in zip(more, added) { start(monitor, name: member.name) }
        if stopping.value { for monitor in more { monitor.stop() } }
      }
      return await group.reduce(into: [String]()) { if let failure = $1 { $0.append(failure) } }
    }
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
