import Foundation
import TSApply
import TSDevice
import TSEngine
import TSManifest
import TSModel
import TSMonitor
import TSMQTT
import TSPlan

/// `tsapply monitor --fleet` (docs/fleet.md "Monitoring a fleet"): for a fleet whose watches
/// tsapply reaches itself, one `Monitor` (TSMonitor) per watch, each reading the watch's merged
/// manifests again at every check; for a fleet over MQTT, the agents' events followed on the
/// broker, in the monitor's event form, SOS presses passed to the notifiers through a durable
/// outbox.
public enum FleetMonitor {
  /// A monitor per member: `template`'s settings with the member's device, its merged manifest
  /// from the fleet file at `fleetPath` (read again at every check when a file it comes from
  /// changed, `FleetManifests`, one for all of them) and its name in messages. Each monitor's
  /// events and checks also go to `observers` under the member's name (the status page, alerts).
  /// With `rollout` (the fleet's rollout records), a heal holds back the manifests' own
  /// changes while the fleet's staged rollout is not completed (`RolloutStore.holdBackReason`,
  /// read at each heal: `apply --fleet` runs it in another process). `shared`: the fleet file's
  /// `FleetManifests` when the caller reads it too (the page's rollout summary), so each file is
  /// read once.
  public static func monitors(for members: [FleetMember], fleetPath: String, fleetName: String, engine: Engine,
                              template: MonitorSettings, notifiers: [any Notifier],
                              emit: @escaping @Sendable (MonitorEvent) -> Void,
                              notice: @escaping @Sendable (String) -> Void, observers: [any MonitorObserver] = [],
                              rollout: RolloutStore? = nil, manifests shared: FleetManifests? = nil) -> [Monitor] {
    let manifests = shared ?? FleetManifests(path: fleetPath, displayName: fleetName, registry: engine.registry, environment: engine.environment)
    return members.map { member in
      var settings = template
      settings.deviceSpec = member.device
      settings.manifestName = member.manifestFiles.joined(separator: " over ")
      settings.planCommand = "tsapply plan --fleet \(ShellWord.quoted(fleetName)) --watch \(ShellWord.quoted(member.name))"
      settings.manifestPath = fleetPath
      settings.watchName = member.name
      let name = member.name
      settings.manifestProvider = {
        manifests.document(for: name).mapError { problem in
          var mapped = ManifestProblem(problem.diagnostics.filter { $0.severity == .error })
          mapped.notManaged = problem.notInFleet
          return mapped
        }
      }
      if let rollout { settings.holdBack = { rollout.holdBackReason(fleetFile: fleetName, watch: name) } }
      guard !observers.isEmpty else {
        return Monitor(engine: engine, settings: settings, notifiers: notifiers, emit: emit, notice: { notice("\(name): \($0)") })
      }
      return Monitor(engine: engine, settings: settings, notifiers: notifiers, emit: observed(emit, by: observers, watch: name),
                     notice: { notice("\(name): \($0)") }, checked: { check in for observer in observers { observer.checked(name, check) } })
    }
  }

  /// `emit`, each event also recorded by `observers` under the name of the watch it is about:
  /// `watch`, the monitor's — or, for a press another watch of the fleet made on this device
  /// before a swap (`delivered_by` names `watch`), the name the event gives.
  static func observed(_ emit: @escaping @Sendable (MonitorEvent) -> Void, by observers: [any MonitorObserver],
                       watch: String) -> @Sendable (MonitorEvent) -> Void {
    { event in
      emit(event)
      let about = event.fields["delivered_by"] != nil ? event.watch : watch
      for observer in observers { observer.record(event, for: [about]) }
    }
  }

  /// Which watches a running `monitor --fleet` follows as its fleet file changes: a watch missing
  /// from the file at two looks in a row leaves (so a file caught half-written stops nothing); a
  /// watch the file names joins when the caller says it did (`join`).
  public struct Membership: Sendable {
    /// The watches followed now, by name.
    public private(set) var names: Set<String>
    private var missing: Set<String> = []

    /// Following `names`.
    public init(_ names: some Sequence<String>) { self.names = Set(names) }

    /// The watches that leave at this look, given the names the fleet file gives now
    /// (`current`): those missing from it now and at the look before, sorted; they are no
    /// longer followed.
    public mutating func leaving(_ current: Set<String>) -> [String] {
      let gone = names.subtracting(current)
      let leaving = gone.intersection(missing)
      missing = gone.subtracting(leaving)
      names.subtract(leaving)
      return leaving.sorted()
    }

    /// Follows `joined` too.
    public mutating func join(_ joined: some Sequence<String>) { names.formUnion(joined) }
  }

  /// The board's members for `members`: name and device (labels where the fleet file gives them).
  public static func boardMembers(_ members: [FleetMember]) -> [StatusBoard.Member] {
    // Labels as `key=value` (the fleet file's `labels:`, and `profile` when declared).
    members.map { member in
      var labels = member.watch.labels.map { "\($0.key)=\($0.value.value)" }.sorted()
      if let profile = member.watch.profile { labels.append("profile=\(profile.value)") }
      return StatusBoard.Member(name: member.name, labels: labels, device: member.device)
    }
  }

  /// An agent's status in the words of `tsapply status --fleet` (`FleetStatus.rows`), for the
  /// board: `new revision` when the watch's manifests now give a revision (`current`, `nil`
  /// when not known) the agent has not handled — edited and not published yet; `invalid` when
  /// they cannot be used. Drift and pending only where the status measured them against what
  /// the watch holds (`nil`, unknown, otherwise: the page shows no number it does not know).
  static func agentReport(_ status: WatchStatus, current: Result<[String], FleetInputProblem>?) -> AgentReport {
    var state = switch status.result {
    case .refused, .invalid, .failed: status.result.rawValue
    case .retrying: "retrying"
    case .applied, .noChanges: status.drift > 0 ? "drift" : status.pending > 0 ? "pending" : "in sync"
    }
    let measured = (status.result == .applied || status.result == .noChanges) && status.unreachable == nil
    var note = measured ? status.driftNote ?? status.message : status.message
    // A refused or invalid revision wrote nothing: the agent goes on checking the watch against
    // the revision it last applied, so its drift is known (what is pending is not).
    let driftKnown = status.driftMeasured
    var pendingKnown = measured
    switch current {
    // The broker's document older than what the agent handled: `invalid` until published again,
    // as `status --fleet` says it (FleetStatus.rows).
    case .success? where status.answersStaleDocument:
      break
    case .success(let revisions)?:
      if let newRevision = FleetStatus.newRevisionNote(status, current: revisions) {
        state = "new revision"
        // A paused rollout is named by the page, which knows whether there is one (StatusBoard).
        note = newRevision + "; publish the manifests with 'tsapply apply --fleet'"
        pendingKnown = false
      }
    case .failure(let problem)?:
      state = "invalid"
      // Masked as the agents mask what they publish: the note reaches the alerts and the log,
      // which show no phone number (fresh-eyes fe100 #7: a broken local manifest's number in
      // the `invalid` alert).
      note = PhoneRedaction.redactPhoneLikeSparingOwn(problem.diagnostics.filter { $0.severity == .error }.prefix(3).map(\.description).joined(separator: "; "))
      pendingKnown = false
    case nil: break
    }
    // The broker lost the watch's desired document (its agent found none when it connected): not
    // in sync, whatever the agent last found, as `status --fleet` says it (fresh-eyes fe83, fe87,
    // fe90 #4: the page said "in sync" while `status --fleet` failed).
    if status.desiredMissing == true, let applied = status.appliedRevision, ["in sync", "drift", "pending", "new revision"].contains(state) {
      note = FleetStatusRow.noDesiredNote(agent: status.agent, applied: applied)
      state = FleetStatusRow.noDesiredDocument
      pendingKnown = false
    }
    let seen = status.lastSeen.flatMap(InternetTime.date)
    var report = AgentReport(state: state, note: note, drift: driftKnown ? status.drift : nil, pending: pendingKnown ? status.pending : nil,
                             appliedRevision: status.appliedRevision, lastSeen: seen, driftAddresses: driftKnown ? status.driftAddresses : nil)
    report.sosAtRisk = driftKnown ? status.sosAtRisk : nil
    report.driftSummary = driftKnown && status.drift > 0 ? status.driftSummary : nil
    report.staleDesired = state == "invalid" && status.answersStaleDocument
    return report
  }

