import Foundation
import TSDevice
import TSEngine
import TSManifest
import TSModel

/// One watch of a loaded fleet: where it is, and its merged manifest or what stops it.
///
/// The watch's own manifest is read and merged over its layers when first asked for
/// (`document`, `sources`) and kept from then on; `FleetRunner` reads it with `read()` instead,
/// as it starts the watch, and keeps nothing, so a fleet run holds the manifests of the watches
/// under way only (docs/fleet.md "Scale": 10,000 watches planned in bounded memory). Copies of a
/// member share what was kept.
public struct FleetMember: Sendable {
  /// The watch as the fleet file states it.
  public var watch: FleetWatch
  /// Display names of the manifests merged for it, the top first: its own (if any), then its
  /// layers from the last to the first.
  public var manifestFiles: [String]
  /// The layers' manifests merged under its own, in the fleet file's order (empty when it has none).
  public var layers: [Manifest] = []

  /// The merged manifest this watch would have with `bytes` as its own manifest (named as its
  /// own is, `ownName`): what `tsapply drift --fleet --adopt` checks an edit of it with. `nil`
  /// when the text or the merge has errors.
  public func merged(own bytes: [UInt8], named ownName: String) -> Manifest? {
    guard let own = ManifestLoader.load(bytes: bytes, file: ownName, resolvesReferences: false).manifest else { return nil }
    let merged = ManifestMerge.merge(layers + [own])
    return merged.diagnostics.hasErrors ? nil : merged.manifest
  }
  /// Reads the watch's manifests, and keeps what `document` and `sources` read.
  let manifests: MemberManifests

  /// The merged manifest (own over its layers) as the engine takes it; `.failure` with the
  /// diagnostics (errors first, every one positioned) when either file has errors. Read on the
  /// first call and kept.
  public var document: Result<ManifestDocument, FleetInputProblem> { manifests.kept().document }
  /// The bytes of each file its diagnostics can point into, by the name positions carry (its
  /// own manifest, the layers, the fleet file), for source excerpts: the bytes `document` was
  /// read from. Personal data: never logged or persisted.
  public var sources: [String: [UInt8]] { manifests.kept().sources }

  /// The watch's merged manifest read now (or as kept, when `document` was read before), without
  /// keeping it: what a fleet run uses, so that a watch's manifests live only while it runs.
  /// `keep(_:)` keeps a read (a failed watch's, for its report's source excerpts).
  public func read() -> MemberRead { manifests.read() }

  /// Keeps `read` as this member's (and every copy's) `document` and `sources`.
  public func keep(_ read: MemberRead) { manifests.keep(read) }

  /// The watch's name in the fleet.
  public var name: String { watch.name.value }
  /// Its device spec.
  public var device: String { watch.device.value }
}

/// A watch's merged manifest as read at one time, with the bytes of the files its diagnostics
/// point into (`FleetMember.read()`).
public struct MemberRead: Sendable {
  /// The merged manifest, or the problems that stop the watch.
  public var document: Result<ManifestDocument, FleetInputProblem>
  /// File bytes by display name, for source excerpts.
  public var sources: [String: [UInt8]]
}

/// Reads one member's manifests (`FleetLoader.member`) and keeps the read `FleetMember.document`
/// asked for. Thread-safe.
final class MemberManifests: @unchecked Sendable {
  private let reader: @Sendable () -> MemberRead
  private let lock = NSLock()
  private var kept_: MemberRead?

  init(_ reader: @escaping @Sendable () -> MemberRead) { self.reader = reader }

  /// What was kept, or a read now, not kept.
  func read() -> MemberRead {
    lock.lock()
    let kept = kept_
    lock.unlock()
    return kept ?? reader()
  }

  /// What was kept, or a read now, kept.
  func kept() -> MemberRead {
    lock.lock()
    defer { lock.unlock() }
    if let kept_ { return kept_ }
    let read = reader()
    kept_ = read
    return read
  }

  func keep(_ read: MemberRead) {
    lock.lock()
    defer { lock.unlock() }
    if kept_ == nil { kept_ = read }
  }
}

/// Diagnostics that stop a watch (or the whole fleet) before any watch is touched.
public struct FleetInputProblem: Error, Sendable, CustomStringConvertible {
  /// Every problem found, errors and warnings, sorted by position.
  public var diagnostics: [Diagnostic]
  /// What they are in, for messages: `the fleet file`, `the manifest`, `the defaults`.
  public var subject: String
  /// The watch asked for is not in the fleet file (any more): not a problem of its manifests.
  public var notInFleet = false

