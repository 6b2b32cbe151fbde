import TSApplyCLI
import Foundation
import TSApply
import TSDevice
import TSEngine
import TSFleet
import TSManifest
import TSModel
import TSPlan

/// A fleet loaded for a command, with what the command line needs around it: the engine
/// (watch paths resolve in the fleet file's directory, records stay where they always are),
/// output sections, progress and advice.
struct FleetSession: Sendable {
  var loaded: LoadedFleet
  let options: FleetOptions
  let context: CommandContext
  let redact: Bool
  let json: Bool
  /// `--no-color`, for the review's plans.
  var noColor = false
  /// With `--redact`, the fingerprints beside masked numbers (`PlanOutputOptions.fingerprints`).
  var fingerprints: PhoneFingerprints?
  /// Whether a phase is announced (`Planning 4 watches of fleet.yaml...`): not with `--json`
  /// or `--markdown`, whose output is a document.
  var announces = true
  /// Ctrl-C, SIGTERM and SIGHUP for the whole run: watches being applied stop between device
  /// calls, and no other watch starts.
  let stop: SharedStop
  /// Asked (besides `stop`) before each watch starts, never during an apply: a staged
  /// rollout's wave stops starting watches once too many failed (`RolloutTally`).
  var startGate: (any StopRequest)? = nil
  /// Told each watch's report row as the watch finishes (the rollout's `RolloutTally`).
  var observer: (@Sendable (FleetWatchReport) -> Void)? = nil

  /// Loads `options.file`; prints every problem of the fleet file or its defaults and fails
  /// when there is one (nothing is touched).
  /// `createsKey`: whether `--redact` may create the redaction key (not for read-only `drift`).
  static func load(_ options: FleetOptions, redact: Bool, json: Bool, noColor: Bool = false, createsKey: Bool = true,
                   context: CommandContext) throws(CommandFailure) -> FleetSession {
    let file = options.file ?? "fleet.yaml"
    do {
      let loaded = try FleetLoader.load(path: context.resolve(file), displayName: file, selection: options.watches,
                                        registry: DeviceOption.registry(context.toolset), environment: context.environment)
      if !loaded.warnings.isEmpty, !json {
        ManifestInput.printDiagnostics(loaded.warnings, sources: [file: []], json: false, redact: redact, context: context)
      }
      return FleetSession(loaded: loaded, options: options, context: context, redact: redact, json: json, noColor: noColor,
                          fingerprints: PlanOutputOptions.fingerprints(redact: redact, context: context, create: createsKey),
                          stop: stopSignals(context, fleetFile: file, overBroker: loaded.fleet.transport != nil))
    } catch {
      ManifestInput.printDiagnostics(error.problem.diagnostics, sources: error.sources, json: json, redact: redact, context: context,
                                     file: file)
      throw CommandFailure(error.description)
    }
  }

  /// Signals for a run, announced on standard error.
  /// A second signal quits at once, saying first what that leaves (as a single watch's apply does).
  /// `overBroker`: the fleet's agents apply what is published; a signal ends the wait for them.
  static func stopSignals(_ context: CommandContext, fleetFile: String, overBroker: Bool) -> SharedStop {
    SharedStop(StopSignals(notice: { signal in
      let again = "\(signal == SIGINT ? "Ctrl-C" : "send it") again to quit at once"
      context.stderr.write("\n\(signal == SIGINT ? "Interrupt" : StopSignals.name(signal)) received. " + (overBroker
        ? "No longer waiting for the agents: what is published stays published and they apply it; what each watch reported so far follows (\(again))...\n"
        : "Finishing the watches being changed (their current device call), starting no others (\(again))...\n"))
    }, quitting: { _ in
      context.stderr.write("Quitting at once: the watches being changed may hold part of their change. 'tsapply status --fleet \(ShellWord.quoted(fleetFile))' "
        + "says what each holds, and 'tsapply plan --fleet \(ShellWord.quoted(fleetFile))' what is left; each watch's backup and unfinished "
        + "apply are in 'tsapply history --device SPEC'.\n")
    }))
  }

