import Foundation
import TSModel

/// The `memory:NAME` scheme: in-memory simulated watches, created on first use and kept by name
/// for the life of the scheme, so opening `memory:room-1` twice reaches the same watch. For
/// tests and benchmarks that need many watches without state files (a fleet of a thousand
/// agents); the command line never registers it.
public final class MemoryScheme: DeviceScheme, @unchecked Sendable {
  /// `memory`.
  public let name = "memory"
  /// `memory:NAME, …`.
  public let form = "memory:NAME, an in-memory simulated watch (tests and benchmarks)"
  /// `memory:room-1`.
  public let example = "memory:room-1"
  /// For help.
  public let summary = "an in-memory simulated watch, created on first use"

  private let lock = NSLock()
  private var devices: [String: SimulatedDevice] = [:]
  private let profile: @Sendable (String) -> PlatformProfile
  private let options: SimulationOptions

  /// A scheme whose watches are factory-fresh `profile(name)` watches with `options`.
  public init(options: SimulationOptions = SimulationOptions(), profile: @escaping @Sendable (String) -> PlatformProfile = { _ in .default }) {
    self.options = options
    self.profile = profile
  }

  /// The watch named `name`, created on first use.
  public func device(_ name: String) -> SimulatedDevice {
    lock.lock()
    defer { lock.unlock() }
    if let device = devices[name] { return device }
    let device = SimulatedDevice(profile: profile(name), options: options)
    devices[name] = device
    return device
  }

  /// The watch `location` names.
  public func open(_ location: String, spec: String, context: DeviceOpenContext) async throws(DeviceError) -> OpenedDevice {
    OpenedDevice(device: device(location), adviceSpec: spec)
  }
}