  /// Problems in `subject`.
  public init(diagnostics: [Diagnostic], subject: String) {
    self.diagnostics = diagnostics.sortedByPosition()
    self.subject = subject
  }

  /// Number of errors.
  public var errorCount: Int { diagnostics.filter { $0.severity == .error }.count }

  public var description: String {
    "\(errorCount) error\(errorCount == 1 ? "" : "s") in \(subject); the watch was not touched"
  }
}

/// A fleet read and merged: the fleet file, and one member per selected watch.
public struct LoadedFleet: Sendable {
  /// The fleet file.
  public var fleet: FleetFile
  /// The selected watches in fleet-file order (all of them unless `--watch` chose some).
  public var members: [FleetMember]
  /// Every watch of the fleet file in its order, whatever `--watch` selected: for what is about
  /// the whole fleet (a staged rollout's revision, `RolloutRecord.observe`). Each reads its
  /// manifests only when asked (`FleetMember`).
  public var everyMember: [FleetMember]
  /// Warnings about the fleet file itself.
  public var warnings: [Diagnostic]
  /// The defaults manifest, when the fleet has `defaults:` (the one-layer spelling).
  public var defaults: Manifest?
  /// The identity of the fleet file, taken before it was read; `nil` when it is not a regular file.
  public var fleetFileIdentity: FileIdentity?
  /// The identity of each layer's file in `fleet.layers` order, each taken before the file was
  /// read: what `FleetManifests` compares to tell that a layer changed since this load.
  public var layerIdentities: [FileIdentity?] = []
}

/// Reads a fleet: the fleet file and its layers (or defaults) now, and each selected watch's own
/// manifest when its `FleetMember` is first asked for it, each with `ManifestLoader` (all
/// manifest rules), merged (`ManifestMerge`: the layers its labels select, in order, then its
/// own).
///
/// Problems in the fleet file or in a layer stop the whole fleet (the watches under it would
/// inherit them); a problem in one watch's own manifest, or in its merged manifest, stops that
/// watch only.
public enum FleetLoader {
  /// Loads the fleet file at `path` (absolute, named `displayName` in diagnostics), with only
  /// the watches named in `selection` (all when empty). `registry` and `environment` are the
  /// ones the watches will be opened with: two device specs that name one watch are refused
  /// (`FleetFileReader.decode`).
  /// - Throws: `FleetLoadFailure` with every problem of the fleet file or a layer, or an
  ///   unknown name in `selection`.
  public static func load(path: String, displayName: String, selection: [String] = [],
                          registry: DeviceRegistry = .simulated,
                          environment: [String: String] = ProcessInfo.processInfo.environment) throws(FleetLoadFailure) -> LoadedFleet {
    // Identities before the reads, so a change made while a file is read shows at the next look.
    let fleetFileIdentity = FileIdentity(path)
    let read = FleetFileReader.read(path: path, displayName: displayName, registry: registry, environment: environment)
    var sources = [displayName: read.bytes]
    guard let fleet = read.fleet else {
      throw FleetLoadFailure(problem: FleetInputProblem(diagnostics: read.diagnostics, subject: displayName), sources: sources)
    }
    let names = fleet.watches.map(\.name.value)
    let unknown = selection.filter { !names.contains($0) }
    if !unknown.isEmpty {
      let problems = unknown.map { name -> Diagnostic in
        var message = "\(displayName) has no watch named \"\(name)\""
        if let meant = Suggestion.closest(to: name, in: names) { message += "; did you mean \"\(meant)\"?" }
        return .error(at: nil, field: "--watch", message)
      }
      throw FleetLoadFailure(problem: FleetInputProblem(diagnostics: problems, subject: "--watch"), sources: sources)
    }
    // Each layer's file is read once, however many watches it is under; every layer with errors
    // is reported in one run.
    var layers: [String: LoadedLayer] = [:]
    var identities: [String: FileIdentity?] = [:]
    var failed: [(name: String, under: String, diagnostics: [Diagnostic])] = []
    for layer in fleet.layers where layers[layer.manifest.value] == nil && !failed.contains(where: { $0.name == fleet.displayPath(layer.manifest.value) }) {
      let name = fleet.displayPath(layer.manifest.value)
      identities[layer.manifest.value] = FileIdentity(fleet.absolutePath(layer.manifest.value))
      let loaded = ManifestLoader.load(path: fleet.absolutePath(layer.manifest.value), displayName: name, resolvesReferences: false)
      sources[name] = loaded.source
      guard let manifest = loaded.manifest else {
        failed.append((name, layer.select.isEmpty ? "every watch" : "the watches it selects", loaded.diagnostics))
        continue
      }
      layers[layer.manifest.value] = LoadedLayer(manifest: manifest, warnings: loaded.diagnostics, name: name)
    }
    if !failed.isEmpty {
      let each = failed.map { "\($0.name) (under \($0.under))" }
      let subject = fleet.defaults != nil ? "the defaults \(each[0])"
        : failed.count == 1 ? "the layer \(each[0])" : "the layers " + each.dropLast().joined(separator: ", ") + " and " + each.last!
      throw FleetLoadFailure(problem: FleetInputProblem(diagnostics: failed.flatMap(\.diagnostics), subject: subject), sources: sources)
    }
    // Each watch's own manifest is read when the member is first asked for it (`FleetMember`).
    let shared = sources
    let every = fleet.watches.map { watch in
      let under = fleet.layers(for: watch).compactMap { layers[$0.manifest.value] }
      var files: [String] = under.reversed().map(\.name)
      if let written = watch.manifest { files.insert(fleet.displayPath(written.value), at: 0) }
      return FleetMember(watch: watch, manifestFiles: files, layers: under.map(\.manifest),
                         manifests: MemberManifests { member(watch, in: fleet, layers: under, sources: shared) })
    }
    let members = every.filter { selection.isEmpty || selection.contains($0.name) }
    return LoadedFleet(fleet: fleet, members: members, everyMember: every, warnings: read.diagnostics,
                       defaults: fleet.defaults.flatMap { layers[$0.value]?.manifest }, fleetFileIdentity: fleetFileIdentity,
                       layerIdentities: fleet.layers.map { identities[$0.manifest.value] ?? nil })
  }

