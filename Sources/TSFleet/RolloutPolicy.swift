import Foundation
import TSManifest
import TSModel

/// How `apply --fleet` releases a change over a fleet's watches (docs/fleet.md "Staged
/// rollouts"): the fleet file's `rollout:` key, or `--canary`, `--batch`, `--pause` and
/// `--max-failures` for one run.
///
/// ```yaml
/// rollout:
///   canary: 2          # watches first: a count, a percentage ("5%"), or names
///   batch: 25%         # then waves of this size (count or percentage)
///   pause: 10m         # between waves; "manual" waits for `apply --fleet FILE --continue`
///   max_failures: 1    # abort when more watches than this failed (count or percentage)
/// ```
///
/// The watches are split into waves (`waves(of:)`), in fleet-file order: the canary, then
/// batches of `batch` until every watch has a wave. After each wave the failures so far are
/// compared with `maxFailures` (`isExceeded(failed:attempted:)`); more than it aborts the
/// rollout, and no later wave starts. Percentages are of the watches in the rollout (the
/// selection), rounded up for sizes (a wave has at least one watch) and of the watches attempted
/// so far for `max_failures` (rounded down), as AWS IoT Jobs' abort criteria count them.
public struct RolloutPolicy: Sendable, Equatable {
  /// A number of watches: a count, or a percentage of the watches in the rollout.
  public enum Size: Sendable, Equatable, CustomStringConvertible {
    /// This many watches.
    case count(Int)
    /// This percentage (1–100) of the watches.
    case percent(Int)

    /// The size as written: `2`, `25%`.
    public var description: String {
      switch self {
      case .count(let count): "\(count)"
      case .percent(let percent): "\(percent)%"
      }
    }

    /// The size `text` spells (`2`, `25%`), or why it is not one. `zero` says whether 0 (or 0%)
    /// is allowed (it is for `max_failures`, not for a wave).
    public static func parse(_ text: String, zero: Bool) -> Result<Size, RolloutProblem> {
      let trimmed = text.trimmingCharacters(in: .whitespaces)
      let isPercent = trimmed.hasSuffix("%")
      let digits = isPercent ? String(trimmed.dropLast()) : trimmed
      let smallest = zero ? 0 : 1
      guard !digits.isEmpty, digits.count <= 7, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(digits) else {
        return .failure(RolloutProblem("expected a number of watches (e.g. 2) or a percentage of them (e.g. 25%), found \"\(text)\""))
      }
      if isPercent {
        guard value >= smallest, value <= 100 else {
          return .failure(RolloutProblem("a percentage must be from \(smallest)% to 100%, found \"\(text)\""))
        }
        return .success(.percent(value))
      }
      guard value >= smallest else { return .failure(RolloutProblem("must be at least \(smallest), found \"\(text)\"")) }
      return .success(.count(value))
    }

    /// How many of `total` watches a wave of this size takes: a percentage rounded up, at
    /// least 1 when `total` has any, never more than `total`.
    public func watches(of total: Int) -> Int {
      guard total > 0 else { return 0 }
      switch self {
      case .count(let count): return min(max(count, 1), total)
      case .percent(let percent): return min(max((total * percent + 99) / 100, 1), total)
      }
    }
  }

  /// The first wave: a size, or the watches named.
  public enum Canary: Sendable, Equatable, CustomStringConvertible {
    /// The first watches of the fleet, this many.
    case size(Size)
    /// These watches (names under `watches:`), in the fleet's order.
    case names([String])

    public var description: String {
      switch self {
      case .size(let size): size.description
      case .names(let names): names.joined(separator: ", ")
      }
    }
  }

  /// What happens between waves.
  public enum Pause: Sendable, Equatable, CustomStringConvertible {
    /// Wait this long, then start the next wave.
    case duration(Duration)
    /// Stop; `apply --fleet FILE --continue` starts the next wave.
    case manual

    public var description: String {
      switch self {
      case .duration(let duration): DurationText.text(duration)
      case .manual: "manual"
      }
    }

    /// The pause `text` spells (`10m`, `0s`, `manual`), or why it is not one.
    public static func parse(_ text: String) -> Result<Pause, RolloutProblem> {
      if text == "manual" { return .success(.manual) }
      guard let duration = DurationText.parse(text) else {
        return .failure(RolloutProblem("expected a duration such as 0s, 30s, 10m or 1h (at most 168h), or manual, found \"\(text)\""))
      }
      return .success(.duration(duration))
    }
  }

  /// The first wave; `nil` for none (the first batch is the first wave).
  public var canary: Canary?
  /// The size of every later wave; `nil` for one wave of all the rest.
  public var batch: Size?
  /// Between waves (default: none, `0s`).
  public var pause: Pause
  /// Most failed watches the rollout goes on with (default 0: any failure aborts).
  public var maxFailures: Size

