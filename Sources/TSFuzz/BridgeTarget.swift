import Foundation
import TSBridge
import TSDevice
import TSModel

/// The `bridge` target: bytes as a short session of requests to a bridge's request handling
/// (`BridgeService.handle`, the part of `tsapply bridge serve` and of the iOS app that every
/// request from the network reaches), serving one simulated watch.
///
/// The input is text lines. The first line chooses the session: its first byte the watch's
/// platform (`byte % 5`, in `PlatformProfile.all` order), its second, when odd, a lease another
/// holder takes before the session. Every further line (at most 12) is one request: its first
/// byte the kind (`byte % 8`, below), its second a parameter, the rest the body.
///
/// | kind | request |
/// |---|---|
/// | 0, 1, 2 | the rest, sealed under the pairing key, as `POST /v1/watches/ID/call` |
/// | 3 | the rest, sealed, to another endpoint (the parameter picks it: the watch list, lease and release, another spelling of the id, an unknown id, an unknown path or method, another major version) |
/// | 4 | the rest unsealed, as the body of a call |
/// | 5 | the rest sealed as a call, then one byte changed (the parameter picks which and how) |
/// | 6 | the rest sealed as a call but under another key, for another endpoint, or a minute old |
/// | 7 | the last request the bridge authenticated, sent again (a replay) |
///
/// Properties, besides not crashing:
/// - nothing that is not sealed under the pairing key, fresh and sent once reaches the watch:
///   unsealed, tampered, wrongly bound, stale and replayed requests are refused with 401 and an
///   unsealed error, and the watch sees no call;
/// - a sealed body that is not a well-formed call (not JSON of the call's shape, an unknown
///   method, arguments that do not fit the method), a write under another holder's lease, and
///   every request that is not a call make no `Device` call; each is answered with a sealed
///   error bound to the request;
/// - a well-formed call reaches the watch once and answers exactly what the `Device` answers:
///   the same call made directly on a twin watch (same platform, same history) gives the same
///   answer bytes, and both watches hold the same reminders, contacts and emergency contacts
///   afterwards;
/// - every sealed answer opens under the pairing key for the request it answers and is JSON.
///
/// Whether a call is well-formed is decided here with the protocol's public wire types
/// (`CallRequest`, `BridgeArgs`), independently of the service's own routing.
enum BridgeTarget {
  static let target = FuzzTarget(
    name: "bridge",
    summary: "requests to the bridge's request handling: sealed, unsealed, tampered, replayed; calls to a simulated watch",
    seeds: [SeedSource("Tests/TSFuzzTests/Corpus/bridge")],
    dictionary: "Tests/TSFuzzTests/Dictionaries/bridge.dict",
    maxLength: 8192,
    check: check)

  static let watchID = "AA:BB:CC:DD:EE:01"
  static let key = SealingKey(bytes: Array(0..<32))!
  static let otherKey = SealingKey(bytes: Array(repeating: 7, count: 32))!
  static let callPath = "/v1/watches/\(watchID)/call"
  static let property = (
    refused: "nothing unsealed, tampered, stale or replayed reaches the watch",
    noCall: "a request that is not a well-formed call makes no Device call",
    answers: "a well-formed call answers what the Device answers",
    sealed: "a sealed answer opens for its request"
  )

  /// A session's clock: fixed, advanced one millisecond per request, so every request is fresh
  /// and leases (at least a second) never expire during a session.
  final class Clock: @unchecked Sendable {
    private let lock = NSLock()
    private var milliseconds: UInt64 = 1_800_000_000_000
    func now() -> UInt64 { lock.withLock { milliseconds } }
    func tick() { lock.withLock { milliseconds += 1 } }
  }

  /// The session's lease as the harness knows it from the answers it saw, with the
  /// `LeaseRequest.requestID` it was asked for under (a give-up of that id ends it).
  struct Leases {
    var held = false
    var token: String?
    var requestID: String?
  }

