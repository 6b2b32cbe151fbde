import Foundation
import TSEngine
import TSModel
import TSMQTT
import TSPlan

/// A site as the broker holds it: the agents' retained statuses and presence (and, when asked,
/// the desired documents' revisions and the watches' reported states), kept current while
/// connected, and the way to publish desired documents. Used by `tsapply apply|plan|drift|status
/// --fleet` for a fleet with `transport: mqtt://…`.
public final class FleetBrokerView: @unchecked Sendable {
  /// The site.
  public let site: String
  private let lock = NSLock()
  private var statusByWatch: [String: (status: WatchStatus, received: ContinuousClock.Instant)] = [:]
  /// Each agent's presence as the broker holds it (read through `judged`).
  private var agentByID: [String: AgentState] = [:]
  /// The agents whose presence says online since before the broker started (`BrokerRestart.stale`),
  /// worked out as presences and the broker's uptime arrive.
  private var stale: Set<String> = []
  private var desiredByWatch: [String: String] = [:]
  private var stateByWatch: [String: ReportedState] = [:]
  /// The agent that announced each watch (the first by ID when several did).
  private var announcer: [String: String] = [:]
  /// When the broker started, from its `$SYS/broker/uptime` (`nil`: not told, e.g. `sys_interval 0`
  /// or an ACL that does not let this user read it).
  private var brokerStarted: Date?
  private var synced = false
  /// Counts the messages taken in, so a wait looks again only when something came.
  private var version = 0
  /// Times the client connected (and subscribed): more than 1 after a reconnection.
  private var readies = 0
  /// Whether the view reads the desired documents (`desiredRevisions`).
  public let readsDesired: Bool
  /// Whether the view reads the watches' states as their agents last read them (`reportedStates`).
  public let readsStates: Bool
  private var client: MQTTClient?
  private let syncTopic: String

  /// A view of `site` through `settings`; `connect` starts it. With `desired`, it also reads
  /// the revision of every desired document on the broker (`desiredRevisions`), to tell a watch
  /// whose agent is still applying one. With `states`, it also reads every watch's state as
  /// its agent last read it (`reportedStates`, `plan --fleet`): contacts, so only a reader
  /// the broker's ACL lets read them asks for it.
  /// - Throws: `MQTTError` when the client cannot be made.
  public init(settings: BrokerSettings, site: String, desired: Bool = false, states: Bool = false,
              clientID: String = "tsapply-\(getpid())-\(UInt32.random(in: 0...UInt32.max))") throws(MQTTError) {
    self.site = site
    readsDesired = desired
    readsStates = states
    syncTopic = "\(FleetTopics.root)/\(site)/sync/\(clientID)"
    let filters = [BrokerRestart.uptimeTopic, FleetTopics.every(.status, site: site), FleetTopics.everyAgent(site: site)]
      + (desired ? [FleetTopics.every(.desired, site: site)] : []) + (states ? [FleetTopics.every(.state, site: site)] : [])
    // QoS 0, the marker's too (see `connect`).
    let configuration = try settings.configuration(clientID: clientID, cleanSession: true, subscriptions: filters + [syncTopic],
                                               subscriptionQoS: 0)
    client = try MQTTClient(address: settings.address, configuration: configuration,
                            onMessage: { [weak self] message in self?.received(message) },
                            onConnection: { [weak self] event in
                              guard case .ready = event, let self else { return }
                              self.lock.withLock {
                                self.readies += 1
                                self.version += 1
                              }
                            })
  }

  /// Times the view connected to the broker: more than 1 once it reconnected (the broker
  /// restarted, or the network dropped) — after which the broker may no longer hold what it
  /// held (a broker without persistence loses every retained message).
  public var connections: Int { lock.withLock { readies } }

