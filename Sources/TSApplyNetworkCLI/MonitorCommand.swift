import TSApplyCLI
import Foundation
import TSBridgeClient
import TSEngine
import TSModel
import TSMonitor
import TSStatusPage

/// `tsapply monitor [FILE]`: watches the watch until stopped (or once, for cron), through the
/// library's `Monitor`. This command only parses, sets up the outputs and notifiers, and maps
/// the outcome to an exit status (docs/monitor.md).
struct MonitorCommand: Command {
  static let name = "monitor"
  static let abstract = "Watch the watch: report drift, heal it if asked, forward SOS presses."
  static let usage = "[options] [FILE]"
  static let positionals: CompletionValues = .manifests
  static let discussion = """
    Runs until stopped (Ctrl-C, SIGTERM). Listens where the platform reports changes, reads the
    watch every --interval, and prints one event per line: drift, resolved, sos, offline,
    online, applied, error. JSON lines (one object each) when standard output is not a
    terminal or with --json, human lines on a terminal; --log FILE appends the JSON lines to
    FILE (0600). Phone numbers are masked unless --show-sensitive.
    --reconcile heals drift through apply (backup, lock, verification); an unsafe heal is refused
    and left alone unless --allow-destroy; at most --max-applies-per-hour heals (default 6), then
    a watch that keeps drifting back is reported and left alone.
    Each SOS press is stored in the watch's outbox, then every --on-sos command and --webhook is
    run and retried with backoff until it succeeds; a restarted monitor delivers what is left.
    --on-sos runs the command without a shell: quote with '…' or "…", nothing is expanded, the
    event is in TSAPPLY_EVENT_* environment variables. SOS forwarding is best effort, not a
    certified alarm system; of the real platforms only fit, fit-basic and fw watches report SOS
    (and the simulated default watch; docs/monitor.md).
    --once makes one check and exits like 'tsapply drift': 0 no drift, 2 drift, 1 error.
    --events KINDS (e.g. failed,offline,sos or all) also sends alerts for failure states to
    --webhook and --on-event COMMAND, once per watch and kind, and recovered when they clear;
    --test-alert sends one test alert to every notifier.
    --serve ADDR serves a live status page (open SOS presses, watches needing attention, every
    watch; /status.json, /metrics) on 127.0.0.1, or on another address with --serve-token-file.
    """
  static let options: [OptionSpec] = [
    OptionSpec(["--interval"], value: "DURATION", help: "How often to read the watch (default 5m; e.g. 30s, 1h, 200ms)."),
    OptionSpec(["--once"], help: "Check once and exit: 0 no drift, 2 drift, 1 error (for cron)."),
    OptionSpec(["--reconcile"], help: "Heal drift by applying the manifest (unsafe changes need --allow-destroy)."),
    OptionSpec(["--allow-destroy"], help: "With --reconcile, also make unsafe changes (removals, SOS off)."),
    OptionSpec(["--max-applies-per-hour"], value: "N", help: "Heal at most N times in any hour (default 6), counting the heals the watch's history lists (across --once runs and restarts)."),
    OptionSpec(["--on-sos"], value: "COMMAND", help: "Run COMMAND (no shell; event in TSAPPLY_EVENT_*) for each SOS; repeatable."),
    OptionSpec(["--webhook"], value: "URL", help: "POST each SOS event, signed (X-Tsapply-Signature); repeatable."),
    OptionSpec(["--webhook-secret-file"], value: "FILE", help: "The HMAC-SHA256 key for --webhook signatures."),
    OptionSpec(["--log"], value: "FILE", help: "Append the JSON event lines to FILE (created 0600) instead of standard output (with --json: to both)."),
    OptionSpec(["--json"], help: "JSON event lines on standard output even on a terminal."),
    OptionSpec(["--show-sensitive"], help: "Show phone numbers in events (masked by default)."),
    DeviceOption.spec,
  ] + AlertOptions.specs + StatusPageOptions.specs + FleetOptions.specs

