import TSApplyCLI
import Foundation
import TSHTTPServer
import TSModel
import TSMonitor
import TSStatusPage

/// `--serve ADDR`, `--serve-token-file FILE` and `--offline-after DURATION` of `tsapply
/// monitor`: where the status page is served, the token it needs, and when an offline watch
/// needs attention (there and in the alerts; docs/monitor.md "Status page").
struct StatusPageOptions {
  static let specs: [OptionSpec] = [
    OptionSpec(["--serve"], value: "ADDR",
               help: "Serve a live status page on ADDR (PORT or HOST:PORT; 127.0.0.1 only unless --serve-token-file)."),
    OptionSpec(["--serve-token-file"], value: "FILE", help: "Every request to the status page must carry the token in FILE; allows acknowledging SOS."),
    OptionSpec(["--offline-after"], value: "DURATION", help: "A watch offline longer than this needs attention on the page and is an offline alert (default 5m)."),
  ]

  /// The fewest bytes a page token may have (`openssl rand -hex 16` gives 32).
  static let minimumTokenBytes = 16

  /// The default `--offline-after`.
  static let defaultOfflineAfter = Duration.seconds(300)

  /// The address to bind; `nil` without `--serve`.
  var host: String?
  var port: UInt16 = 0
  var tokenFile: String?
  var offlineAfter: Duration

  init(_ arguments: ParsedArguments) throws(UsageError) {
    tokenFile = arguments.value("--serve-token-file")
    offlineAfter = try arguments.value("--offline-after").map { (text) throws(UsageError) in
      try DurationArgument.value(text, option: "--offline-after")
    } ?? Self.defaultOfflineAfter
    guard let address = arguments.value("--serve") else {
      if tokenFile != nil { throw UsageError("--serve-token-file only matters with --serve") }
      return
    }
    let parts = address.split(separator: ":", omittingEmptySubsequences: false)
    let hostText = parts.count == 2 ? String(parts[0]) : "127.0.0.1"
    guard parts.count <= 2, let port = UInt16(parts.last ?? ""), !hostText.isEmpty else {
      throw UsageError("--serve expects PORT or HOST:PORT (an IPv4 address), e.g. 8080 or 127.0.0.1:8080, got '\(address)'")
    }
    let host = hostText == "localhost" ? "127.0.0.1" : hostText
    var probe = in_addr()
    guard inet_pton(AF_INET, host, &probe) == 1 else {
      throw UsageError("--serve expects an IPv4 address as HOST, e.g. 127.0.0.1:8080 or 0.0.0.0:8080, got '\(hostText)'")
    }
    if host != "127.0.0.1", tokenFile == nil {
      throw UsageError("--serve \(address) can be reached from other machines: give --serve-token-file FILE, "
        + "so every request needs the token (without it the page is served on 127.0.0.1 only)")
    }
    self.host = host
    self.port = port
  }

  /// Starts the page for `board` when `--serve` was given; acknowledgements are written through
  /// `write` as `acknowledged` events. Prints the page's address on standard error.
  func start(board: StatusBoard, heading: String, context: CommandContext,
             write: @escaping @Sendable (MonitorEvent) -> Void) throws -> StatusPageServer? {
    guard let host else { return nil }
    var token: [UInt8]?
    if let tokenFile {
      let secret: [UInt8], exposed: Bool
      do {
        (secret, exposed) = try SecretFile.read(path: context.resolve(tokenFile), what: "the status page's token file")
      } catch {
        throw CommandFailure(error.message)
      }
      if exposed {
        context.stderr.write("Warning: \(tokenFile) can be read by other users; anyone who has the token can read the page and acknowledge SOS presses (chmod 600 \(tokenFile)).\n")
      }
      // Nothing limits wrong guesses at the page (each is one cheap request): a token others
      // cannot guess is long (fresh-eyes fe98: a 3-character token was accepted).
      guard secret.count >= Self.minimumTokenBytes else {
        throw CommandFailure("the token in \(tokenFile) is \(secret.count) byte\(secret.count == 1 ? "" : "s"); one that cannot be guessed has at least "
          + "\(Self.minimumTokenBytes) (make one: openssl rand -hex 16 > \(ShellWord.quoted(tokenFile)) && chmod 600 \(ShellWord.quoted(tokenFile)))")
      }
      token = secret
    }
    let server: StatusPageServer
    do {
      server = try StatusPageServer.start(board: board, options: .init(host: host, port: port, token: token, heading: heading)) { press in
        let event = press.acknowledgement
        write(event)
        board.record(event, for: [press.watch])
      }
    } catch {
      throw CommandFailure("--serve: \(error)")
    }
    context.stderr.write("Status page on \(server.url)" + (token == nil ? "" : " (every request needs the token)") + "\n")
    return server
  }
}