  /// The same session over `members` only.
  func with(members: [FleetMember]) -> FleetSession {
    var subset = loaded
    subset.members = members
    var session = self
    session.loaded = subset
    return session
  }

  /// The same session with `gate` asked before each watch starts (as well as `stop`; it never
  /// stops an apply under way) and `observer` told each watch's row as it finishes (a rollout's
  /// wave: `RolloutTally`).
  func with(startGate gate: any StopRequest, observer: @escaping @Sendable (FleetWatchReport) -> Void) -> FleetSession {
    var session = self
    session.startGate = gate
    session.observer = observer
    return session
  }

  /// The engine for the fleet's watches: `sim:` paths resolve against the fleet file's
  /// directory; the state root is the one every other command uses here.
  var engine: Engine {
    var engine = Engine(registry: DeviceOption.registry(context.toolset), environment: context.environment, currentDirectory: loaded.fleet.directory)
    engine.stateRoot = WatchHome.root(environment: context.environment, currentDirectory: context.currentDirectory)
    return engine
  }

  /// The fleet file as named on the command line.
  var fleetFile: String { loaded.fleet.file }

  /// ` --fleet FILE --watch NAME`, for advice about one watch.
  func advice(_ member: FleetMember) -> (file: String, watch: String) { (fleetFile, member.name) }

  /// The header of a watch's section.
  func header(_ member: FleetMember) -> String {
    FleetReport.header(name: member.name, device: member.device, manifests: member.manifestFiles)
  }

  /// The human plan renderer for the review (colour on a terminal without `--no-color`).
  var renderer: HumanPlanRenderer {
    HumanPlanRenderer(color: context.useColor(noColorFlag: noColor), redact: redact, fingerprints: fingerprints)
  }

  /// How the report is shown: `--summary`, `--only`.
  var reviewOptions: FleetReviewOptions {
    FleetReviewOptions(summary: options.summary, only: options.only.flatMap { FleetFilter(words: $0.joined(separator: ",")) })
  }

  /// A context whose output is kept for one watch's section (no terminal, no input).
  func sectionContext() -> (context: CommandContext, output: BufferOutput) {
    let output = BufferOutput()
    var section = CommandContext(stdout: output, stderr: output, environment: context.environment,
                                 currentDirectory: context.currentDirectory)
    section.stdoutIsTerminal = false
    return (section, output)
  }

  /// The diagnostics of `problem` as text (with source lines from every file they name).
  func diagnosticsText(_ diagnostics: [Diagnostic], member: FleetMember) -> String {
    let (section, output) = sectionContext()
    ManifestInput.printDiagnostics(diagnostics, sources: member.sources, json: false, redact: redact, context: section)
    return output.text
  }

  /// The JSON of `diagnostics` (for `--json` reports), in the one diagnostic shape
  /// (`JSONValue(diagnostic:file:)`), messages masked with `--redact`.
  func diagnosticsJSON(_ diagnostics: [Diagnostic]) -> JSONValue {
    .array(diagnostics.map { diagnostic in
      var masked = diagnostic
      if redact { masked.message = PhoneRedaction.redactPhoneLike(diagnostic.message) }
      return JSONValue(diagnostic: masked)
    })
  }

