import TSModel
import TSPlan

/// Which watches a fleet report shows (`--only failed,changed,drift,pending`); the totals line
/// still counts every watch.
public struct FleetFilter: OptionSet, Sendable, Hashable {
  public let rawValue: Int
  public init(rawValue: Int) { self.rawValue = rawValue }

  /// Failed, refused (an unsafe plan), or still retrying when the wait ended.
  public static let failed = FleetFilter(rawValue: 1)
  /// With changes: planned, applied, or to publish.
  public static let changed = FleetFilter(rawValue: 2)
  /// Changed on the watch since the last apply (a plan's drift note, or `drift`'s verdict).
  public static let drift = FleetFilter(rawValue: 4)
  /// Not on the watch yet: pending or retrying over MQTT, or (for `drift`) with pending changes.
  public static let pending = FleetFilter(rawValue: 8)

  /// The words `--only` takes, in the order help lists them.
  public static let words: [(word: String, filter: FleetFilter)] = [
    ("failed", .failed), ("changed", .changed), ("drift", .drift), ("pending", .pending),
  ]

  /// `failed,changed` (commas, any order, at least one word); `nil` with an unknown or missing word.
  public init?(words text: String) {
    var filter: FleetFilter = []
    for word in text.split(separator: ",", omittingEmptySubsequences: false).map({ $0.trimmingCharacters(in: .whitespaces) }) {
      guard let found = Self.words.first(where: { $0.word == word.lowercased() }) else { return nil }
      filter.insert(found.filter)
    }
    guard !filter.isEmpty else { return nil }
    self = filter
  }

  /// The words of this filter, comma-separated (`failed,changed`).
  public var text: String { Self.words.filter { contains($0.filter) }.map(\.word).joined(separator: ",") }

  /// Whether `row` is one of the watches this filter shows (any of its words).
  public func matches(_ row: FleetWatchReport) -> Bool {
    var kinds: FleetFilter = []
    switch row.verdict {
    case .failed, .unreachable, .refused, .unknown: kinds.insert(.failed)
    case .retrying: kinds.formUnion([.failed, .pending])
    case .pending: kinds.insert(.pending)
    case .changes, .applied, .publish: kinds.insert(.changed)
    case .drift(let count, let pending, _):
      if count > 0 { kinds.insert(.drift) }
      if pending > 0 { kinds.insert(.pending) }
    case .invalid(_, let count, let pending):
      kinds.insert(.failed)
      if count > 0 { kinds.insert(.drift) }
      if pending > 0 { kinds.insert(.pending) }
    case .noChanges: break
    }
    if row.plan?.resourceDrift.isEmpty == false { kinds.insert(.drift) }
    return !intersection(kinds).isEmpty
  }
}

/// How a fleet report is shown to a person (`FleetReport.review`).
public struct FleetReviewOptions: Sendable {
  /// `--summary`: one line per group of watches and the totals; no plans, no table.
  public var summary = false
  /// `--only`: the watches shown (all when `nil`).
  public var only: FleetFilter?
  /// The table lists every shown watch up to this many; above it, it is left out.
  public var tableLimit = 20
  /// A group of more watches than this names this many, then counts the rest.
  public var nameLimit = 5
  /// Whether groups with changes show their plan's body (an `apply` after approval has shown
  /// it already: only the one-line headline then).
  public var bodies = true

  /// The defaults: every watch, plans shown, the table collapsed above 20 watches.
  public init(summary: Bool = false, only: FleetFilter? = nil, bodies: Bool = true) {
    self.summary = summary
    self.only = only
    self.bodies = bodies
  }
}

/// What a fleet review compares of a watch's plan (`FleetReport.groups`, `FleetReport.shown`):
/// its body, unmasked and without source comments, and where each field of each change is set.
public struct FleetReviewedPlan: Sendable, Hashable {
  /// The renderer of the bodies a review compares: plans are compared unmasked (two numbers
  /// masked alike, `+******00`, are not the same change) and without sources (the same change
  /// set in each watch's own file is one change).
  static let comparer = HumanPlanRenderer(color: false, redact: false, sources: false)

  /// `comparer`'s body of the plan.
  public var body: String
  /// Where each field of each of the plan's changes is set, by change.
  public var sources: [[SourcePosition?]]

  /// What a review compares of `plan`.
  public init(_ plan: Plan) {
    body = Self.comparer.body(plan)
    sources = Self.sources(plan)
  }