  /// The revisions each watch's merged manifests give now (`DesiredDocument.revisions`), read
  /// through `FleetManifests` (again only when a file they come from changed) and hashed again
  /// only when the merged manifest changed: what the status page over MQTT compares the agents'
  /// statuses with. Thread-safe.
  public final class ManifestRevisions: @unchecked Sendable {
    private let manifests: FleetManifests
    private let lock = NSLock()
    private var kept: [String: (manifest: Manifest, revisions: [String])] = [:]

    /// The revisions of the watches of the fleet file `manifests` reads.
    public init(_ manifests: FleetManifests) { self.manifests = manifests }

    /// The revisions watch `name`'s manifests give now, or why they cannot be used.
    public func revisions(of name: String) -> Result<[String], FleetInputProblem> {
      let document: ManifestDocument
      switch manifests.document(for: name) {
      case .success(let found): document = found
      case .failure(let problem): return .failure(problem)
      }
      if let found = lock.withLock({ kept[name] }), found.manifest == document.manifest { return .success(found.revisions) }
      let revisions = DesiredDocument.revisions(manifest: document.manifest)
      lock.withLock { kept[name] = (document.manifest, revisions) }
      return .success(revisions)
    }
  }

  /// Follows the events of a fleet's agents on the broker until `stop` is set: drift, SOS and
  /// error events, and agents going offline and coming back, each as a `MonitorEvent` (the
  /// watch named as the fleet names it, else by its identity when its status gave it, else
  /// `SITE/WATCH-ID`; an agent's presence as `agent:ID`, with its watches in `watches`). Each SOS is put in
  /// an outbox under `outboxDirectory` before it is shown, and delivered to `notifiers` until
  /// each succeeds (a restart delivers what is left).
  ///
  /// Each SOS is handled once per id: the presses handled are kept per watch in a
  /// `HandledEvents` record (`WATCH-ID.json` under `eventsDirectory`), and a press is taken from
  /// the agent's live event or from the watch's retained list of its newest presses
  /// (`RecentSOS`, sent on connecting and republished by the agent at each of its connections),
  /// whichever comes first; one first heard from the list (published while this monitor was
  /// down, restarting, or not yet reconnected to a restarted broker) has `replayed: true`.
  public final class Follower: @unchecked Sendable {
    private let site: String
    private var client: MQTTClient?
    private let emit: @Sendable (MonitorEvent) -> Void
    private let delivery: Delivery?
    private let outbox: Outbox
    /// Where the presses handled are recorded, one `HandledEvents` per watch ID.
    private let eventsDirectory: String
    /// The records read so far, by watch ID.
    private var handled: [String: HandledEvents] = [:]
    /// Watch IDs whose record could not be written (said once each).
    private var unrecorded: Set<String> = []
    private let lock = NSLock()
    private var identities: [String: String] = [:]
    private var online: [String: Bool] = [:]
    /// The watch IDs each agent serves, as its presence (`AgentState.watches`) last said.
    private var served: [String: [String]] = [:]
    private let observers: [any MonitorObserver]
    /// Member names by watch ID, for the observers (`rename`).
    private var names: [String: String]
    /// The names watches had before the fleet file stopped naming them, by watch ID: an SOS
    /// from one is still shown under it (while no watch named now has it).
    private var formerNames: [String: String] = [:]
    /// The broker's address, as the monitor's own connection events name it.
    private let address: String
    private let notice: @Sendable (String) -> Void
    /// Whether the connection was ready once (`start`), and since when it is lost (`nil`: up).
    private var connectedOnce = false
    /// Whether the connection was ready once indeed (`connectedOnce` is set too by a start that
    /// did not reach the broker, so that its `offline` and `online` are said).
    private var readyOnce = false
    private var lostSince: Date?
    /// The monitor's own outage, kept across restarts (`HandledEvents.outage` of `monitor:SITE`,
    /// `connectionRecordName` under `eventsDirectory`), as a direct monitor keeps a watch's: a
    /// monitor stopped or killed while it had lost the broker leaves its `offline` event's
    /// `monitor_offline` alert open (`Alerts`, `alerts.json`), and the next one to start goes
    /// on with that outage — its `online` event, once connected, closes the alert (fresh-eyes
    /// fe95 #2: the alert stayed open while the restarted monitor followed the site).
    private let connectionRecord: HandledEvents
    /// When the outage an earlier run of this monitor left began, until this run connects or
    /// loses the broker itself (`connection`).
    private var keptOutage: Date?
    /// The file of `connectionRecord` under `eventsDirectory`: `@` is in no watch ID
    /// (`FleetTopics.problem(with:)`), so it is no watch's record.
    static let connectionRecordName = "monitor@broker.json"
    /// Connections lost so far: a will heard before one is not trusted (`presence`).
    private var losses = 0
    /// Presence messages heard per agent, so a will judged late yields to a newer message.
    private var presenceCount: [String: Int] = [:]
    /// Agents whose presence was deleted from the broker (`retired`) and not heard from since.
    private var retiredAgents: Set<String> = []
    /// Whether agents have had the time to be heard since the first connection (`settlePresences`).
    private var presenceSettled = false
    /// How long an agent's will heard live waits before it is believed: a broker shutting down
    /// sends its clients' wills, then closes this monitor's connection; that is the broker's
    /// going, not the agent's (fe17 defect 2).
    static let willSettle: Duration = .seconds(2)
    /// How long a will kept by the broker (retained), heard when this monitor connects again,
    /// waits before it is believed: the agents reconnect after a broker's restart too, within
    /// their reconnect backoff (0.5 s, doubling, jittered).
    static let retainedWillSettle: Duration = .seconds(10)
    /// How long after this monitor connects again (after a lost connection) an agent online
    /// before must have been heard from — its presence retained by the broker, or published
    /// again as it reconnects (within its reconnect backoff, at most 30 s) — before it is taken
    /// as offline: a broker that lost its sessions (restarted without persistence) never sends
    /// the will of an agent that went meanwhile (fresh-eyes finding: shown online, its watches
    /// in sync, for as long as the page stayed open).
    private let unheardSettle: Duration
    /// When each agent's presence was last heard.
    private var lastHeard: [String: Date] = [:]
    /// When the broker started (`BrokerRestart.started`, from its retained uptime) and each
    /// agent's last presence: a presence saying online since before the broker started was
    /// kept from a save, its agent gone meanwhile (`BrokerRestart.stale`), and is taken as offline.
    private var brokerStarted: Date?
    private var presences: [String: AgentState] = [:]
    /// The revisions a watch's manifests give now, or why they cannot be used, by member name
    /// (`nil`: not compared).
    private let revisions: (@Sendable (String) -> Result<[String], FleetInputProblem>)?
    /// The last status of each watch, by watch ID, compared again as the manifests change.
    private var statuses: [String: WatchStatus] = [:]
    /// What each watch's last report to the observers said, by watch ID.
    private var reports: [String: AgentReport] = [:]
    private var recheck: Task<Void, Never>?
    /// Where statuses are compared with the manifests and told to the observers, one at a time.
    private let reporting = DispatchQueue(label: "tsapply.monitor.agent-reports")
    /// How often the statuses are compared again with the manifests: an edit not published
    /// shows as `new revision` within this.
    private let recheckInterval: Duration

