import Foundation
import TSModel

/// The leases of a bridge's watches: at most one live lease per watch, which expires `timeToLive`
/// seconds after it was granted or last renewed unless renewed again. Writes from anyone but
/// the holder are refused while it lives (`BridgeService`). Thread-safe.
public final class LeaseTable: @unchecked Sendable {
  struct Lease {
    var token: String
    var holder: LockHolder
    var expires: UInt64
    /// The highest call number seen under the lease (`CallRequest.sequence`), 0 before any.
    var highestSequence = 0
    /// When it was granted (or last renewed), and for how long (milliseconds).
    var granted: UInt64
    var timeToLive: UInt64
    /// Whether a call or a renewal under its token came: its holder has it. Until then it lives
    /// at most `unusedLifetime`.
    var used = false
    /// The attempt of its holder's request that took it, and that request's id
    /// (`LeaseRequest.attempt`, `.requestID`).
    var attempt: Int?
    var requestID: String?
    /// The least gap seen between a request under the lease reaching the bridge and its seal's
    /// time (milliseconds, the bridge's clock less the client's): the client's clock offset
    /// plus the quickest delivery, to judge when a renewal held back on the way was sent.
    var offset: Int64?
  }

  private let lock = NSLock()
  private var leases: [String: Lease] = [:]
  /// Tokens of leases that ended — released by their holders (or given up, or taken over by a
  /// later attempt), or expired and replaced by another lease — and how, the newest last, at
  /// most `keptReleased` per watch.
  private var endedTokens: [String: [(token: String, end: End)]] = [:]
  /// The `LeaseRequest.requestID`s of leases released or given up, the newest last, at most
  /// `keptReleased` per watch: a request of one of them arriving late is refused (`ended`).
  private var endedRequests: [String: [String]] = [:]
  /// How many ended tokens (and ended requestIDs) are remembered per watch.
  static let keptReleased = 64
  /// How long a new lease lives, in milliseconds, until a call or a renewal under its token
  /// shows that its holder got it: 15 s, past a client's 10 s timeout. A lease whose answer was
  /// lost, or whose request was held back on the way until its sender gave up, locks the watch
  /// that long, not its whole time to live (fresh-eyes finding: 60 s, again and again).
  public static let unusedLifetime: UInt64 = 15_000
  let clock: @Sendable () -> UInt64
  /// When this table — the bridge's run — began, on `clock`: a request under a token it does
  /// not know, sealed before then, was held back on the way across a restart (`End.beforeRestart`).
  let startedAt: UInt64

  /// A table timing leases with `clock` (milliseconds since 1970).
  public init(clock: @escaping @Sendable () -> UInt64 = Sealer.systemMilliseconds) {
    self.clock = clock
    startedAt = clock()
  }

  /// What happened to a lease request.
  public enum Outcome: Hashable, Sendable {
    /// Granted (or renewed) with this token.
    case granted(token: String)
    /// Another holder's lease is live, for `expiresIn` more seconds (rounded up) unless renewed.
    case held(LockHolder, expiresIn: Int)
    /// A renewal of a token its holder released: a renewal held back on the way, arriving after
    /// the apply ended. Granting it would bring the lease back (locking the watch, and letting a
    /// write held back with it be carried out); a holder asks for a new lease instead.
    case released
    /// A renewal of a token whose lease expired and that another holder's lease replaced since:
    /// its holder lost the watch (its renewals held back or lost on the way); it asks for a new
    /// lease. Granting it would let a write held back under it land over the other holder's apply.
    case superseded
    /// A renewal of a token this bridge run does not know, sealed before it started
    /// (`End.beforeRestart`): granting it would lock the watch for a holder whose apply may be
    /// over (fresh-eyes finding: 77 s after "Apply complete!").
    case beforeRestart
    /// A request for a new lease under a `requestID` whose lease was released or given up: held
    /// back on the way until after its apply had ended. Granting it would lock the watch for nobody.
    case ended
    /// A renewal that arrives after the lease it renews would have expired, counted from when it
    /// was sent (`acquire`): held back on the way, its apply likely over.
    case expired
  }

