import Foundation
import TSDevice
import TSManifest
import TSModel
import TSMQTT

/// A fleet file (`fleet.yaml`, docs/fleet.md): the watches one repository describes, the
/// manifests layered under them, and how they are reached.
///
/// ```yaml
/// version: 1
/// layers:                              # optional: manifests under every watch's own, in order
///   - manifest: wards/common.yaml
///   - manifest: models/fw.yaml
///     select: {profile: fw}            # only for watches whose labels match
/// transport: mqtt://broker.lan:8883    # optional: agents pull desired documents
/// site: ward-a                         # with transport: the site's topics
/// watches:
///   room-12:
///     device: bridge:ward-a/AA:BB:CC:DD:EE:12
///     profile: fw                      # the watch's platform, the built-in label `profile`
///     labels: {ward: A}
///     manifest: residents/room-12.yaml
/// ```
///
/// `defaults: FILE` is the one-layer spelling (`layers: [{manifest: FILE}]`). Paths (layers,
/// `manifest`, `sim:` device paths) are relative to the fleet file's directory. Every value
/// keeps its position, so a problem with a watch names its line.
public struct FleetFile: Sendable {
  /// The fleet file as the user named it.
  public var file: String
  /// Absolute directory of the fleet file; relative paths in it are resolved against it.
  public var directory: String
  /// `version`; only 1 exists.
  public var version: Int
  /// `defaults`: the manifest under every watch's own, as written (also `layers`' only entry).
  public var defaults: Located<String>?
  /// The layers, bottom first: `layers`, or the one layer `defaults` spells.
  public var layers: [FleetLayer] = []
  /// `transport`: the broker agents pull from; `nil` when tsapply reaches the watches itself.
  public var transport: Located<MQTTAddress>?
  /// `site`: the site's part of the topics (required with `transport`).
  public var site: Located<String>?
  /// The watches, in the order written.
  public var watches: [FleetWatch]
  /// `rollout`: how `apply --fleet` releases a change, wave by wave; `nil` for all at once.
  public var rollout: Located<RolloutPolicy>? = nil

  /// A fleet read from `file` in `directory`.
  public init(file: String, directory: String, version: Int = 1, defaults: Located<String>? = nil,
              transport: Located<MQTTAddress>? = nil, site: Located<String>? = nil, watches: [FleetWatch] = []) {
    self.file = file
    self.directory = directory
    self.version = version
    self.defaults = defaults
    self.layers = defaults.map { [FleetLayer(manifest: $0)] } ?? []
    self.transport = transport
    self.site = site
    self.watches = watches
  }

  /// The path of `written` (a path in the fleet file) for messages: joined to the fleet file's
  /// directory as the user named it (`ward/fleet.yaml` + `residents/a.yaml` →
  /// `ward/residents/a.yaml`), absolute paths unchanged.
  public func displayPath(_ written: String) -> String {
    if written.hasPrefix("/") { return written }
    let folder = (file as NSString).deletingLastPathComponent
    return folder.isEmpty ? written : (folder as NSString).appendingPathComponent(written)
  }

  /// The absolute path of `written` (a path in the fleet file).
  public func absolutePath(_ written: String) -> String {
    written.hasPrefix("/") ? written : (directory as NSString).appendingPathComponent(written)
  }

  /// Who else takes the manifest `written` (a path in the fleet file) of the watch named
  /// `watch`: the other watches whose own manifest is that file, and the layers (or defaults)
  /// that are, as written. Paths are compared resolved (`FilePaths.resolved`: `.`, `..` and
  /// symbolic links), so no spelling of one file hides it. What `drift --adopt` refuses to
  /// write into (docs/fleet.md "Adopting drift in a fleet").
  public func sharers(ofManifest written: String, watch: String) -> (watches: [String], layers: [String]) {
    let file = FilePaths.resolved(absolutePath(written))
    let same = { (other: String) in FilePaths.resolved(absolutePath(other)) == file }
    return (watches.filter { $0.name.value != watch && $0.manifest.map { same($0.value) } == true }.map(\.name.value),
            layers.map(\.manifest.value).filter(same))
  }

