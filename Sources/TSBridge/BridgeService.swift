import Foundation
import TSDevice
import TSModel

/// One HTTP request as any listener received it (libmicrohttpd in the package, Network.framework
/// in the iOS app): the bridge's request handling needs nothing else.
public struct BridgeRequest: Sendable {
  /// `GET`, `POST` or `DELETE`.
  public var method: String
  /// The path, percent-decoded, without the query.
  public var path: String
  /// Header fields, names in lower case.
  public var headers: [String: String]
  /// The body as received.
  public var body: [UInt8]

  /// A request; header names are lower-cased.
  public init(method: String, path: String, headers: [String: String], body: [UInt8]) {
    self.method = method
    self.path = path
    self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { _, last in last })
    self.body = body
  }
}

/// What the listener sends back.
public struct BridgeResponse: Sendable {
  /// HTTP status.
  public var status: Int
  /// Header fields (`Content-Type`, `TSApply-Protocol`).
  public var headers: [String: String]
  /// The body.
  public var body: Body

  /// How the body goes out.
  public enum Body: Sendable {
    /// These bytes.
    case bytes([UInt8])
    /// Server-Sent Events: each element is one complete event's bytes; the listener writes
    /// them as they come and cancels the iteration when the client goes away.
    case events(AsyncStream<[UInt8]>)
    /// Close the connection without answering (fault injection: `drop-response@N`).
    case dropConnection
  }

  /// The body's bytes, or empty for a stream.
  public var bytes: [UInt8] {
    if case .bytes(let bytes) = body { return bytes }
    return []
  }
}

/// One watch a bridge serves.
public struct ServedWatch: Sendable {
  /// Its MAC-style id, `AA:BB:CC:DD:EE:FF`.
  public var id: String
  /// The device its calls go to.
  public var device: any Device
  /// Its capabilities, read once when the bridge starts.
  public var capabilities: DeviceCapabilities

  /// A served watch.
  public init(id: String, device: any Device, capabilities: DeviceCapabilities) {
    self.id = id
    self.device = device
    self.capabilities = capabilities
  }
}

/// The bridge side of protocol v1 (docs/bridge-protocol.md), independent of any HTTP library:
/// give it each request, send what it returns. It checks the version, the size and the seal
/// before anything else, so a request that is not fresh, not sealed under the pairing key,
/// too big, malformed or for an unknown method or watch never reaches a `Device`; it routes
/// calls to the watch's device, keeps the leases and each watch's event log, and logs one line
/// per request with no body, name or number in it.
public final class BridgeService: Sendable {
  /// The bridge's id (pairing string, `bridge:ID/MAC` identities).
  public let bridgeID: String
  let sealer: Sealer
  let replay: ReplayGuard
  let leases: LeaseTable
  let watches: [String: ServedWatch]
  let order: [String]
  let logs: [String: EventLog]
  let connection: Locked<[String: ConnectionState]>
  let faults: BridgeFaults
  let calls = Locked<(total: Int, methods: [BridgeMethod: Int])>((0, [:]))
  /// New-lease requests granted so far (for `BridgeFaults.Trigger.lease`).
  let leasesGranted = Locked(0)
  /// How many refusals before authentication were logged line by line in this minute.
  let refusals = Locked(RefusalLogLimit())
  /// Event streams open now, oldest first (at most `BridgeProtocol.maxEventStreams`): each
  /// stream's number and what ends it.
  let openStreams = Locked<(next: UInt64, open: [(number: UInt64, end: @Sendable () -> Void)])>((0, []))
  let log: @Sendable (String) -> Void
  /// Milliseconds since 1970 (`init`'s `clock`).
  let clock: @Sendable () -> UInt64
  /// Seconds between the `heartbeat`s of each event stream.
  let heartbeatSeconds: Double

