import Foundation
import TSBridge
import TSDevice
import TSModel

/// A watch behind a bridge (protocol v1, docs/bridge-protocol.md), reached through the project's
/// libcurl client (`HTTPClient`):
/// every `Device` call is one sealed `POST /v1/watches/{id}/call`, `readState` one round trip,
/// `capabilities()` none (the listing gave them), listeners one Server-Sent Events stream.
///
/// Failures a user can trust:
/// - no answer within `timeout` seconds: 6001 in the call's SDK domain;
/// - the connection broke after the request left (or the answer did not authenticate): 9310
///   (`com.topstepcomkit.bleConnect`); for a write, the message says it may or may not have
///   reached the watch, for a read that the watch is unchanged by it;
/// - the bridge cannot be reached at all: 2003 (the request never left);
/// - the protocol's own refusals: `tsapply.bridge` with the HTTP status (401 wrong key or clock,
///   404 unknown watch, 409 leased, …).
///
/// Reads are retried twice with backoff (0.2 s, then 0.6 s) on those link failures, and a read
/// whose kept-alive connection closed under it is first sent again at once on a new one. Writes are
/// never retried: a write whose answer was lost (6001, 9310) may have happened, and the engine
/// reads the watch back to find out (`Applier`, docs/apply.md "When a write's answer is lost").
public final class BridgeDevice: LeasableDevice, DeviceAccounting, @unchecked Sendable {
  /// `bridge:BRIDGE-ID/AA:BB:CC:DD:EE:FF`: a spec that opens the same watch again.
  public let identity: String
  /// The watch's MAC-style id.
  public let watchID: String
  /// The bridge's id.
  public let bridgeID: String
  /// The listing entry read when connecting (platform, connection, capabilities).
  public let info: WatchInfo
  let caller: BridgeCaller
  var transport: BridgeTransport { caller.transport }
  private let lock = NSLock()
  private var lease: (token: String, holder: LockHolder)?
  /// The number of the last call made under `lease` (`CallRequest.sequence`).
  private var leaseCalls = 0
  /// Until when `lease` is known to live: its last answered request (grant or renewal) was sent
  /// then, plus the time to live it was answered with; the bridge counts from no earlier.
  private var leaseLivesUntil: ContinuousClock.Instant?
  private var events: BridgeEventStream?
  private var resumableStreams: [BridgeEventStream] = []

  /// Default seconds to wait for an answer (`TSAPPLY_BRIDGE_TIMEOUT`).
  public static let defaultTimeout = 10.0

  init(identity: String, watchID: String, bridgeID: String, info: WatchInfo, caller: BridgeCaller) {
    self.identity = identity
    self.watchID = watchID
    self.bridgeID = bridgeID
    self.info = info
    self.caller = caller
  }