  /// A failed watch's section text and report row: `refused` when nothing was written because
  /// the safety gate refused its unsafe plan or its saved plan's part failed a check;
  /// `unreachable` when the watch could not be read (`EngineError.device`: nothing was read or
  /// written), its section and JSON saying what its records and its monitor last knew
  /// (`OutOfReach`), as `status --fleet` does; else `failed`.
  func failure(_ failure: FleetFailure, member: FleetMember, elapsed: Duration, message: String? = nil) -> (String, FleetWatchReport) {
    var text = ""
    var details: [String: JSONValue] = [:]
    switch failure {
    case .input(let problem):
      text += diagnosticsText(problem.diagnostics, member: member)
      details["diagnostics"] = diagnosticsJSON(problem.diagnostics)
    case .engine(.invalid(let input)):
      text += diagnosticsText(input.diagnostics, member: member)
      details["diagnostics"] = diagnosticsJSON(input.diagnostics)
    default:
      break
    }
    // A message from the apply is masked already (`ApplyRun.describe`); any other reason may
    // still name an address or a number.
    let reason = message ?? PhoneRedaction.Mask(redact: redact).text(failure.description)
    text += "Error: \(reason)\n"
    details["error"] = .string(redact ? PhoneRedaction.redactPhoneLike(reason) : reason)
    if case .engine(.device) = failure {
      let known = OutOfReach(member, engine: engine)
      text += known.lines
      details.merge(known.json) { _, new in new }
    }
    // Refused: nothing was written, by the safety gate or a saved plan's checks (docs/fleet.md).
    let verdict: FleetVerdict
    switch failure {
    case .engine(.unsafe): verdict = .refused(firstLine(reason))
    case .engine(.savedPlanRefused):
      verdict = .refused(firstLine(reason))
      details["refused_by"] = .string("saved_plan_check")
    case .engine(.device): verdict = .unreachable(firstLine(reason))
    default: verdict = .failed(firstLine(reason))
    }
    var row = FleetWatchReport(name: member.name, device: member.device, verdict: verdict, elapsed: elapsed, details: details)
    // Part-way: the row says what reached the watch, as its history does, not `-`.
    if case .engine(.apply(.partial(let partial, _))) = failure {
      let total = partial.applied.count + partial.failed.count + partial.notApplied.count
      row.reached = "\(partial.applied.count) of \(total) applied"
      row.details["reached"] = .object(["applied": .integer(partial.applied.count), "of": .integer(total)])
      row.partlyApplied = !partial.applied.isEmpty
    }
    // Every write made, only the read verifying them failed: written (the row said `-`).
    if case .engine(.apply(.readBackFailed)) = failure {
      row.reached = "written, not verified"
      row.details["verified"] = .bool(false)
    }
    return (text, row)
  }

  /// The first line of `text`: a report row's reason (the whole message is in the section).
  func firstLine(_ text: String) -> String { String(text.prefix { $0 != "\n" }) }

  /// Runs `operation` over the fleet's members, with a progress line on a terminal (with
  /// `keepsManifests`, each member keeps the manifests it was run with: `FleetRunner`); then
  /// returns the report rows, each with its watch's text (`section`) and manifests, for the
  /// review (`finish`) to group.
  func run<Outcome: Sendable>(
    verb: String,
    keepsManifests: Bool = false,
    _ operation: @escaping @Sendable (FleetMember, ManifestDocument, Watch) async throws(EngineError) -> Outcome,
    render: @escaping @Sendable (FleetResult<Outcome>) -> (text: String, row: FleetWatchReport)
  ) async -> [FleetWatchReport] {
    let printer = SectionPrinter(context: context, total: loaded.members.count, verb: verb, quiet: true, document: json)
    stop.begin()
    defer { stop.end() }
    // One line as the phase starts (after the signal handlers are in place): what the review
    // at the end is about, and a sign of life in a log.
    if !json, announces {
      let count = loaded.members.count
      context.stdout.write("\(verb.prefix(1).uppercased() + verb.dropFirst()) \(counted(count, "watch", "watches")) of \(fleetFile)"
        + (count > options.parallelism ? ", \(options.parallelism) at a time" : "") + "...\n\n")
    }
    let runner = FleetRunner(engine: engine, parallelism: options.parallelism, stop: startGate ?? stop, keepsManifests: keepsManifests)
    let rows = Locked<[Int: FleetWatchReport]>([:])
    let observer = self.observer
    let ticker = Task {
      while !Task.isCancelled {
        try? await Task.sleep(for: .seconds(1))
        printer.tick()
      }
    }
    defer { ticker.cancel() }
    _ = await runner.run(loaded.members, progress: { printer.progress($0) }, finished: { index, result in
      var (text, row) = render(result)
      row.section = text
      row.manifests = result.member.manifestFiles
      rows.mutate { $0[index] = row }
      observer?(row)
      printer.finished(index, "", verdict: row.verdict.word, failed: row.verdict.isFailure ? row.name : nil)
    }) { member, document, watch throws(EngineError) in
      try await operation(member, document, watch)
    }
    printer.end()
    let done = rows.value
    return done.keys.sorted().compactMap { done[$0] }
  }