  /// Connects and waits until every retained status and presence has arrived (the view is
  /// complete), by this completion rule: the view subscribes with QoS 0, so Mosquitto hands it
  /// every retained message of its filters in order, all at once, before the subscription's
  /// acknowledgement leaves (QoS 0 has no in-flight window to wait behind); a marker the view
  /// publishes at QoS 0 to itself after that acknowledgement takes the same queue, behind them.
  /// A marker is dropped (not reordered) when that queue holds `max_queued_messages` packets, so
  /// one is published again every 250 ms until one comes back. (A QoS 1 subscription would get
  /// 20 retained messages at a time, the rest queued up to `max_queued_messages` and dropped
  /// beyond; a QoS 0 marker would overtake the queued ones.)
  /// - Throws: `MQTTError` when the broker cannot be reached or refuses within `timeout`;
  ///   `.timedOut` saying the view is incomplete when no marker came back within `timeout`.
  public func connect(within timeout: Duration) async throws(MQTTError) {
    guard let client else { return }
    client.connect()
    let start = ContinuousClock.now, deadline = start + timeout
    try await client.ready(within: timeout)
    var nextMarker = ContinuousClock.now
    while !isSynced {
      let now = ContinuousClock.now
      if now >= deadline {
        let (statuses, agents) = (self.statuses.count, self.agents.count)
        throw .timedOut("waiting for the end of the broker's retained statuses: the view of site \(site) is incomplete "
          + "(\(statuses) status\(statuses == 1 ? "" : "es") and \(agents) agent\(agents == 1 ? "" : "s") received in \(Int((now - start).seconds))s); "
          + "nothing was concluded from it. The view ends when its own marker on \(syncTopic) comes back: a broker whose ACL does not "
          + "let this user write and read \(FleetTopics.root)/\(site)/sync/# never returns it (docs/fleet.md \"Security\")")
      }
      if now >= nextMarker {
        try? await client.publish(syncTopic, payload: Array("sync".utf8), qos: 0)
        nextMarker = now + .milliseconds(250)
      }
      try? await Task.sleep(for: .milliseconds(10))
    }
  }

  /// Disconnects.
  public func close() async { await client?.close() }

  /// Publishes `document` for the watch `watchID` (retained, QoS 1), waiting for the broker's
  /// acknowledgement.
  public func publish(_ document: DesiredDocument, watchID: String) async throws(MQTTError) {
    try await client?.publish(FleetTopics.watch(site: site, watch: watchID, .desired), payload: document.encoded(), qos: 1, retain: true)
  }

  /// The newest status of every watch that has one, and when it arrived.
  public var statuses: [String: (status: WatchStatus, received: ContinuousClock.Instant)] {
    lock.lock()
    defer { lock.unlock() }
    return statusByWatch
  }

  /// What to say of watch `id` when no online agent serves it although its last status came
  /// from an online one (`FleetStatus.unservedNote`: that agent no longer announces it); `nil`
  /// when one serves it, or its agent is offline or unknown.
  public func unservedNote(_ id: String) -> String? {
    lock.lock()
    defer { lock.unlock() }
    guard let status = statusByWatch[id]?.status, let agent = agentByID[status.agent].map(judged), agent.online else { return nil }
    return FleetStatus.unservedNote(id, status: status, announced: agent.watches, servers: serving(id))
  }

  /// What to say of watch `id` when its last status came from an agent that no longer serves it
  /// while other online agents do (`FleetStatus.movedNote`), with those agents; `nil` otherwise.
  public func movedNote(_ id: String) -> (note: String, servers: [String])? {
    lock.lock()
    defer { lock.unlock() }
    guard let status = statusByWatch[id]?.status else { return nil }
    let agent = agentByID[status.agent].map(judged)
    let servers = serving(id).filter { $0 != status.agent }
    return FleetStatus.movedNote(id, status: status, statusAgentOnline: agent?.online, announced: agent?.watches, servers: servers).map { ($0, servers) }
  }

  /// The online agents that announce serving watch `id`, sorted: more than one is a
  /// misconfiguration (`FleetSiteStatus.servedByMany`), each of them applying what it is handed.
  public func servers(of id: String) -> [String] { lock.withLock { serving(id) } }

  /// `servers(of:)`, the caller holding `lock`.
  private func serving(_ id: String) -> [String] {
    agentByID.values.map(judged).filter { $0.online && $0.watches.contains(id) }.map(\.agent).sorted()
  }

  /// Why agent `id` is taken as offline although its presence on the broker says online: the
  /// broker restarted (from a save that kept the presence) and the agent has not connected since
  /// (`BrokerRestart`); `nil` otherwise.
  public func presenceNote(_ id: String) -> String? {
    lock.withLock { agentByID[id].flatMap { BrokerRestart.stale($0, brokerStarted: brokerStarted) } }
  }

  /// The presence of every agent of the site (one kept by a restarted broker from before it
  /// restarted, its agent not connected since, as offline: `presenceNote`).
  public var agents: [String: AgentState] {
    lock.lock()
    defer { lock.unlock() }
    return agentByID.mapValues(judged)
  }

  /// The revision of the desired document on the broker for each watch that has one (read
  /// only by a view made with `desired`).
  public var desiredRevisions: [String: String] {
    lock.lock()
    defer { lock.unlock() }
    return desiredByWatch
  }

