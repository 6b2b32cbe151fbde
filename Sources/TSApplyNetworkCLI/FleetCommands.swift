import TSApplyCLI
import Foundation
import TSApply
import TSEngine
import TSFleet
import TSManifest
import TSModel
import TSPlan

/// `plan`, `drift` and `apply` with `--fleet`: each watch through the engine, concurrently,
/// with a section per watch and the summary table (docs/fleet.md "Commands").
extension FleetSession {
  /// `tsapply plan --fleet`: every watch planned (read-only, no lock); with `out`, the plans
  /// saved in one file (`SavedFleetPlan`) for `tsapply apply FILE`; with `markdown`, the report
  /// as Markdown (`FleetReport.markdown`).
  func plan(detailedExitCode: Bool, output: PlanOutputOptions, out: String? = nil, markdown: Bool = false,
            explain: Bool = false) async throws -> ExitStatus {
    if let broker {
      if out != nil {
        throw CommandFailure("-out saves plans made against the watches; the agents of \(fleetFile) plan against theirs, so there is no plan to save")
      }
      return try await planOverBroker(detailedExitCode: detailedExitCode, markdown: markdown, broker: broker)
    }
    let fleetPath = context.resolve(fleetFile)
    if let out {
      // Refused before anything is read or printed: a plan shown and then not saved misleads.
      do { try SavedPlan.checkTarget(context.resolve(out), manifest: fleetPath) } catch { throw CommandFailure(error.description) }
    }
    var session = self
    session.announces = !markdown
    // Only the review (or its summary) shows the plans: one plan kept per body shown.
    let rows = json || markdown || out != nil ? await session.planned(output: output, digests: out != nil)
                                              : await session.reviewed()
    let report = FleetReport(operation: "plan", fleetFile: fleetFile, watches: rows.map(\.row))
    if let out {
      try save(rows.compactMap { row in row.plan.map { (row.row.name, $0, row.manifestsDigest ?? "") } }, to: out, fleetPath: fleetPath)
    }
    if markdown {
      context.stdout.write(report.markdown(renderer: HumanPlanRenderer(color: false, redact: redact, fingerprints: fingerprints),
                                           options: reviewOptions))
    }
    let status = try finish(report, changed: detailedExitCode && rows.contains { $0.row.verdict.hasChanges }, printed: markdown)
    if explain { self.explain() }
    if let out, !json, !markdown {
      context.stdout.write("\nSaved the plans of \(counted(rows.filter { $0.plan != nil }.count, "watch", "watches")) to: \(out)\n\n"
        + "To perform exactly these actions, run:\n    tsapply apply \(ShellWord.quoted(out))\n")
    }
    return status
  }

  /// `--explain`: where each value of the (one) selected watch's merged manifest comes from
  /// (`ManifestExplain`), after its plan; nothing for a watch whose files cannot be read (the
  /// plan said why).
  private func explain() {
    guard let member = loaded.members.first,
          let manifests = FleetLoader.manifests(of: member.watch, in: loaded.fleet) else { return }
    let lines = ManifestExplain.explain(manifests.map(\.manifest))
    context.stdout.write("\n" + ManifestExplain.text(lines, watch: member.name, files: manifests.reversed().map(\.name), redact: redact))
  }

  /// Writes the plans `plans` (by watch name, with the digest of the merged manifests each was
  /// made from) as a fleet's saved plan to `out`, each bound to those manifests.
  private func save(_ plans: [(String, Plan, String)], to out: String, fleetPath: String) throws {
    let devices = Dictionary(loaded.members.map { ($0.name, $0.device) }) { first, _ in first }
    let parts = plans.compactMap { name, plan, digest in
      devices[name].map { SavedFleetPlan.Part(name: name, device: $0, manifestsDigest: digest, plan: plan) }
    }
    let path = context.resolve(out)
    let planned = Set(parts.map(\.name))
    let saved = SavedFleetPlan(fleetPath: SavedPlan.relativePath(fleetPath, from: (path as NSString).deletingLastPathComponent),
                               watches: parts, unplanned: loaded.members.map(\.name).filter { !planned.contains($0) })
    do { try saved.write(to: path) } catch { throw CommandFailure(error.description) }
  }