  /// The layers under `watch`'s own manifest, bottom first: those whose selector its labels match.
  public func layers(for watch: FleetWatch) -> [FleetLayer] {
    layers.filter { $0.selects(watch) }
  }
}

/// One entry of `layers:`: a manifest, and which watches it is under.
public struct FleetLayer: Sendable {
  /// `manifest`: the layer's manifest, as written.
  public var manifest: Located<String>
  /// `select`: label → the values any of which matches (`{ward: A}`, `{profile: [fit, fw]}`);
  /// every label given must match. Empty: every watch.
  public var select: [String: Located<[String]>]
  /// Its place in `layers:` (0 for the first), for field paths in messages.
  public var index = 0

  /// A layer of `manifest` under the watches `select` matches (all when empty).
  public init(manifest: Located<String>, select: [String: Located<[String]>] = [:]) {
    self.manifest = manifest
    self.select = select
  }

  /// Whether this layer is under `watch`: each label of the selector is one of its values on the watch.
  public func selects(_ watch: FleetWatch) -> Bool {
    select.allSatisfy { label, values in watch.label(label).map(values.value.contains) ?? false }
  }
}

/// One watch of a fleet.
public struct FleetWatch: Sendable {
  /// Its name in the fleet (the key under `watches`), as `--watch NAME` selects it.
  public var name: Located<String>
  /// `device`: the spec that opens it (`sim:PATH`, `bridge:…`).
  public var device: Located<String>
  /// `manifest`: its own manifest, as written; `nil` when it has only the layers.
  public var manifest: Located<String>?
  /// `profile`: the watch's platform as declared (`default`, `npk`, `fit`, `fit-basic`, `fw`):
  /// the built-in label `profile`, and what `validate --fleet` checks capacities against. A
  /// watch of another platform is refused when opened (`FleetRunner`).
  public var profile: Located<String>?
  /// `labels`: label → value, as layers select them.
  public var labels: [String: Located<String>] = [:]

  /// A watch named `name`.
  public init(name: Located<String>, device: Located<String>, manifest: Located<String>?,
              profile: Located<String>? = nil, labels: [String: Located<String>] = [:]) {
    self.name = name
    self.device = device
    self.manifest = manifest
    self.profile = profile
    self.labels = labels
  }

  /// The value of `label` on this watch (`profile` is the declared platform).
  public func label(_ label: String) -> String? {
    label == FleetWatch.profileLabel ? profile?.value : labels[label]?.value
  }

  /// The built-in label: the watch's platform.
  public static let profileLabel = "profile"

  /// The watch's ID in MQTT topics (`FleetTopics.watchID(forSpec:)`).
  public var watchID: String { FleetTopics.watchID(forSpec: device.value) }
}

/// Reads a fleet file with the project's YAML reader and decoding rules (`YAMLReader`,
/// `DecodingContext`), checking what one fleet file can get wrong: unknown keys, types,
/// watch names, two watches with one device (specs compared in canonical form,
/// `DeviceRegistry.canonicalSpec`: `sim:a.json`, `sim:./a.json` and a symbolic link to it are one
/// watch), or, with a transport, one watch ID, and paths that do not name a readable file.
/// Every problem is a diagnostic with its position; nothing is read from a watch.
public enum FleetFileReader {
  static let rootKeys = ["version", "defaults", "layers", "transport", "site", "watches", "rollout"]
  static let watchKeys = ["device", "profile", "labels", "manifest"]
  static let layerKeys = ["manifest", "select"]

  /// Reads the fleet file at `path` (absolute, through the bounded reader `ManifestSource`),
  /// naming it `displayName` in diagnostics; its bytes, when read, for source excerpts. Device
  /// specs are put in canonical form by `registry`'s schemes in `environment` (see `decode`).
  public static func read(path: String, displayName: String, registry: DeviceRegistry = .simulated,
                          environment: [String: String] = ProcessInfo.processInfo.environment)
    -> (fleet: FleetFile?, diagnostics: [Diagnostic], bytes: [UInt8]) {
    let directory = (path as NSString).deletingLastPathComponent
    switch ManifestSource.file(path: path, displayName: displayName).read() {
    case .failure(let problem):
      return (nil, [problem.diagnostic], [])
    case .success(let bytes):
      let (fleet, diagnostics) = decode(bytes: bytes, file: displayName, directory: directory,
                                        registry: registry, environment: environment)
      return (fleet, diagnostics, bytes)
    }
  }

