import TSApplyCLI
import Foundation
import TSEngine
import TSFleet
import TSModel
import TSMQTT
import TSPlan

/// `plan`, `apply` and `drift` with `--fleet` for a fleet whose `transport:` is a broker: the
/// agents hold the watches, so tsapply publishes desired documents and reads statuses
/// (docs/fleet.md "Agents over MQTT").
extension FleetSession {
  /// The broker, the site and the credentials (`TSAPPLY_MQTT_…`), when the fleet has a transport.
  var broker: (settings: BrokerSettings, site: String)? {
    guard let transport = loaded.fleet.transport, let site = loaded.fleet.site else { return nil }
    return (BrokerSettings(address: transport.value, environment: context.environment, currentDirectory: context.currentDirectory), site.value)
  }

  /// How long to wait for the broker when only reading it.
  private var readTimeout: Duration { min(options.wait, .seconds(30)) }

  /// `apply --fleet` over MQTT: publish, then wait (`--wait`) for the agents' statuses.
  func applyOverBroker(_ settings: ApplyRun.Settings, broker: (settings: BrokerSettings, site: String)) async throws -> ExitStatus {
    if !settings.autoApprove { try confirmPublishing(loaded.members, broker: broker) }
    let rows = try await publish(loaded.members, settings, broker: broker)
    let report = FleetReport(operation: "apply", fleetFile: fleetFile, watches: rows)
    // A small fleet's table after its lines; a large one gets the grouped review (`finish`).
    let small = !json && rows.count <= FleetReviewOptions().tableLimit
    if small { context.stdout.write("\n" + report.table()) }
    let status = try finish(report, changed: false, printed: small)
    // Interrupted while waiting: not done, whatever the rows (pending alone would exit 0).
    if stop.isRequested {
      let waiting = rows.filter { if case .pending = $0.verdict { true } else { false } }.count
      throw CommandFailure("interrupted while waiting for the agents: \(waiting) of \(counted(rows.count, "watch", "watches")) had not reported on "
        + "the revision; it stays published and their agents apply it. 'tsapply status --fleet \(ShellWord.quoted(fleetFile)) --wait 5m' waits for them")
    }
    return status
  }

  /// Asks once before publishing the desired state of `members` (`note` after the first line);
  /// only 'yes' approves.
  /// - Throws: `CommandFailure` when declined or without a terminal.
  func confirmPublishing(_ members: [FleetMember], broker: (settings: BrokerSettings, site: String), note: String = "") throws {
    guard context.stdinIsTerminal else {
      throw CommandFailure("refusing to apply without confirmation: standard input is not a terminal.\n"
        + "  Re-run with --auto-approve (an unsafe plan also needs --allow-destroy).")
    }
    let count = members.count
    let names = members.map(\.name).joined(separator: ", ")
    context.stdout.write("""
      tsapply will publish the desired state of \(count) watch\(count == 1 ? "" : "es") (\(names)) to \(broker.settings.address),
      site \(broker.site)\(note); their agents plan and apply it. An agent refuses an unsafe plan (a cleared list,
      an emergency contact removed or changed, SOS off, a custom reminder deleted) unless --allow-destroy is given.

      Do you want to publish it?
        Only 'yes' will be accepted to approve.

        Enter a value: 
      """)
    guard context.readLine()?.trimmingCharacters(in: .whitespaces) == "yes" else {
      throw CommandFailure("Apply cancelled: nothing was published.")
    }
    context.stdout.write("\n")
  }

