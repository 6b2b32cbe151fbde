import Foundation
import TSBridge
import TSDevice
import TSHTTPClient
import TSModel

/// The client side of `GET /v1/watches/{id}/events`: one Server-Sent Events stream feeding the
/// device's listeners. The bytes come through the project's libcurl client (`HTTPClient`, which
/// waits in `poll`: no CPU while the stream is quiet); they are opened and dispatched on a
/// thread of this stream's own, so a slow listener never holds up other transfers. Each event is opened with the pairing key
/// (bound to this stream's request and its id) before it reaches a handler; one that does not
/// open is dropped. When the stream ends, breaks or stays silent for `idleSeconds` it reconnects
/// (after 1 s, then up to 10 s between tries) with `Last-Event-ID`, so no event is lost while
/// the bridge still holds it; so it does when an event's number skips one (dropped on the way),
/// and says what was missed when the same gap comes twice; an event over `maxEventBytes` drops
/// the stream (docs/bridge-protocol.md "Events"). A stream made `after` an event id starts with `Last-Event-ID`, so a
/// listener resumes where an earlier one (another process) stopped. Thread-safe.
final class BridgeEventStream: @unchecked Sendable {
  enum Handler {
    case contacts(@Sendable (Result<[Contact], DeviceError>) -> Void)
    case emergency(@Sendable (Result<[Contact], DeviceError>) -> Void)
    case sos(@Sendable (DeviceError?) -> Void)
    /// `Device.listen(to:after:_:)`: the events of its kinds with their ids, and the resume point.
    case listener(Set<DeviceEvent.Kind>, @Sendable (ListenerReport) -> Void)

    /// Whether it hears what `listener` reports (so its refusal concerns it).
    func hears(_ listener: ListenerRefusal.Listener) -> Bool {
      switch self {
      case .contacts: listener == .contacts
      case .emergency: listener == .emergencyContacts
      case .sos: listener == .sos
      case .listener(let kinds, _): kinds.contains(listener.eventKind)
      }
    }
  }

  /// Seconds without a byte after which the stream is taken for dead and opened again: three
  /// of the bridge's keep-alives (every 15 s of silence) missed, so a stream silenced on the way
  /// is found within 45 s (docs/bridge-protocol.md "Events").
  static let idleSeconds = 45.0

  /// Most bytes one event (its `id:` and `data:` lines) may take before its blank line: far
  /// over the largest the bridge sends (a sealed list of contacts), and the bound on what is
  /// held of a stream. A longer one — sent by anything on the path, before a seal could be
  /// checked — drops the stream, which is opened again (docs/bridge-protocol.md "Events").
  static let maxEventBytes = 1 << 20

  let transport: BridgeTransport
  let path: String
  private let lock = NSLock()
  private var handlers: [Handler] = []
  private var refusals: [ListenerRefusal.Listener: DeviceError] = [:]
  private var lastEventID: String?
  /// The last id this stream reconnected from because the next event skipped numbers: if the
  /// same gap comes again, the events are gone (`ListenerReport.missed`).
  private var reconnectedForGap: String?
  private var transfer: HTTPClientTransfer?
  private var stopped = false
  private let wake = NSCondition()
  /// Whether the stream's first connection came to something — its first sealed message opened
  /// (where it stands: `resumePoint` or `replayFrom`), or it was refused or failed — and who
  /// waits for that (`opened(within:)`).
  private var settled: Bool?
  private var waitingToSettle: [CheckedContinuation<Bool, Never>] = []

  /// A stream of the events at `path`, resuming after the event id `after` (`nil`: new events
  /// only, after a `resumePoint`).
  init(transport: BridgeTransport, path: String, after: String? = nil) {
    self.transport = transport
    self.path = path
    lastEventID = after
  }

  func add(_ handler: Handler) {
    let refused = lock.withLock { () -> [(ListenerRefusal.Listener, DeviceError)] in
      handlers.append(handler)
      return refusals.filter { handler.hears($0.key) }.sorted { $0.key.rawValue < $1.key.rawValue }.map { ($0.key, $0.value) }
    }
    for (listener, error) in refused { Self.deliver(.failure(error), of: listener, to: handler) }
  }