  /// Takes (no `token`) or renews (`token`) the lease of `watch` for `request.holder`. A token
  /// whose lease expired is granted again while nobody else took the watch. A new lease lives
  /// `unusedLifetime` until used (`admit`) or renewed. A request of the live lease's holder
  /// with a later `attempt` than the one that took it takes it over (its answer was lost): the
  /// earlier token is released, so nothing held back under it is carried out. A renewal counts
  /// its time to live from when it was sent — its seal's time `sealedAt` (milliseconds, the
  /// client's clock) moved onto the bridge's by the lease's `offset` — not from its arrival, so
  /// one held back on the way does not keep the watch locked a time to live after its apply
  /// ended (fresh-eyes finding: 77 s after "Apply complete!"); one that would have expired by
  /// its arrival is `expired`.
  public func acquire(_ watch: String, _ request: LeaseRequest, sealedAt: UInt64? = nil) -> Outcome {
    let now = clock()
    return lock.withLock {
      if request.token == nil, let id = request.requestID, endedRequests[watch]?.contains(id) == true { return .ended }
      if let current = leases[watch], current.expires > now, current.token != request.token {
        guard request.token == nil, current.holder == request.holder, current.requestID == request.requestID,
              let later = request.attempt, later > current.attempt ?? .max else {
          return .held(current.holder, expiresIn: Self.seconds(from: now, to: current.expires))
        }
        remember(current.token, ended: .released, of: watch)
      }
      if let token = request.token, leases[watch]?.token != token, let end = end(of: token, watch, sealedAt: sealedAt) {
        switch end {
        case .released: return .released
        case .superseded: return .superseded
        case .beforeRestart: return .beforeRestart
        }
      }
      let token = request.token ?? Self.newToken()
      // A renewal keeps the calls seen under the lease, and shows its holder has it.
      let renewed = leases[watch].flatMap { $0.token == token ? $0 : nil }
      let lifetime = UInt64(request.timeToLive) * 1000
      let offset = Self.offset(renewed?.offset, now: now, sealedAt: sealedAt)
      var expires = now + min(lifetime, Self.unusedLifetime)
      if let renewed {
        // When it was sent, on the bridge's clock (never after now).
        var sent = now
        if let sealedAt, let offset { sent = UInt64(clamping: min(Int64(bitPattern: now), Int64(bitPattern: sealedAt) + offset)) }
        guard sent + lifetime > now else { return .expired }
        expires = max(renewed.expires, sent + lifetime)
      }
      // The lease this one replaces, expired, is over for good: a write or a renewal held back
      // under it is refused (fresh-eyes finding: a write held back past its lease's expiry
      // landed after another holder's apply).
      if let replaced = leases[watch], replaced.token != token { remember(replaced.token, ended: .superseded, of: watch) }
      leases[watch] = Lease(token: token, holder: request.holder, expires: expires,
                            highestSequence: renewed?.highestSequence ?? 0, granted: now, timeToLive: lifetime, used: renewed != nil,
                            attempt: renewed?.attempt ?? request.attempt, requestID: renewed?.requestID ?? request.requestID, offset: offset)
      return .granted(token: token)
    }
  }

  /// Ends the lease of `watch` if `token` holds it, and remembers that `token` was released.
  public func release(_ watch: String, token: String) {
    lock.withLock {
      if let lease = leases[watch], lease.token == token {
        leases[watch] = nil
        if let id = lease.requestID { remember(ended: id, of: watch) }
      }
      remember(token, ended: .released, of: watch)
    }
  }

  /// Gives up the lease of `watch` asked for under `requestID` (its answer never came): the
  /// lease that request may have been granted ends (its token counts as released), and a
  /// request of that id arriving later is refused (`ended`).
  public func giveUp(_ watch: String, requestID: String) {
    lock.withLock {
      if let lease = leases[watch], lease.requestID == requestID {
        leases[watch] = nil
        remember(lease.token, ended: .released, of: watch)
      }
      remember(ended: requestID, of: watch)
    }
  }

  /// Remembers that the lease asked for under `requestID` ended (called under the lock).
  private func remember(ended requestID: String, of watch: String) {
    var ids = endedRequests[watch, default: []]
    if !ids.contains(requestID) { ids.append(requestID) }
    endedRequests[watch] = Array(ids.suffix(Self.keptReleased))
  }

  /// How a lease ended, for what still comes under its token (`ended(_:token:)`).
  public enum End: Hashable, Sendable {
    /// Its holder released it (`DELETE`) or gave it up, or a later attempt took it over.
    case released
    /// It expired, and another lease of the watch was granted since.
    case superseded
    /// This bridge run does not know it, and the request under it was sealed before the run
    /// started: a lease of the bridge before a restart, its request held back on the way across
    /// it. Judged on the client's seal time against the bridge's start, so only as well as the
    /// two clocks agree.
    case beforeRestart
  }