  /// Decodes `bytes` as the fleet file `file` whose relative paths resolve in `directory`. Two
  /// watches whose device specs have one canonical form (`registry.canonicalSpec`, `sim:` paths
  /// taken from `directory`, pairings found through `environment`) are an error at the second,
  /// however each is spelt; nothing is opened or created.
  public static func decode(bytes: [UInt8], file: String, directory: String, registry: DeviceRegistry = .simulated,
                            environment: [String: String] = ProcessInfo.processInfo.environment)
    -> (fleet: FleetFile?, diagnostics: [Diagnostic]) {
    let read = YAMLReader.read(bytes: bytes, file: file)
    var context = DecodingContext(file: file)
    context.diagnostics = read.diagnostics
    guard read.diagnostics.isEmpty || read.root != nil else { return (nil, read.diagnostics.sortedByPosition()) }
    guard let root = read.root, !root.isNull else {
      context.error(SourcePosition(file: file, line: 1, column: 1), "", "the fleet file is empty; it needs at least watches:")
      return (nil, context.diagnostics)
    }
    var fleet = FleetFile(file: file, directory: directory)
    guard let fields = context.mapping(root, path: "", keys: rootKeys) else { return (nil, context.diagnostics.sortedByPosition()) }
    if let node = fields["version"] {
      if let value = context.plainInteger(node), value == 1 {
        fleet.version = value
      } else {
        context.error(node.position, "version", "expected the fleet file format version 1")
      }
    }
    fleet.defaults = path(fields, "defaults", &context)
    if let defaults = fleet.defaults {
      fleet.layers = [FleetLayer(manifest: defaults)]
      if let layers = fields.entries["layers"] {
        context.error(layers.key.position, "layers",
          "a fleet file has defaults: or layers:, not both; defaults: FILE is the same as layers: [{manifest: FILE}], so move it into layers: as the first entry")
      }
    } else if let entry = fields.entries["layers"] {
      fleet.layers = layers(entry.value, &context)
    }
    if let node = fields["transport"], let text = context.text(node, path: "transport") {
      do {
        fleet.transport = Located(try MQTTAddress(parsing: text), at: node.position)
      } catch {
        context.error(node.position, "transport", error.description)
      }
    }
    if let node = fields["site"], let text = context.text(node, path: "site") {
      if let problem = FleetTopics.problem(with: text) {
        context.error(node.position, "site", "\"\(text)\" \(problem)")
      } else {
        fleet.site = Located(text, at: node.position)
      }
    }
    if fields["transport"] != nil, fields["site"] == nil {
      context.error(fields.entries["transport"]!.key.position, "site",
                    "a fleet with a transport needs site: (the site's part of the topics, e.g. site: ward-a)")
    }
    if fields["site"] != nil, fields["transport"] == nil {
      context.warning(fields.entries["site"]!.key.position, "site", "site is used only with transport: (agents over MQTT); it is ignored")
    }
    if let entry = fields.entries["watches"] {
      fleet.watches = watches(entry.value, hasDefaults: !fleet.layers.isEmpty, &context)
      checkSelectors(fleet, &context)
    } else {
      context.error(root.position, "watches", "a fleet file needs watches: (each with a device and a manifest)")
    }
    if let entry = fields.entries["rollout"],
       let policy = RolloutPolicy.decode(entry.value, watches: fleet.watches.map(\.name.value), &context) {
      fleet.rollout = Located(policy, at: entry.key.position)
    }
    // A spec of no known scheme is an error here, at its place, not when the watch is opened.
    // Over MQTT the agents open the watches, with schemes of their own (an app's), so there
    // only the watch ID counts.
    if fleet.transport == nil {
      fleet.watches = fleet.watches.filter { watch in
        do throws(DeviceError) {
          _ = try registry.resolve(watch.device.value, source: "'\(watch.device.value)'")
          return true
        } catch {
          context.error(watch.device.position, "watches.\(watch.name.value).device", error.message)
          return false
        }
      }
    }
    let devices = DeviceOpenContext(environment: environment, currentDirectory: directory, mayCreate: false)
    checkUnique(fleet, byWatchID: fleet.transport != nil, canonical: { registry.canonicalSpec($0, context: devices) }, &context)
    checkFiles(fleet, &context)
    let diagnostics = context.diagnostics.sortedByPosition()
    return (diagnostics.hasErrors ? nil : fleet, diagnostics)
  }