  static func check(_ bytes: [UInt8]) async throws(PropertyFailure) {
    var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map(Array.init)
    let config = lines.isEmpty ? [] : lines.removeFirst()
    let profile = PlatformProfile.all[Int(config.first ?? 0) % PlatformProfile.all.count]
    let clock = Clock()
    let served = SimulatedDevice(profile: profile)
    let twin = SimulatedDevice(profile: profile)
    let service = BridgeService(bridgeID: "fuzz", key: key, watches: [ServedWatch(id: watchID, device: served, capabilities: profile.capabilities)],
                                cipher: ChaCha20Poly1305(), clock: { clock.now() })
    let client = Sealer(key: key, side: .client, cipher: ChaCha20Poly1305(), clock: { clock.now() })
    var leases = Leases()
    if config.count > 1, config[1] % 2 == 1 {
      let body = BridgeJSON.encode(LeaseRequest(holder: LockHolder(pid: 1, host: "other", command: "tsapply apply", since: "2026-12-01T00:00:00Z"),
                                                timeToLive: 600))
      let (request, sealed) = sealedRequest("POST", "/v1/watches/\(watchID)/lease", body, client)
      let response = await service.handle(request)
      try require(response.status == 200, "the harness can take a lease", "status \(response.status)")
      leases.held = true
      leases.token = open(response, sealed, client).flatMap { BridgeJSON.decode(Answer<DeviceLease>.self, from: $0) }?.result?.token
    }
    var previous: BridgeRequest?
    for line in lines.prefix(12) {
      clock.tick()
      let kind = Int(line.first ?? 0) % 8
      let parameter = line.count > 1 ? line[1] : 0
      let body = Array(line.dropFirst(2))
      let before = served.currentStatistics().totalCalls
      switch kind {
      case 0, 1, 2:
        let (request, sealed) = sealedRequest("POST", callPath, body, client)
        try await checkCall(request, sealed, body, service: service, served: served, twin: twin, profile: profile, client: client, leases: leases)
        previous = request
      case 3:
        let endpoint = endpoints[Int(parameter) % endpoints.count]
        let (request, sealed) = sealedRequest(endpoint.method, endpoint.path, body, client, version: endpoint.version)
        if endpoint.path == callPath.lowercased() {
          try await checkCall(request, sealed, body, service: service, served: served, twin: twin, profile: profile, client: client, leases: leases)
        } else {
          let response = await service.handle(request)
          try requireNoCall(served, since: before, "\(endpoint.method) \(endpoint.path)", response)
          try checkOtherEndpoint(endpoint, response, sealed, body, client: client, leases: &leases)
          // Only a request the bridge authenticated can be replayed; one refused for its
          // version or path is refused for that again, before its seal is looked at.
          guard SealedMessage(bytes: response.bytes) != nil else { continue }
        }
        previous = request
      case 4:
        let request = BridgeRequest(method: "POST", path: callPath, headers: [BridgeProtocol.versionHeader: BridgeProtocol.version], body: body)
        try await requireRefused(request, service: service, served: served, "an unsealed body")
      case 5:
        var (request, _) = sealedRequest("POST", callPath, body, client)
        let position = (Int(parameter) * 7919 + body.count) % request.body.count
        request.body[position] ^= (parameter >> 3) | 1
        try await requireRefused(request, service: service, served: served, "a sealed body with byte \(position) changed")
      case 6:
        let request: BridgeRequest
        switch parameter % 3 {
        case 0: request = sealedRequest("POST", callPath, body, Sealer(key: otherKey, side: .client, cipher: ChaCha20Poly1305(), clock: { clock.now() })).0
        case 1:
          var moved = sealedRequest("POST", "/v1/watches/\(watchID)/lease", body, client).0
          moved.path = callPath
          request = moved
        default:
          request = sealedRequest("POST", callPath, body, Sealer(key: key, side: .client, cipher: ChaCha20Poly1305(), clock: { clock.now() - 60_000 })).0
        }
        try await requireRefused(request, service: service, served: served, "a body sealed under another key, for another endpoint or a minute ago")
      default:
        guard let replayed = previous else { continue }
        try await requireRefused(replayed, service: service, served: served, "a request sent a second time")
      }
    }
  }

  // MARK: Calls

  /// Sends a sealed call and checks the answer against the same call made directly on `twin`.
  static func checkCall(_ request: BridgeRequest, _ sealed: SealedMessage, _ body: [UInt8], service: BridgeService,
                        served: SimulatedDevice, twin: SimulatedDevice, profile: PlatformProfile, client: Sealer,
                        leases: Leases) async throws(PropertyFailure) {
    let before = served.currentStatistics().totalCalls
    let response = await service.handle(request)
    let answer = try requireSealedAnswer(response, sealed, client, "a call")
    let verdict = await expected(body, twin: twin, profile: profile, leases: leases)
    switch verdict {
    case .refused(let status, let why):
      try require(response.status == status, property.noCall, "\(why): expected \(status), got \(response.status)\nbody: \(text(body))")
      try requireNoCall(served, since: before, why, response)
    case .answered(let direct):
      try require(response.status == 200, property.answers, "expected 200, got \(response.status): \(text(answer))\nbody: \(text(body))")
      try require(answer == direct, property.answers, "through the bridge: \(text(answer))\ndirectly: \(text(direct))\nbody: \(text(body))")
      let watch = try? served.snapshot(), other = try? twin.snapshot()
      try require(watch?.reminders == other?.reminders && watch?.contacts == other?.contacts && watch?.emergency == other?.emergency,
                  property.answers, "the served watch and its twin differ after \(text(body))")
    }
  }

