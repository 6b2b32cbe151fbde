import TSApplyCLI
import Foundation
import TSEngine
import TSFleet
import TSMQTT

/// `tsapply agent`: the bridge-side agent of a fleet over MQTT. It serves the watches given with
/// `--device`, pulls their desired documents from the broker and applies them through the engine,
/// until SIGINT, SIGTERM or SIGHUP (docs/fleet.md "Agents over MQTT").
struct AgentCommand: Command {
  static let name = "agent"
  static let abstract = "Serve watches for a fleet over MQTT: pull desired documents, apply them, report."
  static let usage = "--broker mqtt://HOST:PORT --site SITE --device SPEC [--device SPEC ...] [options]"
  static let discussion = """
    Keeps a persistent session on the broker (client ID tsapply-agent-SITE-AGENT), subscribes to
    tsapply/v1/SITE/WATCH-ID/desired for each watch (WATCH-ID from the spec: bridge:B/ID → ID,
    sim:DIR/NAME.json → NAME), applies every new revision through the engine — an unsafe plan
    only when the document carries allow_destroy — and publishes tsapply/v1/SITE/WATCH-ID/status
    (retained), …/state (retained: the watch as it last read it, when that changed; contacts
    included, for 'tsapply plan --fleet') and …/events. Its presence is
    tsapply/v1/SITE/agent/AGENT/state, with a Last Will that marks it offline. The password comes
    from --password-file or TSAPPLY_MQTT_PASSWORD, never from the command line. A broker not up
    yet is waited for (said on stderr); one that refuses the agent ends it. SIGINT, SIGTERM
    or SIGHUP stops it cleanly: an apply in progress stops after its current step, the last
    statuses go out, it says it goes offline. A second signal quits at once.
    """
  static let options: [OptionSpec] = [
    OptionSpec(["--broker"], value: "URL", help: "The broker: mqtt://HOST:PORT, or mqtts://HOST:PORT for TLS."),
    OptionSpec(["--site"], value: "SITE", help: "The site whose topics to serve (as in the fleet file)."),
    OptionSpec(["--device"], value: "SPEC", help: "A watch to serve (repeatable): bridge:… or sim:PATH."),
    OptionSpec(["--agent-id"], value: "ID", help: "This agent's ID, unique in the site (default: the user name, else the host name)."),
    OptionSpec(["--username"], value: "NAME", help: "User name on the broker (default: $TSAPPLY_MQTT_USERNAME)."),
    OptionSpec(["--password-file"], value: "FILE", help: "A file whose first line is the password (default: $TSAPPLY_MQTT_PASSWORD)."),
    OptionSpec(["--ca-file"], value: "FILE", help: "CA certificates (PEM) for an mqtts:// broker (default: $TSAPPLY_MQTT_CA_FILE, else the system's)."),
    OptionSpec(["--cert-file"], value: "FILE", help: "A client certificate (PEM), for brokers that authenticate by certificate."),
    OptionSpec(["--key-file"], value: "FILE", help: "The client certificate's private key (PEM)."),
    OptionSpec(["--drift-interval"], value: "DURATION", help: "How often to read each watch for drift (default 5m; 0s never)."),
  ]

  var broker: MQTTAddress
  var site: String
  var devices: [String]
  var agentID: String?
  var username: String?
  var passwordFile: String?
  var tls: MQTTClient.TLS
  var driftInterval: Duration

  init(_ arguments: ParsedArguments) throws(UsageError) {
    guard arguments.positionals.isEmpty else { throw UsageError("unexpected argument '\(arguments.positionals[0])'") }
    guard let url = arguments.value("--broker") else { throw UsageError("agent needs --broker mqtt://HOST:PORT") }
    do { broker = try MQTTAddress(parsing: url) } catch { throw UsageError("--broker: \(error)") }
    guard let site = arguments.value("--site") else { throw UsageError("agent needs --site SITE (the site in the fleet file)") }
    if let problem = FleetTopics.problem(with: site) { throw UsageError("--site \"\(site)\" \(problem)") }
    self.site = site
    devices = arguments.values["--device"] ?? []
    guard !devices.isEmpty else { throw UsageError("agent needs at least one --device SPEC (the watches it serves)") }
    var seen: [String: String] = [:]
    for spec in devices {
      let id = FleetTopics.watchID(forSpec: spec)
      if let problem = FleetTopics.problem(with: id) { throw UsageError("the watch ID \"\(id)\" of --device \(spec) \(problem)") }
      if let other = seen[id] { throw UsageError("--device \(spec) and --device \(other) have the same watch ID \(id)") }
      seen[id] = spec
    }
    agentID = arguments.value("--agent-id")
    if let agentID, let problem = FleetTopics.problem(with: agentID) { throw UsageError("--agent-id \"\(agentID)\" \(problem)") }
    username = arguments.value("--username")
    passwordFile = arguments.value("--password-file")
    tls = MQTTClient.TLS(caFile: arguments.value("--ca-file"), certificateFile: arguments.value("--cert-file"),
                         keyFile: arguments.value("--key-file"))
    driftInterval = try arguments.value("--drift-interval").map { (text) throws(UsageError) in
      try DurationArgument.value(text, option: "--drift-interval")
    } ?? .seconds(300)
  }

