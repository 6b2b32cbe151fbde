import TSApplyCLI
import Foundation
import TSBridge
import TSBridgeClient
import TSBridgeServer
import TSModel
import TSEngine

/// `tsapply bridge …`: the reference bridge server and pairing with a bridge.
struct BridgeCommand: Command {
  static let name = "bridge"
  static let abstract = "Serve simulated watches over the bridge protocol, or pair with a bridge."
  static let usage = "<subcommand> [options]"
  static let discussion = """
    A real watch is reached through a bridge: the companion app on its phone, which serves the
    watch over the local network (docs/bridge-protocol.md). 'bridge serve' is a reference bridge
    serving simulated watches; 'bridge pair' stores a bridge's pairing string so that
    --device bridge:NAME reaches its watch.
    """
  static let options: [OptionSpec] = []
  static let subcommands: [any Command.Type] = [BridgeServeCommand.self, BridgePairCommand.self]

  init(_ arguments: ParsedArguments) throws(UsageError) { throw UsageError("'tsapply bridge' needs a subcommand") }
  func run(_ context: CommandContext) async throws -> ExitStatus { .usage }
}

/// `tsapply bridge serve --device sim:PATH … [--listen HOST:PORT]`.
struct BridgeServeCommand: Command {
  static let name = "serve"
  static let abstract = "Serve simulated watches over bridge protocol v1 and print the pairing string."
  static let usage = "--device sim:PATH [--device sim:PATH ...] [--listen HOST:PORT] [--advertise HOST] [--new-key]"
  static let discussion = """
    Listens on 127.0.0.1:8765 unless --listen says otherwise (port 0: a free one); an address
    other than loopback is only ever used when given with --listen. Each watch gets a MAC-style
    id derived from its path. The bridge's id and pairing key are kept in
    $XDG_CONFIG_HOME/tsapply/bridge-serve.json (0600) so a restart keeps the pairing; --new-key
    makes a fresh key (pair again). The pairing string holds the key: it is printed when the key
    is new, when standard output is a terminal, or with --show-pairing — not into a log at every
    restart. Logs one line per request on standard error, never a name or a phone number. Stops
    on Ctrl-C or SIGTERM.
    """
  static let options: [OptionSpec] = [
    OptionSpec(["--device"], value: "SPEC", help: "A simulated watch to serve, sim:PATH (repeat for more)."),
    OptionSpec(["--listen"], value: "HOST:PORT", help: "IPv4 address and port to listen on (default 127.0.0.1:8765)."),
    OptionSpec(["--advertise"], value: "HOST", help: "Host put in the pairing string (default: the --listen host)."),
    OptionSpec(["--new-key"], help: "Replace the kept pairing key with a fresh one (clients must pair again)."),
    OptionSpec(["--show-pairing"], help: "Print the pairing string (it holds the key) even when standard output is not a terminal."),
  ]

  /// The address used without `--listen`.
  static let defaultListen = "127.0.0.1:8765"

  let devices: [String]
  let host: String
  let port: UInt16
  let advertise: String?
  let newKey: Bool
  let showPairing: Bool

  init(_ arguments: ParsedArguments) throws(UsageError) {
    guard arguments.positionals.isEmpty else { throw UsageError("unexpected argument '\(arguments.positionals[0])'") }
    devices = arguments.values["--device"] ?? []
    guard !devices.isEmpty else { throw UsageError("give the watches to serve with --device sim:PATH (repeat for more)") }
    let listen = arguments.value("--listen") ?? Self.defaultListen
    let parts = listen.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
    guard parts.count == 2, let port = UInt16(parts[1]), !parts[0].isEmpty else {
      throw UsageError("--listen expects HOST:PORT with an IPv4 address and a port 0–65535 (e.g. 127.0.0.1:8765), got '\(ControlCharacters.escaped(listen))'")
    }
    host = parts[0]
    self.port = port
    advertise = arguments.value("--advertise")
    if advertise == nil && host == "0.0.0.0" {
      throw UsageError("listening on 0.0.0.0 needs --advertise HOST: the address clients reach this machine at, for the pairing string")
    }
    newKey = arguments.has("--new-key")
    showPairing = arguments.has("--show-pairing")
  }