  /// Prints the report (the review, or the JSON; nothing when already `printed`) and returns
  /// the aggregated exit status: 1 when a watch failed; else 2 when `changed`; else 0.
  /// `bodies`: whether the review shows the plans of applied watches (not when the approval
  /// showed them already).
  func finish(_ report: FleetReport, changed: Bool, printed: Bool = false, bodies: Bool = true) throws -> ExitStatus {
    if json {
      context.stdout.write(report.json())
    } else if !printed {
      var options = reviewOptions
      options.bodies = bodies
      context.stdout.write(report.review(renderer: renderer, options: options))
    }
    if report.watches.contains(where: { $0.verdict.isFailure || $0.verdict.isRetrying || $0.verdict.isUnknown || $0.isPartlyPending || $0.mayHoldPart }) {
      throw Self.failed(report.watches, of: report.watches.count, waited: report.operation == "apply", agents: broker != nil,
                        operation: report.operation, fleetFile: fleetFile)
    }
    return changed ? .changesPresent : .success
  }

  /// `failed(_:refused:stale:retrying:unknown:partlyPending:noDesired:of:waited:operation:)` for the report rows
  /// `rows` of `total` watches: those that failed, were refused, are still retrying, not known,
  /// or pending with part of the revision applied.
  static func failed(_ rows: [FleetWatchReport], of total: Int, waited: Bool = true, agents: Bool = false,
                     operation: String = "apply", fleetFile: String? = nil) -> CommandFailure {
    func names(_ matching: (FleetWatchReport) -> Bool) -> [String] { rows.filter(matching).map(\.name) }
    let byCheck: (FleetWatchReport) -> Bool = { $0.details["refused_by"] == .string("saved_plan_check") }
    return failed(names { $0.verdict.isFailure && !$0.verdict.isRefused && !$0.verdict.isUnreachable }, unreachable: names(\.verdict.isUnreachable),
                  refused: names { $0.verdict.isRefused && !byCheck($0) },
                  refusedHoldingPart: names { $0.verdict.isRefused && ($0.partlyApplied || $0.outcomeUnknown) },
                  stale: names { $0.verdict.isRefused && byCheck($0) }, retrying: names(\.verdict.isRetrying),
                  unknown: names(\.verdict.isUnknown), partlyPending: names(\.isPartlyPending),
                  mayHoldPart: names { $0.mayHoldPart && !$0.isPartlyPending }, of: total, waited: waited, agents: agents,
                  operation: operation, fleetFile: fleetFile)
  }