  /// Publishes the desired documents of `members`, waits (`--wait`) for their agents'
  /// statuses, and prints a line per watch; the rows (a watch whose manifests have errors is
  /// not published: its row says why).
  /// - Throws: `CommandFailure` when the broker cannot be reached (nothing was published).
  func publish(_ members: [FleetMember], _ settings: ApplyRun.Settings,
               broker: (settings: BrokerSettings, site: String)) async throws -> [FleetWatchReport] {
    let printer = SectionPrinter(context: context, total: members.count, verb: "waiting for", quiet: true, document: json)
    var rows: [FleetWatchReport]
    // Ctrl-C (SIGTERM, SIGHUP) once the documents go out ends the wait, not the process: what
    // each watch reported so far is printed, the rest pending (it exited 130 and said nothing
    // of a publication its agents went on to apply: fresh-eyes finding).
    stop.begin()
    defer { stop.end() }
    do {
      rows = try await FleetPublication.apply(members, site: broker.site, settings: broker.settings,
                                              allowDestroy: settings.allowDestroy, wait: options.wait, stop: stop) { printer.progress($0) }
      // An agent's advice names the fleet file with a placeholder it cannot fill in (fresh-eyes finding: 'FLEET-FILE' echoed).
      for index in rows.indices {
        rows[index].verdict = rows[index].verdict.mappingReason { WatchStatus.naming(fleetFile: fleetFile, in: $0) }
        // An applied revision's words (what it undid on the watch, a change made during it) are
        // a warning of the watch's own, which the grouped review shows and groups by, as a line
        // per watch says them (fresh-eyes finding: above 20 watches, "applied" and no word of
        // the wearers' contacts the agents removed).
        switch rows[index].verdict {
        case .applied, .noChanges:
          if case .string(let note)? = rows[index].details["note"] { rows[index].section = "Warning: " + ControlCharacters.escaped(masked(note)) + "\n" }
        default: break
        }
      }
    } catch {
      printer.end()
      throw CommandFailure("cannot publish to \(broker.settings.address): \(error); nothing was published")
    }
    printer.end()
    let problems = manifestProblems()
    // A line per watch for a small fleet; a large one gets the grouped review (`finish`), where
    // watches with the same result and reason are one line (the revisions are in --json).
    let small = rows.count <= FleetReviewOptions().tableLimit
    if !json, small {
      for row in rows {
        var line = "\(ControlCharacters.escaped(row.name)): \(row.verdict.word)"
        if case .string(let revision) = row.details["revision"] { line += " (revision \(revision))" }
        switch row.verdict {
        case .pending(let reason), .retrying(let reason), .failed(let reason), .refused(let reason), .unknown(let reason):
          line += ": " + ControlCharacters.escaped(masked(reason))
        // "No changes" as its offline agent last reported: said so, not as a fact of now; an
        // applied revision's words (what it undid on the watch).
        case .noChanges, .applied: if case .string(let note) = row.details["note"] { line += ": " + ControlCharacters.escaped(masked(note)) }
        default: break
        }
        context.stdout.write(line + "\n" + (problems[row.name]?.text ?? ""))
      }
    }
    return replacing(rows, with: problems)
  }

