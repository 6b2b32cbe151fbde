import Foundation
import TSApply
import TSDevice
import TSEngine
import TSManifest
import TSModel
import TSPlan

/// Watches one watch until stopped: reports what changed on it since the last apply (drift),
/// heals drift through the engine's apply when asked, and forwards SOS presses to notifiers
/// through a durable outbox. The machinery `tsapply monitor` runs, and that a fleet runner runs
/// once per watch; front-ends parse options, render events and map the outcome to an exit status.
///
/// - **Listening and polling.** On connecting it registers the listeners the platform has
///   (`DeviceCapabilities.contacts`: contacts changed, emergency contacts changed, SOS request)
///   and reads the whole watch every `interval` (reminders have no listener anywhere; on Npk and
///   Fit, contact changes are found only this way). A change a listener reports is checked at
///   once. A listener answered with 2004 although the platform should have it is reported once
///   and polled instead; any other listener error means the device lost its event stream (a
///   bridge's), and the monitor reconnects.
/// - **Offline.** A watch that cannot be opened or read is reported `offline` once per outage and
///   tried again with backoff; `online` follows when it answers, with listeners registered again.
/// - **Drift** is what `Watch.drift` finds (changed since the last apply), reported once per
///   distinct drift; `resolved` when the watch holds what the last apply left again.
/// - **Healing** (`reconcile`) is the engine's `Watch.apply` with automatic approval: backup, lock,
///   verification and the safety gate are the engine's; an unsafe heal is refused unless
///   `allowDestroy`, and the drift is then reported and left alone. At most `maxAppliesPerHour`
///   heals in any hour: a watch that needs more keeps drifting back, which is reported once, and
///   healing stops until a check finds no drift or the manifest changes.
/// - **SOS**: each press becomes an event written to the outbox (`Outbox`) before the log line and
///   before any notifier runs; `Delivery` retries every notifier until it succeeds. Entries left by
///   an earlier run are delivered on start. One monitor per watch: the second refuses.
/// - **Missed events**: listeners resume after the last event handled (`HandledEvents`, recorded
///   after each event, an SOS once it is in the outbox), so presses made while no monitor listened
///   are replayed on start and after each outage where the device keeps its events numbered (the
///   simulator's journal, a bridge's event log); handled ones are not heard again. A replayed
///   press keeps when it was pressed (`DeviceEvent.time`) as its event's `time`, with `heard_at`
///   and `replayed` (docs/monitor.md "Missed events").
public final class Monitor: @unchecked Sendable {
  /// The engine watches are opened and healed through.
  public let engine: Engine
  /// What to watch and what is allowed.
  public let settings: MonitorSettings
  /// The manifests as messages name them: `settings.manifestName`, or for a watch of a fleet
  /// (`manifestProvider`) the files its last document was merged from, top first
  /// (`residents/room-17.yaml over wards/ward-a.yaml`), which the fleet file may change while
  /// the monitor runs (a watch given its own manifest was named by its ward file alone).
  private let shownManifest: Locked<String>
  public var manifestName: String { shownManifest.value }
  /// Who hears about SOS presses.
  public let notifiers: [any Notifier]
  private let emitEvent: @Sendable (MonitorEvent) -> Void
  private let notice: @Sendable (String) -> Void
  private let checked: (@Sendable (MonitorCheck) -> Void)?
  private let mailbox = Mailbox()
  /// What the monitor's listener hears, handed to its heals: a contact change made on the watch
  /// while a heal writes is said in the heal's event, not written over in silence.
  let announcements = WatchAnnouncements()
  private let lock = NSLock()
  private var generation = 0
  private var stopping = false
  /// `retire()` was called (and no `stop()` since): deliver the outbox before `run()` returns.
  private var retiring = false
  private var session: Session?
  private var refusals: Set<String> = []
  /// The events of failed and recovered deliveries (`DeliveryEvents`).
  private let deliveryEvents = DeliveryEvents()
  private var warnedNoSOS = false
  private var handledWriteFailed = false
  /// Taken while one watch event is handled, so events are numbered and recorded in order.
  private let eventLock = NSLock()
  /// When the periodic read is due next (`run()`'s ticker); `nil` outside `run()` (`--once`:
  /// the next check is the next run).
  let nextPoll = Locked<Date?>(nil)

  /// The outbox and delivery of the watch being monitored, set on first connecting.
  private struct Session {
    var identity: String
    var profile: String
    var outbox: Outbox
    var delivery: Delivery
    var handled: HandledEvents
  }

  /// A monitor; `emit` gets every event in order (log it, show it), `notice` the lines for
  /// people that are not events (what is delivered, what is left in the outbox, stopping),
  /// `checked` what each check that read the watch found (for a status page, `StatusBoard`).
  public init(engine: Engine, settings: MonitorSettings, notifiers: [any Notifier],
              emit: @escaping @Sendable (MonitorEvent) -> Void, notice: @escaping @Sendable (String) -> Void = { _ in },
              checked: (@Sendable (MonitorCheck) -> Void)? = nil) {
    self.engine = engine
    self.settings = settings
    shownManifest = Locked(settings.manifestName)
    self.notifiers = notifiers
    if let name = settings.watchName {
      self.emitEvent = { event in emit(Self.named(event, name)) }
    } else {
      self.emitEvent = emit
    }
    self.notice = notice
    self.checked = checked
  }

  /// `event` naming its watch `name` (`MonitorSettings.watchName`), the identity it named moved
  /// to `device`; unchanged when it names `name` already.
  private static func named(_ event: MonitorEvent, _ name: String?) -> MonitorEvent {
    guard let name, event.watch != name else { return event }
    var named = event
    named.fields["device"] = .string(event.watch)
    named.watch = name
    return named
  }

  /// Asks `run()` to stop (callable from a signal handler's queue): no new check starts, an
  /// apply under way stops between device calls, deliveries get `settings.stopGrace` to finish.
  public func stop() {
    locked {
      stopping = true
      retiring = false
    }
    mailbox.post(.stop)
  }

  /// Asks `run()` to stop as `stop()` does — no new check, the watch no longer listened to —
  /// but to deliver the SOS events its outbox holds before it returns, however long their
  /// receivers take: for a watch leaving a fleet (`monitor --fleet`), whose outbox no monitor
  /// would deliver from again. A `stop()` after it gives those deliveries `settings.stopGrace`
  /// as usual (what is left stays in the outbox).
  public func retire() {
    locked {
      stopping = true
      retiring = true
    }
    mailbox.post(.stop)
  }

