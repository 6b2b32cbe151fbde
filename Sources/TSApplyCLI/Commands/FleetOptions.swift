import TSEngine

/// `--fleet FILE`, `--watch NAME`, `-parallelism=N`: the options with which `plan`, `apply`,
/// `drift` and `status` run over the watches of a fleet file (docs/fleet.md).
package struct FleetOptions: Sendable {
  /// Watches handled at once by default (Terraform's `-parallelism` default); the fleet runner's
  /// own default is the same number (a test says so).
  package static let defaultParallelism = 10
  static let fleetSpec = OptionSpec(["--fleet", "-fleet"], value: "FILE",
                                    help: "Run over the watches of the fleet file FILE (fleet.yaml; docs/fleet.md).")
  package static let specs: [OptionSpec] = [
    fleetSpec,
    OptionSpec(["--watch", "-watch"], value: "NAME", help: "With --fleet, only the watch NAME (repeatable)."),
    OptionSpec(["--parallelism", "-parallelism"], value: "N", help: "With --fleet, handle at most N watches at once (default 10)."),
  ]

  /// Options of the commands whose fleet output is a review (`plan`, `apply`, `drift`).
  package static let reviewSpecs: [OptionSpec] = [
    OptionSpec(["--summary", "-summary"], help: "With --fleet, one line per group of watches with the same outcome, and the totals."),
    OptionSpec(["--only", "-only"], value: "LIST",
               help: "With --fleet, show only watches that are failed, changed, drift or pending (comma-separated)."),
  ]

  /// The words `--only` takes (`FleetFilter.words` in TSFleet, which a test keeps equal).
  package static let onlyWords = ["failed", "changed", "drift", "pending"]

  /// Options only `apply --fleet` takes.
  static let applySpecs: [OptionSpec] = [
    OptionSpec(["--json", "-json"], help: "With --fleet and --auto-approve, print one JSON report with a result per watch."),
    OptionSpec(["--wait", "-wait"], value: "DURATION",
               help: "With --fleet over MQTT, wait up to DURATION for the agents to report (default 5m; per wave in a rollout)."),
  ] + RolloutOptions.specs

  /// The fleet file, when `--fleet` was given.
  package var file: String?
  /// `--watch` names, in order.
  package var watches: [String]
  /// `-parallelism`.
  package var parallelism: Int
  /// `--json` (for `apply`, only with `--fleet`).
  package var json: Bool
  /// `--wait`: how long `apply` waits for the agents of a fleet over MQTT.
  package var wait: Duration
  /// `--canary`, `--batch`, `--pause`, `--max-failures`, `--continue`, `--abort` (`apply` only).
  package var rollout: RolloutOptions
  /// `--summary`: one line per group of watches instead of their plans and the table.
  package var summary: Bool
  /// `--only`: the words given (each one of `onlyWords`), or `nil` for every watch.
  package var only: [String]?

  /// Reads the options; with `--fleet`, a manifest argument and `--device` are refused.
  package init(_ arguments: ParsedArguments, command: String) throws(UsageError) {
    file = arguments.value("--fleet")
    watches = arguments.values["--watch"] ?? []
    parallelism = Self.defaultParallelism
    json = arguments.has("--json")
    wait = try arguments.value("--wait").map { (text) throws(UsageError) in try DurationArgument.value(text, option: "--wait") }
      ?? .seconds(300)
    rollout = RolloutOptions(arguments)
    summary = arguments.has("--summary")
    only = try arguments.value("--only").map { (text) throws(UsageError) in
      let words = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
      if let unknown = words.first(where: { !Self.onlyWords.contains($0) }) {
        throw UsageError("--only expects a comma-separated list of \(Self.onlyWords.joined(separator: ", ")), got '\(unknown)' in '\(text)'")
      }
      return words
    }
    if let text = arguments.value("--parallelism") {
      guard let value = Int(text), value >= 1, value <= 1000 else {
        throw UsageError("-parallelism expects a number of watches from 1 to 1000, got '\(text)'")
      }
      parallelism = value
    }
    guard file != nil else {
      if let option = rollout.given.first { throw UsageError("\(option) only matters with --fleet FILE (a staged rollout over its watches)") }
      if !watches.isEmpty || arguments.value("--parallelism") != nil || arguments.value("--wait") != nil || summary || only != nil {
        throw UsageError("--watch, -parallelism, --wait, --summary and --only only matter with --fleet FILE")
      }
      if command == "apply", json { throw UsageError("apply prints JSON only with --fleet (one report for every watch)") }
      return
    }
    try rollout.check(watches: watches)
    if command == "apply", json, !arguments.has("--auto-approve") {
      throw UsageError("apply --fleet --json needs --auto-approve (a JSON report cannot ask for confirmation)")
    }
    if !arguments.positionals.isEmpty {
      throw UsageError("with --fleet, the manifests come from the fleet file; remove '\(arguments.positionals.joined(separator: " "))'")
    }
    if arguments.value(DeviceOption.spec.name) != nil {
      throw UsageError("with --fleet, each watch's device comes from the fleet file; remove --device")
    }
  }
}


