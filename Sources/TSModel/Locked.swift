import Foundation

/// A value shared between tasks and `@Sendable` closures, read and changed under a lock.
public final class Locked<Value: Sendable>: @unchecked Sendable {
  private let lock = NSLock()
  private var stored: Value

  /// Holds `value`.
  public init(_ value: Value) { stored = value }

  /// The value now.
  public var value: Value { lock.withLock { stored } }

  /// Replaces the value.
  public func set(_ value: Value) { lock.withLock { stored = value } }

  /// Changes the value in place under the lock (concurrent changes are never lost).
  public func mutate(_ change: (inout Value) -> Void) { lock.withLock { change(&stored) } }

  /// Changes the value in place under the lock and returns what `body` returns.
  public func update<T>(_ body: (inout Value) -> T) -> T { lock.withLock { body(&stored) } }
}