  /// The state of each watch whose agent reported one, as it last read it (only in a view
  /// made with `states`), by watch ID.
  public var reportedStates: [String: ReportedState] {
    lock.lock()
    defer { lock.unlock() }
    return stateByWatch
  }

  /// Calls `settled` (with the time) while the view stays current — within 20 ms of a message
  /// that changed it, else once a second (for what depends on the time alone) — until it
  /// returns `true` or has been called at or after `deadline`: the one wait of `apply --fleet
  /// --wait` and `status --fleet --wait`. (Looking every 20 ms whatever came cost `status
  /// --fleet --wait` a third of a core over 300 watches: fresh-eyes finding.) Once `stop` is
  /// requested (Ctrl-C), `settled` is called at once and the wait ends as at its deadline:
  /// `settled` asks `stop` too.
  public func wait(until deadline: ContinuousClock.Instant, stop: any StopRequest = NoStopRequest(),
                   settled: (ContinuousClock.Instant) -> Bool) async {
    var seen: Int?
    var looked = ContinuousClock.now
    while true {
      let now = ContinuousClock.now
      let current = lock.withLock { version }
      if current != seen || now - looked >= .seconds(1) || now >= deadline || stop.isRequested {
        (seen, looked) = (current, now)
        if settled(now) || now >= deadline { return }
      }
      try? await Task.sleep(for: .milliseconds(20))
    }
  }

  /// The agent serving `watchID`: the one its status names, else one that announced it.
  public func agent(serving watchID: String) -> AgentState? {
    lock.lock()
    defer { lock.unlock() }
    if let named = statusByWatch[watchID]?.status.agent, let agent = agentByID[named] { return judged(agent) }
    return announcer[watchID].flatMap { agentByID[$0] }.map(judged)
  }

  private var isSynced: Bool {
    lock.lock()
    defer { lock.unlock() }
    return synced
  }

  private func received(_ message: MQTTClient.Message) {
    let now = ContinuousClock.now
    lock.lock()
    defer { lock.unlock() }
    version += 1
    if message.topic == syncTopic {
      synced = true
    } else if message.topic == BrokerRestart.uptimeTopic {
      brokerStarted = BrokerRestart.started(uptime: message.payload, now: Date())
      stale = Set(agentByID.filter { BrokerRestart.stale($0.value, brokerStarted: brokerStarted) != nil }.keys)
    } else if let (topicSite, watch, kind) = FleetTopics.parseWatch(message.topic), topicSite == site, kind == .status,
              message.payload.isEmpty {
      // Taken down by its agent, which holds no status of its own for the watch (`FleetAgent`).
      statusByWatch[watch] = nil
    } else if let (topicSite, watch, kind) = FleetTopics.parseWatch(message.topic), topicSite == site, kind == .status,
              let status = WatchStatus.decode(message.payload), status.watch == watch {
      // A retained status delivered again (the view resubscribed after a reconnection) is as
      // old as when it first came.
      if !message.retained || statusByWatch[watch]?.status != status { statusByWatch[watch] = (status, now) }
    } else if let (topicSite, watch, kind) = FleetTopics.parseWatch(message.topic), topicSite == site, kind == .desired {
      // Only the revision is needed here: the document itself is the agent's to read.
      let object = try? JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any]
      desiredByWatch[watch] = object?["revision"] as? String
    } else if let (topicSite, watch, kind) = FleetTopics.parseWatch(message.topic), topicSite == site, kind == .state {
      // A report that is not one (another format, another watch's) is left out: the watch is
      // planned as without a report.
      let report = ReportedState.decode(message.payload)
      stateByWatch[watch] = report?.watchID == watch ? report : nil
    } else if let id = FleetTopics.parseAgent(message.topic), let state = AgentState.decode(message.payload), state.agent == id {
      agentByID[id] = state
      if BrokerRestart.stale(state, brokerStarted: brokerStarted) != nil { stale.insert(id) } else { stale.remove(id) }
      for watch in state.watches where announcer[watch].map({ id < $0 || agentByID[$0] == nil }) ?? true {
        announcer[watch] = id
      }
    }
  }

  /// `state` as the view takes it: offline when it says online from before the broker
  /// started (`BrokerRestart.stale`; the lock held).
  private func judged(_ state: AgentState) -> AgentState {
    guard stale.contains(state.agent) else { return state }
    var offline = state
    offline.online = false
    return offline
  }
}