  static func sources(_ plan: Plan) -> [[SourcePosition?]] { plan.resourceChanges.map { $0.fields.map(\.source) } }
}

/// The plans of a fleet review in bounded memory (`plan --fleet` without `--json`, `--markdown`
/// or `-out`): a review prints one body per group of watches with the same plan body, so of
/// each body only the plan of the first watch in fleet order is kept; every other watch keeps
/// what the review compares (`FleetReviewedPlan`, in `FleetWatchReport.reviewed`), and its row
/// shows the kept plan, which renders the same body, headline, drift and safety verdict.
/// About 26 KiB a plan at 50 contacts (docs/performance.md "Fleets in bounded memory"). Safe
/// to use from the runner's tasks.
public final class FleetReviewPlans: Sendable {
  private let kept = Locked<[String: (index: Int, plan: Plan)]>([:])

  /// An empty set.
  public init() {}

  /// Records `plan`, made for the watch at `index` in fleet order, and returns what its row
  /// keeps; the plan is kept only when no earlier watch's plan has the same body.
  public func add(_ plan: Plan, index: Int) -> FleetReviewedPlan {
    let reviewed = FleetReviewedPlan(plan)
    kept.mutate { kept in
      if let first = kept[reviewed.body], first.index < index { return }
      kept[reviewed.body] = (index, plan)
    }
    return reviewed
  }

  /// `rows` with the `plan` of every row that has `reviewed` set to the kept plan of its body.
  public func shown(_ rows: [FleetWatchReport]) -> [FleetWatchReport] {
    let kept = kept.value
    return rows.map { row in
      var row = row
      if let reviewed = row.reviewed { row.plan = kept[reviewed.body]?.plan }
      return row
    }
  }
}

/// Watches of one report with the same result and the same plan (or the same text).
struct FleetGroup {
  /// 0 failed or retrying, 1 unsafe, 2 with changes or drift, 3 nothing to do.
  var rank: Int
  var key: String
  var rows: [FleetWatchReport]
}

extension FleetReport {
  /// The report for a person: the watches grouped by identical outcome — the same result and
  /// the same plan body (`HumanPlanRenderer.body`), else the same text — failed groups first,
  /// then unsafe plans, then other changes, then watches with nothing to do; each group with a
  /// headline (`950 watches: ~ reminder.drinking { ~ period.every = 2h -> 3h }`), the first names and
  /// a count of the rest, the manifests merged for them, and the body once. Then the table (up
  /// to `tableLimit` watches) and the totals line. Ends with a newline. `--json` (`json()`) keeps every watch's details.
  public func review(renderer: HumanPlanRenderer, options: FleetReviewOptions = FleetReviewOptions()) -> String {
    let shown = options.only.map { filter in watches.filter(filter.matches) } ?? watches
    let groups = Self.groups(shown, renderer: renderer)
    var out = ""
    let anyBody = !options.summary && groups.contains { group in
      guard let plan = group.rows[0].plan, !group.rows[0].verdict.isFailure else { return false }
      return (!plan.isEmpty && (options.bodies || group.rows[0].verdict != .applied(plan.counts))) || !plan.resourceDrift.isEmpty
    }
    if anyBody { out += renderer.legend + "\n" }
    for group in groups {
      out += options.summary ? summaryLine(group, renderer: renderer, options: options)
                             : section(group, renderer: renderer, options: options) + "\n"
    }
    if options.summary, !groups.isEmpty { out += "\n" }
    if !options.summary { out += table(shown, options: options) }
    if shown.contains(where: { $0.basis != nil }) { out += FleetStateBasis.caveat + "\n" }
    out += totals
    if let only = options.only {
      out += "Shown: \(shown.count) of \(counted(watches.count, "watch", "watches")) (--only \(only.text)).\n"
    }
    return out
  }

