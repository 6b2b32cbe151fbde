import Foundation

/// How many times a monitor may heal one watch: at most `limit` applies in any hour (a sliding
/// window, `--max-applies-per-hour`). A watch that needs more keeps drifting back — something
/// on the watch's side undoes every heal — and the monitor stops fighting it (see `Monitor`).
public struct ApplyBudget: Sendable {
  /// Applies allowed in any window.
  public let limit: Int
  /// The window's length (one hour).
  public let window: TimeInterval
  /// Each apply counted: when, and whether it failed.
  private var applies: [(time: Date, failed: Bool)] = []

  /// A budget of `limit` applies per `window` seconds (default one hour).
  public init(limit: Int, window: TimeInterval = 3600) {
    self.limit = max(0, limit)
    self.window = window
  }

  /// Applies counted in the window ending at `now`.
  public func used(at now: Date) -> Int {
    applies.filter { now.timeIntervalSince($0.time) < window }.count
  }

  /// Of the applies counted in the window ending at `now`, those that failed (a heal that keeps
  /// failing spends the budget too, and must not be reported as a watch healed again and again).
  public func failed(at now: Date) -> Int {
    applies.filter { now.timeIntervalSince($0.time) < window && $0.failed }.count
  }

  /// Whether another apply fits in the window ending at `now`.
  public func allows(at now: Date) -> Bool { used(at: now) < limit }

  /// Counts an apply made at `now`, which `failed` or not (and forgets those that left the window).
  public mutating func record(at now: Date, failed: Bool = false) {
    applies.removeAll { now.timeIntervalSince($0.time) >= window }
    applies.append((now, failed))
  }

  /// How the spent budget reads in the monitor's event: "healed 6 times in the last hour",
  /// "healed 4 times in the last hour, and 2 heals failed", or "6 heals failed in the last hour".
  public func spentWords(at now: Date) -> String {
    let failed = failed(at: now), healed = used(at: now) - failed
    func times(_ count: Int) -> String { "\(count) time\(count == 1 ? "" : "s")" }
    func heals(_ count: Int) -> String { "\(count) heal\(count == 1 ? "" : "s")" }
    switch (healed, failed) {
    case (_, 0): return "healed \(times(healed)) in the last hour"
    case (0, _): return "\(heals(failed)) failed in the last hour"
    default: return "healed \(times(healed)) in the last hour, and \(heals(failed)) failed"
    }
  }
}
