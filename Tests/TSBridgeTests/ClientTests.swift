import Foundation
import Testing
@testable import TSBridge
import TSBridgeClient
import TSBridgeServer
import TSDevice
import TSHTTPServer
import TSModel

/// `BridgeDevice` against a real `BridgeServer` on 127.0.0.1 (a free port), in process.
@Suite(.timeLimit(.minutes(5))) struct ClientTests {
  static func serve(_ device: SimulatedDevice, id: String = "02:00:00:00:00:01", key: SealingKey = .random(),
                    port: UInt16 = 0, faults: BridgeFaults = BridgeFaults()) async throws -> (BridgeServer, PairingString) {
    let profile = try device.profile()
    let service = BridgeService(bridgeID: "test-bridge", key: key,
                                watches: [ServedWatch(id: id, device: device, capabilities: profile.capabilities)],
                                cipher: ChaCha20Poly1305(), faults: faults)
    await service.startListening()
    let server = try BridgeServer(service: service, port: port)
    return (server, PairingString(host: "127.0.0.1", port: Int(server.port), bridgeID: "test-bridge", key: key))
  }

  enum Heard: Hashable, Sendable {
    case contacts([String]), emergencyRefused(DeviceError), sos
  }

  /// A lease no attempt of which was answered is given up: the error says nothing on the watch
  /// was read or written (fresh-eyes finding: "the call may or may not have reached the
  /// watch"), and the lease the bridge granted it ends at once.
  @Test func aLeaseNoAttemptOfWhichWasAnsweredIsGivenUp() async throws {
    let watch = SimulatedDevice(profile: .default)
    let (server, pairing) = try await Self.serve(watch, faults: BridgeFaults([.lease: .dropResponse]))
    defer { server.stop() }
    let device = try await BridgeDevice.connect(pairing, watchID: nil, timeout: 120, retryDelays: [])
    defer { Task { await device.close() } }
    do {
      _ = try await device.acquireLease(holder: LockHolder(pid: 1, host: "a", command: "tsapply apply", since: "2026-12-06T00:00:00Z"), timeToLive: 60)
      Issue.record("a lease whose answer was dropped was granted")
    } catch {
      guard case .device(let failure) = error else {
        Issue.record("\(error)")
        return
      }
      #expect(failure.message.contains("nothing on the watch was read or written. The lease was given up")
              && !failure.message.contains("may or may not"), "\(failure)")
    }
    let other = LockHolder(pid: 2, host: "b", command: "tsapply apply", since: "2026-12-06T00:00:01Z")
    _ = try await device.acquireLease(holder: other, timeToLive: 60)
  }

  /// A client whose lease was answered last longer ago than it lives (its renewals held back or
  /// lost on the way) sends no write under it: the lease may have run out and another holder
  /// taken the watch. The write fails as a refusal — nothing sent, so nothing of it reached the
  /// watch — saying why (fresh-eyes finding: an apply went on writing for over 60 s with every
  /// renewal dropped). Reads still go.
  @Test func noWriteIsSentUnderALeaseThatMayHaveRunOut() async throws {
    let watch = SimulatedDevice(profile: .default)
    let (server, pairing) = try await Self.serve(watch)
    defer { server.stop() }
    let device = try await BridgeDevice.connect(pairing, watchID: nil, timeout: 120)
    defer { Task { await device.close() } }
    // 5 s to live: the first write comes well within it on a loaded machine too (1 s was
    // overrun under a CI run with builds beside it, and the first write refused).
    _ = try await device.acquireLease(holder: LockHolder(pid: 1, host: "a", command: "tsapply apply", since: "2026-12-06T00:00:00Z"), timeToLive: 5)
    try await device.setAllContacts([Contact(name: "Ann", phoneNum: "+15550100")])
    try await Task.sleep(for: .milliseconds(5100))
    _ = try await device.getAllContacts()
    do {
      try await device.setAllContacts([Contact(name: "Bob", phoneNum: "+15550101")])
      Issue.record("a write was sent under a lease that may have run out")
    } catch {
      #expect(!error.mayHaveTakenEffect && error.message.contains("may have run out") && error.message.contains("not sent"), "\(error)")
    }
    #expect(try await watch.getAllContacts().map(\.name) == ["Ann"])
  }

  @Test func listenersHearTheWatchThroughEventsAndResumeAfterAReconnect() async throws {
    let watch = SimulatedDevice(profile: try PlatformProfile.named("fw"))
    let key = SealingKey.random()
    let (server, pairing) = try await Self.serve(watch, key: key)
    let device = try await BridgeDevice.connect(pairing, watchID: nil, timeout: 120)
    let (heard, hear) = AsyncStream<Heard>.makeStream()
    await device.registerContactsDidChange { result in
      if case .success(let contacts) = result { hear.yield(.contacts(contacts.map(\.name))) }
    }
    await device.registerEmergencyContactsDidChange { result in
      if case .failure(let error) = result { hear.yield(.emergencyRefused(error)) }
    }
    await device.registerSOSRequest { error in if error == nil { hear.yield(.sos) } }
    var iterator = heard.makeAsyncIterator()
    // The platform's own refusal passes through unchanged.
    let (refusals, refuse) = AsyncStream<DeviceError>.makeStream()
    await SimulatedDevice(profile: try PlatformProfile.named("fw")).registerEmergencyContactsDidChange { result in
      if case .failure(let error) = result { refuse.yield(error) }
    }
    var directly = refusals.makeAsyncIterator()
    let direct = try #require(await directly.next())
    #expect(await iterator.next() == .emergencyRefused(direct))
    try watch.simulateContactAdd(Contact(name: "Alex", phoneNum: "+15550100"))
    #expect(await iterator.next() == .contacts(["Alex"]))
    try watch.simulateSOSPress()
    #expect(await iterator.next() == .sos)
    // The bridge goes away; an event happens meanwhile; the stream reconnects with Last-Event-ID.
    let port = server.port
    server.stop()
    try watch.simulateContactAdd(Contact(name: "Bea", phoneNum: "+15550111"))
    // The port is free again, but another test's connection may hold it as its local port for a
    // moment (both come from the ephemeral range): try for a while.
    var restarted: BridgeServer?
    for _ in 0..<50 where restarted == nil {
      restarted = try? BridgeServer(service: server.service, port: port)
      if restarted == nil { try await Task.sleep(for: .milliseconds(100)) }
    }
    let again = try #require(restarted, "port \(port) stayed in use")
    defer { again.stop() }
    #expect(await iterator.next() == .contacts(["Alex", "Bea"]))
    await device.close()
  }

  /// `listen(to:after:)` over the bridge: without an id the stream's `resumePoint` says where it
  /// starts; a second client resuming after the last event the first handled (a monitor killed
  /// and restarted) hears what it missed, of its kinds, in order, and nothing it handled.
  @Test func aListenerResumesAfterTheLastEventAnEarlierOneHandled() async throws {
    let watch = SimulatedDevice(profile: try PlatformProfile.named("fw"))
    let (server, pairing) = try await Self.serve(watch)
    defer { server.stop() }
    try watch.simulateSOSPress()  // before anyone listened
    let first = try await BridgeDevice.connect(pairing, watchID: nil, timeout: 120)
    let (heard, hear) = AsyncStream<ListenerReport>.makeStream()
    await first.listen(to: [.sosRequested], after: nil) { hear.yield($0) }
    var iterator = heard.makeAsyncIterator()
    guard case .resumePoint(let start)? = await iterator.next() else { Issue.record("no resume point first"); return }
    #expect(start.rawValue.hasSuffix("-1"), "the newest event held when it started: \(start)")
    let boot = start.rawValue.dropLast(2)
    func sos(_ sequence: Int) -> ListenerReport { .event(DeviceEvent(id: DeviceEventID("\(boot)-\(sequence)"), kind: .sosRequested)) }
    // Times are checked on their own (eventsCarryWhenTheyHappenedThroughTheBridge).
    func untimed(_ report: ListenerReport?) -> ListenerReport? {
      guard case .event(var event)? = report else { return report }
      event.time = nil
      return .event(event)
    }
    try watch.simulateSOSPress()
    #expect(untimed(await iterator.next()) == sos(2))
    await first.close()

    try watch.simulateSOSPress()
    try watch.simulateContactAdd(Contact(name: "Alex", phoneNum: "+15550100"))
    try watch.simulateSOSPress()
    let second = try await BridgeDevice.connect(pairing, watchID: nil, timeout: 120)
    let (again, hearAgain) = AsyncStream<ListenerReport>.makeStream()
    await second.listen(to: [.sosRequested], after: DeviceEventID("\(boot)-2")) { hearAgain.yield($0) }
    var resumed = again.makeAsyncIterator()
    // Where the bridge's replay starts, for a listener that keeps it; then what came after.
    #expect(await resumed.next() == .resumePoint(DeviceEventID("\(boot)-2")))
    #expect(untimed(await resumed.next()) == sos(3))
    #expect(untimed(await resumed.next()) == sos(5), "the contact change is not of its kinds")
    try watch.simulateSOSPress()
    #expect(untimed(await resumed.next()) == sos(6))
    await second.close()
  }

  /// A bridge event's `time` reaches the listener's `DeviceEvent.time`: a press the watch timed
  /// keeps its time when replayed to a client that was away; an event without `time` (a bridge
  /// from before the field) or with one that is no time is still delivered, its time unknown.
  @Test func eventsCarryWhenTheyHappenedThroughTheBridge() async throws {
    let watch = SimulatedDevice(profile: try PlatformProfile.named("fw"))
    let id = "02:00:00:00:00:01"
    let (server, pairing) = try await Self.serve(watch, id: id)
    defer { server.stop() }
    let pressed = Date(timeIntervalSince1970: 1_796_424_610.25)
    try watch.simulateSOSPress(at: pressed)  // while no client listened
    let device = try await BridgeDevice.connect(pairing, watchID: nil, timeout: 120)
    let (heard, hear) = AsyncStream<ListenerReport>.makeStream()
    // After no event of any start: every event the bridge holds (one of another start would
    // first be told missed: EventStreamTamperTests).
    await device.listen(to: [.sosRequested], after: .everything) { hear.yield($0) }
    var iterator = heard.makeAsyncIterator()
    func nextTime() async -> Date?? {
      var report = await iterator.next()
      if case .resumePoint? = report { report = await iterator.next() }
      guard case .event(let event)? = report else { return .none }
      return .some(event.time)
    }
    #expect(await nextTime() == .some(pressed), "the watch's time, not when the client heard it")
    let log = try #require(server.service.logs[id])
    log.append(BridgeEvent(type: .sosRequested))
    #expect(await nextTime() == .some(nil), "delivered without a time")
    log.append(BridgeEvent(type: .sosRequested, time: "at noon"))
    #expect(await nextTime() == .some(nil), "delivered; a time that is no time is unknown")
    #expect(BridgeJSON.decode(BridgeEvent.self, from: Array(#"{"type":"sosRequested","time":17}"#.utf8))
              == BridgeEvent(type: .sosRequested), "a time that is not text is taken as absent, the event kept")
    #expect(BridgeJSON.decode(BridgeEvent.self, from: Array(#"{"time":"2026-12-04T22:50:10.250Z","type":"sosRequested"}"#.utf8))?.date
              == pressed)
    #expect(String(decoding: BridgeJSON.encode(BridgeEvent(type: .sosRequested)), as: UTF8.self) == #"{"type":"sosRequested"}"#,
            "no time, no field: what bridges sent before it")
    await device.close()
  }

  /// Every call goes through; `readState` is one round trip; capabilities none.
  @Test(arguments: PlatformProfile.all.map(\.name))
  func callsMatchTheWatch(_ profile: String) async throws {
    let watch = SimulatedDevice(profile: try PlatformProfile.named(profile))
    let (server, pairing) = try await Self.serve(watch)
    defer { server.stop() }
    let device = try await BridgeDevice.connect(pairing, watchID: "02:00:00:00:00:01", timeout: 120)
    #expect(device.identity == "bridge:test-bridge/02:00:00:00:00:01")
    let capabilities = try await device.capabilities()
    #expect(capabilities == (try PlatformProfile.named(profile).capabilities))
    let state = try await device.readState(capabilities: capabilities)
    #expect(state == (try await watch.readState(capabilities: capabilities)))
    #expect(await device.statistics().calls == ["listWatches": 1, "readState": 1])
    func outcome(_ device: any Device) async -> Result<[Contact], DeviceError> {
      do { return .success(try await device.getAllContacts()) } catch { return .failure(error) }
    }
    let direct = await outcome(watch), bridged = await outcome(device)
    #expect(direct == bridged, "SDK errors pass through unchanged")
    if capabilities.contacts.maxContacts > 0 {
      try await device.setAllContacts([Contact(name: "Ann", phoneNum: "+15550100")])
      #expect(try watch.snapshot().contacts.map(\.name) == ["Ann"])
    }
    await device.close()
  }

  @Test func linkFailuresAreTheSDKsCodes() async throws {
    let watch = SimulatedDevice(profile: .default)
    let (server, pairing) = try await Self.serve(watch)
    let device = try await BridgeDevice.connect(pairing, watchID: nil, timeout: 120, retryDelays: [])
    server.stop()
    await #expect(throws: DeviceError.self) { try await device.fetchAllReminders() }
    do { _ = try await device.fetchAllReminders() } catch {
      #expect(error.code == .unConnected, "the bridge is gone: the request never left")
    }
    var wrong = pairing
    wrong.key = .random()
    let (other, _) = try await Self.serve(watch, port: 0)
    defer { other.stop() }
    wrong.port = Int(other.port)
    do {
      _ = try await BridgeDevice.connect(wrong, watchID: nil, timeout: 120)
      Issue.record("connected with the wrong key")
    } catch {
      #expect(error.domain == BridgeProtocol.errorDomain && error.code.rawValue == 401, "\(error)")
    }
  }

  /// The bridge carries a call out, then its connection (a kept-alive one) closes before the
  /// answer: libcurl sends the same bytes again and the bridge refuses that copy as a replay.
  /// A write is reported as a lost answer (9310), not a wrong key — it ran once; a read is sent
  /// again at once, sealed afresh, on a new connection (not a retry: `retryDelays` is empty) and
  /// succeeds — it ran twice, which a read may.
  /// The client's connection pool is shared with every test running meanwhile: when the call's
  /// connection was not the kept-alive one (another transfer's new connection pushed it out of
  /// libcurl's pool, or a loaded run idled it past `HTTPClient.keptAliveSeconds`), the dropped
  /// answer was on a new connection, which libcurl does not send again — a lost answer of the
  /// plain kind; the case is then set up again, with a new bridge, up to five times.
  @Test(arguments: [BridgeMethod.getAllContacts, .setAllContacts])
  func aCallWhoseKeptAliveConnectionClosedUnderItIsALostAnswer(_ method: BridgeMethod) async throws {
    for attempt in 1...5 {
      let watch = SimulatedDevice(profile: .default)
      let (server, pairing) = try await Self.serve(watch, faults: BridgeFaults([.method(method): .dropResponse]))
      defer { server.stop() }
      let device = try await BridgeDevice.connect(pairing, watchID: nil, timeout: 120, retryDelays: [])
      defer { Task { await device.close() } }
      if method == .getAllContacts {
        let read: Result<[Contact], DeviceError>
        do { read = .success(try await device.getAllContacts()) } catch { read = .failure(error) }
        guard case .success(let contacts) = read else {
          #expect(await watch.statistics().calls[method.rawValue] == 1, "dropped on a connection of its own: sent once (attempt \(attempt))")
          continue
        }
        #expect(contacts.isEmpty)
        #expect(await watch.statistics().calls[method.rawValue] == 2, "the read, then the read on a new connection")
      } else {
        do {
          try await device.setAllContacts([Contact(name: "Ann", phoneNum: "+15550100")])
          Issue.record("the dropped answer was not reported")
          return
        } catch {
          #expect(error.code == .requestCancelledByDisconnect, "\(error)")
          #expect(await watch.statistics().calls[method.rawValue] == 1, "carried out once")
          guard error.message.contains("refused as a replay") else { continue }  // not sent again: a connection of its own
        }
      }
      #expect(try await device.getAllContacts().count == (method == .setAllContacts ? 1 : 0), "the next call goes through")
      return
    }
    Issue.record("libcurl never reused the call's kept-alive connection in five tries")
  }

  /// A write carried out, answered with an unsealed refusal — which anyone on the path can
  /// forge, no key needed (fresh-eyes finding: tsapply said "Nothing reached the watch" while it
  /// held the write, and printed the forged text's escape codes raw): its outcome is not known
  /// (a lost answer: the engine reads the list back), and the text is escaped.
  /// The same for an unsealed 400 naming another major version (fresh-eyes finding: taken for
  /// a refusal, "Nothing reached the watch" while it held the write): the version header of an
  /// answer no key stands behind is no more trusted than its status.
  @Test(arguments: [(BridgeFaults.Fault.forgedRefusal, "HTTP 401"), (.forgedVersion, "HTTP 400")])
  func aWriteAnsweredUnsealedIsALostAnswerNotARefusal(_ fault: BridgeFaults.Fault, _ status: String) async throws {
    let watch = SimulatedDevice(profile: .default)
    let (server, pairing) = try await Self.serve(watch, faults: BridgeFaults([.method(.setAllContacts): fault]))
    defer { server.stop() }
    let device = try await BridgeDevice.connect(pairing, watchID: nil, timeout: 120, retryDelays: [])
    do {
      try await device.setAllContacts([Contact(name: "Ann", phoneNum: "+15550100")])
      Issue.record("the forged refusal was taken as an answer")
    } catch {
      #expect(error.code == .requestCancelledByDisconnect, "outcome unknown: \(error)")
      #expect(error.message.contains("was not sealed by the bridge (\(status)"), "\(error)")
      #expect(!error.message.contains("\u{1B}") && !error.message.contains("\n"), "control characters escaped: \(error)")
    }
    #expect(try watch.snapshot().contacts.map(\.name) == ["Ann"], "it was carried out")
    await device.close()
  }

  /// A call carried out and answered 200 unsealed — a success no key stands behind, which
  /// anyone on the path can send: an answer that does not authenticate (9310, as docs say), not
  /// "HTTP 502" (fresh-eyes finding); a read is tried again, a write's outcome is not known.
  @Test(arguments: [BridgeMethod.getAllContacts, .setAllContacts])
  func aCallAnsweredWithAnUnsealedSuccessIsALostAnswer(_ method: BridgeMethod) async throws {
    let watch = SimulatedDevice(profile: .default)
    let (server, pairing) = try await Self.serve(watch, faults: BridgeFaults(parsing: "forge-success@\(method.rawValue)")!)
    defer { server.stop() }
    let device = try await BridgeDevice.connect(pairing, watchID: nil, timeout: 120, retryDelays: method == .getAllContacts ? [.zero] : [])
    if method == .getAllContacts {
      #expect(try await device.getAllContacts().isEmpty, "tried again, answered sealed")
      #expect(await watch.statistics().calls[method.rawValue] == 2)
    } else {
      do {
        try await device.setAllContacts([Contact(name: "Ann", phoneNum: "+15550100")])
        Issue.record("the unsealed success was taken as an answer")
      } catch {
        #expect(error.code == .requestCancelledByDisconnect && error.domain == .bleConnect, "\(error)")
        #expect(error.message.contains("(HTTP 200) was not sealed") && !error.message.contains("502"), "\(error)")
      }
      #expect(try watch.snapshot().contacts.map(\.name) == ["Ann"], "it was carried out")
    }
    await device.close()
  }

  @Test func aBridgeOfAnotherMajorVersionIsAClearError() async throws {
    let server = try HTTPServer.start { _ in
      HTTPResponse(status: 400, contentType: "application/json", bytes: Array("{}".utf8), headers: [BridgeProtocol.versionHeader: "2.0"])
    }
    defer { server.stop() }
    let pairing = PairingString(host: "127.0.0.1", port: Int(server.port), bridgeID: "future", key: .random())
    do {
      _ = try await BridgeDevice.connect(pairing, watchID: nil, timeout: 120)
      Issue.record("connected to a v2 bridge")
    } catch {
      #expect(error.message.contains("the bridge speaks protocol v2 (2.0); this tsapply speaks v1"), "\(error)")
    }
  }

  @Test func watchIDsAreStableMACs() {
    let id = ReferenceBridge.watchID(for: "sim:/home/ann/watch.json")
    #expect(id == ReferenceBridge.watchID(for: "sim:/home/ann/watch.json"))
    #expect(id != ReferenceBridge.watchID(for: "sim:/home/ann/other.json"))
    let bytes = id.split(separator: ":").compactMap { UInt8($0, radix: 16) }
    #expect(bytes.count == 6 && id.count == 17 && id == id.uppercased())
    #expect(bytes[0] & 0x02 == 0x02 && bytes[0] & 0x01 == 0, "locally administered, unicast")
  }
}
