import Foundation
import Testing
@testable import TSBridge
import TSModel

/// The sealing format: every byte is authenticated, a message opens only where it was sealed
/// for, nonces never repeat, and the replay guard's window and memory.
@Suite struct SealingTests {
  static let key = SealingKey(bytes: Array(0..<32))!
  static let context = SealContext.request(method: "POST", path: "/v1/watches/AA:BB:CC:DD:EE:FF/call", lastEventID: nil)

  @Test func roundTripsAndLaysOutTheHeader() throws {
    let sealer = Sealer(key: Self.key, side: .client, clock: { 0x0102_0304_0506 })
    let plaintext = Array(#"{"method":"getAllContacts"}"#.utf8)
    let message = sealer.seal(plaintext, for: Self.context)
    #expect(Array(message.bytes[0..<4]) == Array("TSB1".utf8))
    #expect(message.bytes[4] == 0x51)
    #expect(Array(message.bytes[5..<11]) == [1, 2, 3, 4, 5, 6])
    #expect(message.counter >> 47 == 0, "a client's counter has the top bit clear")
    #expect(message.bytes.count == SealedMessage.headerSize + plaintext.count + AEADSizes.tag)
    #expect(sealer.open(message, for: Self.context) == plaintext)
    let bridge = Sealer(key: Self.key, side: .bridge)
    #expect(bridge.seal([], for: .response(requestNonce: message.nonce)).counter >> 47 == 1)
  }

  /// Flipping any one bit of any byte (header, nonce, ciphertext or tag) is refused.
  @Test func everyByteIsAuthenticated() {
    let sealer = Sealer(key: Self.key, side: .client)
    let message = sealer.seal(Array(#"{"method":"setAllContacts","args":{"contacts":[]}}"#.utf8), for: Self.context)
    var accepted: [Int] = []
    for index in message.bytes.indices {
      for bit in [0, 7] {
        var bytes = message.bytes
        bytes[index] ^= 1 << UInt8(bit)
        if let tampered = SealedMessage(bytes: bytes), sealer.open(tampered, for: Self.context) != nil { accepted.append(index) }
      }
    }
    #expect(accepted.isEmpty, "bytes \(accepted) were not authenticated")
    #expect(SealedMessage(bytes: Array(message.bytes.dropLast())).flatMap { sealer.open($0, for: Self.context) } == nil)
    #expect(SealedMessage(bytes: message.bytes + [0]).flatMap { sealer.open($0, for: Self.context) } == nil)
  }

  /// A message opens only under its key, kind and context.
  @Test(arguments: [
    ("another key", SealingKey(bytes: Array(repeating: 7, count: 32))!, SealingTests.context),
    ("another path", SealingTests.key, SealContext.request(method: "POST", path: "/v1/watches/AA:BB:CC:DD:EE:00/call", lastEventID: nil)),
    ("another method", SealingTests.key, SealContext.request(method: "DELETE", path: "/v1/watches/AA:BB:CC:DD:EE:FF/call", lastEventID: nil)),
    ("another Last-Event-ID", SealingTests.key, SealContext.request(method: "POST", path: "/v1/watches/AA:BB:CC:DD:EE:FF/call", lastEventID: "1")),
    ("a response", SealingTests.key, SealContext.response(requestNonce: Array(repeating: 0, count: 12))),
  ])
  func opensOnlyWhereSealed(_ label: String, _ key: SealingKey, _ context: SealContext) {
    let message = Sealer(key: Self.key, side: .client).seal(Array("x".utf8), for: Self.context)
    #expect(Sealer(key: key, side: .bridge).open(message, for: context) == nil, "\(label)")
  }

  @Test func noncesAreUniqueWithinOneMillisecond() {
    let sealer = Sealer(key: Self.key, side: .client, clock: { 42 })
    let nonces = (0..<1000).map { _ in sealer.seal([], for: Self.context).nonce }
    #expect(Set(nonces).count == 1000)
  }

  /// The replay guard: (offset from the bridge's clock in ms, accepted?).
  @Test(arguments: [(0, true), (-29_999, true), (30_000, true), (-30_001, false), (30_001, false), (-86_400_000, false)])
  func timeWindow(_ offset: Int64, _ accepted: Bool) {
    let now: UInt64 = 1_800_000_000_000
    let sealer = Sealer(key: Self.key, side: .client, clock: { UInt64(Int64(now) + offset) })
    let guardian = ReplayGuard(clock: { now })
    let result = Result { () throws(ReplayGuard.Refusal) in try guardian.accept(sealer.seal([], for: Self.context)) }
    #expect(((try? result.get()) != nil) == accepted)
  }

  @Test func aNonceIsAcceptedOnce() throws {
    let sealer = Sealer(key: Self.key, side: .client)
    let guardian = ReplayGuard()
    let first = sealer.seal([], for: Self.context)
    try guardian.accept(first)
    #expect(throws: ReplayGuard.Refusal.replayed) { try guardian.accept(first) }
    try guardian.accept(sealer.seal([], for: Self.context))
  }

  /// A guard over a journal remembers across a restart (a new guard on the same files), cuts
  /// off a record torn by a crash, and lets the two files take turns so they hold only fresh
  /// nonces.
  @Test func theJournalOutlivesARestart() throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nonces-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let path = directory + "/bridge.nonces"
    let now = Locked<UInt64>(1_800_000_000_000)
    let sealer = Sealer(key: Self.key, side: .client, clock: { now.value })
    let first = sealer.seal([], for: Self.context), second = sealer.seal([], for: Self.context)
    do {
      let guardian = try ReplayGuard(journal: NonceJournal(path: path, rotation: 2), clock: { now.value })
      try guardian.accept(first)
      try guardian.accept(second)
    }
    for index in 0..<2 {
      #expect(try (FileManager.default.attributesOfItem(atPath: "\(path).\(index)")[.posixPermissions] as? NSNumber)?.intValue == 0o600)
    }
    // A crash in the middle of a record: the torn bytes are cut off, the whole records kept.
    let handle = try #require(FileHandle(forWritingAtPath: path + ".0"))
    try handle.seekToEnd()
    try handle.write(contentsOf: Data([1, 2, 3]))
    try handle.close()
    now.update { $0 += 10_000 }
    let restarted = try ReplayGuard(journal: NonceJournal(path: path, rotation: 2), clock: { now.value })
    #expect(throws: ReplayGuard.Refusal.replayed) { try restarted.accept(first) }
    #expect(throws: ReplayGuard.Refusal.replayed) { try restarted.accept(second) }
    let third = sealer.seal([], for: Self.context)
    try restarted.accept(third)
    // 31 s later the first two are stale: the full file is emptied when the files take turns.
    now.update { $0 += 31_000 }
    for _ in 0..<4 { try restarted.accept(sealer.seal([], for: Self.context)) }
    let sizes = try (0..<2).map { try (FileManager.default.attributesOfItem(atPath: "\(path).\($0)")[.size] as? NSNumber)?.intValue ?? -1 }
    #expect(sizes.reduce(0, +) < 7 * 12, "stale nonces were kept: \(sizes)")
    #expect(sizes.allSatisfy { $0 % 12 == 0 })
    let again = try ReplayGuard(journal: NonceJournal(path: path, rotation: 2), clock: { now.value })
    #expect(throws: ReplayGuard.Refusal.outsideWindow(offsetMilliseconds: -41_000)) { try again.accept(first) }
  }

  @Test func pairingStringsRoundTripAndBadOnesAreRefusedWithoutTheKey() throws {
    let pairing = PairingString(host: "192.168.1.20", port: 8765, bridgeID: "0a1b2c3d4e5f6071", key: Self.key)
    #expect(try PairingString(parsing: pairing.description) == pairing)
    let key = Self.key.base64url
    #expect(key.count == 43)
    for bad in ["", "tsapply-bridge:v2/h/1/id/\(key)", "tsapply-bridge:v1/h/0/id/\(key)", "tsapply-bridge:v1/h/1/ID!/\(key)",
                "tsapply-bridge:v1/h/1/id/\(key.dropLast())", "tsapply-bridge:v1/h/1/id", "tsapply-bridge:v1/h w/1/id/\(key)"] {
      #expect(throws: PairingError.self, "\(bad)") { try PairingString(parsing: bad) }
      do { _ = try PairingString(parsing: bad) } catch { #expect(!error.message.contains(key.prefix(20)), "\(bad)") }
    }
  }
}
