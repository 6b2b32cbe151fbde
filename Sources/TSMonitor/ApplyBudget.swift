import Foundation

/// How many times a monitor may heal one watch: at most `limit` applies in any hour (a sliding
/// window, `--max-applies-per-hour`). A watch that needs more keeps drifting back — something
/// on the watch's side undoes every heal — and the monitor stops fighting it (see `Monitor`).
public struct ApplyBudget: Sendable {
  /// Applies allowed in any window.
  public let limit: Int
  /// The window's length (one hour).
  public let window: TimeInterval
  private var applies: [Date] = []

  /// A budget of `limit` applies per `window` seconds (default one hour).
  public init(limit: Int, window: TimeInterval = 3600) {
    self.limit = max(0, limit)
    self.window = window
  }

  /// Applies counted in the window ending at `now`.
  public func used(at now: Date) -> Int {
    applies.filter { now.timeIntervalSince($0) < window }.count
  }

  /// Whether another apply fits in the window ending at `now`.
  public func allows(at now: Date) -> Bool { used(at: now) < limit }

  /// Counts an apply made at `now` (and forgets those that left the window).
  public mutating func record(at now: Date) {
    applies.removeAll { now.timeIntervalSince($0) >= window }
    applies.append(now)
  }
}