  /// `plan --fleet` over MQTT: each watch's merged manifests planned against its state as its
  /// agent last read it (`ReportedState`, through the planner a direct plan uses), shown as a
  /// direct plan is (the grouped review, `--json`, `--markdown`, `--summary`), each plan saying
  /// whose reading it was and how old. A watch whose agent reported no state, whose manifests
  /// have errors, or whose agent failed or is retrying its revision gets what its status says:
  /// to publish, pending, retrying, failed; so does one whose desired document the broker lost
  /// (to publish). Drift since the agent's last apply cannot be told
  /// here (its record is on the agent's side). Exit status as without a broker.
  func planOverBroker(detailedExitCode: Bool, markdown: Bool, broker: (settings: BrokerSettings, site: String)) async throws -> ExitStatus {
    let site = try await statusRows(broker, states: true)
    let rows = site.rows
    let now = Date()
    let reports = zip(loaded.members, rows).map { member, row -> FleetWatchReport in
      let verdict = row.planVerdict
      // Planned against the agent's reading where publishing is what would change the watch: not
      // for a watch already published and waited for (pending), failed, retrying or unreachable.
      let plannable: Bool = switch verdict {
      case .noChanges, .publish, .changes: true
      default: false
      }
      if plannable, case .success(let document) = member.document, let reported = site.reportedStates[member.watch.watchID] {
        var planned = planned(member, document: document, against: reported, now: now, agentOnline: row.agent?.online,
                              confirmedAt: row.lastSeen.flatMap(InternetTime.date))
        // A broker that lost the desired document needs it published whatever the watch holds.
        if row.state == "no desired document", planned.verdict == .noChanges { planned.verdict = verdict }
        // "No changes" as an offline agent last read the watch is not known of the watch now
        // (a wearer may have changed it since): not known, as `drift --fleet` says, and not
        // exit 0 (fresh-eyes finding: `plan --detailed-exitcode` 0 for a watch that differed).
        else if planned.verdict == .noChanges, row.agent?.online == false {
          planned.verdict = .unknown("no changes when its agent last read it, but the agent is offline: what the watch holds now is not known")
        }
        return planned
      }
      return FleetWatchReport(name: row.name, device: row.device, verdict: verdict, elapsed: .zero)
    }
    let problems = manifestProblems()
    let report = FleetReport(operation: "plan", fleetFile: fleetFile, watches: replacing(reports, with: problems))
    let changed = detailedExitCode && report.watches.contains { $0.verdict.hasChanges }
    if markdown {
      context.stdout.write(report.markdown(renderer: HumanPlanRenderer(color: false, redact: redact, fingerprints: fingerprints),
                                           options: reviewOptions))
      return try finish(report, changed: changed, printed: true)
    }
    // Without any reported state and above 20 watches, the grouped review instead of a row per
    // watch (`status --fleet` has them); with one, the review a direct plan prints.
    guard rows.count <= FleetReviewOptions().tableLimit, !reports.contains(where: { $0.basis != nil }) else {
      return try finish(report, changed: changed)
    }
    if !json { context.stdout.write(FleetStatus.table(rows, withAgents: true) + problemsText(problems) + "\n" + report.totals) }
    return try finish(report, changed: changed, printed: true)
  }

  /// The row of `member` planned against `reported` (its `document` through the planner, as a
  /// direct plan's), `now` giving the reading's age (from `confirmedAt`, the agent's last read,
  /// when later); a manifest that does not fit the watch's
  /// platform fails the watch with its diagnostics, as a direct plan does.
  private func planned(_ member: FleetMember, document: ManifestDocument, against reported: ReportedState, now: Date,
                       agentOnline: Bool?, confirmedAt: Date?) -> FleetWatchReport {
    let basis = FleetStateBasis(reported, now: now, agentOnline: agentOnline, confirmedAt: confirmedAt)
    var row: FleetWatchReport
    do {
      let plan = try reported.plan(document)
      row = FleetWatchReport(name: member.name, device: member.device, verdict: plan.isEmpty ? .noChanges : .changes(plan.counts),
                             elapsed: .zero, details: planDetails(plan), plan: plan, manifests: member.manifestFiles)
    } catch {
      let (text, failed) = failure(.engine(error), member: member, elapsed: .zero)
      row = failed
      row.section = text
      row.manifests = member.manifestFiles
    }
    row.basis = basis
    row.details["reported_state"] = basis.json
    return row
  }