/// An agent's presence kept by a broker that restarted from a save (`persistence true`): the
/// broker restores the retained "online" and the agent's session, but not its connection, so
/// an agent that died meanwhile never gets its Last Will sent, and its presence says online for
/// good (fresh-eyes finding: `status --fleet` "in sync", exit 0, for watches changed since,
/// their agent dead). Mosquitto publishes its uptime, retained (`$SYS/broker/uptime`, "N
/// seconds", every `sys_interval`, default 10 s): a presence that says the agent connected
/// before the broker started, by more than `slack`, was not made on this broker's run.
enum BrokerRestart {
  static let uptimeTopic = "$SYS/broker/uptime"
  /// What the comparison allows for: the uptime's age (up to `sys_interval`, 10 s by default)
  /// and 2 s of the agent's clock against this one. An agent that connected less than that
  /// before the broker went down is not told from a live one (fresh-eyes finding: with 30 s, a
  /// crash 12 s after the agents reconnected left a dead one "online").
  static let slack: TimeInterval = 12

  /// When the broker started, from its uptime message (`"N seconds"`) received at `now`.
  static func started(uptime payload: [UInt8], now: Date) -> Date? {
    guard let text = String(bytes: payload, encoding: .utf8), let first = text.split(separator: " ").first,
          let seconds = TimeInterval(first), seconds >= 0 else { return nil }
    return now.addingTimeInterval(-seconds)
  }

  /// The words why `state` is taken as offline: it says online since before the broker started;
  /// `nil` when it is not so (or nothing says when either happened).
  static func stale(_ state: AgentState, brokerStarted: Date?) -> String? {
    guard state.online, let brokerStarted, let since = state.since.flatMap(InternetTime.date),
          since < brokerStarted.addingTimeInterval(-slack) else { return nil }
    return "its presence says online since \(InternetTime.text(since)), kept by the broker from before it restarted at "
      + "\(InternetTime.text(brokerStarted)); it has not connected since, and a broker restored from a save sends no Last Will for it"
  }
}

