import Foundation
import TSDevice
import TSEngine
import TSManifest
import TSModel

/// The merged manifest of each watch of one fleet file, as `FleetLoader` reads it, read again
/// only when a file it comes from changed: the fleet file, a layer, or the watch's own
/// manifest (each compared by `FileIdentity`, taken before the file is read, so a change made
/// while it is read is seen at the next call). Thread-safe; one is shared by every monitor of a
/// `monitor --fleet`, each asking at every check.
///
/// Loading the fleet file for each watch at each check (the fleet file parsed, every spec put in
/// canonical form and every manifest it names read, for one watch) made starting `monitor
/// --fleet` over N watches cost N² file reads: 49 s of CPU at 1,000 watches.
///
/// A fleet that does not load (`FleetLoadFailure`) is not kept: it is read again at every call
/// until it loads. Once it has loaded, a watch is read again when its own files change, so
/// another watch's manifest becoming unreadable stops only that watch's checks.
public final class FleetManifests: @unchecked Sendable {
  private let path: String
  private let displayName: String
  private let registry: DeviceRegistry
  private let environment: [String: String]
  private let lock = NSLock()
  private var fleet: Snapshot?

  /// What was loaded, with the identities of the files it was loaded from.
  private struct Snapshot {
    var fleetFile: FileIdentity
    var file: FleetFile
    /// The identities of the layers' files, in `file.layers` order.
    var layers: [FileIdentity?]
    var members: [String: (own: FileIdentity?, member: FleetMember)]

    /// Whether the fleet file and its layers are still the files loaded.
    func isCurrent(_ fleetFile: FileIdentity?) -> Bool {
      fleetFile == self.fleetFile && FleetManifests.identities(of: file) == layers
    }
  }

  /// The manifests of the fleet file at `path` (absolute), named `displayName` in diagnostics,
  /// its watches opened through `registry` in `environment` (as `FleetLoader.load` takes them).
  /// `loaded`: that fleet as the caller already loaded it (with the same path, registry and
  /// environment), kept as the first snapshot so the fleet is not read again at the first check
  /// of every watch (starting `monitor --fleet` read the fleet file, and checked every manifest
  /// it names, three times).
  public init(path: String, displayName: String, registry: DeviceRegistry, environment: [String: String], loaded: LoadedFleet? = nil) {
    self.path = path
    self.displayName = displayName
    self.registry = registry
    self.environment = environment
    fleet = loaded.flatMap(Self.snapshot)
  }

  /// `loaded` kept with the identities of its files: the fleet file's and the layers' as
  /// `FleetLoader` took them before reading them, each watch's own manifest's now (a member
  /// reads it when first asked, after this). `nil` when the fleet file is not a regular file.
  private static func snapshot(_ loaded: LoadedFleet) -> Snapshot? {
    guard let fleetFile = loaded.fleetFileIdentity else { return nil }
    var members: [String: (own: FileIdentity?, member: FleetMember)] = [:]
    for member in loaded.everyMember {
      members[member.name] = (member.watch.manifest.map { FileIdentity(loaded.fleet.absolutePath($0.value)) } ?? nil, member)
    }
    return Snapshot(fleetFile: fleetFile, file: loaded.fleet, layers: loaded.layerIdentities, members: members)
  }

  /// The member `name` as `FleetLoader.load(path:displayName:selection:registry:environment:)`
  /// with `selection: [name]` would read it now.
  /// - Throws: `FleetLoadFailure` when the fleet file (or, for this watch, a layer or its
  ///   own manifest) cannot be used, or no longer has the watch.
  public func member(_ name: String) throws(FleetLoadFailure) -> FleetMember? {
    lock.lock()
    defer { lock.unlock() }
    let fleetFile = FileIdentity(path)
    if let fleet, fleet.isCurrent(fleetFile) {
      guard let kept = fleet.members[name] else {
        // Not in the fleet file (removed since): nothing to read. In it but not kept (its
        // manifests did not load): read alone, for its errors.
        guard fleet.file.watches.contains(where: { $0.name.value == name }) else { return nil }
        return try reload(name)
      }
      let own = kept.member.watch.manifest.map { FileIdentity(fleet.file.absolutePath($0.value)) } ?? nil
      if own == kept.own { return kept.member }
      // Its own manifest changed: this watch is read again.
      guard let member = try reload(name) else { return nil }
      self.fleet?.members[name] = (own, member)
      return member
    }
    // The fleet file or a layer changed (or nothing is kept): every watch read again, with the
    // identities of its files taken before each is read (`snapshot`).
    self.fleet = nil
    let loaded = try FleetLoader.load(path: path, displayName: displayName, registry: registry, environment: environment)
    fleet = Self.snapshot(loaded)
    guard let kept = fleet?.members[name] ?? loaded.members.first(where: { $0.name == name }).map({ (nil, $0) }) else {
      if let fleet, !fleet.file.watches.contains(where: { $0.name.value == name }) { return nil }
      return try reload(name)
    }
    return kept.member
  }

  /// Every watch of the fleet file as it is now, in its order (the fleet read again when it or
  /// a layer changed): how a running `monitor --fleet` finds watches added to the fleet file.
  /// - Throws: `FleetLoadFailure` when the fleet file or a layer cannot be used.
  public func members() throws(FleetLoadFailure) -> [FleetMember] {
    lock.lock()
    defer { lock.unlock() }
    if fleet == nil || !(fleet?.isCurrent(FileIdentity(path)) ?? false) {
      self.fleet = nil
      let loaded = try FleetLoader.load(path: path, displayName: displayName, registry: registry, environment: environment)
      guard let snapshot = Self.snapshot(loaded) else { return loaded.everyMember }
      fleet = snapshot
    }
    guard let fleet else { return [] }
    return fleet.file.watches.compactMap { fleet.members[$0.name.value]?.member }
  }

  /// The identities of the files of `fleet`'s layers, in order.
  static func identities(of fleet: FleetFile) -> [FileIdentity?] {
    fleet.layers.map { FileIdentity(fleet.absolutePath($0.manifest.value)) }
  }

  /// `name` loaded as a selection of one (a name the fleet file does not have is refused as
  /// `--watch` refuses it).
  private func reload(_ name: String) throws(FleetLoadFailure) -> FleetMember? {
    try FleetLoader.load(path: path, displayName: displayName, selection: [name], registry: registry, environment: environment).members.first
  }

  /// The merged manifest of `name`, or the errors that keep a check from using it.
  public func document(for name: String) -> Result<ManifestDocument, FleetInputProblem> {
    let member: FleetMember
    do throws(FleetLoadFailure) {
      guard let found = try self.member(name) else {
        var problem = FleetInputProblem(diagnostics: [.error(at: nil, field: "", "\(displayName) no longer names the watch \"\(name)\"")],
                                        subject: displayName)
        problem.notInFleet = true
        return .failure(problem)
      }
      member = found
    } catch {
      return .failure(error.problem)
    }
    return member.document
  }
}
