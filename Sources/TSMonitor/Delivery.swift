import Foundation
import TSModel
import TSApply

/// Delivers outbox entries to every notifier, each retried with backoff until it succeeds (each
/// attempt numbered across restarts, `Outbox.beginAttempt`, and given to the notifier), and
/// keeps the outbox in step: a notifier's success is recorded in the entry, and the entry is
/// removed when every notifier has succeeded. Entries are delivered side by side, so one
/// unreachable receiver never holds back another event or another notifier.
public actor Delivery {
  /// What happened to a delivery, for the monitor to report.
  public enum Report: Sendable {
    /// An attempt failed; the next one is in `retryIn`. `failingSince`: when the notifier's
    /// first failed attempt at this entry ended, in this run or an earlier one (`Outbox.failing`).
    case attemptFailed(id: String, notifier: String, attempt: Int, reason: String, retryIn: Duration, failingSince: Date)
    /// The notifier succeeded (after `attempts` attempts); `failedBefore`: an earlier attempt
    /// is known to have failed (in this run, or an earlier one: the outbox's `failingSince`) —
    /// else the earlier attempts were cut short by a stop or a crash, their end not known.
    case delivered(id: String, notifier: String, attempts: Int, failedBefore: Bool)
    /// Every notifier succeeded; the entry left the outbox.
    case completed(id: String)
    /// The outbox could not be updated (the entry stays, so it is delivered again later).
    case outboxFailed(id: String, error: SecureFileError)
  }

  /// The outbox delivered from.
  public let outbox: Outbox
  /// The notifiers every entry goes to.
  public let notifiers: [any Notifier]
  private let policy: Backoff.Policy
  private let report: @Sendable (Report) -> Void
  private var running: [String: Task<Void, Never>] = [:]
  private var stopping = false

  /// Delivery from `outbox` to `notifiers`, retrying by `policy`, telling `report` what happens.
  public init(outbox: Outbox, notifiers: [any Notifier], policy: Backoff.Policy,
              report: @escaping @Sendable (Report) -> Void) {
    self.outbox = outbox
    self.notifiers = notifiers
    self.policy = policy
    self.report = report
  }

  /// Starts delivering `entry` (already in the outbox) unless it is being delivered.
  public func start(_ entry: Outbox.Entry) {
    guard !stopping, running[entry.id] == nil, !notifiers.isEmpty else { return }
    running[entry.id] = Task { await self.deliver(entry) }
  }

  /// Entries being delivered now.
  public var inFlight: Int { running.count }

  /// Waits until nothing is being delivered (for tests and benchmarks).
  public func idle() async {
    while let task = running.values.first { await task.value }
  }

  /// Stops delivering: waits up to `grace` for attempts under way to finish, then cancels the
  /// rest (a command being run is killed). What was not delivered stays in the outbox.
  public func stop(grace: Duration) async {
    stopping = true
    let tasks = Array(running.values)
    let deadline = ContinuousClock.now + grace
    let waiter = Task {
      for task in tasks { await task.value }
    }
    while running.count > 0 && ContinuousClock.now < deadline {
      try? await Task.sleep(for: .milliseconds(20))
    }
    for task in running.values { task.cancel() }
    await waiter.value
  }

  private func deliver(_ entry: Outbox.Entry) async {
    let remaining = notifiers.filter { !entry.delivered.contains($0.key) }
    let policy = self.policy, report = self.report
    await withTaskGroup(of: (any Notifier)?.self) { group in
      for notifier in remaining {
        group.addTask {
          var backoff = Backoff(policy)
          var attempt = 0
          var failedBefore = entry.failingSince?[notifier.key] != nil
          while !Task.isCancelled {
            attempt = await self.beginAttempt(entry.id, notifier.key, fallback: attempt + 1)
            guard let reason = await notifier.deliver(id: entry.id, body: entry.body, attempt: attempt) else {
              report(.delivered(id: entry.id, notifier: notifier.name, attempts: attempt, failedBefore: failedBefore))
              return notifier
            }
            if Task.isCancelled { break }
            failedBefore = true
            let wait = backoff.next()
            let since = await self.failing(entry.id, notifier.key)
            report(.attemptFailed(id: entry.id, notifier: notifier.name, attempt: attempt, reason: reason, retryIn: wait, failingSince: since))
            try? await Task.sleep(for: wait)
          }
          return nil
        }
      }
      for await succeeded in group {
        if let succeeded { record(entry.id, succeeded.key) }
      }
    }
    if let now = outbox.entry(entry.id), notifiers.allSatisfy({ now.delivered.contains($0.key) }) {
      outbox.remove(entry.id)
      report(.completed(id: entry.id))
    }
    running[entry.id] = nil
  }

  /// The number of the attempt about to start, counted in the outbox first.
  private func beginAttempt(_ id: String, _ key: String, fallback: Int) -> Int {
    do { return try outbox.beginAttempt(id, by: key, fallback: fallback) } catch {
      report(.outboxFailed(id: id, error: error))
      return fallback
    }
  }

  /// When `key` first failed to deliver `id`, recorded in the outbox now when this is its first failure.
  private func failing(_ id: String, _ key: String) -> Date {
    do { return try outbox.failing(id, by: key, at: Date()) } catch {
      report(.outboxFailed(id: id, error: error))
      return Date()
    }
  }

  private func record(_ id: String, _ key: String) {
    do { try outbox.markDelivered(id, by: key) } catch { report(.outboxFailed(id: id, error: error)) }
  }
}

/// The events a delivery's reports make, for a monitor's log, page and alerts: the first failure
/// of each press to each notifier (`error`, `reason: delivery`; later attempts that fail the same
/// way are the state it told) and, after one — in this run or an earlier one — its success
/// (`delivered`), which ends "not delivered yet" on the page. Other reports make none. Shared by every monitor that delivers
/// SOS presses (one watch, a direct fleet, a fleet over MQTT). Thread-safe.
public final class DeliveryEvents: Sendable {
  private let failed = Locked<Set<String>>([])

  public init() {}

  /// The event `report` makes for the press of `watch` (the name its events go under), at `time`.
  public func event(for report: Delivery.Report, watch: String, at time: Date) -> MonitorEvent? {
    switch report {
    case .attemptFailed(let id, let notifier, _, let reason, _, let since):
      guard failed.update({ $0.insert(id + "\u{0}" + notifier).inserted }) else { return nil }
      return MonitorEvent(time: time, watch: watch, kind: .error,
                          message: "could not deliver SOS \(id) to \(notifier): \(reason); trying again with backoff until it succeeds",
                          fields: ["reason": .string("delivery"), "event_id": .string(id), "notifier": .string(notifier), "error": .string(reason),
                                   "failing_since": .string(InternetTime.text(since))])
    case .delivered(let id, let notifier, let attempts, let failedBefore):
      // After a failure told in this run, or in an earlier one (the attempts are counted in the
      // outbox across restarts: a restarted monitor's success ends the failure its log holds);
      // or after an attempt a stop or a crash cut short, which may have reached the receiver.
      guard failed.update({ $0.remove(id + "\u{0}" + notifier) != nil }) || attempts > 1 else { return nil }
      let after = failedBefore ? "after failing"
        : "after an attempt cut short by a stop or a crash (the receiver may have had it then too)"
      return MonitorEvent(time: time, watch: watch, kind: .delivered, message: "SOS \(id) reached \(notifier) (attempt \(attempts)) \(after)",
                          fields: ["event_id": .string(id), "notifier": .string(notifier), "attempt": .integer(attempts)])
    case .completed, .outboxFailed:
      return nil
    }
  }
}
