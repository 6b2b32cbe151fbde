import TSDevice
import TSModel

/// `tsapply device listen [--count N] [--timeout SECONDS]`: registers the three SDK listeners
/// (contacts changed, emergency contacts changed, SOS request) and prints events as they arrive.
struct DeviceListenCommand: Command {
  static let name = "listen"
  static let abstract = "Print contact, emergency-contact and SOS events from the watch as they happen."
  static let usage = "[--count N] [--timeout SECONDS] [--device SPEC]"
  static let discussion = """
    Listeners the platform does not support answer once with error 2004, printed on standard
    error. With --count, exits 0 after N events, or 1 if --timeout passes first.
    """
  static let options: [OptionSpec] = [
    OptionSpec(["--count"], value: "N", help: "Stop after N events."),
    OptionSpec(["--timeout"], value: "SECONDS", help: "Stop after this many seconds."),
    DeviceOption.spec,
  ]

  enum Item: Sendable {
    case event(String)
    case refusal(String)
  }

  let count: Int?
  let timeout: Double?
  let device: String?

  init(_ arguments: ParsedArguments) throws(UsageError) {
    guard arguments.positionals.isEmpty else { throw UsageError("unexpected argument '\(arguments.positionals[0])'") }
    if let text = arguments.value("--count") {
      guard let value = Int(text), value >= 1 else { throw UsageError("--count expects a whole number ≥ 1, got '\(text)'") }
      count = value
    } else {
      count = nil
    }
    if let text = arguments.value("--timeout") {
      guard let value = Double(text), value > 0, value.isFinite else { throw UsageError("--timeout expects seconds > 0, got '\(text)'") }
      timeout = value
    } else {
      timeout = nil
    }
    device = DeviceOption.value(in: arguments)
  }

  func run(_ context: CommandContext) async throws -> ExitStatus {
    let watch = try DeviceOption.openSimulated(device, in: context)
    let (stream, continuation) = AsyncStream<Item>.makeStream()
    await register(watch, continuation)
    context.stdout.write("Listening for changes on the watch at \(watch.path ?? "(memory)")…\n")
    if let timeout {
      Task {
        try? await Task.sleep(nanoseconds: UInt64(timeout * 1_000_000_000))
        continuation.finish()
      }
    }
    var received = 0
    for await item in stream {
      switch item {
      case .event(let text):
        received += 1
        context.stdout.write(text + "\n")
        if let count, received >= count { return .success }
      case .refusal(let text):
        context.stderr.write(text + "\n")
      }
    }
    if let count, received < count {
      context.stderr.write("Error: timed out after \(timeout ?? 0) seconds with \(received) of \(count) events\n")
      return .failure
    }
    return .success
  }

  private func register(_ watch: SimulatedDevice, _ continuation: AsyncStream<Item>.Continuation) async {
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