  /// The error a fleet command ends with when the watches `names` of `total` failed, the safety
  /// gate `refused` their unsafe plans (over MQTT, `refusedHoldingPart` of them hold part of
  /// the revision, written by their agents' earlier attempts: never said to be untouched),
  /// their parts of a saved plan failed its checks (`stale`), or their
  /// agents were still `retrying` them when the wait ended (`waited`; else they are being retried),
  /// or what they hold is not known (`unknown`), or they are pending holding part of the revision
  /// (`partlyPending`: their agents stopped part-way); `operation` (`apply`, `restore`) is the verb of
  /// the advice to a refused one: `2 of 3 watches failed: room-14,
  /// room-16`, `1 of 3 watches refused: room-12 (its plan is unsafe, …)`, `1 of 3 watches still
  /// retrying when the wait ended: room-12 (…)`, or, over MQTT, have `noDesired` document on the
  /// broker (it lost them: not a failure of the watches) `30 of 30 watches with no desired
  /// document on the broker: … (publish the manifests again …)`.
  /// `unreachable`, `invalid` (`status`): watches read directly that could not be read, or
  /// whose manifests have errors — said as such, not as failed (fresh-eyes finding: "1 of 6
  /// watches failed" for a watch that was only out of reach).
  static func failed(_ names: [String], unreachable: [String] = [], invalid: [String] = [], refused: [String] = [],
                     refusedHoldingPart: [String] = [], stale: [String] = [],
                     retrying: [String] = [], unknown: [String] = [],
                     partlyPending: [String] = [], mayHoldPart: [String] = [], noDesired: [String] = [], staleDesired: [String] = [],
                     of total: Int, waited: Bool = true, agents: Bool = false, operation: String = "apply",
                     fleetFile: String? = nil) -> CommandFailure {
    var parts: [String] = []
    if !names.isEmpty { parts.append("failed: " + FleetText.names(names)) }
    if !unreachable.isEmpty {
      // `status` shows it in rows; the other commands in each watch's section (`OutOfReach`).
      let (say, was) = unreachable.count == 1 ? ("says", "it was") : ("say", "they were")
      parts.append((parts.isEmpty ? "" : "\(unreachable.count) ") + "out of reach: " + FleetText.names(unreachable)
        + (agents && operation != "status" ? " (\(unreachable.count == 1 ? "its agent cannot" : "their agents cannot") read \(unreachable.count == 1 ? "it" : "them"): "
                                              + "'tsapply status --fleet' says since when)"
           : operation == "status" ? " (\(unreachable.count == 1 ? "its row" : "their rows") \(say) when \(was) last applied and seen)"
           : " (nothing was read or written; \(unreachable.count == 1 ? "its section says" : "their sections say") why, and what is known of \(unreachable.count == 1 ? "it" : "them"))"))
    }
    if !invalid.isEmpty {
      parts.append((parts.isEmpty ? "" : "\(invalid.count) ") + "with manifest errors: " + FleetText.names(invalid)
        + " ('tsapply validate' shows where)")
    }
    if !staleDesired.isEmpty {
      // Not the watches failing, nor their manifests (fresh-eyes finding: "4 of 8 watches failed").
      parts.append((parts.isEmpty ? "" : "\(staleDesired.count) ") + "with an older desired document on the broker than their agents handled: "
        + FleetText.names(staleDesired) + " (the broker went back to an older save; the watches keep what they hold. Publish the manifests "
        + "again with 'tsapply apply --fleet' — a staged rollout publishes wave by wave: '--continue' after each pause — and look at the "
        + "broker's persistence: docs/fleet.md \"Sizing the broker\")")
    }
    if !noDesired.isEmpty {
      parts.append((parts.isEmpty ? "" : "\(noDesired.count) ") + "with no desired document on the broker: " + FleetText.names(noDesired)
        + " (the broker lost them: restarted without persistence, or the topics were cleared; their agents still hold the watches to the "
        + "revisions they last applied. Publish the manifests again with 'tsapply apply --fleet', and give the broker persistence: "
        + "docs/fleet.md \"Sizing the broker\")")
    }
    if !refused.isEmpty {
      let (its, it) = refused.count == 1 ? ("its plan is", "it") : ("their plans are", "them")
      // The refusal wrote nothing, but an earlier attempt may have written part of the revision.
      let partly = refused.filter(refusedHoldingPart.contains)
      let written = partly.isEmpty ? "nothing was written to \(it)"
        : "nothing more was written to \(it), but " + (partly.count == refused.count ? (partly.count == 1 ? "it holds" : "they hold")
                                                       : FleetText.names(partly) + (partly.count == 1 ? " holds" : " hold"))
          + " (or may hold) part of the revision, written by an earlier attempt before the plan became unsafe (Changes says how much)"
      // Others not refused: --allow-destroy for these alone, not for every watch of the fleet
      // (fresh-eyes fe100: the fleet-wide advice for one refused watch).
      let alone = refused.count < total
      let watches = !alone ? "" : refused.count <= 5 ? " " + refused.map { "--watch " + ShellWord.quoted($0) }.joined(separator: " ") : " and --watch NAME for each"
      // From `status`, `plan` or `drift --fleet`: the command that applies them is named, with
      // the fleet file (fresh-eyes fe103 #6: "add --allow-destroy to --auto-approve --watch
      // room-03" read as if the command were missing).
      let options = "--auto-approve --allow-destroy\(watches)"
      let file = fleetFile.map { " " + ShellWord.quoted($0) } ?? ""
      parts.append((parts.isEmpty ? "" : "\(refused.count) ") + "refused: " + FleetText.names(refused)
        + " (\(its) unsafe, so \(written): "
        + (["apply", "restore"].contains(operation) ? "rerun with \(options) to \(operation) \(it)" : "run 'tsapply apply --fleet\(file) \(options)' to apply \(it)")
        + (alone ? " alone" : "")
        // restore --fleet needs --auto-approve: a watch is reviewed with `restore --device` alone;
        // an agent applies unattended, so only allow_destroy (--allow-destroy) lets it.
        + (operation == "restore" ? "; each watch's section shows its plan)"
           : agents ? "; \(refused.count == 1 ? "its agent applies" : "their agents apply") unattended, so only that lets \(it): "
             + "review the plan with 'tsapply plan --fleet\(file)' first)"
           : ", or review \(it) without --auto-approve)"))
    }
    if !stale.isEmpty {
      let (its, it) = stale.count == 1 ? ("its part of the saved plan no longer applies", "it") : ("their parts of the saved plan no longer apply", "them")
      parts.append((parts.isEmpty ? "" : "\(stale.count) ") + "refused: " + FleetText.names(stale)
        + " (\(its), so nothing was written to \(it): plan again, review and apply the new plan)")
    }
    if !retrying.isEmpty {
      // Only an apply waited; `plan` and `drift` read the agents' statuses as they are.
      parts.append((parts.isEmpty ? "" : "\(retrying.count) ") + (waited ? "still retrying when the wait ended: " : "being retried by their agents: ")
        + FleetText.names(retrying) + " (their agents keep trying; 'tsapply status --fleet --wait DURATION' waits for them)")
    }
    if !unknown.isEmpty {
      parts.append((parts.isEmpty ? "" : "\(unknown.count) ") + "not known: " + FleetText.names(unknown)
        + " (their agents have not reported what the watches hold now: "
        + (operation == "status" ? "their rows above say why)" : "'tsapply status --fleet' says why)"))
    }
    if !partlyPending.isEmpty {
      let (hold, its) = partlyPending.count == 1 ? ("holds", "its agent") : ("hold", "their agents")
      parts.append((parts.isEmpty ? "" : "\(partlyPending.count) ") + "\(hold) part of the revision: " + FleetText.names(partlyPending)
        + " (\(its) stopped part-way and \(partlyPending.count == 1 ? "is" : "are") offline; the rest is applied when \(partlyPending.count == 1 ? "it connects" : "they connect")"
        + ": 'tsapply status --fleet --wait DURATION' waits for \(partlyPending.count == 1 ? "it" : "them"))")
    }
    if !mayHoldPart.isEmpty {
      let (may, its) = mayHoldPart.count == 1 ? ("may hold", "its agent") : ("may hold", "their agents")
      parts.append((parts.isEmpty ? "" : "\(mayHoldPart.count) ") + "\(may) part of the revision: " + FleetText.names(mayHoldPart)
        + " (\(its) went offline during the wait without saying what reached the watch; the rest is applied when "
        + (mayHoldPart.count == 1 ? "it connects" : "they connect") + ": 'tsapply status --fleet --wait DURATION' waits for "
        + (mayHoldPart.count == 1 ? "it" : "them") + ")")
    }
    let first = [names, unreachable, invalid, staleDesired, noDesired, refused, stale, retrying, unknown, partlyPending, mayHoldPart]
      .first { !$0.isEmpty }?.count ?? 0
    return CommandFailure("\(first) of \(counted(total, "watch", "watches")) " + parts.joined(separator: "; "))
  }
}