  private static func path(_ fields: MappingFields, _ key: String, _ context: inout DecodingContext) -> Located<String>? {
    guard let entry = fields.entries[key],
          let node = context.present(entry.value, path: fields.path(key), hint: "remove the key, or give a file path"),
          let text = context.text(node, path: fields.path(key)) else { return nil }
    guard !text.trimmingCharacters(in: .whitespaces).isEmpty else {
      context.error(node.position, fields.path(key), "is empty; give a file path")
      return nil
    }
    return Located(text, at: node.position)
  }

  private static func watches(_ node: YAMLNode, hasDefaults: Bool, _ context: inout DecodingContext) -> [FleetWatch] {
    guard context.hasStandardTag(node, path: "watches", allowing: ["map"]) else { return [] }
    guard case .mapping(let entries) = node.content else {
      context.error(node.position, "watches", "expected a mapping of watch names to {device, manifest}, found \(node.kindDescription)")
      return []
    }
    if entries.isEmpty { context.error(node.position, "watches", "lists no watches") }
    var result: [FleetWatch] = []
    for entry in entries {
      guard let name = context.text(entry.key, path: "watches") else { continue }
      let field = "watches.\(name)"
      if let problem = nameProblem(name) {
        context.error(entry.key.position, field, "the watch name \"\(name)\" \(problem)")
        continue
      }
      guard let fields = context.mapping(entry.value, path: field, keys: watchKeys) else { continue }
      guard let device = path(fields, "device", &context) else {
        if fields["device"] == nil {
          context.error(entry.key.position, field, "device is required (e.g. device: bridge:ward-a/AA:BB:CC:DD:EE:12 or sim:watches/\(name).json)")
        }
        continue
      }
      let manifest = path(fields, "manifest", &context)
      if fields["manifest"] == nil, !hasDefaults {
        context.error(entry.key.position, field, "manifest is required when the fleet has no defaults or layers (e.g. manifest: residents/\(name).yaml)")
        continue
      }
      if fields["manifest"] != nil, manifest == nil { continue }
      var watch = FleetWatch(name: Located(name, at: entry.key.position), device: device, manifest: manifest)
      if let node = fields["profile"], let text = context.text(node, path: fields.path("profile")) {
        if PlatformTable.named(text) != nil {
          watch.profile = Located(text, at: node.position)
        } else {
          context.error(node.position, fields.path("profile"), unknownProfile(text))
        }
      }
      if let node = fields["labels"] { watch.labels = labels(node, path: fields.path("labels"), &context) }
      result.append(watch)
    }
    return result
  }

  /// The message for a profile name tsapply does not know.
  static func unknownProfile(_ text: String) -> String {
    let names = PlatformTable.all.map(\.profile)
    var message = "unknown profile \"\(text)\"; expected one of \(names.joined(separator: ", "))"
    if let meant = Suggestion.closest(to: text, in: names) { message += "; did you mean \"\(meant)\"?" }
    return message
  }

