import Foundation
import TSEngine

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

  /// Counts the heals `entries` (a watch's history, `ApplyHistory`) list in the window ending at
  /// `now`: applies that a monitor made (`command` starting `tsapply monitor`) and that
  /// `applied`. So the budget holds across `monitor --once` runs and restarts of a monitor,
  /// which keep no budget in memory; a heal that failed is counted only by the run it failed in
  /// (the history does not say whether its failure can pass, which is not counted).
  public mutating func count(_ entries: [HistoryEntry], now: Date) {
    for entry in entries.reversed() {
      guard let time = ApplyHistory.parseTime(entry.time) else { continue }
      if now.timeIntervalSince(time) >= window { break }
      guard entry.kind == "apply", entry.result == "applied",
            entry.command == Self.monitorCommand || entry.command.hasPrefix(Self.monitorCommand + " ") else { continue }
      applies.append((time, false))
    }
    applies.sort { $0.time < $1.time }
  }

  /// How a monitor's applies begin in the history's `command` (`MonitorSettings.commandLine`).
  public static let monitorCommand = "tsapply monitor"

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