/// Prints fleet sections in fleet order as they complete, with a progress line on a terminal
/// (`[3/10] planning: room-12, room-14`), cleared before each section and redrawn after. Into a
/// log (not a terminal), a quiet run that lasts longer than `logInterval` says how far it is
/// every `logInterval`, naming the watches under way (or waited for) and those that failed since
/// its last line — `[250/1000] applying room-251 (1m5s elapsed): 248 applied, 2 failed (room-12,
/// room-40)` — so a long rollout shows signs of
/// life and its failures before the review at the end (a short run prints only the review).
/// When standard output is a document (`--json`), those lines go to standard error instead, so
/// the document stays whole however long the run.
final class SectionPrinter: @unchecked Sendable {
  private let lock = NSLock()
  private let context: CommandContext
  private let total: Int
  private let verb: String
  private let quiet: Bool
  private let document: Bool
  private var pending: [Int: String] = [:]
  private var nextToPrint = 0
  private var lastProgress: FleetProgress?
  private var progressShown = false
  private var results: [String: Int] = [:]
  private var failedSinceLogged: [String] = []
  private let started: ContinuousClock.Instant
  private var lastLogged: ContinuousClock.Instant
  private let logInterval: Duration
  private let clock: @Sendable () -> ContinuousClock.Instant