  /// `tsapply apply PLANFILE` for a fleet's saved plan: each watch's part applied as reviewed
  /// (no question, no safety gate) after the checks of a saved plan, per watch
  /// (`Watch.apply(reviewed:…)`): a part whose manifests or watch changed, or whose watch left
  /// the fleet or moved to another device, is refused and its watch not touched; the others
  /// are applied. Exit 1 when any part was refused or failed.
  func applySaved(_ saved: SavedFleetPlan, planFile: String, settings: ApplyRun.Settings) async throws -> ExitStatus {
    let parts = Dictionary(saved.watches.map { ($0.name, $0) }) { first, _ in first }
    let planName = (planFile as NSString).lastPathComponent
    let again = "Plan again: 'tsapply plan --fleet \(ShellWord.quoted(fleetFile)) -out \(ShellWord.quoted(planFile))'"
    var early: [String: FleetWatchReport] = [:]
    var selected: [FleetMember] = []
    for member in loaded.members {
      guard let part = parts[member.name] else {
        // Chosen for the plan but not planned (it failed then): not touched, and said so.
        if saved.unplanned.contains(member.name) {
          early[member.name] = FleetWatchReport(name: member.name, device: member.device,
                                                verdict: .pending("it could not be planned, so \(planName) has no plan for it; not touched"),
                                                elapsed: .zero, manifests: member.manifestFiles)
        }
        continue
      }
      if part.device != member.device {
        early[member.name] = failure(.engine(.savedPlanRefused([])), member: member, elapsed: .zero,
                                     message: "its device in \(fleetFile) is now \(member.device), not \(part.device) as when \(planName) was made; nothing was written. \(again)").1
      } else if part.plan.isEmpty {
        early[member.name] = FleetWatchReport(name: member.name, device: member.device, verdict: .noChanges, elapsed: .zero,
                                              section: "The reviewed plan has no changes for this watch: it was not touched.\n",
                                              manifests: member.manifestFiles)
      } else {
        selected.append(member)
      }
    }
    let gone = saved.watches.filter { part in !loaded.members.contains { $0.name == part.name } }.map { part in
      FleetWatchReport(name: part.name, device: part.device, verdict: .refused("no longer in \(fleetFile); nothing was written"),
                       elapsed: .zero, details: ["refused_by": .string("saved_plan_check")],
                       section: "Error: \(part.name) is no longer in \(fleetFile); nothing was written.\n")
    }
    let session = self
    let applied = await with(members: selected).run(verb: "applying", { member, document, watch throws(EngineError) in
      await session.applyOne(member, document: document, watch: watch, settings: settings, approved: nil,
                             reviewed: parts[member.name].map { ($0, "\(planName) (watch \(member.name))", again) })
    }) { result in session.appliedRow(result) }
    let byName = Dictionary(applied.map { ($0.name, $0) }) { first, _ in first }
    let rows = loaded.members.compactMap { early[$0.name] ?? byName[$0.name] } + gone
    return try finish(FleetReport(operation: "apply", fleetFile: fleetFile, watches: rows), changed: false)
  }

  /// Plans every member, printing each section; the plans of those that planned.
  /// Every member planned: its report row and plan, and with `digests` the digest of the merged
  /// manifests it was planned from (what a saved plan is bound to; each watch's manifests are
  /// read as it is planned, `FleetRunner`, and kept with `keep`, for an apply of these plans).
  private func planned(output: PlanOutputOptions, digests: Bool = false, keep: Bool = false) async
    -> [(row: FleetWatchReport, plan: Plan?, manifestsDigest: String?)] {
    let plans = Locked<[String: (plan: Plan, digest: String?)]>([:])
    let rows = await run(verb: "planning", keepsManifests: keep, { _, document, watch throws(EngineError) in
      (try await watch.plan(document).plan, digests ? SHA256Digest.hex(of: document.bytes) : nil)
    }) { result in
      switch result.outcome {
      case .success(let (plan, digest)):
        plans.mutate { $0[result.member.name] = (plan, digest) }
        // The review shows the plan's body, once for every watch with the same one.
        return ("", self.row(result, plan: plan, verdict: plan.isEmpty ? .noChanges : .changes(plan.counts)))
      case .failure(let failure):
        return self.failure(failure, member: result.member, elapsed: result.elapsed)
      }
    }
    let planned = plans.value
    return rows.map { ($0, planned[$0.name]?.plan, planned[$0.name]?.digest) }
  }

