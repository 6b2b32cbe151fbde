import TSModel

/// Where and how a device spec is opened: the environment, the working directory, and whether
/// the spec is the default one (no `--device`, no `TSAPPLY_DEVICE`).
public struct DeviceOpenContext: Sendable {
  /// Environment variables (`TSAPPLY_SIM_LATENCY`, `TSAPPLY_SIM_FAULT`, `XDG_CONFIG_HOME`, …).
  public var environment: [String: String]
  /// Absolute working directory; relative paths in specs are resolved against it.
  public var currentDirectory: String
  /// True when the spec is the registry's default: only then may a scheme create the watch on
  /// first use (a mistyped spec never creates a watch).
  public var isDefault: Bool
  /// False for commands that are read-only by construction (`tsapply drift`): even the default
  /// watch is then never created.
  public var mayCreate: Bool

  /// A context; `isDefault` says whether the spec came from no option at all, `mayCreate`
  /// whether the default watch may be created on first use.
  public init(environment: [String: String], currentDirectory: String, isDefault: Bool = false, mayCreate: Bool = true) {
    self.environment = environment
    self.currentDirectory = currentDirectory
    self.isDefault = isDefault
    self.mayCreate = mayCreate
  }
}

/// A device a scheme opened, with what the user should be told about opening it.
public struct OpenedDevice: Sendable {
  /// The device, ready for calls.
  public var device: any Device
  /// The `--device` value that names this watch in advice ("run 'tsapply plan --device …'"),
  /// or `nil` for the default watch, which needs no option.
  public var adviceSpec: String?
  /// Things to say once on standard error, e.g. that the default simulated watch was created
  /// on first use, with its path.
  public var notices: [String]

  /// A device with its advice spec (`nil` for the default watch) and notices.
  public init(device: any Device, adviceSpec: String?, notices: [String] = []) {
    self.device = device
    self.adviceSpec = adviceSpec
    self.notices = notices
  }
}

/// One kind of device spec, `NAME:LOCATION`: `sim:PATH` (the simulated watch) or
/// `bridge:NAME[/WATCH-ID]` (a watch behind a companion-app bridge). Schemes live with their
/// devices; `DeviceRegistry` only dispatches on the name, so adding a scheme never changes
/// TSDevice.
public protocol DeviceScheme: Sendable {
  /// The word before the colon, e.g. `sim`.
  var name: String { get }
  /// How a spec of this scheme is written, for help and errors, e.g.
  /// `sim:PATH, the path of a simulated watch's state file`.
  var form: String { get }
  /// One example spec, e.g. `sim:.tsapply/device.json`.
  var example: String { get }
  /// One line saying what the scheme reaches, for help.
  var summary: String { get }
  /// Opens the device `location` names (the spec after `name:`).
  /// - Throws: `DeviceError` saying what is wrong with the location or why the device cannot be reached.
  func open(_ location: String, spec: String, context: DeviceOpenContext) async throws(DeviceError) -> OpenedDevice
  /// The canonical form of the spec `location` belongs to, worked out without reaching the
  /// device or creating anything: two specs that name one watch (`sim:a.json`, `sim:./a.json`,
  /// a symbolic link to it) give one canonical spec, so a fleet file can refuse the same watch
  /// listed twice before any watch is touched. Where it can be known, it is the identity the
  /// opened device will have (`Device.identity`). `nil` when the location cannot be put in
  /// canonical form without the device; callers then compare the spec as written. The default
  /// is `nil`.
  func canonicalSpec(_ location: String, context: DeviceOpenContext) -> String?
}

extension DeviceScheme {
  /// No canonical form: specs of this scheme are compared as written.
  public func canonicalSpec(_ location: String, context: DeviceOpenContext) -> String? { nil }
}

/// The schemes a front-end knows, and the rule that picks the spec: `--device`, else
/// `TSAPPLY_DEVICE`, else `defaultSpec`.
public struct DeviceRegistry: Sendable {
  /// Environment variable naming the device when `--device` is not given.
  public static let environmentVariable = "TSAPPLY_DEVICE"

  /// Known schemes, in the order help lists them.
  public var schemes: [any DeviceScheme]
  /// The spec used when none is given: `sim:.tsapply/device.json`.
  public var defaultSpec: String