  /// Whether `stop()` was called.
  public var isStopping: Bool { locked { stopping } }

  // MARK: Running

  /// Runs until `stop()`.
  /// - Throws: `MonitorError.open` when the watch cannot be opened the first time because of how
  ///   it was named or set up (the simulator's own errors, an unknown scheme) — a watch that is
  ///   merely unreachable is reported `offline` and tried again; `.locked` when another monitor
  ///   watches it; `.records` when its state folder cannot be written.
  public func run() async throws(MonitorError) {
    let interval = settings.interval
    // Set before the ticker first runs and before each poll it posts, so a check always knows it.
    nextPoll.set(now().addingTimeInterval(Backoff.seconds(interval)))
    let ticker = Task { [mailbox, nextPoll, engine] in
      while !Task.isCancelled {
        try? await Task.sleep(for: interval)
        nextPoll.set(engine.now().addingTimeInterval(Backoff.seconds(interval)))
        mailbox.post(.poll)
      }
    }
    var tracking = Tracking(budget: ApplyBudget(limit: settings.maxAppliesPerHour), forwardsSOS: true)
    var watch: Watch?
    var current = 0
    var monitorLock: WatchLock?
    var backoff = Backoff(settings.reconnect)
    var offlineSince: Date?
    var connectNow = true
    var retry: Task<Void, Never>?
    var failure: MonitorError?

    func goOffline(_ reason: String, error: DeviceError?) {
      if offlineSince == nil {
        offlineSince = now()
        emit(.offline, watch: locked { session?.identity } ?? chosenSpec(), message: "cannot reach the watch: \(reason); trying again with backoff",
             fields: error.map { ["error": .string($0.message), "domain": .string($0.domain.rawValue), "code": .integer($0.code.rawValue)] } ?? ["error": .string(reason)])
      }
      retry = mailbox.post(.retry, after: backoff.next())
    }

    loop: while !isStopping {
      if watch == nil && connectNow {
        connectNow = false
        do {
          let opened = try await engine.open(settings.deviceSpec, mayCreate: false)
          // This monitor's first session with a watch it has been waiting for (unreachable, or
          // not made yet, since `offlineSince`): what the watch reported meanwhile is replayed.
          let waitedSince = monitorLock == nil ? offlineSince : nil
          if monitorLock == nil {
            do { monitorLock = try await startSession(opened) } catch {
              await opened.close()
              failure = error
              break loop
            }
          }
          current = locked { generation += 1; return generation }
          let listening = await register(opened, generation: current, waitedSince: waitedSince)
          watch = opened
          emitOnline(opened, listening: listening, offlineFor: offlineSince.map { now().timeIntervalSince($0) })
          // A monitor killed while it healed: its drift is reported now, and the next check
          // says how it ended (`resolved`, or a drift event that supersedes this one).
          replayInterruptedHeal(opened, &tracking)
          offlineSince = nil
          backoff.reset()
          mailbox.post(.recheck)
        } catch {
          if monitorLock == nil, Self.isSetupError(error), !settings.retriesFirstOpen {
            failure = .open(error)
            break loop
          }
          goOffline(Self.reason(error), error: Self.deviceError(error))
        }
      }
      let wakes = await mailbox.next()
      if wakes.contains(.stop) { break }
      guard let connected = watch else {
        if wakes.contains(.retry) { connectNow = true }
        continue
      }
      if case .lost(_, let reason)? = wakes.first(where: { if case .lost(current, _) = $0 { true } else { false } }) {
        await drop(connected)
        watch = nil
        goOffline(reason, error: nil)
        continue
      }
      guard wakes.contains(.poll) || wakes.contains(.changed) || wakes.contains(.recheck) else { continue }
      if case .offline(let error) = await check(connected, &tracking) {
        await drop(connected)
        watch = nil
        goOffline(error.description, error: error)
      }
    }
    ticker.cancel()
    nextPoll.set(nil)
    retry?.cancel()
    if let watch { await drop(watch) }
    if let delivery = locked({ session?.delivery }) {
      let left = await delivery.inFlight
      if left > 0, locked({ retiring }) {
        notice("Stopped listening to the watch; delivering the \(left) SOS event\(left == 1 ? "" : "s") left in its outbox before its monitor ends.")
        while locked({ retiring }), await delivery.inFlight > 0 { try? await Task.sleep(for: .milliseconds(50)) }
      }
      if await delivery.inFlight > 0 { notice("Stopping: waiting up to \(Self.text(settings.stopGrace)) for deliveries under way; what is not delivered stays in the outbox.") }
      await delivery.stop(grace: settings.stopGrace)
    }
    monitorLock?.release()
    if let failure { throw failure }
  }

  /// One check, for cron (`--once`): opens the watch, reports drift (healing it when asked) and
  /// returns whether there was drift. No listeners, no outbox, no monitor lock.
  /// - Throws: `MonitorError.open` when the watch cannot be opened or read; `.check` when the
  ///   manifest cannot be read or does not fit the watch, or the check failed otherwise.
  public func checkOnce() async throws(MonitorError) -> Bool {
    let watch: Watch
    do { watch = try await engine.open(settings.deviceSpec, mayCreate: false) } catch { throw .open(error) }
    var tracking = Tracking(budget: ApplyBudget(limit: settings.maxAppliesPerHour))
    // An earlier run killed while it healed: its drift is reported, and this check says how it ended.
    replayInterruptedHeal(watch, &tracking)
    let result = await check(watch, &tracking)
    await watch.close()
    switch result {
    case .clean: return false
    // A heal that failed is an error for cron (exit 1), not drift it can leave to the next run.
    case .drifted(let healFailed?): throw .check(healFailed)
    case .drifted(nil): return true
    case .offline(let error): throw .open(.device(error))
    case .failed(let message): throw .check(message)
    }
  }

