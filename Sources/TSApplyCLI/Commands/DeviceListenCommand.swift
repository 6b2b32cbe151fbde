import TSDevice
import TSModel

/// `tsapply device listen [--count N] [--timeout DURATION]`: registers the three SDK listeners
/// (contacts changed, emergency contacts changed, SOS request) and prints events as they arrive:
/// a simulated watch's from its state file, a bridge's (`bridge:`) from its event stream.
struct DeviceListenCommand: Command {
  static let name = "listen"
  static let abstract = "Print contact, emergency-contact and SOS events from the watch as they happen."
  static let usage = "[--count N] [--timeout DURATION] [--device SPEC]"
  static let discussion = """
    Listeners the platform does not support answer once with error 2004, printed on standard
    error; listening goes on for the others. When every listener is refused, no event can
    arrive: exits 1 at once. With --count, exits 0 after N events, or 1 if --timeout passes first.
    """
  static let options: [OptionSpec] = [
    OptionSpec(["--count"], value: "N", help: "Stop after N events."),
    OptionSpec(["--timeout"], value: "DURATION", help: "Stop after DURATION (30s, 5m; a bare number is seconds)."),
    DeviceOption.spec,
  ]

  enum Item: Sendable {
    case event(String)
    case refusal(String)
  }

  /// Listeners registered: contacts changed, emergency contacts changed, SOS request.
  static let listenerCount = 3
  /// Accepted `--count` values.
  static let countRange = 1...1_000_000
  /// Longest accepted `--timeout`, in seconds (one day).
  static let maxTimeout: Double = 86_400

  /// `--timeout`'s value in seconds: a duration as every other option spells one
  /// (`DurationArgument`: `30s`, `5m`, `1h30m`), or a bare number of seconds (`2.5`), as this
  /// option took before; `nil` unless greater than 0 and at most `maxTimeout`.
  static func timeoutSeconds(_ text: String) -> Double? {
    let seconds = Double(text) ?? DurationArgument.parse(text).map(Backoff.seconds)
    guard let seconds, seconds.isFinite, seconds > 0, seconds <= maxTimeout else { return nil }
    return seconds
  }

  let count: Int?
  let timeout: Double?
  let device: String?

  init(_ arguments: ParsedArguments) throws(UsageError) {
    guard arguments.positionals.isEmpty else { throw UsageError("unexpected argument '\(arguments.positionals[0])'") }
    count = try arguments.value("--count").map { (text) throws(UsageError) -> Int in
      guard let value = Int(text), Self.countRange.contains(value) else {
        throw UsageError("--count expects a whole number of events from \(Self.countRange.lowerBound) to \(Self.countRange.upperBound), got '\(text)'")
      }
      return value
    }
    timeout = try arguments.value("--timeout").map { (text) throws(UsageError) -> Double in
      guard let value = Self.timeoutSeconds(text) else {
        throw UsageError("--timeout expects a duration such as 30s or 5m (or a number of seconds), greater than 0 and at most 24h, got '\(text)'")
      }
      return value
    }
    device = DeviceOption.value(in: arguments)
  }

  func run(_ context: CommandContext) async throws -> ExitStatus {
    let watch: any Device
    let place: String
    switch try await DeviceOption.open(device, in: context) {
    case .simulated(let simulated): (watch, place) = (simulated, "at \(simulated.path ?? "(memory)")")
    case .other(let other): (watch, place) = (other, other.identity)
    }
    let (stream, continuation) = AsyncStream<Item>.makeStream()
    await register(watch, continuation)
    context.stdout.write("Listening for changes on the watch \(place)…\n")
    let status = await receive(stream, continuation, context)
    await watch.close()
    return status
  }

  /// Prints what `stream` brings until `--count` events, the timeout, or every listener refused.
  private func receive(_ stream: AsyncStream<Item>, _ continuation: AsyncStream<Item>.Continuation,
                       _ context: CommandContext) async -> ExitStatus {
    if let timeout {
      Task {
        try? await Task.sleep(for: .seconds(timeout))
        continuation.finish()
      }
    }
    var received = 0
    var refused = 0
    for await item in stream {
      switch item {
      case .event(let text):
        received += 1
        context.stdout.write(text + "\n")
        if let count, received >= count { return .success }
      case .refusal(let text):
        refused += 1
        context.stderr.write(text + "\n")
        if refused == Self.listenerCount {
          context.stderr.write("Error: this watch reports no events: all \(Self.listenerCount) listeners (contacts, emergency contacts, SOS) were refused, so there is nothing to listen for\n")
          return .failure
        }
      }
    }
    if let count, received < count {
      context.stderr.write("Error: timed out after \(timeout ?? 0) seconds with \(received) of \(counted(count, "event"))\n")
      return .failure
    }
    return .success
  }

  private func register(_ watch: any Device, _ continuation: AsyncStream<Item>.Continuation) async {
    await watch.registerContactsDidChange { result in
      continuation.yield(Self.item(result, event: "contacts changed", listener: "contacts"))
    }
    await watch.registerEmergencyContactsDidChange { result in
      continuation.yield(Self.item(result, event: "emergency contacts changed", listener: "emergency contacts"))
    }
    await watch.registerSOSRequest { error in
      if let error {
        continuation.yield(.refusal("SOS listener: \(error)"))
      } else {
        continuation.yield(.event("SOS requested"))
      }
    }
  }

  private static func item(_ result: Result<[Contact], DeviceError>, event: String, listener: String) -> Item {
    switch result {
    case .success(let contacts):
      let names = contacts.map(\.name).joined(separator: ", ")
      return .event("\(event): \(contacts.count) contact\(contacts.count == 1 ? "" : "s")" + (names.isEmpty ? "" : " (\(names))"))
    case .failure(let error):
      return .refusal("\(listener) listener: \(error)")
    }
  }
}
