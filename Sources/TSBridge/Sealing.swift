import Foundation

/// The pairing key: 32 random bytes shared by one bridge and the clients paired with it.
public struct SealingKey: Hashable, Sendable {
  /// The key's bytes (exactly 32).
  public let bytes: [UInt8]

  /// The key `bytes`; `nil` unless there are exactly 32.
  public init?(bytes: [UInt8]) {
    guard bytes.count == AEADSizes.key else { return nil }
    self.bytes = bytes
  }

  /// A fresh key from the system's cryptographic random source.
  public static func random() -> SealingKey {
    var generator = SystemRandomNumberGenerator()
    return SealingKey(bytes: (0..<AEADSizes.key).map { _ in UInt8.random(in: 0...255, using: &generator) })!
  }

  /// The key as unpadded base64url (43 characters), as the pairing string carries it.
  public var base64url: String { Base64URL.encode(bytes) }

  /// The key from unpadded base64url; `nil` when it is not 32 bytes of base64url.
  public init?(base64url text: String) {
    guard let bytes = Base64URL.decode(text) else { return nil }
    self.init(bytes: bytes)
  }
}

/// One sealed message, the unit of docs/bridge-protocol.md "Sealing":
///
/// | offset | bytes | field |
/// |---|---|---|
/// | 0 | 4 | magic `TSB1` (ASCII) |
/// | 4 | 1 | kind: `Q` (0x51) request, `R` (0x52) response, `E` (0x45) event |
/// | 5 | 6 | nonce, first half: milliseconds since 1970-01-01 UTC, big-endian |
/// | 11 | 6 | nonce, second half: the sender's counter, big-endian; top bit 0 from a client, 1 from a bridge |
/// | 17 | n | ChaCha20-Poly1305 ciphertext of the n-byte plaintext (UTF-8 JSON, or empty) |
/// | 17+n | 16 | Poly1305 tag |
///
/// The AEAD nonce is bytes 5–16; the additional data is bytes 0–16 followed by the context
/// (`SealContext`), which binds a request to its method and path and a response to its request.
public struct SealedMessage: Hashable, Sendable {
  /// The 4 magic bytes, `TSB1`.
  public static let magic: [UInt8] = Array("TSB1".utf8)
  /// Bytes before the ciphertext.
  public static let headerSize = 17
  /// The smallest sealed message: a header and a tag around an empty plaintext.
  public static let minimumSize = headerSize + AEADSizes.tag

  /// What a message is.
  public enum Kind: UInt8, Sendable {
    /// A client's request.
    case request = 0x51
    /// A bridge's response.
    case response = 0x52
    /// One Server-Sent Event of the events stream.
    case event = 0x45
  }

  /// The whole message, header through tag.
  public let bytes: [UInt8]

  /// The message in `bytes` (not yet authenticated); `nil` when too short or without the magic.
  public init?(bytes: [UInt8]) {
    guard bytes.count >= Self.minimumSize, Array(bytes[0..<4]) == Self.magic, Kind(rawValue: bytes[4]) != nil else { return nil }
    self.bytes = bytes
  }

  /// The kind byte.
  public var kind: Kind { Kind(rawValue: bytes[4])! }
  /// The 12-byte nonce.
  public var nonce: [UInt8] { Array(bytes[5..<17]) }
  /// The nonce's timestamp, milliseconds since 1970.
  public var timestampMilliseconds: UInt64 { Self.uint48(bytes[5..<11]) }
  /// The nonce's counter, top bit the sender's side.
  public var counter: UInt64 { Self.uint48(bytes[11..<17]) }

  static func uint48(_ slice: ArraySlice<UInt8>) -> UInt64 { slice.reduce(0) { $0 << 8 | UInt64($1) } }

  /// Whether this message was sealed after one whose counter is `previous` by the same sender:
  /// its 47-bit counter comes after `previous`'s, counting on past the wrap (serial number
  /// arithmetic, RFC 1982: less than half the counter's range ahead). A sender's counter
  /// increases with every message it seals, so on one event stream each message comes after
  /// the last; one that does not is a copy sent again on the way ("Sealing",
  /// docs/bridge-protocol.md).
  public func comesAfter(counter previous: UInt64) -> Bool {
    let ahead = (counter &- previous) & Sealer.counterMask
    return ahead != 0 && ahead < (Sealer.counterMask + 1) / 2
  }
}

