import Foundation
import TSApply
import TSManifest
import TSModel
import TSPlan

/// `tsapply apply [FILE | PLANFILE]`: makes the watch match the manifest.
struct ApplyCommand: Command {
  static let name = "apply"
  static let abstract = "Make the watch match the manifest (shows the plan and asks first)."
  static let usage = "[options] [FILE | PLANFILE]"
  static let positionals: CompletionValues = .manifests
  static let discussion = """
    With a manifest (default watch.yaml), apply plans, shows the plan and asks for confirmation;
    only 'yes' is accepted. --auto-approve skips the question; without a terminal and without
    --auto-approve it refuses instead of waiting. With a saved plan from 'tsapply plan -out FILE'
    it applies exactly that plan without asking, and refuses it when stale.
    Before the first write the watch's state is saved to .tsapply/backups/ (mode 0600);
    'tsapply restore BACKUP' puts it back.
    """
  static let options: [OptionSpec] = [ApplyRun.autoApproveSpec, DeviceOption.spec] + PlanOutputOptions.specs

  var file: String
  var autoApprove: Bool
  var deviceSpec: String?
  var output: PlanOutputOptions

  init(_ arguments: ParsedArguments) throws(UsageError) {
    file = try ManifestArgument.file(from: arguments)
    autoApprove = arguments.has("--auto-approve")
    deviceSpec = DeviceOption.value(in: arguments)
    output = PlanOutputOptions(arguments)
  }

  func run(_ context: CommandContext) async throws -> ExitStatus {
    // Only a file that reads the same twice is looked at as a saved plan: a pipe's bytes would
    // be gone for the manifest read that follows.
    let source = ManifestInput.source(file, context: context)
    if file != "-", source.isRereadable, case .success(let bytes) = source.read(), let saved = try SavedPlan.parse(bytes, path: file) {
      return try await applySaved(saved, context: context)
    }
    let planned = try await PlannedManifest.make(file, deviceSpec: deviceSpec, redact: output.redact, context: context)
    let apply = ApplyRun(session: planned.session, output: output, context: context, rerunArgument: file)
    return try await apply.run(planned.plan, manifest: planned.manifest, confirm: !autoApprove, state: planned.state)
  }

  /// Applies a saved plan to the watch it was made for (or to `--device`, which must be that
  /// watch), after checking that neither the manifest nor the watch changed and that planning
  /// the manifest again gives exactly the saved changes — so an edited plan file is refused, and
  /// only what the planner (with every check) produces is ever written.
  private func applySaved(_ saved: SavedPlan, context: CommandContext) async throws -> ExitStatus {
    let chosen = deviceSpec ?? context.environment["TSAPPLY_DEVICE"]
    let session = try await WatchSession.open(spec: chosen ?? saved.device, context: context)
    if let device = saved.device, device != session.deviceIdentity {
      throw CommandFailure("\(file) was made for the watch \(device); it cannot be applied to \(session.deviceIdentity)")
    }
    let manifestBytes = try? ManifestSource.file(path: saved.manifestPath, displayName: saved.plan.manifestFile).read().get()
    let state = try await session.reconciler.readState()
    try saved.checkFresh(manifestBytes: manifestBytes, state: state)
    guard let bytes = manifestBytes else { return .failure }
    let loaded = ManifestLoader.load(bytes: bytes, file: saved.plan.manifestFile)
    guard let manifest = loaded.manifest else {
      try report(loaded.diagnostics, source: bytes, redact: output.redact, context: context)
      return .failure
    }
    let again = session.reconciler.capabilities
    guard let replanned = Planner.plan(manifest, state: state, capabilities: again).plan,
          replanned.resourceChanges == saved.plan.resourceChanges else {
      throw CommandFailure("\(file) does not hold the changes its manifest gives for this watch (was it edited?); "
        + "run 'tsapply plan -out \(file)' again")
    }
    let apply = ApplyRun(session: session, output: output, context: context,
                         rerunArgument: saved.plan.manifestFile)
    return try await apply.run(saved.plan, manifest: manifest, confirm: false, state: state)
  }

}

/// Shows a plan, asks for confirmation when needed, applies it with progress lines, and prints
/// the outcome. Shared by `apply` and `restore`.
struct ApplyRun {
  /// `--auto-approve`, shared by `apply` and `restore`.
  static let autoApproveSpec = OptionSpec(["--auto-approve", "-auto-approve"], help: "Apply without asking for confirmation.")

  var session: WatchSession
  var output: PlanOutputOptions
  var context: CommandContext
  /// The command running the apply (`apply` or `restore`), for messages.
  var command: String = "apply"
  /// The file argument that reruns it (the manifest, the saved plan or the backup), for hints.
  var rerunArgument: String = ManifestArgument.defaultFile

  /// Runs the apply; returns `.success`, or throws a `CommandFailure` describing what happened.
  /// - Parameter state: The watch state the plan was made from; every list is checked against it
  ///   just before it is written, so a change made meanwhile stops the apply.
  func run(_ plan: Plan, manifest: Manifest, confirm: Bool, state: DeviceState) async throws -> ExitStatus {
    let renderer = output.renderer(context)
    context.stdout.write(renderer.render(plan))
    if plan.isEmpty {
      context.stdout.write("\nApply complete! Resources: 0 added, 0 changed, 0 destroyed.\n")
      return .success
    }
    if confirm { try askForConfirmation() }
    let report = try await execute(plan, manifest: manifest, state: state, renderer: renderer)
    if let finalState = report.finalState { session.recordApplied(finalState, context: context) }
    context.stdout.write("\nApply complete! Resources: \(report.added) added, \(report.changed) changed, \(report.destroyed) destroyed.\n")
    return .success
  }

