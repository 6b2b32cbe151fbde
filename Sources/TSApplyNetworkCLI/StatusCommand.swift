import TSApplyCLI
import Foundation
import TSFleet
import TSModel

/// `tsapply status --fleet FILE`: where every watch of a fleet stands — last applied, last
/// seen, drift and pending — read from tsapply's records and the watches (read-only), or, for a
/// fleet over MQTT, from its agents' statuses on the broker.
struct StatusCommand: Command {
  static let name = "status"
  static let abstract = "Show every watch of a fleet: last applied, last seen, drift, pending (read-only)."
  static let usage = "--fleet FILE [options]"
  static let discussion = """
    Shows the fleet's staged rollout too, when it has had one: its phase (interrupted when the
    process running it ended), its wave, which watches have the new revision and which do not,
    as read from the watches (or their agents); with --watch, of the watches selected only.
    Reads each watch (no lock, nothing written) and its record of the last apply; for a fleet
    with transport: mqtt://…, reads the agents' retained statuses and presence from the broker
    instead (credentials from TSAPPLY_MQTT_USERNAME, TSAPPLY_MQTT_PASSWORD, TSAPPLY_MQTT_CA_FILE).
    The view of the site must be complete: when the broker's retained statuses cannot all be
    read within the wait (at most 30s), status says the view is incomplete and exits 1.
    With --wait DURATION (over MQTT), waits until the site settles — no watch applying or
    retrying, every agent that announced itself online — or DURATION ends, then shows it.
    Exit status 0, or 1 when the fleet file or the broker cannot be read, when a watch failed
    (unreachable, invalid, its records unusable, refused or failed by its agent, or, over
    MQTT, held by its agent to a desired document the broker no longer has: no desired
    document; 'tsapply apply --fleet' publishes it again), when what a watch holds is not
    known (over MQTT: its agent offline, no agent has announced it: no status, or pending with
    its agent offline and nothing saying what of the revision reached it), when the fleet's
    staged rollout was interrupted (its process ended mid-way), or when,
    with --wait, the site had not settled at the end (the message says what was still going on,
    also when a watch failed besides).
    """
  static let options: [OptionSpec] = FleetOptions.specs + [
    OptionSpec(["--json", "-json"], help: "Print the status as JSON."),
    OptionSpec(["--wait", "-wait"], value: "DURATION",
               help: "With --fleet over MQTT, wait up to DURATION for the site to settle (no watch applying or retrying, every agent online)."),
  ]

  var fleet: FleetOptions
  var json: Bool
  /// `--wait`: how long to wait for the site to settle; `nil` to show it as it is.
  var settleWithin: Duration?

  init(_ arguments: ParsedArguments) throws(UsageError) {
    fleet = try FleetOptions(arguments, command: Self.name)
    json = arguments.has("--json")
    settleWithin = arguments.value("--wait") != nil ? fleet.wait : nil
    guard fleet.file != nil else { throw UsageError("status needs --fleet FILE (the fleet file, e.g. fleet.yaml)") }
  }

