import Foundation

/// Collects values from callbacks on any thread (listeners, event sinks), for assertions.
public final class Collector<Value: Sendable>: @unchecked Sendable {
  private let lock = NSLock()
  private var storage: [Value] = []
  /// An empty collector.
  public init() {}
  /// Adds `value` (thread-safe).
  public func append(_ value: Value) {
    lock.lock()
    storage.append(value)
    lock.unlock()
  }
  /// Everything added so far, in order.
  public var values: [Value] {
    lock.lock()
    defer { lock.unlock() }
    return storage
  }
}
