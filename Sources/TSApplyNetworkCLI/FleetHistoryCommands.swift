import TSApplyCLI
import Foundation
import TSApply
import TSEngine
import TSFleet
import TSModel
import TSPlan

/// `history --fleet` and `restore --fleet --at TIME`: the apply history of every watch of a
/// fleet, and every watch back to the state before the first apply after a time (docs/apply.md
/// "History"). A watch's manifests are not needed for either: its history and backups are
/// tsapply's records.
extension FleetSession {
  /// Opens each member's watch (at most `-parallelism` at once) and runs `body` on it; the
  /// results in fleet order, a watch that cannot be opened as the error's text.
  private func eachWatch<Value: Sendable>(_ body: @escaping @Sendable (FleetMember, Watch) async throws -> Value) async
    -> [(member: FleetMember, result: Result<Value, CommandFailure>)] {
    let engine = self.engine
    let members = loaded.members
    var results: [Int: Result<Value, CommandFailure>] = [:]
    var next = 0
    await withTaskGroup(of: (Int, Result<Value, CommandFailure>).self) { group in
      func start(_ index: Int) {
        group.addTask {
          let member = members[index]
          do {
            let watch = try await engine.open(member.device, mayCreate: false)
            do {
              let value = try await body(member, watch)
              await watch.close()
              return (index, .success(value))
            } catch {
              await watch.close()
              throw error
            }
          } catch let failure as CommandFailure {
            return (index, .failure(failure))
          } catch {
            return (index, .failure(CommandFailure("\(error)")))
          }
        }
      }
      while next < min(options.parallelism, members.count) { start(next); next += 1 }
      while let (index, result) = await group.next() {
        results[index] = result
        if next < members.count, !stop.isRequested { start(next); next += 1 }
      }
    }
    return members.indices.map { (members[$0], results[$0] ?? .failure(CommandFailure("not started: the run was interrupted"))) }
  }

  /// A fleet over MQTT keeps each watch's history where its agent runs (the agent applies it):
  /// `command` is refused here, saying so.
  private func refuseOverBroker(_ command: String) throws {
    guard let broker else { return }
    throw CommandFailure("\(fleetFile) reaches its watches through agents on \(broker.settings.address): each watch's history and backups "
      + "are kept where its agent runs; run 'tsapply \(command) --device SPEC' there (with the agent's TSAPPLY_STATE_DIR)")
  }

  /// `tsapply history --fleet`: each watch's history, checked; exit 1 when one was changed
  /// other than by tsapply or cannot be read.
  func history() async throws -> ExitStatus {
    try refuseOverBroker("history")
    let context = self.context
    let results = await eachWatch { _, watch in (try HistoryCommand.read(watch), watch.history.path) }
    var bad: [String] = []
    var objects: [JSONValue] = []
    for (member, result) in results {
      switch result {
      case .success(let (read, path)):
        if !read.isIntact { bad.append(member.name) }
        if json {
          guard case .object(var fields) = read.json else { continue }
          fields["name"] = .string(member.name)
          fields["device"] = .string(member.device)
          objects.append(.object(fields))
        } else {
          context.stdout.write("\n" + header(member) + HistoryCommand.text(read, watch: member.device, path: CLIWatch.relative(path, context)))
        }
      case .failure(let failure):
        bad.append(member.name)
        if json {
          objects.append(.object(["name": .string(member.name), "device": .string(member.device), "error": .string(failure.message)]))
        } else {
          context.stdout.write("\n" + header(member) + "Error: \(failure.message)\n")
        }
      }
    }
    if json {
      context.stdout.write(canonicalJSON(JSONValue.object(["format_version": .string("1"), "fleet": .string(fleetFile), "watches": .array(objects)])))
    }
    if !bad.isEmpty {
      throw CommandFailure("the history of \(bad.count) of \(counted(results.count, "watch", "watches")) was changed other than by tsapply or cannot be read: \(bad.joined(separator: ", "))")
    }
    return .success
  }

  /// `tsapply restore --fleet --at TIME --auto-approve`: each watch back to the state before
  /// its first apply after `time`, through the safety gate (an unsafe restore needs
  /// `--allow-destroy`), with a section per watch and the summary table.
  func restore(at time: Date, text: String, settings: ApplyRun.Settings) async throws -> ExitStatus {
    try refuseOverBroker("restore --at")
    guard settings.autoApprove else {
      throw CommandFailure("restore --fleet needs --auto-approve (each watch goes through the safety gate; an unsafe restore needs --allow-destroy too)")
    }
    stop.begin()
    defer { stop.end() }
    let session = self
    let results = await eachWatch { member, watch -> (text: String, row: FleetWatchReport) in
      let (section, output) = session.sectionContext()
      guard let (backup, file) = try RestoreCommand.backup(before: time, text: text, watch: watch, context: section) else {
        return (output.text + "Nothing to restore: no apply changed it after \(text).\n",
                FleetWatchReport(name: member.name, device: member.device, verdict: .noChanges, elapsed: .zero))
      }
      // Through the same path as apply --fleet (`applyOne`, `appliedRow`): a restore that
      // stopped part-way says in Changes what reached the watch, as its history does.
      let started = ContinuousClock.now
      let empty = Plan(manifestFile: file, profile: watch.capabilities.profile, priorStateDigest: "", resourceChanges: [])
      let result = await session.applyOne(member, watch: watch, settings: settings, command: "restore", rerunArgument: file,
                                          manifestSource: nil, empty: empty) { options throws(EngineError) in
        try await watch.restore(backup, file: file, options: options)
      }
      let (text, row) = session.appliedRow(result, member: member, elapsed: ContinuousClock.now - started)
      return (output.text + text, row)
    }
    var rows: [FleetWatchReport] = []
    for (member, result) in results {
      let (text, row) = (try? result.get()) ?? ("Error: \((result.failure?.message) ?? "")\n",
                                                FleetWatchReport(name: member.name, device: member.device,
                                                                 verdict: .failed(result.failure?.message ?? ""), elapsed: .zero))
      if !json { context.stdout.write("\n" + header(member) + text) }
      rows.append(row)
    }
    return try finish(FleetReport(operation: "restore", fleetFile: fleetFile, watches: rows), changed: false)
  }
}

extension Result {
  /// The error, when this is one.
  fileprivate var failure: Failure? { if case .failure(let error) = self { error } else { nil } }
}