  /// Reports the drift a monitor was healing when it was killed (`HealIntent`), as the drift
  /// reported last, so the next check ends it (`resolved`) or supersedes it.
  private func replayInterruptedHeal(_ watch: Watch, _ tracking: inout Tracking) {
    guard let interrupted = HealIntent.take(watch.home.monitorHealPath) else { return }
    emitEvent(interrupted)
    let addresses: [JSONValue] = if case .array(let named)? = interrupted.fields["addresses"] { named } else { [] }
    tracking.reported = ("", interrupted.id, addresses)
    tracking.reportedAgainst = nil
    // Found over by the next check, the drift was ended by the killed heal's writes (the wearer
    // undoing just that in the same moment is not the likely story): `resolved` says healed.
    tracking.healed = true
  }

  /// Takes the monitor lock, prepares the state folder and starts delivering what the outbox holds.
  private func startSession(_ watch: Watch) async throws(MonitorError) -> WatchLock {
    do { try watch.home.prepare(profile: watch.capabilities.profile) } catch { throw .records(error) }
    let held: WatchLock
    do {
      held = try await WatchLock.acquire(at: watch.home.monitorLockPath,
                                         holder: WatchLock.currentHolder(command: settings.commandLine, now: now()),
                                         timeout: .zero)
    } catch {
      throw .locked(error)
    }
    let outbox = Outbox(directory: watch.home.outboxDirectory)
    let delivery = Delivery(outbox: outbox, notifiers: notifiers, policy: settings.delivery) { [weak self] report in
      self?.delivered(report)
    }
    let handled = HandledEvents(path: watch.home.monitorEventsPath, watch: watch.identity)
    if let problem = handled.problem {
      emit(.error, watch: watch.identity, message: "cannot use \(handled.path): \(problem); events the watch reported while no monitor listened are not replayed this time, and the file is replaced",
           fields: ["reason": .string("handled_events"), "file": .string(handled.path)])
    }
    locked {
      session = Session(identity: watch.identity, profile: watch.capabilities.profile, outbox: outbox, delivery: delivery, handled: handled)
    }
    let (entries, unreadable) = outbox.entries()
    for file in unreadable {
      emit(.error, watch: watch.identity, message: "cannot read the outbox entry \(file); it is left there for a person to look at",
           fields: ["reason": .string("outbox"), "file": .string(file)])
    }
    if !entries.isEmpty {
      notice(notifiers.isEmpty
        ? "\(entries.count) undelivered SOS event\(entries.count == 1 ? "" : "s") wait in \(outbox.directory); no notifier is configured (--on-sos, --webhook)."
        : "Delivering \(entries.count) SOS event\(entries.count == 1 ? "" : "s") left in the outbox by an earlier run.")
      for entry in entries { await delivery.start(entry) }
    }
    return held
  }

  /// Stops listening to `watch` (its handlers are ignored from now on) and releases it.
  private func drop(_ watch: Watch) async {
    locked { generation += 1 }
    await watch.close()
  }

  // MARK: Listeners

  /// A listener, by its JSON name.
  enum Listener: String, CaseIterable {
    case contacts
    case emergency = "emergency_contacts"
    case sos

    /// The events it hears.
    var kind: DeviceEvent.Kind {
      switch self {
      case .contacts: .contactsChanged
      case .emergency: .emergencyContactsChanged
      case .sos: .sosRequested
      }
    }

    /// The listener that hears `kind`.
    init(_ kind: DeviceEvent.Kind) {
      switch kind {
      case .contactsChanged: self = .contacts
      case .emergencyContactsChanged: self = .emergency
      case .sosRequested: self = .sos
      }
    }

    /// What it reports, for messages.
    var reports: String {
      switch self {
      case .contacts: "contact changes"
      case .emergency: "emergency-contact changes"
      case .sos: "SOS presses"
      }
    }
  }

  /// How each listener is served on a platform with `contacts`: `listening` (registered),
  /// `polled` (the platform never reports it, so the periodic read finds it), `unsupported` (SOS
  /// where the platform cannot report it) or `none` (the platform has no such list). The
  /// `listeners` field of `online` events, and the table in docs/monitor.md.
  static func listeners(for contacts: ContactCapabilities) -> [Listener: String] {
    [
      .contacts: contacts.maxContacts == 0 ? "none" : contacts.contactsChangedListener ? "listening" : "polled",
      .emergency: !contacts.supportsEmergencyContacts ? "none" : contacts.emergencyContactsChangedListener ? "listening" : "polled",
      .sos: contacts.sosRequestListener ? "listening" : "unsupported",
    ]
  }

  /// Listens for what `listeners(for:)` says the platform reports, resuming after the last event
  /// handled: what the watch reported while no monitor listened comes first. A watch with no
  /// event handled yet that this monitor has been waiting for since `waitedSince` (it could not
  /// be reached, or did not exist yet, when the monitor started or the fleet file named it):
  /// every event the watch still keeps is asked for (`DeviceEventID.everything`), and the SOS
  /// presses made since `waitedSince` are delivered, replayed; older ones only recorded.
  private func register(_ watch: Watch, generation: Int, waitedSince: Date? = nil) async -> [Listener: String] {
    let listening = Self.listeners(for: watch.capabilities.contacts)
    let kinds = Set(Listener.allCases.filter { listening[$0] == "listening" }.map(\.kind))
    guard !kinds.isEmpty else { return listening }
    let identity = watch.identity, profile = watch.capabilities.profile
    let record = locked { session?.handled }
    let handled = record?.lastEventID
    // No event handled yet: every event the watch keeps is asked for, and the presses made since
    // this monitor began waiting for it, or first listened to it (kept across restarts, with a
    // minute's slack for the watch's clock), are delivered; older ones only recorded. Listening
    // from the watch's resume point instead lost a press made while the first stream was being
    // opened (fresh-eyes findings: the first ~20 ms; an event stream stalled on the way).
    var firstListened: Date?
    if handled == nil, waitedSince == nil, let record {
      do { firstListened = try record.listeningSince(now: now()) } catch { firstListened = now() }
    }
    let waited = handled == nil ? (waitedSince ?? firstListened.map { $0.addingTimeInterval(-HandledEvents.clockSlack) }) : nil
    let firstStart = firstListened != nil
    let after = handled ?? (waited == nil ? nil : DeviceEventID.everything)
    // A press made before this moment, heard by a listener that resumed, was replayed.
    let resumedAt = after == nil ? nil : now()
    await watch.device.listen(to: kinds, after: after) { [weak self] report in
      guard let self, self.isCurrent(generation) else { return }
      self.announcements.heard(report)
      switch report {
      case .resumePoint(let id):
        self.eventLock.withLock { self.recordHandled(id, sequence: nil, durable: false) }
      case .event(let event) where event.kind == .sosRequested
        && Self.pressed(event.time, before: waited, untimedIsOlder: firstStart):
        // Pressed before this monitor waited for the watch: not this monitor's to deliver.
        self.eventLock.withLock { self.recordHandled(event.id, sequence: nil) }
      case .event(let event) where event.kind == .sosRequested:
        self.sosPressed(watch: identity, profile: profile, deviceEvent: event.id, pressedAt: event.time, resumedAt: resumedAt)
      case .event(let event):
        self.mailbox.post(.changed)
        // A missed change needs no replay (connecting checks the watch anyway), only the record.
        self.eventLock.withLock { self.recordHandled(event.id, sequence: nil) }
      case .failed(let kind, let error):
        self.listenerFailed(Listener(kind), error, generation: generation)
      case .interrupted(let why):
        self.emit(.error, watch: identity, message: "the watch's events are not being heard: \(why); an SOS pressed meanwhile is forwarded "
                    + "late, once they are — check the network between this monitor and the phone",
                  fields: ["reason": .string("events_down"), "error": .string(why)])
      case .resumed:
        self.emit(.online, watch: identity, message: "the watch's events are heard again (what was missed meanwhile is replayed)",
                  fields: ["events": .string("resumed")])
      case .missed(let after, let before):
        self.emit(.error, watch: identity, message: "the watch's events after \(after) and before \(before) never reached this monitor "
                    + "and cannot be had again (the bridge no longer holds them, or something on the network dropped them each time): "
                    + "an SOS pressed then was not forwarded; ask the wearer, and check the network between this monitor and the phone",
                  fields: ["reason": .string("events_missed"), "after": .string(after.rawValue), "before": .string(before.rawValue)])
      }
    }
    return listening
  }