  /// Connects to the bridge `pairing` names and opens watch `watchID` (`nil`: the only watch it
  /// serves), waiting `timeout` seconds at most for each answer. Calls reuse kept-alive
  /// connections unless `reuseConnections` is `false` (a new connection per call, as the client
  /// did before: `tsapply-bench bridge-client` compares the two).
  /// - Throws: `DeviceError`: the link errors above; 1004 (tsapply.bridge) when `watchID` is not
  ///   served, is left out while several are, or the bridge is not the paired one.
  public static func connect(_ pairing: PairingString, watchID: String?, timeout: Double = defaultTimeout,
                             retryDelays: [Duration] = [.milliseconds(200), .milliseconds(600)],
                             reuseConnections: Bool = true) async throws(DeviceError) -> BridgeDevice {
    let transport = BridgeTransport(host: pairing.host, port: pairing.port, sealer: Sealer(key: pairing.key, side: .client),
                                    timeout: timeout, reuseConnections: reuseConnections)
    let caller = BridgeCaller(transport: transport, retryDelays: retryDelays)
    let list = try await caller.required(WatchList.self, "GET", "/v\(BridgeProtocol.major)/watches", name: "listWatches",
                                         body: [], domain: BridgeProtocol.errorDomain, retry: true)
    guard list.bridge == pairing.bridgeID else {
      throw DeviceError(BridgeProtocol.errorDomain, .sdkConfigError,
                        "the bridge at \(pairing.host):\(pairing.port) is '\(list.bridge)', not the paired '\(pairing.bridgeID)': pair again with its pairing string")
    }
    let served = list.watches.map(\.id).joined(separator: ", ")
    let info: WatchInfo
    if let watchID {
      guard let found = list.watches.first(where: { $0.id.uppercased() == watchID.uppercased() }) else {
        throw DeviceError(BridgeProtocol.errorDomain, .sdkConfigError,
                          "the bridge '\(pairing.bridgeID)' serves no watch \(ControlCharacters.escaped(watchID)) (it serves: \(served.isEmpty ? "none" : served))")
      }
      info = found
    } else {
      guard list.watches.count == 1, let only = list.watches.first else {
        throw DeviceError(BridgeProtocol.errorDomain, .sdkConfigError, list.watches.isEmpty
          ? "the bridge '\(pairing.bridgeID)' serves no watch yet: connect one to the phone"
          : "the bridge '\(pairing.bridgeID)' serves \(list.watches.count) watches; name one: bridge:NAME/WATCH-ID with WATCH-ID one of \(served)")
      }
      info = only
    }
    return BridgeDevice(identity: "bridge:\(pairing.bridgeID)/\(info.id)", watchID: info.id, bridgeID: pairing.bridgeID,
                        info: info, caller: caller)
  }


  var watchPath: String { "/v\(BridgeProtocol.major)/watches/\(watchID)" }

  /// One `Device` read call (retried on link failures).
  func call<A: Codable & Sendable, R: Codable & Sendable>(_ method: BridgeMethod, _ args: A?, returning: R.Type) async throws(DeviceError) -> R {
    let body = request(method, args)
    return try await caller.required(R.self, "POST", watchPath + "/call", name: method.rawValue, body: body,
                                     domain: method.domain, retry: !method.writes)
  }

  /// A write, under the lease if one is held — and not sent when that lease may have run out
  /// (`leaseLivesUntil` passed: its renewals went unanswered, held back or lost on the way),
  /// as another holder may have taken the watch since: the bridge's refusal (409) then, made
  /// here, nothing of it having reached the watch (fresh-eyes finding: an apply went on writing
  /// with every renewal dropped for over a minute).
  func write<A: Codable & Sendable>(_ method: BridgeMethod, _ args: A) async throws(DeviceError) {
    if let until = lock.withLock({ lease == nil ? nil : leaseLivesUntil }), ContinuousClock.now >= until {
      throw WireError(status: 409, "the lease on the watch may have run out: no renewal of it was answered within the time it lives "
        + "(held back or lost on the way?), so another tsapply may have taken the watch; \(method.rawValue) was not sent").deviceError
    }
    let body = request(method, args)
    let _: Empty? = try await caller.send(Empty.self, "POST", watchPath + "/call", name: method.rawValue, body: body,
                                          domain: method.domain, retry: false)
  }

  /// The body of a call: under the lease this client holds, if any, with the next call number,
  /// reads too — a write held back past a later call (its read-back) is then refused by the
  /// bridge instead of landing after this client judged it lost (`LeaseTable.admit`).
  func request<A: Codable & Sendable>(_ method: BridgeMethod, _ args: A?) -> [UInt8] {
    let (token, number) = lock.withLock { () -> (String?, Int?) in
      guard let token = lease?.token else { return (nil, nil) }
      leaseCalls += 1
      return (token, leaseCalls)
    }
    return BridgeJSON.encode(CallRequest(method: method, args: args, lease: token, sequence: number))
  }

  func read<R: Codable & Sendable>(_ method: BridgeMethod, _ type: R.Type) async throws(DeviceError) -> R {
    try await call(method, Optional<Empty>.none, returning: type)
  }

  // MARK: Device

  /// From the listing read when connecting: no round trip.
  public func capabilities() async throws(DeviceError) -> DeviceCapabilities { info.capabilities }

  /// One round trip: the bridge reads every list the platform has.
  public func readState(capabilities: DeviceCapabilities) async throws(DeviceError) -> DeviceState {
    try await read(.readState, DeviceState.self)
  }