  init(context: CommandContext, total: Int, verb: String, quiet: Bool, document: Bool = false, logInterval: Duration = .seconds(10),
       clock: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }) {
    self.context = context
    self.total = total
    self.verb = verb
    self.quiet = quiet
    self.document = document
    self.logInterval = logInterval
    self.clock = clock
    started = clock()
    lastLogged = started
  }

  /// Whether progress goes to a log as lines (not a terminal, sections not printed as they come).
  private var logs: Bool { !live && quiet }

  private var live: Bool { context.stdoutIsTerminal }

  func progress(_ progress: FleetProgress) {
    lock.lock()
    defer { lock.unlock() }
    lastProgress = progress
    drawProgress()
    logProgress()
  }

  /// The watch at `index` finished with the section `text`; `verdict` is its result's word,
  /// `failed` its name when it failed.
  func finished(_ index: Int, _ text: String, verdict: String? = nil, failed: String? = nil) {
    lock.lock()
    defer { lock.unlock() }
    if let verdict { results[verdict, default: 0] += 1 }
    if let failed { failedSinceLogged.append(failed) }
    pending[index] = text
    clearProgress()
    while let section = pending.removeValue(forKey: nextToPrint) {
      if !quiet { context.stdout.write((nextToPrint == 0 ? "" : "\n") + section) }
      nextToPrint += 1
    }
    drawProgress()
  }

  func end() {
    lock.lock()
    defer { lock.unlock() }
    clearProgress()
    lastProgress = nil
  }

  /// Writes the log's progress line when it is due (call it every second or so: a watch that
  /// takes long tells nothing itself).
  func tick() {
    lock.lock()
    defer { lock.unlock() }
    logProgress()
  }

  private func logProgress() {
    let now = clock()
    guard logs, let progress = lastProgress, progress.done < progress.total, now - lastLogged >= logInterval else { return }
    lastLogged = now
    let counts = results.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.map { "\($0.value) \($0.key)" }
    var names = failedSinceLogged.prefix(5).map { ControlCharacters.escaped($0) }.joined(separator: ", ")
    if failedSinceLogged.count > 5 { names += " and \(failedSinceLogged.count - 5) more" }
    failedSinceLogged = []
    let running = Self.names(progress.running)
    (document ? context.stderr : context.stdout).write("[\(progress.done)/\(progress.total)] \(verb)\(running.isEmpty ? "" : " " + running)"
      + " (\(DurationText.text(.seconds((now - started).components.seconds))) elapsed)"
      + (counts.isEmpty ? "" : ": " + counts.joined(separator: ", ")) + (names.isEmpty ? "" : "; failed since the last line: " + names)
      + (progress.note.map { "; " + $0 } ?? "") + "\n")
  }

  private func drawProgress() {
    guard live, let progress = lastProgress, progress.done < progress.total else { return }
    let names = Self.names(progress.running)
    context.stdout.write("\r\u{1B}[K[\(progress.done)/\(progress.total)] \(verb)\(names.isEmpty ? "" : ": " + names)"
      + (progress.note.map { "; " + $0 } ?? ""))
    progressShown = true
  }

  /// The watches running (or waited for), for a progress line: the first 3, then a count.
  private static func names(_ running: [String]) -> String {
    var names = running.prefix(3).map { ControlCharacters.escaped($0) }.joined(separator: ", ")
    if running.count > 3 { names += ", +\(running.count - 3) more" }
    return names
  }

  private func clearProgress() {
    guard progressShown else { return }
    context.stdout.write("\r\u{1B}[K")
    progressShown = false
  }
}