  enum Verdict {
    case refused(Int, String)
    case answered([UInt8])
  }

  private struct Header: Decodable {
    var method: String
    var lease: String?
  }

  /// What protocol v1 says the call in `body` gets, found with the public wire types; a call
  /// that reaches the watch is made on `twin`, and its answer encoded as the protocol does.
  static func expected(_ body: [UInt8], twin: SimulatedDevice, profile: PlatformProfile, leases: Leases) async -> Verdict {
    guard let header = BridgeJSON.decode(Header.self, from: body) else { return .refused(400, "not a call request") }
    guard let method = BridgeMethod(rawValue: header.method) else { return .refused(400, "an unknown method") }
    if method.writes, leases.held, header.lease != leases.token { return .refused(409, "a write under another holder's lease") }
    func args<A: Codable & Sendable>(_ type: A.Type) -> A? { BridgeJSON.decode(CallRequest<A>.self, from: body)?.args }
    func answer<R: Codable & Sendable>(_ call: () async throws(DeviceError) -> R?) async -> Verdict {
      do { return .answered(BridgeJSON.encode(Answer(result: try await call()))) } catch {
        return .answered(BridgeJSON.encode(Answer<Empty>(error: WireError(error))))
      }
    }
    let capabilities = profile.capabilities
    let badArguments = Verdict.refused(400, "arguments that do not fit \(method.rawValue)")
    switch method {
    case .capabilities: return await answer { () throws(DeviceError) in try await twin.capabilities() }
    case .readState: return await answer { () throws(DeviceError) in try await twin.readState(capabilities: capabilities) }
    case .createCustomReminderTemplate: return await answer { () throws(DeviceError) in try await twin.createCustomReminderTemplate() }
    case .fetchAllReminders: return await answer { () throws(DeviceError) in try await twin.fetchAllReminders() }
    case .getAllContacts: return await answer { () throws(DeviceError) in try await twin.getAllContacts() }
    case .getEmergencyContacts: return await answer { () throws(DeviceError) in try await twin.getEmergencyContacts() }
    case .replaceAllReminders:
      guard let list = args(BridgeArgs.Reminders.self)?.reminders else { return badArguments }
      return await answer { () throws(DeviceError) -> Empty? in try await twin.replaceAllReminders(list); return nil }
    case .setReminder:
      guard let reminder = args(BridgeArgs.OneReminder.self)?.reminder else { return badArguments }
      return await answer { () throws(DeviceError) -> Empty? in try await twin.setReminder(reminder); return nil }
    case .deleteReminder:
      guard let id = args(BridgeArgs.ReminderID.self)?.id else { return badArguments }
      return await answer { () throws(DeviceError) -> Empty? in try await twin.deleteReminder(id: id); return nil }
    case .setAllContacts:
      guard let contacts = args(BridgeArgs.Contacts.self)?.contacts else { return badArguments }
      return await answer { () throws(DeviceError) -> Empty? in try await twin.setAllContacts(contacts); return nil }
    case .setEmergencyContacts:
      guard let emergency = args(BridgeArgs.Emergency.self) else { return badArguments }
      return await answer { () throws(DeviceError) -> Empty? in
        try await twin.setEmergencyContacts(emergency.contacts, sosOn: emergency.sosOn)
        return nil
      }
    }
  }

  // MARK: Other endpoints

  struct Endpoint {
    var method: String
    var path: String
    var version = BridgeProtocol.version
  }

  static let endpoints: [Endpoint] = [
    Endpoint(method: "GET", path: "/v1/watches"),
    Endpoint(method: "POST", path: "/v1/watches/\(watchID)/lease"),
    Endpoint(method: "DELETE", path: "/v1/watches/\(watchID)/lease"),
    Endpoint(method: "POST", path: callPath.lowercased()),
    Endpoint(method: "POST", path: "/v1/watches/00:00:00:00:00:00/call"),
    Endpoint(method: "POST", path: "/v1/watches/\(watchID)/events"),
    Endpoint(method: "PUT", path: callPath),
    Endpoint(method: "POST", path: "/v1/watches/\(watchID)/format"),
    Endpoint(method: "POST", path: "/v2/watches/\(watchID)/call"),
    Endpoint(method: "POST", path: callPath, version: "2.0"),
    Endpoint(method: "POST", path: "/"),
  ]