  /// Whether a press at `time` came before `since` (never without `since`). A press whose time
  /// is not known (a device that gives none) counts as before with `untimedIsOlder` — a first
  /// start, which hears every press the watch keeps and must not forward old ones as new — and
  /// as after otherwise (a watch waited for: its presses were made while nobody listened).
  static func pressed(_ time: Date?, before since: Date?, untimedIsOlder: Bool = false) -> Bool {
    guard let since else { return false }
    guard let time else { return untimedIsOlder }
    return time < since
  }

  /// Records that the device's event `id` was handled (and SOS number `sequence` used); a
  /// failure to write is reported once.
  private func recordHandled(_ id: DeviceEventID?, sequence: Int?, durable: Bool = true) {
    guard let session = locked({ self.session }), id != nil || sequence != nil else { return }
    do {
      try session.handled.handled(id, sequence: sequence, durable: durable)
    } catch {
      guard locked({ () -> Bool in defer { handledWriteFailed = true }; return !handledWriteFailed }) else { return }
      emit(.error, watch: session.identity,
           message: "cannot record the last event handled (\(error)); a restarted monitor may report events again",
           fields: ["reason": .string("handled_events"), "file": .string(session.handled.path)])
    }
  }

  private func isCurrent(_ generation: Int) -> Bool { locked { self.generation == generation && !stopping } }

  /// 2004: refused (reported once per listener for the monitor's life, then polled); anything
  /// else: the event stream broke, so reconnect.
  private func listenerFailed(_ listener: Listener, _ error: DeviceError, generation: Int) {
    guard error.code == .notSupport else {
      return mailbox.post(.lost(generation: generation, reason: "the \(listener.rawValue) listener failed: \(error)"))
    }
    let (first, identity) = locked { (refusals.insert(listener.rawValue).inserted, session?.identity ?? chosenSpec()) }
    guard first else { return }
    let consequence = listener == .sos
      ? "SOS presses on this watch cannot be reported"
      : "\(listener.reports) are found by reading the watch every \(Self.text(settings.interval)) instead"
    emit(.error, watch: identity, message: "the watch refused the \(listener.rawValue) listener (\(error)); \(consequence)",
         fields: ["reason": .string("listener_refused"), "listener": .string(listener.rawValue),
                  "code": .integer(error.code.rawValue), "domain": .string(error.domain.rawValue)])
  }

  // MARK: SOS

  /// Seconds between when a press happened and when the monitor heard it beyond which the
  /// event says both (`heard_at`): more than delivery ever takes, less than anyone waits.
  public static let heardLateAfter: TimeInterval = 2

  /// An SOS press (the device's event `deviceEvent`, made at `pressedAt` when the device says):
  /// numbered, into the outbox first (on disk before anything else happens), then recorded as
  /// handled, then the log, then the notifiers. The event's `time` is when it was pressed
  /// (when heard, if the device does not say); heard more than `heardLateAfter` apart it also
  /// has `heard_at`, and `replayed` when it was pressed before a resuming listener registered
  /// (`resumedAt`: pressed while no monitor listened, replayed from the watch's history).
  /// One already in the outbox (replayed after a crash before it was recorded) is only recorded:
  /// the outbox delivers it.
  private func sosPressed(watch: String, profile: String, deviceEvent: DeviceEventID?, pressedAt: Date?, resumedAt: Date?) {
    eventLock.lock()
    defer { eventLock.unlock() }
    guard let session = locked({ self.session }) else { return }
    let (sequence, id) = session.handled.nextSOS()
    var fields: [String: JSONValue] = ["profile": .string(profile), "host": .string(ProcessInfo.processInfo.hostName),
                                       "sequence": .integer(sequence)]
    if let deviceEvent { fields["device_event_id"] = .string(deviceEvent.rawValue) }
    let heard = now(), pressed = pressedAt ?? heard
    var message = "SOS pressed on the watch"
    if abs(heard.timeIntervalSince(pressed)) > Self.heardLateAfter {
      fields["heard_at"] = .string(MonitorEvent.timestamp(heard))
      if heard > pressed { message += " \(StatusBoard.duration(heard.timeIntervalSince(pressed))) before it was heard" }
    }
    if let resumedAt, pressed < resumedAt {
      fields["replayed"] = .bool(true)
      message += " (replayed: pressed while no monitor listened)"
    }
    // Named as its events are before it goes in the outbox: the notifiers get what the log shows.
    let event = Self.named(MonitorEvent(time: pressed, watch: watch, kind: .sos, id: id, message: message, fields: fields),
                           settings.watchName)
    let entry = Outbox.Entry(id: event.id, body: event.jsonLine)
    if !notifiers.isEmpty {
      if session.outbox.entry(id) != nil {
        recordHandled(deviceEvent, sequence: sequence)
        notice("SOS \(id) was heard again after a restart; it is already in the outbox and delivered from there.")
        return
      }
      do {
        try session.outbox.put(entry)
      } catch {
        emit(.error, watch: watch, message: "the SOS could not be stored in the outbox (\(error)); delivering it without the outbox, so a restart would not deliver it again",
             fields: ["reason": .string("outbox"), "event_id": .string(event.id)])
      }
    }
    recordHandled(deviceEvent, sequence: sequence)
    emitEvent(event)
    if !notifiers.isEmpty { Task { await session.delivery.start(entry) } }
  }

