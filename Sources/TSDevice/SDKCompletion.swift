import Foundation
import TSModel

/// Waits for one SDK completion block, safely: the vendor SDK calls its completions on the main
/// queue, late, never, or (a bug seen in callback-style SDKs) twice. The first call wins; a
/// call after it, or after the timeout, is ignored and reported to `onStray` (never a trap of
/// a checked continuation); no call within `timeout` is 6001 in the call's domain (a write may
/// or may not have reached the watch, as for any timeout; a read left it unchanged).
///
/// The companion app (examples/ios-bridge) maps every SDK call through this; the package tests
/// it against a fake SDK (Tests/TSDeviceTests/SDKAdapterTests.swift).
public enum SDKCompletion {
  /// What a completion that came too late or a second time is reported as.
  public struct Stray: Sendable, Equatable {
    /// The SDK call's name, e.g. `setAllContacts:completion:`.
    public var call: String
    /// `true`: it came after an earlier one; `false`: after the timeout.
    public var repeated: Bool

    public init(call: String, repeated: Bool) {
      self.call = call
      self.repeated = repeated
    }
  }

  /// Starts `call`, handing it a `finish` block to pass to the SDK, and waits for the first of
  /// `finish` being called or `timeout` passing.
  /// - Parameters:
  ///   - name: the SDK call, for the timeout's message and `onStray`.
  ///   - domain: the timeout error's domain (the call's SDK domain).
  ///   - timeout: how long the SDK may take.
  ///   - reads: the call only reads the watch: its timeout says the watch is unchanged by it
  ///     (`UnansweredCall.outcome`).
  ///   - onStray: told about each completion that is ignored (late or repeated).
  /// - Throws: the error `finish` was given, or 6001 after `timeout`.
  public static func wait<T: Sendable>(_ name: String, domain: DeviceError.Domain, timeout: Duration, reads: Bool = false,
                                       onStray: @escaping @Sendable (Stray) -> Void = { _ in },
                                       _ call: (_ finish: @escaping @Sendable (Result<T, DeviceError>) -> Void) -> Void)
    async throws(DeviceError) -> T {
    let gate = Gate<T>(name: name, onStray: onStray)
    let result: Result<T, DeviceError> = await withCheckedContinuation { continuation in
      gate.arm(continuation)
      let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
      DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
        gate.timeOut(DeviceError(domain, .timeout, "the SDK did not answer \(name) within \(Self.text(seconds)) s; \(UnansweredCall.outcome(reads: reads))"))
      }
      call { gate.finish($0) }
    }
    return try result.get()
  }

  static func text(_ seconds: Double) -> String { seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds) }

  /// Resumes its continuation exactly once: with the first completion or the timeout.
  final class Gate<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Result<T, DeviceError>, Never>?
    private var done = false
    private var timedOut = false
    let name: String
    let onStray: @Sendable (Stray) -> Void

    init(name: String, onStray: @escaping @Sendable (Stray) -> Void) {
      self.name = name
      self.onStray = onStray
    }

    func arm(_ continuation: CheckedContinuation<Result<T, DeviceError>, Never>) {
      lock.withLock { self.continuation = continuation }
    }

    func finish(_ result: Result<T, DeviceError>) {
      let (waiting, stray) = lock.withLock { () -> (CheckedContinuation<Result<T, DeviceError>, Never>?, Stray?) in
        guard !done else { return (nil, Stray(call: name, repeated: !timedOut)) }
        done = true
        defer { continuation = nil }
        return (continuation, nil)
      }
      if let stray { onStray(stray) }
      waiting?.resume(returning: result)
    }

    func timeOut(_ error: DeviceError) {
      let waiting = lock.withLock { () -> CheckedContinuation<Result<T, DeviceError>, Never>? in
        guard !done else { return nil }
        done = true
        timedOut = true
        defer { continuation = nil }
        return continuation
      }
      waiting?.resume(returning: .failure(error))
    }
  }
}