/// What a sealed message is bound to besides its own header (the AEAD's additional data after
/// the 17 header bytes), so it cannot be moved to another place:
/// - a request: `METHOD SP PATH LF LAST-EVENT-ID` in UTF-8 (the path as sent, percent-decoded;
///   the `Last-Event-ID` header's value, empty when not sent);
/// - a response: the 12-byte nonce of the request it answers;
/// - an event: the request's nonce followed by the event's `id` in UTF-8.
public enum SealContext: Sendable {
  /// A request for `method` `path`, resuming events after `lastEventID`.
  case request(method: String, path: String, lastEventID: String?)
  /// A response to the request with `nonce`.
  case response(requestNonce: [UInt8])
  /// Event `id` on the stream opened by the request with `nonce`.
  case event(requestNonce: [UInt8], id: String)

  var kind: SealedMessage.Kind {
    switch self {
    case .request: .request
    case .response: .response
    case .event: .event
    }
  }

  var bytes: [UInt8] {
    switch self {
    case .request(let method, let path, let lastEventID): Array("\(method) \(path)\n\(lastEventID ?? "")".utf8)
    case .response(let nonce): nonce
    case .event(let nonce, let id): nonce + Array(id.utf8)
    }
  }
}

/// Which end of the link seals: its nonces' counters differ in the top bit, so a client and a
/// bridge sharing a key never use the same nonce.
public enum SealingSide: Sendable {
  /// A client (tsapply): counter top bit 0.
  case client
  /// A bridge: counter top bit 1.
  case bridge
}

/// Seals and opens messages under one pairing key. Each instance keeps its own counter,
/// starting at a random value, so nonces are unique per sender: (millisecond, counter).
/// Thread-safe.
public final class Sealer: @unchecked Sendable {
  /// The pairing key.
  public let key: SealingKey
  let side: SealingSide
  let cipher: any AEAD
  let clock: @Sendable () -> UInt64
  private let lock = NSLock()
  private var counter: UInt64

  /// Counter values are 47 bits; the 48th is the side.
  static let counterMask: UInt64 = (1 << 47) - 1
  /// The counter's top bit: 1 in a bridge's nonces, 0 in a client's.
  public static let sideBit: UInt64 = 1 << 47

  /// A sealer for `side` under `key` with `cipher`. `clock` gives milliseconds since 1970
  /// (tests move it).
  public init(key: SealingKey, side: SealingSide, cipher: any AEAD,
              clock: @escaping @Sendable () -> UInt64 = Sealer.systemMilliseconds) {
    self.key = key
    self.side = side
    self.cipher = cipher
    self.clock = clock
    counter = UInt64.random(in: 0...Self.counterMask)
  }

  #if canImport(CryptoKit) || canImport(CCrypto)
  /// A sealer for `side` under `key` with the package's ChaCha20-Poly1305 (CryptoKit or libcrypto).
  public convenience init(key: SealingKey, side: SealingSide,
                          clock: @escaping @Sendable () -> UInt64 = Sealer.systemMilliseconds) {
    self.init(key: key, side: side, cipher: ChaCha20Poly1305(), clock: clock)
  }
  #endif

  /// Milliseconds since 1970 from the system clock.
  @Sendable public static func systemMilliseconds() -> UInt64 { UInt64(max(0, Date().timeIntervalSince1970 * 1000)) }

  /// The next nonce: the clock's milliseconds (48 bits) and this sealer's counter with its side bit.
  func nextNonce() -> [UInt8] {
    let count = lock.withLock { () -> UInt64 in
      counter = (counter + 1) & Self.counterMask
      return counter
    }
    let value = count | (side == .bridge ? Self.sideBit : 0)
    let time = clock() & ((1 << 48) - 1)
    return (0..<6).reversed().map { UInt8(truncatingIfNeeded: time >> (8 * $0)) }
      + (0..<6).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
  }

  /// `plaintext` sealed for `context` with a fresh nonce.
  public func seal(_ plaintext: [UInt8], for context: SealContext) -> SealedMessage {
    seal(plaintext, for: context, nonce: nextNonce())
  }

  /// `plaintext` sealed for `context` with `nonce` (tests; never reuse a nonce).
  public func seal(_ plaintext: [UInt8], for context: SealContext, nonce: [UInt8]) -> SealedMessage {
    let header = SealedMessage.magic + [context.kind.rawValue] + nonce
    let body = cipher.seal(plaintext, key: key.bytes, nonce: nonce, aad: header + context.bytes)
    return SealedMessage(bytes: header + body)!
  }

  /// The plaintext of `message` if it is of `context`'s kind and authenticates under this key
  /// and `context`; `nil` otherwise (wrong key, any byte changed, moved to another place).
  /// Freshness (time window, replay) is `ReplayGuard`'s job.
  public func open(_ message: SealedMessage, for context: SealContext) -> [UInt8]? {
    guard message.kind == context.kind else { return nil }
    let header = Array(message.bytes[0..<SealedMessage.headerSize])
    return cipher.open(Array(message.bytes[SealedMessage.headerSize...]), key: key.bytes, nonce: message.nonce,
                       aad: header + context.bytes)
  }
}