/// `apply --fleet`'s staged-rollout options (docs/fleet.md "Staged rollouts"), as written: the
/// fleet commands read them into a policy over the fleet file's `rollout:`.
package struct RolloutOptions: Sendable {
  static let specs: [OptionSpec] = [
    OptionSpec(["--canary", "-canary"], value: "N|P%|NAMES",
               help: "With --fleet, apply first to N watches, P% of them, or the watches NAMES (comma-separated), then the rest in waves."),
    OptionSpec(["--batch", "-batch"], value: "N|P%", help: "With --fleet, apply the rest in waves of N watches or P% of them."),
    OptionSpec(["--pause", "-pause"], value: "DURATION|manual",
               help: "With --fleet, wait DURATION between waves, or stop after each (manual) until --continue."),
    OptionSpec(["--max-failures", "-max-failures"], value: "N|P%",
               help: "With --fleet, abort the rollout when more than N watches (P% of those tried) failed (default 0)."),
    OptionSpec(["--continue", "-continue"], help: "With --fleet, go on with the fleet's paused rollout."),
    OptionSpec(["--abort", "-abort"], help: "With --fleet, abort the fleet's paused rollout (no later wave starts)."),
  ]

  /// `--canary`, as written.
  package var canary: String?
  /// `--batch`, as written.
  package var batch: String?
  /// `--pause`, as written.
  package var pause: String?
  /// `--max-failures`, as written.
  package var maxFailures: String?
  /// `--continue`.
  package var resume: Bool
  /// `--abort`.
  package var abort: Bool

  init(_ arguments: ParsedArguments) {
    canary = arguments.value("--canary")
    batch = arguments.value("--batch")
    pause = arguments.value("--pause")
    maxFailures = arguments.value("--max-failures")
    resume = arguments.has("--continue")
    abort = arguments.has("--abort")
  }

  /// The rollout options given, by name.
  var given: [String] {
    [("--canary", canary != nil), ("--batch", batch != nil), ("--pause", pause != nil), ("--max-failures", maxFailures != nil),
     ("--continue", resume), ("--abort", abort)].filter(\.1).map(\.0)
  }

  /// Whether a policy option (not `--continue` or `--abort`) was given.
  package var hasPolicy: Bool { canary != nil || batch != nil || pause != nil || maxFailures != nil }

  func check(watches: [String]) throws(UsageError) {
    if resume && abort { throw UsageError("--continue and --abort exclude each other") }
    if resume || abort {
      let word = resume ? "--continue" : "--abort"
      if hasPolicy { throw UsageError("\(word) acts on the rollout as it was started; remove \(given.filter { $0 != word }.joined(separator: ", "))") }
      if !watches.isEmpty { throw UsageError("\(word) acts on every watch of the paused rollout; remove --watch") }
    }
  }
}