  /// `layers:`: a list of `{manifest, select}`.
  private static func layers(_ node: YAMLNode, _ context: inout DecodingContext) -> [FleetLayer] {
    guard let items = context.sequence(node, path: "layers",
                                       expected: "layers, e.g. - {manifest: wards/common.yaml} or - {manifest: models/fw.yaml, select: {profile: fw}}") else { return [] }
    if items.isEmpty { context.error(node.position, "layers", "lists no layers; give at least one {manifest: FILE}, or remove the key") }
    var result: [FleetLayer] = []
    for (index, item) in items.enumerated() {
      let field = "layers[\(index)]"
      guard let fields = context.mapping(item, path: field, keys: layerKeys) else { continue }
      guard let manifest = path(fields, "manifest", &context) else {
        if fields["manifest"] == nil { context.error(item.position, field, "manifest is required (e.g. manifest: wards/common.yaml)") }
        continue
      }
      var layer = FleetLayer(manifest: manifest)
      layer.index = index
      // A selector with errors leaves the layer in (the fleet is refused anyway), so no error
      // that follows from a missing layer is reported beside it.
      if let select = fields["select"] { layer.select = selector(select, path: fields.path("select"), &context) ?? [:] }
      result.append(layer)
    }
    return result
  }

  /// `select:`: label → a value or a list of values.
  private static func selector(_ node: YAMLNode, path: String, _ context: inout DecodingContext) -> [String: Located<[String]>]? {
    guard context.hasStandardTag(node, path: path, allowing: ["map"]) else { return nil }
    guard case .mapping(let entries) = node.content else {
      context.error(node.position, path, "expected labels and their values, e.g. select: {ward: A} or select: {profile: [fit, fw]}, found \(node.kindDescription)")
      return nil
    }
    var result: [String: Located<[String]>] = [:]
    var valid = true
    for entry in entries {
      guard let label = context.text(entry.key, path: path) else { valid = false; continue }
      let field = DecodingContext.join(path, label)
      if let problem = labelProblem(label) {
        context.error(entry.key.position, field, "the label \"\(label)\" \(problem)")
        valid = false
        continue
      }
      var values: [Located<String>] = []
      if case .sequence(let items) = entry.value.content {
        if items.isEmpty { context.error(entry.value.position, field, "lists no values; give at least one (select: {\(label): [A, B]})") }
        for item in items { if let text = context.text(item, path: field) { values.append(Located(text, at: item.position)) } }
      } else if let text = context.text(entry.value, path: field) {
        values.append(Located(text, at: entry.value.position))
      }
      if label == FleetWatch.profileLabel {
        for value in values where PlatformTable.named(value.value) == nil {
          context.error(value.position, field, unknownProfile(value.value))
          valid = false
        }
      }
      guard !values.isEmpty else { valid = false; continue }
      result[label] = Located(values.map(\.value), at: entry.key.position)
    }
    return valid ? result : nil
  }

  /// A watch's `labels:`: label → value.
  private static func labels(_ node: YAMLNode, path: String, _ context: inout DecodingContext) -> [String: Located<String>] {
    guard context.hasStandardTag(node, path: path, allowing: ["map"]) else { return [:] }
    guard case .mapping(let entries) = node.content else {
      context.error(node.position, path, "expected labels and their values, e.g. labels: {ward: A, floor: \"2\"}, found \(node.kindDescription)")
      return [:]
    }
    var result: [String: Located<String>] = [:]
    for entry in entries {
      guard let label = context.text(entry.key, path: path) else { continue }
      let field = DecodingContext.join(path, label)
      if label == FleetWatch.profileLabel {
        context.error(entry.key.position, field, "profile is the watch's platform, a built-in label; write it beside device (profile: fw), not under labels")
        continue
      }
      if let problem = labelProblem(label) {
        context.error(entry.key.position, field, "the label \"\(label)\" \(problem)")
        continue
      }
      guard let text = context.text(entry.value, path: field) else { continue }
      result[label] = Located(text, at: entry.value.position)
    }
    return result
  }

  /// Why `label` cannot name a label: as a watch name.
  static func labelProblem(_ label: String) -> String? { nameProblem(label) }