  /// One round trip (`createCustomReminderTemplate`), retried on link failures.
  public func createCustomReminderTemplate() async throws(DeviceError) -> Reminder { try await read(.createCustomReminderTemplate, Reminder.self) }
  /// One round trip (`fetchAllReminders`), retried on link failures.
  public func fetchAllReminders() async throws(DeviceError) -> [Reminder] { try await read(.fetchAllReminders, [Reminder].self) }
  /// One round trip (`replaceAllReminders`), never retried.
  public func replaceAllReminders(_ reminders: [Reminder]) async throws(DeviceError) {
    try await write(.replaceAllReminders, BridgeArgs.Reminders(reminders: reminders))
  }
  /// One round trip (`setReminder`), never retried.
  public func setReminder(_ reminder: Reminder) async throws(DeviceError) { try await write(.setReminder, BridgeArgs.OneReminder(reminder: reminder)) }
  /// One round trip (`deleteReminder`), never retried.
  public func deleteReminder(id: String) async throws(DeviceError) { try await write(.deleteReminder, BridgeArgs.ReminderID(id: id)) }
  /// One round trip (`getAllContacts`), retried on link failures.
  public func getAllContacts() async throws(DeviceError) -> [Contact] { try await read(.getAllContacts, [Contact].self) }
  /// One round trip (`setAllContacts`), never retried.
  public func setAllContacts(_ contacts: [Contact]) async throws(DeviceError) { try await write(.setAllContacts, BridgeArgs.Contacts(contacts: contacts)) }
  /// One round trip (`getEmergencyContacts`), retried on link failures.
  public func getEmergencyContacts() async throws(DeviceError) -> EmergencyContacts { try await read(.getEmergencyContacts, EmergencyContacts.self) }
  /// One round trip (`setEmergencyContacts`), never retried.
  public func setEmergencyContacts(_ contacts: [Contact], sosOn: Bool) async throws(DeviceError) {
    try await write(.setEmergencyContacts, BridgeArgs.Emergency(contacts: contacts, sosOn: sosOn))
  }

  /// Fed by the bridge's event stream (`contactsChanged`; the SDK's refusal once where it refuses).
  public func registerContactsDidChange(_ handler: @escaping @Sendable (Result<[Contact], DeviceError>) -> Void) async {
    eventStream().add(.contacts(handler))
  }
  /// Fed by the event stream (`emergencyContactsChanged`; the SDK's refusal once where it refuses).
  public func registerEmergencyContactsDidChange(_ handler: @escaping @Sendable (Result<[Contact], DeviceError>) -> Void) async {
    eventStream().add(.emergency(handler))
  }
  /// Fed by the event stream (`sosRequested`; the SDK's refusal once where it refuses).
  public func registerSOSRequest(_ handler: @escaping @Sendable (DeviceError?) -> Void) async {
    eventStream().add(.sos(handler))
  }

  /// An event stream of its own for this listener, opened with `Last-Event-ID: lastHandled`:
  /// the bridge replays every event after it that it still holds (all it holds when the id is
  /// from before its restart or too old), then sends new ones; without `lastHandled`, its
  /// `resumePoint` comes first. Ids are the bridge's `BOOT-SEQUENCE`. Returns once the stream
  /// hears the watch (its first message came: `true`), or its first connection failed, or after
  /// the transport's timeout (at most `listenWait` seconds): `false`, the stream trying on.
  @discardableResult
  public func listen(to kinds: Set<DeviceEvent.Kind>, after lastHandled: DeviceEventID?,
                     _ handler: @escaping @Sendable (ListenerReport) -> Void) async -> Bool {
    let stream = BridgeEventStream(transport: transport, path: watchPath + "/events", after: lastHandled?.rawValue)
    stream.add(.listener(kinds, handler))
    lock.withLock { resumableStreams.append(stream) }
    stream.start()
    return await stream.opened(within: min(transport.timeout, Self.listenWait))
  }

  /// Most seconds `listen` waits for its stream to hear the watch.
  static let listenWait = 5.0