    /// A follower of `site` through `settings`, keeping the SOS presses it handled under
    /// `eventsDirectory` and those not yet delivered under `outboxDirectory`. Events and the
    /// agents' statuses also go to `observers`, under the names `names` gives each watch ID (the status page, alerts); each
    /// status compared with the revisions `revisions` says a watch's manifests give now (by
    /// member name), at each status and every `recheck`.
    /// - Throws: `MQTTError` when the client cannot be made.
    /// The fleet file the monitor follows, as advice names it: an agent's words name it
    /// `WatchStatus.fleetFilePlaceholder` (the agent does not know it), filled in here for the
    /// page, the log and the alerts (`nil`: left as the agent wrote it).
    private let fleetFile: String?

    public init(site: String, settings: BrokerSettings, outboxDirectory: String, eventsDirectory: String, notifiers: [any Notifier],
                delivery policy: Backoff.Policy, emit: @escaping @Sendable (MonitorEvent) -> Void,
                notice: @escaping @Sendable (String) -> Void, observers: [any MonitorObserver] = [],
                names: [String: String] = [:], revisions: (@Sendable (String) -> Result<[String], FleetInputProblem>)? = nil,
                recheck: Duration = .seconds(10), fleetFile: String? = nil, unheardSettle: Duration = .seconds(45)) throws(MQTTError) {
      recheckInterval = recheck
      self.unheardSettle = unheardSettle
      self.fleetFile = fleetFile
      self.site = site
      self.emit = emit
      self.notice = notice
      address = settings.address.description
      self.observers = observers
      self.names = names
      self.revisions = revisions
      outbox = Outbox(directory: outboxDirectory)
      self.eventsDirectory = eventsDirectory
      connectionRecord = HandledEvents(path: eventsDirectory + "/" + Self.connectionRecordName, watch: "monitor:\(site)")
      let outbox = self.outbox, deliveryEvents = DeliveryEvents()
      delivery = notifiers.isEmpty ? nil : Delivery(outbox: outbox, notifiers: notifiers, policy: policy) { report in
        if case .completed(let id) = report { notice("SOS event \(id) delivered to every notifier.") }
        // A press a notifier has not had yet, and its end: in the log, on the page (under the
        // name its SOS event gave the watch) and to the alerts, as for a watch monitored directly.
        let watch = outbox.entry(Self.entryID(of: report))?.pressedBy
        guard let watch, let event = deliveryEvents.event(for: report, watch: watch, at: Date()) else { return }
        emit(event)
        for observer in observers { observer.record(event, for: [watch]) }
      }
      let configuration = try settings.configuration(clientID: "tsapply-monitor-\(getpid())-\(UInt32.random(in: 0...UInt32.max))",
                                                 cleanSession: true,
                                                 // The broker's uptime first, so a presence it kept
                                                 // from before it restarted is judged as it comes
                                                 // (`BrokerRestart`); then the presses' lists:
                                                 // Mosquitto sends the retained messages filter by
                                                 // filter, and drops what is beyond its queue.
                                                 subscriptions: [BrokerRestart.uptimeTopic, FleetTopics.every(.sos, site: site),
                                                                 FleetTopics.every(.events, site: site), FleetTopics.every(.status, site: site),
                                                                 FleetTopics.everyAgent(site: site)])
      client = try MQTTClient(address: settings.address, configuration: configuration,
                              onMessage: { [weak self] message in self?.received(message) },
                              onConnection: { [weak self] event in self?.connection(event) })
    }

    /// The outbox entry `report` concerns.
    private static func entryID(of report: Delivery.Report) -> String {
      switch report {
      case .attemptFailed(let id, _, _, _, _, _), .delivered(let id, _, _, _), .completed(let id), .outboxFailed(let id, _): id
      }
    }

    /// Connects (delivering what the outbox holds first) and waits until subscribed, at most
    /// `timeout`: a broker not reached by then (not up yet, restarting) is this monitor's
    /// `offline` event, as a connection lost later is, and it keeps trying.
    /// - Throws: `MQTTError` when the broker refuses it (credentials, TLS) within `timeout`.
    public func start(within timeout: Duration) async throws(MQTTError) {
      try? SecureFile.createDirectory(outbox.directory)
      try? SecureFile.createDirectory(eventsDirectory)
      if let delivery {
        let entries = outbox.entries().entries
        // Said again first, under the name it was shown under: the run that stored a press may
        // have been killed before it said it (`Outbox.Entry.leftPress`).
        for press in entries.compactMap(\.leftPress) {
          emit(press)
          for observer in observers { observer.record(press, for: [press.watch]) }
        }
        for entry in entries { await delivery.start(entry) }
      }
      // An outage an earlier run left (it was stopped or killed before it connected again).
      // Said at the first failed try, not after `timeout`: the page must not show an all-clear
      // meanwhile (fresh-eyes fe100 #4: 5 s of "every watch is in sync" with the broker down).
      if let kept = HandledEvents.kept(at: connectionRecord.path, watch: "monitor:\(site)")?.outageSince {
        lock.withLock { (keptOutage, connectedOnce) = (kept, true) }
      }
      let began = Date()
      client?.connect()
      do {
        try await client?.ready(within: timeout)
      } catch .timedOut(let what) {
        // Said as a lost connection is, lost since the start, so its `online` follows when it
        // connects (fresh-eyes finding: a monitor started before its broker gave up after 30 s, exit 1).
        lock.withLock { connectedOnce = true }
        connection(.lost("\(MQTTError.timedOut(what))"), since: began)
      }
      if revisions != nil, !observers.isEmpty {
        let interval = recheckInterval
        recheck = Task { [weak self] in
          while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            guard let follower = self else { return }
            follower.reporting.async { follower.reportAgain() }
          }
        }
      }
    }

    /// The presses `list` no longer holds (an agent publishes its newest `RecentSOS.limit`) that
    /// came after the newest of `handled` of the same numbering (`sos-EPOCH-SEQUENCE`, one per
    /// agent record): an `error` event, `reason: events_missed`, from the last handled press to
    /// the oldest listed, as an agent tells a gap; `nil` when none is missing (or nothing of that
    /// numbering was handled: a monitor that never heard the watch cannot tell).
    static func missedPresses(_ list: RecentSOS, handled: [HandledEvents.Press]) -> FleetEvent? {
      guard list.presses.count >= RecentSOS.limit, let oldest = list.presses.first, let oldestID = oldest.id else { return nil }
      guard let first = HandledEvents.pressNumber(of: oldestID),
            let last = handled.compactMap({ press in HandledEvents.pressNumber(of: press.id).map { (press.id, $0) } })
              .filter({ $0.1.numbering == first.numbering }).max(by: { $0.1.number < $1.1.number }),
            first.number > last.1.number + 1 else { return nil }
      let count = first.number - last.1.number - 1
      var event = FleetEvent(agent: list.agent, watch: list.watch, kind: .error, time: oldest.time,
                             message: "\(count) SOS press\(count == 1 ? "" : "es") of the watch, made while this monitor was not connected, "
                               + "\(count == 1 ? "is" : "are") no longer kept by agent \(list.agent) (it keeps the newest \(RecentSOS.limit)): "
                               + "\(count == 1 ? "it was" : "they were") not forwarded; ask the wearer")
      (event.reason, event.after, event.before) = ("events_missed", last.0, oldestID)
      event.id = "gap-\(last.0)-\(oldestID)"
      return event
    }

    /// Disconnects; deliveries under way get `grace` to finish (what is left stays in the outbox).
    public func stop(grace: Duration) async {
      recheck?.cancel()
      await client?.close()
      await delivery?.stop(grace: grace)
    }