  /// A selector's label that no watch has is a warning (a typo selects nothing); a layer that
  /// selects by profile over a watch that declares none is an error at the watch (its layers
  /// would depend on a platform nobody wrote down).
  private static func checkSelectors(_ fleet: FleetFile, _ context: inout DecodingContext) {
    var known = Set([FleetWatch.profileLabel])
    for watch in fleet.watches { known.formUnion(watch.labels.keys) }
    for layer in fleet.layers {
      for (label, values) in layer.select.sorted(by: { $0.key < $1.key }) where !known.contains(label) {
        var message = "no watch has the label \"\(label)\", so this layer (\(layer.manifest.value)) is under no watch"
        if let meant = Suggestion.closest(to: label, in: known.sorted()) { message += "; did you mean \"\(meant)\"?" }
        context.warning(values.position, "layers[\(layer.index)].select.\(label)", message)
      }
    }
    guard let byProfile = fleet.layers.first(where: { $0.select[FleetWatch.profileLabel] != nil }) else { return }
    for watch in fleet.watches where watch.profile == nil {
      let position = byProfile.manifest.position
      context.error(watch.name.position, "watches.\(watch.name.value).profile",
        "the layer \(byProfile.manifest.value) (line \(position.line)) is chosen by profile, and this watch declares none; write its platform beside device (profile: \(PlatformTable.all.map(\.profile).joined(separator: " | ")))")
    }
  }

  /// Why `name` cannot name a watch (names are selected with `--watch` and shown in tables):
  /// letters, digits, `.`, `_` and `-`, starting with a letter or digit, at most 64.
  static func nameProblem(_ name: String) -> String? {
    let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
    if name.isEmpty { return "is empty" }
    if name.count > 64 { return "is longer than 64 characters" }
    guard name.allSatisfy({ allowed.contains($0) }), let first = name.first, first.isLetter || first.isNumber else {
      return "may hold only letters, digits, '.', '_' and '-', starting with a letter or digit"
    }
    return nil
  }

  /// Two watches with one device (specs equal in `canonical` form), or (over MQTT) one watch
  /// ID, are errors at the second; when the two are spelt differently, the message names the
  /// watch both reach.
  private static func checkUnique(_ fleet: FleetFile, byWatchID: Bool, canonical: (String) -> String,
                                  _ context: inout DecodingContext) {
    var specs: [String: FleetWatch] = [:]
    var ids: [String: FleetWatch] = [:]
    for watch in fleet.watches {
      let field = "watches.\(watch.name.value).device"
      let device = canonical(watch.device.value)
      if let first = specs[device] {
        let spelling = first.device.value == watch.device.value
          ? "" : ", written there as \(first.device.value): both name the watch \(device)"
        context.error(watch.device.position, field,
                      "the device \(watch.device.value) is already used by the watch \(first.name.value) (line \(first.device.position.line), column \(first.device.position.column)\(spelling)); each watch needs its own device")
        continue
      }
      specs[device] = watch
      guard byWatchID else { continue }
      let id = watch.watchID
      if let problem = FleetTopics.problem(with: id) {
        context.error(watch.device.position, field, "the watch ID \"\(id)\" taken from this device spec \(problem)")
      } else if let first = ids[id] {
        context.error(watch.device.position, field,
                      "the device ID \(id) is already used by the watch \(first.name.value) (line \(first.device.position.line), column \(first.device.position.column)); over MQTT a watch is known by its device ID, so each must be unique")
      } else {
        ids[id] = watch
      }
    }
  }

  /// Every layer and every `manifest` must name readable files.
  private static func checkFiles(_ fleet: FleetFile, _ context: inout DecodingContext) {
    var written: [(Located<String>, String)] = []
    if let defaults = fleet.defaults {
      written.append((defaults, "defaults"))
    } else {
      for layer in fleet.layers { written.append((layer.manifest, "layers[\(layer.index)].manifest")) }
    }
    for watch in fleet.watches {
      if let manifest = watch.manifest { written.append((manifest, "watches.\(watch.name.value).manifest")) }
    }
    for (path, field) in written {
      if let problem = ManifestSource.file(path: fleet.absolutePath(path.value), displayName: fleet.displayPath(path.value)).readProblem() {
        context.error(path.position, field, problem.description)
      }
    }
  }
}