/// `tsapply apply --fleet` over MQTT: publish each watch's desired document, then wait (at most
/// `wait`) until every watch's agent answers it (`answer`: a status naming this publication, for
/// an agent that announces publications) with the revision applied or an error. A watch whose
/// agent is offline when the publication begins, or that no agent serves, is waited for during
/// `offlineGrace(wait)` (a broker restarted just before publishes the agents' Last Wills; they
/// reconnect seconds later), then pending, not failed: its agent applies the retained document
/// when it connects. The wait rides out the
/// infrastructure: an agent that goes offline during it (a broker restart publishes every
/// agent's Last Will) is waited for until the deadline, the view reconnects by itself, and a
/// watch whose agent is `retrying` is waited for; still retrying at the deadline, it is
/// `retrying`, which counts against the exit status.
public enum FleetPublication {
  /// Publishes the desired documents of `members` and waits for their statuses; one report
  /// row per member, in order. Once `stop` is requested (Ctrl-C after the documents are
  /// published), the wait ends as at its deadline: each watch as its agent reported it so far,
  /// the rest `pending` ("… when the run was interrupted"; their agents apply them).
  /// - Throws: `MQTTError` when the broker cannot be reached or refuses the publisher.
  public static func apply(_ members: [FleetMember], site: String, settings: BrokerSettings, allowDestroy: Bool, wait: Duration,
                           stop: any StopRequest = NoStopRequest(),
                           progress: @escaping @Sendable (FleetProgress) -> Void = { _ in }) async throws(MQTTError) -> [FleetWatchReport] {
    let view = try FleetBrokerView(settings: settings, site: site)
    let start = ContinuousClock.now
    // Connecting (and seeing the site) is not part of the wait: `--wait 0s` publishes and
    // reports without waiting for statuses, so a connection gets 30 s whatever the wait (a
    // loaded broker or machine can take more than 10 s to hand over a large site's statuses).
    try await view.connect(within: .seconds(30))
    // One publication per run (and so per rollout wave), named only in the documents of watches
    // whose agent announces it reads it (an older agent refuses a key it does not know).
    let publication = DesiredDocument.newPublication()
    var desired: [Int: DesiredDocument] = [:]
    for (index, member) in members.enumerated() {
      if case .success(let document) = member.document {
        let id = member.watch.watchID
        desired[index] = DesiredDocument(manifest: document.manifest, allowDestroy: allowDestroy, watch: member.name, watchID: id,
                                         publication: view.agent(serving: id)?.announces(.publication) == true ? publication : nil)
      }
    }
    // The revision each agent was on before this run published: a status for another one after
    // the publication is another publisher's (`replaced`).
    let revisionsBefore = view.statuses.mapValues(\.status.revision)
    let publishedAt = ContinuousClock.now
    // An agent offline now gets its documents when it connects. It may be about to: a broker
    // restarted just before (between a rollout's waves) has published every agent's Last Will,
    // and the agents reconnect a moment after it is back. So its watches (and those no agent has
    // announced yet) are waited for during a grace, `offlineGrace(wait)`, and pending after it.
    // One online now that goes offline during the wait may be back before the deadline — a
    // broker that stops publishes every agent's Last Will, and the agents reconnect to it when
    // it is back (the view reconnects too) — so its watches are waited for.
    let onlineAtStart = Set(view.agents.values.filter(\.online).map(\.agent))
    let graceEnd = start + offlineGrace(wait)
    let graceText = offlineGrace(wait) > .zero ? " (waited for \(DurationText.text(offlineGrace(wait))))" : ""
    let published: [Int: MQTTError] = await withTaskGroup(of: (Int, MQTTError?).self) { group in
      for (index, document) in desired {
        let id = members[index].watch.watchID
        group.addTask {
          do throws(MQTTError) {
            try await view.publish(document, watchID: id)
            return (index, nil)
          } catch {
            return (index, error)
          }
        }
      }
      var failures: [Int: MQTTError] = [:]
      for await (index, error) in group { if let error { failures[index] = error } }
      return failures
    }
    let deadline = start + wait
    // The broker restarted during the wait (the view connected again): one without persistence
    // lost the documents this run published. Those it no longer holds are published again
    // (never over another publisher's), so the agents get them when they reconnect — not
    // reported pending "when it can" while nothing would ever apply them (fresh-eyes finding).
    var connectionsSeen = view.connections
    let restoring = Locked(false), restored = Locked(0), lost = Locked<[Int: String]>([:])
    var rows: [Int: FleetWatchReport] = [:]
    for (index, member) in members.enumerated() {
      if case .failure(let problem) = member.document {
        rows[index] = FleetWatchReport(name: member.name, device: member.device, verdict: .failed(problem.description), elapsed: .zero)
      } else if let error = published[index] {
        rows[index] = FleetWatchReport(name: member.name, device: member.device, verdict: .failed("cannot publish: \(error)"), elapsed: .zero)
      }
    }
    await view.wait(until: deadline, stop: stop) { now in
      let statuses = view.statuses
      var waiting: [String] = []
      // Interrupted: the wait ends now, as at its deadline (and any grace with it).
      let interrupted = stop.isRequested && now < deadline
      let ending = now >= deadline || interrupted
      let graceText = now >= graceEnd ? graceText : ""
      let ended: WaitEnd = interrupted ? .interrupted : .deadline(wait)
      if view.connections > connectionsSeen, !restoring.value {
        connectionsSeen = view.connections
        restoring.set(true)
        // Every document this run published, answered or not: one the broker lost is not handed
        // to an agent that restarts, and `status --fleet` says the broker holds none (fresh-eyes
        // finding: exit 0, then "no desired document" for the watches answered before the restart).
        let ours = desired.filter { published[$0.key] == nil }.map { (index: $0.key, id: members[$0.key].watch.watchID, document: $0.value) }
        Task {
          await republishLost(ours, view: view, settings: settings, site: site, restored: restored, lost: lost)
          restoring.set(false)
        }
      }
      for (index, document) in desired.sorted(by: { $0.key < $1.key }) where rows[index] == nil {
        let member = members[index], id = member.watch.watchID
        var details: [String: JSONValue] = ["watch_id": .string(id), "revision": .string(document.revision)]
        if let publication = document.publication { details["publication"] = .string(publication) }
        if let (status, received) = statuses[id], let outcome = answer(status, received: received, to: document, publishedAt: publishedAt) {
          // An applied revision's words (what it undid, a change made during it) are its note;
          // so is drift it leaves on the watch, a change of the wearer's it does not set
          // (fresh-eyes fe95 #7: "applied", and no word of a reminder still switched off).
          switch outcome {
          case .applied, .noChanges:
            let note = [status.message, status.driftNote.map { "still drift, which the revision does not set: " + $0 }].compactMap { $0 }
            if !note.isEmpty { details["note"] = .string(note.joined(separator: "; ")) }
          default: break
          }
          rows[index] = FleetWatchReport(name: member.name, device: member.device, verdict: outcome,
                                         elapsed: max(.zero, received - start), details: details.merging(["status": json(status)]) { a, _ in a })
          rows[index]?.reached = status.reachedText
          rows[index]?.partlyApplied = status.partlyApplied
          rows[index]?.outcomeUnknown = status.outcomeUnknown
        } else if let agent = view.agent(serving: id), !agent.online, !onlineAtStart.contains(agent.agent) {
          guard now >= graceEnd || ending else { waiting.append(member.name); continue }
          // Its agent's last status says the watch holds this revision, settled: nothing to
          // apply as of that status, but what the watch holds since is not known — the wearer
          // may have changed it, and the agent applies the revision again when it connects — so
          // `not known`, never `no changes` and exit 0 (fresh-eyes finding: the agent then undid
          // a wearer's contact). Not a failure that stops a rollout (it counted r01 failed while
          // listing it with the revision).
          let held = statuses[id].map { $0.status.isSettled && $0.status.appliedRevision == document.revision } ?? false
          rows[index] = FleetWatchReport(name: member.name, device: member.device,
                                         verdict: held ? .unknown(Self.heldNote(document.revision, agent: agent.agent, status: statuses[id]?.status))
                                           : .pending("agent \(agent.agent) is offline\(graceText); it applies revision \(document.revision) when it connects"),
                                         elapsed: now - start, details: details)
        } else if let unserved = view.unservedNote(id) {
          // Its agent online and no longer announcing it, no other agent announcing it: nobody
          // applies this revision (fresh-eyes finding: "pending … it applies revision … when it
          // can", exit 0, for a watch with SOS off that nothing would ever write to).
          guard now >= graceEnd || ending else { waiting.append(member.name); continue }
          rows[index] = FleetWatchReport(name: member.name, device: member.device,
                                         verdict: .failed("not applied: \(unserved); the first agent given it applies revision \(document.revision)"),
                                         elapsed: now - start, details: details)
        } else if view.agent(serving: id) == nil {
          guard now >= graceEnd || ending else { waiting.append(member.name); continue }
          rows[index] = FleetWatchReport(name: member.name, device: member.device,
                                         verdict: .pending("no agent has announced the watch \(id)\(graceText); the first to serve it applies revision \(document.revision)"),
                                         elapsed: now - start, details: details)
        } else if let why = lost.value[index] {
          rows[index] = FleetWatchReport(name: member.name, device: member.device, verdict: .failed(why), elapsed: now - start, details: details)
        } else if ending {
          let status = statuses[id]?.status
          // The agent went on to another publisher's revision after this run's and stayed there.
          let taken = statuses[id].flatMap { replaced($0.status, received: $0.received, document: document, publishedAt: publishedAt, before: revisionsBefore[id]) }
          rows[index] = FleetWatchReport(name: member.name, device: member.device,
                                         verdict: taken.map(FleetVerdict.pending) ?? unfinished(status, agent: view.agent(serving: id), document: document, ended: ended),
                                         elapsed: now - start, details: details.merging(status.map { ["status": json($0)] } ?? [:]) { a, _ in a })
          // What of this revision reached the watch (`1 of 2 applied`), not `-`, as over direct watches.
          let answered = status.map { $0.answers(document.revision, publication: document.publication) } ?? false
          if let status, answered {
            rows[index]?.reached = status.reachedText
            rows[index]?.partlyApplied = status.partlyApplied
            rows[index]?.outcomeUnknown = status.outcomeUnknown
          }
          // Its agent went offline during the wait without saying what it reached (killed in
          // the middle of an apply): the watch may hold part of the revision, and nothing says
          // it does not (a status saying `0 of N applied` does).
          if let agent = view.agent(serving: id), !agent.online, !(answered && status?.reached != nil) {
            rows[index]?.mayHoldPart = true
            // Said on its own line too, not only in the summary (fresh-eyes finding: an aborted
            // canary's lines read only "pending … when it connects").
            if let verdict = rows[index]?.verdict {
              rows[index]?.verdict = verdict.mappingReason { reason in
                reason.contains("may hold part") ? reason : reason + "; the watch may hold part of the revision (its agent went away without saying what it reached)"
              }
            }
          }
        } else {
          waiting.append(member.name)
        }
      }
      // Who holds the wait up: agents offline now that serve watches still waited for.
      var offline: [String: [String]] = [:]
      for (index, member) in members.enumerated() where rows[index] == nil && waiting.contains(member.name) {
        if let agent = view.agent(serving: member.watch.watchID), !agent.online { offline[agent.agent, default: []].append(member.name) }
      }
      var notes = offline.sorted { $0.key < $1.key }.map { agent, names in
        "agent \(agent) is offline (serving \(names.prefix(3).joined(separator: ", "))\(names.count > 3 ? ", +\(names.count - 3) more" : ""))"
      }
      let again = restored.value
      if again > 0 {
        notes.append("the broker lost the desired documents of \(again) watch\(again == 1 ? "" : "es") (restarted without persistence): published again")
      }
      let note = notes.isEmpty ? nil : notes.joined(separator: "; ")
      progress(FleetProgress(done: rows.count, total: members.count, running: waiting, note: note))
      // Not done while this run's documents are being published again: the view must stay open.
      return waiting.isEmpty && !restoring.value
    }
    // A watch two online agents serve: its status is whichever spoke last, about whichever watch
    // it reads, so what it holds is not known (fresh-eyes fe100: "applied", exit 0, while
    // `status --fleet` said it was served twice).
    for (index, member) in members.enumerated() where desired[index] != nil {
      let servers = view.servers(of: member.watch.watchID)
      guard servers.count > 1, let row = rows[index], !row.verdict.isFailure else { continue }
      rows[index]?.verdict = .unknown(FleetSiteStatus.servedByManyNote(servers) + "; its report was "
                                      + (row.verdict.word) + " from whichever of them spoke last")
    }
    await view.close()
    return (0..<members.count).map { rows[$0]! }
  }

