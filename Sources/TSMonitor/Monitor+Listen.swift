import Foundation
import TSApply
import TSDevice
import TSEngine
import TSManifest
import TSModel
import TSPlan

// Listening: the listeners a watch's platform has, what the monitor does with each event they
// report (a check, an SOS press into the outbox), and what it records as handled so a restart
// replays what it missed (docs/monitor.md "Missed events", "SOS").
extension Monitor {
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
  func register(_ watch: Watch, generation: Int, waitedSince: Date? = nil) async -> [Listener: String] {
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
    // A press made before this moment, heard by a listener that resumed, was replayed: made
    // while no monitor listened (this one's first session), or while this one could not reach
    // the watch (waiting for it, or a later session after the link dropped: fresh-eyes finding,
    // presses during a 0.2 s reconnect were said to be made while no monitor listened).
    let resumedAt = after == nil ? nil : now()
    let replayed = generation == 1 && waitedSince == nil ? "pressed before this monitor listened, heard by no monitor then" : "pressed while this monitor could not reach the watch"
    // Whether the watch's events are not being heard (`interrupted`, until `resumed`): a press
    // heard late meanwhile was replayed once its stream reopened, and is marked so as after any
    // other outage (fresh-eyes finding: no `replayed` after an event stream held back).
    let unheard = Locked(false)
    await watch.device.listen(to: kinds, after: after) { [weak self] report in
      guard let self, self.isCurrent(generation) else { return }
      self.announcements.heard(report)
      switch report {
      case .resumePoint(let id):
        self.eventLock.withLock { self.locked { self.session?.handled }?.resumeAfter(id) }
      case .event(let event) where event.kind == .sosRequested
        && Self.pressed(event.time, before: waited, untimedIsOlder: firstStart):
        // Pressed before this monitor waited for the watch: not this monitor's to deliver.
        self.eventLock.withLock { self.locked { self.session?.handled }?.resumeAfter(event.id) }
      case .event(let event) where event.kind == .sosRequested:
        if unheard.value {
          self.sosPressed(watch: identity, profile: profile, deviceEvent: event.id, pressedAt: event.time,
                          resumedAt: self.now().addingTimeInterval(-Self.heardLateAfter), replayed: "pressed while this monitor could not hear the watch's events")
        } else {
          self.sosPressed(watch: identity, profile: profile, deviceEvent: event.id, pressedAt: event.time, resumedAt: resumedAt, replayed: replayed)
        }
      case .event(let event):
        self.mailbox.post(.changed)
        // A missed change needs no replay (connecting checks the watch anyway), only the record.
        self.eventLock.withLock { self.locked { self.session?.handled }?.resumeAfter(event.id) }
      case .failed(let kind, let error):
        self.listenerFailed(Listener(kind), error, generation: generation)
      case .interrupted(let why):
        unheard.set(true)
        self.emit(.error, watch: identity, message: "the watch's events are not being heard: \(why); an SOS pressed meanwhile is forwarded "
                    + "late, once they are — check the network between this monitor and the phone",
                  fields: ["reason": .string("events_down"), "error": .string(why)])
      case .reopened:
        self.emit(.online, watch: identity, message: "the watch's events are heard again from a reopened stream (what was missed meanwhile "
                    + "is replayed); they count as back once it has held 30 s",
                  fields: ["events": .string("reopened")])
      case .resumed:
        unheard.set(false)
        self.emit(.online, watch: identity, message: "the watch's events are heard again (what was missed meanwhile is replayed)",
                  fields: ["events": .string("resumed")])
      case .missed(let after, let before):
        // What the watch reported meanwhile is lost too (a reset watch may hold anything): read it now.
        self.mailbox.post(.changed)
        let cause = ListenerReport.missedCause(after: after, before: before)
        let tell = {
          self.emit(.error, watch: identity, message: "the watch's events after \(after) and before \(before) never reached this monitor "
                      + "and cannot be had again (\(cause.text)): any SOS pressed in that gap was not forwarded (whether there was one is not known); ask the wearer"
                      + (cause.restarted ? "" : ", and check the network between this monitor and the phone"),
                    fields: ["reason": .string("events_missed"), "after": .string(after.rawValue), "before": .string(before.rawValue)])
        }
        // Once per gap: each telling would be one more "SOS?" card for it.
        guard let session = self.locked({ self.session }) else { return tell() }
        do throws(SecureFileError) { try session.handled.tellOnce(gapAfter: after, before: before, tell) } catch { self.handledNotRecorded(error, session: session) }
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
  private func recordHandled(_ id: DeviceEventID?, sequence: Int?) {
    guard let session = locked({ self.session }), id != nil || sequence != nil else { return }
    do {
      try session.handled.handled(id, sequence: sequence)
    } catch {
      handledNotRecorded(error, session: session)
    }
  }

  /// Reports, once for the monitor's life, that the record of events handled cannot be written.
  private func handledNotRecorded(_ error: SecureFileError, session: Session) {
    guard locked({ () -> Bool in defer { handledWriteFailed = true }; return !handledWriteFailed }) else { return }
    emit(.error, watch: session.identity,
         message: "cannot record the last event handled (\(error)); a restarted monitor may report events again",
         fields: ["reason": .string("handled_events"), "file": .string(session.handled.path)])
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
  /// (`resumedAt`), replayed from the watch's history; `replayed` says when it was pressed, in words.
  /// One already in the outbox (the same device event, replayed after a crash before it was
  /// recorded) is only recorded: the outbox delivers it. Its number skips every id the outbox
  /// holds (`HandledEvents.nextSOS(skipping:)`).
  private func sosPressed(watch: String, profile: String, deviceEvent: DeviceEventID?, pressedAt: Date?, resumedAt: Date?,
                          replayed: String = "pressed before this monitor listened, heard by no monitor then") {
    eventLock.lock()
    defer { eventLock.unlock() }
    guard let session = locked({ self.session }) else { return }
    // The press stored by a run killed before it recorded it, heard again: the outbox delivers
    // it. Told by the device's id of the press — never by the number this run would give it,
    // which a press made since (the watch reset) could get too (fresh-eyes finding: a new press
    // dropped as the stored one, never said nor delivered).
    if !notifiers.isEmpty, let deviceEvent, let stored = session.outbox.entry(deviceEvent: deviceEvent.rawValue) {
      recordHandled(deviceEvent, sequence: HandledEvents.pressNumber(of: stored.id)?.number)
      notice("SOS \(stored.id) was heard again after a restart; it is already in the outbox and delivered from there.")
      return
    }
    let (sequence, id) = session.handled.nextSOS { session.outbox.entry($0) != nil }
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
      message += " (replayed: \(replayed))"
    }
    // Named as its events are before it goes in the outbox: the notifiers get what the log shows.
    let event = Self.named(MonitorEvent(time: pressed, watch: watch, kind: .sos, id: id, message: message, fields: fields),
                           settings.watchName)
    let entry = Outbox.Entry(id: event.id, body: event.jsonLine)
    if !notifiers.isEmpty {
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

  /// Emits `event`, about a press of this monitor's outbox — the press itself, left there by an
  /// earlier run (`Outbox.Entry.leftPress`), or its delivery — under the name the press was made
  /// under (`pressedBy`, its outbox entry's `watch`): after two watches swapped devices, a press
  /// left in a device's outbox is delivered by the monitor of the watch that has the device now,
  /// and is still the resident's who pressed it; `delivered_by` names this monitor's watch then
  /// (fresh-eyes finding: its failure shown on the other resident's row).
  func emit(_ event: MonitorEvent, pressedBy: String?) {
    guard let name = settings.watchName, let pressedBy, pressedBy != name else {
      emitEvent(event)
      return
    }
    var named = Self.named(event, pressedBy)
    named.fields["delivered_by"] = .string(name)
    emitNamed(named)
  }

  /// The name the press `id` of the outbox was made under.
  private func pressedBy(_ id: String) -> String? { locked { session?.outbox }?.entry(id)?.pressedBy }

  func delivered(_ report: Delivery.Report) {
    let identity = locked { session?.identity } ?? chosenSpec()
    switch report {
    case .attemptFailed(let id, let notifier, let attempt, let reason, let retryIn, _):
      notice("SOS \(id): \(notifier) failed (attempt \(attempt)): \(reason); trying again in \(Self.text(retryIn)).")
      if let event = deliveryEvents.event(for: report, watch: identity, at: now()) { emit(event, pressedBy: pressedBy(id)) }
    case .delivered(let id, let notifier, let attempts, _):
      notice("SOS \(id): delivered to \(notifier)\(attempts > 1 ? " (attempt \(attempts))" : "").")
      if let event = deliveryEvents.event(for: report, watch: identity, at: now()) { emit(event, pressedBy: pressedBy(id)) }
    case .completed(let id):
      notice("SOS \(id): every notifier succeeded; removed from the outbox.")
    case .outboxFailed(let id, let error):
      emit(.error, watch: identity, message: "cannot update the outbox entry of SOS \(id): \(error); it may be delivered again",
           fields: ["reason": .string("outbox"), "event_id": .string(id)])
    }
  }
}