  /// Every member planned for the review alone (not `--json`, `--markdown` or `-out`): each
  /// plan reduced as it is made to what the review compares, one plan kept per body
  /// (`FleetReviewPlans`), so memory does not grow with every watch's plan.
  private func reviewed() async -> [(row: FleetWatchReport, plan: Plan?, manifestsDigest: String?)] {
    let plans = FleetReviewPlans()
    let order = Dictionary(loaded.members.enumerated().map { ($1.name, $0) }) { first, _ in first }
    let rows = await run(verb: "planning", { member, document, watch throws(EngineError) in
      let plan = try await watch.plan(document).plan
      return (verdict: plan.isEmpty ? FleetVerdict.noChanges : .changes(plan.counts),
              reviewed: plans.add(plan, index: order[member.name] ?? .max))
    }) { result in
      switch result.outcome {
      case .success(let (verdict, reviewed)):
        var row = FleetWatchReport(name: result.member.name, device: result.member.device, verdict: verdict, elapsed: result.elapsed)
        row.reviewed = reviewed
        return ("", row)
      case .failure(let failure):
        return self.failure(failure, member: result.member, elapsed: result.elapsed)
      }
    }
    return plans.shown(rows).map { ($0, nil, nil) }
  }

  private func row<Outcome>(_ result: FleetResult<Outcome>, plan: Plan, verdict: FleetVerdict) -> FleetWatchReport {
    FleetWatchReport(name: result.member.name, device: result.member.device, verdict: verdict, elapsed: result.elapsed,
                     details: planDetails(plan), plan: plan)
  }

  /// A row's `plan` detail: the plan's JSON form, made only for `--json` (the one report that
  /// shows it; the review and `--markdown` render the plan itself).
  func planDetails(_ plan: Plan) -> [String: JSONValue] {
    json ? ["plan": .object(JSONPlanRenderer.object(plan, redact: redact, fingerprints: fingerprints))] : [:]
  }

  /// `tsapply drift --fleet`: drift and pending changes per watch (read-only); exit 2 when a
  /// watch drifted (with `--pending`, also when one has pending changes).
  func drift(pendingCounts: Bool, output: PlanOutputOptions) async throws -> ExitStatus {
    if let broker { return try await driftOverBroker(pendingCounts: pendingCounts, broker: broker) }
    let color = context.useColor(noColorFlag: output.noColor)
    let redact = self.redact, fingerprints = self.fingerprints
    let rows = await run(verb: "reading", { _, document, watch throws(EngineError) in
      try await watch.drift(document)
    }) { result in
      switch result.outcome {
      case .success(let found):
        let text = DriftRenderer.text(drift: found.drift, pending: found.pending, hasRecord: found.hasRecord, color: color, redact: redact,
                                      fingerprints: fingerprints, own: found.own)
        let object = DriftRenderer.object(drift: found.drift, pending: found.pending, hasRecord: found.hasRecord, redact: redact,
                                          fingerprints: fingerprints, own: found.own)
        let verdict = FleetVerdict.drift(count: found.drift.count, pending: found.unapplied.count, hasRecord: found.hasRecord)
        return (text, FleetWatchReport(name: result.member.name, device: result.member.device, verdict: verdict,
                                       elapsed: result.elapsed, details: ["drift": .object(object)]))
      case .failure(let failure):
        return self.failure(failure, member: result.member, elapsed: result.elapsed)
      }
    }
    let changed = rows.contains { row in
      guard case .drift(let count, let pending, _) = row.verdict else { return false }
      return count > 0 || (pendingCounts && pending > 0)
    }
    let report = FleetReport(operation: "drift", fleetFile: fleetFile, watches: await withDriftBesideInputErrors(rows), pendingCounts: pendingCounts)
    return try finish(report, changed: changed)
  }