  /// After the view connected again: reads which desired documents the broker holds now (a
  /// view of its own, `desired`), and publishes again each of `unanswered` (this run's) it no longer holds
  /// (one another publisher replaced is left as it is), counting them in `restored`; one that
  /// cannot be published again goes in `lost`, with what to say of it. A broker that cannot be
  /// read now leaves everything as it was (the next reconnection looks again).
  static func republishLost(_ unanswered: [(index: Int, id: String, document: DesiredDocument)], view: FleetBrokerView, settings: BrokerSettings,
                            site: String, restored: Locked<Int>, lost: Locked<[Int: String]>) async {
    guard !unanswered.isEmpty, let reader = try? FleetBrokerView(settings: settings, site: site, desired: true) else { return }
    let read: Bool
    do {
      try await reader.connect(within: .seconds(30))
      read = true
    } catch {
      read = false
    }
    let held = reader.desiredRevisions
    await reader.close()
    guard read else { return }
    for (index, id, document) in unanswered where held[id] == nil {
      do {
        try await view.publish(document, watchID: id)
        restored.mutate { $0 += 1 }
      } catch {
        lost.mutate {
          $0[index] = "not applied: the broker lost the desired document of revision \(document.revision) (restarted without persistence) and it "
            + "could not be published again (\(error)); nothing will apply it — publish again with 'tsapply apply --fleet'"
        }
      }
    }
  }