  /// Accepted `--max-applies-per-hour` values.
  static let appliesRange = 1...1000
  /// The shortest accepted `--interval`.
  static let minimumInterval = Duration.milliseconds(100)

  var file: String
  var deviceSpec: String?
  var interval: Duration
  var once: Bool
  var reconcile: Bool
  var allowDestroy: Bool
  var maxApplies: Int
  var commands: [String]
  var webhooks: [String]
  var secretFile: String?
  var log: String?
  var json: Bool
  var showSensitive: Bool
  var fleet: FleetOptions
  var page: StatusPageOptions
  var alerting: AlertOptions

  init(_ arguments: ParsedArguments) throws(UsageError) {
    fleet = try FleetOptions(arguments, command: Self.name)
    page = try StatusPageOptions(arguments)
    alerting = try AlertOptions(arguments)
    file = try ManifestArgument.file(from: arguments)
    if file == "-" {
      throw UsageError("the monitor reads the manifest again at every check, so it needs a file, not standard input")
    }
    deviceSpec = DeviceOption.value(in: arguments)
    interval = try arguments.value("--interval").map { (text) throws(UsageError) in
      try DurationArgument.value(text, option: "--interval")
    } ?? MonitorSettings.defaultInterval
    guard interval >= Self.minimumInterval else {
      throw UsageError("--interval must be at least 100ms, got '\(arguments.value("--interval") ?? "")'")
    }
    once = arguments.has("--once")
    reconcile = arguments.has("--reconcile")
    allowDestroy = arguments.has("--allow-destroy")
    maxApplies = try arguments.value("--max-applies-per-hour").map { (text) throws(UsageError) -> Int in
      guard let value = Int(text), Self.appliesRange.contains(value) else {
        throw UsageError("--max-applies-per-hour expects a whole number from \(Self.appliesRange.lowerBound) to \(Self.appliesRange.upperBound), got '\(text)'")
      }
      return value
    } ?? MonitorSettings.defaultMaxAppliesPerHour
    commands = arguments.values["--on-sos"] ?? []
    webhooks = arguments.values["--webhook"] ?? []
    secretFile = arguments.value("--webhook-secret-file")
    log = arguments.value("--log")
    json = arguments.has("--json")
    showSensitive = arguments.has("--show-sensitive")
    if allowDestroy && !reconcile { throw UsageError("--allow-destroy only matters with --reconcile (without it the monitor never writes)") }
    if arguments.value("--max-applies-per-hour") != nil && !reconcile {
      throw UsageError("--max-applies-per-hour only matters with --reconcile (without it the monitor never writes)")
    }
    if !webhooks.isEmpty && secretFile == nil { throw UsageError("--webhook needs --webhook-secret-file: receivers check every event's signature") }
    if webhooks.isEmpty && secretFile != nil { throw UsageError("--webhook-secret-file only matters with --webhook") }
    if once && !(commands.isEmpty && webhooks.isEmpty && alerting.commands.isEmpty) {
      throw UsageError("--once makes one check and listens for nothing, so --on-sos, --on-event and --webhook would never run")
    }
    if arguments.value("--offline-after") != nil && page.host == nil && !alerting.wantsAlerts {
      throw UsageError("--offline-after only matters with --serve or with --events that include offline")
    }
    if arguments.value("--events") != nil && webhooks.isEmpty && alerting.commands.isEmpty {
      throw UsageError("--events chooses what --webhook and --on-event get; give one of them")
    }
    if once && page.host != nil { throw UsageError("--once makes one check and exits, so there is no page to --serve") }
  }

