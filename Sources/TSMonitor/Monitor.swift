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
  let shownManifest: Locked<String>
  public var manifestName: String { shownManifest.value }
  /// Who hears about SOS presses.
  public let notifiers: [any Notifier]
  let emitEvent: @Sendable (MonitorEvent) -> Void
  /// `emit` as given, for an event that names its watch already (`delivered`).
  let emitNamed: @Sendable (MonitorEvent) -> Void
  let notice: @Sendable (String) -> Void
  let checked: (@Sendable (MonitorCheck) -> Void)?
  let mailbox = Mailbox()
  /// What the monitor's listener hears, handed to its heals: a contact change made on the watch
  /// while a heal writes is said in the heal's event, not written over in silence.
  let announcements = WatchAnnouncements()
  private let lock = NSLock()
  var generation = 0
  var stopping = false
  /// `retire()` was called (and no `stop()` since): deliver the outbox before `run()` returns.
  private var retiring = false
  var session: Session?
  var refusals: Set<String> = []
  /// The events of failed and recovered deliveries (`DeliveryEvents`).
  let deliveryEvents = DeliveryEvents()
  private var warnedNoSOS = false
  var handledWriteFailed = false
  /// Taken while one watch event is handled, so events are numbered and recorded in order.
  let eventLock = NSLock()
  /// When the periodic read is due next (`run()`'s ticker); `nil` outside `run()` (`--once`:
  /// the next check is the next run).
  let nextPoll = Locked<Date?>(nil)

  /// The outbox and delivery of the watch being monitored, set on first connecting.
  struct Session {
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
    emitNamed = emit
    self.notice = notice
    self.checked = checked
  }

  /// `event` naming its watch `name` (`MonitorSettings.watchName`), the identity it named moved
  /// to `device`; unchanged when it names `name` already.
  static func named(_ event: MonitorEvent, _ name: String?) -> MonitorEvent {
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
    // The watch's last-applied record, watched from its first session: an apply by another
    // process (a person's `tsapply apply`) is read at once, not at the next interval (fresh-eyes
    // fe92: the page said "drift" minutes after an apply undid it).
    var recordWatch: FileChanges.Registration?
    var backoff = Backoff(settings.reconnect)
    var offlineSince: Date?
    var connectNow = true
    var retry: Task<Void, Never>?
    var failure: MonitorError?
    // When a check last read the watch; and the outage an earlier run of this monitor noticed
    // and never saw end (`HandledEvents.Outage`): a restarted monitor goes on with it while the
    // watch stays out of reach, its time and last seen as they were (fresh-eyes finding: "offline
    // since" the restart, "last seen" empty, and not listed for `--offline-after` more).
    // Its last seen is kept too (`HandledEvents.seen`), so a monitor restarted after the watch
    // went away still says when it was last read (fresh-eyes finding: "last seen" empty).
    var lastAnswered: Date?
    let identity = engine.canonicalSpec(chosenSpec())
    // Read when first needed — the watch out of reach — so a start where every watch answers
    // does not read each record twice (`begin` reads it for the session). Once the watch has
    // answered, the outage kept is over.
    var keptRecord: (outageSince: Date?, lastSeen: Date?, sosAtRisk: Bool)??
    var keptOutageOver = false
    func kept() -> (outageSince: Date?, lastSeen: Date?, sosAtRisk: Bool)? {
      if case .some(let record) = keptRecord { return record }
      let record = HandledEvents.kept(of: identity, engine: engine)
      keptRecord = .some(record)
      return record
    }
    var keptOutage: Date? { keptOutageOver ? nil : kept()?.outageSince }

    func goOffline(_ reason: String, error: DeviceError?) {
      if offlineSince == nil {
        let found = now()
        let since = keptOutage ?? found
        let seen = lastAnswered ?? kept()?.lastSeen
        offlineSince = since
        // What its last read found, said while it cannot be read (the page, after a restart too).
        let fields = Self.offlineFields(error, reason: reason, since: since, lastSeen: seen,
                                        sosAtRisk: lastAnswered != nil ? tracking.sosAtRisk : kept()?.sosAtRisk == true)
        if let handled = locked({ session?.handled }) {
          if let lastAnswered { try? handled.seen(lastAnswered, sosAtRisk: tracking.sosAtRisk, exactly: true) }
          try? handled.outage(since: since, lastSeen: seen)
        }
        emitEvent(MonitorEvent(time: found, watch: locked { session?.identity } ?? identity, kind: .offline,
                               message: "cannot reach the watch: \(reason); trying again with backoff"
                                 + (keptOutage == nil ? "" : " (out of reach since \(InternetTime.text(since)), found by this monitor before it was restarted)"),
                               fields: fields))
      }
      retry = mailbox.post(.retry, after: backoff.next())
    }

    // What an earlier run left undelivered goes out now, and an outage is kept, whether or not
    // the watch answers.
    monitorLock = await beginEarly(identity)
    // Whether the watch was opened once (its session started for it).
    var opened1st = false
    loop: while !isStopping {
      if watch == nil && connectNow {
        connectNow = false
        // The lock held by a monitor still stopping when this one started (its grace for
        // deliveries): the session begins as soon as it is free, not once the watch answers
        // (fresh-eyes finding: a press left in the outbox waited for the watch to come back).
        if monitorLock == nil { monitorLock = await beginEarly(identity) }
        do {
          let opened = try await engine.open(settings.deviceSpec, mayCreate: false)
          // This monitor's first session with a watch it has been waiting for (unreachable, or
          // not made yet, since `offlineSince`): what the watch reported meanwhile is replayed.
          let waitedSince = opened1st ? nil : offlineSince
          let firstSession = !opened1st
          if !opened1st {
            do { monitorLock = try await startSession(opened, early: monitorLock) } catch {
              await opened.close()
              failure = error
              break loop
            }
            opened1st = true
          }
          current = locked { generation += 1; return generation }
          let listening = await register(opened, generation: current, waitedSince: waitedSince)
          watch = opened
          // `online` once a read of the watch succeeds (`Tracking.unconfirmedOnline`): the check
          // posted now reads it first; until then the outage goes on (its time, its backoff).
          tracking.unconfirmedOnline = (listening, offlineSince.map { now().timeIntervalSince($0) })
          // A monitor killed while it healed, or stopped with a drift open: its drift is taken
          // up now, and the next check says how it ended (`resolved`, or a drift event that
          // supersedes it). At the first session only: what a reconnect finds is this monitor's own.
          if firstSession {
            replayInterruptedHeal(opened, &tracking)
            recordWatch = FileChanges.shared?.watch(opened.home.lastAppliedPath) { [mailbox] in mailbox.post(.recorded) }
          }
          mailbox.post(.recheck)
        } catch {
          // A watch tsapply applied to before is out of reach, not misconfigured: an outage,
          // tried again, its outbox delivered meanwhile (fresh-eyes finding: exit 1, the SOS
          // left undelivered), as `checkOnce` judges it.
          if !opened1st, Self.isSetupError(error), !settings.retriesFirstOpen, engine.lastWrite(ofUnopened: chosenSpec()) == nil {
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
      guard wakes.contains(.poll) || wakes.contains(.changed) || wakes.contains(.recheck) || wakes.contains(.recorded) else { continue }
      let confirming = tracking.unconfirmedOnline != nil
      let checked = await check(connected, &tracking)
      keepOpenDrift(connected, &tracking)
      if case .offline(let error) = checked {
        await drop(connected)
        watch = nil
        goOffline(error.description, error: error)
        continue
      }
      // A check that did not read the watch (its manifest cannot be used) says nothing of it:
      // the connection is taken as it stands, as before.
      confirmOnline(connected, &tracking)
      let answered = now()
      lastAnswered = answered
      if let handled = locked({ session?.handled }) { try? handled.seen(answered, sosAtRisk: tracking.sosAtRisk) }
      if confirming {
        offlineSince = nil
        backoff.reset()
        keptOutageOver = true
        if let handled = locked({ session?.handled }), handled.current.outage != nil { try? handled.outage(since: nil, lastSeen: nil) }
      }
    }
    if let lastAnswered, watch != nil, let handled = locked({ session?.handled }) {
      try? handled.seen(lastAnswered, sosAtRisk: tracking.sosAtRisk, exactly: true)
    }
    ticker.cancel()
    recordWatch?.cancel()
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
    // Out of reach, said in the outputs too (`--json`, `--events`), not only on stderr: a cron
    // job reading them saw nothing (fresh-eyes finding). The exit status stays 1.
    // With what a monitor last knew of it (`HandledEvents.kept`), as a running monitor says it.
    func unreachable(_ error: DeviceError, watch identity: String) {
      let kept = HandledEvents.kept(of: identity, engine: engine)
      emit(.offline, watch: identity, message: "cannot reach the watch: \(error.message); the next run of 'tsapply monitor --once' tries again",
           fields: Self.offlineFields(error, reason: error.message, since: kept?.outageSince ?? now(), lastSeen: kept?.lastSeen,
                                      sosAtRisk: kept?.sosAtRisk == true))
    }
    let watch: Watch
    do { watch = try await engine.open(settings.deviceSpec, mayCreate: false) } catch {
      // An outage (a bridge out of reach, or the state file of a watch tsapply applied to gone),
      // not a misconfiguration (no simulated watch there, never applied to).
      if case .device(let device) = error, device.isTransient || engine.lastWrite(ofUnopened: chosenSpec()) != nil {
        unreachable(device, watch: engine.canonicalSpec(chosenSpec()))
      }
      throw .open(error)
    }
    var tracking = Tracking(budget: ApplyBudget(limit: settings.maxAppliesPerHour))
    // An earlier run killed while it healed: its drift is reported, and this check says how it ended.
    replayInterruptedHeal(watch, &tracking)
    let result = await check(watch, &tracking)
    // A heal that wrote and verified: the watch read once more, as a running monitor's recheck
    // does, so the drift's end is said (`resolved`) — a cron log never saw it (fresh-eyes
    // finding). The exit status stays that of the check that found the drift.
    if case .drifted(nil) = result, settings.reconcile, tracking.healed {
      let again = await check(watch, &tracking)
      // That read failing, the heal's own read-back — which verified every write — is the last
      // read of the watch, and found the drift over: said so, as `resolved`, not left open for
      // good (fresh-eyes finding: nothing after `applied`, and the next cron run said nothing).
      if case .offline(let error) = again, let reported = tracking.reported, tracking.notHealed.isEmpty, !tracking.accepted {
        emit(.resolved, watch: watch.identity,
             message: "the drift is healed: the heal's read-back found the watch holding what it wrote (the read after it failed: \(error.message))",
             fields: ["drift_id": .string(reported.id), "healed": .bool(true)])
        tracking.reported = nil
      }
    }
    keepOpenDrift(watch, &tracking)
    await watch.close()
    switch result {
    case .clean: return false
    // A heal that failed is an error for cron (exit 1), not drift it can leave to the next run.
    case .drifted(let healFailed?): throw .check(healFailed)
    case .drifted(nil): return true
    case .offline(let error):
      unreachable(error, watch: watch.identity)
      throw .open(.device(error))
    case .failed(let message): throw .check(message)
    }
  }

  /// Reports the drift a monitor was healing when it was killed (`HealIntent`), as the drift
  /// reported last, so the next check ends it (`resolved`) or supersedes it.
  /// A drift an earlier `--once` run reported and left open is taken up the same way, not sent
  /// again.
  private func replayInterruptedHeal(_ watch: Watch, _ tracking: inout Tracking) {
    guard let kept = HealIntent.take(watch.home.monitorHealPath) else { return }
    if !kept.sent { emitEvent(kept.event) }
    let addresses: [JSONValue] = if case .array(let named)? = kept.event.fields["addresses"] { named } else { [] }
    tracking.reported = ("", kept.event.id, addresses)
    tracking.reportedAgainst = nil
    // An apply made while no monitor ran is told as having written over it (fresh-eyes fe94 D3).
    tracking.reportedHistory = kept.history
    // Found over by the next check, the drift was ended by the killed heal's writes (the wearer
    // undoing just that in the same moment is not the likely story): `resolved` says healed.
    tracking.healed = kept.sent ? kept.healed : true
  }

  /// Keeps the drift reported last and not seen end (a heal that failed or could not be
  /// verified, no `--reconcile`) in `monitor-heal.json`, so the next `--once` run or the next
  /// monitor (this one stopped or killed) ends it (`resolved`) or replaces it (`supersedes`) — a
  /// receiver tracking drift by id had it open for good (fresh-eyes findings, fe91 #2: one open
  /// drift per restart); removes it once the drift ended. Writes only when that drift changed
  /// (`Tracking.keptOpen`), so a check that finds the same drift writes nothing.
  private func keepOpenDrift(_ watch: Watch, _ tracking: inout Tracking) {
    guard tracking.keptOpen != tracking.reported?.id else { return }
    tracking.keptOpen = tracking.reported?.id
    guard let reported = tracking.reported else {
      unlink(watch.home.monitorHealPath)
      return
    }
    let event = MonitorEvent(time: now(), watch: watch.identity, kind: .drift, id: reported.id, message: "",
                             fields: ["addresses": .array(reported.addresses)])
    try? HealIntent.write(event, to: watch.home.monitorHealPath, sent: true, healed: tracking.healed, history: tracking.reportedHistory)
  }

  /// Takes the monitor lock, prepares the state folder and starts delivering what the outbox
  /// holds — or, when `beginEarly` began the session already (its lock held), prepares
  /// the folder for the watch's platform and goes on with that session.
  private func startSession(_ watch: Watch, early: WatchLock?) async throws(MonitorError) -> WatchLock {
    do { try watch.home.prepare(profile: watch.capabilities.profile) } catch { throw .records(error) }
    if let early {
      if locked({ session?.identity == watch.identity }) {
        locked { session?.profile = watch.capabilities.profile }
        return early
      }
      // Its spec named the watch otherwise than its identity (`bridge:NAME` without a watch ID):
      // the session moves to the watch's own folder.
      early.release()
    }
    let held: WatchLock
    do {
      held = try await WatchLock.acquire(at: watch.home.monitorLockPath,
                                         holder: WatchLock.currentHolder(command: settings.commandLine, now: now()),
                                         timeout: .zero)
    } catch {
      throw .locked(error)
    }
    await begin(identity: watch.identity, profile: watch.capabilities.profile, home: watch.home)
    return held
  }

  /// Starts the session of the watch `identity` names before the watch is opened, when its
  /// state folder exists (tsapply applied to it or monitored it before), taking the monitor
  /// lock: what an earlier run left in its outbox is delivered now, not once the watch answers
  /// (fresh-eyes finding: a monitor restarted during an outage — the power back, the phone not
  /// yet — held an undelivered press until the watch came back), and an outage found before the
  /// watch first answers is kept (`HandledEvents.outage`), so a restart goes on with it
  /// (fresh-eyes finding: "offline since" each restart, out of "needs attention" again). `nil`
  /// when there is no folder, or another monitor holds the lock (opening the watch then says
  /// so). A spec whose canonical form is not the watch's identity (`bridge:NAME` without a
  /// watch ID) finds no folder here, and starts its session once open.
  private func beginEarly(_ identity: String) async -> WatchLock? {
    let home = WatchHome(identity: identity, root: engine.stateRoot)
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: home.directory, isDirectory: &isDirectory), isDirectory.boolValue,
          let held = try? await WatchLock.acquire(at: home.monitorLockPath, holder: WatchLock.currentHolder(command: settings.commandLine, now: now()),
                                                  timeout: .zero) else { return nil }
    await begin(identity: identity, profile: "", home: home)
    return held
  }

  /// Makes the session of the watch `identity` (of platform `profile`, `""` before it was
  /// opened) whose records are in `home`, and starts delivering what its outbox holds.
  private func begin(identity: String, profile: String, home: WatchHome) async {
    let outbox = Outbox(directory: home.outboxDirectory)
    let delivery = Delivery(outbox: outbox, notifiers: notifiers, policy: settings.delivery) { [weak self] report in
      self?.delivered(report)
    }
    let handled = HandledEvents(path: home.monitorEventsPath, watch: identity)
    if let problem = handled.problem {
      emit(.error, watch: identity, message: "cannot use \(handled.path): \(problem); events the watch reported while no monitor listened are not replayed this time, and the file is replaced",
           fields: ["reason": .string("handled_events"), "file": .string(handled.path)])
    }
    locked {
      session = Session(identity: identity, profile: profile, outbox: outbox, delivery: delivery, handled: handled)
    }
    let (entries, unreadable) = outbox.entries()
    for file in unreadable {
      emit(.error, watch: identity, message: "cannot read the outbox entry \(file); it is left there for a person to look at",
           fields: ["reason": .string("outbox"), "file": .string(file)])
    }
    if !entries.isEmpty {
      notice(notifiers.isEmpty
        ? "\(entries.count) undelivered SOS event\(entries.count == 1 ? "" : "s") wait in \(outbox.directory); no notifier is configured (--on-sos, --webhook)."
        : "Delivering \(entries.count) SOS event\(entries.count == 1 ? "" : "s") left in the outbox by an earlier run.")
      // Said again first: the run that stored a press may have been killed before it said it
      // (fresh-eyes finding: delivered, and never on the page nor in the log).
      for press in entries.compactMap(\.leftPress) { emit(press, pressedBy: press.watch) }
      for entry in entries { await delivery.start(entry) }
    }
  }

  /// Stops listening to `watch` (its handlers are ignored from now on) and releases it.
  private func drop(_ watch: Watch) async {
    locked { generation += 1 }
    await watch.close()
  }

  // MARK: Reporting

  /// Tells the `online` event of the connection waiting for a read of the watch, if any.
  func confirmOnline(_ watch: Watch, _ tracking: inout Tracking) {
    guard let online = tracking.unconfirmedOnline else { return }
    tracking.unconfirmedOnline = nil
    emitOnline(watch, listening: online.listening, offlineFor: online.offlineFor)
  }

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

  func chosenSpec() -> String {
    engine.registry.chosenSpec(settings.deviceSpec, environment: engine.environment).spec
  }

  func locked<T>(_ body: () -> T) -> T {
    lock.lock()
    defer { lock.unlock() }
    return body()
  }

  /// Errors of opening a watch that retrying cannot cure: the simulator's own (a missing or
  /// corrupted state file, bad simulation settings) and an unknown scheme (1004).
  /// An `offline` event's fields (docs/monitor.md "Events"): the device's `error`, `domain` and
  /// `code` (or `reason` as `error`), `since`, `last_seen` when known, `sos_at_risk` when its
  /// last read found it.
  static func offlineFields(_ error: DeviceError?, reason: String, since: Date, lastSeen: Date?, sosAtRisk: Bool) -> [String: JSONValue] {
    var fields: [String: JSONValue] = error.map { ["error": .string($0.message), "domain": .string($0.domain.rawValue), "code": .integer($0.code.rawValue)] }
      ?? ["error": .string(reason)]
    fields["since"] = .string(InternetTime.text(since))
    if let lastSeen { fields["last_seen"] = .string(InternetTime.text(lastSeen)) }
    if sosAtRisk { fields["sos_at_risk"] = .bool(true) }
    return fields
  }

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