  /// How long a watch whose agent is offline when the publication begins (or that no agent has
  /// announced) is waited for before it is pending: `wait`, at most 30 s — long enough for the
  /// agents to reconnect after a broker restart (their first retry comes within seconds), short
  /// enough that an agent known to be off does not hold every apply for the whole `--wait`.
  public static func offlineGrace(_ wait: Duration) -> Duration { min(wait, .seconds(30)) }

  /// What `apply --fleet` says of a watch whose agent is offline and whose last status says it
  /// holds `revision`, settled: so it was when the agent last read it, and what it holds since
  /// is not known — the wearer may have changed it meanwhile (fresh-eyes finding: "no changes"
  /// alone, exit 0, for a watch whose emergency list was cleared while its agent was down).
  static func heldNote(_ revision: String, agent: String, status: WatchStatus?) -> String {
    "holds revision \(revision) as agent \(agent) last reported" + (status?.lastSeen.map { " (read at \($0))" } ?? "")
      + " before it went offline; what the watch holds since is not known until the agent connects, checks it and applies the revision again"
  }

  /// The verdict `status` (received at `received`) gives the watch published `document` at
  /// `publishedAt`, or `nil` while it is no answer to it yet. The rule (docs/fleet.md "`apply`, `plan`, `drift`
  /// and `status` over MQTT", which status answers):
  ///
  /// - A document with a publication is answered only by a final status (`isFinal`) naming that
  ///   publication: every other status (an older run's answer for the same revision, a status
  ///   from before, one for another revision the agent is still on) is not this run's, however
  ///   recent.
  /// - A document without one (its agent does not announce `AgentState.Feature.publication`): a
  ///   final status for its revision that came after the publication began, or, kept from before
  ///   (every retained one has arrived: `FleetBrokerView.connect` synchronised), one the agent
  ///   will not act on again (settled: `no changes`; refused, invalid). This guesses: such a
  ///   status can answer an earlier publication.
  static func answer(_ status: WatchStatus, received: ContinuousClock.Instant, to document: DesiredDocument,
                     publishedAt: ContinuousClock.Instant) -> FleetVerdict? {
    guard status.answers(document.revision, publication: document.publication), status.isFinal else { return nil }
    if document.publication != nil { return verdict(status) }
    guard received >= publishedAt || !status.wantsAnotherApply else { return nil }
    // Settled at this revision before it was published again: nothing for the agent to do.
    return received < publishedAt && status.isSettled ? .noChanges : verdict(status)
  }