    private func received(_ message: MQTTClient.Message) {
      if let (_, id, kind) = FleetTopics.parseWatch(message.topic) {
        if kind == .status, message.payload.isEmpty {
          // Taken down by its agent, which holds no status of its own for the watch
          // (`FleetAgent`): what the watch holds is not known — no longer the status it had.
          if lock.withLock({ statuses.removeValue(forKey: id) != nil }) { reporting.async { [self] in reportAgain() } }
        } else if kind == .status, let status = WatchStatus.decode(message.payload) {
          let previous = lock.withLock { () -> WatchStatus?? in
            identities[id] = status.device
            // A retained status the agent read the watch for before the one held: older than
            // what this monitor heard (a broker restarted from a persistence file saved before
            // its last messages: fresh-eyes finding, a drift "recovered" for 4 minutes while
            // the watch held it). Dropped; the agent publishes its statuses again as it
            // reconnects. `nil` when dropped.
            if message.retained, let held = statuses[id], held.isNewer(than: status) { return nil }
            defer { statuses[id] = status }
            return .some(statuses[id])
          }
          guard let previous else { return }
          reachability(id, status, previous: previous)
          driftOver(id, status, previous: previous)
          // Comparing with the manifests reads them (the first time, or after an edit): not on
          // the network thread, which every other message (an SOS) waits behind. In order, and
          // only while it is the watch's status: one a newer status replaced meanwhile is not
          // told after what came behind it — the agent's events are told at once, so a status
          // the agent published before its `error` event (its status again as it reconnects,
          // then `invalid`) would end the condition that event began, which the newer status
          // then began again (fresh-eyes fe95 #3: `invalid`, `recovered`, `invalid` within 0.3 s
          // for 92 of 100 watches after a broker restored from an older save).
          reporting.async { [self] in
            guard lock.withLock({ statuses[id] == status }) else { return }
            report(id, status, always: true)
          }
        } else if kind == .events, !message.retained, let event = FleetEvent.decode(message.payload) {
          forward(event, watchID: id)
        } else if kind == .sos, let list = RecentSOS.decode(message.payload), list.watch == id {
          // Presses the agent no longer keeps in the list, made after the last this monitor
          // handled: missed, raised as a gap in the watch's events is, once (fresh-eyes fe100 #1:
          // 18 presses while the monitor was down, 2 lost with no word).
          if let record = record(of: id), let missed = Self.missedPresses(list, handled: record.recentPresses) {
            forward(missed, watchID: id)
          }
          // What the live events already brought is handled; the rest was published while this
          // monitor was not there to hear it.
          let now = Date()
          for press in list.presses where press.kind == .sos && press.id != nil && RecentSOS.isRecent(press.time, now: now) {
            forward(press, watchID: id, replayed: true)
          }
          // The last gap the agent told, published while this monitor was not there: raised
          // once (`forward` keeps it told).
          if let gap = list.gap, gap.kind == .error, gap.reason == "events_missed", RecentSOS.isRecent(gap.time, now: now) {
            forward(gap, watchID: id, replayed: true)
          }
        }
      } else if message.topic == BrokerRestart.uptimeTopic {
        // Presences the broker kept from before it restarted, their agents gone meanwhile:
        // offline, as `status --fleet` takes them (fresh-eyes fe105 #1: a monitor started after
        // such a restart said the dead agent online, and its watches in sync).
        let stale = lock.withLock { () -> [(String, AgentState, Int, Int, String)] in
          brokerStarted = BrokerRestart.started(uptime: message.payload, now: Date())
          return presences.sorted { $0.key < $1.key }.compactMap { agent, state in
            guard online[agent] == true, let why = BrokerRestart.stale(state, brokerStarted: brokerStarted) else { return nil }
            return (agent, state, presenceCount[agent] ?? 0, losses, why)
          }
        }
        for (agent, state, count, losses, why) in stale { stalePresence(agent, state, count: count, losses: losses, why: why) }
      } else if let agent = FleetTopics.parseAgent(message.topic), message.payload.isEmpty {
        retired(agent)
      } else if let agent = FleetTopics.parseAgent(message.topic), let state = AgentState.decode(message.payload) {
        let (count, losses, stale) = lock.withLock { () -> (Int, Int, String?) in
          presenceCount[agent, default: 0] += 1
          lastHeard[agent] = Date()
          presences[agent] = state
          return (presenceCount[agent] ?? 0, self.losses, BrokerRestart.stale(state, brokerStarted: brokerStarted))
        }
        if let stale { return stalePresence(agent, state, count: count, losses: losses, why: stale) }
        // A will heard live (no `since`: written in advance) is believed once this monitor is
        // still connected a moment later; a retained one, heard on connecting, only if the agent
        // has not connected again meanwhile (`retainedWillSettle`): a broker restarted with
        // persistence keeps the wills it sent its clients as it stopped (fresh-eyes finding: an
        // `agent_offline` and its `recovered` 8 ms apart for an agent that never went) — on this
        // monitor's first connection too, which may be to a broker restored from an older save
        // holding a will the agent sent long ago (fresh-eyes fe95 #3: 35 ms apart, for a monitor
        // restarted while the broker was down).
        if !state.online, state.since == nil {
          let settle = Backoff.seconds(message.retained ? Self.retainedWillSettle : Self.willSettle)
          reporting.asyncAfter(deadline: .now() + settle) { [weak self, state] in self?.presence(agent, state, count: count, losses: losses) }
        } else {
          presence(agent, state, count: count, losses: losses)
        }
      }
    }

    /// Agent `agent`'s presence `state` (its `count`-th), kept by the broker from before it
    /// restarted (`why`): offline once `retainedWillSettle` passed without a newer presence — an
    /// agent alive reconnects and says so within it, as for a will the broker kept (a broker
    /// restart is no `agent_offline` for an agent that comes back).
    private func stalePresence(_ agent: String, _ state: AgentState, count: Int, losses: Int, why: String) {
      var gone = state
      gone.online = false
      reporting.asyncAfter(deadline: .now() + Backoff.seconds(Self.retainedWillSettle)) { [weak self, gone] in
        self?.presence(agent, gone, count: count, losses: losses, why: why)
      }
    }

