import Foundation
import TSApply
import TSDevice
import TSEngine
import TSManifest
import TSModel
import TSMonitor
import TSMQTT
import TSPlan

/// The pull-based agent (`tsapply agent`; the same code a companion app embeds): it keeps a
/// persistent MQTT session, takes each watch's desired documents from
/// `tsapply/v1/SITE/WATCH-ID/desired`, applies every new revision through the engine as soon as
/// it can, and publishes the watch's status (retained), its events, and its own presence (with a
/// Last Will that marks it offline). docs/fleet.md "Agents".
///
/// Per watch, documents are handled one at a time, newest first: a revision that arrives while
/// an apply runs waits, and only the newest of those that waited is applied. A revision already
/// handled in a new publication (`apply --fleet` run again) is answered afresh through the
/// engine (nothing written when the watch still matches, a drifted watch converged), each status
/// naming the publication it answers; one delivered again in the same publication changes
/// nothing, unless the watch drifted since or the last try failed: then it is applied again. The engine's
/// safety gate applies: an unsafe plan is refused unless the document carries `allow_destroy`.
/// A failed apply (the watch out of reach, locked) is tried again with backoff; a refused or
/// invalid one waits for a new revision — a refusal while the watch had drifted is tried again
/// once a drift check finds that drift gone.
public final class FleetAgent: @unchecked Sendable {
  /// What the agent is and how it works.
  public struct Configuration: Sendable {
    /// The broker and its credentials.
    public var broker: BrokerSettings
    /// The site whose topics it serves.
    public var site: String
    /// Its ID (unique per site: the broker keeps one session per agent).
    public var agentID: String
    /// How often it reads each watch for drift (and refreshes `last_seen`); zero never.
    public var driftInterval: Duration
    /// First and longest wait before trying a failed apply again.
    public var retryDelay: (first: Duration, longest: Duration)
    /// Seconds between keep-alive pings; the broker sends the will after 1.5 times that.
    public var keepAlive: Int
    /// How long desired documents are held at most after a connection is made, when the
    /// agent's own presence does not come back (a broker ACL that lets it write its presence but
    /// not read it): then it applies what it holds, concluding nothing of what the broker lacks.
    public var settleLimit: Duration = .seconds(10)

    /// A configuration; drift is checked every 5 minutes, failures retried after 5 s to 5 min.
    public init(broker: BrokerSettings, site: String, agentID: String, driftInterval: Duration = .seconds(300),
                retryDelay: (first: Duration, longest: Duration) = (.seconds(5), .seconds(300)), keepAlive: Int = 30) {
      self.broker = broker
      self.site = site
      self.agentID = agentID
      self.driftInterval = driftInterval
      self.retryDelay = retryDelay
      self.keepAlive = keepAlive
    }

    /// The MQTT client ID: `tsapply-agent-SITE-AGENT`.
    public var clientID: String { "tsapply-agent-\(site)-\(agentID)" }
  }

  /// Messages the agent has published and received, for benchmarks.
  public struct Statistics: Sendable, Equatable {
    /// Status documents published.
    public var statuses = 0
    /// Events published.
    public var events = 0
    /// Presence documents published.
    public var presence = 0
    /// Desired documents received.
    public var desiredReceived = 0
    /// Applies run through the engine.
    public var applies = 0
    /// Watch states published (`ReportedState`: only when one differs from the last published).
    public var states = 0
    /// Lists of a watch's newest SOS presses published (`RecentSOS`).
    public var recentSOS = 0
    /// None yet.
    public init() {}
  }

  /// The configuration.
  public let configuration: Configuration
  private var workers: [String: AgentWatch] = [:]
  private let client: MQTTClient
  /// What the watches' workers publish and log through. They hold it, not the agent, so a
  /// worker's task that ends after the agent is gone (an apply in progress, a retry's wait, an
  /// SOS arriving) still has somewhere to report, and the agent is freed when its owner drops it.
  private let outlet: AgentOutlet
  private let lock = NSLock()
  private var sequence: [String: Int] = [:]
  /// When the connection was last made, and how many in a row the broker closed within
  /// `ClientIDClash.window` of being made (`ClientIDClash`).
  private var connectedAt: Date?
  private var quickLosses = 0
  private var driftTask: Task<Void, Never>?
  /// Whether desired documents are held (`held`, the newest per watch) rather than handed to
  /// the watches: from the start and from each lost connection until the agent's own presence,
  /// published once connected and subscribed (`marker`), comes back — behind every document the
  /// broker queued for the kept session and every retained one the subscription brought — or
  /// `Configuration.settleLimit` passes. So an agent back online applies only the newest of the revisions
  /// queued for a watch, never an older one it replaced (fresh-eyes fe90 #2).
  private var settling = true
  private var held: [String: (payload: [UInt8], sequence: Int, retained: Bool)] = [:]
  private var marker: [UInt8]?
  /// Counts connections made and lost: the `settleLimit` timer of a connection ends the hold
  /// only while that connection stands (fresh-eyes fe95 #6: a connection lost within the limit
  /// was said to have an ACL that hid the agent's presence, while the broker was restarting).
  private var connections = 0
  /// `tsapply/v1/SITE/agent/AGENT/state`: the agent's presence (and Last Will), which it also
  /// reads back (`settling`).
  private let presenceTopic: String

  /// An agent serving `watches` (each with its watch ID), logging one line per event to `log`
  /// (phone-like text masked). Nothing happens until `start()`.
  /// - Throws: `MQTTError` when the client cannot be made (a TLS file libmosquitto refuses).
  public init(configuration: Configuration, watches: [(id: String, watch: Watch)], now: @escaping @Sendable () -> Date = { Date() },
              log: @escaping @Sendable (String) -> Void = { _ in }) throws(MQTTError) {
    self.configuration = configuration
    let site = configuration.site
    presenceTopic = FleetTopics.agent(site: site, agent: configuration.agentID)
    let will = MQTTClient.Will(topic: presenceTopic,
                               payload: Self.presence(configuration.agentID, online: false, watches: watches.map(\.id)).encoded())
    var settings = try configuration.broker.configuration(
      clientID: configuration.clientID, cleanSession: false,
      subscriptions: watches.map { FleetTopics.watch(site: site, watch: $0.id, .desired) } + [presenceTopic],
      will: will, keepAlive: configuration.keepAlive)
    // The retained documents at every connection: a broker restored from an older save holds
    // older ones than the agent handled, and the kept session would not say so (fresh-eyes
    // finding: "applying" for ever, exit 0, while nothing was applied). Each is answered as a
    // document delivered again: one handled before is ignored, an older publication `invalid`.
    settings.resubscribes = true
    // The client's handlers are set once `self` exists; until `start()` nothing arrives.
    let handlers = AgentHandlers()
    client = try MQTTClient(address: configuration.broker.address, configuration: settings,
                            onMessage: { message in handlers.agent?.received(message) },
                            onConnection: { event in handlers.agent?.connection(event) })
    outlet = AgentOutlet(configuration: configuration, client: client, log: log)
    for (id, watch) in watches {
      workers[id] = AgentWatch(id: id, watch: watch, outlet: outlet, now: now)
    }
    handlers.agent = self
  }

  /// The IDs of the watches served.
  public var watchIDs: [String] { workers.keys.sorted() }

  /// The agent's presence as it publishes it (and its Last Will): announcing every
  /// `AgentState.Feature`, so publishers send it publications (docs/fleet.md "Upgrading").
  static func presence(_ agent: String, online: Bool, watches: [String], since: String? = nil) -> AgentState {
    AgentState(agent: agent, online: online, watches: watches, since: since, features: AgentState.Feature.allCases.map(\.rawValue))
  }

  /// Registers for the watches' SOS and contact-change events, connects, and starts the
  /// periodic drift checks.
  public func start() async {
    // Connected (or connecting) first: what the listeners replay at once (an SOS pressed while
    // the agent was down) is queued for the broker, not refused as "not connected".
    client.connect()
    for worker in workers.values { await worker.listen() }
    let interval = configuration.driftInterval
    guard interval > .zero else { return }
    let workers = Array(self.workers.values)
    driftTask = Task {
      while !Task.isCancelled {
        try? await Task.sleep(for: interval)
        if Task.isCancelled { return }
        for worker in workers { await worker.requestDriftCheck() }
      }
    }
  }