  /// `drift --fleet` over MQTT: drift and pending as the agents last reported them, each watch
  /// read as `status --fleet` reads it (`FleetStatusRow.driftVerdict`).
  func driftOverBroker(pendingCounts: Bool, broker: (settings: BrokerSettings, site: String)) async throws -> ExitStatus {
    let site = try await statusRows(broker, states: true)
    let rows = site.rows
    let reports = zip(loaded.members, rows).map { member, row in
      var report = FleetWatchReport(name: row.name, device: row.device,
                                    verdict: row.driftVerdict(reported: site.reportedStates[member.watch.watchID],
                                                              document: try? member.document.get()).mappingReason(masked),
                                    elapsed: .zero)
      // As `status --fleet --json` says them: whether its drift puts SOS at risk, and whether
      // the broker's document is older than the one its agent handled.
      if row.sosAtRisk { report.details["sos_at_risk"] = .bool(true) }
      if row.staleDesired { report.details["stale_desired"] = .bool(true) }
      return report
    }
    let problems = manifestProblems()
    let report = FleetReport(operation: "drift", fleetFile: fleetFile, watches: replacing(reports, with: problems), pendingCounts: pendingCounts)
    let changed = zip(rows, reports).contains { row, report in
      if (row.drift ?? 0) > 0 { return true }
      guard pendingCounts else { return false }
      // Counted on the state its agent reported: pending only when these manifests change it.
      switch report.verdict {
      case .drift(_, let pending, _) where [FleetStatusRow.noDesiredDocument, "invalid"].contains(row.state), .invalid(_, _, let pending):
        return pending > 0
      default:
        return (row.pending ?? 0) > 0 || FleetStatusRow.notHoldingManifests.contains(row.state) || (row.state == "pending" && row.drift == nil)
      }
    }
    guard rows.count <= FleetReviewOptions().tableLimit else { return try finish(report, changed: changed) }
    // Pending as the report counts it: for a watch whose agent does not hold these manifests,
    // what they would change on the state it last reported (not `-` beside an exit status 2).
    let shown = zip(rows, reports).map { row, report -> FleetStatusRow in
      var row = row
      // Also where its agent reported a count of its own against the revision it holds (`no
      // desired document`): the table says what the JSON and the exit status count (fresh-eyes
      // fe105 #3: Pending 0 in the table, 1 in `--json`).
      if FleetStatusRow.notHoldingManifests.contains(row.state) {
        switch report.verdict {
        case .drift(_, let pending, _), .invalid(_, _, let pending): row.pending = pending
        default: break
        }
      }
      return row
    }
    if !json {
      context.stdout.write(FleetStatus.table(shown, withAgents: true) + problemsText(problems) + "\n" + FleetStatus.brokerDriftCaveat + report.totals)
    }
    return try finish(report, changed: changed, printed: true)
  }

  /// The watches whose own manifests have errors, by name: the diagnostics as text (with their
  /// source lines) and the report row carrying them (`diagnostics`, `error`), as the fleet
  /// commands without a broker show them. Nothing of these watches is published.
  func manifestProblems() -> [String: (text: String, report: FleetWatchReport)] {
    var problems: [String: (text: String, report: FleetWatchReport)] = [:]
    for member in loaded.members {
      guard case .failure(let problem) = member.document else { continue }
      var (_, report) = failure(.input(problem), member: member, elapsed: .zero)
      let text = diagnosticsText(problem.diagnostics, member: member)
      report.section = text
      report.manifests = member.manifestFiles
      problems[member.name] = (text, report)
    }
    return problems
  }

  /// `reports` with the row of each watch in `problems` replaced by the one carrying its diagnostics.
  func replacing(_ reports: [FleetWatchReport], with problems: [String: (text: String, report: FleetWatchReport)]) -> [FleetWatchReport] {
    reports.map { problems[$0.name]?.report ?? $0 }
  }

  /// `problems`' sections in fleet order, after a status table.
  private func problemsText(_ problems: [String: (text: String, report: FleetWatchReport)]) -> String {
    loaded.members.compactMap { member in problems[member.name].map { "\n" + header(member) + $0.text } }.joined()
  }

  /// Every member's status on the broker (with `settleWithin`, once the site settled or that
  /// time ended: `FleetStatus.broker`).
  /// With `states`, the watches' reported states too (`FleetSiteStatus.reportedStates`).
  func statusRows(_ broker: (settings: BrokerSettings, site: String), settleWithin: Duration? = nil,
                  states: Bool = false) async throws -> FleetSiteStatus {
    do {
      var site = try await FleetStatus.broker(loaded.members, site: broker.site, settings: broker.settings, timeout: readTimeout,
                                              settleWithin: settleWithin, states: states)
      site.naming(fleetFile: fleetFile)
      return site
    } catch {
      throw CommandFailure("cannot read the statuses from \(broker.settings.address): \(error)")
    }
  }

  /// `text` with phone-like runs masked under `--redact`.
  func masked(_ text: String) -> String { redact ? PhoneRedaction.redactPhoneLike(text) : text }
}
