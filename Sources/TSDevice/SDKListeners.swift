import Foundation
import TSModel

/// The three SDK listeners (`registerContactsDidChangedBlock:`,
/// `registerEmergencyContactsDidChangedBlock:`, `registerSOSRequestBlock:`) kept alive across
/// Bluetooth reconnects, and never doubled.
///
/// The SDK's listeners die with the connection (docs/platforms.md "Listeners"), so each
/// listener wanted is registered with the SDK again after every reconnect, once per connection:
/// `connected()` starts a new connection and registers what is wanted; `add` registers at once
/// when connected and not yet registered on this connection. Every SDK block forwards only while
/// its connection is the current one, so a block the SDK kept from an earlier connection never
/// delivers a second copy. Handlers belong to an owner (one bridge service): `removeHandlers(of:)`
/// drops an owner's when it stops (a new pairing key makes a new service), without touching the
/// SDK registrations the next owner shares.
///
/// Used by the companion app (examples/ios-bridge) over the real SDK; tested here against a fake
/// SDK (Tests/TSDeviceTests/SDKAdapterTests.swift).
public final class SDKListeners: @unchecked Sendable {
  /// One of the SDK's three listeners.
  public typealias Kind = DeviceEvent.Kind

  /// What an SDK listener block reports: the new list, the press, or the SDK's error.
  public enum Report: Sendable, Equatable {
    case contacts([Contact])
    case sos
    case failed(DeviceError)
  }

  /// Registers the SDK's listener of `kind` with a block that forwards to `deliver`.
  public typealias Register = @Sendable (_ kind: Kind, _ deliver: @escaping @Sendable (Report) -> Void) -> Void

  private let register: Register
  private let lock = NSLock()
  private var handlers: [(owner: ObjectIdentifier, kind: Kind, handler: @Sendable (Report) -> Void)] = []
  /// The current connection's number (0: none yet) and whether it is up.
  private var connection = 0
  private var isConnected = false
  /// Kinds registered with the SDK on the current connection.
  private var registered: Set<Kind> = []
  /// Registrations made, per kind, over the object's life (for reports and tests).
  private var registrationCount: [Kind: Int] = [:]

  /// Bookkeeping that registers SDK listeners through `register`.
  public init(register: @escaping Register) {
    self.register = register
  }

  /// Adds `handler` for `kind` on behalf of `owner`; registers the SDK listener now when the
  /// watch is connected and it is not registered on this connection yet.
  public func add(_ kind: Kind, owner: AnyObject, _ handler: @escaping @Sendable (Report) -> Void) {
    let owner = ObjectIdentifier(owner)
    let now = lock.withLock { () -> Int? in
      handlers.append((owner, kind, handler))
      return claim(kind)
    }
    if let now { registerSDK(kind, connection: now) }
  }

  /// Drops every handler `owner` added (the SDK registrations stay for the others).
  public func removeHandlers(of owner: AnyObject) {
    let owner = ObjectIdentifier(owner)
    lock.withLock { handlers.removeAll { $0.owner == owner } }
  }

  /// The watch connected (first time or again): a new connection, on which every listener
  /// that has handlers is registered once.
  public func connected() {
    let (number, kinds) = lock.withLock { () -> (Int, [Kind]) in
      connection += 1
      isConnected = true
      registered = []
      let kinds = Kind.allCases.filter { kind in handlers.contains { $0.kind == kind } }
      return (connection, kinds.filter { claim($0) != nil })
    }
    for kind in kinds { registerSDK(kind, connection: number) }
  }

  /// The watch disconnected: the SDK's blocks are dead until `connected()`.
  public func disconnected() {
    lock.withLock {
      isConnected = false
      registered = []
    }
  }

  /// How many times the SDK listener of `kind` was registered.
  public func registrations(of kind: Kind) -> Int { lock.withLock { registrationCount[kind, default: 0] } }

  /// The connection number to register `kind` on now, marking it registered; `nil` when not
  /// connected or already registered on this connection. Call with the lock held.
  private func claim(_ kind: Kind) -> Int? {
    guard isConnected, !registered.contains(kind) else { return nil }
    registered.insert(kind)
    registrationCount[kind, default: 0] += 1
    return connection
  }

  private func registerSDK(_ kind: Kind, connection number: Int) {
    register(kind) { [weak self] report in self?.deliver(report, of: kind, from: number) }
  }

  /// Hands `report` to the handlers of `kind` if it comes from the current connection's block.
  private func deliver(_ report: Report, of kind: Kind, from number: Int) {
    let targets = lock.withLock { () -> [@Sendable (Report) -> Void] in
      guard number == connection else { return [] }
      return handlers.filter { $0.kind == kind }.map(\.handler)
    }
    for handler in targets { handler(report) }
  }
}