    /// The monitor's own connection to the broker: lost (after it was ready once), it can see no
    /// watch of the site and hear no SOS press through the broker — an `offline` event naming it
    /// (`monitor:SITE`, `broker`), on stderr too; back, an `online` event (presses made meanwhile
    /// are replayed from the agents' retained lists, `RecentSOS`).
    /// (`since`: when the connection was lost, by default now — for a start that did not reach
    /// the broker, when it began trying.)
    private func connection(_ event: MQTTClient.ConnectionEvent, since: Date? = nil) {
      let now = Date()
      let shown: MonitorEvent?
      switch event {
      case .ready:
        let (since, again, earlier) = lock.withLock { () -> (Date?, Bool, Bool) in
          defer { (connectedOnce, readyOnce, lostSince, keptOutage) = (true, true, nil, nil) }
          return (lostSince ?? keptOutage, readyOnce, lostSince == nil)
        }
        // Once agents have had the time to be heard after the first connection, a status from
        // an agent with no presence says nothing serves its watch (`presenceSettled`).
        if !again { reporting.asyncAfter(deadline: .now() + Backoff.seconds(unheardSettle)) { [weak self] in self?.settlePresences() } }
        guard let since else { return }
        let losses = lock.withLock { self.losses }
        reporting.asyncAfter(deadline: .now() + Backoff.seconds(unheardSettle)) { [weak self] in self?.unheard(since: since, losses: losses) }
        let seconds = Int(now.timeIntervalSince(since).rounded())
        let after = earlier ? "\(seconds) s after an earlier run of it lost its connection" : "after \(seconds) s"
        shown = MonitorEvent(time: now, watch: "monitor:\(site)", kind: .online,
                             message: "this monitor is connected to the broker \(address)\(again ? " again" : "") \(after): it follows site \(site)"
                               + "\(again ? " again" : ""); SOS presses made meanwhile are replayed from the agents' retained lists",
                             fields: ["broker": .string(address), "site": .string(site), "offline_seconds": .integer(seconds)])
      case .lost, .refused:
        let reason = if case .lost(let text) = event { text } else if case .refused(let error) = event { "\(error)" } else { "" }
        let (lost, reached) = lock.withLock { () -> (Bool, Bool) in
          guard connectedOnce, lostSince == nil else { return (false, readyOnce) }
          // An outage an earlier run left goes on: it began then.
          (lostSince, losses, keptOutage) = (keptOutage ?? since ?? now, losses + 1, nil)
          return (true, readyOnce)
        }
        guard lost else { return }
        // Timed from when the outage began (an earlier run's, kept), as the page says "since".
        shown = MonitorEvent(time: lock.withLock { lostSince } ?? now, watch: "monitor:\(site)", kind: .offline,
                             message: "this monitor \(reached ? "lost its connection to" : "cannot reach") the broker \(address) (\(reason)): it cannot see the watches of "
                               + "site \(site), nor hear their SOS presses, until it is back; it keeps trying",
                             fields: ["broker": .string(address), "site": .string(site), "problem": .string("\(reason)")])
      }
      guard let shown else { return }
      // Kept before the `offline` event raises its alert, and taken back only once the `online`
      // event has closed it: a monitor killed between the two leaves the outage to the next one.
      if shown.kind == .offline { keep(outageSince: lock.withLock { lostSince }) }
      notice(shown.message.prefix(1).uppercased() + shown.message.dropFirst() + ".")
      emit(shown)
      for observer in observers { observer.record(shown, for: []) }
      if shown.kind == .online { keep(outageSince: nil) }
    }

    /// Records the monitor's own outage under way (`nil`: none) for the next run (`connectionRecord`);
    /// a record that cannot be written is said once on stderr.
    private func keep(outageSince since: Date?) {
      do {
        try connectionRecord.outage(since: since, lastSeen: nil)
      } catch {
        let first = lock.withLock { unrecorded.insert(Self.connectionRecordName).inserted }
        if first { notice("Cannot record this monitor's connection in \(connectionRecord.path) (\(error)): a monitor started after it may not close its monitor_offline alert.") }
      }
    }

    /// The agents online before this monitor lost its connection at `since` that have not been
    /// heard from since it connected again (`unheardSettle` ago; it has lost it `losses` times):
    /// offline, as their will would have said.
    private func unheard(since: Date, losses: Int) {
      let gone = lock.withLock { () -> [(String, AgentState, Int)] in
        guard self.losses == losses, lostSince == nil else { return [] }
        return online.filter { $0.value && (lastHeard[$0.key] ?? .distantPast) < since }.map(\.key).sorted().map { agent in
          (agent, AgentState(agent: agent, online: false, watches: served[agent] ?? []), presenceCount[agent] ?? 0)
        }
      }
      for (agent, state, count) in gone {
        presence(agent, state, count: count, losses: losses,
                 why: "not heard from since this monitor connected to the broker again \(StatusBoard.duration(Backoff.seconds(unheardSettle))) ago "
                   + "(a broker that lost its sessions, restarted without persistence, sends no will for an agent that went meanwhile)")
      }
    }

    /// An agent's presence (`AgentState`): the `count`-th message heard from it, while this
    /// monitor had lost its connection `losses` times. Dropped when a newer one was heard since,
    /// or when the connection was lost since (a will sent as the broker shut down). `why`: what
    /// the event adds to "is offline" (a presence inferred, not heard).
    private func presence(_ agent: String, _ state: AgentState, count: Int, losses: Int, why: String? = nil) {
      lock.lock()
      guard presenceCount[agent] == count, self.losses == losses else { return lock.unlock() }
      let before = online[agent]
      online[agent] = state.online
      retiredAgents.remove(agent)
      let servedBefore = served[agent] ?? []
      served[agent] = state.watches
      // Going offline, an agent takes with it only the watches no other online agent reports
      // on: a watch moved to another agent is not offline because the one it left is. Coming
      // back, it gives back the watches it served before too: one it no longer serves (moved
      // away while it was down) was marked offline with it.
      // Another online agent serving it: one that announces it (fresh-eyes finding: a watch an
      // online agent reported on was shown offline because the last status had come from the
      // agent that went), or whose status is the last heard.
      let affected = state.online ? state.watches + servedBefore.filter { !state.watches.contains($0) } : state.watches.filter { id in
        let announced = servingAgents(id).contains { $0 != agent }
        guard !announced, let other = statuses[id]?.agent, other != agent else { return !announced }
        return online[other] != true
      }
      // Whether another online agent also serves one of its watches may have changed, and
      // whether a watch whose last status it made is still served by anyone: said on the page.
      let touched = Set(state.watches + servedBefore + statuses.filter { $0.value.agent == agent }.map(\.key))
      lock.unlock()
      // The agent went or came back, not one of its watches: the event names the agent, and
      // every watch it serves as the fleet names it. At the start (its retained state) too,
      // as a direct monitor says `online` for each watch it reaches: a condition kept open
      // across a restart (`agent_offline` for an agent that came back meanwhile) is closed by it.
      reporting.async { [self] in
        for id in touched.sorted() { if let status = lock.withLock({ statuses[id] }) { report(id, status, always: false) } }
      }
      guard before != state.online else { return }
      let watches = state.watches.map { member($0) ?? "\(site)/\($0)" }
      let event = MonitorEvent(time: Date(), watch: "agent:\(agent)", kind: state.online ? .online : .offline,
                               message: "agent \(agent) (\(watches.joined(separator: ", "))) is \(state.online ? "online" : "offline")" + (why.map { ": " + $0 } ?? ""),
                               fields: ["agent": .string(agent), "watches": .array(watches.map(JSONValue.string))])
      emit(event)
      for observer in observers { observer.record(event, for: affected.compactMap(member)) }
    }

    /// Agent `agent` retired: its retained presence was deleted from the broker
    /// (`mosquitto_pub -r -n -t tsapply/v1/SITE/agent/ID/state`, docs/fleet.md "Agents over
    /// MQTT"). It is forgotten — a will of its still settling is dropped — and a `removed` event
    /// naming it ends its `agent_offline` alert and the page's "its agent is offline" (fresh-eyes
    /// fe100: a retired agent's alert never closed); a watch of its that no other agent serves
    /// says so (`retiredNote`). Nothing when the agent was not known.
    private func retired(_ agent: String) {
      lock.lock()
      presenceCount[agent, default: 0] += 1
      let known = online[agent] != nil
      let servedBefore = served[agent] ?? []
      online[agent] = nil
      served[agent] = nil
      retiredAgents.insert(agent)
      let touched = Set(servedBefore + statuses.filter { $0.value.agent == agent }.map(\.key))
      lock.unlock()
      guard known else { return }
      reporting.async { [self] in
        for id in touched.sorted() { if let status = lock.withLock({ statuses[id] }) { report(id, status, always: false) } }
      }
      let watches = servedBefore.map { member($0) ?? "\(site)/\($0)" }
      let event = MonitorEvent(time: Date(), watch: "agent:\(agent)", kind: .removed,
                               message: "agent \(agent)\(watches.isEmpty ? "" : " (\(watches.joined(separator: ", ")))") was retired: its presence was deleted from the broker",
                               fields: ["agent": .string(agent), "watches": .array(watches.map(JSONValue.string))])
      emit(event)
      for observer in observers { observer.record(event, for: servedBefore.compactMap(member)) }
    }