  func run(_ context: CommandContext) async throws -> ExitStatus {
    let stderr = context.stderr
    // Caught before anything says the bridge is up: a stop sent as soon as its lines appear (a
    // supervisor, a test) reached it while catching was being set up and was lost, and the
    // bridge served on.
    let (stopped, continuation) = AsyncStream<Int32>.makeStream()
    let signals = StopSignals { continuation.yield($0) }
    signals.begin()
    let running: ReferenceBridge.Running
    do {
      running = try await ReferenceBridge.start(devices, host: host, port: port, advertise: advertise, newKey: newKey,
                                                environment: context.environment, currentDirectory: context.currentDirectory) { line in
        stderr.write("bridge: \(line)\n")
      }
    } catch {
      throw CommandFailure("cannot start the bridge: \(error)")
    }
    for watch in running.watches {
      context.stdout.write("Serving \(watch.id) (\(watch.capabilities.profile)) from \(watch.device.identity)\n")
    }
    context.stdout.write("Listening on \(running.server.http.baseURL)\n")
    // The key in the pairing string is the bridge's secret: said where a person sees it, not
    // written into a journal at every restart (fresh-eyes fe98: under systemd it was).
    if running.keyIsNew || showPairing || context.stdoutIsTerminal {
      context.stdout.write("Pair with: tsapply bridge pair \(running.pairing) --name NAME\n")
      context.stdout.write("Pairing string: \(running.pairing)\n")
    } else {
      context.stdout.write("Pairing string: not shown (it holds the key, and standard output is not a terminal, so a log would keep it); "
        + "clients paired before still reach this bridge. Run 'tsapply bridge serve' with --show-pairing to print it\n")
    }
    var received: Int32 = SIGTERM
    for await signal in stopped {
      received = signal
      break
    }
    running.server.stop()
    for watch in running.watches { await watch.device.close() }
    signals.end()
    context.stderr.write("\(StopSignals.name(received)) received: the bridge stopped.\n")
    return .success
  }
}

/// `tsapply bridge pair STRING [--name NAME]`.
struct BridgePairCommand: Command {
  static let name = "pair"
  static let abstract = "Store a bridge's pairing string, so --device bridge:NAME reaches its watches."
  static let usage = "STRING [--name NAME]"
  static let discussion = """
    STRING is what 'tsapply bridge serve' or the bridge app shows (tsapply-bridge:v1/HOST/PORT/ID/KEY);
    '-' reads it from standard input, so it stays out of the process list and the shell's history.
    It is stored in $XDG_CONFIG_HOME/tsapply/bridges/NAME.json (else ~/.config/tsapply/bridges/),
    the directory 0700 and the file 0600: the key in it opens every body sent to the watch.
    NAME defaults to the bridge's id; pairing again under a name replaces it.
    """
  static let options: [OptionSpec] = [
    OptionSpec(["--name"], value: "NAME", help: "Name to use in --device bridge:NAME (default: the bridge id)."),
  ]

  let string: String
  let name: String?

  init(_ arguments: ParsedArguments) throws(UsageError) {
    guard arguments.positionals.count == 1 else {
      throw UsageError("expected one pairing string, got \(arguments.positionals.count) arguments")
    }
    string = arguments.positionals[0]
    name = arguments.value("--name")
    if let name, !BridgePairings.isValidName(name) {
      throw UsageError("--name expects 1–64 letters, digits, '.', '_' or '-' (not starting with '.' or '-'), got '\(ControlCharacters.escaped(name))'")
    }
  }

  func run(_ context: CommandContext) async throws -> ExitStatus {
    var string = string
    if string == "-" {
      // One line, bounded as every input is (a pairing string is under 200 bytes).
      switch ManifestSource.standardInput.read(maxBytes: 4096, noun: "pairing string") {
      case .success(let bytes): string = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
      case .failure(let error): throw CommandFailure("cannot pair: \(error)")
      }
    }
    let parsed: PairingString
    do { parsed = try PairingString(parsing: string) } catch { throw CommandFailure("cannot pair: \(error)") }
    let pairings = BridgePairings(environment: context.environment)
    let pairing = BridgePairing(name: name ?? parsed.bridgeID, string: parsed)
    let others: [BridgePairing]
    do { others = try pairings.save(pairing) } catch { throw CommandFailure("cannot store the pairing: \(error)") }
    context.stdout.write("Paired with bridge \(parsed.bridgeID) at \(parsed.host):\(parsed.port) as '\(pairing.name)' (\(pairings.path(of: pairing.name))).\n")
    for other in others {
      // A bridge has one key at a time: one of the two is stale. Saved plans, backups and
      // records name the bridge by its id, which reaches the pairing paired last (this one).
      context.stdout.write("Note: '\(other.name)' is paired with the same bridge under another key or address; a bridge has one key at a time, "
        + "so if this string is the bridge's current one, pair '\(other.name)' again with it ('tsapply bridge pair - --name \(other.name)'), "
        + "or remove \(ShellWord.quoted(pairings.path(of: other.name))).\n")
    }
    context.stdout.write("Use it with --device bridge:\(pairing.name) (add /WATCH-ID when it serves several watches).\n")
    return .success
  }
}