  /// Checks the answer of a request that is not a call, and follows the lease it takes or gives back.
  static func checkOtherEndpoint(_ endpoint: Endpoint, _ response: BridgeResponse, _ sealed: SealedMessage, _ body: [UInt8],
                                 client: Sealer, leases: inout Leases) throws(PropertyFailure) {
    let what = "\(endpoint.method) \(endpoint.path)"
    if endpoint.path.hasPrefix("/v2/") || endpoint.version != BridgeProtocol.version || endpoint.path == "/" {
      try require([400, 404].contains(response.status) && SealedMessage(bytes: response.bytes) == nil, property.noCall,
                  "\(what): expected an unsealed 400 or 404, got \(response.status)")
      return
    }
    let answer = try requireSealedAnswer(response, sealed, client, what)
    switch (endpoint.method, endpoint.path.hasSuffix("/lease"), endpoint.path) {
    case ("GET", _, "/v1/watches"):
      let list = BridgeJSON.decode(Answer<WatchList>.self, from: answer)?.result
      try require(response.status == 200 && list?.watches.map(\.id) == [watchID], property.sealed, "\(what): \(response.status) \(text(answer))")
    case ("POST", true, _):
      if response.status == 200 {
        let token = BridgeJSON.decode(Answer<DeviceLease>.self, from: answer)?.result?.token
        // A renewal keeps the id of the request that took the lease.
        if token != leases.token { leases.requestID = BridgeJSON.decode(LeaseRequest.self, from: body)?.requestID }
        leases.held = true
        leases.token = token
      } else {
        try require([400, 409].contains(response.status), property.sealed, "\(what): \(response.status) \(text(answer))")
      }
    case ("DELETE", true, _):
      if response.status == 200, let release = BridgeJSON.decode(LeaseRelease.self, from: body),
         release.token.map({ $0 == leases.token }) ?? (release.requestID != nil && release.requestID == leases.requestID) {
        leases = Leases()
      }
    default:
      try require(response.status >= 400, property.noCall, "\(what): \(response.status) \(text(answer))")
    }
  }

  // MARK: Helpers

  /// `body` sealed by `sealer` for `method` `path`, as a client sends it (in the header for a GET).
  static func sealedRequest(_ method: String, _ path: String, _ body: [UInt8], _ sealer: Sealer,
                            version: String = BridgeProtocol.version) -> (BridgeRequest, SealedMessage) {
    let sealed = sealer.seal(body, for: .request(method: method, path: path, lastEventID: nil))
    var headers = [BridgeProtocol.versionHeader: version]
    if method == "GET" { headers[BridgeProtocol.sealHeader] = Data(sealed.bytes).base64EncodedString() }
    return (BridgeRequest(method: method, path: path, headers: headers, body: method == "GET" ? [] : sealed.bytes), sealed)
  }

  static func open(_ response: BridgeResponse, _ sealed: SealedMessage, _ client: Sealer) -> [UInt8]? {
    SealedMessage(bytes: response.bytes).flatMap { client.open($0, for: .response(requestNonce: sealed.nonce)) }
  }

  static func requireSealedAnswer(_ response: BridgeResponse, _ sealed: SealedMessage, _ client: Sealer,
                                  _ what: String) throws(PropertyFailure) -> [UInt8] {
    guard let answer = open(response, sealed, client) else {
      throw PropertyFailure(property.sealed, "\(what): status \(response.status), \(response.bytes.count) bytes that do not open for the request")
    }
    let json = try? JSONSerialization.jsonObject(with: Data(answer))
    try require(json is [String: Any], property.sealed, "\(what): the answer is not a JSON object: \(text(answer))")
    if response.status != 200 {
      try require((json as? [String: Any])?["error"] != nil, property.sealed, "\(what): a \(response.status) answer without an error: \(text(answer))")
    }
    return answer
  }

  /// Sends `request` and requires a 401 with an unsealed error and no call on the watch.
  static func requireRefused(_ request: BridgeRequest, service: BridgeService, served: SimulatedDevice,
                             _ what: String) async throws(PropertyFailure) {
    let before = served.currentStatistics().totalCalls
    let response = await service.handle(request)
    let error = BridgeJSON.decode(Answer<Empty>.self, from: response.bytes)?.error
    try require(response.status == 401 && error?.code == 401, property.refused, "\(what): status \(response.status), \(text(response.bytes))")
    try requireNoCall(served, since: before, what, response)
  }

  static func requireNoCall(_ served: SimulatedDevice, since before: Int, _ what: String,
                            _ response: BridgeResponse) throws(PropertyFailure) {
    let after = served.currentStatistics().totalCalls
    try require(after == before, response.status == 401 ? property.refused : property.noCall,
                "\(what) (status \(response.status)) made \(after - before) Device call(s)")
  }

  static func text(_ bytes: [UInt8]) -> String {
    ControlCharacters.escaped(String(decoding: bytes.prefix(400), as: UTF8.self))
  }
}