    /// `unheardSettle` after the first connection (on `reporting`): from now on, a watch whose
    /// last status came from an agent with no presence on the broker, which no online agent
    /// announces, is served by no one (`FleetStatus.noPresenceNote`, as `status --fleet` says it;
    /// fresh-eyes fe102 #6: a monitor started after an agent's retirement showed its watch in
    /// sync for good). Those watches are reported again.
    private func settlePresences() {
      let touched = lock.withLock { () -> [(String, WatchStatus)] in
        presenceSettled = true
        return statuses.filter { online[$0.value.agent] == nil }.sorted { $0.key < $1.key }
      }
      for (id, status) in touched { report(id, status, always: false) }
    }

    /// The online agents that announce watch `id`, sorted (the caller holds `lock`).
    private func servingAgents(_ id: String) -> [String] {
      online.filter { $0.value && (served[$0.key] ?? []).contains(id) }.map(\.key).sorted()
    }

    /// Tells the observers what `status` of watch `id` says against its manifests now; unless
    /// `always`, only when that changed since the last report.
    private func report(_ id: String, _ status: WatchStatus, always: Bool) {
      guard !observers.isEmpty, let name = member(id) else { return }
      let current = revisions?(name)
      // A watch the fleet file no longer names is leaving (`rename`), not invalid.
      if case .failure(let problem)? = current, problem.notInFleet { return }
      var report = FleetMonitor.agentReport(status, current: current)
      if let fleetFile { report.note = report.note.map { WatchStatus.naming(fleetFile: fleetFile, in: $0) } }
      let changed = lock.withLock { () -> Bool in
        // Two online agents announcing the watch both apply to it and take turns at its status:
        // what it holds is not known (`no status`, as `status --fleet` says it; the page names them).
        let servers = servingAgents(id)
        if servers.count > 1 {
          report.servedBy = servers
          report.state = "no status"
          report.note = nil
          report.drift = nil
          report.pending = nil
        }
        // Moved to another agent that has not reported yet: not what the agent it left said.
        if let note = FleetStatus.movedNote(id, status: status, statusAgentOnline: online[status.agent], announced: served[status.agent], servers: servers) {
          report.state = "no status"
          report.note = note
          report.servedBy = servers
          report.drift = nil
          report.pending = nil
        // Its agent online and no longer naming it, retired, or with no presence at all once
        // agents had the time to be heard, and no other online agent naming it: served by no one.
        } else if let note = online[status.agent] == true ? FleetStatus.unservedNote(id, status: status, announced: served[status.agent], servers: servers)
                    : retiredAgents.contains(status.agent) && servers.isEmpty ? FleetStatus.retiredNote(id, status: status)
                    : presenceSettled && online[status.agent] == nil && servers.isEmpty ? FleetStatus.noPresenceNote(id, status: status) : nil {
          report.state = "no status"
          report.note = fleetFile.map { WatchStatus.naming(fleetFile: $0, in: note) } ?? note
          report.drift = nil
          report.pending = nil
        }
        defer { reports[id] = report }
        return reports[id] != report
      }
      guard always || changed else { return }
      for observer in observers { observer.reported(name, report) }
    }

    /// The watch `id` going out of its agent's reach (`WatchStatus.unreachable`: its reads fail)
    /// or coming back, as a direct monitor says it of a watch it reaches itself: an `offline`
    /// event when it is first seen so (at the start too), `online` when a read succeeds again.
    /// The event names the agent in `served_by` (an `agent` field would say the agent is offline).
    private func reachability(_ id: String, _ status: WatchStatus, previous: WatchStatus?) {
      let wasReachable = previous.map { $0.unreachable == nil } ?? true
      guard wasReachable != (status.unreachable == nil) else { return }
      let watch = name(of: id)
      var fields: [String: JSONValue] = ["served_by": .string(status.agent), "watch_id": .string(id)]
      if status.device != watch { fields["device"] = .string(status.device) }
      let event = if let reason = status.unreachable {
        MonitorEvent(time: status.unreachableSince.flatMap(InternetTime.date) ?? Date(), watch: watch, kind: .offline,
                     message: "agent \(status.agent) cannot reach the watch: \(reason); it keeps trying", fields: fields)
      } else {
        MonitorEvent(time: status.lastSeen.flatMap(InternetTime.date) ?? Date(), watch: watch, kind: .online,
                     message: "agent \(status.agent) reaches the watch again", fields: fields)
      }
      emit(event)
      if let member = member(id) { for observer in observers { observer.record(event, for: [member]) } }
    }

    /// The fleet's name for watch `id`, else the name it had there (while no watch named now
    /// has it), else its identity, else `SITE/WATCH-ID`.
    private func name(of id: String) -> String {
      if let member = member(id) { return member }
      let (former, taken) = lock.withLock { (formerNames[id], Set(names.values)) }
      // The name this run saw it under, else the one its record kept from an earlier run.
      let kept = former ?? (lock.withLock { handled[id] }?.current.fleetName ?? recordPath(of: id).flatMap { HandledEvents.fleetName(at: $0, watch: "\(site)/\(id)") })
      return kept.flatMap { taken.contains($0) ? nil : $0 } ?? lock.withLock { identities[id] } ?? "\(site)/\(id)"
    }

    /// The fleet's name for watch `id`, when the fleet file names it.
    private func member(_ id: String) -> String? { lock.withLock { names[id] } }

    /// Names the watches anew, by watch ID (the fleet file changed: `monitor --fleet` follows
    /// it): a watch named now and not before is told to the observers from its last status, if
    /// any; one no longer named is no longer told to them, but its events are still shown, under
    /// the name it had (`name(of:)`), and its SOS presses still delivered and shown as open.
    public func rename(_ names: [String: String]) {
      let joined = lock.withLock { () -> [(String, WatchStatus)] in
        let new = names.keys.filter { self.names[$0] != names[$0] }
        for (id, name) in self.names where names[id] == nil { formerNames[id] = name }
        for id in names.keys { formerNames[id] = nil }
        self.names = names
        for id in reports.keys where names[id] == nil { reports[id] = nil }
        return new.compactMap { id in statuses[id].map { (id, $0) } }
      }
      guard !joined.isEmpty else { return }
      reporting.async { [self] in for (id, status) in joined { report(id, status, always: true) } }
    }

    /// Compares every watch's last status with its manifests again (they may have been edited),
    /// and tells the observers of every watch no agent has published a status for (the first time
    /// a recheck interval after the start: the broker's retained statuses came long before) as
    /// `no status`: what it holds is not known and its SOS presses are heard by no one.
    func reportAgain() {
      let (known, unannounced, servers) = lock.withLock {
        (statuses, names.filter { statuses[$0.key] == nil }, served.filter { online[$0.key] == true })
      }
      for (id, status) in known { report(id, status, always: false) }
      guard !observers.isEmpty else { return }
      for (id, name) in unannounced {
        // Served by an online agent that has published no status for it (nothing published to
        // it yet): its presses are heard, what it holds is not known.
        let server = servers.filter { $0.value.contains(id) }.keys.sorted().first
        let note = server.map { "Agent \($0) serves this watch but has reported no status for it (nothing is published to it yet: "
                                  + "'tsapply apply --fleet' publishes its manifests): what it holds is not known; its SOS presses are heard through \($0)" }
          ?? "No agent has announced this watch (is its agent running, and given --device for it?): what it holds is not known, and its SOS presses reach no one"
        let report = AgentReport(state: "no status", note: note, drift: nil, pending: nil)
        let changed = lock.withLock { () -> Bool in
          defer { reports[id] = report }
          return reports[id] != report
        }
        if changed { for observer in observers { observer.reported(name, report) } }
      }
    }

    /// Where watch `id`'s record is; `nil` for an id no file may be named after.
    private func recordPath(of id: String) -> String? {
      FleetTopics.problem(with: id) == nil && !id.hasPrefix(".") ? eventsDirectory + "/" + id + ".json" : nil
    }