  func run(_ context: CommandContext) async throws -> ExitStatus {
    var settings = BrokerSettings(address: broker, environment: context.environment, currentDirectory: context.currentDirectory)
    if let username { settings.username = username }
    if tls.caFile != nil { settings.tls.caFile = tls.caFile }
    if tls.certificateFile != nil { settings.tls.certificateFile = tls.certificateFile }
    if tls.keyFile != nil { settings.tls.keyFile = tls.keyFile }
    if let passwordFile {
      switch BrokerSettings.password(fromFile: context.resolve(passwordFile), displayName: passwordFile) {
      case .success(let text): (settings.password, settings.passwordProblem) = (text, nil)
      case .failure(let problem): throw CommandFailure("--password-file: \(problem)")
      }
    }
    let id = agentID ?? settings.username.flatMap { FleetTopics.problem(with: $0) == nil ? $0 : nil }
      ?? String(ProcessInfo.processInfo.hostName.prefix { $0 != "." }.filter { FleetTopics.problem(with: String($0)) == nil })
    let engine = context.engine()
    var served: [(id: String, watch: Watch)] = []
    for spec in devices {
      do {
        let watch = try await engine.open(spec, mayCreate: false)
        served.append((FleetTopics.watchID(forSpec: spec), watch))
      } catch {
        throw CommandFailure("cannot open --device \(spec): \(error)")
      }
    }
    let stderr = context.stderr
    let agent = try FleetAgent(configuration: .init(broker: settings, site: site, agentID: id, driftInterval: driftInterval),
                               watches: served, log: { line in stderr.write("\(Self.now()) \(line)\n") })
    await agent.start()
    let serving = "agent \(id) serving \(served.map(\.id).joined(separator: ", ")) on site \(site); Ctrl-C stops it"
    // A broker refusing it (credentials, TLS) is a misconfiguration: the agent ends. A broker not
    // up yet (started after the agent, restarting) is waited for: the agent keeps trying, and
    // its watches are checked and their SOS presses kept meanwhile (fresh-eyes finding: it gave
    // up after 30 s, and its watches were served only once something restarted it).
    var waiting: Task<Void, Never>?
    do {
      try await agent.ready(within: Self.firstConnection)
      stderr.write("\(Self.now()) \(serving)\n")
    } catch .timedOut(let what) {
      stderr.write("\(Self.now()) cannot reach the broker at \(broker) yet (\(what)); the agent keeps trying: its watches are "
                   + "checked meanwhile, and what it finds, their SOS presses included, goes out once it connects\n")
      // Looked at once a second (not the client's 10 ms wait: a broker down for hours); a
      // refusal once it is up is said by the agent's connection log, and tried again.
      waiting = Task {
        while !Task.isCancelled {
          do throws(MQTTError) {
            try await agent.ready(within: .zero)
            stderr.write("\(Self.now()) \(serving)\n")
            return
          } catch {
            try? await Task.sleep(for: .seconds(1))
          }
        }
      }
    } catch {
      await agent.stop()
      throw CommandFailure("cannot connect to \(broker): \(error)")
    }
    let (signal, signals) = await Self.firstStopSignal()
    waiting?.cancel()
    stderr.write("\(Self.now()) \(StopSignals.name(signal)) received; going offline (an apply in progress stops after its current step; "
                 + "\(signal == SIGINT ? "Ctrl-C" : "send it") again to quit at once)\n")
    await agent.stop()
    signals.end()
    for (_, watch) in served { await watch.close() }
    return .success
  }

  /// How long the first connection to the broker may take before the agent (or `monitor
  /// --fleet`) says it cannot reach it yet (and keeps trying).
  static let firstConnection: Duration = .seconds(5)

  /// Waits for SIGINT, SIGTERM or SIGHUP, caught the engine's way (`StopSignals`), and returns
  /// the first with the catcher: until its `end()`, a second signal (at least
  /// `StopSignals.repeatInterval` later) exits at once with 128 + its number.
  static func firstStopSignal() async -> (signal: Int32, signals: StopSignals) {
    let (stream, continuation) = AsyncStream<Int32>.makeStream()
    let signals = StopSignals { number in
      continuation.yield(number)
      continuation.finish()
    }
    signals.begin()
    var first = SIGTERM
    for await number in stream { first = number }
    return (first, signals)
  }

  private static func now() -> String {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime]
    return formatter.string(from: Date())
  }
}
