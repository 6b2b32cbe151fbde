import Foundation
import TSModel

/// A simulated TopStep watch that answers every `Device` call the way its platform profile's
/// SDK path does (docs/platforms.md "The table", "Contacts", "The table"), with the SDK's error domains, codes and messages.
///
/// Two kinds of storage:
/// - in memory, `init(profile:state:options:)`, for tests, benchmarks and property tests;
/// - a JSON state file, `init(path:options:)` (see `DeviceSelector`), where each call is one
///   transaction under an exclusive `flock` with an atomic replace of the file, so concurrent
///   processes never lose a write.
///
/// Every link call (the nine SDK operations that talk to the watch; not `capabilities()`, the
/// listener registrations or `statistics()`) is counted with its estimated link bytes
/// (`LinkMeter`), may be slowed by `SimulationOptions.latency`, and may be failed by a
/// `SimulationOptions.Fault` (the failed call has no effect). Thread-safe.
public final class SimulatedDevice: Device, DeviceAccounting, @unchecked Sendable {
  let store: any StateStore
  /// `sim:` and the state file's canonical absolute path (`canonical(_:)`: every symbolic link
  /// resolved, the file's own included); for an in-memory watch
  /// `sim:memory:UUID`, unique per instance (it cannot be opened again).
  public let identity: String
  /// Latency and faults of this instance.
  public let options: SimulationOptions
  private let lock = NSLock()
  private var totals = DeviceStatistics()
  private var linkCalls = 0
  private var disconnected = false
  private var memoryHub: ListenerHub?
  private var fileHub: ListenerHub?

  /// An in-memory watch of `profile` holding `state` (the profile's factory state when `nil`).
  public init(profile: PlatformProfile, state: DeviceState? = nil, options: SimulationOptions = SimulationOptions()) {
    store = MemoryStore(SimulatedWatch(profile: profile, state: state))
    identity = DeviceSelector.simulatorScheme + "memory:" + UUID().uuidString
    self.options = options
    memoryHub = ListenerHub(lastDelivered: ListenerHub.Position(sequence: 0, time: nil))
  }

  /// The watch in the existing state file at `path` (made absolute by the caller). `spec` is
  /// the `--device` value that names it (`sim:PATH`), quoted in the advice of error messages
  /// ("reset the watch with 'tsapply device init --force --device sim:PATH'"); `nil` for the
  /// default watch, which needs no option.
  /// - Throws: `DeviceError` (simulator domain) when the file is missing, a directory,
  ///   unreadable or corrupted.
  public init(path: String, options: SimulationOptions = SimulationOptions(), spec: String? = nil) throws(DeviceError) {
    try StateFile.refuseDirectory(path)
    let file = Self.canonical(path)
    let fileStore = FileStore(file: file, name: WatchName(spec: spec))
    _ = try fileStore.read()
    store = fileStore
    identity = DeviceSelector.simulatorScheme + file
    self.options = options
  }

  /// Creates (or with `force`, resets) the state file at `path` as a factory-fresh `profile`
  /// watch. `force` replaces only a file that carries the state file's `format` marker (a
  /// watch, even a corrupted one); any other file is never overwritten. `spec` as in `init(path:)`.
  /// - Throws: `DeviceError` when a watch exists and `force` is false, the path is a directory
  ///   or a file that is not a state file, or the file cannot be written.
  @discardableResult
  public static func create(path: String, profile: PlatformProfile, force: Bool,
                            options: SimulationOptions = SimulationOptions(), spec: String? = nil) throws(DeviceError) -> SimulatedDevice {
    try StateFile.refuseDirectory(path)
    try StateFile.makeDirectory((path as NSString).deletingLastPathComponent)
    try FileStore(file: canonical(path), name: WatchName(spec: spec)).create(SimulatedWatch(profile: profile), force: force)
    return try SimulatedDevice(path: path, options: options, spec: spec)
  }

  /// The watch at `path`, created with the default profile first if there is none.
  public static func openOrCreate(path: String, options: SimulationOptions = SimulationOptions()) throws(DeviceError) -> SimulatedDevice {
    try StateFile.refuseDirectory(path)
    if !FileManager.default.fileExists(atPath: path) {
      try StateFile.makeDirectory((path as NSString).deletingLastPathComponent)
      _ = try FileStore(file: canonical(path)).createIfMissing(SimulatedWatch(profile: .default))
    }
    return try SimulatedDevice(path: path, options: options)
  }

  /// The absolute `path` with `.`, `..` and every symbolic link resolved, the last component
  /// included (`FilePaths.resolved`), so every spelling of one state file (`./w.json`, an
  /// absolute path, a symbolic link to it) gives one identity, one lock and one records folder,
  /// and the atomic replace renames over the real file, never over a link.
  public static func canonical(_ path: String) -> String { FilePaths.resolved(path) }

  /// Path of the state file (canonical); `nil` for an in-memory watch.
  public var path: String? { store.path }

  /// The state file, its lock file `<file>.lock` and its apply lock; none in memory.
  public var storageFiles: [String] { store.path.map { [$0, $0 + ".lock", $0 + ".apply-lock"] } ?? [] }

  /// `<file>.apply-lock` beside the state file (the lock of a whole apply, whatever the state
  /// folder); none in memory.
  public var applyLockPath: String? { store.path.map { $0 + ".apply-lock" } }