    /// The record of the SOS presses handled on watch `id`, read the first time it is needed;
    /// `nil` for an ID that cannot name a file (`FleetTopics.problem(with:)`).
    private func record(of id: String) -> HandledEvents? {
      guard let path = recordPath(of: id) else { return nil }
      if let known = lock.withLock({ handled[id] }) { return known }
      let record = HandledEvents(path: path, watch: "\(site)/\(id)")
      // The fleet file's name for it, kept for a run after it was taken out of the file.
      if let name = member(id) { try? record.named(name) }
      if let problem = record.problem {
        emit(MonitorEvent(time: Date(), watch: name(of: id), kind: .error,
                          message: "cannot use \(record.path): \(problem); SOS presses this monitor delivered before may be delivered again, and the file is replaced",
                          fields: ["reason": .string("handled_events"), "file": .string(record.path), "watch_id": .string(id)]))
      }
      return lock.withLock { () -> HandledEvents in
        if let known = handled[id] { return known }
        handled[id] = record
        return record
      }
    }

    /// Records that the SOS press `press` of watch `id` was handled; a failure to write is
    /// reported once per watch.
    private func recordPress(_ press: HandledEvents.Press, in record: HandledEvents, watchID id: String) {
      do { try record.handled(nil, press: press) } catch {
        notRecorded(error, record, watchID: id, "cannot record the SOS presses handled (\(error)); a restarted monitor may deliver them again")
      }
    }

    /// Reports, once per watch, that its record of what was handled cannot be written.
    private func notRecorded(_ error: any Error, _ record: HandledEvents, watchID id: String, _ message: String) {
      guard lock.withLock({ unrecorded.insert(id).inserted }) else { return }
      emit(MonitorEvent(time: Date(), watch: name(of: id), kind: .error, message: message,
                        fields: ["reason": .string("handled_events"), "file": .string(record.path), "watch_id": .string(id)]))
    }

    /// Shows an agent's event as the monitor's; an SOS goes in the outbox first and is
    /// recorded as handled, once per id: `replayed` when it comes from the watch's retained
    /// list (`RecentSOS`), not from the live event.
    private func forward(_ event: FleetEvent, watchID: String, replayed: Bool = false) {
      let identity = lock.withLock { identities[watchID] }
      let watch = name(of: watchID)
      let kind: MonitorEvent.Kind = switch event.kind {
      case .drift: .drift
      case .sos: .sos
      case .error: .error
      }
      var fields: [String: JSONValue] = ["agent": .string(event.agent), "watch_id": .string(watchID)]
      if let identity, identity != watch { fields["device"] = .string(identity) }
      if let revision = event.revision { fields["revision"] = .string(revision) }
      if let sequence = event.sequence { fields["sequence"] = .integer(sequence) }
      // As a direct monitor's press: the watch's profile (the agent's word) and this monitor's host.
      if kind == .sos {
        if let profile = event.profile { fields["profile"] = .string(profile) }
        fields["host"] = .string(ProcessInfo.processInfo.hostName)
      }
      // What drifted, as a direct monitor's drift event names it (`sos_drift` comes from it).
      if let addresses = event.addresses { fields["addresses"] = .array(addresses.map(JSONValue.string)) }
      if let atRisk = event.sosAtRisk { fields["sos_at_risk"] = .bool(atRisk) }
      // A gap in the watch's events, as a direct monitor raises it: an "SOS?" card on the page.
      if let reason = event.reason, Outbox.isSafeID(reason) { fields["reason"] = .string(reason) }
      if let after = event.after { fields["after"] = .string(String(after.prefix(128))) }
      if let before = event.before { fields["before"] = .string(String(before.prefix(128))) }
      // Whether the error is retried, in the word a monitor's heal uses (`reconcile`): as the
      // event says (`result`), or, from an agent that does not say, as the status it publishes
      // before the error event of the same apply says.
      if kind == .error, event.reason == nil {
        let status = lock.withLock { statuses[watchID] }.flatMap { event.revision == nil || event.revision == $0.revision ? $0 : nil }
        // The status's word for an agent that does not say it in the event.
        if let result = event.result ?? status.flatMap({ $0.isFinal ? $0.result.rawValue : nil }) { fields["result"] = .string(result) }
        if (event.result ?? status?.result.rawValue) == WatchStatus.Result.retrying.rawValue {
          fields["reconcile"] = .string("retrying")
          if let status, status.result == .retrying {
            if let attempt = status.attempt { fields["attempt"] = .integer(attempt) }
            if let next = status.nextRetry { fields["next_retry"] = .string(next) }
          }
        }
      }
      let heard = Date(), time = InternetTime.date(event.time) ?? heard
      // An SOS is timed by the press (the agent's `time`); one heard well after it says when.
      var message = fleetFile.map { WatchStatus.naming(fleetFile: $0, in: event.message) } ?? event.message
      if kind == .sos, abs(heard.timeIntervalSince(time)) > Monitor.heardLateAfter {
        fields["heard_at"] = .string(MonitorEvent.timestamp(heard))
        // Said in the words too, as a direct monitor says it (fresh-eyes fe91: only the page did).
        if heard > time, !message.contains("before it was heard") {
          message += " \(StatusBoard.duration(heard.timeIntervalSince(time))) before it was heard"
        }
      }
      if kind == .sos, replayed {
        fields["replayed"] = .bool(true)
        message += " (replayed: published while this monitor was not connected)"
      }
      // An SOS keeps the agent's id for the press, so one replayed by a restarted agent or
      // heard again from the retained list is recognised (and delivered once) and receivers
      // can deduplicate by it.
      let pressID = event.id.flatMap { Outbox.isSafeID($0) ? $0 : nil }
      var shown = MonitorEvent(time: time, watch: watch, kind: kind, id: pressID, message: message, fields: fields)
      // A drift event replaces the one shown before for the watch, if that is not over (kept in
      // the watch's record, across restarts): a receiver tracking drift by id closes it.
      if kind == .drift, let record = record(of: watchID) {
        if let earlier = record.current.openDrift { shown.fields["supersedes"] = .string(earlier) }
        do { try record.openDrift(shown.id) } catch {
          notRecorded(error, record, watchID: watchID, "cannot record the drift shown (\(error)); a restarted monitor may not end it by its id")
        }
      }
      // A gap in the watch's events: raised once, heard live or from the retained list.
      if kind == .error, event.reason == "events_missed", let after = event.after, let before = event.before, let record = record(of: watchID) {
        do { try record.tellOnce(gapAfter: DeviceEventID(after), before: DeviceEventID(before)) { show(shown, watchID: watchID) } } catch {
          notRecorded(error, record, watchID: watchID, "cannot record the gap told (\(error)); a restarted monitor may raise it again")
        }
        return
      }
      let kept = kind == .sos && pressID != nil ? record(of: watchID) : nil
      // The same press published again: by its agent (same id), or by another agent the watch
      // moved to, which replays what the watch still keeps (same time, another id).
      if let kept, kept.hasHandled(press: shown.id) || kept.hasHandled(pressedAt: event.time, id: shown.id) { return }
      let press = HandledEvents.Press(id: shown.id, sequence: event.sequence ?? 0, time: event.time)
      if kind == .sos, let delivery {
        // Already in the outbox (a crash came before it was recorded): delivered from there.
        if outbox.entry(shown.id) != nil {
          if let kept { recordPress(press, in: kept, watchID: watchID) }
          return
        }
        let entry = Outbox.Entry(id: shown.id, body: shown.jsonLine)
        try? outbox.put(entry)
        Task { await delivery.start(entry) }
      }
      // In the outbox before it is recorded: a crash between the two delivers it from there.
      if let kept { recordPress(press, in: kept, watchID: watchID) }
      show(shown, watchID: watchID)
    }