  /// `rows` with, for each watch whose manifests have errors, what changed on it since the last
  /// apply (`Watch.driftSinceRecord`: drift needs no manifest), in its section and in `--json`
  /// (`drift_since_record`: the addresses): a manifest with a typo hid SOS switched off on the
  /// watch, which `status --fleet` counted (fresh-eyes finding). Read-only.
  func withDriftBesideInputErrors(_ rows: [FleetWatchReport]) async -> [FleetWatchReport] {
    var rows = rows
    let members = Dictionary(loaded.members.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    for index in rows.indices where rows[index].verdict.isFailure {
      guard let member = members[rows[index].name], case .failure = member.document,
            let watch = try? await engine.open(member.device, mayCreate: false) else { continue }
      if let known = try? await watch.driftSinceRecord(), !known.drift.isEmpty {
        let mask = PhoneRedaction.Mask(redact: redact, manifest: [], changes: known.drift)
        rows[index].section += "Changed on the watch since the last apply (read without its manifests, which have errors): "
          + Reconcile.driftSummary(known.drift, address: mask.address) + "\n"
        rows[index].details["drift_since_record"] = .array(known.drift.map { .string(mask.text($0.address.rawValue)) })
      }
      await watch.close()
    }
    return rows
  }

  /// `tsapply apply --fleet`: with `--auto-approve`, every watch applied at once (the safety
  /// gate per watch); otherwise every watch planned, one question for all of them, and each
  /// watch applied only while its plan is still the one approved.
  func apply(_ settings: ApplyRun.Settings) async throws -> ExitStatus {
    if let rollout = try rolloutRequest() { return try await applyStaged(settings, rollout) }
    if let broker { return try await applyOverBroker(settings, broker: broker) }
    if settings.autoApprove {
      let rows = await applied(settings, approved: nil)
      return try finish(FleetReport(operation: "apply", fleetFile: fleetFile, watches: rows), changed: false)
    }
    switch try await planAndConfirm(settings, question: "perform these actions on") {
    case .finished(let status):
      return status
    case .approved(let report, let approved):
      let rows = await applied(settings, approved: approved)
      let applied = Dictionary(rows.map { ($0.name, $0) }) { first, _ in first }
      let merged = report.watches.map { applied[$0.name] ?? $0 }
      context.stdout.write("\n")
      // The plans were shown before the question: the result without them again.
      return try finish(FleetReport(operation: "apply", fleetFile: fleetFile, watches: merged), changed: false, bodies: false)
    }
  }

  /// What planning for approval came to: the run is over (nothing to apply, or failures only),
  /// or the plans approved, by watch, with the plan report.
  enum PlanApproval {
    case finished(ExitStatus)
    case approved(report: FleetReport, plans: [String: Plan])
  }

  /// Plans every member, prints the sections and the table, and asks once (`Do you want to
  /// \(question) N watches?`); only 'yes' approves.
  /// - Throws: `CommandFailure` when interrupted, declined, or without a terminal.
  func planAndConfirm(_ settings: ApplyRun.Settings, question: String, note: String = "") async throws -> PlanApproval {
    // The manifests planned here are kept: the approved watches are applied from them.
    let planned = await planned(output: settings.output, keep: true)
    if stop.isRequested {
      // Interrupted while planning: nothing to ask about; no watch was written.
      throw CommandFailure("Apply cancelled while planning: no watch was touched.")
    }
    let report = FleetReport(operation: "plan", fleetFile: fleetFile, watches: planned.map(\.row))
    // Every watch to be approved is shown whole (not only those `--only` names, nor only a
    // summary): the question is about what this shows.
    var review = reviewOptions
    review.only = nil
    review.summary = false
    context.stdout.write(report.review(renderer: renderer, options: review))
    let approved = Dictionary(planned.compactMap { entry in entry.plan.flatMap { $0.isEmpty ? nil : (entry.row.name, $0) } }) { a, _ in a }
    guard !approved.isEmpty else {
      if report.hasFailures { return .finished(try finish(report, changed: false, printed: true)) }
      context.stdout.write("\nNo changes. Every watch matches its manifests.\n")
      return .finished(.success)
    }
    guard context.stdinIsTerminal else {
      throw CommandFailure("refusing to apply without confirmation: standard input is not a terminal.\n"
        + "  Re-run with --auto-approve (an unsafe plan also needs --allow-destroy).")
    }
    let count = approved.count
    context.stdout.write("""

      Do you want to \(question) \(count) watch\(count == 1 ? "" : "es")\(note)?
        tsapply will perform the actions described above; a watch whose plan changes meanwhile is left alone.
        Only 'yes' will be accepted to approve.

        Enter a value: 
      """)
    guard context.readLine()?.trimmingCharacters(in: .whitespaces) == "yes" else {
      throw CommandFailure("Apply cancelled: no watch was touched.")
    }
    context.stdout.write("\n")
    return .approved(report: report, plans: approved)
  }

  /// Applies the members (only those in `approved`, when given, each with its approved plan).
  func applied(_ settings: ApplyRun.Settings, approved: [String: Plan]?) async -> [FleetWatchReport] {
    let session = self
    let selected = approved.map { plans in loaded.members.filter { plans[$0.name] != nil } } ?? loaded.members
    return await with(members: selected).run(verb: "applying", { member, document, watch throws(EngineError) in
      await session.applyOne(member, document: document, watch: watch, settings: settings, approved: approved?[member.name])
    }) { result in session.appliedRow(result) }
  }

  /// The section text and report row of one watch's apply.
  private func appliedRow(_ result: FleetResult<ApplyResult>) -> (String, FleetWatchReport) {
    switch result.outcome {
    case .success(let outcome): appliedRow(outcome, member: result.member, elapsed: result.elapsed)
    case .failure(let failure): self.failure(failure, member: result.member, elapsed: result.elapsed)
    }
  }

  /// The section text and report row of one watch's apply or restore (`applyOne`) that ran:
  /// applied, no changes, or failed through `failure(_:member:elapsed:message:)` (refused; a
  /// part-way one saying what reached the watch).
  func appliedRow(_ outcome: ApplyResult, member: FleetMember, elapsed: Duration) -> (String, FleetWatchReport) {
    var details = planDetails(outcome.plan)
    guard let failure = outcome.failure else {
      let verdict: FleetVerdict = outcome.plan.isEmpty ? .noChanges : .applied(outcome.plan.counts)
      return (outcome.log, FleetWatchReport(name: member.name, device: member.device, verdict: verdict,
                                            elapsed: elapsed, details: details, plan: outcome.plan))
    }
    var (text, row) = self.failure(.engine(failure.error), member: member, elapsed: elapsed, message: failure.message)
    text = outcome.log + text
    details.merge(row.details) { _, new in new }
    row.details = details
    return (text, row)
  }

  /// What applying one watch printed, and how it ended.
  struct ApplyResult: Sendable {
    var plan: Plan
    var log: String
    var failure: (error: EngineError, message: String)?
  }

  /// Applies one watch with the engine, its output kept for the watch's section.
  /// `reviewed`: the watch's part of a fleet's saved plan, its name in messages, and the
  /// advice when it is refused; applied as reviewed instead of planning `document` again.
  private func applyOne(_ member: FleetMember, document: ManifestDocument, watch: Watch, settings: ApplyRun.Settings,
                        approved: Plan?, reviewed: (part: SavedFleetPlan.Part, name: String, again: String)? = nil) async -> ApplyResult {
    let empty = Plan(manifestFile: document.manifest.file, profile: watch.capabilities.profile, priorStateDigest: "", resourceChanges: [])
    return await applyOne(member, watch: watch, settings: settings, command: "apply", rerunArgument: fleetFile, manifestSource: document.bytes,
                          empty: empty, approved: approved, reviewed: reviewed) { options throws(EngineError) in
      if let reviewed {
        return try await watch.apply(reviewed: reviewed.part.plan, name: reviewed.name, manifestsDigest: reviewed.part.manifestsDigest,
                                     document: document, options: options)
      }
      return try await watch.apply(document, options: options)
    }
  }

  /// Runs `perform` — an apply, or a restore (`command`, `rerunArgument` its backup) — on one
  /// watch of the fleet with the options every fleet apply uses (approval: `approved`, else
  /// automatic; the section's progress lines), its output kept for the watch's section; the
  /// result goes to `appliedRow`. `empty`: the plan shown when it failed before planning.
  func applyOne(_ member: FleetMember, watch: Watch, settings: ApplyRun.Settings, command: String, rerunArgument: String,
                manifestSource: [UInt8]?, empty: Plan, approved: Plan? = nil,
                reviewed: (part: SavedFleetPlan.Part, name: String, again: String)? = nil,
                perform: (ApplyOptions) async throws(EngineError) -> ApplyOutcome) async -> ApplyResult {
    let (section, output) = sectionContext()
    let cliWatch = CLIWatch(watch: watch, context: section, fleet: advice(member))
    let commandLine = context.commandLine
    let run = ApplyRun(watch: cliWatch, settings: settings, context: section, command: command, rerunArgument: rerunArgument,
                       manifestArgument: nil, commandLine: commandLine, manifestSource: manifestSource)
    // A restore's "manifest" is the backup stated as one: its lines are no file a person wrote.
    let renderer = { var renderer = settings.output.renderer(section); renderer.sources = command == "apply"; return renderer }()
    let shown = Locked<Plan?>(nil)
    let actions = Locked<[ResourceAddress: Action]>([:])
    let changed = Flag()
    let approval: Approval = approved.map { plan in
      .ask { current in
        if current.resourceChanges == plan.resourceChanges { return true }
        changed.set()
        return false
      }
    } ?? .automatic(allowDestroy: settings.allowDestroy)
    let options = ApplyOptions(approval: approval, lockTimeout: settings.lockTimeout, command: commandLine,
                               stop: stop) { event in
      switch event {
      case .waitingForLock(let holder):
        section.stdout.write("Waiting for the watch's lock (held by \(holder.map(\.description) ?? "another tsapply")), up to the lock timeout...\n")
      case .waitingForLease(let failure):
        section.stdout.write("Waiting up to the lock timeout: \(failure)...\n")
      case .planned(let plan):
        shown.set(plan)
        _ = run.masking(plan)
        actions.set(Dictionary(plan.resourceChanges.map { ($0.address, $0.action) }) { first, _ in first })
        if approved == nil && reviewed == nil { section.stdout.write(renderer.render(plan)) }
      case .reconcile(.backedUp(let path)):
        let relative = CLIWatch.relative(path, self.context)
        section.stdout.write("Backed up the watch's current state to \(relative) (restore with '\(cliWatch.command("restore", relative))').\n")
      case .reconcile(.apply(let progress)):
        ApplyRun.print(progress, actions: actions.value, verbose: false, mask: run.currentMask, to: section)
      case .recordFailed(let error):
        section.stdout.write("Warning: could not record the applied state for drift detection: \(error)\n")
      case .historyFailed(let error):
        section.stdout.write("Warning: could not add this apply to the watch's history: \(error)\n")
      case .changedOnWatchDuringApply(let lists, let backupPath, let kept):
        section.stdout.write(ApplyRun.changedDuringApply(lists, backupPath: backupPath.map { CLIWatch.relative($0, self.context) }, kept: kept,
                                                         watch: cliWatch, manifest: nil, mask: run.currentMask))
      case .notHearingTheWatch(let lists):
        section.stdout.write(ApplyRun.notHearing(lists))
      case .putBackOnWatchDuringApply(let lists):
        section.stdout.write(ApplyRun.putBack(lists, mask: run.currentMask))
      case .reconcile(.changedWhileWriting(let drift)):
        run.wearerChangedWhileWriting.set()
        section.stdout.write(ApplyRun.changedWhileWriting(drift, watch: cliWatch, manifest: nil, mask: run.currentMask))
      }
    }
    do {
      let outcome = try await perform(options)
      let counts = ApplyReportCounts(outcome)
      // A restore with nothing to change restored nothing: nothing is "complete" (as `ApplyRun.run`).
      if case .noChanges = outcome, command != "apply" {} else {
        section.stdout.write("\n\(command == "apply" ? "Apply" : "Restore") complete! Resources: \(counts.added) added, \(counts.changed) changed, \(counts.destroyed) destroyed.\n")
      }
      return ApplyResult(plan: outcome.plan, log: output.text)
    } catch {
      let plan = shown.value ?? approved ?? empty
      let message: String
      if case .savedPlanRefused(let problems) = error, let reviewed {
        let reasons = problems.map { run.currentMask.message(ControlCharacters.escaped($0.message)) }.joined(separator: "; ")
        message = "not applied: \(reasons); nothing was written. \(reviewed.again)"
      } else if case .declined = error, changed.isSet {
        message = "the watch changed since the plan you approved; nothing was written. Plan again: '\(cliWatch.command("plan"))'"
      } else if case .invalid = error {
        message = error.description
      } else {
        message = run.describe(error)
      }
      return ApplyResult(plan: plan, log: output.text, failure: (error, message))
    }
  }
}

/// Resources added, changed and destroyed by an apply (0 each when nothing changed).
private struct ApplyReportCounts {
  var added = 0, changed = 0, destroyed = 0
  init(_ outcome: ApplyOutcome) {
    if case .applied(let report) = outcome {
      added = report.added
      changed = report.changed
      destroyed = report.destroyed
    }
  }
}