  /// The whole stored state: profile, reminders, contacts, emergency, journal.
  public func snapshot() throws(DeviceError) -> SimulatedWatch { try store.read() }

  /// The profile this watch simulates.
  public func profile() throws(DeviceError) -> PlatformProfile { try profile(named: snapshot().profile) }

  /// The profile called `name` as this instance's options make it (without emergency contacts).
  func profile(named name: String) throws(DeviceError) -> PlatformProfile {
    let profile = try PlatformProfile.named(name)
    return options.supportsEmergencyContacts ? profile : profile.withoutEmergencyContacts()
  }

  // MARK: Calls

  /// Runs one link call: counts it, applies an injected fault, runs `body` as one transaction
  /// on the state, records its bytes and sleeps for the modelled latency. A call that only
  /// `reads` runs `body` on a copy of the state read (`StateStore.read`: no exclusive lock, no
  /// comparison of the state before and after); its changes to the copy are dropped.
  func linkCall<T>(_ operation: String, domain: DeviceError.Domain, reads: Bool = false,
                   _ body: (PlatformProfile, inout SimulatedWatch, inout LinkMeter) throws(DeviceError) -> T)
    async throws(DeviceError) -> T {
    let lostAnswer = try beginCall(operation, domain: domain)
    var meter = LinkMeter()
    let result: Result<T, DeviceError>
    do {
      if reads {
        var watch = try store.read()
        result = .success(try body(try profile(named: watch.profile), &watch, &meter))
      } else {
        result = .success(try store.update { (watch: inout SimulatedWatch) throws(DeviceError) -> T in
          try body(try profile(named: watch.profile), &watch, &meter)
        })
      }
    } catch {
      result = .failure(error)
    }
    record(meter)
    if let latency = options.latency {
      try? await Task.sleep(nanoseconds: latency.nanoseconds(packets: meter.packets))
    }
    if let lostAnswer { throw lostAnswer }
    return try result.get()
  }

  /// The watch goes out of reach now, as after the `disconnect` fault: every later link call
  /// fails with 2003 "Device not connected" (a test's watch that vanished while opened).
  public func simulateOutOfReach() {
    lock.lock()
    defer { lock.unlock() }
    disconnected = true
  }

  /// Counts a call and applies an injected fault: throws for one that stops the call; returns
  /// the error to throw after the call took effect (`landsThenFails`), else `nil`.
  private func beginCall(_ operation: String, domain: DeviceError.Domain) throws(DeviceError) -> DeviceError? {
    lock.lock()
    defer { lock.unlock() }
    linkCalls += 1
    totals.calls[operation, default: 0] += 1
    if disconnected { throw DeviceError(.bleConnect, .unConnected, "Device not connected") }
    guard let fault = options.faults.first(where: { $0.call == linkCalls }) else { return nil }
    switch fault.kind {
    case .landsThenFails(let code):
      return DeviceError(domain, code, "\(operation): the answer was lost (simulated fault at call \(linkCalls), after the call took effect)")
    case .fail(let code):
      throw DeviceError(domain, code, "\(operation) failed (simulated fault at call \(linkCalls))")
    case .disconnect:
      disconnected = true
      throw DeviceError(.bleConnect, .requestCancelledByDisconnect,
                        "Connection lost, request cancelled (simulated disconnect at call \(linkCalls))")
    case .reconnect:
      let hub = memoryHub ?? fileHub
      let call = linkCalls
      lock.unlock()
      hub?.dropListeners(because: DeviceError(.bleConnect, .connectionLost,
                                              "the watch reconnected (simulated reconnect at call \(call)); its listeners were dropped: register them again"))
      lock.lock()
      throw DeviceError(.bleConnect, .requestCancelledByDisconnect,
                        "Connection lost, request cancelled (simulated reconnect at call \(call))")
    }
  }

  private func record(_ meter: LinkMeter) {
    lock.lock()
    defer { lock.unlock() }
    totals.bytesSent += meter.bytesSent
    totals.bytesReceived += meter.bytesReceived
    totals.packetsSent += meter.packetsSent
    totals.packetsReceived += meter.packetsReceived
  }

  /// Link calls made through this instance and their estimated bytes and packets (`LinkMeter`).
  public func statistics() async -> DeviceStatistics { currentStatistics() }

  /// Calls and link bytes so far (the synchronous form of `statistics()`).
  public func currentStatistics() -> DeviceStatistics {
    lock.lock()
    defer { lock.unlock() }
    return totals
  }

  // MARK: Listener hubs

  /// The hub for this watch: per instance in memory, shared by every device of the file otherwise.
  func hub() -> ListenerHub {
    lock.lock()
    defer { lock.unlock() }
    if let hub = memoryHub ?? fileHub { return hub }
    let path = store.path ?? ""
    let hub = ListenerHub.shared(for: path) { (try? store.read().journal) ?? [] }
    fileHub = hub
    return hub
  }

  /// Delivers new journal events to the listeners of this watch in this process.
  func deliver(_ watch: SimulatedWatch) {
    if let memoryHub {
      memoryHub.deliver(watch)
    } else if let path = store.path, let hub = ListenerHub.existing(for: path) {
      hub.deliver(watch)
    }
  }
}