    /// Says the drift shown last for watch `id` is over when its agent's `status` finds none (a
    /// read of the watch, measured against the revision applied): `resolved` with its `drift_id`,
    /// as a direct monitor ends a drift — over MQTT no event said it, and a receiver tracking drift
    /// by id kept every one open (fresh-eyes fe92 D1). When the agent's apply undid it ("undid
    /// what was changed on the watch"), the event says so (`overwritten_by`: the agent, the
    /// revision, when), not as if the wearer had.
    ///
    /// From another agent than the one whose status measured the drift (`previous`: a watch
    /// taken over, its new agent measuring against what it applied or found itself), the event
    /// says so: the wearer's change may still be on the watch, the new agent's starting point
    /// (fresh-eyes fe105 #2: "holds what the last apply left again" while it held the change).
    private func driftOver(_ id: String, _ status: WatchStatus, previous: WatchStatus? = nil) {
      // Measured after a refused or invalid revision too (the watch is still checked against
      // what it holds: fresh-eyes fe94 D1).
      guard status.drift == 0, status.driftMeasured, let record = record(of: id), let driftID = record.current.openDrift else { return }
      do { try record.openDrift(nil) } catch {
        notRecorded(error, record, watchID: id, "cannot record the drift's end (\(error)); a restarted monitor may end it again")
      }
      var fields: [String: JSONValue] = ["drift_id": .string(driftID), "healed": .bool(false), "agent": .string(status.agent),
                                         "watch_id": .string(id)]
      var message = "the watch holds what the last apply left again"
      if let previous, previous.agent != status.agent, previous.drift > 0 {
        fields["taken_over_from"] = .string(previous.agent)
        message = "agent \(status.agent), which took the watch over from agent \(previous.agent), measures no drift against what it "
          + (status.lastApplied == nil ? "found on the watch" : "applied") + ": the change agent \(previous.agent) reported may still be on the watch, "
          + "now its starting point ('tsapply device show' on its host says what the watch holds)"
      }
      if status.result == .applied, status.message?.contains(WatchStatus.undidDrift) == true {
        fields["overwritten_by"] = .object(["agent": .string(status.agent), "revision": .string(status.revision),
                                            "time": status.lastApplied.map(JSONValue.string) ?? .null])
        message += ": agent \(status.agent)'s apply of revision \(status.revision) wrote over what had changed on the watch "
          + "(the backup it took first, in the agent's records for the watch, holds the watch as it was)"
      }
      show(MonitorEvent(time: Date(), watch: name(of: id), kind: .resolved, message: message, fields: fields), watchID: id)
    }

    /// Emits `shown` and shows it to the observers, on the watch `watchID`'s row.
    private func show(_ shown: MonitorEvent, watchID: String) {
      emit(shown)
      if let name = member(watchID) {
        for observer in observers { observer.record(shown, for: [name]) }
      } else if shown.kind == .sos {
        // A watch the fleet file no longer names (docs/fleet.md): its press is delivered, so it
        // is shown open too, under the name the log gives it.
        for observer in observers { observer.record(shown, for: [shown.watch]) }
      }
    }
  }
}

/// The watches a fleet's `monitor --fleet` has monitored — by name and device, every member
/// at each start and each watch it starts monitoring while it runs — kept in the fleet's monitor
/// folder, so that each start delivers the SOS presses still held in the outbox of a device no
/// member has now (`FleetMonitor.deliverers`): a watch removed from the fleet file, or given
/// another device, while the monitor ran or while it was stopped (fresh-eyes findings: the
/// press waited until the watch came back into the fleet file). A device is forgotten once no
/// member has it and its outbox is empty. The file is 0600 and read bounded (a file over
/// `maxBytes` reads as empty); thread-safe.
public final class MonitoredWatches: Sendable {
  /// A watch monitored: its name in the fleet, its device spec.
  public struct Watch: Codable, Hashable, Sendable {
    public var name: String
    public var device: String
    /// A watch monitored.
    public init(name: String, device: String) {
      self.name = name
      self.device = device
    }

    /// `member` as monitored now.
    init(_ member: FleetMember) { self.init(name: member.name, device: member.device) }
  }

  private struct Stored: Codable {
    static let formatName = "tsapply-fleet-monitored-watches"
    var format = Stored.formatName
    var version = 1
    var watches: [Watch]
  }

  /// The file.
  public let path: String
  private let lock = NSLock()
  /// At most this many bytes are read: `ManifestSource.maxRecordBytes` (4 MiB), about 70,000
  /// watches at 60 bytes each (it was 256 KiB, about 4,000, and a site of 10,000 lost the file).
  static let maxBytes = ManifestSource.maxRecordBytes

  /// The watches kept in the file at `path`.
  public init(path: String) { self.path = path }

  /// Keeps `members` (as monitored now) too.
  public func add(_ members: [FleetMember]) {
    guard !members.isEmpty else { return }
    lock.withLock {
      let kept = read()
      write(kept + members.map(Watch.init).filter { !kept.contains($0) })
    }
  }

  /// The watches kept whose device no member of `members` has now and whose outbox (under
  /// `engine`'s state folder) holds SOS events to deliver; from then on the file holds those
  /// and `members`, the others are forgotten.
  public func waiting(members: [FleetMember], engine: Engine) -> [Watch] {
    lock.withLock {
      // A watch kept under a spec a member has, as written, is that member's: only the others'
      // paths are resolved (at a thousand watches each resolution is a handful of `lstat`s).
      let written = Set(members.map(\.device))
      let kept = read().filter { !written.contains($0.device) }
      let devices = kept.isEmpty ? [] : Set(members.map { engine.canonicalSpec($0.device) })
      var seen: Set<String> = []
      let waiting = kept.filter { watch in
        let identity = engine.canonicalSpec(watch.device)
        guard !devices.contains(identity), seen.insert(identity).inserted else { return false }
        let outbox = Outbox(directory: WatchHome(identity: identity, root: engine.stateRoot).outboxDirectory).entries()
        return !outbox.entries.isEmpty || !outbox.unreadable.isEmpty
      }
      write(members.map(Watch.init) + waiting)
      return waiting
    }
  }

  private func read() -> [Watch] {
    guard let bytes = try? ManifestSource.file(path: path, displayName: path).read(maxBytes: Self.maxBytes, noun: "monitored watches").get(),
          let stored = try? JSONDecoder().decode(Stored.self, from: Data(bytes)), stored.format == Stored.formatName else { return [] }
    return stored.watches
  }

  private func write(_ watches: [Watch]) {
    if watches.isEmpty {
      unlink(path)
      return
    }
    guard let data = try? JSONEncoder().encode(Stored(watches: watches)) else { return }
    try? SecureFile.write(Array(data), to: path)
  }
}

extension FleetMonitor {
  /// A monitor per device in `left` (`MonitoredWatches.waiting`) that only delivers what its
  /// outbox holds (`Monitor.retire` before it runs: nothing is checked or listened to), with
  /// `template`'s settings, its events going to `emit` and to `observers` under the name the
  /// watch had.
  public static func deliverers(for left: [MonitoredWatches.Watch], engine: Engine, template: MonitorSettings, notifiers: [any Notifier],
                                emit: @escaping @Sendable (MonitorEvent) -> Void, notice: @escaping @Sendable (String) -> Void,
                                observers: [any MonitorObserver] = []) -> [Monitor] {
    left.map { watch in
      var settings = template
      settings.deviceSpec = watch.device
      settings.watchName = watch.name
      let name = watch.name
      let monitor = Monitor(engine: engine, settings: settings, notifiers: notifiers, emit: observed(emit, by: observers, watch: name),
                            notice: { notice("\(name) (\(watch.device), a device the fleet file no longer names): \($0)") })
      monitor.retire()
      return monitor
    }
  }
}