  func run(_ context: CommandContext) async throws -> ExitStatus {
    let session = try FleetSession.load(fleet, redact: false, json: json, context: context)
    var rows: [FleetStatusRow]
    var unsettled: String?
    var servedByMany: String?
    if let broker = session.broker {
      let site = try await session.statusRows(broker, settleWithin: settleWithin)
      rows = site.rows
      unsettled = settleWithin == nil ? nil : site.unsettled
      servedByMany = site.servedByManyWords
    } else {
      if settleWithin != nil {
        throw CommandFailure("status --wait waits for a fleet's agents; \(session.fleetFile) has no transport: mqtt://… (its watches are read directly)")
      }
      let printer = SectionPrinter(context: context, total: session.loaded.members.count, verb: "reading", quiet: true, document: json)
      rows = await FleetStatus.direct(session.loaded.members, runner: FleetRunner(engine: session.engine, parallelism: fleet.parallelism)) {
        printer.progress($0)
      }
      printer.end()
    }
    // The fleet's staged rollout, when it has had one: where it stands (docs/fleet.md "Staged rollouts").
    // Its summary counts what the watches hold now (the rows above), not only what its waves recorded.
    var rollout: RolloutRecord?
    do { rollout = try session.rolloutStore.load() } catch { throw CommandFailure(error.description) }
    // With --watch, the summary is of the watches read only (and says so); the revision is the whole fleet's.
    rollout?.observe(rows, members: session.loaded.everyMember, read: fleet.watches.isEmpty ? nil : Set(rows.map(\.name)))
    // A plain `apply --fleet` is refused while the rollout is paused or running: the advice is its own.
    let publishAdvice = "Publish the manifests again with 'tsapply apply --fleet'"
    let instead = rollout.flatMap { rollout -> String? in
      guard rollout.phase.isResumable else { return nil }
      if rollout.isHeldElsewhere { return "The fleet's staged rollout is \(rollout.phaseWord) in another process, which publishes the manifests wave by wave" }
      // Manifests edited since it started: `--continue` is refused too.
      return "The fleet's staged rollout is \(rollout.phaseWord), so a plain 'tsapply apply --fleet' is refused: "
        + (rollout.manifestsChanged ? "its manifests changed since it started, so end it with 'tsapply apply --fleet \(session.fleetFile) --abort' and apply again"
           : "continue it with 'tsapply apply --fleet \(session.fleetFile) --continue', or end it with '--abort' and apply again")
    }
    if let instead {
      rows = rows.map { row in
        var row = row
        row.note = row.note?.replacingOccurrences(of: publishAdvice, with: instead)
        return row
      }
    }
    context.stdout.write(json ? FleetStatus.json(rows, fleetFile: session.fleetFile, rollout: rollout?.json)
                              : FleetStatus.table(rows, withAgents: session.broker != nil)
                                + (rollout.map { "\n" + $0.summary(fleetFile: session.fleetFile) } ?? ""))
    // Both, when both: failed watches and what was still going on when --wait ended.
    var problems: [String] = []
    // A broker that lost the desired documents is not the watches failing: said as such.
    let failed = rows.filter(\.isFailure)
    let lost = failed.filter { $0.state == FleetStatusRow.noDesiredDocument }.map(\.name)
    let partly = rows.filter(\.partlyApplied).map(\.name)
    let refused = failed.filter { $0.state == "refused" }.map(\.name)
    let refusedHoldingPart = failed.filter { $0.refusedHoldingPart != nil }.map(\.name)
    let staleDesired = failed.filter(\.staleDesired).map(\.name)
    // What a watch holds now is not known (`FleetStatusRow.isNotKnown`): the view is not the site.
    let offline = rows.filter(\.isNotKnown).map(\.name)
    if !failed.isEmpty || !partly.isEmpty || !offline.isEmpty {
      // A watch out of reach (directly, or its agent cannot read it) is said as such, not
      // "failed" (fresh-eyes finding: "10 of 40 watches failed" for watches a read could not
      // reach once); read directly, one with manifest errors too (over MQTT that state is its
      // agent's, and its note says why).
      let direct = session.broker == nil
      let unreachable = failed.filter(\.isOutOfReach).map(\.name)
      let invalid = direct ? failed.filter { $0.state == "invalid" }.map(\.name) : []
      let named = Set(lost + refused + staleDesired + unreachable + invalid)
      problems.append(FleetSession.failed(failed.map(\.name).filter { !named.contains($0) }, unreachable: unreachable, invalid: invalid,
                                          refused: refused, refusedHoldingPart: refusedHoldingPart,
                                          unknown: offline, partlyPending: partly, noDesired: lost, staleDesired: staleDesired, of: rows.count,
                                          agents: session.broker != nil, operation: "status", fleetFile: session.fleetFile).message)
    }
    // A rollout whose process ended mid-way: the fleet is mixed and nothing goes on with it
    // until someone continues or aborts it (fresh-eyes finding: exit 0 beside "interrupted").
    if let rollout, rollout.isInterrupted {
      problems.append("the rollout of \(session.fleetFile) was interrupted (the process running it ended): continue it with "
        + "'tsapply apply --fleet \(ShellWord.quoted(session.fleetFile)) --continue' or abort it with "
        + "'tsapply apply --fleet \(ShellWord.quoted(session.fleetFile)) --abort'")
    }
    if let unsettled, let settleWithin {
      problems.append("the site did not settle within \(Int(settleWithin.seconds))s: \(unsettled)")
    }
    if let servedByMany { problems.append(servedByMany) }
    if !problems.isEmpty {
      let words = problems.joined(separator: "; ")
      throw CommandFailure(instead.map { words.replacingOccurrences(of: publishAdvice, with: $0) } ?? words)
    }
    return .success
  }
}
