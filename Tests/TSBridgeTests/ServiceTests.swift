import Foundation
import Testing
@testable import TSBridge
import TSDevice
import TSModel
import TSTestSupport

/// `BridgeService` without HTTP: routing, refusals before anything reaches the watch, leases and
/// the event log's replay.
@Suite struct ServiceTests {
  static let key = SealingKey.random()

  /// A service for one in-memory watch of `profile`, and that watch.
  static func service(_ profile: String = "default", options: SimulationOptions = SimulationOptions(),
                      clock: @escaping @Sendable () -> UInt64 = Sealer.systemMilliseconds)
    throws -> (BridgeService, SimulatedDevice, String) {
    let profile = try PlatformProfile.named(profile)
    let device = SimulatedDevice(profile: profile, options: options)
    let id = "AA:BB:CC:DD:EE:01"
    let service = BridgeService(bridgeID: "b1", key: key, watches: [ServedWatch(id: id, device: device, capabilities: profile.capabilities)],
                                cipher: ChaCha20Poly1305(), clock: clock)
    return (service, device, id)
  }

  /// A sealed request as a client makes it.
  static func request(_ method: String, _ path: String, _ body: [UInt8], sealer: Sealer = Sealer(key: key, side: .client),
                      lastEventID: String? = nil) -> (BridgeRequest, SealedMessage) {
    let sealed = sealer.seal(body, for: .request(method: method, path: path, lastEventID: lastEventID))
    var headers = [BridgeProtocol.versionHeader: BridgeProtocol.version]
    if let lastEventID { headers["Last-Event-ID"] = lastEventID }
    if method == "GET" { headers[BridgeProtocol.sealHeader] = Data(sealed.bytes).base64EncodedString() }
    return (BridgeRequest(method: method, path: path, headers: headers, body: method == "GET" ? [] : sealed.bytes), sealed)
  }

  /// Two holders of leases, on two laptops.
  static let laptopA = LockHolder(pid: 1, host: "laptop-a", command: "tsapply apply", since: "2026-12-01T09:30:00Z")
  static let laptopB = LockHolder(pid: 2, host: "laptop-b", command: "tsapply apply", since: "2026-12-01T09:30:01Z")

  /// A service and a client sealer on one clock the test moves (milliseconds since 1970).
  static func clocked() throws -> (Locked<UInt64>, BridgeService, SimulatedDevice, String, Sealer) {
    let now = Locked<UInt64>(1_800_000_000_000)
    let (service, device, id) = try service(clock: { now.value })
    return (now, service, device, id, Sealer(key: key, side: .client, clock: { now.value }))
  }

  static func answer(_ response: BridgeResponse, to sealed: SealedMessage) -> [UInt8]? {
    SealedMessage(bytes: response.bytes).flatMap { Sealer(key: key, side: .client).open($0, for: .response(requestNonce: sealed.nonce)) }
  }