  /// Remembers that `token`, a lease of `watch`, ended as `end` (called under the lock); the
  /// first end remembered stays.
  private func remember(_ token: String, ended end: End, of watch: String) {
    var tokens = endedTokens[watch, default: []]
    if !tokens.contains(where: { $0.token == token }) { tokens.append((token, end)) }
    endedTokens[watch] = Array(tokens.suffix(Self.keptReleased))
  }

  /// How the lease `token` of `watch` ended, if it did: a write made under it arrived after its
  /// apply ended or lost the watch (held back on the way), and must not be carried out — its
  /// sender already judged it lost, and another holder may have written since
  /// (docs/bridge-protocol.md "Leases"). `nil` for the live lease, and for a token not known
  /// unless the request under it was sealed before this bridge run started (`sealedAt`, the
  /// client's clock: `End.beforeRestart`). Remembered in memory only: a bridge restart forgets
  /// them, hence that last rule.
  public func ended(_ watch: String, token: String?, sealedAt: UInt64? = nil) -> End? {
    guard let token else { return nil }
    return lock.withLock { leases[watch]?.token == token ? nil : end(of: token, watch, sealedAt: sealedAt) }
  }

  /// How `token`, not the live lease of `watch`, ended (called under the lock).
  private func end(of token: String, _ watch: String, sealedAt: UInt64?) -> End? {
    if let end = endedTokens[watch]?.first(where: { $0.token == token })?.end { return end }
    if let sealedAt, sealedAt < startedAt { return .beforeRestart }
    return nil
  }

  /// Records that a call numbered `sequence` under `token` reached the bridge, and whether a
  /// write so numbered may still be carried out: not when a call of the same lease numbered as
  /// high or higher was seen before it. Its sender makes calls one at a time, so that write was
  /// held back on the way while the sender gave up on it and went on (read the watch back,
  /// judged the write lost): carrying it out now would make the sender's report untrue
  /// (docs/bridge-protocol.md "Leases"). Calls without a token or a number, or under a token
  /// that is not the watch's last lease, are not checked. In memory only.
  ///
  /// A call under the token of `watch`'s lease shows its holder has it: a lease not used before
  /// lives from then on the time to live it was granted (or renewed) with — if it is still live:
  /// a call held back on the way does not bring back a lease whose unused life ran out
  /// (fresh-eyes finding: a read arriving late locked the watch 60 s more). `sealedAt`: the
  /// call's seal time, for the lease's `offset`.
  public func admit(_ watch: String, token: String?, sequence: Int?, writes: Bool, sealedAt: UInt64? = nil) -> Bool {
    guard let token else { return true }
    let now = clock()
    return lock.withLock {
      guard var lease = leases[watch], lease.token == token else { return true }
      lease.offset = Self.offset(lease.offset, now: now, sealedAt: sealedAt)
      if !lease.used, lease.expires > now {
        lease.used = true
        lease.expires = max(lease.expires, lease.granted + lease.timeToLive)
      }
      defer { leases[watch] = lease }
      guard let sequence else { return true }
      let late = writes && sequence <= lease.highestSequence
      lease.highestSequence = max(lease.highestSequence, sequence)
      return !late
    }
  }

  /// The holder of a live lease on `watch` other than `token`, if any, and the seconds (rounded
  /// up) it lives unless renewed: a write under `token` must be refused.
  public func blocker(_ watch: String, token: String?) -> (holder: LockHolder, expiresIn: Int)? {
    let now = clock()
    return lock.withLock {
      guard let current = leases[watch], current.expires > now, current.token != token else { return nil }
      return (current.holder, Self.seconds(from: now, to: current.expires))
    }
  }

  /// A lease's `offset` once a request sealed at `sealedAt` (the client's clock) reached the
  /// bridge at `now`: the least gap seen, `offset` or this one; `offset` when the seal time is
  /// not known.
  static func offset(_ offset: Int64?, now: UInt64, sealedAt: UInt64?) -> Int64? {
    guard let sealedAt else { return offset }
    let gap = Int64(bitPattern: now) - Int64(bitPattern: sealedAt)
    return offset.map { min($0, gap) } ?? gap
  }

  /// Whole seconds from `now` to `expires` (milliseconds since 1970), rounded up: a lease with
  /// any time left is never said to expire in 0 s.
  static func seconds(from now: UInt64, to expires: UInt64) -> Int {
    Int((expires - min(now, expires) + 999) / 1000)
  }

  /// 16 random bytes, base64url: a lease's token, or a client's `LeaseRequest.requestID`.
  public static func newToken() -> String {
    var generator = SystemRandomNumberGenerator()
    return Base64URL.encode((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) })
  }
}