  /// Waits until connected and subscribed.
  /// - Throws: `MQTTError.refused` (credentials, authorisation) or `.timedOut`.
  public func ready(within timeout: Duration) async throws(MQTTError) {
    try await client.ready(within: timeout)
  }

  /// Stops cleanly: no watch starts another apply or drift check, an apply in progress stops
  /// between two steps (the engine's stop request, as Ctrl-C stops `tsapply apply`), each
  /// watch's last status is published, then the agent says it goes offline (retained) and
  /// disconnects. Nothing is published afterwards.
  public func stop() async {
    outlet.requestStop()
    driftTask?.cancel()
    for worker in workers.values { await worker.idle() }
    if await client.isReady {
      // Within a few seconds: a connection lost meanwhile makes the statuses wait for it.
      await outlet.flush(within: .seconds(5))
      // Bounded as well: a broker gone meanwhile would hold a QoS 1 publish until it is back,
      // and the agent with it (fresh-eyes finding: SIGTERM as the broker stopped, and the agent
      // kept reconnecting instead of exiting).
      let state = Self.presence(configuration.agentID, online: false, watches: watchIDs, since: timestamp(Date()))
      outlet.publish(presenceTopic, state.encoded(), retain: true) { $0.presence += 1 }
      await outlet.flush(within: .seconds(5))
    } else {
      outlet.log("not connected to \(configuration.broker.address), so the last statuses and the going offline cannot be published; "
                 + "the broker marks the agent offline itself (its Last Will) once \(configuration.keepAlive * 3 / 2) s pass without a word")
    }
    outlet.silence()
    await client.close()
  }

  /// Vanishes without a word, as a crashed process or a phone out of reach would: the broker
  /// publishes the will (offline) and keeps the session for the agent's return. For tests and
  /// benchmarks.
  public func abandon() async {
    outlet.requestStop()
    outlet.silence()
    driftTask?.cancel()
    await client.abandon()
  }

  /// What the agent has published and received so far.
  public var statistics: Statistics { outlet.statistics }

  /// The last status published for `watchID`, if any.
  public func status(of watchID: String) async -> WatchStatus? { await workers[watchID]?.currentStatus }

  // MARK: Broker side

  private func received(_ message: MQTTClient.Message) {
    if message.topic == presenceTopic {
      if lock.withLock({ settling && marker == message.payload }) { settle() }
      return
    }
    guard let (_, id, kind) = FleetTopics.parseWatch(message.topic), kind == .desired, let worker = workers[id] else { return }
    outlet.count { $0.desiredReceived += 1 }
    let payload = message.payload, retained = message.retained
    let (number, holding) = lock.withLock { () -> (Int, Bool) in
      let number = (sequence[id] ?? 0) + 1
      sequence[id] = number
      if settling { held[id] = (payload, number, retained) }
      return (number, settling)
    }
    guard !holding else { return }
    Task { await worker.offer(payload, sequence: number, retained: retained) }
  }

  /// Ends the hold on desired documents (`settling`): each watch is handed the newest held for
  /// it. Ended by the agent's presence coming back (`complete`), the hold saw everything the
  /// broker had for the agent: a watch with no document held has none on the broker, which its
  /// status says (`WatchStatus.desiredMissing`); ended by `settleLimit`, nothing is concluded.
  private func settle(complete: Bool = true) {
    let released = lock.withLock { () -> [String: (payload: [UInt8], sequence: Int, retained: Bool)]? in
      guard settling else { return nil }
      settling = false
      marker = nil
      defer { held = [:] }
      return held
    }
    guard let released else { return }
    for (id, worker) in workers {
      if let document = released[id] {
        Task { await worker.offer(document.payload, sequence: document.sequence, retained: document.retained) }
      } else if complete {
        Task { await worker.brokerHoldsNoDocument() }
      }
    }
  }

  private func connection(_ event: MQTTClient.ConnectionEvent) {
    switch event {
    case .ready(let sessionPresent):
      lock.withLock { connectedAt = Date() }
      outlet.log("connected to \(configuration.broker.address) as \(configuration.clientID)\(sessionPresent ? " (session kept)" : "")")
      // Every connection, kept session or not: the broker may have lost its retained messages
      // (restarted without persistence) or gone back to older ones (restarted from a
      // persistence file saved before its last messages: fresh-eyes finding, a wearer's change
      // said "in sync" for 4 minutes). Each watch's status is published again now, as this
      // agent knows it, and the watch read at once, its state published again too, so
      // `plan --fleet` has a reading to plan against.
      for worker in workers.values { Task { await worker.publishAgain() } }
      // Every connection, kept session or not: a broker restarted without persistence lost the
      // retained lists, and a monitor that connects later needs them.
      for worker in workers.values { Task { await worker.publishRecentSOS() } }
      let state = Self.presence(configuration.agentID, online: true, watches: watchIDs, since: timestamp(Date()))
      // The presence is also the end of what the broker had for the agent when it connected:
      // it comes back behind it (`settling`), or the hold ends after `settleLimit`.
      let connection = lock.withLock { () -> Int in
        connections += 1
        if settling { marker = state.encoded() }
        return connections
      }
      outlet.publish(presenceTopic, state.encoded(), retain: true) { $0.presence += 1 }
      Task { [weak self] in
        try? await Task.sleep(for: self?.configuration.settleLimit ?? .zero)
        guard let self, self.lock.withLock({ self.settling && self.connections == connection }) else { return }
        self.outlet.log("its own presence did not come back from the broker within \(Int(self.configuration.settleLimit.seconds)) s of connecting; "
                        + "applying the desired documents received so far (a broker ACL must let agent \(self.configuration.agentID) read "
                        + "\(self.presenceTopic), docs/fleet.md \"Security\")")
        self.settle(complete: false)
      }
    case .lost(let reason):
      let losses = lock.withLock { () -> Int in
        settling = true
        connections += 1
        // Only a connection made and lost counts; one that could not be made (the broker down or
        // restarting) is no client-ID clash and ends the run (fresh-eyes fe97 #6).
        quickLosses = connectedAt.map { Date().timeIntervalSince($0) < ClientIDClash.window } == true ? quickLosses + 1 : 0
        connectedAt = nil
        return quickLosses
      }
      // Not while stopping: it does not reconnect for long, and its last line says why the
      // broker marks it offline (a reconnect attempt failing then was logged after it).
      guard !outlet.isStopping else { return }
      outlet.log("lost the broker: \(reason); reconnecting" + (losses >= ClientIDClash.losses ? ClientIDClash.words(configuration) : ""))
    case .refused(let error):
      outlet.log("\(error); trying again")
    }
  }
}

/// An agent whose connection the broker closes right after it is made, again and again: what
/// an MQTT broker does to the older of two clients with the same client ID (each new connection
/// takes the session over), so two agents started with the same `--agent-id` for one site take
/// turns forever, each one's watches flickering offline and online on the page.
enum ClientIDClash {
  /// A connection lost within this many seconds of being made counts.
  static let window: TimeInterval = 5
  /// This many such losses in a row are said.
  static let losses = 3

  /// `; the broker closed this agent's connection right after it was made N times in a row: …`
  static func words(_ configuration: FleetAgent.Configuration) -> String {
    "; the broker has closed this agent's connection right after it was made \(losses) or more times in a row, as it does when another "
      + "client connects with the same client ID (\(configuration.clientID)): is another agent running with --agent-id \(configuration.agentID) "
      + "for site \(configuration.site)? Each agent needs an --agent-id of its own"
  }
}

/// Opened once (`open`); `wait` returns once it is: a publish handed over to the client, which
/// the next publish waits for (`AgentOutlet.publish`).
final class HandOver: @unchecked Sendable {
  private let lock = NSLock()
  private var opened = false
  private var waiting: [CheckedContinuation<Void, Never>] = []

  /// Returns once `open` was called.
  func wait() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let now = lock.withLock { () -> Bool in
        if opened { return true }
        waiting.append(continuation)
        return false
      }
      if now { continuation.resume() }
    }
  }

  /// Lets every `wait` return, now and later; the calls after the first do nothing.
  func open() {
    let resumed = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
      guard !opened else { return [] }
      opened = true
      defer { waiting = [] }
      return waiting
    }
    for continuation in resumed { continuation.resume() }
  }
}