  func run(_ context: CommandContext) async throws -> ExitStatus {
    if alerting.test {
      let (sos, alerts) = try makeNotifiers(context)
      return try await AlertOptions.runTest(distinctNotifiers(sos + alerts), context: context)
    }
    if fleet.file != nil { return try await runFleet(context) }
    let input = try ManifestInputFile.read(file, command: "monitor", context: context)
    _ = try input.document(redact: !showSensitive, context: context)
    let (notifiers, alertNotifiers) = try makeNotifiers(context)
    if let log { try await Self.refuseLog(context.resolve(log), deviceSpec: deviceSpec, context: context) }
    let output = try EventOutput(log: log.map(context.resolve), json: json, context: context)
    var settings = MonitorSettings(manifestPath: context.resolve(file), manifestName: file, deviceSpec: deviceSpec,
                                   interval: interval, reconcile: reconcile, allowDestroy: allowDestroy,
                                   maxAppliesPerHour: maxApplies, showSensitive: showSensitive)
    settings.commandLine = context.commandLine
    settings.planCommand = "tsapply plan" + (deviceSpec.map { " --device " + ShellWord.quoted($0) } ?? "") + " " + ShellWord.quoted(file)
    let engine = context.engine()
    // The page's SOS presses and the alerts are kept, and named, per watch, whichever way its
    // spec is written (`sim:w.json`, `sim:./w.json`, an absolute path, `TSAPPLY_DEVICE`): a
    // restart spelled another way lost the open presses, raised open conditions again and left
    // the first ones open for ever (fresh-eyes findings).
    let written = engine.registry.chosenSpec(deviceSpec, environment: engine.environment).spec
    let name = engine.canonicalSpec(written)
    let folder = WatchHome.folderName(name)
    let storePath = MonitorState.kept(at: engine.stateRoot + "/status-page/" + folder + ".json",
                                      formerly: engine.stateRoot + "/status-page/" + WatchHome.folderName(written) + ".json")
    let board = page.host == nil ? nil
      : StatusBoard(members: [.init(name: name, device: name)], offlineThreshold: page.offlineAfter, showSensitive: showSensitive,
                    storePath: storePath)
    if let note = alerting.unheardPressesNote(sosNotifiers: notifiers.count, alertNotifiers: alertNotifiers.count,
                                              bridged: name.hasPrefix(BridgeScheme.prefix)) {
      context.stderr.write(note + "\n")
    }
    let alerts = alerting.alerts(directory: MonitorState.kept(at: engine.stateRoot + "/alerts/" + folder,
                                                              formerly: engine.stateRoot + "/alerts/" + WatchHome.folderName(written)),
                                 notifiers: alertNotifiers, offlineAfter: page.offlineAfter, context: context,
                                 // Counted by the page's metrics as every other event (fresh-eyes finding: `kind="alert"` stayed 0).
                                 emit: { event in
                                   output.write(event)
                                   board?.record(event, for: [])
                                 })
    let observers: [any MonitorObserver] = [board as (any MonitorObserver)?, alerts].compactMap { $0 }
    let emit: @Sendable (MonitorEvent) -> Void = { event in
      output.write(event)
      for observer in observers { observer.record(event, for: [name]) }
    }
    var checked: (@Sendable (MonitorCheck) -> Void)?
    if !observers.isEmpty { checked = { check in for observer in observers { observer.checked(name, check) } } }
    let monitor = Monitor(engine: engine, settings: settings, notifiers: notifiers,
                          emit: emit, notice: { context.stderr.write($0 + "\n") }, checked: checked)
    if once {
      do {
        return try await monitor.checkOnce() ? .changesPresent : .success
      } catch {
        throw CommandFailure("\(error)")
      }
    }
    let signals = StopSignals { signal in
      context.stderr.write("\(StopSignals.name(signal)) received: stopping the monitor (send it again to quit at once).\n")
      monitor.stop()
    }
    var server: StatusPageServer?
    if let board { server = try page.start(board: board, heading: file, context: context, write: output.write) }
    defer { server?.stop() }
    await alerts?.start()
    let clock = alertClock(alerts)
    signals.begin()
    defer { signals.end() }
    do {
      try await monitor.run()
    } catch {
      clock?.cancel()
      await alerts?.stop(grace: .seconds(5))
      throw CommandFailure("\(error)")
    }
    clock?.cancel()
    await alerts?.stop(grace: .seconds(5))
    context.stderr.write("Monitor stopped.\n")
    return .success
  }