  private func eventStream() -> BridgeEventStream {
    lock.withLock {
      if let events { return events }
      let stream = BridgeEventStream(transport: transport, path: watchPath + "/events")
      events = stream
      stream.start()
      return stream
    }
  }

  /// Ends the event streams.
  public func close() async {
    let streams = lock.withLock { () -> [BridgeEventStream] in
      defer { events = nil; resumableStreams = [] }
      return (events.map { [$0] } ?? []) + resumableStreams
    }
    streams.forEach { $0.stop() }
  }

  /// Round trips made per method (and `listWatches`), with the bytes of their bodies.
  public func statistics() async -> DeviceStatistics { caller.statistics() }

  // MARK: Lease

  /// `POST …/lease`; 409 is `.held` with the bridge's record of the holder and the seconds its
  /// lease lives unless renewed. Later writes carry the token. A request whose answer does not
  /// come (lost, timed out, not sealed) may have been granted: it is asked again, as the next
  /// `attempt` of the same holder, after each of `retryDelays`, and a 1.6 bridge gives the
  /// lease over to that later attempt (docs/bridge-protocol.md "Leases"); else the watch stayed
  /// locked by a lease nobody held. When no attempt is answered, the lease is given up
  /// (`DELETE` with the attempts' `requestID`, sent once): an attempt held back on the way,
  /// arriving later, is then refused rather than granted to nobody.
  public func acquireLease(holder: LockHolder, timeToLive seconds: Int) async throws(LeaseRefusal) -> DeviceLease {
    let requestID = LeaseTable.newToken()
    var attempt = 1
    while true {
      do throws(LeaseFailure) {
        return try await askLease(LeaseRequest(holder: holder, timeToLive: seconds, attempt: attempt, requestID: requestID))
      } catch {
        switch error {
        case .refused(let refusal): throw refusal
        case .unanswered(let failure):
          guard attempt <= caller.retryDelays.count else {
            await send(LeaseRelease(givingUp: requestID))
            // A lease request reaches no watch: said so, and what a given-up lease may still do
            // (fresh-eyes finding: "the call may or may not have reached the watch").
            let why = failure.message.components(separatedBy: "; ").first ?? failure.message
            throw .device(DeviceError(failure.domain, failure.code, why + " (\(attempt) attempts); nothing on the watch was read or written. "
              + "The lease was given up; should the bridge not have heard that either, it may keep the watch locked for up to about 45 s "
              + "(docs/bridge-protocol.md \"Leases\")"))
          }
          try? await Task.sleep(for: caller.retryDelays[attempt - 1])
          attempt += 1
        }
      }
    }
  }

  /// `POST …/lease` with the token.
  public func renewLease(_ lease: DeviceLease, timeToLive seconds: Int) async throws(LeaseRefusal) {
    guard let holder = lock.withLock({ self.lease?.holder }) else { throw .held(by: nil) }
    do throws(LeaseFailure) {
      _ = try await askLease(LeaseRequest(holder: holder, timeToLive: seconds, token: lease.token))
    } catch {
      switch error {
      case .refused(let refusal): throw refusal
      case .unanswered(let failure): throw .device(failure)
      }
    }
  }

  /// Why a lease request failed: refused (`LeaseRefusal`), or its answer never came (it may
  /// have been granted).
  private enum LeaseFailure: Error {
    case refused(LeaseRefusal)
    case unanswered(DeviceError)
  }

  /// `DELETE …/lease`; errors ignored (the lease expires anyway).
  public func releaseLease(_ lease: DeviceLease) async {
    lock.withLock { if self.lease?.token == lease.token { self.lease = nil } }
    await send(LeaseRelease(token: lease.token))
  }

  /// `DELETE …/lease` with `release`, once; errors ignored (a lease expires anyway).
  private func send(_ release: LeaseRelease) async {
    _ = try? await caller.send(Empty.self, "DELETE", watchPath + "/lease", name: "releaseLease", body: BridgeJSON.encode(release),
                               domain: BridgeProtocol.errorDomain, retry: false)
  }