  func start() {
    let thread = Thread { [self] in run() }
    thread.stackSize = 1 << 20
    thread.start()
  }

  func stop() {
    let transfer = lock.withLock { () -> HTTPClientTransfer? in
      stopped = true
      return self.transfer
    }
    transfer?.cancel()
    wake.lock()
    wake.broadcast()
    wake.unlock()
    settle(hearing: false)
  }

  private var isStopped: Bool { lock.withLock { stopped } }

  /// Returns once the stream hears the watch — its first sealed message opened, so every event
  /// from then on reaches the listeners: `true` — or its first connection was refused or failed
  /// (the listeners are told as usual), or after `seconds` at most: `false`. An apply writes only after it,
  /// so that a change made on the watch during its first write is heard on a slow link too
  /// (fresh-eyes finding: the stream connected after the write, and the change written over
  /// went unsaid).
  func opened(within seconds: Double) async -> Bool {
    await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
      let outcome = lock.withLock { () -> Bool? in
        if let settled { return settled }
        waitingToSettle.append(continuation)
        return nil
      }
      if let outcome { return continuation.resume(returning: outcome) }
      DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [weak self] in self?.settle(hearing: false) }
    }
  }

  /// The first connection came to something — its first message heard (`hearing`), or not —
  /// or the wait for it ended: wakes those waiting (the first outcome stands).
  private func settle(hearing: Bool) {
    let (waiting, outcome) = lock.withLock { () -> ([CheckedContinuation<Bool, Never>], Bool) in
      if settled == nil { settled = hearing }
      defer { waitingToSettle = [] }
      return (waitingToSettle, settled ?? hearing)
    }
    waiting.forEach { $0.resume(returning: outcome) }
  }

  /// How long a stream must stay open to count as holding; and how long it may keep failing
  /// (refused, cut, silent) before its listeners are told events are not being heard
  /// (`ListenerReport.interrupted`): anything on the path can keep it breaking, and an SOS held
  /// back so must not look like a quiet watch (fresh-eyes finding).
  static let holdsAfter: TimeInterval = 30
  static let troubleReportedAfter: TimeInterval = 20

  /// Since when the stream keeps breaking (`nil` while it holds), and whether that was said.
  private var troubleSince: Date?
  private var troubleReported = false
  /// Whether the listeners were told a stream brings events again (`ListenerReport.reopened`)
  /// since the trouble was said, and it has not broken again.
  private var reopenedSaid = false
  /// The seconds between heartbeats the bridge's last heartbeat gave, on any of its streams
  /// (`nil`: none heard yet).
  private var heartbeatEvery: Double?
  /// The seconds between heartbeats: as the bridge last gave them, else a third of `idleSeconds`.
  private var heartbeat: Double { heartbeatEvery ?? Self.idleSeconds / 3 }

  /// Opens the stream, reads it until it ends, and opens it again, until `stop()`.
  private func run() {
    // 1 s after a stream that ended normally or a first failure, then doubling up to 10 s
    // (docs/bridge-protocol.md "Events"), jittered so many clients of one bridge spread out.
    var backoff = Backoff(Backoff.Policy(initial: .seconds(1), maximum: .seconds(10)))
    while !isStopped {
      let opened = Date()
      let (flowed, lastHeard, ending) = readOnce()
      settle(hearing: false)
      if flowed { backoff.reset() }
      // Ended before it held (refused, cut, gone silent): trouble, said once it has lasted —
      // since it broke: for a stream gone silent, after the last sealed message it brought
      // (fresh-eyes finding: a stream that had held for 40 s and was then cut was said to be
      // breaking since it opened); for one cut or refused, when that happened (fresh-eyes
      // finding: two sub-second cuts were said to be breaking since a healthy stream's last
      // message, and raised the alert at once). A stream closed on purpose to ask again for an
      // event it skipped (`gap`) is no break (it flipped the page to "Not hearing").
      if !isStopped, ending != .gap, Date().timeIntervalSince(opened) < Self.holdsAfter || !flowed {
        // A stream cut after it went quiet longer than a heartbeat was not heard from then on
        // (fresh-eyes finding: a path that cut each stream just before it counted as silent
        // held a press back 104 s, the trouble counted only from each cut).
        let quietSince = lastHeard.map { $0.addingTimeInterval(heartbeat) }
        let since = troubleSince ?? (ending == .silent ? lastHeard ?? opened : min(Date(), quietSince ?? Date()))
        troubleSince = since
        // Said once it has lasted; said again when a stream that brought events again
        // (`reopened`) breaks before it held.
        if troubleReported ? reopenedSaid : Date().timeIntervalSince(since) >= Self.troubleReportedAfter { reportTrouble() }
      }
      guard !isStopped else { return }
      let delay = Backoff.seconds(backoff.next())
      wake.lock()
      if !isStopped { _ = wake.wait(until: Date(timeIntervalSinceNow: delay)) }
      wake.unlock()
    }
  }

  /// Tells the listeners events are not being heard since `troubleSince`.
  private func reportTrouble() {
    guard let since = troubleSince else { return }
    troubleReported = true
    reopenedSaid = false
    dispatchToListeners(.interrupted("the event stream through the bridge keeps breaking (refused, cut, silent or held back) since "
                                     + InternetTime.text(since) + "; it is reopened, and what was missed is replayed once it holds"))
  }

  /// A stream open since `opened` brought bytes: after the trouble was said, its events are
  /// heard again from now (`ListenerReport.reopened`: a page stops saying they are not heard —
  /// fresh-eyes finding: "Not hearing" for 30 s while presses were delivered); once it has been
  /// open `holdsAfter`, the trouble is over (`ListenerReport.resumed` when it was said).
  private func held(since opened: Date) {
    guard troubleSince != nil else { return }
    if troubleReported, !reopenedSaid {
      reopenedSaid = true
      dispatchToListeners(.reopened)
    }
    guard Date().timeIntervalSince(opened) >= Self.holdsAfter else { return }
    troubleSince = nil
    reopenedSaid = false
    if troubleReported {
      troubleReported = false
      dispatchToListeners(.resumed)
    }
  }

  /// One connection: whether the bridge answered 200 and events flowed, and when it last
  /// brought a sealed message (`nil`: none).
  /// How a stream ended: silent (no sealed message in time, or nothing at all until the idle
  /// limit), closed on purpose to ask again for a skipped event (`gap`), or otherwise (cut,
  /// refused, ended by the bridge).
  enum Ending { case silent, gap, other }

  private func readOnce() -> (flowed: Bool, lastHeard: Date?, ending: Ending) {
    let opened = Date()
    let lastEventID = lock.withLock { self.lastEventID }
    let sealed = transport.sealer.seal([], for: .request(method: "GET", path: path, lastEventID: lastEventID))
    var headers = [(BridgeProtocol.versionHeader, BridgeProtocol.version), ("Accept", BridgeProtocol.eventStreamType),
                   (BridgeProtocol.sealHeader, Data(sealed.bytes).base64EncodedString())]
    if let lastEventID { headers.append(("Last-Event-ID", lastEventID)) }
    let pieces = Pieces()
    let request = HTTPClientRequest(method: "GET", url: transport.url(path), headers: headers, timeout: transport.timeout,
                                    reuseConnection: false)
    let transfer = HTTPClient.shared.stream(request, idle: Self.idleSeconds, receive: { [weak self] piece in
      pieces.push(piece)
      if case .head(let head) = piece, head.status != 200 { return false }
      return self.map { !$0.isStopped } ?? false
    }, completion: { pieces.finish($0) })
    let registered = lock.withLock { () -> Bool in
      guard !stopped else { return false }
      self.transfer = transfer
      return true
    }
    defer { lock.withLock { self.transfer = nil } }
    guard registered else {
      transfer.cancel()
      return (false, nil, .other)
    }
    var ending = Ending.other
    var buffer: [UInt8] = []
    var scanned = 0
    var answered = false
    var flowed = false
    // Opened with `Last-Event-ID` on a bridge that marks where its replay starts (1.4): nothing
    // is taken before that mark (`replayFrom`), so an event dropped at the very start is seen.
    var started = true
    // On a bridge that sends heartbeats (1.5), the stream must bring a sealed message every
    // `sealedSilence` seconds: keep-alives are not sealed, so something on the path that passes
    // them and drops every event would otherwise keep a dead stream open. Such a stream holds
    // (`held(since:)`) only by its sealed messages.
    var sealedSilence: Double?
    var sealedAt = Date()
    var lastHeard: Date?
    var counter: UInt64?
    // When this stream's first sealed message was opened: it holds 30 s from then, not from
    // when it opened (fresh-eyes finding: a first message held back 40 s was "resumed" at once).
    var firstHeard: Date?
    while true {
      // While earlier streams' trouble goes on unsaid, this one is watched for it too: it is
      // said once it has lasted, if this stream has brought no sealed message for a heartbeat
      // (fresh-eyes finding: a stream that was held back and then delivered never broke, so
      // the trouble was never said).
      let troubleDue = troubleReported ? nil : troubleSince.map {
        max($0.addingTimeInterval(Self.troubleReportedAfter), sealedAt.addingTimeInterval(heartbeat))
      }
      let silentDue = sealedSilence.map { sealedAt.addingTimeInterval($0) }
      guard let item = pieces.next(until: [troubleDue, silentDue].compactMap { $0 }.min()) else {
        if let troubleDue, Date() >= troubleDue {
          reportTrouble()
          if silentDue.map({ Date() < $0 }) ?? true { continue }
        }
        // Silenced on the way: opened again from the last event heard.
        ending = .silent
        transfer.cancel()
        answered = false
        sealedSilence = nil
        continue
      }
      switch item {
      case .piece(.head(let head)):
        answered = head.status == 200
        let minor = head.headers[BridgeProtocol.versionHeader.lowercased()].flatMap(BridgeProtocol.minor) ?? 0
        started = lastEventID == nil || minor < 4
        sealedSilence = answered && minor >= 5 ? Self.idleSeconds : nil
        sealedAt = Date()
      case .piece(.data(let bytes)):
        guard answered else { continue }
        if sealedSilence == nil { held(since: firstHeard ?? opened) }
        buffer += bytes
        let reading = receive(&buffer, scanned: &scanned, requestNonce: sealed.nonce, started: &started, counter: &counter)
        if let heard = reading.heard {
          settle(hearing: true)
          sealedAt = heard.at
          lastHeard = heard.at
          firstHeard = firstHeard ?? heard.at
          heartbeatEvery = heard.every ?? heartbeatEvery
          if sealedSilence != nil {
            sealedSilence = heard.every.map { max(0.5, 3 * $0) } ?? sealedSilence
            // A heartbeat that names an event not heard proves events were lost: no holding.
            if reading.outcome == .reading { held(since: firstHeard ?? opened) }
          }
        }
        switch reading.outcome {
        case .reading: break
        case .gap:
          // Opened again at once from the last event heard: the bridge sends what was skipped.
          flowed = true
          ending = .gap
          transfer.cancel()
          answered = false
        case .tooLong:
          transfer.cancel()
          answered = false
          buffer = []
        case .heldBack:
          // As a stream gone silent: a break, counted from its last message in time.
          ending = .silent
          transfer.cancel()
          answered = false
          buffer = []
        }
      case .end(let failure):
        if failure == .timedOut, ending == .other { ending = .silent }
        return (flowed || (answered && failure == nil), lastHeard, ending)
      }
    }
  }

  /// What reading a stream's bytes came to; `heldBack`: a sealed message came later than its
  /// seal allows (`isHeldBack`).
  enum Outcome { case reading, gap, tooLong, heldBack }

  /// Whether a sealed message sealed at `sealed` (the bridge's clock, milliseconds since 1970)
  /// and opened at `now` (this machine's) was held back on the way: older than the clock window
  /// two clocks may differ by (`BridgeProtocol.timeWindowSeconds`, as for requests) and one
  /// heartbeat (`every` seconds). Something on the path can pass every message in order yet
  /// fewer than the bridge sends, so the stream never falls silent while its backlog grows
  /// (fresh-eyes finding: a press heard 3 min 50 s late, with no alarm); a heartbeat alone
  /// does not say when it was sent, but its seal does.
  static func isHeldBack(sealed: UInt64, now: Date, every: Double) -> Bool {
    now.timeIntervalSince1970 - Double(sealed) / 1000 > Double(BridgeProtocol.timeWindowSeconds) + every
  }

  /// What reading a stream's bytes came to, and when a sealed message was last opened in them
  /// (`heard`, with the seconds between heartbeats the last heartbeat among them gave).
  struct Reading {
    var outcome: Outcome
    var heard: (at: Date, every: Double?)?
  }

  /// What the client's thread hands this stream's thread: the answer's pieces in order, then its end.
  private final class Pieces: @unchecked Sendable {
    enum Item { case piece(HTTPClientPiece), end(HTTPClientError?) }
    private let condition = NSCondition()
    private var items: [Item] = []

    func push(_ piece: HTTPClientPiece) { add(.piece(piece)) }
    func finish(_ failure: HTTPClientError?) { add(.end(failure)) }

    private func add(_ item: Item) {
      condition.lock()
      items.append(item)
      condition.signal()
      condition.unlock()
    }

    /// The next item, waiting for it until `deadline` (`nil` when none came by then).
    func next(until deadline: Date?) -> Item? {
      condition.lock()
      defer { condition.unlock() }
      while items.isEmpty {
        if let deadline {
          if !condition.wait(until: deadline) && items.isEmpty { return nil }
        } else {
          condition.wait()
        }
      }
      return items.removeFirst()
    }
  }

  /// Opens and dispatches every complete event in `buffer`, leaving the rest; `scanned` bytes
  /// of it are known to hold no event's end (each byte is looked at once). `.tooLong` when what
  /// is left is over `maxEventBytes`; `.gap` when an event's number skips one after the last
  /// heard, or a heartbeat names an event not heard (dropped on the way, or no longer held):
  /// the events after it are not dispatched, and the stream is opened again from the last
  /// heard — the second time the same gap comes, the listeners are told what was missed and
  /// the stream goes on.
  /// `started`: the stream's `replayFrom` was heard (or none is expected); an event or a
  /// heartbeat before it is taken as a gap at the start.
  /// `counter`: the counter of the last sealed message opened on this stream; a message whose
  /// counter does not come after it is a copy sent again on the way (the seal does not stop
  /// one), dropped unread — a heartbeat sent again in place of the new ones is no sign of life
  /// (fresh-eyes finding: a press held back for as long as the path liked).
  private func receive(_ buffer: inout [UInt8], scanned: inout Int, requestNonce: [UInt8], started: inout Bool,
                       counter: inout UInt64?) -> Reading {
    var heard: (at: Date, every: Double?)?
    while let end = Self.eventEnd(in: buffer, from: scanned) {
      let block = String(decoding: buffer[..<end.start], as: UTF8.self)
      buffer.removeFirst(end.next)
      scanned = 0
      var id: String?
      var payload = ""
      for line in block.split(separator: "\n", omittingEmptySubsequences: true) {
        if line.hasPrefix("id:") { id = line.dropFirst(3).trimmingCharacters(in: .whitespaces) }
        if line.hasPrefix("data:") { payload += line.dropFirst(5).trimmingCharacters(in: .whitespaces) }
      }
      guard !payload.isEmpty, let bytes = Data(base64Encoded: payload), let message = SealedMessage(bytes: Array(bytes)),
            let plaintext = transport.sealer.open(message, for: .event(requestNonce: requestNonce, id: id ?? "")),
            counter.map(message.comesAfter(counter:)) ?? true else { continue }
      counter = message.counter
      // Held back on the way: nothing more is taken from this stream (it is opened again from
      // the last event heard, and the bridge sends what follows afresh).
      if Self.isHeldBack(sealed: message.timestampMilliseconds, now: Date(), every: heartbeat) {
        return Reading(outcome: .heldBack, heard: heard)
      }
      // A type this client does not know still moves the last id heard.
      let event = BridgeJSON.decode(BridgeEvent.self, from: plaintext)
      heard = (Date(), event?.type == .heartbeat ? event?.every : heard?.every)
      if event?.type == .heartbeat {
        // Sent after every event up to `newest` (the bridge's mark of a replay's start
        // first): one not heard was dropped on the way, though no later event shows it.
        started = true
        guard let newest = event?.newest, let last = lock.withLock({ lastEventID }), Self.isBehind(last, newest: newest) else { continue }
        guard secondTime(last) else { return Reading(outcome: .gap, heard: heard) }
        dispatchMissed(after: DeviceEventID(rawValue: last), before: DeviceEventID(rawValue: Self.after(newest)))
        lock.withLock { lastEventID = newest }
        continue
      }
      // Where the replay starts: the numbers go on from there, whatever id was asked after.
      if let id, event?.type == .replayFrom {
        let last = lock.withLock { () -> String? in
          defer { lastEventID = id }
          return lastEventID
        }
        started = true
        // Asked after an event of another start of the bridge (it was restarted, the phone's app
        // killed): what happened on the watch while none ran is in no log, and the SDK keeps no
        // history — said as missed, not passed over (fresh-eyes finding: a press made while the
        // bridge was down was lost without a word, after "forwarded late, once they are").
        if let last, DeviceEventID(rawValue: last).isOfAnotherStart(than: DeviceEventID(rawValue: id)) {
          dispatchMissed(after: DeviceEventID(rawValue: last), before: DeviceEventID(rawValue: Self.after(id)))
        }
        // Where this stream stands now, for a listener that keeps it: listening after it later
        // misses nothing of this start, and a later start of the bridge is told missed — also
        // for a listener that asked for everything (a monitor that has heard no event yet lost
        // a press made while the bridge was down, without a word: fresh-eyes finding), and
        // never the same gap twice (a monitor restarted after one was told it again).
        dispatchToListeners(.resumePoint(DeviceEventID(rawValue: id)))
        continue
      }
      if let id, event?.type != .resumePoint {
        let last = lock.withLock { lastEventID }
        // An event before the mark of where the replay starts: the mark was dropped on the way.
        if !started, let last {
          started = true
          guard secondTime(last) else { return Reading(outcome: .gap, heard: heard) }
          dispatchMissed(after: DeviceEventID(rawValue: last), before: DeviceEventID(rawValue: id))
        }
        // Heard already (sent again on the way: the seal does not stop a copy): dropped, so one
        // press is one SOS (fresh-eyes finding: a copied event became 101 SOS events).
        if let last, Self.isHeard(id, after: last) { continue }
        if let last, Self.skips(from: last, to: id) {
          guard secondTime(last) else { return Reading(outcome: .gap, heard: heard) }
          dispatchMissed(after: DeviceEventID(rawValue: last), before: DeviceEventID(rawValue: id))
        }
      }
      if let id { lock.withLock { lastEventID = id } }
      if let event { dispatch(event, id: id.map(DeviceEventID.init(rawValue:))) }
    }
    scanned = max(0, buffer.count - 3)
    return Reading(outcome: buffer.count > Self.maxEventBytes ? .tooLong : .reading, heard: heard)
  }

  /// Whether `newest` (a heartbeat's) comes after `last` in the same start of the bridge: events
  /// up to it were sent and not heard.
  static func isBehind(_ last: String, newest: String) -> Bool {
    sequences(from: last, to: newest).map { $0.to > $0.from } ?? false
  }

  /// The id after `id` in its start (`BOOT-SEQUENCE` + 1): the first event not yet sent.
  static func after(_ id: String) -> String {
    let parts = id.split(separator: "-", maxSplits: 1)
    guard parts.count == 2, let sequence = Int(parts[1]) else { return id }
    return "\(parts[0])-\(sequence + 1)"
  }

  /// Whether event `id` comes after `last` with numbers between them missing: the same start of
  /// the bridge (`BOOT-SEQUENCE`, docs/bridge-protocol.md "Events"), a sequence more than one
  /// further. An id from another start, or one not in that form, is no gap that can be told.
  static func skips(from last: String, to id: String) -> Bool {
    sequences(from: last, to: id).map { $0.to > $0.from + 1 } ?? false
  }

  /// Whether the stream was opened again from `last` for a gap already (so what is missing is
  /// gone); records that it is, now.
  private func secondTime(_ last: String) -> Bool {
    lock.withLock { () -> Bool in
      defer { reconnectedForGap = last }
      return reconnectedForGap == last
    }
  }

  /// Whether event `id` is `last` or comes before it in the same start of the bridge.
  static func isHeard(_ id: String, after last: String) -> Bool {
    sequences(from: last, to: id).map { $0.to <= $0.from } ?? false
  }

  /// The SEQUENCEs of `last` and `id` when both are `BOOT-SEQUENCE` of one start.
  private static func sequences(from last: String, to id: String) -> (from: Int, to: Int)? {
    let before = last.split(separator: "-", maxSplits: 1), after = id.split(separator: "-", maxSplits: 1)
    guard before.count == 2, after.count == 2, before[0] == after[0], let from = Int(before[1]), let to = Int(after[1]) else { return nil }
    return (from, to)
  }

  private func dispatchMissed(after: DeviceEventID, before: DeviceEventID) {
    dispatchToListeners(.missed(after: after, before: before))
  }

  /// `report` to every `listen(to:after:_:)` handler.
  private func dispatchToListeners(_ report: ListenerReport) {
    for handler in lock.withLock({ handlers }) {
      if case .listener(_, let call) = handler { call(report) }
    }
  }

  /// The end of the first complete event in `bytes` (a blank line) and where the next begins,
  /// looking from `from` on (what is before it holds none).
  static func eventEnd(in bytes: [UInt8], from: Int = 0) -> (start: Int, next: Int)? {
    guard bytes.count >= 2 else { return nil }
    var index = from
    while index + 1 < bytes.count {
      if bytes[index] == 0x0A && bytes[index + 1] == 0x0A { return (index, index + 2) }
      if index + 3 < bytes.count, bytes[index] == 0x0D, bytes[index + 1] == 0x0A, bytes[index + 2] == 0x0D, bytes[index + 3] == 0x0A {
        return (index, index + 4)
      }
      index += 1
    }
    return nil
  }

  private func dispatch(_ event: BridgeEvent, id: DeviceEventID?) {
    let targets = lock.withLock { () -> [Handler] in
      if event.type == .listenerRefused, let refusal = event.refusal {
        guard refusals[refusal.listener] == nil else { return [] }
        refusals[refusal.listener] = refusal.error.deviceError
        return handlers.filter { $0.hears(refusal.listener) }
      }
      return handlers
    }
    for handler in targets {
      switch (event.type, handler) {
      case (.listenerRefused, _):
        if let refusal = event.refusal { Self.deliver(.failure(refusal.error.deviceError), of: refusal.listener, to: handler) }
      case (.resumePoint, .listener(_, let call)):
        if let id { call(.resumePoint(id)) }
      case (.contactsChanged, .listener(let kinds, let call)) where kinds.contains(.contactsChanged):
        call(.event(DeviceEvent(id: id, kind: .contactsChanged, contacts: event.contacts ?? [], time: event.date)))
      case (.emergencyContactsChanged, .listener(let kinds, let call)) where kinds.contains(.emergencyContactsChanged):
        call(.event(DeviceEvent(id: id, kind: .emergencyContactsChanged, contacts: event.contacts ?? [], time: event.date)))
      case (.sosRequested, .listener(let kinds, let call)) where kinds.contains(.sosRequested):
        call(.event(DeviceEvent(id: id, kind: .sosRequested, time: event.date)))
      case (.contactsChanged, .contacts(let call)), (.emergencyContactsChanged, .emergency(let call)):
        call(.success(event.contacts ?? []))
      case (.sosRequested, .sos(let call)):
        call(nil)
      default:
        break
      }
    }
  }

  private static func deliver(_ result: Result<[Contact], DeviceError>, of listener: ListenerRefusal.Listener, to handler: Handler) {
    switch handler {
    case .contacts(let call), .emergency(let call): call(result)
    case .sos(let call):
      if case .failure(let error) = result { call(error) } else { call(nil) }
    case .listener(_, let call):
      if case .failure(let error) = result { call(.failed(listener.eventKind, error)) }
    }
  }
}
