import Foundation
import TSDevice
import TSEngine
import TSFleet
import TSManifest
import TSModel
import TSTestSupport

/// A temporary fleet directory: files written into it, simulated watches created in it, and an
/// engine whose state root is inside it.
struct FleetSpace {
  let directory: String
  let engine: Engine

  init() throws {
    directory = try TSApplyBinary.temporaryDirectory().resolvingSymlinksInPath().path
    engine = Engine(registry: DeviceRegistry(schemes: [SimulatorScheme()], defaultSpec: "sim:.tsapply/device.json"),
                    environment: ["TSAPPLY_STATE_DIR": directory + "/state"], currentDirectory: directory)
  }

  /// Writes `text` to `name` (directories created).
  func write(_ name: String, _ text: String) throws {
    let path = directory + "/" + name
    try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    try text.write(toFile: path, atomically: true, encoding: .utf8)
  }

  /// A fleet (`fleet.yaml`) of one watch, room-1 (`watches/room-1.json`, created), given
  /// `manifest` (`residents/room-1.yaml`).
  func oneWatch(_ manifest: String) throws {
    try watch("room-1")
    try write("residents/room-1.yaml", manifest)
    try write("fleet.yaml", "watches:\n  room-1: {device: \"sim:watches/room-1.json\", manifest: residents/room-1.yaml}\n")
  }

  /// Creates the simulated watch `watches/NAME.json` of `profile`; its spec.
  @discardableResult
  func watch(_ name: String, profile: PlatformProfile = .default) throws -> String {
    let path = directory + "/watches/\(name).json"
    try FileManager.default.createDirectory(atPath: directory + "/watches", withIntermediateDirectories: true)
    try SimulatedDevice.create(path: path, profile: profile, force: false)
    return "sim:watches/\(name).json"
  }

  /// The fleet file `fleet.yaml`, loaded.
  func load(_ selection: [String] = []) throws(FleetLoadFailure) -> LoadedFleet {
    try FleetLoader.load(path: directory + "/fleet.yaml", displayName: "fleet.yaml", selection: selection)
  }

  /// What the watch `watches/NAME.json` holds.
  func state(_ name: String) async throws -> DeviceState {
    try await engine.open("sim:watches/\(name).json").readState()
  }
}

/// `yaml` read as a manifest named `file`; fails the test when it has errors.
/// With `resolvesReferences: false`, its references are left for a merge (as a fleet's files).
func manifest(_ yaml: String, file: String, resolvesReferences: Bool = true) throws -> Manifest {
  let loaded = ManifestLoader.load(bytes: Array(yaml.utf8), file: file, resolvesReferences: resolvesReferences)
  guard let manifest = loaded.manifest else { throw Problems(diagnostics: loaded.diagnostics) }
  return manifest
}

struct Problems: Error, CustomStringConvertible {
  var diagnostics: [Diagnostic]
  var description: String { diagnostics.map(\.description).joined(separator: "\n") }
}

/// Manifest documents from YAML text, for setting watches up.
enum ManifestDocumentFixture {
  static func document(_ yaml: String, file: String = "seed.yaml") -> ManifestDocument {
    let loaded = ManifestLoader.load(bytes: Array(yaml.utf8), file: file)
    return ManifestDocument(manifest: loaded.manifest!, bytes: Array(yaml.utf8), path: nil)
  }
}

/// Things received from another thread (messages, events), for assertions.
final class Inbox<Element: Sendable>: @unchecked Sendable {
  private let lock = NSLock()
  private var stored: [Element] = []
  func add(_ element: Element) {
    lock.lock()
    stored.append(element)
    lock.unlock()
  }
  var items: [Element] {
    lock.lock()
    defer { lock.unlock() }
    return stored
  }
  /// The items once there are `count` of them, or after `seconds`.
  func wait(for count: Int, within seconds: Double = 60) async -> [Element] {
    let deadline = Date().addingTimeInterval(seconds)
    while items.count < count, Date() < deadline { try? await Task.sleep(for: .milliseconds(10)) }
    return items
  }
}