  /// A service for `watches` under `key`.
  /// - Parameters:
  ///   - cipher: the AEAD (ChaCha20-Poly1305; the iOS app passes its own).
  ///   - clock: milliseconds since 1970, for the time window and leases.
  ///   - replay: the freshness check; a bridge passes one over a `NonceJournal` so that a
  ///     restart does not forget the nonces it accepted (by default: memory only, with `clock`).
  ///   - faults: injected faults (`TSAPPLY_BRIDGE_FAULT`); none by default.
  ///   - heartbeatSeconds: how often each event stream says the newest event (`heartbeat`,
  ///     docs/bridge-protocol.md "Events"); 15 by default.
  ///   - log: receives one line per request; never a body, a name or a phone number.
  public init(bridgeID: String, key: SealingKey, watches: [ServedWatch], cipher: any AEAD,
              clock: @escaping @Sendable () -> UInt64 = Sealer.systemMilliseconds, replay: ReplayGuard? = nil,
              faults: BridgeFaults = BridgeFaults(), heartbeatSeconds: Double = 15, log: @escaping @Sendable (String) -> Void = { _ in }) {
    self.bridgeID = bridgeID
    sealer = Sealer(key: key, side: .bridge, cipher: cipher, clock: clock)
    self.replay = replay ?? ReplayGuard(clock: clock)
    leases = LeaseTable(clock: clock)
    self.watches = Dictionary(watches.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    order = watches.map(\.id)
    logs = Dictionary(watches.map { ($0.id, EventLog()) }, uniquingKeysWith: { first, _ in first })
    connection = Locked(Dictionary(watches.map { ($0.id, ConnectionState.connected) }, uniquingKeysWith: { first, _ in first }))
    self.faults = faults
    self.log = log
    self.clock = clock
    self.heartbeatSeconds = heartbeatSeconds
  }

  /// Listens to every watch, feeding its event log (`WatchListening`: registered again after
  /// a reconnect that dropped the watch's listeners, once; refusals are kept and sent at the
  /// start of each stream; each event carries when it was heard, by `clock`, unless the device
  /// says when it happened). Call once before serving.
  public func startListening() async {
    let clock = self.clock
    for id in order {
      guard let watch = watches[id], let events = logs[id] else { continue }
      await WatchListening(device: watch.device, log: events, now: { Date(timeIntervalSince1970: Double(clock()) / 1000) }).start()
    }
  }

  /// Records that the phone's link to watch `id` is now `state` (the app calls this from the
  /// SDK's connection callback; the reference server infers it from call errors).
  public func setConnection(_ state: ConnectionState, watch id: String) {
    let changed = connection.update { states -> Bool in
      defer { states[id] = state }
      return states[id] != state
    }
    if changed {
      let time = InternetTime.text(Date(timeIntervalSince1970: Double(clock()) / 1000))
      logs[id]?.append(BridgeEvent(type: .connectionState, connection: state, time: time))
    }
  }

  // MARK: Handling

  /// Answers `request`. Never throws and never traps on any input.
  public func handle(_ request: BridgeRequest) async -> BridgeResponse {
    let start = DispatchTime.now().uptimeNanoseconds
    var note = ""
    let response = await answer(request, note: &note)
    let milliseconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
    let unauthenticated = response.headers["Content-Type"] == BridgeProtocol.plainType
    let (logs, summary) = refusals.update { $0.admit(unauthenticated: unauthenticated, status: response.status, now: clock()) }
    if let summary { log(summary) }
    if logs {
      log(String(format: "%@ %@ %d%@ %.1fms", Self.loggable(String(request.method.prefix(10))), Self.loggable(request.path), response.status,
                 note.isEmpty ? "" : " " + note, milliseconds))
    }
    return response
  }

  /// Logs a request the HTTP server refused before it reached `handle` (413, 414, 431: too
  /// large to read), as an unauthenticated refusal under the same per-minute cap; its method and
  /// path were not read, so the line gives `-` for both.
  public func logRefusedUnread(status: Int) {
    let note = switch status {
    case 413: "refused: body too large"
    case 414: "refused: path too long"
    case 431: "refused: header fields too large"
    default: "refused"
    }
    let (logs, summary) = refusals.update { $0.admit(unauthenticated: true, status: status, now: clock()) }
    if let summary { log(summary) }
    if logs { log("- - \(status) \(note)") }
  }

  /// An attacker-chosen text (a path, a method) as logged: its first 100 characters, each
  /// byte that is not printable ASCII, a space or `%` percent-encoded (`%0A`, `%20`, `%C3%A4`),
  /// so it can neither start a line of its own nor spell one (fresh-eyes fe104 #2).
  static func loggable(_ path: String) -> String {
    var logged = ""
    for byte in String(path.unicodeScalars.prefix(100)).utf8 {
      if byte > 0x20, byte < 0x7F, byte != UInt8(ascii: "%") {
        logged.unicodeScalars.append(Unicode.Scalar(byte))
      } else {
        let hex = String(byte, radix: 16, uppercase: true)
        logged += "%" + (hex.count == 1 ? "0" : "") + hex
      }
    }
    return logged
  }

  private func answer(_ request: BridgeRequest, note: inout String) async -> BridgeResponse {
    let parts = request.path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
    // Only paths under `/v1/` are endpoints (`/v1` itself is not): anything else is 404 before authentication.
    guard parts.count >= 3, parts[0].isEmpty, parts[1] == "v\(BridgeProtocol.major)" else {
      if parts.count >= 2, parts[1].hasPrefix("v"), let major = Int(parts[1].dropFirst()), major != BridgeProtocol.major {
        note = "unsupported version"
        return plain(400, "this bridge speaks protocol v\(BridgeProtocol.major) (\(BridgeProtocol.version)); the request is for \(parts[1]): update tsapply or the bridge app so both speak the same major version")
      }
      note = "unknown path"
      return plain(404, "no such endpoint; protocol v\(BridgeProtocol.major) paths start with /v\(BridgeProtocol.major)/watches")
    }
    guard let version = request.headers[BridgeProtocol.versionHeader.lowercased()] else {
      note = "no version"
      return plain(400, "the request has no \(BridgeProtocol.versionHeader) header; this bridge speaks protocol v\(BridgeProtocol.major) (\(BridgeProtocol.version)) and every request must say which version it speaks")
    }
    if BridgeProtocol.major(of: version) != BridgeProtocol.major {
      note = "unsupported version"
      // The major version read from it, never the header itself: a refusal echoes nothing of the request.
      let client = BridgeProtocol.major(of: version).map { "protocol v\($0)" } ?? "a version this bridge cannot read (expected MAJOR.MINOR)"
      return plain(400, "this bridge speaks protocol v\(BridgeProtocol.major) (\(BridgeProtocol.version)); the client speaks \(client): update tsapply or the bridge app so both speak the same major version")
    }
    if request.body.count > BridgeProtocol.maxBodyBytes {
      note = "too large"
      return Self.tooLarge
    }
    let lastEventID = request.headers["last-event-id"]
    let sealedBytes: [UInt8]?
    if request.method == "GET" {
      sealedBytes = request.headers[BridgeProtocol.sealHeader.lowercased()].flatMap { Data(base64Encoded: $0) }.map(Array.init)
    } else {
      sealedBytes = request.body
    }
    // A request's counter has the top bit 0 (a bridge's 1): a message with it set is not a client's.
    guard let bytes = sealedBytes, let message = SealedMessage(bytes: bytes), message.counter & Sealer.sideBit == 0,
          let plaintext = sealer.open(message, for: .request(method: request.method, path: request.path, lastEventID: lastEventID)) else {
      note = "refused: not sealed under the pairing key"
      return plain(401, "the request is not sealed under this bridge's pairing key (wrong key, changed in transit, or not sealed): pair again with the pairing string this bridge shows")
    }
    do {
      try replay.accept(message)
    } catch {
      switch error {
      case .replayed: note = "refused: replayed"
      case .outsideWindow: note = "refused: outside the time window"
      case .notRecorded:
        note = "failed: the nonce journal cannot be written"
        return plain(500, "\(error)")
      }
      return plain(401, "\(error)")
    }
    let nonce = message.nonce
    let route = Array(parts.dropFirst(2))
    switch (request.method, route.count, route.first) {
    case ("GET", 1, "watches"):
      return sealed(200, BridgeJSON.encode(Answer(result: list())), to: nonce)
    case (_, 1, "watches"):
      note = "method not allowed"
      return sealed(405, error(405, "\(Self.loggable(String(request.method.prefix(10)))) is not allowed on watches (GET lists them)"), to: nonce)
    case (_, 3, "watches"):
      guard let watch = watches[route[1].uppercased()] else {
        note = "unknown watch"
        return sealed(404, error(404, "this bridge serves no watch with id \(Self.loggable(String(route[1].prefix(32)))); list them with GET /v1/watches"), to: nonce)
      }
      switch (request.method, route[2]) {
      case ("POST", "call"): return await call(watch, plaintext, nonce: nonce, note: &note)
      case ("GET", "events"):
        if case .delay(let milliseconds)? = faults.faults[.events] {
          note += " (fault: delayed \(milliseconds)ms)"
          try? await Task.sleep(for: .milliseconds(milliseconds))
        }
        return events(watch, after: lastEventID, nonce: nonce)
      case ("POST", "lease"): return lease(watch, plaintext, nonce: nonce, note: &note)
      case ("DELETE", "lease"):
        guard let release = BridgeJSON.decode(LeaseRelease.self, from: plaintext), release.token != nil || release.requestID != nil else {
          note = "bad JSON"
          return sealed(400, error(400, "the body is not a lease release {\"token\": …} or {\"requestID\": …}"), to: nonce)
        }
        if let token = release.token {
          leases.release(watch.id, token: token)
        } else if let requestID = release.requestID {
          note = "given up"
          leases.giveUp(watch.id, requestID: requestID)
        }
        return sealed(200, BridgeJSON.encode(Answer<Empty>(result: nil)), to: nonce)
      case (_, "call"), (_, "events"), (_, "lease"):
        note = "method not allowed"
        return sealed(405, error(405, "\(Self.loggable(String(request.method.prefix(10)))) is not allowed on \(route[2])"), to: nonce)
      default: break
      }
    default: break
    }
    note = "unknown path"
    return sealed(404, error(404, "no such endpoint (see docs/bridge-protocol.md)"), to: nonce)
  }

  private func list() -> WatchList {
    let states = connection.value
    return WatchList(bridge: bridgeID, watches: order.compactMap { id in
      watches[id].map { WatchInfo(id: id, platform: $0.capabilities.profile, connection: states[id] ?? .connected,
                                  capabilities: $0.capabilities) }
    })
  }

  private func call(_ watch: ServedWatch, _ plaintext: [UInt8], nonce: [UInt8], note: inout String) async -> BridgeResponse {
    guard let header = BridgeJSON.decode(CallHeader.self, from: plaintext) else {
      note = "bad JSON"
      return sealed(400, error(400, "the body is not a call request {\"method\": …, \"args\": …}"), to: nonce)
    }
    guard let method = BridgeMethod(rawValue: header.method) else {
      note = "unknown method"
      return sealed(400, error(400, "unknown method '\(Self.loggable(String(header.method.prefix(40))))'; the methods are "
        + BridgeMethod.allCases.map(\.rawValue).joined(separator: ", ")), to: nonce)
    }
    note = method.rawValue
    switch method.writes ? leases.ended(watch.id, token: header.lease, sealedAt: Self.sealedAt(nonce)) : nil {
    case .released?:
      note += " refused: its lease was released"
      return sealed(409, error(409, "this write was made under a lease its holder has released: it arrived after that apply ended and was not carried out"),
                    to: nonce)
    case .superseded?:
      note += " refused: its lease expired and was replaced"
      return sealed(409, error(409, "this write was made under a lease that expired, and another holder took the watch since: "
                                 + "it was not carried out (its renewals or this write were held back on the way)"), to: nonce)
    case .beforeRestart?:
      note += " refused: sealed before the bridge started, under a lease it does not know"
      return sealed(409, error(409, "this write was made under a lease this bridge does not know, and sealed before the bridge started: "
                                 + "held back on the way across its restart, it was not carried out"), to: nonce)
    case nil:
      break
    }
    if method.writes, let (holder, expiresIn) = leases.blocker(watch.id, token: header.lease) {
      note += " refused: leased"
      return leased(holder, expiresIn: expiresIn, to: nonce)
    }
    if !leases.admit(watch.id, token: header.lease, sequence: header.sequence, writes: method.writes, sealedAt: Self.sealedAt(nonce)) {
      note += " refused: out of order"
      return sealed(409, error(409, "this write arrived after a later call of its apply (its number \(header.sequence ?? 0) is not the highest seen under "
                                 + "its lease): its sender had already given it up, and it was not carried out"), to: nonce)
    }
    let (number, methodCount) = calls.update { counts -> (Int, Int) in
      counts.total += 1
      counts.methods[method, default: 0] += 1
      return (counts.total, counts.methods[method] ?? 0)
    }
    let answer: [UInt8]
    let failure: DeviceError?
    do {
      (answer, failure) = try await method.dispatch(plaintext, to: watch.device, capabilities: watch.capabilities)
    } catch {
      note += " bad arguments"
      guard case .badRequest(let message) = error else { return sealed(400, self.error(400, "bad request"), to: nonce) }
      return sealed(400, self.error(400, message), to: nonce)
    }
    if let failure {
      note += " error \(failure.domain.rawValue) \(failure.code.rawValue)"
      if [.unConnected, .requestCancelledByDisconnect, .connectionLost].contains(failure.code) {
        setConnection(.disconnected, watch: watch.id)
      }
    } else {
      note += " ok"
      setConnection(.connected, watch: watch.id)
    }
    switch faults.fault(atCall: number, method: method, methodCount: methodCount) {
    case .dropResponse?:
      note += " (fault: response dropped)"
      return BridgeResponse(status: 0, headers: [:], body: .dropConnection)
    case .delay(let milliseconds)?:
      note += " (fault: delayed \(milliseconds)ms)"
      try? await Task.sleep(for: .milliseconds(milliseconds))
    case .forgedRefusal?:
      note += " (fault: answered with a forged refusal)"
      return plain(401, "\u{1B}[2Jforged: refused, nothing was done\nApply complete!")
    case .forgedVersion?:
      note += " (fault: answered with a forged version refusal)"
      return BridgeResponse(status: 400, headers: [BridgeProtocol.versionHeader: "2.0", "Content-Type": BridgeProtocol.plainType],
                            body: .bytes(error(400, "forged: this bridge speaks protocol v2; nothing was done")))
    case .forgedSuccess?:
      note += " (fault: answered with a forged success)"
      return BridgeResponse(status: 200, headers: [BridgeProtocol.versionHeader: BridgeProtocol.version, "Content-Type": BridgeProtocol.plainType],
                            body: .bytes(Array(#"{"result": null}"#.utf8)))
    case nil:
      break
    }
    return sealed(200, answer, to: nonce)
  }

  /// The time a request's seal carries: the first six bytes of its 12-byte nonce, milliseconds
  /// since 1970 on the sender's clock (docs/bridge-protocol.md "Sealing").
  static func sealedAt(_ nonce: [UInt8]) -> UInt64? {
    guard nonce.count >= 6 else { return nil }
    return nonce.prefix(6).reduce(0) { $0 << 8 | UInt64($1) }
  }

  private func lease(_ watch: ServedWatch, _ plaintext: [UInt8], nonce: [UInt8], note: inout String) -> BridgeResponse {
    guard let request = BridgeJSON.decode(LeaseRequest.self, from: plaintext) else {
      note = "bad JSON"
      return sealed(400, error(400, "the body is not a lease request {\"holder\": …, \"timeToLive\": …}"), to: nonce)
    }
    if let problem = request.holder.problem {
      note = "bad holder"
      return sealed(400, error(400, problem), to: nonce)
    }
    guard (1...BridgeProtocol.maxLeaseSeconds).contains(request.timeToLive) else {
      note = "bad timeToLive"
      return sealed(400, error(400, "timeToLive must be 1 to \(BridgeProtocol.maxLeaseSeconds) seconds"), to: nonce)
    }
    // A refusal other than a live lease: why, for the log and for the client.
    let refusal: (note: String, message: String)
    switch leases.acquire(watch.id, request, sealedAt: Self.sealedAt(nonce)) {
    case .granted(let token):
      note = request.token == nil ? "granted" + (request.attempt.map { $0 > 1 ? " (attempt \($0))" : "" } ?? "") : "renewed"
      if request.token == nil, leasesGranted.update({ $0 += 1; return $0 }) == 1, faults.faults[.lease] == .dropResponse {
        note += " (fault: response dropped)"
        return BridgeResponse(status: 0, headers: [:], body: .dropConnection)
      }
      return sealed(200, BridgeJSON.encode(Answer(result: DeviceLease(token: token, timeToLive: request.timeToLive))), to: nonce)
    case .held(let holder, let expiresIn):
      note = "refused: leased"
      return leased(holder, expiresIn: expiresIn, to: nonce)
    case .released:
      refusal = ("released", "this lease was released by its holder: a renewal that arrives after that is not granted; ask for a new lease")
    case .superseded:
      refusal = ("expired and replaced", "this lease expired, and another holder took the watch since: it is not renewed; ask for a new lease")
    case .beforeRestart:
      refusal = ("sealed before the bridge started", "this renewal, of a lease this bridge does not know, was sealed before the bridge started "
                   + "(held back on the way across its restart?): it is not granted; ask for a new lease")
    case .expired:
      refusal = ("expired before it arrived", "this renewal arrived after the lease it renews would have expired, counted from when it was sent "
                   + "(held back on the way?); ask for a new lease")
    case .ended:
      refusal = ("its request ended", "this lease request arrived after the apply that sent it had given it up or ended (held back on the way); "
                   + "nothing was granted")
    }
    note = "refused: " + refusal.note
    return sealed(409, error(409, refusal.message), to: nonce)
  }

  /// 409 for a live lease of `holder`, with the seconds it lives unless renewed.
  private func leased(_ holder: LockHolder, expiresIn: Int, to nonce: [UInt8]) -> BridgeResponse {
    sealed(409, BridgeJSON.encode(Answer<Empty>(error: WireError(status: 409, "the watch is leased by \(holder)"), holder: holder,
                                                expiresIn: expiresIn)), to: nonce)
  }

  /// A new event stream of `watch`. At the limit of open streams (`BridgeProtocol.maxEventStreams`)
  /// it ends the oldest one instead of being refused: only a paired client can open a stream,
  /// but something on one client's path can keep the bridge's side of the streams it relays
  /// open after that client gave them up, and refusing new ones would then keep every client out
  /// (fresh-eyes finding). A stream ended so is opened again by its client, which misses nothing
  /// (`Last-Event-ID`).
  private func events(_ watch: ServedWatch, after lastEventID: String?, nonce: [UInt8]) -> BridgeResponse {
    let entries = logs[watch.id]?.subscribe(after: lastEventID, heartbeat: heartbeatSeconds) ?? AsyncStream { $0.finish() }
    let sealer = self.sealer
    let openStreams = self.openStreams
    let stream = AsyncStream<[UInt8]> { continuation in
      let number = openStreams.update { streams -> UInt64 in
        streams.next += 1
        return streams.next
      }
      let task = Task {
        continuation.yield(Array("retry: 1000\n\n".utf8))
        for await entry in entries {
          let id = entry.id ?? ""
          let sealed = sealer.seal(BridgeJSON.encode(entry.event), for: .event(requestNonce: nonce, id: id))
          let data = Data(sealed.bytes).base64EncodedString()
          continuation.yield(Array(((entry.id.map { "id: \($0)\n" } ?? "") + "data: \(data)\n\n").utf8))
        }
        continuation.finish()
      }
      continuation.onTermination = { _ in
        task.cancel()
        openStreams.update { $0.open.removeAll { $0.number == number } }
      }
      let oldest = openStreams.update { streams -> (@Sendable () -> Void)? in
        streams.open.append((number, { continuation.finish() }))
        return streams.open.count > BridgeProtocol.maxEventStreams ? streams.open.removeFirst().end : nil
      }
      if let oldest {
        log("event streams at the most (\(BridgeProtocol.maxEventStreams)): the oldest is closed for the new one")
        oldest()
      }
    }
    return BridgeResponse(status: 200, headers: [BridgeProtocol.versionHeader: BridgeProtocol.version,
                                                 "Content-Type": BridgeProtocol.eventStreamType, "Cache-Control": "no-store"],
                          body: .events(stream))
  }

  // MARK: Answers

  private func error(_ status: Int, _ message: String) -> [UInt8] {
    BridgeJSON.encode(Answer<Empty>(error: WireError(status: status, message)))
  }

  private func plain(_ status: Int, _ message: String) -> BridgeResponse { Self.refusal(status, message) }

  /// An unsealed refusal (400 version, 401, 404 before authentication, 413): `{"error":
  /// {"domain": "tsapply.bridge", "code": STATUS, "message": …}}`, with the version header.
  public static func refusal(_ status: Int, _ message: String) -> BridgeResponse {
    BridgeResponse(status: status, headers: [BridgeProtocol.versionHeader: BridgeProtocol.version, "Content-Type": BridgeProtocol.plainType],
                   body: .bytes(BridgeJSON.encode(Answer<Empty>(error: WireError(status: status, message)))))
  }

  /// The refusal of a body over `BridgeProtocol.maxBodyBytes`, for a listener that stops reading early.
  public static var tooLarge: BridgeResponse { refusal(413, "the request body is over \(BridgeProtocol.maxBodyBytes) bytes") }

  private func sealed(_ status: Int, _ body: [UInt8], to nonce: [UInt8]) -> BridgeResponse {
    BridgeResponse(status: status, headers: [BridgeProtocol.versionHeader: BridgeProtocol.version, "Content-Type": BridgeProtocol.sealedType],
                   body: .bytes(sealer.seal(body, for: .response(requestNonce: nonce)).bytes))
  }
}

/// Faults the reference server injects for tests, from `TSAPPLY_BRIDGE_FAULT`, comma-separated:
/// `drop-response@WHEN` (the call reaches the watch, then the connection is closed without an
/// answer), `delay@WHEN:MS` (the call is answered MS milliseconds late), and the forged answers
/// `forge-refusal@WHEN`, `forge-version@WHEN` and `forge-success@WHEN` (`Fault`). WHEN is a call
/// number N (the N-th call, 1-based, over every watch since the bridge started) or a method
/// name (its first call). Only calls that passed every check count. `delay@events:MS` answers
/// every event stream MS milliseconds late, listening only from then on (a slow link).
/// `drop-response@lease` grants the first new lease, then closes the connection without an
/// answer (a lease whose answer was lost, or whose request was held back until its sender gave up).
public struct BridgeFaults: Hashable, Sendable {
  /// A fault.
  public enum Fault: Hashable, Sendable {
    /// Run the call, then drop the connection.
    case dropResponse
    /// Answer this many milliseconds late.
    case delay(Int)
    /// Run the call, then answer with an unsealed 401 holding control characters — what anyone
    /// on the path can send in the bridge's place (`forge-refusal@WHEN`).
    case forgedRefusal
    /// Run the call, then answer 200 with an unsealed body — a success no key stands behind
    /// (`forge-success@WHEN`).
    case forgedSuccess
    /// Run the call, then answer with an unsealed 400 whose `TSApply-Protocol` names major
    /// version 2 — a version refusal anyone on the path can forge (`forge-version@WHEN`).
    case forgedVersion
  }

  /// Which call a fault hits.
  public enum Trigger: Hashable, Sendable {
    /// The N-th call.
    case call(Int)
    /// The first call of this method.
    case method(BridgeMethod)
    /// Every event stream opened (`delay@events:MS`: a slow link to the bridge; no other fault).
    case events
    /// The first new lease granted (`drop-response@lease`; no other fault).
    case lease
  }

  /// Faults by trigger.
  public var faults: [Trigger: Fault]

  /// Faults by trigger (none by default).
  public init(_ faults: [Trigger: Fault] = [:]) { self.faults = faults }

  /// Environment variable read by `tsapply bridge serve`.
  public static let variable = "TSAPPLY_BRIDGE_FAULT"

  /// The faults in `text`; `nil` when it is malformed.
  public init?(parsing text: String) {
    var faults: [Trigger: Fault] = [:]
    for item in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
      let halves = item.split(separator: "@", maxSplits: 1).map(String.init)
      guard halves.count == 2 else { return nil }
      let target = halves[1].split(separator: ":", maxSplits: 1).map(String.init)
      let trigger: Trigger
      if target[0] == "events" {
        guard halves[0] == "delay" else { return nil }
        trigger = .events
      } else if target[0] == "lease" {
        guard halves[0] == "drop-response" else { return nil }
        trigger = .lease
      } else if let call = Int(target[0]) {
        guard (1...1_000_000).contains(call) else { return nil }
        trigger = .call(call)
      } else if let method = BridgeMethod(rawValue: target[0]) {
        trigger = .method(method)
      } else {
        return nil
      }
      switch (halves[0], target.count) {
      case ("drop-response", 1): faults[trigger] = .dropResponse
      case ("forge-refusal", 1): faults[trigger] = .forgedRefusal
      case ("forge-success", 1): faults[trigger] = .forgedSuccess
      case ("forge-version", 1): faults[trigger] = .forgedVersion
      case ("delay", 2):
        guard let milliseconds = Int(target[1]), (0...600_000).contains(milliseconds) else { return nil }
        faults[trigger] = .delay(milliseconds)
      default: return nil
      }
    }
    self.faults = faults
  }

  /// The fault for call `number`, of `method`, which is its method's `methodCount`-th call.
  func fault(atCall number: Int, method: BridgeMethod, methodCount: Int) -> Fault? {
    faults[.call(number)] ?? (methodCount == 1 ? faults[.method(method)] : nil)
  }
}

/// Keeps a flood of requests refused before authentication (wrong key, replays, unknown paths:
/// anyone on the network can send them) from filling the bridge's log: the first `perMinute`
/// in each minute are logged one line each, the rest are counted, and the first request after
/// the minute writes one line with how many were left out, by status
/// (docs/bridge-protocol.md "Logs"). Requests from the key's holder are always logged.
struct RefusalLogLimit {
  /// Lines logged a minute for unauthenticated refusals.
  static let perMinute = 20
  /// The window's start, milliseconds since 1970.
  var windowStart: UInt64 = 0
  /// Refusals logged in this window.
  var logged = 0
  /// Refusals left out in this window, by status.
  var leftOut: [Int: Int] = [:]

  /// Whether to log this request's line, and a summary line to write before it (once a window
  /// with left-out refusals has ended).
  mutating func admit(unauthenticated: Bool, status: Int, now: UInt64) -> (log: Bool, summary: String?) {
    var summary: String?
    if now >= windowStart + 60_000 {
      if !leftOut.isEmpty {
        let total = leftOut.values.reduce(0, +)
        summary = "refused \(total) more unauthenticated request\(total == 1 ? "" : "s") in the minute from "
          + InternetTime.text(Date(timeIntervalSince1970: Double(windowStart) / 1000)) + ", not logged one by one ("
          + leftOut.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + ")"
      }
      windowStart = now
      logged = 0
      leftOut = [:]
    }
    guard unauthenticated else { return (true, summary) }
    if logged < Self.perMinute {
      logged += 1
      return (true, summary)
    }
    leftOut[status, default: 0] += 1
    return (false, summary)
  }
}