  private func askLease(_ ask: LeaseRequest) async throws(LeaseFailure) -> DeviceLease {
    let body = BridgeJSON.encode(ask)
    let sent = ContinuousClock.now
    do {
      let (_, answer, bytes) = try await transport.exchange("POST", watchPath + "/lease", body)
      caller.count("lease", bytes: bytes, sent: body.count)
      guard let granted = BridgeJSON.decode(AnswerOf<DeviceLease>.self, from: answer)?.result else {
        throw LeaseFailure.refused(.device(DeviceError(BridgeProtocol.errorDomain, .dataFormatError,
                                                       "the bridge's lease answer is not protocol v\(BridgeProtocol.major) JSON")))
      }
      lock.withLock {
        if lease?.token != granted.token { leaseCalls = 0 }
        lease = (granted.token, ask.holder)
        leaseLivesUntil = sent + .seconds(granted.timeToLive)
      }
      return granted
    } catch let failure as BridgeTransport.Failure {
      caller.count("lease", bytes: 0, sent: body.count)
      switch failure {
      case .refused(409, _, let holder, let expiresIn): throw .refused(.held(by: holder, expiresIn: expiresIn))
      case .refused: throw .refused(.device(caller.linkError(failure, name: "lease", domain: BridgeProtocol.errorDomain)))
      case .notSent, .timedOut, .lost, .connectionClosed, .unauthenticated:
        throw .unanswered(caller.linkError(failure, name: "lease", domain: BridgeProtocol.errorDomain))
      }
    } catch let failure as LeaseFailure {
      throw failure
    } catch {
      throw .refused(.device(DeviceError(BridgeProtocol.errorDomain, .unknown, "\(error)")))
    }
  }
}

/// Sends a device's requests: retries reads, maps link failures to SDK-shaped errors, counts
/// round trips and bytes. Thread-safe.
final class BridgeCaller: @unchecked Sendable {
  let transport: BridgeTransport
  let retryDelays: [Duration]
  private let lock = NSLock()
  private var totals = DeviceStatistics()

  init(transport: BridgeTransport, retryDelays: [Duration]) {
    self.transport = transport
    self.retryDelays = retryDelays
  }

  func statistics() -> DeviceStatistics { lock.withLock { totals } }

  /// As `send`, for a result that must be there.
  func required<R: Decodable & Sendable>(_ type: R.Type, _ method: String, _ path: String, name: String, body: [UInt8],
                                         domain: DeviceError.Domain, retry: Bool) async throws(DeviceError) -> R {
    guard let result = try await send(type, method, path, name: name, body: body, domain: domain, retry: retry) else {
      throw DeviceError(BridgeProtocol.errorDomain, .dataFormatError, "the bridge's answer to \(name) has no result")
    }
    return result
  }

  /// Sends one request and decodes its `result` (`nil` for `null`). `retry`: the request only
  /// reads (a read call, the listing), so it is retried on link failures and, when it still
  /// gets no answer, its error says the watch is unchanged by it (`linkError`).
  func send<R: Decodable & Sendable>(_ type: R.Type, _ method: String, _ path: String, name: String, body: [UInt8],
                                     domain: DeviceError.Domain, retry: Bool) async throws(DeviceError) -> R? {
    var attempt = 0
    var newConnection = false
    while true {
      do {
        let (_, answer, bytes) = try await transport.exchange(method, path, body, newConnection: newConnection)
        count(name, bytes: bytes, sent: body.count)
        guard let decoded = BridgeJSON.decode(AnswerOf<R>.self, from: answer) else {
          throw DeviceError(BridgeProtocol.errorDomain, .dataFormatError, "the bridge's answer to \(name) is not protocol v\(BridgeProtocol.major) JSON")
        }
        if let error = decoded.error { throw error.deviceError }
        return decoded.result
      } catch let failure as BridgeTransport.Failure {
        count(name, bytes: 0, sent: body.count)
        if case .refused(_, let error, _, _) = failure { throw error.deviceError }
        // A read refused unsealed changed nothing, whoever refused it: said as the refusal it claims to be.
        if case .unauthenticated(let status, let said) = failure, retry {
          throw WireError(status: status, Self.unsealed(status, said, name: name) + "; nothing on the watch changed by it").deviceError
        }
        // A read that a kept-alive connection dropped goes again at once on a new connection,
        // as it would have gone without reuse; not one of the retries.
        if case .connectionClosed = failure, retry, !newConnection {
          newConnection = true
          continue
        }
        guard retry, attempt < retryDelays.count else { throw linkError(failure, name: name, domain: domain, reads: retry, tries: attempt + 1) }
        try? await Task.sleep(for: retryDelays[attempt])
        attempt += 1
      } catch let error as DeviceError {
        throw error
      } catch {
        throw DeviceError(BridgeProtocol.errorDomain, .unknown, "\(error)")
      }
    }
  }