  /// `rows` grouped, in the order `review` shows them (by rank, then fleet order).
  static func groups(_ rows: [FleetWatchReport], renderer: HumanPlanRenderer) -> [FleetGroup] {
    var groups: [FleetGroup] = []
    var index: [String: Int] = [:]
    // Plans are compared unmasked: two numbers masked alike (`+******00`) are not the same change.
    // Sources are left out: the same change set in each watch's own file is one change.
    for row in rows {
      // Without a plan, a failure's reason is part of what is equal; other reasons and counts
      // (an agent's note naming the watch's own revision) are not, or no two would group: the
      // headline says when they differ. A row whose plan stands for its group compares its own
      // plan's body, kept when it was planned (`FleetReviewPlans`).
      let compared = row.reviewed.map { $0.body + warnings(row.section) } ?? body(row, renderer: FleetReviewedPlan.comparer)
      let key = (row.plan == nil && row.verdict.isFailure ? "\(row.verdict)" : row.verdict.word) + "\u{0}" + compared
      if let at = index[key] {
        groups[at].rows.append(row)
      } else {
        index[key] = groups.count
        groups.append(FleetGroup(rank: rank(row), key: key, rows: [row]))
      }
    }
    // A stable sort: within a rank, groups keep the fleet order of their first watch.
    return groups.enumerated().sorted { ($0.element.rank, $0.offset) < ($1.element.rank, $1.offset) }.map(\.element)
  }

  /// The renderer for the body a group shows: `renderer`, without source comments when its
  /// watches' changes are set at different places (each in its own file).
  static func shown(_ group: FleetGroup, renderer: HumanPlanRenderer) -> HumanPlanRenderer {
    let sources = group.rows.map { $0.reviewed?.sources ?? $0.plan.map(FleetReviewedPlan.sources) }
    guard renderer.sources, sources.contains(where: { $0 != sources[0] }) else { return renderer }
    var plain = renderer
    plain.sources = false
    return plain
  }

  /// What `row` shows under its group's header: its plan's body, else its own text; nothing
  /// for a watch with no plan and nothing to do (a `no drift`: the result says it all).
  static func body(_ row: FleetWatchReport, renderer: HumanPlanRenderer) -> String {
    if !row.verdict.isFailure, let plan = row.plan { return renderer.body(plan) + warnings(row.section) }
    if case .drift(_, let pending, _) = row.verdict, !row.verdict.hasChanges, pending == 0 { return "" }
    return row.section
  }

  /// The warnings of a watch's own output (`Warning: …` and the indented lines after it: a
  /// change the wearer made while the apply wrote, a record that could not be written), which
  /// the plan does not say. A watch with one is a group of its own.
  static func warnings(_ section: String) -> String {
    var out = "", inWarning = false
    for line in section.split(separator: "\n", omittingEmptySubsequences: false) {
      if line.hasPrefix("Warning: ") { inWarning = true } else if !line.hasPrefix("  ") { inWarning = false }
      if inWarning { out += line + "\n" }
    }
    return out
  }

  private static func rank(_ row: FleetWatchReport) -> Int {
    if row.verdict.isFailure || row.verdict.isRetrying || row.verdict.isUnknown { return 0 }
    if case .invalid = row.verdict { return 0 }
    if let plan = row.plan, !plan.unsafeFindings.isEmpty { return 1 }
    if row.verdict.hasChanges || row.plan?.resourceDrift.isEmpty == false { return 2 }
    if case .drift(_, let pending, _) = row.verdict, pending > 0 { return 2 }
    return 3
  }

  /// The headline of a group: the plan on one line (`HumanPlanRenderer.headline`), prefixed by
  /// the result when it is not a plan's (`applied: …`, `failed: REASON`), else the result.
  func headline(_ group: FleetGroup, renderer: HumanPlanRenderer) -> String {
    let row = group.rows[0]
    let differ = group.rows.contains { $0.verdict != row.verdict }
    if row.plan == nil, differ {
      return row.verdict.word + " (their reasons or counts differ: --json has each watch's)"
    }
    // One plan, but each row's own reason (the agent serving it): not the first one's for all.
    if differ, row.verdict.reason != nil { return row.verdict.word + " (their reasons differ: --json has each watch's)" }
    switch row.verdict {
    case .failed(let reason): return "failed: " + ControlCharacters.escaped(reason)
    case .unreachable(let reason): return "unreachable: " + ControlCharacters.escaped(reason)
    case .refused(let reason): return "refused: " + ControlCharacters.escaped(reason)
    case .retrying(let reason): return "retrying: " + ControlCharacters.escaped(reason)
    case .pending(let reason): return "pending: " + ControlCharacters.escaped(reason)
    case .publish(let reason): return "to publish: " + ControlCharacters.escaped(reason)
    case .unknown(let reason): return "not known: " + ControlCharacters.escaped(reason)
    case .invalid(let reason, _, _): return "invalid: " + ControlCharacters.escaped(reason)
    default: break
    }
    guard let plan = row.plan else {
      // Changes pending with no drift are said too (fresh-eyes finding: "26 watches: no drift"
      // for watches a manifest change had not reached).
      let pending = if case .drift(_, let pending, _) = row.verdict { pending > 0 } else { false }
      return row.verdict.word + ((row.verdict.hasChanges || pending) && row.verdict.changesText != "-" ? " (\(row.verdict.changesText))" : "")
    }
    let line = renderer.headline(plan)
    if case .applied = row.verdict { return "applied: \(line)" }
    return line
  }

