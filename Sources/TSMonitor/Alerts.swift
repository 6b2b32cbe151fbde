import Foundation
import TSModel
import TSPlan

/// What a monitor's events, checks and (over MQTT) agents' statuses tell: the status page's
/// `StatusBoard` and the `Alerts` both hear the same things, under the member's name.
public protocol MonitorObserver: AnyObject, Sendable {
  /// An event about the watches `names` (one for a monitor's own; an agent's names each it serves).
  func record(_ event: MonitorEvent, for names: [String])
  /// A check of the watch `name` that could read it.
  func checked(_ name: String, _ check: MonitorCheck)
  /// An agent's status of the watch `name`.
  func reported(_ name: String, _ report: AgentReport)
}

extension StatusBoard: MonitorObserver {}

/// Alerts for every failure state (docs/monitor.md "Alerts"): each condition a watch can be in —
/// drift, drifting back, a failed or refused apply, a manifest (or fleet file) that cannot be used,
/// offline longer than a threshold, its agent offline; and the monitor without its broker — raises one `alert` event when it starts (deduplicated per watch and kind, across
/// restarts: the open conditions are kept in `alerts.json`), and a `recovered` alert when it
/// clears; an apply raises `applied`. Each alert whose kind passes the filter goes through a
/// durable outbox (`Outbox`, `Delivery`: retried with backoff until each notifier succeeds, a
/// restarted monitor delivers what is left) to the notifiers (`--webhook`, `--on-event`).
/// SOS presses keep their own path (the watch's outbox, `Monitor`).
///
/// An alert's id is `alert-<watch digest>-<kind>-<n>`, n counting that condition's starts: an
/// alert raised again after a crash before its state was saved has the same id, so it is queued
/// once and receivers can drop a second delivery.
public final class Alerts: MonitorObserver, @unchecked Sendable {
  /// An alert's kind (`alert` field) and its severity.
  public enum Kind: String, CaseIterable, Sendable {
    case sos, drift
    case driftingBack = "drifting_back"
    case applied, failed, refused, invalid, offline
    case agentOffline = "agent_offline"
    /// The monitor itself lost the broker (over MQTT): it sees no watch and hears no SOS press.
    case monitorOffline = "monitor_offline"
    /// A drift touches the emergency list (the SOS switch or the emergency contacts): an SOS
    /// press may reach no one, or not whom the manifest says. Raised beside `drift`.
    case sosDrift = "sos_drift"
    /// Events of the watch never reached the monitor and cannot be had again (a bridge's stream
    /// skipped them twice): an SOS among them was not forwarded.
    case eventsMissed = "events_missed"
    /// The watch's events are not being heard (its bridge's event stream kept breaking, `error`
    /// with `reason: events_down`): an SOS pressed meanwhile reaches no one until they are.
    case eventsDown = "events_down"
    case recovered, test

    /// `critical` (sos; the monitor without its broker, or a watch whose events are not heard:
    /// no SOS press is heard; events missed; a drift of the emergency list: a press may reach
    /// no one), `warning` (a failure state),
    /// `info` (drift, applied, recovered, test).
    public var severity: String {
      switch self {
      case .sos, .monitorOffline, .sosDrift, .eventsMissed, .eventsDown: "critical"
      case .driftingBack, .failed, .refused, .invalid, .offline, .agentOffline: "warning"
      case .drift, .applied, .recovered, .test: "info"
      }
    }

    /// Kinds that are conditions (they start and clear); `applied`, `sos` and `test` happen once.
    var isCondition: Bool { ![.applied, .sos, .eventsMissed, .recovered, .test].contains(self) }
  }