  private func delivered(_ report: Delivery.Report) {
    let identity = locked { session?.identity } ?? chosenSpec()
    switch report {
    case .attemptFailed(let id, let notifier, let attempt, let reason, let retryIn):
      notice("SOS \(id): \(notifier) failed (attempt \(attempt)): \(reason); trying again in \(Self.text(retryIn)).")
      if let event = deliveryEvents.event(for: report, watch: identity, at: now()) { emitEvent(event) }
    case .delivered(let id, let notifier, let attempts):
      notice("SOS \(id): delivered to \(notifier)\(attempts > 1 ? " (attempt \(attempts))" : "").")
      if let event = deliveryEvents.event(for: report, watch: identity, at: now()) { emitEvent(event) }
    case .completed(let id):
      notice("SOS \(id): every notifier succeeded; removed from the outbox.")
    case .outboxFailed(let id, let error):
      emit(.error, watch: identity, message: "cannot update the outbox entry of SOS \(id): \(error); it may be delivered again",
           fields: ["reason": .string("outbox"), "event_id": .string(id)])
    }
  }

  // MARK: Checks

  /// What one check found.
  enum CheckResult {
    case clean
    /// Drift reported; `healFailed`: why the heal asked for (`--reconcile`) failed, in a
    /// sentence that says whether the next check tries again.
    case drifted(healFailed: String?)
    case offline(DeviceError)
    case failed(String)
  }

  /// What the loop remembers between checks.
  struct Tracking {
    /// The drift reported last: its signature (digest of its changes), event id and the
    /// addresses it named (as shown).
    var reported: (signature: String, id: String, addresses: [JSONValue])?
    /// What healing did about the drift reported last (`HealOutcome.word`), as its event said.
    var reportedOutcome: String?
    /// The last heal attempt: for which drift and manifest, whether to try again (it failed
    /// for a reason that can pass), and how many attempts in a row failed so.
    var lastHeal: (key: String, retry: Bool, attempts: Int)?
    /// The last heal's `retrying` outcome while its retry is not due yet (`HealOutcome.retrying`'s
    /// `next`, the next periodic check): a check before then (the watch reconnected, or was
    /// changed in a way that leaves the drift as it was) reports it, and does not try again.
    var retryWaiting: HealOutcome?
    /// Whether a heal undid the drift since it was reported (so its end is the heal's doing).
    var healed = false
    /// What the drift reported last (`reported`) was measured against — the record then — and
    /// the resources it named; `nil` when not known (a drift replayed after a kill). When it ends
    /// with the watch still differing from that record in the same resources, the record took
    /// the change: accepted, not undone.
    var reportedAgainst: (record: DeviceState, addresses: Set<ResourceAddress>)?
    /// Whether the record was refreshed to drift the manifest accepts (`Monitor.accept`) since
    /// the drift was reported (so its end is the manifest's doing).
    var accepted = false
    /// The drifted resources (masked addresses) a heal's apply left as the watch holds them
    /// (`HealOutcome.applied`'s `notHealed`): its end is that apply recording them, not a heal.
    var notHealed: [String] = []
    /// Healing gave up (the watch keeps drifting back) while the manifest had this digest.
    var suspendedFor: String?
    /// The last heal failed after a write over the drift reached the watch (`heal`): when the
    /// drift ends, the heal ended it (`resolved`, `healed: true`), not the wearer.
    var failedHealWroteOverDrift = false
    /// The last heal's words for a contact change the watch announced while it wrote
    /// (`Reconcile.changedDuringApply`), said with that heal's outcome.
    var changedDuringHeal: String?
    var budget: ApplyBudget
    /// The last manifest problem reported, so each is reported once.
    var manifestProblem: String?
    var noRecordNoted = false
    /// Whether this monitor forwards the watch's SOS: the long-running one (`run()`) listens
    /// for it, a single check (`checkOnce()`, `--once`) listens to nothing, so its notes must
    /// not say SOS is still forwarded.
    var forwardsSOS = false
  }