  /// `room-0000, room-0001, … and 995 more` (every name when few).
  func names(_ rows: [FleetWatchReport], limit: Int) -> String {
    let escaped = rows.map { ControlCharacters.escaped($0.name) }
    guard escaped.count > limit + 2 else { return escaped.joined(separator: ", ") }
    return escaped.prefix(limit).joined(separator: ", ") + " and \(escaped.count - limit) more"
  }

  /// The manifests merged for the group's watches: one set for all (`wards/ward-a.yaml`), each
  /// its own over shared defaults, or how many sets (every watch's are in `--json`).
  func manifests(_ rows: [FleetWatchReport]) -> String? {
    let sets = rows.map(\.manifests)
    guard let first = sets.first, !first.isEmpty else { return nil }
    if sets.allSatisfy({ $0 == first }) { return "manifest " + first.joined(separator: " over ") }
    if let defaults = first.last, first.count == 2, sets.allSatisfy({ $0.count == 2 && $0.last == defaults }) {
      return "manifests: each watch's own over \(defaults)"
    }
    return "manifests: \(Set(sets).count) different sets (--json names each watch's)"
  }

  private func section(_ group: FleetGroup, renderer: HumanPlanRenderer, options: FleetReviewOptions) -> String {
    let rows = group.rows, first = rows[0]
    var out: String
    if rows.count == 1 {
      out = FleetReport.header(name: first.name, device: first.device, manifests: first.manifests)
    } else {
      out = "=== \(rows.count) watches: \(headline(group, renderer: renderer))\n    \(names(rows, limit: options.nameLimit))\n"
      if let manifests = manifests(rows) { out += "    \(manifests)\n" }
    }
    if let basis = FleetStateBasis.text(rows) { out += "    \(basis)\n" }
    let body = Self.body(first, renderer: Self.shown(group, renderer: renderer))
    let applied = if case .applied = first.verdict { true } else { false }
    if !options.bodies, applied, first.plan?.resourceDrift.isEmpty != false {
      if rows.count == 1 { out += "\(headline(group, renderer: renderer))\n" }
      out += Self.warnings(first.section)
    } else if body.isEmpty {
      if rows.count == 1 { out += "\(headline(group, renderer: renderer))\n" }
    } else {
      // A watch of its own without a plan (an agent's apply with a warning) says its result
      // before its words (fresh-eyes finding: only the warning was shown).
      if rows.count == 1, applied, first.plan == nil { out += "\(headline(group, renderer: renderer))\n" }
      out += body
    }
    return out
  }

  private func summaryLine(_ group: FleetGroup, renderer: HumanPlanRenderer, options: FleetReviewOptions) -> String {
    let rows = group.rows
    let who = rows.count == 1 ? ControlCharacters.escaped(rows[0].name)
      : rows.count <= options.nameLimit + 2 ? "\(rows.count) watches (\(names(rows, limit: options.nameLimit)))" : "\(rows.count) watches"
    return "\(who): \(FleetStateBasis.line(headline(group, renderer: renderer), rows))\n"
  }

  /// The table of `shown`, whole up to `tableLimit` watches; above it a line saying it is left
  /// out (the failed watches are at the top of the review already). Ends with a blank line.
  private func table(_ shown: [FleetWatchReport], options: FleetReviewOptions) -> String {
    guard !shown.isEmpty else { return "" }
    if shown.count <= options.tableLimit { return FleetReport(operation: operation, fleetFile: fleetFile, watches: shown).rows() + "\n" }
    return "The table of \(shown.count) watches is left out (more than \(options.tableLimit)): --only narrows it, --json has every watch.\n\n"
  }

  /// The header of one watch's section: `=== room-12  device sim:…  manifest residents/room-12.yaml
  /// over wards/ward-a.yaml`, ending with a newline.
  public static func header(name: String, device: String, manifests: [String]) -> String {
    let files = manifests.isEmpty ? "" : "  manifest " + manifests.joined(separator: " over ")
    return "=== \(ControlCharacters.escaped(name))  device \(ControlCharacters.escaped(device))\(files)\n"
  }
}