  /// The simulated watch's scheme alone (`sim:`), with the default `sim:.tsapply/device.json`:
  /// for callers that know no other scheme.
  public static let simulated = DeviceRegistry(schemes: [SimulatorScheme()],
                                               defaultSpec: DeviceSelector.simulatorScheme + DeviceSelector.defaultPath)

  /// A registry of `schemes`; `defaultSpec` is used when no spec is given.
  public init(schemes: [any DeviceScheme], defaultSpec: String) {
    self.schemes = schemes
    self.defaultSpec = defaultSpec
  }

  /// The spec a command uses: `spec` (from `--device`), else a non-empty `TSAPPLY_DEVICE`,
  /// else `defaultSpec`; and whether it is the default.
  public func chosenSpec(_ spec: String?, environment: [String: String]) -> (spec: String, isDefault: Bool, source: String) {
    if let spec { return (spec, false, "--device '\(spec)'") }
    if let value = environment[Self.environmentVariable], !value.isEmpty {
      return (value, false, "\(Self.environmentVariable)='\(value)'")
    }
    return (defaultSpec, true, "the default device")
  }

  /// Opens the device `spec` names (see `chosenSpec`); `mayCreate: false` never creates one.
  /// - Throws: `DeviceError` (simulator domain, 1004) for a spec of no known scheme, naming
  ///   where it came from, the forms expected and, when likely, the spec meant; otherwise the
  ///   scheme's error.
  public func open(_ spec: String?, environment: [String: String], currentDirectory: String,
                   mayCreate: Bool = true) async throws(DeviceError) -> OpenedDevice {
    let chosen = chosenSpec(spec, environment: environment)
    let context = DeviceOpenContext(environment: environment, currentDirectory: currentDirectory,
                                    isDefault: chosen.isDefault, mayCreate: mayCreate)
    let (scheme, location) = try resolve(chosen.spec, source: chosen.source)
    return try await scheme.open(location, spec: chosen.spec, context: context)
  }

  /// The canonical form of `spec` (`DeviceScheme.canonicalSpec`), relative paths taken from
  /// `context.currentDirectory`: equal for two specs that name one watch, wherever the scheme
  /// can tell without reaching it; `spec` itself when its scheme is unknown or has no canonical
  /// form for it.
  public func canonicalSpec(_ spec: String, context: DeviceOpenContext) -> String {
    guard let resolved = try? resolve(spec, source: spec) else { return spec }
    return resolved.0.canonicalSpec(resolved.1, context: context) ?? spec
  }

  /// The scheme of `spec` and the location after its colon.
  /// - Throws: as `open`, for an unknown scheme or an empty location.
  public func resolve(_ spec: String, source: String) throws(DeviceError) -> (any DeviceScheme, String) {
    let name = spec.prefix { $0 != ":" }
    if name.count < spec.count, let scheme = schemes.first(where: { $0.name == name }) {
      let location = String(spec.dropFirst(name.count + 1))
      guard !location.isEmpty else {
        throw .simulator(.sdkConfigError, "unknown device \(source): expected \(scheme.form), with the part after '\(scheme.name):' (e.g. \(scheme.example))")
      }
      return (scheme, location)
    }
    var message = "unknown device \(source): expected " + schemes.map(\.form).joined(separator: " or ")
    if let meant = meant(spec) { message += "; did you mean '\(meant)'?" }
    throw .simulator(.sdkConfigError, message)
  }

  /// The spec probably meant: a known scheme in other letter case (`SIM:x`), or, for a bare
  /// path (no scheme before the first `/`), the first scheme that takes paths (`sim:`).
  func meant(_ spec: String) -> String? {
    let name = spec.prefix { $0 != ":" && $0 != "/" }
    if name.count < spec.count, spec.dropFirst(name.count).hasPrefix(":"),
       let scheme = schemes.first(where: { $0.name.lowercased() == name.lowercased() }), spec.count > name.count + 1 {
      return scheme.name + ":" + spec.dropFirst(name.count + 1)
    }
    if name.count == spec.count || spec.dropFirst(name.count).hasPrefix("/") {
      return schemes.first.map { $0.name + ":" + spec }
    }
    return nil
  }
}