  /// The SDK-shaped error of a link failure. `reads`: the request only reads, so the watch is
  /// unchanged by it whether or not it arrived; otherwise it may or may not have reached the
  /// watch (the engine reads the watch back, docs/apply.md "When a write's answer is lost").
  /// `tries`: how many times a read was sent (said when more than once: each waited
  /// `transport.timeout`, so the whole wait was that many times longer).
  func linkError(_ failure: BridgeTransport.Failure, name: String, domain: DeviceError.Domain, reads: Bool = false,
                 tries: Int = 1) -> DeviceError {
    let host = transport.authority
    let outcome = UnansweredCall.outcome(reads: reads)
    let tried = tries > 1 ? ", each of \(tries) tries" : ""
    switch failure {
    case .notSent(let reason):
      return DeviceError(.bleConnect, .unConnected, "cannot reach the bridge at \(host) (\(reason)); is the bridge running and on this network?")
    case .timedOut:
      return DeviceError(domain, .timeout, "no answer from the bridge to \(name) within \(Self.seconds(transport.timeout)) s\(tried); \(outcome)")
    case .lost(let reason), .connectionClosed(let reason):
      return DeviceError(.bleConnect, .requestCancelledByDisconnect, "the connection to the bridge was lost before it answered \(name) (\(reason)); \(outcome)")
    case .refused(_, let error, _, _):
      return error.deviceError
    case .unauthenticated(let status, let said):
      // Possibly forged on the way while the request went through: its outcome is not known.
      return DeviceError(.bleConnect, .requestCancelledByDisconnect, Self.unsealed(status, said, name: name) + "; \(outcome)")
    }
  }

  /// Words for an answer to `name` the bridge did not seal. A 401 is what a bridge answers to a
  /// seal it cannot open: most often a pairing key the bridge no longer has, said first with
  /// how to pair again (fresh-eyes fe101 #2: "an answer forged on the way" came first, and the
  /// advice lacked the string and the name). `NAME` is replaced by the pairing's name where it
  /// is known (`BridgeScheme.open`).
  static func unsealed(_ status: Int, _ said: String?, name: String) -> String {
    let answer = "the answer to \(name) was not sealed by the bridge (HTTP \(status)\(said.map { ": \"\($0)\"" } ?? ""))"
    guard status == 401 else { return answer + ": the bridge refusing it before reading it, or an answer forged on the way" }
    return answer + ": most likely the bridge has a new pairing key ('tsapply bridge serve --new-key', or \"Pair again\" in the app); "
      + "pair again with the string it shows now: 'tsapply bridge pair - --name \(pairingPlaceholder)' (or something on the network answered in its place)"
  }

  /// What `unsealed` writes for the pairing's name, which `BridgeScheme.open` replaces.
  static let pairingPlaceholder = "NAME"

  static func seconds(_ value: Double) -> String { value == value.rounded() ? String(Int(value)) : String(value) }

  func count(_ name: String, bytes: Int, sent: Int) {
    lock.withLock {
      totals.calls[name, default: 0] += 1
      totals.bytesSent += sent
      totals.bytesReceived += max(0, bytes - sent)
    }
  }

}

/// `Answer` decoded on the client side: the result type only needs `Decodable`.
struct AnswerOf<R: Decodable>: Decodable {
  var result: R?
  var error: WireError?
  var holder: LockHolder?
}