  /// Reads the manifest and the watch, reports drift and its end, heals when asked.
  private func check(_ watch: Watch, _ tracking: inout Tracking) async -> CheckResult {
    let document: ManifestDocument
    if let provider = settings.manifestProvider {
      switch provider() {
      case .success(let supplied): document = supplied
      // A watch the fleet file no longer names: no alert; its monitor is being stopped.
      case .failure(let problem) where problem.notManaged: return .failed(problem.errors.first?.message ?? "no longer managed")
      case .failure(let problem): return await manifestProblem(problem.errors, watch: watch, &tracking)
      }
    } else {
      let loaded = ManifestLoader.load(path: settings.manifestPath, displayName: settings.manifestName)
      guard let manifest = loaded.manifest, let bytes = loaded.source else {
        return await manifestProblem(loaded.diagnostics.filter { $0.severity == .error }, watch: watch, &tracking)
      }
      document = ManifestDocument(manifest: manifest, warnings: loaded.diagnostics.filter { $0.severity == .warning },
                                  bytes: bytes, path: settings.manifestPath)
    }
    if settings.manifestProvider != nil { shownManifest.set(document.manifest.file) }
    let bytes = document.bytes
    var report: DriftReport
    do {
      report = try await watch.drift(document)
    } catch {
      switch error {
      case .device(let deviceError): return .offline(deviceError)
      case .invalid(let input): return await manifestProblem(input.diagnostics.filter { $0.severity == .error }, watch: watch, &tracking)
      default: return .failed(mask(error.description))
      }
    }
    // The manifest usable again: a drift reported while it was not (`reconcile: invalid`) is
    // reported anew with what healing does about it now.
    if tracking.manifestProblem != nil, let reported = tracking.reported { tracking.reported = ("", reported.id, reported.addresses) }
    tracking.manifestProblem = nil
    // The wearer's change the manifest now holds is recorded, and is no longer drift.
    if let left = await accept(watch, document, report: report) {
      report.drift = left
      tracking.accepted = true
    }
    // Told before the events of a check that finds drift, and after the `resolved` of one that
    // finds it over: that event, in the log, is what closes the drift alert (`Alerts`).
    let check = MonitorCheck(time: now(), hasRecord: report.hasRecord, drift: report.drift.count,
                             pending: report.unapplied.count, holdsManifest: report.holdsManifest,
                             sosAtRisk: report.drift.contains { $0.address == .emergency })
    if !report.hasRecord || !report.drift.isEmpty { checked?(check) }
    guard report.hasRecord else {
      if !tracking.noRecordNoted {
        tracking.noRecordNoted = true
        // "SOS is still forwarded" only by a monitor that forwards it (not `--once`), where the
        // watch reports SOS at all (not on Npk).
        let forwarded = tracking.forwardsSOS && !(locked { refusals.contains(Listener.sos.rawValue) })
        notice("No record of an apply to \(watch.identity): drift cannot be told until tsapply applies a manifest to it"
          + (forwarded ? " (SOS is still forwarded)." : "."))
      }
      return .clean
    }
    tracking.noRecordNoted = false
    guard !report.drift.isEmpty else {
      if let reported = tracking.reported {
        var fields: [String: JSONValue] = ["drift_id": .string(reported.id), "healed": .bool(tracking.healed)]
        var message = tracking.healed ? "the drift is healed: the watch holds what the last apply left" : "the watch holds what the last apply left again"
        // Not healed, and the watch still holds what changed: the record took it (drift --adopt,
        // or an apply that recorded the watch as it is) — accepted, not undone on the watch
        // ("again" said so after an adoption: fresh-eyes finding).
        let stillHeld = !tracking.healed && tracking.reportedAgainst.map { reported in
          let now = Drift.changes(since: reported.record, current: report.state, capabilities: watch.capabilities)
          return !now.isEmpty && Set(now.map(\.address)) == reported.addresses
        } == true
        if tracking.accepted {
          fields["accepted"] = .bool(true)
          message = "\(manifestName) now holds what changed on the watch: the change is accepted, and recorded as what the last apply left"
        } else if stillHeld && tracking.notHealed.isEmpty {
          fields["accepted"] = .bool(true)
          message = "the watch still holds what changed, now recorded as what the last apply left (adopted into \(manifestName) "
            + "with 'tsapply drift --adopt', or taken by an apply): the change is accepted"
        } else if !tracking.notHealed.isEmpty {
          fields["not_healed"] = .array(tracking.notHealed.map(JSONValue.string))
          message = "the drift in \(tracking.notHealed.joined(separator: ", ")) is not healed: the heal's apply recorded it as the watch holds it "
            + "(\(manifestName) does not set what changed)"
        }
        emit(.resolved, watch: watch.identity, message: message, fields: fields)
      }
      checked?(check)
      tracking.reported = nil
      tracking.reportedAgainst = nil
      tracking.healed = false
      tracking.accepted = false
      tracking.notHealed = []
      tracking.lastHeal = nil
      tracking.retryWaiting = nil
      tracking.suspendedFor = nil
      return .clean
    }
    var changes = JSONPlanRenderer.changes(report.drift, redact: false)
    let signature = SHA256Digest.hex(of: Array(MonitorEvent.compact(changes).utf8))
    let manifestDigest = SHA256Digest.hex(of: bytes)
    let isNew = signature != tracking.reported?.signature
    if let suspended = tracking.suspendedFor, suspended != manifestDigest { tracking.suspendedFor = nil }
    // When it was found: the drift event's time, however long a heal takes.
    let detected = now()
    var shown = PhoneRedaction.Mask(redact: !settings.showSensitive, manifest: bytes, changes: report.drift)
    var outcome = HealOutcome.off
    if settings.reconcile {
      let key = signature + manifestDigest
      if tracking.suspendedFor != nil {
        outcome = .rateLimited
      } else if key == tracking.lastHeal?.key, let waiting = tracking.retryWaiting, case .retrying(_, _, let due?) = waiting, now() < due {
        // Retried at the next periodic check, not at every reconnect: a flaky link that drops at
        // each attempt retried it as fast as the monitor reconnects.
        outcome = waiting
      } else if key != tracking.lastHeal?.key || tracking.lastHeal?.retry == true {
        let attempt = tracking.lastHeal.map { $0.key == key && $0.retry ? $0.attempts + 1 : 1 } ?? 1
        if isNew { keepHealIntent(report, changes: changes, watch: watch, mask: shown, at: detected) }
        outcome = await heal(watch, document, report: report, attempt: attempt, &tracking)
        tracking.lastHeal = (key, outcome.retryable, outcome.retryable ? attempt : 0)
        tracking.retryWaiting = outcome.retryable ? outcome : nil
        if case .rateLimited = outcome { tracking.suspendedFor = manifestDigest }
      } else {
        outcome = .unchanged
      }
    }
    // What the heal's own read found changed beside what this check read — the wearer changed
    // more meanwhile — is reported with it: nothing a heal undoes goes unreported (fresh-eyes
    // finding: a contact removed 0.2 s after the emergency list was healed back unreported).
    var foundByHeal = false
    if case .applied(let applied, _, _) = outcome {
      let extra = applied.plan.resourceDrift.filter { change in !report.drift.contains { $0.address == change.address } }
      if !extra.isEmpty {
        foundByHeal = true
        report.drift = (report.drift + extra).sorted { $0.address < $1.address }
        changes = JSONPlanRenderer.changes(report.drift, redact: false)
        shown = PhoneRedaction.Mask(redact: !settings.showSensitive, manifest: bytes, changes: report.drift)
      }
    }
    // The same drift, reported refused, failed or given up on, and its manifest changed since:
    // what healing does about it now is said anew (a drift event that supersedes it), so the
    // page and the alerts do not keep a refusal the manifest no longer makes (fresh-eyes finding).
    let outcomeChanged = !isNew && tracking.reported != nil && ["unsafe", "failed", "rate_limited"].contains(tracking.reportedOutcome ?? "")
      && outcome.word != "unchanged" && outcome.word != tracking.reportedOutcome
    let driftID: String
    if isNew || outcomeChanged || foundByHeal {
      var event = driftEvent(report, changes: changes, outcome: outcome, watch: watch, mask: shown, at: detected)
      let addresses: [JSONValue] = if case .array(let named)? = event.fields["addresses"] { named } else { [] }
      // The drift reported before, not over (no `resolved`) but changed — a heal wrote part of
      // it, or the wearer changed more: this event replaces it, and says what of it is no longer
      // drift, so a receiver that tracks drift by id closes the earlier one.
      if let earlier = tracking.reported {
        event.fields["supersedes"] = .string(earlier.id)
        let settled = earlier.addresses.filter { !addresses.contains($0) }
        if !settled.isEmpty { event.fields["no_longer_drifted"] = .array(settled) }
      }
      emitEvent(event)
      unlink(watch.home.monitorHealPath)
      driftID = event.id
      tracking.reported = (signature, event.id, addresses)
      tracking.reportedAgainst = watch.lastApplied().map { (record: $0, addresses: Set(report.drift.map(\.address))) }
      tracking.reportedOutcome = outcome.word
      tracking.healed = false
      tracking.accepted = false
      tracking.notHealed = []
    } else {
      driftID = tracking.reported?.id ?? ""
    }
    if tracking.failedHealWroteOverDrift {
      tracking.healed = true
      tracking.failedHealWroteOverDrift = false
    }
    switch outcome {
    case .applied(let applied, let heldBack, let notHealed):
      let healed = shown.adding(applied.plan)
      let words = HealWords(drift: report.drift, applied: applied, notHealed: notHealed, manifest: manifestName, mask: healed)
      tracking.healed = notHealed.isEmpty
      tracking.notHealed = words.notHealed
      var fields: [String: JSONValue] = [
        "drift_id": .string(driftID), "added": .integer(applied.added), "changed": .integer(applied.changed),
        "destroyed": .integer(applied.destroyed), "backup": applied.backupPath.map(JSONValue.string) ?? .null,
        "addresses": .array(applied.plan.resourceChanges.map { .string(healed.text($0.address.rawValue)) }),
      ]
      if !notHealed.isEmpty { fields["not_healed"] = .array(words.notHealed.map(JSONValue.string)) }
      if let heldBack {
        fields["held_back"] = .array(heldBack.addresses.map { .string(healed.text($0.rawValue)) })
        fields["held_back_reason"] = .string(heldBack.reason)
      }
      if let during = tracking.changedDuringHeal { fields["changed_during_apply"] = .string(during) }
      emit(.applied, watch: watch.identity,
           message: "\(words.applied): \(applied.added) added, \(applied.changed) changed, \(applied.destroyed) destroyed"
             + (applied.backupPath.map { " (backup \($0))" } ?? "") + words.appliedLeft + (heldBack.map { healed.message($0.text) } ?? "")
             + (tracking.changedDuringHeal.map { "; " + $0 } ?? ""),
           fields: fields)
      mailbox.post(.recheck)
    case .failed(let message) where !isNew:
      emit(.error, watch: watch.identity, message: "healing the drift failed again: \(message)",
           fields: ["reason": .string("apply"), "reconcile": .string(outcome.word), "drift_id": .string(driftID), "error": .string(message)])
    case .retrying(let message, let attempt, _) where !isNew && attempt == 1:
      // Said when the drift's heal turns transient (its manifest changed); later attempts that
      // fail the same way are the state the drift event and this already told.
      emit(.error, watch: watch.identity, message: "healing the drift \(outcome.retryText)",
           fields: outcome.retryFields.merging(["reason": .string("apply"), "reconcile": .string(outcome.word), "drift_id": .string(driftID),
                                                "error": .string(message)]) { $1 })
    default:
      break
    }
    switch outcome {
    case .failed(let message): return .drifted(healFailed: "healing the drift failed: \(message)")
    case .retrying: return .drifted(healFailed: "healing the drift \(outcome.retryText)")
    default: return .drifted(healFailed: nil)
    }
  }