/// Where an agent's workers report: the configuration, the log, the MQTT client to publish
/// on, the counts, and whether the agent is stopping. Held by the agent and by every
/// `AgentWatch` (it holds neither), so a worker's task that ends after the agent is gone still
/// has somewhere to report.
final class AgentOutlet: @unchecked Sendable {
  let configuration: FleetAgent.Configuration
  private let sink: @Sendable (String) -> Void
  private let client: MQTTClient
  private let lock = NSLock()
  private var counts = FleetAgent.Statistics()
  private var stopping = false
  private var silent = false
  private var inFlight: [Int: Task<Void, Never>] = [:]
  private var nextPublish = 0
  /// Opened once the last publish made has been handed to the client: the next one waits for
  /// it, so the broker gets the agent's messages in the order it made them. Each was published
  /// from a task of its own, and tasks start in any order: a watch's status could reach the
  /// monitors after the one that followed it, or after the error event it comes before
  /// (fresh-eyes fe95 #3: `invalid`, `recovered`, `invalid` within 0.3 s for 92 of 100 watches
  /// after a broker restored from an older save — the status published before the `invalid`
  /// one came after it).
  private var lastHandedOver: HandOver?

  init(configuration: FleetAgent.Configuration, client: MQTTClient, log: @escaping @Sendable (String) -> Void) {
    self.configuration = configuration
    self.client = client
    sink = log
  }

  /// Logs one line. Text that may quote a contact (a diagnostic, an error from the engine) is
  /// masked by the caller (`AgentWatch.masked`); addresses, revisions and counts are not, so
  /// the log can be matched with what `apply --fleet` prints.
  func log(_ line: String) { sink(line) }

  /// Whether the agent is stopping: no new work starts, applies stop between steps.
  var isStopping: Bool {
    lock.lock()
    defer { lock.unlock() }
    return stopping
  }

  func requestStop() {
    lock.lock()
    stopping = true
    lock.unlock()
  }

  /// From now on nothing is published (the agent said it is offline, or vanished).
  func silence() {
    lock.lock()
    silent = true
    lock.unlock()
  }

  var statistics: FleetAgent.Statistics {
    lock.lock()
    defer { lock.unlock() }
    return counts
  }

  func count(_ change: (inout FleetAgent.Statistics) -> Void) {
    lock.lock()
    change(&counts)
    lock.unlock()
  }

  /// Publishes with QoS 1, counting it, after the publishes made before it (`lastHandedOver`);
  /// a publish made while disconnected goes out on reconnection, one made once the agent is
  /// silent is dropped.
  func publish(_ topic: String, _ payload: [UInt8], retain: Bool, count change: @escaping (inout FleetAgent.Statistics) -> Void,
               acknowledged: (@Sendable () -> Void)? = nil) {
    lock.lock()
    defer { lock.unlock() }
    guard !silent else { return }
    change(&counts)
    let number = nextPublish
    nextPublish += 1
    let client = self.client
    let (before, handedOver) = (lastHandedOver, HandOver())
    lastHandedOver = handedOver
    inFlight[number] = Task { [weak self] in
      // In order: after the publish made before it is handed over (not acknowledged: each
      // waits for its own acknowledgement, side by side).
      await before?.wait()
      defer { handedOver.open() }
      // QoS 1: returns once the broker has it (queued by libmosquitto while disconnected).
      if (try? await client.publish(topic, payload: payload, qos: 1, retain: retain, handedOver: { handedOver.open() })) != nil { acknowledged?() }
      self?.published(number)
    }
  }

  private func published(_ number: Int) {
    lock.lock()
    inFlight[number] = nil
    lock.unlock()
  }

  private func pendingPublishes() -> [Task<Void, Never>] {
    lock.lock()
    defer { lock.unlock() }
    return Array(inFlight.values)
  }

  /// Waits until the broker has acknowledged what was published, at most `timeout`: those
  /// still waiting then are given up.
  func flush(within timeout: Duration) async {
    let waiting = pendingPublishes()
    guard !waiting.isEmpty else { return }
    let timer = Task {
      try? await Task.sleep(for: timeout)
      for task in waiting { task.cancel() }
    }
    for task in waiting { await task.value }
    timer.cancel()
  }
}

/// The stop request an agent's applies run with: the engine stops between steps once the agent
/// is stopping. Installs nothing (the front-end owns the signal handlers).
struct AgentStop: StopRequest {
  let outlet: AgentOutlet
  func begin() {}
  var isRequested: Bool { outlet.isStopping }
  func end() {}
}

/// The agent the MQTT client's handlers call, set once the agent is made; weak, so the client
/// (which the agent owns) does not keep its agent alive.
private final class AgentHandlers: @unchecked Sendable {
  weak var agent: FleetAgent?
}