  /// Refuses `--log` at `path` when it is the watch's own state file or inside tsapply's records
  /// (`Watch.refuseOutput(at:)`), before anything is appended. A watch that cannot be opened
  /// yet is left for the monitor to report.
  static func refuseLog(_ path: String, deviceSpec: String?, context: CommandContext) async throws {
    guard let watch = try? await context.engine().open(deviceSpec, mayCreate: false) else { return }
    var refusal: String?
    do { try watch.refuseOutput(at: path) } catch { refusal = "\(error)" }
    await watch.close()
    if let refusal { throw CommandFailure("--log: \(refusal)") }
  }

  /// The notifiers of SOS presses (`--on-sos`, and `--webhook` and `--on-event` when
  /// `--events` lets SOS through) and of the other alerts (`--webhook`, `--on-event`).
  func makeNotifiers(_ context: CommandContext) throws -> (sos: [any Notifier], alerts: [any Notifier]) {
    var notifiers: [any Notifier] = []
    var hooks: [any Notifier] = []
    do {
      for command in commands {
        notifiers.append(try CommandNotifier(command: command, environment: context.environment, currentDirectory: context.currentDirectory))
      }
      if let secretFile, !webhooks.isEmpty {
        let (secret, exposed) = try WebhookNotifier.readSecret(path: context.resolve(secretFile))
        if exposed {
          context.stderr.write("Warning: \(secretFile) can be read by other users; anyone who has the secret can forge events (chmod 600 \(secretFile)).\n")
        }
        for url in webhooks { hooks.append(try WebhookNotifier(url: url, secret: secret)) }
      }
    } catch {
      throw UsageError(error.message)
    }
    let alertNotifiers = hooks + (try alerting.eventNotifiers(context))
    let sos = distinctNotifiers(notifiers + (alerting.filter.contains(.sos) ? alertNotifiers : []))
    return (sos, alertNotifiers)
  }
}

/// Where a monitor's events go: JSON lines to the log file and/or standard output, human lines
/// to a terminal.
struct EventOutput: Sendable {
  let log: EventLog?
  let jsonToStdout: Bool
  let humanToStdout: Bool
  let context: CommandContext
  private let logFailed = Flag()

  /// JSON lines to `log` (when given) and to standard output when it is not a terminal (and no
  /// log was given) or with `json`; human lines on a terminal otherwise.
  init(log: String?, json: Bool, context: CommandContext) throws {
    if let log {
      do { self.log = try EventLog(path: log) } catch { throw CommandFailure("\(error)") }
      if self.log?.readableByOthers == true {
        context.stderr.write("Warning: \(log) can be read by other users; events name the watch and its changes (chmod 600 \(log)).\n")
      }
    } else {
      self.log = nil
    }
    jsonToStdout = json || (log == nil && !context.stdoutIsTerminal)
    humanToStdout = context.stdoutIsTerminal && !jsonToStdout
    self.context = context
  }

  func write(_ event: MonitorEvent) {
    if let log {
      do { try log.append(event.jsonLine) } catch {
        if !logFailed.isSet {
          logFailed.set()
          context.stderr.write("Error: \(error); events go on to the other outputs.\n")
        }
      }
    }
    if jsonToStdout { context.stdout.write(event.jsonLine + "\n") }
    if humanToStdout { context.stdout.write(event.humanLine + "\n") }
  }
}

/// Where a monitor keeps what must outlive it: the page's SOS presses and the open alerts.
enum MonitorState {
  /// `path`, after moving there what `former` holds when only that exists: where a tsapply before
  /// it kept the same watch's (or fleet's) state under its spec or file as written. Both lie in
  /// one folder, so a rename moves it.
  static func kept(at path: String, formerly former: String) -> String {
    let files = FileManager.default
    guard path != former, !files.fileExists(atPath: path), files.fileExists(atPath: former) else { return path }
    _ = rename(former, path)
    return path
  }
}