  /// The kinds `--events` names: kind names, severities (`critical`, `warning`, `info`) and
  /// `all`, comma-separated (`test` is always in).
  /// - Throws: `NotifierError` naming the first unknown word and what is accepted.
  public static func parseFilter(_ text: String) throws(NotifierError) -> Set<Kind> {
    var kinds: Set<Kind> = []
    for word in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }) where !word.isEmpty {
      if word == "all" {
        kinds.formUnion(Kind.allCases)
      } else if let kind = Kind(rawValue: word) {
        kinds.insert(kind)
      } else if ["critical", "warning", "info"].contains(word) {
        kinds.formUnion(Kind.allCases.filter { $0.severity == word })
      } else {
        throw NotifierError("--events: unknown kind '\(word)'; expected a comma-separated list of "
          + Kind.allCases.filter { $0 != .test }.map(\.rawValue).joined(separator: ", ") + ", critical, warning, info or all")
      }
    }
    kinds.insert(.test)
    return kinds
  }

  struct Stored: Codable {
    var format = "tsapply-monitor-alerts"
    var version = 1
    /// Open conditions: "WATCH\u{0}KIND" → the id of the alert that opened it.
    var open: [String: String] = [:]
    /// Starts per "WATCH\u{0}KIND".
    var starts: [String: Int] = [:]
    /// When what opened a condition was seen, where it was an event or an agent's status
    /// (`Cause.time`): "WATCH\u{0}KIND" → that time. `nil` in a state kept by an earlier monitor.
    var seen: [String: Date]?
  }

  /// Where the state and the outbox are.
  public let directory: String
  private let filter: Set<Kind>
  private let offlineAfter: Duration
  private let outbox: Outbox
  private let delivery: Delivery?
  private let emit: @Sendable (MonitorEvent) -> Void
  private let now: @Sendable () -> Date
  private let lock = NSLock()
  private let saveLock = NSLock()
  private var stored: Stored
  /// When each unreachable watch went offline, and the `offline` event that said so (the cause
  /// of its `offline` alert once the threshold passes).
  private var offlineSince: [String: (time: Date, event: MonitorEvent)] = [:]
  private var saveFailed = false

  /// Alerts kept in `directory` (`alerts.json`, `outbox/`), delivered to `notifiers` by
  /// `policy` when their kind is in `filter`; each alert is also given to `emit` (the log);
  /// `offlineAfter`: how long a watch may be unreachable before it is an alert.
  public init(directory: String, notifiers: [any Notifier], filter: Set<Kind>, offlineAfter: Duration, policy: Backoff.Policy,
              emit: @escaping @Sendable (MonitorEvent) -> Void, notice: @escaping @Sendable (String) -> Void,
              now: @escaping @Sendable () -> Date = { Date() }) {
    self.directory = directory
    self.filter = filter
    self.offlineAfter = offlineAfter
    self.emit = emit
    self.now = now
    outbox = Outbox(directory: directory + "/outbox")
    delivery = notifiers.isEmpty ? nil : Delivery(outbox: outbox, notifiers: notifiers, policy: policy) { report in
      switch report {
      case .attemptFailed(let id, let notifier, let attempt, let reason, let retryIn, _):
        notice("Alert \(id): \(notifier) failed (attempt \(attempt)): \(reason); trying again in \(Monitor.text(retryIn)).")
      case .completed(let id): notice("Alert \(id): every notifier succeeded; removed from the outbox.")
      case .outboxFailed(let id, let error): notice("Alert \(id): cannot update its outbox entry (\(error)); it may be delivered again.")
      case .delivered: break
      }
    }
    let path = directory + "/alerts.json"
    if let data = FileManager.default.contents(atPath: path), data.count <= 8 << 20,
       let decoded = try? JSONDecoder().decode(Stored.self, from: data), decoded.format == "tsapply-monitor-alerts" {
      stored = decoded
    } else {
      stored = Stored()
    }
    if Self.catchUp(&stored, with: outbox.entries().entries) { save() }
  }

  /// Brings the state up to the outbox after a crash: an alert is queued before the state is
  /// saved (`raise`), so a monitor killed between the two leaves a condition's alert, or its
  /// recovery, in the outbox and not in `alerts.json`. Without this the restarted monitor
  /// delivers the alert but never its recovery (it does not know the condition is open).
  /// Returns whether anything changed.
  static func catchUp(_ stored: inout Stored, with entries: [Outbox.Entry]) -> Bool {
    var changed = false
    // Openings before recoveries: a recovery closes only the opening it names.
    let ordered = entries.filter { !$0.body.contains("\"recovers\":") } + entries.filter { $0.body.contains("\"recovers\":") }
    for entry in ordered {
      guard case .object(let body)? = try? JSONDecoder().decode(JSONValue.self, from: Data(entry.body.utf8)),
            case .string(let watch)? = body["watch"], case .string(let name)? = body["alert"], let kind = Kind(rawValue: name)
      else { continue }
      if kind.isCondition, let start = entry.id.split(separator: "-").last.flatMap({ Int($0) }) {
        let key = Self.key(watch, kind)
        guard stored.open[key] == nil, (stored.starts[key] ?? 0) < start else { continue }
        stored.open[key] = entry.id
        stored.starts[key] = start
        changed = true
      } else if kind == .recovered, case .string(let recovers)? = body["recovers"], let closed = Kind(rawValue: recovers),
                case .string(let opened)? = body["opened_id"] {
        let key = Self.key(watch, closed)
        guard stored.open[key] == opened else { continue }
        stored.open[key] = nil
        stored.seen?[key] = nil
        changed = true
      }
    }
    return changed
  }

  /// Delivers what an earlier run left in the outbox.
  public func start() async {
    try? SecureFile.createDirectory(outbox.directory)
    guard let delivery else { return }
    for entry in outbox.entries().entries { await delivery.start(entry) }
  }

  /// Stops delivering; attempts under way get `grace` (what is left stays in the outbox).
  public func stop(grace: Duration) async { await delivery?.stop(grace: grace) }

  /// Waits until nothing is being delivered (tests).
  public func idle() async { await delivery?.idle() }

  // MARK: What the monitors report

  public func record(_ event: MonitorEvent, for names: [String]) {
    let reason = event.fields["reason"].flatMap { if case .string(let text) = $0 { text } else { nil } }
    let agent = event.fields["agent"].flatMap { if case .string(let text) = $0 { text } else { nil } }
    switch event.kind {
    case .drift:
      // The drift named the emergency list: SOS at risk, raised beside the drift; a drift that
      // no longer names it (a superseding report) ends that.
      let touchesSOS = event.putsSOSAtRisk
      var atRisk = event
      atRisk.message = Self.sosAtRisk + ": " + event.message
      for name in names {
        if touchesSOS { open(.sosDrift, name, atRisk) } else { close([.sosDrift], name, event) }
        open(.drift, name, event)
        // What healing does about it now: a refusal or a failure it no longer meets ends (a
        // drift reported anew after its manifest changed).
        switch event.fields["reconcile"] {
        case .string("unsafe")?: open(.refused, name, event)
        case .string("failed")?: open(.failed, name, event)
        case .string("applied")?, .string("nothing")?: close([.refused, .failed, .driftingBack], name, event)
        default: break
        }
      }
    case .resolved:
      for name in names { close([.drift, .sosDrift, .driftingBack, .failed, .refused], name, event) }
    case .applied:
      for name in names {
        close([.failed, .refused], name, event)
        once(.applied, name, event)
      }
    case .error where reason == "events_missed":
      for name in names { once(.eventsMissed, name, event) }
    case .error where reason == "events_down":
      for name in names { open(.eventsDown, name, event) }
    case .error where reason == "keeps_drifting_back":
      for name in names { open(.driftingBack, name, event) }
    // An agent's error says what became of the revision (`result`): a refusal is `refused`, an
    // invalid revision `invalid` — not also `failed`.
    case .error where reason == nil && agent != nil && event.fields["result"] == .string("refused"):
      for name in names { open(.refused, name, event) }
    case .error where reason == nil && agent != nil && event.fields["result"] == .string("invalid"):
      for name in names { open(.invalid, name, event) }
    // A heal or an agent's apply that failed for a reason that can pass (`reconcile: retrying`)
    // is tried again: not a failure state until it fails for good.
    case .error where (reason == "apply" || (reason == nil && agent != nil)) && event.fields["reconcile"] != .string("retrying"):
      for name in names { open(.failed, name, event) }
    case .error where reason == "manifest":
      // Drift is not checked until the manifest or the fleet file is fixed: a failure state.
      for name in names { open(.invalid, name, event) }
    // The monitor's own connection to the broker (`broker` field), under its own name.
    case .offline where event.fields["broker"] != nil:
      open(.monitorOffline, event.watch, event)
    case .online where event.fields["broker"] != nil:
      close([.monitorOffline], event.watch, event)
    case .offline:
      if let agent {
        open(.agentOffline, "agent:" + agent, event, watches: names)
      } else {
        // From when the outage was found, which may be before this monitor started (`since`).
        let since = event.offlineSince
        lock.withLock { for name in names where offlineSince[name] == nil { offlineSince[name] = (since, event) } }
      }
    case .online:
      // Its events heard again from a stream that has not held yet: the condition stays open
      // until it holds (`events: resumed`), so a stream that keeps breaking raises it once.
      if event.fields["events"] == .string("reopened") { break }
      if let agent {
        close([.agentOffline], "agent:" + agent, event)
      } else {
        lock.withLock { for name in names { offlineSince[name] = nil } }
        // Reached (again), or its events heard again (`events: resumed`): either way its
        // listeners are registered and hearing.
        for name in names { close([.offline, .eventsDown], name, event) }
      }
    case .removed where agent != nil:
      // An agent retired (its presence deleted from the broker): its outage ends with it; its
      // watches are not removed (the page says who serves them now).
      if let agent { close([.agentOffline], "agent:" + agent, event, why: "the agent was retired") }
    case .removed:
      // No longer watched: nothing it was in can be seen to end, so each open condition is
      // closed now, saying why (`cause_kind: removed`), and no `offline` is raised for it later.
      lock.withLock { for name in names { offlineSince[name] = nil } }
      for name in names {
        close(Kind.allCases.filter(\.isCondition), name, event, why: "the watch is no longer monitored")
      }
    default:
      break
    }
  }

  /// The `reason` of the `offline` condition a watch no agent serves starts (no event in the log).
  static let unservedReason = "unserved"
  static func isUnserved(_ event: MonitorEvent) -> Bool { event.fields["reason"] == .string(unservedReason) }

  /// How every `sos_drift` alert begins, whatever raised it (a drift event, a check, an agent's
  /// status); `status --fleet` says it of such a watch too.
  public static let sosAtRisk = "SOS at risk: the watch's SOS switch or emergency contacts changed on the watch, so a press may reach no one "
    + "or not whom the manifest says"

  public func checked(_ name: String, _ check: MonitorCheck) {
    lock.withLock { offlineSince[name] = nil }
    // A check that found the watch well logs no event of its own (a `resolved` or `online`
    // event, when there is one, closes the condition first): the cause is the check.
    let event = Cause(kind: "check", message: "a check read the watch")
    close(check.manifestUsable ? [.offline, .invalid] : [.offline], name, event)
    // `sos_drift` is raised beside `drift`, and ends with it.
    if check.drift == 0 { close([.drift, .sosDrift, .driftingBack, .failed, .refused], name, event) }
    // Raised from the check that finds it, before a heal of it ends (a slow link made the
    // critical alert 37 s late, and a monitor killed mid-heal never sent it): the drift event,
    // with what healing did, follows.
    if check.sosAtRisk, check.drift > 0 {
      open(.sosDrift, name, Cause(kind: "check", message: Self.sosAtRisk + " (found by the monitor's check; the drift event says what healing did)"))
    }
  }

  public func reported(_ name: String, _ report: AgentReport) {
    let event = Cause(kind: "agent_status", message: report.note ?? "its agent reports the watch \(report.state)", time: report.lastSeen)
    // Served by no agent (its agent no longer announces it, no other does): out of everyone's
    // reach, its SOS presses heard by no one — `offline` once that has lasted the threshold, as
    // for a watch its agent cannot read (a watch moved between agents within it raises nothing;
    // fresh-eyes finding: the page said so, the alerts never did).
    let time = now()
    // `no status` of a watch moved to agents that have not reported yet is served (`servedBy`).
    let unserved = report.state == "no status" && report.servedBy?.isEmpty ?? true
    let wasUnserved = lock.withLock { () -> Bool in
      let was = offlineSince[name].map { Self.isUnserved($0.event) } ?? false
      if unserved {
        if offlineSince[name] == nil {
          offlineSince[name] = (time, MonitorEvent(time: time, watch: name, kind: .offline, message: report.note ?? "no agent serves the watch",
                                                   fields: ["reason": .string(Self.unservedReason)]))
        }
      } else if was {
        offlineSince[name] = nil
      }
      return was
    }
    // Served again — also by an agent it moved to that has not reported yet (fresh-eyes fe102
    // #7: the alert stayed open once the move's `no status` had cleared what raised it).
    // Served now, whenever the status it carries was read: not a reading older than the alert.
    if wasUnserved, !unserved { close([.offline], name, Cause(kind: event.kind, message: event.message, time: nil)) }
    switch report.state {
    case "refused": open(.refused, name, event)
    case "failed": open(.failed, name, event)
    case "invalid": open(.invalid, name, event)
    case "drift":
      // Applied, with drift the apply left as it is: the refusal or failure before it is over
      // (fresh-eyes finding: a `refused` alert kept open after the revision applied, while the
      // wearer's change stayed).
      open(.drift, name, event)
      close([.failed, .refused], name, event)
    case "in sync", "pending": close([.drift, .sosDrift, .failed, .refused], name, event)
    default: break
    }
    // Where the agent's drift count is known beside another state — manifests edited and not
    // published, a refused or invalid revision, a desired document the broker lost (the watch
    // still held to the one applied: fe103 #2) — it says whether the watch drifted. A revision
    // not published yet ends no refusal or failure, and a count not known (nil) ends nothing.
    if ["new revision", "refused", "invalid", "no desired document"].contains(report.state), let drift = report.drift {
      // In the drift's own words, not the refusal's or the edit's.
      let cause = Cause(kind: "agent_status", message: "its agent reports \(drift) resource\(drift == 1 ? "" : "s") changed on the watch since the last apply",
                        time: report.lastSeen)
      drift > 0 ? open(.drift, name, cause) : close([.drift, .sosDrift, .driftingBack], name, cause)
    }
    if report.state != "invalid" { close([.invalid], name, event) }
    // The emergency list among what drifted, as the agent's status says it: SOS at risk, also
    // for a monitor that was not there for the drift event (started later, the broker
    // restarted) — the event is not kept on the broker, the status is.
    if let atRisk = report.putsSOSAtRisk, let addresses = report.driftAddresses {
      if atRisk {
        open(.sosDrift, name, Cause(kind: "agent_status", message: Self.sosAtRisk + ": its agent reports \(addresses.joined(separator: ", ")) changed since the last apply",
                                    time: report.lastSeen))
      } else {
        close([.sosDrift], name, event)
      }
    }
  }

  /// Raises `offline` for each watch unreachable longer than the threshold; call it every
  /// second or so.
  public func tick() {
    let time = now()
    let due = lock.withLock {
      offlineSince.filter { time.timeIntervalSince($0.value.time) >= Backoff.seconds(offlineAfter) }.map { ($0.key, $0.value.event) }
    }
    // Caused by the `offline` event that began it (in the log), said in the threshold's words.
    for (name, event) in due.sorted(by: { $0.0 < $1.0 }) {
      // Unserved: said in the agent's status words (no event of its own in the log).
      if Self.isUnserved(event) {
        open(.offline, name, Cause(kind: "agent_status", message: "no agent has served the watch for longer than \(Monitor.text(offlineAfter)), "
                                     + "so its SOS presses reach no one: \(event.message)"))
      } else {
        open(.offline, name, Cause(event, message: "the watch has been unreachable for longer than \(Monitor.text(offlineAfter))"))
      }
    }
  }

  // MARK: Raising

  private static func key(_ watch: String, _ kind: Kind) -> String { watch + "\u{0}" + kind.rawValue }

  /// What raised or ended an alert: an event in the log (`cause_id` its id, `cause_kind` its
  /// kind), or what has no event of its own — a check that read the watch (`cause_kind: check`),
  /// an agent's status (`agent_status`) — with no `cause_id`.
  struct Cause {
    var id: String?
    var kind: String
    var message: String
    /// When what it says was seen, by the clock of whoever saw it: the event's time, the
    /// agent's last reading of the watch (`AgentReport.lastSeen`); `nil` for a check this
    /// monitor made just now. A cause seen before the cause that opened a condition does not
    /// end it (`close`): it tells of the watch before the condition began (a retained status
    /// from a broker restored from an older save, heard by a monitor started anew).
    var time: Date?

    /// `event`, in the words `message` (default its own).
    init(_ event: MonitorEvent, message: String? = nil) {
      (id, kind, self.message, time) = (event.id, event.kind.rawValue, message ?? event.message, event.time)
    }

    /// A cause that is no event in the log, seen at `time` (when known).
    init(kind: String, message: String, time: Date? = nil) {
      (id, self.kind, self.message, self.time) = (nil, kind, message, time)
    }

    /// `cause_id` (when it is an event) and `cause_kind`.
    var fields: [String: JSONValue] {
      var fields: [String: JSONValue] = ["cause_kind": .string(kind)]
      if let id { fields["cause_id"] = .string(id) }
      return fields
    }
  }

  private func open(_ kind: Kind, _ watch: String, _ event: MonitorEvent, watches: [String]? = nil) {
    open(kind, watch, Cause(event), watches: watches)
  }

  private func open(_ kind: Kind, _ watch: String, _ cause: Cause, watches: [String]? = nil) {
    let alert: MonitorEvent? = lock.withLock {
      let key = Self.key(watch, kind)
      guard stored.open[key] == nil else { return nil }
      let start = (stored.starts[key] ?? 0) + 1
      let id = alertID(watch, kind, start)
      stored.starts[key] = start
      stored.open[key] = id
      stored.seen = stored.seen ?? [:]
      stored.seen?[key] = cause.time
      var fields = cause.fields
      if let watches { fields["watches"] = .array(watches.map(JSONValue.string)) }
      return makeAlert(kind, watch: watch, id: id, message: cause.message, fields: fields)
    }
    if let alert { raise(alert, kind: kind) }
  }

  /// Closes the open conditions `kinds` of `watch` with a `recovered` alert caused by `cause`;
  /// `why` replaces "is over" in its message where the condition did not end by itself.
  private func close(_ kinds: [Kind], _ watch: String, _ event: MonitorEvent, why: String? = nil) {
    close(kinds, watch, Cause(event), why: why)
  }

  private func close(_ kinds: [Kind], _ watch: String, _ cause: Cause, why: String? = nil) {
    let recovered: [(MonitorEvent, Kind)] = lock.withLock {
      kinds.compactMap { kind in
        let key = Self.key(watch, kind)
        if let time = cause.time, let began = stored.seen?[key], time < began { return nil }
        guard let opened = stored.open.removeValue(forKey: key) else { return nil }
        stored.seen?[key] = nil
        let id = opened.replacingOccurrences(of: "-\(kind.rawValue)-", with: "-recovered-\(kind.rawValue)-")
        let what = kind.rawValue.replacingOccurrences(of: "_", with: " ")
        let event = makeAlert(.recovered, watch: watch, id: id, message: why.map { "closed: \(what): \($0)" } ?? "recovered: \(what) is over",
                              fields: cause.fields.merging(["recovers": .string(kind.rawValue), "opened_id": .string(opened)]) { a, _ in a })
        return (event, kind)
      }
    }
    for (event, kind) in recovered { raise(event, kind: .recovered, recovers: kind) }
  }

  private func once(_ kind: Kind, _ watch: String, _ cause: MonitorEvent) {
    let id = "alert-" + SHA256Digest.hex(of: Array((watch + "\u{0}" + cause.id).utf8)).prefix(16) + "-" + kind.rawValue
    raise(makeAlert(kind, watch: watch, id: id, message: cause.message, fields: Cause(cause).fields), kind: kind)
  }

  private func alertID(_ watch: String, _ kind: Kind, _ start: Int) -> String {
    "alert-" + SHA256Digest.hex(of: Array(watch.utf8)).prefix(16) + "-" + kind.rawValue + "-" + String(start)
  }

  private func makeAlert(_ kind: Kind, watch: String, id: String, message: String, fields: [String: JSONValue]) -> MonitorEvent {
    var all = fields
    all["alert"] = .string(kind.rawValue)
    all["severity"] = .string(kind.severity)
    return MonitorEvent(time: now(), watch: watch, kind: .alert, id: id, message: message, fields: all)
  }

  /// Queues the alert when its kind passes the filter, then saves the state and logs it. The
  /// outbox entry comes first: a crash between the two is repaired from it at the next start
  /// (`catchUp`); the other order could lose the alert.
  private func raise(_ alert: MonitorEvent, kind: Kind, recovers: Kind? = nil) {
    let passes = filter.contains(kind) && (recovers.map { filter.contains($0) } ?? true)
    if passes, let delivery, outbox.entry(alert.id) == nil {
      let entry = Outbox.Entry(id: alert.id, body: alert.jsonLine)
      do { try outbox.put(entry) } catch { reportSaveFailure("the outbox entry \(alert.id): \(error)") }
      Task { await delivery.start(entry) }
    }
    save()
    emit(alert)
  }

  /// Writes the state; one writer at a time, each writing the state as it is then, so the
  /// file never goes back to an older state when monitors raise alerts side by side.
  private func save() {
    saveLock.withLock {
      guard let data = lock.withLock({ try? JSONEncoder().encode(stored) }) else { return }
      do { try SecureFile.write(Array(data), to: directory + "/alerts.json") } catch { reportSaveFailure("\(error)") }
    }
  }

  private func reportSaveFailure(_ what: String) {
    guard lock.withLock({ () -> Bool in defer { saveFailed = true }; return !saveFailed }) else { return }
    emit(MonitorEvent(time: now(), watch: directory, kind: .error, message: "cannot save the alerts' state (\(what)); a restarted monitor may alert again",
                      fields: ["reason": .string("alerts")]))
  }

  // MARK: Test

  /// `tsapply monitor --test-alert`: one `test` alert to each of `notifiers` at once (no
  /// outbox, no retry); each notifier's name and why it failed, or `nil` when it succeeded.
  public static func test(_ notifiers: [any Notifier], host: String = ProcessInfo.processInfo.hostName,
                          now: Date = Date()) async -> [(name: String, failure: String?)] {
    let event = MonitorEvent(time: now, watch: host, kind: .alert, id: "alert-test-" + MonitorEvent.newID(time: now),
                             message: "test alert from tsapply monitor on \(host): if you read this, alerts reach you",
                             fields: ["alert": .string(Kind.test.rawValue), "severity": .string(Kind.test.severity)])
    var results: [(String, String?)] = []
    for notifier in notifiers {
      results.append((notifier.name, await notifier.deliver(id: event.id, body: event.jsonLine, attempt: 1)))
    }
    return results
  }
}