  private func execute(_ plan: Plan, manifest: Manifest, state: DeviceState,
                       renderer: HumanPlanRenderer) async throws(CommandFailure) -> ApplyReport {
    let context = self.context
    let verbose = context.stdoutIsTerminal
    let actions = Dictionary(plan.resourceChanges.map { ($0.address, $0.action) }, uniquingKeysWith: { first, _ in first })
    let progress: @Sendable (ReconcileEvent) -> Void = { event in
      ApplyRun.print(event, actions: actions, verbose: verbose, to: context)
    }
    let interrupt = InterruptWatch()
    interrupt.start { context.stderr.write("\nInterrupt received. Finishing the current device call, then stopping (Ctrl-C again to quit at once)...\n") }
    defer { interrupt.stop() }
    do {
      return try await session.reconciler.apply(plan, manifest: manifest, state: state,
                                                backupDirectory: session.backupDirectory, now: Date(),
                                                shouldStop: { interrupt.interrupted }, progress: progress)
    } catch {
      throw CommandFailure(describe(error, renderer: renderer))
    }
  }

  private func askForConfirmation() throws {
    guard context.stdinIsTerminal else {
      let alternative = command == "apply"
        ? ", or save the plan with 'tsapply plan -out FILE' and run 'tsapply apply FILE'" : ""
      throw CommandFailure("refusing to \(command) without confirmation: standard input is not a terminal.\n"
        + "  Re-run with --auto-approve\(alternative).")
    }
    context.stdout.write("""

      Do you want to perform these actions?
        tsapply will perform the actions described above.
        Only 'yes' will be accepted to approve.

        Enter a value: 
      """)
    let answer = context.readLine()?.trimmingCharacters(in: .whitespaces)
    guard answer == "yes" else { throw CommandFailure("\(command == "apply" ? "Apply" : "Restore") cancelled: the watch was not touched.") }
    context.stdout.write("\n")
  }

  private static func print(_ event: ReconcileEvent, actions: [ResourceAddress: Action], verbose: Bool,
                            to context: CommandContext) {
    switch event {
    case .backedUp(let path):
      context.stdout.write("Backed up the watch's current state to \(relative(path, context)) (restore with 'tsapply restore \(relative(path, context))').\n")
    case .apply(.stepStarted(let step)):
      for address in step.addresses {
        context.stdout.write("\(ControlCharacters.escaped(address.rawValue)): \(verb(actions[address], done: false))...\n")
      }
    case .apply(.deviceCall(let name, let seconds)):
      if verbose { context.stdout.write("  device call \(name) done [\(elapsedText(seconds)) elapsed]\n") }
    case .apply(.stepFinished(let step, let seconds)):
      for address in step.addresses {
        context.stdout.write("\(ControlCharacters.escaped(address.rawValue)): \(verb(actions[address], done: true)) [\(elapsedText(seconds)) elapsed]\n")
      }
    }
  }

  private static func elapsedText(_ seconds: Double) -> String { String(format: "%.1fs", seconds) }

  private static func verb(_ action: Action?, done: Bool) -> String {
    switch action {
    case .create: done ? "Creation complete" : "Creating"
    case .delete: done ? "Destruction complete" : "Destroying"
    case .update, nil: done ? "Modifications complete" : "Modifying"
    }
  }

  private func describe(_ error: ApplyError, renderer: HumanPlanRenderer) -> String {
    switch error {
    case .partial(let failure, let backupPath):
      var text = "apply stopped part-way: \(failure.cause)\n"
      text += "  applied:      " + list(failure.applied) + "\n"
      text += "  failed:       " + list(failure.failed) + "\n"
      text += "  not applied:  " + list(failure.notApplied) + "\n"
      let again = "tsapply \(command)\(session.deviceArgument) \(shellQuoted(rerunArgument))"
      text += "Run '\(again)' again to finish, or 'tsapply restore \(shellQuoted(ApplyRun.relative(backupPath, context)))' to undo."
      return text
    case .verificationFailed(let remaining, let diagnostics, let backupPath):
      var text = "the watch does not match the manifest after applying; reading it back shows these differences:\n"
      if let remaining { text += renderer.render(remaining) }
      text += diagnostics.map { "  \($0)\n" }.joined()
      text += "Backup of the previous state: \(ApplyRun.relative(backupPath, context))"
      return text
    default:
      return "\(error)"
    }
  }

  private func list(_ addresses: [ResourceAddress]) -> String {
    addresses.isEmpty ? "(none)" : addresses.map(\.rawValue).joined(separator: ", ")
  }

  static func relative(_ path: String, _ context: CommandContext) -> String {
    let prefix = context.currentDirectory.hasSuffix("/") ? context.currentDirectory : context.currentDirectory + "/"
    return path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : path
  }
}
