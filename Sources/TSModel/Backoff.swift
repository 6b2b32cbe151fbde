import Foundation

/// Exponential backoff, the one tsapply uses everywhere it tries again: reconnecting to a watch,
/// delivering an SOS, a fleet agent's retry of a transient failure, an MQTT reconnect, a bridge
/// event stream's reconnect. The first wait is `initial`, each next one `factor` times longer, never more than
/// `maximum`; each wait is shortened by up to `jitter` (a fraction) at random, so many monitors
/// that lost one bridge do not all come back in the same instant.
public struct Backoff: Sendable {
  /// How the waits grow.
  public struct Policy: Hashable, Sendable {
    /// The first wait.
    public var initial: Duration
    /// The longest wait.
    public var maximum: Duration
    /// How much longer each wait is than the one before (≥ 1).
    public var factor: Double
    /// The largest fraction (0…1) taken off a wait at random.
    public var jitter: Double

    /// SOS delivery (`Delivery`, the monitors' default): from half a second, doubling, never
    /// more than 30 s, so a receiver that comes back is tried again within 30 s whatever its
    /// outage lasted (jitter only shortens waits).
    public static let sosDelivery = Policy(initial: .milliseconds(500), maximum: .seconds(30))

    /// A policy; the defaults double each wait and take up to a tenth off at random.
    public init(initial: Duration, maximum: Duration, factor: Double = 2, jitter: Double = 0.1) {
      self.initial = initial
      self.maximum = max(initial, maximum)
      self.factor = max(1, factor)
      self.jitter = min(1, max(0, jitter))
    }
  }

  /// The policy.
  public let policy: Policy
  /// Retries so far since the last `reset()`.
  public private(set) var attempts = 0
  private var random: @Sendable () -> Double

  /// Backoff by `policy`; `random` gives numbers in 0..<1 (tests pass a fixed one).
  public init(_ policy: Policy, random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }) {
    self.policy = policy
    self.random = random
  }

  /// The wait before the next retry, counting it.
  public mutating func next() -> Duration {
    defer { attempts += 1 }
    return wait(retry: attempts)
  }

  /// The wait before retry number `retry` (0 for the first), not counting it: `initial` ×
  /// `factor`^`retry`, at most `maximum`, shortened by up to `jitter`.
  public func wait(retry: Int) -> Duration {
    let base = Self.seconds(policy.initial) * Foundation.pow(policy.factor, Double(min(max(0, retry), 64)))
    let capped = min(base, Self.seconds(policy.maximum))
    return .milliseconds(Int64((capped * (1 - policy.jitter * random()) * 1000).rounded()))
  }

  /// Starts again from `initial` (after a success).
  public mutating func reset() { attempts = 0 }

  /// `duration` in seconds.
  public static func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
  }
}