  /// A policy of these parts.
  public init(canary: Canary? = nil, batch: Size? = nil, pause: Pause = .duration(.zero), maxFailures: Size = .count(0)) {
    self.canary = canary
    self.batch = batch
    self.pause = pause
    self.maxFailures = maxFailures
  }

  /// `names` (the watches of the rollout, in fleet order) split into waves: the canary's
  /// watches first (named ones in fleet order; a name not in `names` is skipped), then batches
  /// of `batch` (all the rest in one wave without it). Every name is in exactly one wave; no
  /// wave is empty.
  public func waves(of names: [String]) -> [[String]] {
    var rest = names
    var waves: [[String]] = []
    switch canary {
    case .size(let size)?:
      let count = size.watches(of: names.count)
      waves.append(Array(rest.prefix(count)))
      rest.removeFirst(count)
    case .names(let chosen)?:
      let wave = names.filter { chosen.contains($0) }
      if !wave.isEmpty { waves.append(wave) }
      rest.removeAll { chosen.contains($0) }
    case nil:
      break
    }
    let step = batch?.watches(of: names.count) ?? rest.count
    while !rest.isEmpty {
      let count = min(max(step, 1), rest.count)
      waves.append(Array(rest.prefix(count)))
      rest.removeFirst(count)
    }
    return waves
  }

  /// Whether `failed` watches of the `attempted` so far are more than `maxFailures` allows
  /// (a percentage counts against `attempted`, rounded down): the rollout aborts.
  public func isExceeded(failed: Int, attempted: Int) -> Bool {
    switch maxFailures {
    case .count(let count): failed > count
    case .percent(let percent): failed * 100 > percent * attempted
    }
  }

  /// The policy in one line, as the fleet file spells it: `canary 2, batch 25%, pause 10m,
  /// max_failures 0`.
  public var summary: String {
    var parts: [String] = []
    if let canary { parts.append("canary \(canary)") }
    parts.append("batch \(batch?.description ?? "all")")
    parts.append("pause \(pause)")
    parts.append("max_failures \(maxFailures)")
    return parts.joined(separator: ", ")
  }
}

extension RolloutPolicy {
  static let keys = ["canary", "batch", "pause", "max_failures"]

  /// Decodes the fleet file's `rollout:` mapping; every problem is a diagnostic at its place,
  /// a canary name that is not one of `watches` too.
  static func decode(_ node: YAMLNode, watches: [String], _ context: inout DecodingContext) -> RolloutPolicy? {
    guard let fields = context.mapping(node, path: "rollout", keys: keys) else { return nil }
    var policy = RolloutPolicy()
    var ok = true
    func size(_ key: String, zero: Bool) -> Size? {
      guard let node = fields[key] else { return nil }
      let text: String? = context.plainInteger(node).map(String.init) ?? context.text(node, path: "rollout.\(key)")
      guard let text else { ok = false; return nil }
      switch Size.parse(text, zero: zero) {
      case .success(let size): return size
      case .failure(let problem):
        context.error(node.position, "rollout.\(key)", problem.description)
        ok = false
        return nil
      }
    }
    if let node = fields["canary"] {
      if case .sequence(let items) = node.content {
        var names: [String] = []
        for item in items {
          guard let name = context.text(item, path: "rollout.canary") else { ok = false; continue }
          if !watches.contains(name) {
            var message = "the canary \"\(name)\" is not a watch of this fleet"
            if let meant = Suggestion.closest(to: name, in: watches) { message += "; did you mean \"\(meant)\"?" }
            context.error(item.position, "rollout.canary", message)
            ok = false
          }
          names.append(name)
        }
        if names.isEmpty {
          context.error(node.position, "rollout.canary", "lists no watches; give a count (2), a percentage (5%) or watch names")
          ok = false
        }
        policy.canary = .names(names)
      } else if let size = size("canary", zero: false) {
        policy.canary = .size(size)
      }
    }
    policy.batch = size("batch", zero: false)
    if let node = fields["pause"], let text = context.text(node, path: "rollout.pause") {
      switch Pause.parse(text) {
      case .success(let pause): policy.pause = pause
      case .failure(let problem):
        context.error(node.position, "rollout.pause", problem.description)
        ok = false
      }
    } else if fields["pause"] != nil {
      ok = false
    }
    if let maxFailures = size("max_failures", zero: true) { policy.maxFailures = maxFailures }
    return ok ? policy : nil
  }
}

/// Why a rollout size or pause cannot be read, in words (`expected a number of watches …`).
public struct RolloutProblem: Error, Sendable, CustomStringConvertible {
  /// The words.
  public var description: String
  /// A problem saying `description`.
  public init(_ description: String) { self.description = description }
}