/// One watch an agent serves: its newest desired document, the apply in progress, its status.
actor AgentWatch {
  let id: String
  let watch: Watch
  let outlet: AgentOutlet
  /// What the agent's listener hears, handed to its applies: a contact change made on the watch
  /// while an apply writes is reported (`changedDuringApply`), not written over in silence.
  nonisolated let announcements = WatchAnnouncements()
  let now: @Sendable () -> Date
  private var newest: (sequence: Int, payload: [UInt8], retained: Bool)?
  private var newestSequence = 0
  private var running = false
  private var driftWanted = false
  private var document: DesiredDocument?
  private var payload: [UInt8] = []
  /// The document applied before this start, from `agent-desired.json`, and its bytes: what
  /// drift checks compare with until the broker hands the agent a document (a broker that lost
  /// its retained documents hands it none).
  private var kept: (document: DesiredDocument, payload: [UInt8])?
  private var status: WatchStatus?
  /// The history's last entry when the status kept before this start was kept
  /// (`WatchStatus.historyCounted`): what that status accounted for (`interruptedAttempt`).
  private var keptHistoryCounted: Int?
  private var attempts = 0
  /// The last watch event handled, kept across restarts (set by `listen()`).
  private var handled: HandledEvents?
  /// `DesiredDocument.contentRevision` of the document last handled (kept across restarts in
  /// the status's `content_revision`).
  private var handledContent: String?
  /// What the earlier attempts at the current revision that got past their backup did (so may
  /// have written): `reached`, the changes they got onto the watch, over every attempt (`nil`
  /// when not known: a killed apply's `started` entry), and `planned`, the revision's changes as
  /// they planned them. The attempt that succeeds reports the whole revision's changes — what
  /// the earlier ones reached and what it changed itself — and one that finds the watch already
  /// matching reports the revision applied, by them (a lost answer, a write that landed).
  /// Seeded on a start from the kept status (`WatchStatus.reached`) or the history
  /// (`interruptedAttempt`); cleared by a new revision.
  private var earlier: (reached: PlanCounts?, planned: PlanCounts)?
  /// Whether this start has looked for an apply of this agent's that its killed process left
  /// unfinished (`interruptedAttempt`).
  private var lookedForInterruption = false
  /// Whether the status holds drift an apply kept (`finish(keptDrift:)`) that no drift event
  /// has told yet this start.
  private var keptDriftUntold = false
  /// Drift checks in a row that could not read the watch, and whether the next try is
  /// scheduled (`scheduleReread`).
  private var unread = 0, rereadScheduled = false
  /// The words of the drift last told (`checkDrift`: its summary and whether it puts SOS at
  /// risk), after a restart as the kept status says them (`WatchStatus.driftSummary`); `nil`
  /// when none is left or none is known: a drift event is published when they change.
  private var lastDriftTold: (summary: String, atRisk: Bool)?
  /// Whether writing `agent-status.json` failed last time (said once, not at every status).
  private var statusRecordFailed = false
  /// `DeviceState.fingerprint` of the state last published on the state topic (`report`);
  /// `nil` before the first since this start.
  private var reportedFingerprint: String?
  private var idleWaiters: [CheckedContinuation<Void, Never>] = []
  /// The publications handled for this watch, oldest first (at most `keptPublications`), kept in
  /// `agent-publications.json`: a document of one of them older than the newest comes from a
  /// broker that lost the newer (restarted from an older save) and is not applied.
  private var publications: [String] = []
  static let keptPublications = 32

  init(id: String, watch: Watch, outlet: AgentOutlet, now: @escaping @Sendable () -> Date) {
    self.id = id
    self.watch = watch
    self.outlet = outlet
    self.now = now
    // The publications handled before this start, so a broker that hands back an older one is
    // not obeyed after a restart either.
    let publicationsPath = watch.home.agentPublicationsPath
    if let bytes = try? ManifestSource.file(path: publicationsPath, displayName: publicationsPath)
         .read(maxBytes: ManifestSource.maxRecordBytes, noun: "agent publications").get(),
       let kept = try? JSONDecoder().decode([String].self, from: Data(bytes)) {
      publications = kept
    }
    // The status this watch had when the agent last ran, so what it knew (the revision
    // applied, when, drift) is not lost across a restart.
    let path = watch.home.agentStatusPath
    if let bytes = try? ManifestSource.file(path: path, displayName: path).read(maxBytes: ManifestSource.maxRecordBytes, noun: "agent status").get(),
       let kept = WatchStatus.decode(bytes), kept.watch == id, kept.device == watch.identity {
      var seed = kept
      seed.agent = outlet.configuration.agentID
      // Said by the kept copy only: never published.
      keptHistoryCounted = kept.historyCounted
      seed.historyCounted = nil
      if kept.drift > 0, let summary = kept.driftSummary { lastDriftTold = (summary, kept.sosAtRisk ?? false) }
      status = seed
      handledContent = kept.contentRevision
      if let planned = kept.planned, kept.result == .retrying || kept.result == .failed { earlier = (kept.reached, planned) }
      self.kept = Self.appliedDocument(watch: watch, id: id, site: outlet.configuration.site, status: kept)
    }
  }

  /// The document kept in `agent-desired.json` when it is the one `status` says was applied
  /// (same revision and content); `nil` otherwise.
  private static func appliedDocument(watch: Watch, id: String, site: String, status: WatchStatus)
    -> (document: DesiredDocument, payload: [UInt8])? {
    let path = watch.home.agentDesiredPath
    guard let applied = status.appliedRevision,
          let bytes = try? ManifestSource.file(path: path, displayName: path).read(maxBytes: ManifestSource.maxRecordBytes, noun: "desired document").get(),
          case .success(let document) = DesiredDocument.decode(bytes, topic: FleetTopics.watch(site: site, watch: id, .desired)),
          document.revision == applied, status.contentRevision == nil || document.contentRevision == status.contentRevision
    else { return nil }
    return (document, bytes)
  }

  var currentStatus: WatchStatus? { status }

  private var site: String { outlet.configuration.site }

  /// Registers for the watch's own events: SOS is published at once, a contact change
  /// triggers a drift check.
  ///
  /// Listening resumes after the last event handled (`HandledEvents` in `agent-events.json`),
  /// so an SOS pressed while the agent was down (or killed before it published it) is
  /// published when it starts again, with the same id.
  ///
  /// A listener that fails with anything but 2004 (the link dropped and took the SDK's listeners
  /// with it, `reconnect@N` in the simulator) is registered again at once, resuming after the
  /// last event handled, so no SOS is lost to a reconnect; the other kinds' failures of the same
  /// drop do not register it a second time.
  func listen() async {
    let handled = self.handled ?? HandledEvents(path: watch.home.agentEventsPath, watch: watch.identity)
    if self.handled == nil, let problem = handled.problem {
      outlet.log("\(id): cannot use \(handled.path): \(problem); missed events are not replayed this time")
    }
    let first = self.handled == nil
    self.handled = handled
    // The presses kept from before this start, for a broker that lost them (the connection may
    // have come before this record was read).
    if first { publishRecentSOS() }
    listening += 1
    let generation = listening
    // No event handled yet: every event the watch keeps is asked for, and only the presses made
    // since this agent first listened to it (kept across restarts, `HandledEvents.clockSlack`
    // for the watch's clock) are published; older ones, and any without a time, only recorded.
    // Listening from the watch's resume point lost a press made while the first listener was
    // being set up (as the monitor did, docs/monitor.md "Missed events").
    var after = handled.lastEventID
    var olderThan: Date?
    if after == nil {
      let since = (try? handled.listeningSince(now: now())) ?? now()
      olderThan = since.addingTimeInterval(-HandledEvents.clockSlack)
      after = .everything
    }
    await watch.device.listen(to: [.sosRequested, .contactsChanged, .emergencyContactsChanged], after: after) { [weak self, olderThan] report in
      guard let self else { return }
      // At once, not after the actor's turn: an apply in progress holds the actor.
      self.announcements.heard(report)
      Task { await self.heard(report, generation: generation, olderThan: olderThan) }
    }
  }

  /// The registrations made by `listen()`; only the newest one's failures count.
  private var listening = 0

  /// What the listener reported: an SOS is published, a contact change asks for a drift check;
  /// each recorded as handled once acted on. A dropped listener is registered again.
  /// `olderThan`: with no event handled before this listener, presses made before it (or
  /// without a time) are only recorded.
  private func heard(_ report: ListenerReport, generation: Int, olderThan: Date? = nil) async {
    switch report {
    case .resumePoint(let point): record(point, sequence: nil)
    case .event(let event) where event.kind == .sosRequested && olderThan.map({ since in event.time.map { $0 < since } ?? true }) == true:
      record(event.id, sequence: nil)
    case .event(let event) where event.kind == .sosRequested: sos(event.id, pressedAt: event.time)
    case .event(let event):
      requestDriftCheck()
      record(event.id, sequence: nil)
    case .interrupted(let why):
      outlet.log("\(id): the watch's events are not being heard: \(why); an SOS pressed meanwhile is published once they are")
    case .reopened:
      outlet.log("\(id): the watch's events are heard again from a reopened stream; they count as back once it has held 30 s")
    case .resumed:
      outlet.log("\(id): the watch's events are heard again")
    case .missed(let after, let before):
      // A change the watch reported meanwhile is lost too (a reset watch may hold anything): read it now.
      requestDriftCheck()
      let told = now()
      let gap = gapEvent(after: after, before: before, time: told)
      outlet.log("\(id): " + gap.message)
      // Published once per gap, as a monitor raises it; then kept in the retained list, for a
      // monitor not connected now.
      guard let handled else { return publishEvent(gap) }
      do {
        guard try handled.tellOnce(gapAfter: after, before: before, at: told, { publishEvent(gap) }) else { return }
      } catch {
        outlet.log("\(id): cannot record the last event handled: \(error)")
      }
      publishRecentSOS()
    case .failed(let kind, let error):
      guard error.code != .notSupport, generation == listening else { return }
      outlet.log("\(id): the watch's \(kind.rawValue) listener was dropped (\(error)); listening again after the last event handled")
      await listen()
    }
  }

  /// The `error` event (`reason: events_missed`) of the gap between `after` and `before`, told
  /// at `time`; its `id` (`gap-AFTER-BEFORE`, when the device's ids make a safe one) is the same
  /// live and in the retained list, so a monitor raises it once.
  private func gapEvent(after: DeviceEventID, before: DeviceEventID, time: Date) -> FleetEvent {
    let text = "the watch's events after \(after) and before \(before) never reached this agent and cannot be had again "
      + "(\(ListenerReport.missedCause(after: after, before: before).text)): any SOS pressed in that gap was not published "
      + "(whether there was one is not known); ask the wearer"
    var gap = FleetEvent(agent: outlet.configuration.agentID, watch: id, kind: .error, time: InternetTime.text(time), message: masked(text))
    (gap.reason, gap.after, gap.before) = ("events_missed", after.rawValue, before.rawValue)
    let gapID = "gap-\(after.rawValue)-\(before.rawValue)"
    gap.id = Outbox.isSafeID(gapID) ? gapID : nil
    return gap
  }

  private func record(_ event: DeviceEventID?, sequence: Int?, press: HandledEvents.Press? = nil) {
    guard let handled, event != nil || sequence != nil || press != nil else { return }
    do { try handled.handled(event, sequence: sequence, press: press) } catch {
      outlet.log("\(id): cannot record the last event handled: \(error)")
    }
  }

  /// Publishes the watch's newest SOS presses (`RecentSOS`: those its record keeps, made within
  /// `RecentSOS.maxAge`, at most `RecentSOS.limit`) retained on its `sos` topic, each as the
  /// event published for it; nothing when it has none.
  func publishRecentSOS() {
    guard let handled else { return }
    let current = now()
    let presses = handled.recentPresses.filter { RecentSOS.isRecent($0.time, now: current) }.suffix(RecentSOS.limit)
    let gap = handled.current.gapTold.flatMap { told -> FleetEvent? in
      guard let time = told.time, RecentSOS.isRecent(time, now: current), let date = InternetTime.date(time) else { return nil }
      return gapEvent(after: DeviceEventID(told.after), before: DeviceEventID(told.before), time: date)
    }
    guard !presses.isEmpty || gap != nil else { return }
    var list = RecentSOS(agent: outlet.configuration.agentID, watch: id, presses: presses.map { sosEvent(id: $0.id, sequence: $0.sequence, time: $0.time) })
    list.gap = gap
    outlet.publish(FleetTopics.watch(site: site, watch: id, .sos), list.encoded(), retain: true) { $0.recentSOS += 1 }
  }

  /// Takes a desired document delivered as the `sequence`-th for this watch; older ones that
  /// arrive late are dropped. `retained`: the broker sent it because the agent subscribed (at
  /// its start), not because a publisher published it now.
  func offer(_ payload: [UInt8], sequence: Int, retained: Bool = false) {
    guard sequence > newestSequence else { return }
    // The broker holds a document for the watch after all (published again, or come back).
    if status?.desiredMissing == true {
      status?.desiredMissing = nil
      publishStatus()
    }
    newestSequence = sequence
    newest = (sequence, payload, retained)
    kick()
  }

  func requestDriftCheck() {
    driftWanted = true
    kick()
  }

  /// The agent connected and found no desired document for the watch on the broker (`FleetAgent`'s
  /// hold after a connection): said in the status (`desiredMissing`) and the log once, while the
  /// agent holds the watch to a revision it applied — the watch keeps it, but nothing on the
  /// broker says it is still what the manifests want. A watch never given a revision says nothing.
  func brokerHoldsNoDocument() {
    guard var next = status, let applied = next.appliedRevision, next.desiredMissing != true else { return }
    next.desiredMissing = true
    status = next
    outlet.log("\(id): the broker holds no desired document for the watch (lost in a restart without persistence, or its topic cleared); "
               + "the watch keeps revision \(applied) as last applied: publish the manifests again with 'tsapply apply --fleet'")
    publishStatus()
  }

  private func kick() {
    guard !running, !outlet.isStopping else { return }
    running = true
    Task { await drain() }
  }

  private func drain() async {
    while true {
      if !outlet.isStopping, let work = newest {
        newest = nil
        await handle(work.payload, sequence: work.sequence, retained: work.retained)
      } else if !outlet.isStopping, driftWanted {
        driftWanted = false
        await checkDrift()
      } else {
        if statusOwed, !outlet.isStopping { publishStatus() }
        running = false
        for waiter in idleWaiters { waiter.resume() }
        idleWaiters = []
        return
      }
    }
  }

  /// Returns once no document or drift check is being handled (at once when none is).
  func idle() async {
    guard running else { return }
    await withCheckedContinuation { idleWaiters.append($0) }
  }

  // MARK: Desired documents

  private func handle(_ payload: [UInt8], sequence: Int, retained: Bool) async {
    let topic = FleetTopics.watch(site: site, watch: id, .desired)
    switch DesiredDocument.decode(payload, topic: topic) {
    case .failure(let problem):
      let (revision, publication) = (Self.text("revision", in: payload) ?? "", Self.text("publication", in: payload))
      let message = masked(problem.diagnostics.filter { $0.severity == .error }.prefix(5).map(\.description).joined(separator: "; "))
      // The same broken document delivered again says nothing new; published again, it is answered.
      if status?.revision == revision, status?.result == .invalid, status?.message == message, status?.publication == publication { return }
      outlet.log("\(id): the desired document\(revision.isEmpty ? "" : " of revision \(revision)") is invalid; the watch was not touched: \(message)")
      handledContent = nil
      finish(revision: revision, publication: publication, result: .invalid, message: message)
    case .success(let desired):
      // A publication handled before the newest one handled: the broker lost the newer document
      // (restarted from a save older than it) and hands back one this agent has moved past.
      // Applying it would silently roll the watch back (fresh-eyes finding: a broker crash, then
      // an agent restart, reverted residents' watches); it is answered, not applied.
      if let publication = desired.publication, let newest = publications.last, publication != newest, publications.contains(publication) {
        let message = "the broker holds publication \(publication) (revision \(desired.revision)), older than publication \(newest) this agent "
          + "handled last (revision \(status?.appliedRevision ?? "?") applied): the broker lost the newer one (restarted from an older save); "
          + "not applied, the watch keeps what it holds — publish the manifests again with 'tsapply apply --fleet'"
        if status?.revision == desired.revision, status?.result == .invalid, status?.message == message { return }
        outlet.log("\(id): " + message)
        finish(revision: desired.revision, publication: status?.publication, result: .invalid, message: message, staleDesired: true)
        return
      }
      remember(publication: desired.publication)
      // Handled already: the same revision of the same content (a publisher that kept a
      // revision for changed content gets its change applied) in the same publication. A new
      // publication of it is answered afresh: through the engine, which writes nothing when
      // the watch still matches (`no-changes`) and converges it when it does not.
      let content = desired.contentRevision
      let handledBefore = status?.revision == desired.revision && content == handledContent
        && status?.publication == desired.publication
      // The revision this agent applied before it (re)started, delivered again because it
      // subscribed: not a request to apply it again. What the wearer changed meanwhile is
      // drift, reported by a check now, not written over (a publisher that wants the watch
      // back publishes the revision again: `tsapply apply --fleet`).
      if retained, handledBefore, let status, status.result == .applied || status.result == .noChanges,
         status.appliedRevision == desired.revision, document == nil {
        document = desired
        self.payload = payload
        await checkDrift()
        return
      }
      // Sent again because the agent subscribed again as it reconnected (`resubscribes`), the
      // one it handled in this process: not a request either — applied again, it would write
      // over what the wearer changed at every reconnection. Its retries keep their own time.
      if retained, handledBefore, document != nil { return }
      // Delivered again (a broker's duplicate, a publisher of its own without publications):
      // applied again only when the watch drifted or the last try failed.
      if let status, handledBefore, !status.wantsAnotherApply { return }
      if status?.revision != desired.revision {
        attempts = 0
        earlier = nil
      }
      handledContent = content
      document = desired
      self.payload = payload
      await apply(desired, sequence: sequence)
    }
  }

  /// Records `publication` as the newest handled (`publications`), on disk; a failure to write
  /// is said in the log (the list in memory still guards this run).
  private func remember(publication: String?) {
    guard let publication, publications.last != publication else { return }
    publications.removeAll { $0 == publication }
    publications = Array((publications + [publication]).suffix(Self.keptPublications))
    do { try SecureFile.write(Array(canonicalJSON(publications).utf8), to: watch.home.agentPublicationsPath, durable: false) } catch {
      outlet.log("\(id): cannot record the publications handled: \(error)")
    }
  }

  private func apply(_ desired: DesiredDocument, sequence: Int) async {
    let configuration = outlet.configuration
    let planned = Locked<Plan?>(nil)
    let changedDuringApply = Locked<String?>(nil)
    let device = watch.identity
    var options = ApplyOptions(approval: .automatic(allowDestroy: desired.allowDestroy), lockTimeout: .seconds(10),
                               command: "tsapply agent \(configuration.agentID) (site \(configuration.site), watch \(id))",
                               stop: AgentStop(outlet: outlet)) { event in
      switch event {
      case .planned(let plan): planned.set(plan)
      case .changedOnWatchDuringApply(let lists, let backupPath, let kept):
        changedDuringApply.set(Reconcile.changedDuringApply(lists, backupPath: backupPath, kept: kept, device: device) {
          PhoneRedaction.redactPhoneLike($0)
        })
      default: break
      }
    }
    options.announcements = announcements
    // Nobody reviews the agent's plans: what the wearer changed and this apply does not write
    // over stays drift in the record, and is reported (a drift check after the apply).
    options.keepsDriftInRecord = true
    outlet.count { $0.applies += 1 }
    if !lookedForInterruption {
      lookedForInterruption = true
      if earlier == nil { earlier = interruptedAttempt(command: options.command) }
    }
    let document = ManifestDocument(manifest: desired.manifest, bytes: payload, path: nil)
    let outcome = await Reconcile.apply(document, to: watch, allowDestroy: desired.allowDestroy, options: options)
    let content = desired.contentRevision
    let result: WatchStatus.Result
    var message = outcome.error?.description ?? ""
    func succeeded(_ plan: Plan) async {
      // The whole revision's changes: what earlier attempts got onto the watch and what this
      // one changed. Matching now because an earlier attempt's writes landed (its answer was
      // lost): applied by it, with what it reached, or (not known) what it was writing. What a
      // killed attempt reached is not known: the revision's changes are at least what it
      // planned (the whole revision, from the watch before it), and what this one changed.
      let before = self.earlier
      self.earlier = nil
      // A resource an earlier attempt wrote and this one wrote again (the wearer undid part of
      // it meanwhile) is one change of the revision, not two (fresh-eyes finding: "+0 ~2 -0" for
      // a revision changing the contacts only): the sum is bounded by the larger of the plans.
      let counts = before.map { before in
        plan.isEmpty ? (before.reached.flatMap { $0.total > 0 ? $0 : nil } ?? before.planned)
          : before.reached.map { ($0 + plan.counts).atMost(before.planned.atLeast(plan.counts)) } ?? before.planned.atLeast(plan.counts)
      } ?? plan.counts
      let applied: WatchStatus.Result = plan.isEmpty && before == nil ? .noChanges : .applied
      // Earlier attempts that wrote nothing (`0 of N applied`) are not said to have written.
      let earlierWrote = (before?.reached?.total ?? 0) > 0
      let byEarlier = before == nil ? "" : plan.isEmpty ? " by an earlier attempt, confirmed now"
        : earlierWrote ? " (with what earlier attempts wrote)" : ""
      // What changed on the watch since the last apply and this one did not write over is still
      // drift (`ApplyOptions.keepsDriftInRecord`): in the status at once — a status saying
      // drift 0 in between ended the drift and its "SOS at risk" alert, raised again by the
      // check that followed, at every publication (fresh-eyes finding) — and reported by a
      // drift check now. A drifted resource the apply wrote elsewhere only (the revision moved
      // Lunch's time, the wearer had switched it off) is still drift too, as the record keeps it.
      // A resource it undid in part is both: what it wrote over, and drift (fresh-eyes fe95 #5).
      let (undid, kept) = plan.splitting(plan.resourceDrift)
      // What it wrote over is said by name, in the log and the status, not only as a count (the
      // wearer's contact removed by a contacts list written as a whole set: fresh-eyes finding);
      // so is a change made on the watch while the apply wrote, not only drift (or nothing) later.
      let said = [undid.isEmpty ? nil : WatchStatus.undidDrift + masked(Reconcile.driftSummary(undid)),
                  changedDuringApply.value].compactMap { $0 }
      let message = said.isEmpty ? nil : said.joined(separator: "; ")
      outlet.log("\(id): revision \(desired.revision) \(applied == .applied ? "applied (+\(counts.add) ~\(counts.change) -\(counts.destroy))" : "already matched")"
                 + byEarlier + (message.map { "; " + $0 } ?? ""))
      keep(desired)
      finish(revision: desired.revision, publication: desired.publication, result: applied, message: message, changes: counts, applied: true,
             content: content, keptDrift: kept)
      if !kept.isEmpty {
        keptDriftUntold = true
        await checkDrift()
      }
    }
    switch outcome {
    case .noChanges(let plan):
      // Its read is not kept by the engine: a drift check reads the watch for the state topic,
      // once per start (later ones come with the periodic checks).
      if reportedFingerprint == nil { driftWanted = true }
      return await succeeded(plan)
    case .applied(let report):
      if let state = report.finalState { self.report(state) }
      // Changed on the watch while the apply wrote (a reminder switched: no listener tells):
      // the record keeps it as drift, told by a drift check now, not at the next interval.
      if !report.changedWhileWriting.isEmpty { driftWanted = true }
      return await succeeded(report.plan)
    case .refusedUnsafe(let plan, _, let pending):
      result = .refused
      if let attribution = Reconcile.attribution(plan, pending: pending, subject: "the revision") { message += " (\(attribution))" }
      message += "; publish it with allow_destroy ('tsapply apply --fleet \(WatchStatus.fleetFilePlaceholder) --auto-approve --allow-destroy', "
        + "\(WatchStatus.fleetFilePlaceholder) the fleet file naming the watch) to apply it"
    case .invalid(let input):
      result = .invalid
      message = input.diagnostics.filter { $0.severity == .error }.prefix(5).map(\.description).joined(separator: "; ")
    case .locked, .retrying: result = .retrying
    case .failed: result = .failed
    }
    let retry = result == .retrying
    // An attempt that got as far as its backup may have written: what it got onto the watch
    // adds to what earlier attempts did, and the revision's changes are those plus what it had
    // left to do.
    var unknown: Int?
    if retry || result == .failed, let error = outcome.error, error.backupPath != nil, let plan = planned.value, !plan.isEmpty {
      let prior = earlier?.reached ?? .zero
      earlier = (prior + Reconcile.reached(plan, failure: error), prior + plan.counts)
      unknown = Reconcile.unknown(plan, failure: error)
    }
    // A refusal writes nothing, but the watch still holds what earlier attempts at the revision
    // wrote: the status says so as a failure's does (`1 of 2 applied`), not that it is untouched.
    // An attempt cut off by the end of the agent's process (`interruptedAttempt`) may have
    // written any of it: not known (fresh-eyes finding: "Nothing was written" for a watch that
    // held half of the revision, written by the killed attempt).
    var progress = retry || result == .failed || result == .refused
      ? earlier.flatMap { earlier in earlier.reached.map { (reached: $0, planned: earlier.planned) } } : nil
    var shown = masked(message, sparing: outcome.error?.backupPath)
    if result == .refused, let progress, progress.reached.total > 0 {
      shown += "; the watch holds what earlier attempts at this revision wrote: \(progress.reached.total) of \(progress.planned.total) applied"
    } else if result == .refused, let earlier, earlier.reached == nil, earlier.planned.total > 0 {
      progress = (reached: .zero, planned: earlier.planned)
      unknown = earlier.planned.total
      shown += "; an earlier attempt at this revision was cut off (the agent's process ended during it): the watch may hold part of "
        + "it (\(earlier.planned.total) of \(earlier.planned.total) not known)"
    }
    if let during = changedDuringApply.value { shown += "; " + during }
    // Stopping, the agent does not try again until it starts again: no time is promised.
    let delay = retry && !outlet.isStopping ? nextRetryDelay() : nil
    if retry, delay == nil { attempts += 1 }
    let retryAt = delay.map { now().addingTimeInterval(Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18) }
    let reachedText = result == .refused ? "" : progress.map { "; \($0.reached.total) of \($0.planned.total) applied" } ?? ""
    outlet.log("\(id): revision \(desired.revision) \(result.rawValue): \(shown)\(reachedText)"
               + (retryAt.map { "; trying again at \(timestamp($0)) (attempt \(attempts + 1))" }
                  ?? (retry ? "; the agent is stopping: it tries again when it starts" : "")))
    // The attempt could not read the watch (out of reach, switched off): the status says so as
    // a failed drift check's does (`unreachable`), so every reader counts the watch out of reach
    // while the agent retries, not by its message's words (fresh-eyes fe95 #4).
    let unread: String? = if case .device? = outcome.error { masked(outcome.error?.description ?? "") } else { nil }
    finish(revision: desired.revision, publication: desired.publication, result: result, message: shown,
           attempt: retry ? attempts : nil, nextRetry: retryAt.map(timestamp), reached: progress, unknown: unknown, unreachable: unread)
    if let delay { scheduleRetry(sequence, after: delay) }
  }

  /// What this agent's last apply to the watch was writing when its process was killed (and,
  /// when that apply ended, what of it reached the watch; `nil` for one that never ended): the
  /// watch's history ends with the `started` entry that apply wrote (made by `command`) before
  /// its first write, and nothing after it. Its writes may have landed, so a first apply after
  /// the restart that finds the watch already matching reports the revision applied with that
  /// apply's counts, not `no-changes` (docs/fleet.md "What an agent does").
  ///
  /// Also when that apply finished and wrote but the agent was killed before it published and
  /// kept its status: the history ends with that apply's entry, and it comes after the last
  /// entry the kept status accounts for (`WatchStatus.historyCounted`); its counts are what
  /// reached the watch. Counted once: a status kept after that entry accounts for it, and a
  /// later start reports what it finds itself.
  private func interruptedAttempt(command: String) -> (reached: PlanCounts?, planned: PlanCounts)? {
    guard let last = (try? watch.history.read())?.entries.last, last.command == command else { return nil }
    let planned = PlanCounts(add: last.add, change: last.change, destroy: last.destroy)
    // An earlier start (or the apply itself) accounted for it — every start after an apply
    // killed mid-way reported that apply's changes "applied by an earlier attempt, confirmed
    // now" again (fresh-eyes finding). By the history's sequence; a status kept by an earlier
    // agent, without it, by time: its `last_applied` at or after the last write, to the second
    // (a kill within the second of the status before was taken as counted).
    if let counted = keptHistoryCounted {
      if last.sequence <= counted { return nil }
    } else if let written = watch.lastWrite()?.date, let known = status?.lastApplied.flatMap(InternetTime.date),
              written.timeIntervalSince1970.rounded(.down) <= known.timeIntervalSince1970 {
      return nil
    }
    if last.result == HistoryEntry.started { return (nil, planned) }
    guard last.wrote, watch.lastWrite() != nil else { return nil }
    return (last.reached ?? planned, planned)
  }

  /// Publishes the status after handling `revision` of `publication` (echoed, so its publisher
  /// knows the status answers it), and an error event when it did not succeed. `message` is
  /// masked already (`masked`); `keptDrift`: after an apply, the drifted resources it did not
  /// write over (still drift); `unreachable`: why the attempt could not read the watch (masked),
  /// kept as the status's `unreachable` (since the first such failure) until a read succeeds.
  private func finish(revision: String, publication: String?, result: WatchStatus.Result, message: String? = nil,
                      changes: PlanCounts? = nil, applied: Bool = false, content: String? = nil, attempt: Int? = nil,
                      nextRetry: String? = nil, reached: (reached: PlanCounts, planned: PlanCounts)? = nil, unknown: Int? = nil,
                      staleDesired: Bool = false, keptDrift: [ResourceChange] = [], unreachable: String? = nil) {
    let time = timestamp(now())
    var next = status ?? WatchStatus(agent: outlet.configuration.agentID, watch: id, device: watch.identity, revision: revision,
                                     result: result, drift: 0, pending: 0)
    next.revision = revision
    next.publication = publication
    next.result = result
    next.message = message
    next.changes = changes
    next.attempt = attempt
    next.nextRetry = nextRetry
    next.reached = reached?.reached
    next.planned = reached?.planned
    next.unknown = unknown.flatMap { $0 > 0 ? $0 : nil }
    next.contentRevision = content
    next.staleDesired = staleDesired ? true : nil
    if let unreachable {
      next.unreachable = unreachable
      next.unreachableSince = next.unreachableSince ?? time
    }
    if applied {
      next.unreachable = nil
      next.unreachableSince = nil
      next.appliedRevision = revision
      // When an apply last wrote to the watch: one that found it matching does not move it.
      next.lastApplied = FleetStatus.lastAppliedTime(watch) ?? next.lastApplied
      next.lastSeen = time
      next.drift = keptDrift.count
      next.driftAddresses = keptDrift.isEmpty ? nil : keptDrift.map { masked($0.address.rawValue) }
      next.sosAtRisk = keptDrift.isEmpty ? nil : keptDrift.putSOSAtRisk
      next.driftSummary = keptDrift.isEmpty ? nil : masked(Reconcile.driftSummary(keptDrift))
      next.pending = 0
    }
    status = next
    publishStatus()
    if !applied { event(.error, message ?? result.rawValue, revision: revision, result: result.rawValue) }
  }

  /// The wait before the next try, counting this failure in `attempts`.
  private func nextRetryDelay() -> Duration {
    defer { attempts += 1 }
    return retryWait(after: attempts)
  }

  /// The agent's wait after `failures` tries in a row failed for a reason that can pass (an
  /// apply, a drift check's read): `retryDelay` (from 5 s, doubling, at most 5 minutes), with
  /// the one backoff's jitter.
  private func retryWait(after failures: Int) -> Duration {
    let (first, longest) = outlet.configuration.retryDelay
    return Backoff(Backoff.Policy(initial: first, maximum: longest)).wait(retry: failures)
  }

  /// Checks for drift again after the agent's retry delay for the `unread`th failed read in a
  /// row (`retryDelay`: from 5 s, doubling, at most 5 minutes, with jitter), once at a time;
  /// not while the agent stops.
  private func scheduleReread() {
    guard !rereadScheduled, !outlet.isStopping else { return }
    rereadScheduled = true
    let delay = retryWait(after: unread)
    unread += 1
    Task { [weak self] in
      try? await Task.sleep(for: delay)
      await self?.reread()
    }
  }

  private func reread() {
    rereadScheduled = false
    guard status?.unreachable != nil else { return }
    requestDriftCheck()
  }

  private func scheduleRetry(_ sequence: Int, after delay: Duration) {
    Task { [weak self] in
      try? await Task.sleep(for: delay)
      await self?.retry(sequence)
    }
  }

  private func retry(_ sequence: Int) {
    guard sequence == newestSequence, newest == nil, status?.result == .retrying else { return }
    newest = (sequence, payload, false)
    kick()
  }

  // MARK: Drift

  private func checkDrift() async {
    // Checked against what the watch was last given: the document being handled when it is the
    // applied one, else the one kept from the last apply — a later document that was refused or
    // failed leaves the watch holding that one, and the wearer's changes must still be seen.
    let candidates = [document.map { ($0, payload) }, kept.map { ($0.document, $0.payload) }].compactMap { $0 }
    guard let applied = status?.appliedRevision, let (desired, bytes) = candidates.first(where: { $0.0.revision == applied }) else { return }
    do {
      let report = try await watch.drift(ManifestDocument(manifest: desired.manifest, bytes: bytes, path: nil))
      guard var next = status else { return }
      let drifted = report.drift.map(\.address.rawValue)
      let message = masked("\(drifted.count) resource\(drifted.count == 1 ? "" : "s") changed on the watch since the last apply: "
                           + Reconcile.driftSummary(report.drift))
      // A drift that changed, also at the same count (a contact removed, then put back
      // otherwise: fresh-eyes finding, the page kept "1 removed"); after a start, the words
      // kept in the status stand for what was said before it (from an earlier agent, which
      // kept none, the count).
      // A drift an apply kept is in the status already, not yet told in an event or the log.
      // Whether it puts SOS at risk is part of what is said: the same words (`emergency (1
      // changed)`) for short names dropped and then a number changed are a new drift event.
      let atRisk = report.drift.putSOSAtRisk
      let summary = masked(Reconcile.driftSummary(report.drift))
      let changed = lastDriftTold.map { drifted.isEmpty || $0.summary != summary || $0.atRisk != atRisk }
        ?? (drifted.count != next.drift || keptDriftUntold)
      keptDriftUntold = false
      lastDriftTold = drifted.isEmpty ? nil : (summary, atRisk)
      // The revision refused as unsafe is the one applied, and the watch holds it again (the
      // wearer undid the change its apply would have undone): nothing is refused any more, and
      // no one is to be told to publish it with allow_destroy (fresh-eyes fe92 D3).
      if next.result == .refused, next.revision == desired.revision, drifted.isEmpty, report.unapplied.isEmpty {
        next.result = .noChanges
        next.message = "the watch holds revision \(desired.revision) again: what made its apply unsafe is gone from the watch"
        next.reached = nil
        next.planned = nil
        outlet.log("\(id): \(next.message ?? "")")
      }
      // A newer revision refused as unsafe while the watch had drifted, and the drift gone now
      // (the wearer undid it): the refused revision is tried again, the engine's safety gate
      // judging it anew — `refused`, with advice to publish it with allow_destroy, stayed, though
      // a plain apply then went through (fresh-eyes fe94 D2).
      let retryRefused = next.result == .refused && next.revision != desired.revision && next.drift > 0 && drifted.isEmpty
        ? document.flatMap { $0.revision == next.revision ? $0 : nil } : nil
      next.drift = drifted.count
      next.driftAddresses = drifted.isEmpty ? nil : drifted.map { masked($0) }
      next.sosAtRisk = drifted.isEmpty ? nil : atRisk
      next.driftSummary = drifted.isEmpty ? nil : summary
      next.pending = report.unapplied.count
      next.lastSeen = timestamp(now())
      next.unreachable = nil
      next.unreachableSince = nil
      unread = 0
      status = next
      publishStatus()
      self.report(report.state)
      if changed, !drifted.isEmpty {
        outlet.log("\(id): drift: \(message)")
        event(.drift, message, revision: desired.revision, addresses: drifted.map { masked($0) }, sosAtRisk: atRisk)
      }
      if let retryRefused {
        outlet.log("\(id): what changed on the watch is gone; trying revision \(retryRefused.revision) again, refused before as unsafe")
        await apply(retryRefused, sequence: newestSequence)
      }
    } catch {
      let reason = masked(error.description)
      outlet.log("\(id): cannot read the watch for drift: \(reason)")
      // Read again soon, with the agent's backoff (as a failed apply is retried), not only at
      // the next periodic check: one failed read (a dropped link) kept a watch `unreachable`
      // for the drift interval, 5 minutes by default (fresh-eyes finding).
      scheduleReread()
      // The status says so (once, and again when the reason changes): its drift and pending
      // are as of the last read, and the watch is not known to be in sync.
      guard var next = status, next.unreachable != reason else { return }
      next.unreachable = reason
      next.unreachableSince = next.unreachableSince ?? timestamp(now())
      status = next
      publishStatus()
    }
  }

  /// Keeps `desired`, just applied (or found matching), in `agent-desired.json` for the next
  /// start (`kept`); a failure to write it is logged once, like the status's.
  private func keep(_ desired: DesiredDocument) {
    kept = (desired, payload)
    do {
      try SecureFile.write(payload, to: watch.home.agentDesiredPath)
    } catch {
      if !statusRecordFailed { outlet.log("\(id): cannot keep the applied document for the next start: \(error)") }
      statusRecordFailed = true
    }
  }

  // MARK: Publishing

  private func publishStatus() {
    guard let status else {
      // No status of this agent's own for the watch (none kept: its state folder is new or was
      // lost, or the watch was just moved to it), and none made yet: one an earlier agent left
      // on the broker says what that agent knew, not what anyone knows now, and so does the
      // state it read. Both taken down (empty retained messages), so the views say the watch is
      // not known until this agent handles a revision (fresh-eyes finding: the watch's SOS
      // switched off, and every view said "in sync", drift 0; `plan --fleet` "No changes").
      if statusOwed {
        statusOwed = false
        for kind in [FleetTopics.Kind.status, .state] {
          outlet.publish(FleetTopics.watch(site: site, watch: id, kind), [], retain: true) { _ in }
        }
      }
      return
    }
    statusOwed = false
    do {
      // The kept copy says how far the history it accounts for goes (`interruptedAttempt`).
      var own = status
      own.historyCounted = watch.history.lastSequence
      try SecureFile.write(own.encoded(), to: watch.home.agentStatusPath)
      statusRecordFailed = false
    } catch {
      if !statusRecordFailed { outlet.log("\(id): cannot keep the status for the next start: \(error)") }
      statusRecordFailed = true
    }
    outlet.publish(FleetTopics.watch(site: site, watch: id, .status), status.encoded(), retain: true) { $0.statuses += 1 }
  }

  /// Forgets which state was last published: the next one read is published, the same or not.
  func forgetReportedState() { reportedFingerprint = nil }

  /// After the agent (re)connected: the watch read at once, its state published again whether it
  /// changed or not, and its status published again — by the drift check, with what the watch
  /// holds now, or, when no check publishes one (nothing applied yet, the watch out of reach
  /// with its reason said before), as it stands. The status kept from before is as of its last
  /// read: the wearer may have changed the watch while the agent was down or the broker away,
  /// and that status published first said "drift 0" between the drift the monitor knew and the
  /// one the check found (an SOS-at-risk alert recovered and raised again: fresh-eyes finding).
  func publishAgain() {
    statusOwed = true
    forgetReportedState()
    requestDriftCheck()
  }

  /// Whether a status is owed since `publishAgain`: published when the work under way ends
  /// without one (`drain`).
  private var statusOwed = false

  /// Publishes `state`, just read from the watch (an apply's verification read-back, a drift
  /// check), retained on the watch's state topic (`ReportedState`) when it differs from the
  /// last one published (their fingerprints compared); nothing otherwise. Holds contacts: never
  /// logged.
  private func report(_ state: DeviceState) {
    let fingerprint = state.fingerprint
    guard fingerprint != reportedFingerprint else { return }
    reportedFingerprint = fingerprint
    let reported = ReportedState(agent: outlet.configuration.agentID, watchID: id, device: watch.identity,
                                 profile: watch.capabilities.profile, readAt: timestamp(now()), state: state)
    outlet.publish(FleetTopics.watch(site: site, watch: id, .state), reported.encoded(), retain: true) { $0.states += 1 }
  }

  /// Publishes a press, timed when it was made where the device says (`DeviceEvent.time`: one
  /// replayed after the agent was down keeps its own time), else now.
  private func sos(_ deviceEvent: DeviceEventID?, pressedAt: Date?) {
    // Heard again: numbered by a start that ended before the broker had its event (so the
    // device's event was never recorded as handled). Published again under its number and id
    // — one press, one id (fresh-eyes finding: numbered anew and delivered twice).
    if let deviceEvent, let known = handled?.press(deviceEvent: deviceEvent.rawValue) {
      outlet.log("\(id): SOS: the press \(known.id) heard again (the broker had not acknowledged it); publishing it again")
      publishEvent(sosEvent(id: known.id, sequence: known.sequence, time: known.time)) { [weak self] in
        Task { await self?.record(deviceEvent, sequence: nil) }
      }
      publishRecentSOS()
      return
    }
    let press: (sequence: Int, id: String)? = handled?.nextSOS()
    let (sequence, pressID) = (press?.sequence ?? 0, press?.id)
    outlet.log("\(id): SOS: the wearer pressed SOS" + (pressID.map { " (\($0))" } ?? ""))
    let number = pressID == nil ? nil : sequence
    // To the millisecond, as the watch (or its bridge) recorded it (docs/monitor.md "Events";
    // fresh-eyes finding: over MQTT a press's time lost its milliseconds).
    let time = InternetTime.text(pressedAt ?? now())
    if handled != nil, let pressID, let number {
      // The press's number is used from now on, and the press kept for the retained list; the
      // device's event is recorded as handled only once the broker has the SOS, so one never
      // sent is replayed by the next start.
      record(nil, sequence: number, press: HandledEvents.Press(id: pressID, sequence: number, time: time, deviceEvent: deviceEvent?.rawValue))
    }
    publishEvent(sosEvent(id: pressID, sequence: number, time: time)) { [weak self] in
      Task { await self?.record(deviceEvent, sequence: nil) }
    }
    // After the event, on the same connection: a monitor connected now has the event first.
    publishRecentSOS()
  }

  /// The `sos` event of the press `id` (number `sequence`, pressed at `time`).
  private func sosEvent(id pressID: String?, sequence: Int?, time: String) -> FleetEvent {
    var event = FleetEvent(agent: outlet.configuration.agentID, watch: id, kind: .sos, time: time, message: "the wearer pressed SOS")
    event.id = pressID
    event.sequence = sequence
    event.profile = watch.capabilities.profile
    return event
  }

  /// Text that may quote a contact (a diagnostic, an engine error, a custom reminder's name in
  /// an address) with its phone-like runs masked, all but what tsapply wrote itself
  /// (`PhoneRedaction.redactPhoneLikeSparingOwn`) and `spared` (the backup path of a failed
  /// apply, which restoring the watch needs whole).
  private func masked(_ text: String, sparing spared: String? = nil) -> String {
    PhoneRedaction.redactPhoneLike(text, sparing: spared)
  }

  /// Publishes an event; `message` is masked already (`masked`).
  private func event(_ kind: FleetEvent.Kind, _ message: String, revision: String? = nil, result: String? = nil, addresses: [String]? = nil,
                     sosAtRisk: Bool? = nil) {
    var event = FleetEvent(agent: outlet.configuration.agentID, watch: id, kind: kind, time: InternetTime.text(now()), message: message,
                           revision: revision)
    event.result = result
    event.addresses = addresses
    event.sosAtRisk = sosAtRisk
    publishEvent(event)
  }

  /// Publishes `event` on the watch's events topic (not retained); `acknowledged` runs once the
  /// broker has it.
  private func publishEvent(_ event: FleetEvent, acknowledged: (@Sendable () -> Void)? = nil) {
    outlet.publish(FleetTopics.watch(site: site, watch: id, .events), event.encoded(), retain: false,
                   count: { $0.events += 1 }, acknowledged: acknowledged)
  }

  /// The text `key` (`revision`, `publication`) of a document that could not be read, when it
  /// has one, cut to 128 characters.
  private static func text(_ key: String, in payload: [UInt8]) -> String? {
    guard let object = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any],
          let text = object[key] as? String else { return nil }
    return String(text.prefix(128))
  }
}