  /// A manifest that cannot be used: said once (an `error` event, `reason: manifest`), and the
  /// watch still compared with what the last apply left (`Watch.driftSinceRecord`: drift needs
  /// no manifest), so a change on the watch — SOS switched off — is reported while the manifest
  /// has errors (`reconcile: invalid`: nothing is healed until it is fixed; what it still asks
  /// of the watch is not known, `pending: null`), and its end too.
  private func manifestProblem(_ errors: [Diagnostic], watch: Watch, _ tracking: inout Tracking) async -> CheckResult {
    let text = errors.prefix(3).map { mask($0.description) }.joined(separator: "; ")
      + (errors.count > 3 ? "; and \(errors.count - 3) more" : "")
    // A fleet's watch: the files with the errors, not the watch's usual name for its manifests.
    let files = Array(Set(errors.compactMap { $0.position?.file })).sorted()
    let name = settings.manifestProvider != nil && !files.isEmpty ? files.joined(separator: ", ") : manifestName
    let message = "cannot use \(name): \(text.isEmpty ? "it could not be read" : text); nothing is healed or applied until it is fixed"
    if tracking.manifestProblem != message {
      tracking.manifestProblem = message
      emit(.error, watch: watch.identity, message: message, fields: ["reason": .string("manifest")])
    }
    let found: (drift: [ResourceChange], lastWrite: LastWrite)?
    do { found = try await watch.driftSinceRecord() } catch {
      if case .device(let deviceError) = error { return .offline(deviceError) }
      return .failed(message)
    }
    guard let drift = found?.drift else { return .failed(message) }
    if drift.isEmpty {
      if let reported = tracking.reported {
        emit(.resolved, watch: watch.identity, message: "the watch holds what the last apply left again",
             fields: ["drift_id": .string(reported.id), "healed": .bool(false)])
        tracking.reported = nil
      }
      return .failed(message)
    }
    let changes = JSONPlanRenderer.changes(drift, redact: false)
    let signature = SHA256Digest.hex(of: Array(MonitorEvent.compact(changes).utf8))
    guard signature != tracking.reported?.signature else { return .failed(message) }
    let shown = PhoneRedaction.Mask(redact: !settings.showSensitive, manifest: [], changes: drift)
    let addresses = drift.map { JSONValue.string(shown.text($0.address.rawValue)) }
    var fields: [String: JSONValue] = [
      "changes": settings.showSensitive ? changes : JSONPlanRenderer.masked(changes, of: drift),
      "addresses": .array(addresses), "reconcile": .string("invalid"), "pending": .null,
    ]
    if let earlier = tracking.reported { fields["supersedes"] = .string(earlier.id) }
    let event = MonitorEvent(time: now(), watch: watch.identity, kind: .drift,
                             message: "\(Reconcile.driftSummary(drift, address: shown.address)) changed on the watch since the last apply; "
                               + "not healed: \(name) cannot be used, so nothing is applied until it is fixed",
                             fields: fields)
    emitEvent(event)
    tracking.reported = (signature, event.id, addresses)
    tracking.reportedAgainst = watch.lastApplied().map { (record: $0, addresses: Set(drift.map(\.address))) }
    return .failed(message)
  }