  static let write = Array(#"{"method":"setAllContacts","args":{"contacts":[{"name":"Ann","phoneNum":"+15550100"}]}}"#.utf8)

  /// Requests refused before the watch: (label, request, status, sealed answer?).
  static func refusals(_ id: String) -> [(String, BridgeRequest, Int, Bool)] {
    let path = "/v1/watches/\(id)/call"
    let (good, _) = request("POST", path, write)
    var tampered = good
    tampered.body[tampered.body.count - 20] ^= 1
    var wrongVersion = good
    wrongVersion.headers["tsapply-protocol"] = "2.0"
    let outside = request("POST", path, write, sealer: Sealer(key: key, side: .client, clock: { Sealer.systemMilliseconds() - 60_000 })).0
    let version = [BridgeProtocol.versionHeader: BridgeProtocol.version]
    var unversioned = good
    unversioned.headers = [:]
    return [
      ("wrong key", request("POST", path, write, sealer: Sealer(key: SealingKey.random(), side: .client)).0, 401, false),
      ("tampered body", tampered, 401, false),
      ("not sealed", BridgeRequest(method: "POST", path: path, headers: version, body: write), 401, false),
      ("no TSApply-Protocol header", unversioned, 400, false),
      ("a client nonce with the top bit set (a bridge's)", request("POST", path, write, sealer: Sealer(key: key, side: .bridge)).0, 401, false),
      ("/v1, not an endpoint", request("GET", "/v1", []).0, 404, false),
      ("/, not an endpoint", BridgeRequest(method: "GET", path: "/", headers: version, body: []), 404, false),
      ("POST on the watch list", request("POST", "/v1/watches", write).0, 405, true),
      ("outside the time window", outside, 401, false),
      ("sealed for another path", BridgeRequest(method: "POST", path: "/v1/watches/\(id)/lease", headers: version, body: good.body), 401, false),
      ("oversized body", BridgeRequest(method: "POST", path: path, headers: version, body: Array(repeating: 1, count: BridgeProtocol.maxBodyBytes + 1)), 413, false),
      ("another major version in the header", wrongVersion, 400, false),
      ("another major version in the path", request("POST", "/v2/watches/\(id)/call", write).0, 400, false),
      ("bad JSON", request("POST", path, Array("{\"method\":".utf8)).0, 400, true),
      ("unknown method", request("POST", path, Array(#"{"method":"formatWatch"}"#.utf8)).0, 400, true),
      ("bad arguments", request("POST", path, Array(#"{"method":"setAllContacts","args":{"contacts":"Ann"}}"#.utf8)).0, 400, true),
      ("unknown watch", request("POST", "/v1/watches/00:00:00:00:00:00/call", write).0, 404, true),
      ("unknown endpoint", request("POST", "/v1/watches/\(id)/reboot", write).0, 404, true),
      ("wrong HTTP method", request("PUT", path, write).0, 405, true),
    ]
  }

  @Test func refusedRequestsNeverReachTheWatch() async throws {
    let (service, device, id) = try Self.service()
    for (label, request, status, sealed) in Self.refusals(id) {
      let response = await service.handle(request)
      #expect(response.status == status, "\(label)")
      let type = response.headers["Content-Type"]
      #expect(type == (sealed ? BridgeProtocol.sealedType : BridgeProtocol.plainType), "\(label)")
      if !sealed {
        #expect(BridgeJSON.decode(Answer<Empty>.self, from: response.bytes)?.error?.code == status, "\(label)")
      }
    }
    #expect(await device.statistics().totalCalls == 0)
  }

  /// A version refusal names the client's major version as read, never the header's text (a
  /// fresh-eyes tester had `1<script>…` echoed back; docs/bridge-protocol.md: a refusal never
  /// echoes the request).
  @Test(arguments: [("2.0", "the client speaks protocol v2:"), ("1<script>alert(1)</script>", "a version this bridge cannot read"),
                    ("3.1.4", "a version this bridge cannot read")])
  func aVersionRefusalEchoesNothingOfTheRequest(header: String, said: String) async throws {
    let (service, _, id) = try Self.service()
    var request = Self.request("POST", "/v1/watches/\(id)/call", Self.write).0
    request.headers["tsapply-protocol"] = header
    let response = await service.handle(request)
    let message = BridgeJSON.decode(Answer<Empty>.self, from: response.bytes)?.error?.message ?? ""
    #expect(response.status == 400 && message.contains(said), "\(message)")
    #expect(!message.contains(header), "\(message)")
  }

  @Test func aReplayedWriteIsRefusedAndRunsOnce() async throws {
    let (service, device, id) = try Self.service()
    let (request, sealed) = Self.request("POST", "/v1/watches/\(id)/call", Self.write)
    let first = await service.handle(request)
    #expect(first.status == 200)
    #expect(Self.answer(first, to: sealed).map { String(decoding: $0, as: UTF8.self) } == #"{"result":null}"#, "a null result is sent as null")
    let again = await service.handle(request)
    #expect(again.status == 401)
    #expect(await device.statistics().calls == ["setAllContacts": 1])
  }

  /// Each method, with the device's own error passed through (2004 where the platform lacks it).
  @Test(arguments: ["default", "fit-basic", "fw"])
  func everyMethodIsRouted(_ profile: String) async throws {
    let (service, device, id) = try Self.service(profile)
    let expected = try await device.readState(capabilities: PlatformProfile.named(profile).capabilities)
    let (request, sealed) = Self.request("POST", "/v1/watches/\(id)/call", Array(#"{"method":"readState"}"#.utf8))
    let response = await service.handle(request)
    let state = Self.answer(response, to: sealed).flatMap { BridgeJSON.decode(Answer<DeviceState>.self, from: $0) }?.result
    #expect(state == expected)
    for method in BridgeMethod.allCases where !method.writes {
      let (request, sealed) = Self.request("POST", "/v1/watches/\(id)/call", Array("{\"method\":\"\(method.rawValue)\"}".utf8))
      let response = await service.handle(request)
      #expect(response.status == 200, "\(method)")
      let answer = Self.answer(response, to: sealed).flatMap { BridgeJSON.decode(Answer<JSONValue>.self, from: $0) }
      #expect(answer?.result != nil || answer?.error != nil, "\(method)")
      if let error = answer?.error { #expect(error.domain.hasPrefix("com.topstepcomkit"), "\(method): \(error)") }
    }
  }

  @Test func aLeaseBlocksOtherWritersUntilReleasedOrExpired() async throws {
    let (now, service, device, id, clockSealer) = try Self.clocked()
    func send(_ method: String, _ path: String, _ body: [UInt8]) async -> (Int, [UInt8]?) {
      let (request, sealed) = Self.request(method, path, body, sealer: clockSealer)
      let response = await service.handle(request)
      return (response.status, Self.answer(response, to: sealed))
    }
    let holder = Self.laptopA
    let other = Self.laptopB
    let lease = "/v1/watches/\(id)/lease"
    let (status, body) = await send("POST", lease, BridgeJSON.encode(LeaseRequest(holder: holder, timeToLive: 60)))
    #expect(status == 200)
    let token = try #require(body.flatMap { BridgeJSON.decode(Answer<DeviceLease>.self, from: $0) }?.result?.token)
    let (refused, refusal) = await send("POST", lease, BridgeJSON.encode(LeaseRequest(holder: other, timeToLive: 60)))
    #expect(refused == 409)
    #expect(refusal.flatMap { BridgeJSON.decode(Answer<Empty>.self, from: $0) }?.holder == holder)
    // Not used yet: it lives 15 s unless a call or a renewal under its token comes.
    #expect(refusal.flatMap { BridgeJSON.decode(Answer<Empty>.self, from: $0) }?.expiresIn == 15)
    // The seconds it lives unless renewed count down, rounded up, in both refusals (1.3).
    now.update { $0 += 5_500 }
    let (_, later) = await send("POST", lease, BridgeJSON.encode(LeaseRequest(holder: other, timeToLive: 60)))
    #expect(later.flatMap { BridgeJSON.decode(Answer<Empty>.self, from: $0) }?.expiresIn == 10)
    let (writeRefused, writeRefusal) = await send("POST", "/v1/watches/\(id)/call", Self.write)
    #expect(writeRefused == 409)
    #expect(writeRefusal.flatMap { BridgeJSON.decode(Answer<Empty>.self, from: $0) }?.expiresIn == 10)
    #expect(await device.statistics().totalCalls == 0)
    let withToken = BridgeJSON.encode(CallRequest(method: .setAllContacts, args: BridgeArgs.Contacts(contacts: []), lease: token))
    #expect(await send("POST", "/v1/watches/\(id)/call", withToken).0 == 200)
    // Used: it lives the 60 s it was granted with.
    let (_, used) = await send("POST", lease, BridgeJSON.encode(LeaseRequest(holder: other, timeToLive: 60)))
    #expect(used.flatMap { BridgeJSON.decode(Answer<Empty>.self, from: $0) }?.expiresIn == 55)
    now.update { $0 += 61_000 }
    #expect(await send("POST", lease, BridgeJSON.encode(LeaseRequest(holder: other, timeToLive: 60))).0 == 200, "expired")
    #expect(await send("POST", lease, BridgeJSON.encode(LeaseRequest(holder: holder, timeToLive: 0))).0 == 400)
  }

  /// A lease granted but never used — its answer lost on the way, or its request held back
  /// until its sender gave up — locks the watch for `LeaseTable.unusedLifetime` at most, not
  /// its whole time to live (fresh-eyes finding: a first lease request held back past the
  /// client's timeout locked the owner out for 60 s, again and again). A call or a renewal
  /// under its token shows its holder has it: then it lives its time to live.
  @Test func aLeaseNobodyUsesLocksTheWatchOnlyBriefly() async throws {
    let (now, service, _, id, clockSealer) = try Self.clocked()
    let holder = Self.laptopA
    let other = Self.laptopB
    let lease = "/v1/watches/\(id)/lease"
    func ask(_ holder: LockHolder) async -> (Int, Int?) {
      let (asked, sealed) = Self.request("POST", lease, BridgeJSON.encode(LeaseRequest(holder: holder, timeToLive: 60)), sealer: clockSealer)
      let response = await service.handle(asked)
      return (response.status, Self.answer(response, to: sealed).flatMap { BridgeJSON.decode(Answer<Empty>.self, from: $0) }?.expiresIn)
    }
    _ = try await Self.grantedToken(service, lease, holder: holder, sealer: clockSealer)
    let unused = Int(LeaseTable.unusedLifetime / 1000)
    #expect(await ask(other) == (409, unused))
    now.update { $0 += LeaseTable.unusedLifetime + 1 }
    #expect(await ask(other).0 == 200, "nobody used the first lease: the watch is free")
    // Used (a read under its token): the lease lives its 60 s.
    now.update { $0 += LeaseTable.unusedLifetime + 1 }
    let token = try await Self.grantedToken(service, lease, holder: holder, sealer: clockSealer)
    let read = BridgeJSON.encode(CallRequest(method: .getAllContacts, args: Optional<Empty>.none, lease: token, sequence: 1))
    #expect(await service.handle(Self.request("POST", "/v1/watches/\(id)/call", read, sealer: clockSealer).0).status == 200)
    now.update { $0 += LeaseTable.unusedLifetime + 1 }
    let (held, expiresIn) = await ask(other)
    #expect(held == 409 && expiresIn == 60 - unused, "\(held) \(expiresIn ?? -1)")
  }

  /// A renewal held back on the way counts its time to live from when it was sent, not from
  /// its arrival; one that would have expired by then is refused; and a read held back does not
  /// bring back a lease whose unused life ran out (fresh-eyes findings: the release dropped and
  /// a renewal held 29 s locked the watch 77 s after "Apply complete!"; a late read, 60 s more).
  @Test func heldRenewalsAndReadsDoNotStretchALease() async throws {
    let (now, service, _, id, clockSealer) = try Self.clocked()
    let lease = "/v1/watches/\(id)/lease"
    func ask(_ holder: LockHolder) async -> (Int, Int?) {
      let (asked, sealed) = Self.request("POST", lease, BridgeJSON.encode(LeaseRequest(holder: holder, timeToLive: 60)), sealer: clockSealer)
      let response = await service.handle(asked)
      return (response.status, Self.answer(response, to: sealed).flatMap { BridgeJSON.decode(Answer<Empty>.self, from: $0) }?.expiresIn)
    }
    func read(_ token: String, _ sequence: Int) -> BridgeRequest {
      Self.request("POST", "/v1/watches/\(id)/call", BridgeJSON.encode(CallRequest(method: .getAllContacts, args: Optional<Empty>.none,
                                                                                   lease: token, sequence: sequence)), sealer: clockSealer).0
    }
    // Granted and used; the renewal sent 20 s later is held 29 s.
    let token = try await Self.grantedToken(service, lease, holder: Self.laptopA, sealer: clockSealer)
    #expect(await service.handle(read(token, 1)).status == 200)
    now.update { $0 += 20_000 }
    let renewal = { (seconds: Int) in
      Self.request("POST", lease, BridgeJSON.encode(LeaseRequest(holder: Self.laptopA, timeToLive: seconds, token: token)), sealer: clockSealer).0
    }
    let (held, late) = (renewal(60), renewal(5))
    now.update { $0 += 29_000 }
    #expect(await service.handle(held).status == 200)
    #expect(await ask(Self.laptopB) == (409, 31), "60 s from when it was sent (20 s), not from its arrival (49 s)")
    // A renewal for 5 s sealed at 20 s, arriving at 49 s: it would have expired at 25 s.
    #expect(await service.handle(late).status == 409)
    now.update { $0 += 32_000 }
    #expect(await ask(Self.laptopB).0 == 200, "the watch is free once the held renewal's time ran out")
    // A lease never used, its read held back past its unused life: not brought back.
    now.update { $0 += 61_000 }
    let unused = try await Self.grantedToken(service, lease, holder: Self.laptopA, sealer: clockSealer)
    let heldRead = read(unused, 1)
    now.update { $0 += LeaseTable.unusedLifetime + 5_000 }
    #expect(await service.handle(heldRead).status == 200, "reads are never refused")
    #expect(await ask(Self.laptopB).0 == 200, "the read brought nothing back")
  }

  /// A lease request of the same holder with a later `attempt` (protocol 1.6) takes over the
  /// lease an earlier attempt was granted: that answer was lost, and its holder asks again. The
  /// earlier token is released (a write held back under it is refused), and an earlier attempt
  /// arriving late takes nothing over: it is refused as any other holder's.
  @Test func aLaterAttemptOfTheSameHolderTakesOverItsLostLease() async throws {
    let (now, service, device, id, clockSealer) = try Self.clocked()
    let holder = Self.laptopA
    let lease = "/v1/watches/\(id)/lease"
    func asking(_ attempt: Int?, _ holder: LockHolder = holder, id: String? = "ask-1") -> (BridgeRequest, SealedMessage) {
      Self.request("POST", lease, BridgeJSON.encode(LeaseRequest(holder: holder, timeToLive: 60, attempt: attempt, requestID: id)), sealer: clockSealer)
    }
    func token(_ response: BridgeResponse, _ sealed: SealedMessage) -> String? {
      Self.answer(response, to: sealed).flatMap { BridgeJSON.decode(Answer<DeviceLease>.self, from: $0) }?.result?.token
    }
    // Attempt 1 is sealed and held back; attempt 2 goes through.
    let (first, _) = asking(1)
    let (lost, lostSealed) = asking(1)
    let firstToken = try #require(token(await service.handle(lost), lostSealed), "attempt 1, its answer lost")
    now.update { $0 += 10_000 }
    let (second, secondSealed) = asking(2)
    let secondToken = try #require(token(await service.handle(second), secondSealed), "attempt 2 takes the lease over")
    #expect(secondToken != firstToken)
    let write = BridgeJSON.encode(CallRequest(method: .setAllContacts, args: BridgeArgs.Contacts(contacts: []), lease: firstToken))
    #expect(await service.handle(Self.request("POST", "/v1/watches/\(id)/call", write, sealer: clockSealer).0).status == 409)
    #expect(await device.statistics().totalCalls == 0, "a write under the lost lease is not carried out")
    #expect(await service.handle(first).status == 409, "an earlier attempt arriving late takes nothing over")
    #expect(await service.handle(asking(3, LockHolder(pid: 2, host: "laptop-a", command: "tsapply apply", since: "2026-12-01T09:30:00Z")).0).status == 409,
            "another holder's attempt takes nothing over")
    #expect(await service.handle(asking(nil).0).status == 409, "nor does a request without an attempt (a 1.5 client)")
    #expect(await service.handle(asking(3, id: "ask-2").0).status == 409, "nor one of another lease asked for (another apply in the same second)")
    let mine = BridgeJSON.encode(CallRequest(method: .setAllContacts, args: BridgeArgs.Contacts(contacts: []), lease: secondToken, sequence: 1))
    #expect(await service.handle(Self.request("POST", "/v1/watches/\(id)/call", mine, sealer: clockSealer).0).status == 200)
  }

  /// A lease request held back until after its apply had ended — the apply released the lease
  /// an attempt after it got, or gave the lease up when no attempt was answered — is refused
  /// when it arrives: it is granted to nobody and locks no one out (fresh-eyes finding: a clean
  /// apply left the watch locked for 15 s "by a process no longer running"; three held attempts
  /// released late locked it 34 s after the apply had failed).
  @Test(arguments: [false, true])
  func aLeaseRequestArrivingAfterItsApplyEndedIsRefused(givenUp: Bool) async throws {
    let (now, service, _, id, clockSealer) = try Self.clocked()
    let lease = "/v1/watches/\(id)/lease"
    func asking(_ attempt: Int, _ holder: LockHolder = Self.laptopA, id: String = "ask-1") -> (BridgeRequest, SealedMessage) {
      Self.request("POST", lease, BridgeJSON.encode(LeaseRequest(holder: holder, timeToLive: 60, attempt: attempt, requestID: id)), sealer: clockSealer)
    }
    let held = [asking(1).0, asking(2).0]
    if givenUp {
      // No attempt answered: the apply gives the lease up (attempt 1 got through, its answer lost).
      #expect(await service.handle(asking(3).0).status == 200)
      let (giveUp, _) = Self.request("DELETE", lease, BridgeJSON.encode(LeaseRelease(givingUp: "ask-1")), sealer: clockSealer)
      #expect(await service.handle(giveUp).status == 200)
    } else {
      // Attempt 3 answered: the apply runs and releases its lease.
      let (third, sealed) = asking(3)
      let token = try #require(Self.answer(await service.handle(third), to: sealed).flatMap { BridgeJSON.decode(Answer<DeviceLease>.self, from: $0) }?.result?.token)
      let (release, _) = Self.request("DELETE", lease, BridgeJSON.encode(LeaseRelease(token: token)), sealer: clockSealer)
      #expect(await service.handle(release).status == 200)
    }
    now.update { $0 += 20_000 }
    for late in held { #expect(await service.handle(late).status == 409, "held back until after its apply ended") }
    #expect(await service.handle(asking(1, Self.laptopB, id: "ask-9").0).status == 200, "the watch is free for the next apply")
  }

  /// A lease request whose holder is not well-formed (`LockHolder.problem`) is refused with
  /// 400 and takes no lease: the bridge would show it to every client it refuses.
  @Test(arguments: [
    LockHolder(pid: -1, host: "h", command: "c", since: "s"),
    LockHolder(pid: 1, host: "lab\u{1B}[2J\nFAKE: Apply complete!", command: "c", since: "s"),
    LockHolder(pid: 1, host: "h", command: String(repeating: "c", count: 200_000), since: "s"),
  ])
  func aLeaseForAHolderThatIsNotWellFormedIsRefused(holder: LockHolder) async throws {
    let (service, _, id) = try Self.service()
    let lease = "/v1/watches/\(id)/lease"
    let (asked, sealed) = Self.request("POST", lease, BridgeJSON.encode(LeaseRequest(holder: holder, timeToLive: 60)))
    let response = await service.handle(asked)
    #expect(response.status == 400)
    let message = Self.answer(response, to: sealed).flatMap { BridgeJSON.decode(Answer<Empty>.self, from: $0) }?.error?.message
    #expect(message?.hasPrefix("holder.") == true, "\(message ?? "")")
    let well = Self.laptopB
    let (next, _) = Self.request("POST", lease, BridgeJSON.encode(LeaseRequest(holder: well, timeToLive: 60)))
    #expect(await service.handle(next).status == 200, "no lease was taken")
  }

  /// A lease release that names neither a token nor a requestID, or is not JSON, is refused with
  /// 400 saying what a release is, and releases nothing: the lease held goes on.
  @Test(arguments: ["{}", "{\"token\": null, \"requestID\": null}", "[]", "not json", ""])
  func aLeaseReleaseNamingNoLeaseIsRefused(body: String) async throws {
    let (service, _, id) = try Self.service()
    let lease = "/v1/watches/\(id)/lease"
    let token = try await Self.grantedToken(service, lease, holder: Self.laptopA, sealer: Sealer(key: Self.key, side: .client))
    let (release, sealed) = Self.request("DELETE", lease, Array(body.utf8))
    let response = await service.handle(release)
    #expect(response.status == 400)
    let message = Self.answer(response, to: sealed).flatMap { BridgeJSON.decode(Answer<Empty>.self, from: $0) }?.error?.message
    #expect(message == "the body is not a lease release {\"token\": …} or {\"requestID\": …}", "\(message ?? "")")
    let (other, _) = Self.request("POST", lease, BridgeJSON.encode(LeaseRequest(holder: Self.laptopB, timeToLive: 60)))
    #expect(await service.handle(other).status == 409, "the lease is still held")
    let (mine, _) = Self.request("DELETE", lease, BridgeJSON.encode(LeaseRelease(token: token)))
    #expect(await service.handle(mine).status == 200)
  }

  /// The token of a lease `holder` is granted at `lease` (sealed with `sealer`).
  static func grantedToken(_ service: BridgeService, _ lease: String, holder: LockHolder, sealer: Sealer) async throws -> String {
    let (granted, sealed) = request("POST", lease, BridgeJSON.encode(LeaseRequest(holder: holder, timeToLive: 60)), sealer: sealer)
    return try #require(answer(await service.handle(granted), to: sealed).flatMap { BridgeJSON.decode(Answer<DeviceLease>.self, from: $0) }?.result?.token)
  }

  /// A write held back on the way under a lease that then expired — its renewals dropped on
  /// the way, its release too — and that another holder took and released since, is refused
  /// when it arrives: it does not land over the other holder's apply, which the first had
  /// reported not applied (fresh-eyes finding: the watch held the write both reports said it
  /// did not hold). A renewal of that lease is refused too.
  @Test func aWriteUnderALeaseAnotherHolderTookSinceItExpiredIsRefused() async throws {
    let (now, service, device, id, clockSealer) = try Self.clocked()
    let lease = "/v1/watches/\(id)/lease"
    let (ask, askSealed) = Self.request("POST", lease, BridgeJSON.encode(LeaseRequest(holder: Self.laptopA, timeToLive: 3)), sealer: clockSealer)
    let token = try #require(Self.answer(await service.handle(ask), to: askSealed)
      .flatMap { BridgeJSON.decode(Answer<DeviceLease>.self, from: $0) }?.result?.token)
    func call(_ method: BridgeMethod, _ sequence: Int, contacts: [Contact]? = nil) -> (BridgeRequest, SealedMessage) {
      let body = contacts.map { BridgeJSON.encode(CallRequest(method: method, args: BridgeArgs.Contacts(contacts: $0), lease: token, sequence: sequence)) }
        ?? BridgeJSON.encode(CallRequest(method: method, args: Optional<Empty>.none, lease: token, sequence: sequence))
      return Self.request("POST", "/v1/watches/\(id)/call", body, sealer: clockSealer)
    }
    #expect(await service.handle(call(.readState, 1).0).status == 200)
    let (write, sealedWrite) = call(.setAllContacts, 2, contacts: [Contact(name: "Held Write", phoneNum: "+15550100")])
    #expect(await service.handle(call(.getAllContacts, 3).0).status == 200)
    now.update { $0 += 4_000 }
    let other = try await Self.grantedToken(service, lease, holder: Self.laptopB, sealer: clockSealer)
    let (release, _) = Self.request("DELETE", lease, BridgeJSON.encode(LeaseRelease(token: other)), sealer: clockSealer)
    #expect(await service.handle(release).status == 200)
    let before = try await device.getAllContacts()
    let response = await service.handle(write)
    #expect(response.status == 409)
    let refusal = Self.answer(response, to: sealedWrite).flatMap { BridgeJSON.decode(Answer<Empty>.self, from: $0) }?.error
    #expect(refusal?.message.contains("another holder took the watch") == true, "\(String(describing: refusal))")
    #expect(try await device.getAllContacts() == before, "not carried out")
    let (renewal, renewalSealed) = Self.request("POST", lease, BridgeJSON.encode(LeaseRequest(holder: Self.laptopA, timeToLive: 60, token: token)),
                                                sealer: clockSealer)
    let renewed = await service.handle(renewal)
    #expect(renewed.status == 409)
    let said = Self.answer(renewed, to: renewalSealed).flatMap { BridgeJSON.decode(Answer<Empty>.self, from: $0) }?.error?.message
    #expect(said?.contains("another holder took the watch") == true, "\(said ?? "")")
  }

  /// A bridge restarted forgets its leases: a write or a renewal under a token it does not
  /// know, sealed before it started — held back on the way across the restart — is refused, not
  /// carried out over what was applied since nor granted a lease nobody holds (fresh-eyes
  /// findings: a write reported not applied landed after a restart over another apply; a held
  /// renewal locked the owner out 77 s after "Apply complete!"). One sealed after the start
  /// goes on as before (an apply under way when the bridge restarted).
  @Test func aWriteOrARenewalSealedBeforeTheBridgeStartedUnderATokenItDoesNotKnowIsRefused() async throws {
    let now = Locked<UInt64>(1_800_000_000_000)
    let clockSealer = Sealer(key: Self.key, side: .client, clock: { now.value })
    let path = "/v1/watches/AA:BB:CC:DD:EE:01"
    let token = "tokenOfTheBridgeBeforeItsRestart"
    let write = Self.request("POST", path + "/call", BridgeJSON.encode(CallRequest(method: .setAllContacts,
      args: BridgeArgs.Contacts(contacts: [Contact(name: "Held Write", phoneNum: "+15550100")]), lease: token, sequence: 2)), sealer: clockSealer)
    let renewal = Self.request("POST", path + "/lease", BridgeJSON.encode(LeaseRequest(holder: Self.laptopA, timeToLive: 60, token: token)),
                               sealer: clockSealer)
    now.update { $0 += 5_000 }
    let (service, device, _) = try Self.service(clock: { now.value })
    let refused = await service.handle(write.0)
    #expect(refused.status == 409)
    let said = Self.answer(refused, to: write.1).flatMap { BridgeJSON.decode(Answer<Empty>.self, from: $0) }?.error?.message
    #expect(said?.contains("before the bridge started") == true, "\(said ?? "")")
    #expect(try await device.getAllContacts().isEmpty, "not carried out")
    let notRenewed = await service.handle(renewal.0)
    #expect(notRenewed.status == 409)
    // Sealed after the start: an apply under way across the restart writes on (no lease was
    // granted to the held renewal, so none blocks it).
    let (after, _) = Self.request("POST", path + "/call", BridgeJSON.encode(CallRequest(method: .setAllContacts,
      args: BridgeArgs.Contacts(contacts: [Contact(name: "Going On", phoneNum: "+15550101")]), lease: token, sequence: 3)), sealer: clockSealer)
    #expect(await service.handle(after).status == 200)
    #expect(try await device.getAllContacts().map(\.name) == ["Going On"])
    let (other, _) = Self.request("POST", path + "/lease", BridgeJSON.encode(LeaseRequest(holder: Self.laptopB, timeToLive: 60)), sealer: clockSealer)
    #expect(await service.handle(other).status == 200, "no lease was granted to the held renewal")
  }

  /// A write held back on the way until its apply had given it up and released its lease (an
  /// attacker on the path, within the freshness window) is refused, whether or not another
  /// apply holds the watch now: the watch never goes back to what the first apply judged lost.
  @Test func aWriteUnderAReleasedLeaseIsRefusedAsLate() async throws {
    let (now, service, device, id, clockSealer) = try Self.clocked()
    let holder = Self.laptopA
    let lease = "/v1/watches/\(id)/lease"
    let token = try await Self.grantedToken(service, lease, holder: holder, sealer: clockSealer)
    // The write is sealed now and held back; the apply gives up, releases its lease.
    let late = BridgeJSON.encode(CallRequest(method: .setAllContacts, args: BridgeArgs.Contacts(contacts: [Contact(name: "Old", phoneNum: "+15550100")]),
                                             lease: token))
    let (held, sealedWrite) = Self.request("POST", "/v1/watches/\(id)/call", late, sealer: clockSealer)
    let (release, _) = Self.request("DELETE", lease, BridgeJSON.encode(LeaseRelease(token: token)), sealer: clockSealer)
    #expect(await service.handle(release).status == 200)
    now.update { $0 += 12_000 }
    let response = await service.handle(held)
    #expect(response.status == 409)
    let refusal = Self.answer(response, to: sealedWrite).flatMap { BridgeJSON.decode(Answer<Empty>.self, from: $0) }?.error
    #expect(refusal?.message.contains("arrived after that apply ended") == true, "\(String(describing: refusal))")
    #expect(await device.statistics().totalCalls == 0, "not carried out")
  }

  /// A renewal held back on the way too (fresh-eyes finding: delivered after the release, it
  /// brought the lease back — locking the watch for a minute — and the held-back write under it
  /// was then carried out): a released token is not renewed, and the write stays refused.
  @Test func aRenewalOfAReleasedLeaseIsRefusedAndBringsNothingBack() async throws {
    let (now, service, device, id, clockSealer) = try Self.clocked()
    let holder = Self.laptopA
    let other = LockHolder(pid: 2, host: "laptop-b", command: "tsapply apply", since: "2026-12-01T09:31:00Z")
    let lease = "/v1/watches/\(id)/lease"
    let token = try await Self.grantedToken(service, lease, holder: holder, sealer: clockSealer)
    let (renewal, _) = Self.request("POST", lease, BridgeJSON.encode(LeaseRequest(holder: holder, timeToLive: 60, token: token)), sealer: clockSealer)
    let write = BridgeJSON.encode(CallRequest(method: .setAllContacts, args: BridgeArgs.Contacts(contacts: [Contact(name: "Mallory", phoneNum: "+15550666")]),
                                              lease: token))
    let (held, _) = Self.request("POST", "/v1/watches/\(id)/call", write, sealer: clockSealer)
    let (release, _) = Self.request("DELETE", lease, BridgeJSON.encode(LeaseRelease(token: token)), sealer: clockSealer)
    #expect(await service.handle(release).status == 200)
    now.update { $0 += 4_000 }
    #expect(await service.handle(renewal).status == 409, "a released lease is not renewed")
    #expect(await service.handle(held).status == 409, "nor is its held-back write carried out")
    #expect(await device.statistics().totalCalls == 0, "not carried out")
    let (asked, _) = Self.request("POST", lease, BridgeJSON.encode(LeaseRequest(holder: other, timeToLive: 60)), sealer: clockSealer)
    #expect(await service.handle(asked).status == 200, "the watch is free for the next apply")
  }

  /// A write held back on the way while its apply, still holding the lease, gave up waiting,
  /// read the watch back and judged it lost: arriving after that read-back (a later call number
  /// under the same lease), it is refused and not carried out, so the apply's report stays
  /// true. Calls in order are carried out; calls without numbers are not checked.
  @Test func aWriteArrivingAfterALaterCallOfItsLeaseIsRefused() async throws {
    let (service, device, id) = try Self.service()
    let holder = Self.laptopA
    let (granted, sealedLease) = Self.request("POST", "/v1/watches/\(id)/lease", BridgeJSON.encode(LeaseRequest(holder: holder, timeToLive: 60)))
    let token = try #require(Self.answer(await service.handle(granted), to: sealedLease)
      .flatMap { BridgeJSON.decode(Answer<DeviceLease>.self, from: $0) }?.result?.token)
    func call(_ method: BridgeMethod, _ args: some Codable & Sendable, _ sequence: Int?) -> (BridgeRequest, SealedMessage) {
      Self.request("POST", "/v1/watches/\(id)/call", BridgeJSON.encode(CallRequest(method: method, args: args, lease: token, sequence: sequence)))
    }
    let contacts = BridgeArgs.Contacts(contacts: [Contact(name: "Old", phoneNum: "+15550100")])
    #expect(await service.handle(call(.setAllContacts, contacts, 1).0).status == 200, "in order")
    // Call 2 is sealed and held back; the apply reads back as call 3.
    let (held, sealedWrite) = call(.setAllContacts, BridgeArgs.Contacts(contacts: []), 2)
    #expect(await service.handle(call(.getAllContacts, Optional<Empty>.none, 3).0).status == 200)
    let response = await service.handle(held)
    #expect(response.status == 409)
    let refusal = Self.answer(response, to: sealedWrite).flatMap { BridgeJSON.decode(Answer<Empty>.self, from: $0) }?.error
    #expect(refusal?.message.contains("its sender had already given it up") == true, "\(String(describing: refusal))")
    #expect(try await device.getAllContacts().map(\.name) == ["Old"], "not carried out")
    // A renewal keeps the count: a replay of number 3 as a write is refused, 4 goes through.
    let (renewed, _) = Self.request("POST", "/v1/watches/\(id)/lease", BridgeJSON.encode(LeaseRequest(holder: holder, timeToLive: 60, token: token)))
    #expect(await service.handle(renewed).status == 200)
    #expect(await service.handle(call(.setAllContacts, contacts, 3).0).status == 409)
    #expect(await service.handle(call(.setAllContacts, BridgeArgs.Contacts(contacts: []), 4).0).status == 200)
    #expect(await service.handle(call(.setAllContacts, contacts, nil).0).status == 200, "a 1.1 client's call is not checked")
  }

  /// The attacker-chosen path and method are logged percent-encoded beyond printable ASCII
  /// without spaces: a path spelling another log line (`%0Abridge: POST … 200 setAllContacts ok`)
  /// neither starts a line nor reads as one (fresh-eyes fe104 #2: `grep "setAllContacts ok"`
  /// found a write that never happened).
  @Test func aPathSpellingALogLineIsLoggedEncoded() async throws {
    let lines = Locked<[String]>([])
    let service = BridgeService(bridgeID: "b1", key: Self.key, watches: [], cipher: ChaCha20Poly1305(), clock: { 1_800_000_000_000 },
                                log: { line in lines.update { $0.append(line) } })
    let path = "/v1/watches/\nbridge: POST /v1/watches/22:6B/call 200 setAllContacts ok 0.3ms %41"
    _ = await service.handle(BridgeRequest(method: "G ET", path: path, headers: [:], body: []))
    let line = try #require(lines.value.first)
    #expect(line.hasPrefix("G%20ET /v1/watches/%0Abridge:%20POST%20/v1/watches/22:6B/call%20200%20setAllContacts%20ok%200.3ms%20%2541 "), "\(line)")
    #expect(!line.contains("setAllContacts ok") && !line.contains("\n"), "\(line)")
    #expect(BridgeService.loggable("/ä") == "/%C3%A4")
  }

  /// A flood of requests without the key logs 20 lines a minute and then one line saying how
  /// many were left out, by status; requests sealed with the key are logged whatever the flood.
  @Test func aFloodOfUnauthenticatedRequestsLogsTwentyLinesAMinuteAndACount() async throws {
    let now = Locked<UInt64>(1_800_000_000_000)
    let lines = Locked<[String]>([])
    let profile = try PlatformProfile.named("default")
    let id = "AA:BB:CC:DD:EE:01"
    let service = BridgeService(bridgeID: "b1", key: Self.key,
                                watches: [ServedWatch(id: id, device: SimulatedDevice(profile: profile), capabilities: profile.capabilities)],
                                cipher: ChaCha20Poly1305(), clock: { now.value }, log: { line in lines.update { $0.append(line) } })
    let sealer = Sealer(key: Self.key, side: .client, clock: { now.value })
    let read = Array(#"{"method":"getAllContacts"}"#.utf8)
    for index in 0..<30 {
      let wrongKey = Self.request("POST", "/v1/watches/\(id)/call", read, sealer: Sealer(key: SealingKey.random(), side: .client, clock: { now.value })).0
      let status = await service.handle(index < 25 ? wrongKey : BridgeRequest(method: "GET", path: "/nowhere", headers: [:], body: [])).status
      #expect(status == (index < 25 ? 401 : 404))
    }
    #expect(await service.handle(Self.request("POST", "/v1/watches/\(id)/call", read, sealer: sealer).0).status == 200)
    #expect(lines.value.count == 21, "20 refusals and the sealed call: \(lines.value.count)")
    #expect(lines.value.last?.contains("getAllContacts") == true)
    now.update { $0 += 61_000 }
    #expect(await service.handle(Self.request("POST", "/v1/watches/\(id)/call", read, sealer: sealer).0).status == 200)
    let summary = lines.value.dropFirst(21).first ?? ""
    #expect(summary.hasPrefix("refused 10 more unauthenticated requests in the minute from 2027-01-15T08:00:00.000Z"), "\(summary)")
    #expect(summary.hasSuffix("(401: 5, 404: 5)"), "\(summary)")
    #expect(lines.value.count == 23)
  }

  /// The watch's link drops and comes back under a call (`reconnect@N`: the SDK's listeners die
  /// with the connection): the bridge registers its listeners again, so an SOS pressed after the
  /// reconnect still reaches the event stream — once, though every listener reported the drop.
  @Test(arguments: [1, 3])
  func anSOSAfterTheWatchReconnectedReachesTheEventStreamOnce(reconnectAt call: Int) async throws {
    let (service, device, id) = try Self.service(options: SimulationOptions(faults: [.init(.reconnect, atCall: call)]))
    await service.startListening()
    let log = try #require(service.logs[id])
    var reconnected = false
    for _ in 0..<call {
      let (request, sealed) = Self.request("POST", "/v1/watches/\(id)/call", Array(#"{"method":"getAllContacts"}"#.utf8))
      let answer = await service.handle(request)
      let body = Self.answer(answer, to: sealed).map { String(decoding: $0, as: UTF8.self) } ?? ""
      reconnected = reconnected || body.contains("\(TSErrorCode.requestCancelledByDisconnect.rawValue)")
    }
    #expect(reconnected, "the call hit the simulated reconnect")
    try device.simulateSOSPress()
    try device.simulateContactAdd(Contact(name: "Zed", phoneNum: "+15550199"))
    // Everything up to the contact change, in order; a listener registered twice would deliver
    // its own copy of the SOS before its copy of the change.
    let events = await Self.events(of: log, until: .contactsChanged, within: .seconds(10))
    #expect(events.filter { $0 == .sosRequested }.count == 1, "\(events)")
    #expect(events.last == .contactsChanged, "\(events)")
  }

  /// The kinds of the events `log` holds and gets (connection states left out), until one of
  /// `last` (or `within` passed).
  static func events(of log: EventLog, until last: BridgeEvent.Kind, within limit: Duration) async -> [BridgeEvent.Kind] {
    let stream = log.subscribe(after: "none")
    let collect = Task {
      var kinds: [BridgeEvent.Kind] = []
      for await entry in stream where ![.connectionState, .resumePoint].contains(entry.event.type) {
        kinds.append(entry.event.type)
        if entry.event.type == last { break }
      }
      return kinds
    }
    let timer = Task {
      try? await Task.sleep(for: limit)
      collect.cancel()
    }
    defer { timer.cancel() }
    return await collect.value
  }

  /// Each logged event carries `time`: the watch's own where its device gives one (a press the
  /// simulator journalled at its time), else when the bridge heard it, by the bridge's clock (a
  /// journal entry without a time, as a watch whose SDK gives none).
  @Test func loggedEventsCarryTheWatchsTimeElseWhenTheBridgeHeardThem() async throws {
    let path = try TSApplyBinary.temporaryDirectory().path + "/watch.json"
    let device = try SimulatedDevice.create(path: path, profile: .default, force: false)
    let bridgeClock: UInt64 = 1_796_424_700_125
    let service = BridgeService(bridgeID: "b1", key: Self.key,
                                watches: [ServedWatch(id: "AA:BB:CC:DD:EE:02", device: device, capabilities: PlatformProfile.default.capabilities)],
                                cipher: ChaCha20Poly1305(), clock: { bridgeClock })
    await service.startListening()
    let log = try #require(service.logs["AA:BB:CC:DD:EE:02"])
    try device.simulateSOSPress(at: Date(timeIntervalSince1970: 1_796_424_610.25))
    // Another process's press with no time in its journal entry (the file replaced whole, as
    // tsapply replaces it).
    let text = try String(contentsOfFile: path, encoding: .utf8)
    let first = #""time" : "2026-12-04T22:50:10.250Z"\#n    }"#
    try #require(text.contains(first) && text.contains(#""nextSequence" : 2"#), "\(text)")
    let edited = text.replacingOccurrences(of: first, with: first + #",\#n    {"sequence": 2, "kind": "sosRequested"}"#)
      .replacingOccurrences(of: #""nextSequence" : 2"#, with: #""nextSequence" : 3"#)
    try edited.write(toFile: path + ".new", atomically: false, encoding: .utf8)
    #expect(rename(path + ".new", path) == 0)
    let stream = log.subscribe(after: "none")
    let collect = Task {
      var times: [String?] = []
      for await entry in stream where entry.event.type == .sosRequested {
        times.append(entry.event.time)
        if times.count == 2 { break }
      }
      return times
    }
    let timer = Task {
      try? await Task.sleep(for: .seconds(60))
      collect.cancel()
    }
    defer { timer.cancel() }
    #expect(await collect.value == ["2026-12-04T22:50:10.250Z", "2026-12-04T22:51:40.125Z"])
  }

  @Test func theEventLogReplaysAfterLastEventID() async {
    let log = EventLog(capacity: 3)
    for count in 1...5 { log.append(BridgeEvent(type: .contactsChanged, contacts: Array(repeating: Contact(name: "C", phoneNum: "1"), count: count))) }
    // Each replay begins with where it starts (`replayFrom`, 1.4): the event before the first sent.
    func ids(after last: String?) async -> [String] {
      var seen: [String] = []
      for await entry in log.subscribe(after: last) {
        seen.append((entry.event.type == .replayFrom ? "from " : "") + (entry.id ?? "-"))
        if seen.count == 4 || (last == "\(log.boot)-4" && seen.count == 2) { break }
      }
      return seen
    }
    let b = log.boot
    #expect(await ids(after: "\(b)-2") == ["from \(b)-2", "\(b)-3", "\(b)-4", "\(b)-5"])
    #expect(await ids(after: "\(b)-4") == ["from \(b)-4", "\(b)-5"])
    #expect(await ids(after: "\(b)-1") == ["from \(b)-2", "\(b)-3", "\(b)-4", "\(b)-5"], "too old: everything kept")
    #expect(await ids(after: "other-9") == ["from \(b)-2", "\(b)-3", "\(b)-4", "\(b)-5"], "another start: everything kept")
  }
}
