import TSApplyCLI
import Foundation
import TSEngine
import TSModel
import TSMonitor

/// `--on-event COMMAND`, `--events KINDS` and `--test-alert` of `tsapply monitor`: alerts for
/// every failure state to the webhooks and commands (docs/monitor.md "Alerts"). The alerts'
/// logic is TSMonitor's `Alerts`; this parses, builds the notifiers and runs the clock.
struct AlertOptions {
  static let specs: [OptionSpec] = [
    OptionSpec(["--on-event"], value: "COMMAND", help: "Run COMMAND (no shell; alert in TSAPPLY_EVENT_*) for each alert --events lets through; repeatable."),
    OptionSpec(["--events"], value: "KINDS",
               help: "Alerts for --webhook and --on-event: sos, drift, drifting_back, applied, failed, refused, invalid, offline, agent_offline, monitor_offline, sos_drift, events_missed, events_down, recovered, critical, warning, info, all (default sos)."),
    OptionSpec(["--test-alert"], help: "Send one test alert to every notifier now and exit: 0 when each succeeded, 1 otherwise."),
  ]

  var commands: [String]
  var filter: Set<Alerts.Kind>
  var test: Bool

  init(_ arguments: ParsedArguments) throws(UsageError) {
    commands = arguments.values["--on-event"] ?? []
    do {
      filter = try Alerts.parseFilter(arguments.value("--events") ?? "sos")
    } catch {
      throw UsageError(error.message)
    }
    test = arguments.has("--test-alert")
  }

  /// Whether any alert besides SOS presses (which keep the watch's own outbox) is asked for.
  var wantsAlerts: Bool { !filter.subtracting([.sos, .test]).isEmpty }

  /// The `--on-event` notifiers.
  func eventNotifiers(_ context: CommandContext) throws -> [any Notifier] {
    do {
      return try commands.map { (command) throws(NotifierError) in
        try CommandNotifier(command: command, environment: context.environment, currentDirectory: context.currentDirectory,
                            option: "--on-event")
      }
    } catch {
      throw UsageError(error.message)
    }
  }

  /// The alerts for the notifiers in `notifiers` (`--webhook`s and `--on-event`s), kept in
  /// `directory`; `nil` when no alert besides SOS is asked for or nobody would get it. Its
  /// alerts are logged through `emit`.
  func alerts(directory: String, notifiers: [any Notifier], offlineAfter: Duration, context: CommandContext,
              emit: @escaping @Sendable (MonitorEvent) -> Void) -> Alerts? {
    guard wantsAlerts, !notifiers.isEmpty else { return nil }
    let stderr = context.stderr
    return Alerts(directory: directory, notifiers: notifiers, filter: filter, offlineAfter: offlineAfter, policy: .sosDelivery,
                  emit: emit, notice: { stderr.write($0 + "\n") })
  }

  /// The note a monitor prints at its start when SOS presses go to notifiers (`sosNotifiers`)
  /// but none would be told that presses of a watch behind a bridge (`bridged`) may not be
  /// heard — `events_missed` (the bridge restarted: what was pressed meanwhile is in no log) and
  /// `events_down` (its event stream keeps breaking) are alerts, which `--on-sos` does not get
  /// (docs/monitor.md "Alerts"); `nil` when they reach someone, or nothing is notified at all.
  /// Fresh-eyes finding: an `--on-sos` alone, as the README's example, was told nothing when the
  /// bridge restarted.
  func unheardPressesNote(sosNotifiers: Int, alertNotifiers: Int, bridged: Bool) -> String? {
    Self.unheardPressesNote(filter: filter, sosNotifiers: sosNotifiers, alertNotifiers: alertNotifiers, bridged: bridged)
  }

  /// As above, for the alerts of `filter` (`--events`).
  static func unheardPressesNote(filter: Set<Alerts.Kind>, sosNotifiers: Int, alertNotifiers: Int, bridged: Bool) -> String? {
    guard bridged, sosNotifiers > 0 else { return nil }
    let missing = [Alerts.Kind.eventsMissed, .eventsDown].filter { alertNotifiers == 0 || !filter.contains($0) }
    guard !missing.isEmpty else { return nil }
    return "Note: the SOS notifiers get presses only: nobody is told when presses may not be heard through the bridge — "
      + "it restarted, or its event stream keeps breaking (\(missing.map(\.rawValue).joined(separator: ", "))). "
      + "Add '--on-event COMMAND --events sos,critical' (or a --webhook with --events sos,critical) to be told."
  }

  /// `--test-alert`: one test alert to each of `notifiers`; a line per notifier.
  static func runTest(_ notifiers: [any Notifier], context: CommandContext) async throws -> ExitStatus {
    guard !notifiers.isEmpty else { throw UsageError("--test-alert needs a notifier: --webhook, --on-event or --on-sos") }
    let results = await Alerts.test(notifiers)
    for result in results {
      context.stdout.write("\(result.name): " + (result.failure.map { "failed: \($0)" } ?? "delivered") + "\n")
    }
    let failed = results.filter { $0.failure != nil }.count
    if failed > 0 { throw CommandFailure("the test alert did not reach \(failed) of \(results.count) notifier\(results.count == 1 ? "" : "s")") }
    return .success
  }
}

/// Runs `alerts.tick()` every second (an offline watch past the threshold) until cancelled.
func alertClock(_ alerts: Alerts?) -> Task<Void, Never>? {
  guard let alerts else { return nil }
  return Task {
    while !Task.isCancelled {
      try? await Task.sleep(for: .seconds(1))
      alerts.tick()
    }
  }
}

/// The notifiers once each (a command given to both --on-sos and --on-event runs once).
func distinctNotifiers(_ notifiers: [any Notifier]) -> [any Notifier] {
  var seen: Set<String> = []
  return notifiers.filter { seen.insert($0.key).inserted }
}