  // MARK: Reporting

  private func emitOnline(_ watch: Watch, listening: [Listener: String], offlineFor: TimeInterval?) {
    let heard = Listener.allCases.filter { listening[$0] == "listening" }.map(\.reports)
    let polled = Listener.allCases.filter { listening[$0] == "polled" }.map(\.reports)
    var message = offlineFor.map { String(format: "the watch answers again after %.1fs; ", $0) } ?? ""
    message += "watching \(watch.identity) (\(watch.capabilities.profile)): "
    message += heard.isEmpty ? "no listener; " : "listening for \(heard.joined(separator: ", ")); "
    message += "reading the watch every \(Self.text(settings.interval))"
    if !polled.isEmpty { message += " (\(polled.joined(separator: ", ")) found that way)" }
    if listening[.sos] == "unsupported" {
      message += "; this platform cannot report SOS presses"
      if !notifiers.isEmpty && locked({ () -> Bool in defer { warnedNoSOS = true }; return !warnedNoSOS }) {
        notice("Warning: \(watch.capabilities.profile) watches cannot report SOS presses (docs/platforms.md \"Listeners\"), so --on-sos and --webhook can never run for this watch.")
      }
    }
    var fields: [String: JSONValue] = [
      "profile": .string(watch.capabilities.profile),
      "listeners": .object(Dictionary(uniqueKeysWithValues: listening.map { ($0.key.rawValue, JSONValue.string($0.value)) })),
      "interval_seconds": .number(Backoff.seconds(settings.interval)),
      "reconcile": .bool(settings.reconcile),
      "has_record": .bool(watch.lastApplied() != nil),
    ]
    if let offlineFor { fields["offline_seconds"] = .number((offlineFor * 1000).rounded() / 1000) }
    emit(.online, watch: watch.identity, message: message, fields: fields)
  }

  func emit(_ kind: MonitorEvent.Kind, watch: String, message: String, fields: [String: JSONValue] = [:]) {
    emitEvent(MonitorEvent(time: now(), watch: watch, kind: kind, message: message, fields: fields))
  }

  /// Phone-like text masked unless `showSensitive`: for what can quote a manifest or a
  /// contact (diagnostics, apply failures). Device and delivery errors are shown as they are:
  /// they name no contact, and masking would hide the addresses and ports they do name.
  func mask(_ text: String, sparing spared: String? = nil) -> String {
    settings.showSensitive ? text : PhoneRedaction.redactPhoneLike(text, sparing: spared)
  }

  func now() -> Date { engine.now() }

  private func chosenSpec() -> String {
    engine.registry.chosenSpec(settings.deviceSpec, environment: engine.environment).spec
  }

  private func locked<T>(_ body: () -> T) -> T {
    lock.lock()
    defer { lock.unlock() }
    return body()
  }

  /// Errors of opening a watch that retrying cannot cure: the simulator's own (a missing or
  /// corrupted state file, bad simulation settings) and an unknown scheme (1004).
  static func isSetupError(_ error: EngineError) -> Bool {
    guard case .device(let device) = error else { return true }
    return device.domain == .simulator || device.code == .sdkConfigError
  }

  static func deviceError(_ error: EngineError) -> DeviceError? {
    if case .device(let device) = error { device } else { nil }
  }

  static func reason(_ error: EngineError) -> String { "\(error)" }

  /// `5m`, `1m30s`, `200ms`: a duration as `--interval` spells it.
  static func text(_ duration: Duration) -> String {
    let milliseconds = Int64((Backoff.seconds(duration) * 1000).rounded())
    if milliseconds % 1000 != 0 { return "\(milliseconds)ms" }
    var seconds = milliseconds / 1000
    var text = ""
    if seconds >= 3600 { text += "\(seconds / 3600)h"; seconds %= 3600 }
    if seconds >= 60 { text += "\(seconds / 60)m"; seconds %= 60 }
    if seconds > 0 || text.isEmpty { text += "\(seconds)s" }
    return text
  }
}

/// The stop request a monitor's heals run with: asks the engine to stop between device calls
/// once the monitor is stopping. Installs nothing (the front-end owns the signal handlers).
struct MonitorStop: StopRequest {
  let monitor: Monitor
  func begin() {}
  var isRequested: Bool { monitor.isStopping }
  func end() {}
}

/// Why a monitor did not run (or `--once` did not check).
public enum MonitorError: Error, Sendable, CustomStringConvertible {
  /// The watch could not be opened: named wrongly, not set up, or (for `--once`) unreachable.
  case open(EngineError)
  /// Another monitor watches this watch.
  case locked(LockFailure)
  /// The watch's state folder cannot be written.
  case records(SecureFileError)
  /// The check could not be made (the manifest cannot be used, or the check failed).
  case check(String)

  public var description: String {
    switch self {
    case .open(let error): "\(error)"
    case .locked(.held(let holder, _, _)):
      "another tsapply monitor watches this watch" + (holder.map { ": \($0)" } ?? "") + "; one monitor per watch"
    case .locked(let failure): "\(failure)"
    case .records(let error): "cannot keep tsapply's records for this watch: \(error)"
    case .check(let message): message
    }
  }
}
