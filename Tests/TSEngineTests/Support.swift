import Foundation
@testable import TSDevice
import TSEngine
import TSManifest
import TSModel
import TSTestSupport

/// A temporary workspace with a file-backed simulated watch and an engine whose state root is
/// inside the workspace.
struct Workspace {
  let directory: String
  let engine: Engine
  let spec: String

  /// A workspace whose watch (`watch.json`, profile `profile`) holds `state` (its factory
  /// state when `nil`).
  init(profile: PlatformProfile = .default, state: DeviceState? = nil) throws {
    directory = try TSApplyBinary.temporaryDirectory().resolvingSymlinksInPath().path
    let path = directory + "/watch.json"
    let device = try SimulatedDevice.create(path: path, profile: profile, force: false)
    if let state {
      try device.store.update { (watch: inout SimulatedWatch) throws(DeviceError) in
        watch.reminders = state.reminders
        watch.contacts = state.contacts
        watch.emergency = state.emergency ?? EmergencyContacts(contacts: [], isSosOn: false)
      }
    }
    spec = "sim:" + path
    engine = Engine(registry: DeviceRegistry(schemes: [SimulatorScheme()], defaultSpec: "sim:.tsapply/device.json"),
                    environment: ["TSAPPLY_STATE_DIR": directory + "/state"], currentDirectory: directory)
  }

  /// The watch, opened through the engine.
  func open() async throws -> Watch { try await engine.open(spec) }

  /// The watch, opened through an engine whose simulator injects `fault` (`TSAPPLY_SIM_FAULT`).
  func open(fault: String) async throws -> Watch {
    try await Engine(registry: DeviceRegistry(schemes: [SimulatorScheme()], defaultSpec: "sim:.tsapply/device.json"),
                     environment: ["TSAPPLY_STATE_DIR": directory + "/state", "TSAPPLY_SIM_FAULT": fault],
                     currentDirectory: directory).open(spec)
  }

  /// What the watch holds now.
  func state() async throws -> DeviceState { try await open().readState() }

  /// `yaml` written to `name` in the workspace and read as a manifest document.
  func document(_ yaml: String, name: String = "watch.yaml") throws -> ManifestDocument {
    let path = directory + "/" + name
    try yaml.write(toFile: path, atomically: true, encoding: .utf8)
    let loaded = ManifestLoader.load(bytes: Array(yaml.utf8), file: name)
    guard let manifest = loaded.manifest else { throw LoadFailed(diagnostics: loaded.diagnostics) }
    return ManifestDocument(manifest: manifest, warnings: loaded.diagnostics, bytes: Array(yaml.utf8), path: path)
  }
}

struct LoadFailed: Error, CustomStringConvertible {
  var diagnostics: [Diagnostic]
  var description: String { diagnostics.map(\.description).joined(separator: "\n") }
}

extension Workspace {
  /// Automatic approval; `allowDestroy` as `--allow-destroy`.
  static func automatic(_ allowDestroy: Bool = false) -> ApplyOptions {
    ApplyOptions(approval: .automatic(allowDestroy: allowDestroy), command: "test")
  }
}