extension FleetSession {
  /// `validate --fleet`: a section per watch with the problems of its merged manifest and, when it
  /// declares a profile, of that platform's capacities (`ValidateCommand.capacityDiagnostics`);
  /// no watch is opened. Exit status 1 when any watch has an error.
  func validate() throws -> ExitStatus {
    var invalid: [String] = []
    for member in loaded.members {
      var text = header(member)
      var diagnostics: [Diagnostic]
      switch member.document {
      case .failure(let problem):
        diagnostics = problem.diagnostics
      case .success(let document):
        diagnostics = document.warnings
        if let name = member.watch.profile?.value, let profile = PlatformProfile.all.first(where: { $0.name == name }) {
          diagnostics = ValidateCommand.capacityDiagnostics(document.manifest, profile: profile, read: diagnostics)
        }
      }
      text += diagnosticsText(diagnostics, member: member)
      let errors = diagnostics.filter { $0.severity == .error }.count
      let warnings = diagnostics.count - errors
      let against = member.watch.profile.map { " for profile \($0.value)" } ?? " (no profile: capacities not checked)"
      if errors > 0 {
        invalid.append(member.name)
        text += "\(ControlCharacters.escaped(member.name)) is not valid\(against): \(ValidateCommand.count(errors, "error"))\(warnings > 0 ? ", \(ValidateCommand.count(warnings, "warning"))" : "").\n"
      } else {
        text += "\(ControlCharacters.escaped(member.name)) is valid\(against)\(warnings > 0 ? " (\(ValidateCommand.count(warnings, "warning")))" : "").\n"
      }
      context.stdout.write(text + "\n")
    }
    let total = loaded.members.count
    context.stdout.write("\(ValidateCommand.count(total, "watch").replacingOccurrences(of: "watchs", with: "watches")): \(total - invalid.count) valid, \(invalid.count) not valid.\n")
    if !invalid.isEmpty { context.stderr.write("Error: \(invalid.count) of \(total) watch\(total == 1 ? "" : "es") not valid: \(invalid.joined(separator: ", "))\n") }
    return invalid.isEmpty ? .success : .failure
  }
}