/// Refuses stale and repeated requests: a request's nonce timestamp must be within `window` of
/// the bridge's clock, and each nonce is accepted once. Nonces are remembered only while their
/// timestamp is inside the window (older ones are refused by the time check anyway), so memory
/// stays bounded by the request rate. With a `NonceJournal`, each nonce is on the disk before
/// `accept` returns and the kept ones are read back when the guard is made, so a restart does
/// not forget them. Thread-safe.
public final class ReplayGuard: @unchecked Sendable {
  /// Why a request was refused.
  public enum Refusal: Error, Hashable, Sendable, CustomStringConvertible {
    /// The timestamp is this many milliseconds off the bridge's clock (negative: in the past).
    case outsideWindow(offsetMilliseconds: Int64)
    /// The nonce was accepted before.
    case replayed
    /// The nonce could not be put in the journal (the disk is full or failing): the request is
    /// refused rather than accepted without a record that outlives a restart.
    case notRecorded

    public var description: String {
      switch self {
      case .outsideWindow(let offset):
        "the request's timestamp is \(abs(offset) / 1000) s \(offset < 0 ? "old" : "ahead") (the window is ±\(BridgeProtocol.timeWindowSeconds) s): check both clocks"
      case .replayed: "the request was already received once (a replay)"
      case .notRecorded: "the bridge cannot record the request's nonce on its disk, so it carries out nothing: free some space or check the bridge's log"
      }
    }
  }

  let windowMilliseconds: UInt64
  let clock: @Sendable () -> UInt64
  private let lock = NSLock()
  private var seen: [[UInt8]: UInt64] = [:]
  private let journal: NonceJournal?

  /// A guard accepting timestamps within `windowSeconds` of `clock` (milliseconds since 1970),
  /// remembering nonces in memory only.
  public init(windowSeconds: Int = BridgeProtocol.timeWindowSeconds,
              clock: @escaping @Sendable () -> UInt64 = Sealer.systemMilliseconds) {
    windowMilliseconds = UInt64(windowSeconds) * 1000
    self.clock = clock
    journal = nil
  }

  /// As `init(windowSeconds:clock:)`, keeping every accepted nonce in `journal` too, and
  /// starting with the nonces it holds.
  /// - Throws: `NonceJournalError` when the journal cannot be read.
  public init(windowSeconds: Int = BridgeProtocol.timeWindowSeconds, journal: NonceJournal,
              clock: @escaping @Sendable () -> UInt64 = Sealer.systemMilliseconds) throws(NonceJournalError) {
    windowMilliseconds = UInt64(windowSeconds) * 1000
    self.clock = clock
    self.journal = journal
    let now = clock()
    for nonce in try journal.load() {
      let stamp = NonceJournal.stamp(of: nonce)
      if stamp + windowMilliseconds >= now { seen[nonce] = stamp }
    }
  }

  /// Accepts `message` once if it is fresh (and, with a journal, once it is recorded there).
  /// - Throws: `Refusal`.
  public func accept(_ message: SealedMessage) throws(Refusal) {
    let now = clock()
    let stamp = message.timestampMilliseconds
    let offset = stamp >= now ? Int64(clamping: stamp - now) : -Int64(clamping: now - stamp)
    guard UInt64(abs(offset)) <= windowMilliseconds else { throw .outsideWindow(offsetMilliseconds: offset) }
    let refusal = lock.withLock { () -> Refusal? in
      if seen.count > 1024 { seen = seen.filter { $0.value + windowMilliseconds >= now } }
      guard seen[message.nonce] == nil else { return .replayed }
      do {
        try journal?.record(message.nonce, now: now, window: windowMilliseconds)
      } catch {
        return .notRecorded
      }
      seen[message.nonce] = stamp
      return nil
    }
    if let refusal { throw refusal }
  }
}

/// Unpadded base64url (RFC 4648 docs/platforms.md "Listeners"), as the pairing string uses.
public enum Base64URL {
  /// `bytes` as base64url without `=` padding.
  public static func encode(_ bytes: [UInt8]) -> String {
    Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
      .replacingOccurrences(of: "=", with: "")
  }

  /// The bytes of unpadded (or padded) base64url `text`; `nil` when it is not base64url.
  public static func decode(_ text: String) -> [UInt8]? {
    guard text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "=") }) else { return nil }
    var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    while standard.count % 4 != 0 { standard += "=" }
    return Data(base64Encoded: standard).map(Array.init)
  }
}