  /// A layer's manifest as read, with its warnings and its name in diagnostics.
  struct LoadedLayer: Sendable {
    var manifest: Manifest
    var warnings: [Diagnostic]
    var name: String
  }

  /// Reads `watch`'s own manifest and merges it over `layers`.
  private static func member(_ watch: FleetWatch, in fleet: FleetFile, layers: [LoadedLayer],
                             sources: [String: [UInt8]]) -> MemberRead {
    var sources = sources
    var own: (manifest: Manifest, warnings: [Diagnostic], bytes: [UInt8], path: String)?
    if let written = watch.manifest {
      let name = fleet.displayPath(written.value)
      let path = fleet.absolutePath(written.value)
      let loaded = ManifestLoader.load(path: path, displayName: name, resolvesReferences: false)
      sources[name] = loaded.source
      guard let manifest = loaded.manifest else {
        return MemberRead(document: .failure(FleetInputProblem(diagnostics: loaded.diagnostics, subject: name)), sources: sources)
      }
      own = (manifest, loaded.diagnostics, loaded.source ?? [], path)
    }
    let merged = ManifestMerge.merge(layers.map(\.manifest) + (own.map { [$0.manifest] } ?? []))
    var warnings = own?.warnings ?? []
    for layer in layers {
      let kept = ManifestMerge.surviving(layer.manifest, in: merged.manifest)
      warnings += layer.warnings.filter { ManifestMerge.field($0.field, isUnder: kept) }
    }
    if merged.diagnostics.hasErrors {
      return MemberRead(document: .failure(FleetInputProblem(diagnostics: merged.diagnostics + warnings,
                                                             subject: "the merged manifest of \(watch.name.value)")),
                        sources: sources)
    }
    warnings += merged.diagnostics
    // The bytes of every file, its own first (positions in its own file still find their lines),
    // so anything keyed by the bytes (a monitor's heal budget) sees an edit of any of them.
    let bytes = (own?.bytes ?? []) + layers.reversed().flatMap { sources[$0.name] ?? [] }
    let document = ManifestDocument(manifest: merged.manifest, warnings: warnings.sortedByPosition(), bytes: bytes, path: own?.path)
    return MemberRead(document: .success(document), sources: sources)
  }
}

/// A fleet that cannot be run: the problems of its fleet file or defaults, with the bytes their
/// positions point into.
public struct FleetLoadFailure: Error, Sendable, CustomStringConvertible {
  /// What is wrong.
  public var problem: FleetInputProblem
  /// File bytes by display name, for source excerpts.
  public var sources: [String: [UInt8]]

  public var description: String {
    let count = problem.errorCount
    return "\(count) error\(count == 1 ? "" : "s") in \(problem.subject); no watch was read or written"
  }
}