  /// What a watch is waiting for when the agent's last status when the wait ended (`status`,
  /// received at `received`) is a final one for a revision that is neither this run's nor the
  /// one it reported before this run published (`before`): another publisher's. When that one
  /// was published after this run's (a second admin's `apply --fleet` at the same time), this
  /// run's will never be applied (the broker keeps one desired document per watch; the last
  /// published wins); when just before, the agent takes this run's next. The words say both,
  /// since this run cannot tell which. `nil` otherwise.
  static func replaced(_ status: WatchStatus, received: ContinuousClock.Instant, document: DesiredDocument,
                       publishedAt: ContinuousClock.Instant, before: String?) -> String? {
    guard received >= publishedAt, status.isFinal, status.revision != document.revision, status.revision != before else { return nil }
    return "agent \(status.agent) applied revision \(status.revision), another publisher's, after this run published \(document.revision), and had not "
      + "taken \(document.revision) when the wait ended: the broker keeps one desired document per watch, so if \(status.revision) was published after "
      + "\(document.revision) (another 'tsapply apply --fleet' at the same time), \(document.revision) will not be applied unless it is published again; "
      + "'tsapply status --fleet' says which revision the watch is held to"
  }

  /// The verdict of a watch whose agent had not answered `document` when the wait of `wait`
  /// ended: `retrying` when its status says the agent is retrying it, else pending.
  /// An agent offline then is not trying: the watch is pending (it may hold part of the
  /// revision, when the agent had begun), whatever its last status said of a next try.
  static func unfinished(_ status: WatchStatus?, agent: AgentState?, document: DesiredDocument, ended: WaitEnd) -> FleetVerdict {
    let name = agent?.agent ?? "?", revision = document.revision
    let retrying = status.flatMap { $0.answers(revision, publication: document.publication) && $0.result == .retrying ? $0 : nil }
    if let agent, !agent.online {
      let part = retrying.map { status in
        " (its attempt \(status.attempt ?? 1) failed: \(status.message ?? "no reason given"); the watch "
          + (status.reachedText.map { "holds part of the revision: \($0)" } ?? "may hold part of the revision") + ")"
      } ?? ""
      return .pending("agent \(name) went offline during the wait and was not back \(ended.when)\(part); "
        + "it applies revision \(revision) when it connects")
    }
    if let status = retrying {
      return .retrying("still retrying \(ended.when): attempt \(status.attempt ?? 1) failed"
        + " (\(status.message ?? "no reason given")); agent \(status.agent) tries again" + (status.nextRetry.map { " at \($0)" } ?? ""))
    }
    return .pending("agent \(name) did not report \(ended.before); it applies revision \(revision) when it can")
  }

  /// How a publication's wait ended, in its rows' words.
  enum WaitEnd {
    /// At its deadline, after `--wait`.
    case deadline(Duration)
    /// Stopped early (Ctrl-C, SIGTERM): the documents are published all the same.
    case interrupted

    /// `when the wait of 60s ended` / `when the run was interrupted`.
    var when: String {
      switch self {
      case .deadline(let wait): "when the wait of \(Int(wait.seconds))s ended"
      case .interrupted: "when the run was interrupted"
      }
    }

    /// `within 60s` / `before the run was interrupted`.
    var before: String {
      switch self {
      case .deadline(let wait): "within \(Int(wait.seconds))s"
      case .interrupted: "before the run was interrupted"
      }
    }
  }

  /// The verdict a status reports.
  static func verdict(_ status: WatchStatus) -> FleetVerdict {
    switch status.result {
    case .applied: .applied(status.changes ?? PlanCounts(add: 0, change: 0, destroy: 0))
    case .noChanges: .noChanges
    // The agent's safety gate refused: nothing was written, as for a direct fleet's `refused`.
    case .refused: .refused("refused by agent \(status.agent): \(status.message ?? "")")
    case .invalid, .failed, .retrying: .failed("\(status.result.rawValue) by agent \(status.agent): \(status.message ?? "")")
    }
  }

  /// A status as JSON.
  static func json(_ status: WatchStatus) -> JSONValue {
    (try? JSONDecoder().decode(JSONValue.self, from: Data(status.encoded()))) ?? .null
  }
}
