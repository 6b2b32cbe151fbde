import Foundation
import TSApply
import TSDevice
import TSEngine
import TSManifest
import TSModel
import TSPlan

/// `tsapply apply [FILE | PLANFILE]`: makes the watch match the manifest.
package struct ApplyCommand: Command {
  package static let name = "apply"
  package static let abstract = "Make the watch match the manifest (shows the plan and asks first)."
  package static let usage = "[options] [FILE | PLANFILE]"
  package static let positionals: CompletionValues = .manifests
  package static let discussion = """
    With a manifest (default watch.yaml), apply plans, shows the plan and asks for confirmation;
    only 'yes' is accepted. --auto-approve skips the question; without a terminal and without
    --auto-approve it refuses instead of waiting. An unsafe plan (it clears a list, removes or
    changes an emergency contact, turns SOS off, deletes a custom reminder, or removes more than a
    third of the contacts) is refused with --auto-approve unless --allow-destroy is also given.
    With a saved plan from 'tsapply plan -out FILE' it applies exactly that plan without asking
    (it was reviewed), and refuses it when stale; a fleet's saved plan ('plan --fleet -out') is
    applied watch by watch, each watch's part refused when stale and the others applied.
    The watch is locked from the read that plans until verification; a second apply waits up to
    -lock-timeout (default 0s), then refuses. Before the first write the watch's state is backed
    up (mode 0600); 'tsapply restore BACKUP' puts it back, and the apply is added to the watch's
    history ('tsapply history').
    With --fleet and the fleet file's rollout: (or --canary, --batch, --pause, --max-failures),
    the watches are applied wave by wave: the canary first, then batches; more failures than
    --max-failures abort the rollout, and 'pause: manual' waits for --continue (or --abort).
    """
  package static let options: [OptionSpec] = ApplyRun.specs + [DeviceOption.spec] + PlanOutputOptions.specs
    + FleetOptions.specs + FleetOptions.reviewSpecs + FleetOptions.applySpecs

  package var file: String
  package var deviceSpec: String?
  package var run: ApplyRun.Settings
  package var fleet: FleetOptions

  package init(_ arguments: ParsedArguments) throws(UsageError) {
    fleet = try FleetOptions(arguments, command: Self.name)
    file = try ManifestArgument.file(from: arguments)
    deviceSpec = DeviceOption.value(in: arguments)
    run = try ApplyRun.Settings(arguments, command: Self.name)
  }

  package func run(_ context: CommandContext) async throws -> ExitStatus {
    if fleet.file != nil {
      return try await context.toolset.fleet.apply(self, context: context)
    }
    // Only a file that reads the same twice is looked at as a saved plan: a pipe's bytes would
    // be gone for the manifest read that follows.
    let source = ManifestInput.source(file, context: context)
    // A `*.tfplan` that cannot be read (over the bound, say) is said as a saved plan, not as a
    // manifest (fresh-eyes fe93: "a manifest may be at most 1048576 bytes" for a saved plan).
    if file.hasSuffix(".tfplan"), case .failure(let problem) = source.read(noun: "saved plan") {
      throw CommandFailure(problem.description)
    }
    if file != "-", source.isRereadable, case .success(let bytes) = source.read() {
      if let fleetPlan = try SavedFleetPlan.parse(bytes, path: file) {
        return try await context.toolset.fleet.applySaved(self, plan: fleetPlan, path: context.resolve(file), context: context)
      }
      if let saved = try SavedPlan.parse(bytes, path: file) {
        return try await applySaved(SavedPlanFile(saved: saved, path: context.resolve(file)), context: context)
      }
      // A backup given for a manifest is named as such, with the command that takes it.
      if bytes.first(where: { ![9, 10, 13, 32].contains($0) }) == UInt8(ascii: "{"), (try? Backup.read(path: context.resolve(file))) != nil {
        throw CommandFailure("\(file) is a tsapply backup, not a manifest: restore it with 'tsapply restore \(ShellWord.quoted(file))'")
      }
    }
    let input = try ManifestInputFile.read(file, command: Self.name, redact: run.output.redact, context: context)
    let document = try input.document(redact: run.output.redact, context: context)
    let watch = try await CLIWatch.open(deviceSpec, context: context)
    let apply = ApplyRun(watch: watch, settings: run, context: context, rerunArgument: file,
                         manifestArgument: file, commandLine: context.commandLine, manifestSource: input.bytes)
    return try await apply.run { options throws(EngineError) in try await watch.watch.apply(document, options: options) }
  }

  /// Applies a saved plan to the watch it was made for (or to `--device` / `TSAPPLY_DEVICE`,
  /// which must be that watch), after the engine's check: neither the manifest nor the watch
  /// changed, and planning the manifest again gives exactly the saved changes.
  private func applySaved(_ saved: SavedPlanFile, context: CommandContext) async throws -> ExitStatus {
    let chosen = deviceSpec ?? context.environment[DeviceSelector.environmentVariable].flatMap { $0.isEmpty ? nil : $0 }
    let watch = try await CLIWatch.open(chosen ?? saved.saved.device, context: context)
    let manifest = CLIWatch.relative(saved.manifestPath, context)
    var apply = ApplyRun(watch: watch, settings: run, context: context, rerunArgument: file,
                         manifestArgument: manifest, commandLine: context.commandLine)
    apply.appliesSavedPlan = true
    apply.savedPlanWatch = saved.saved.device ?? saved.saved.plan.device
    return try await apply.run { options throws(EngineError) in try await watch.watch.apply(saved: saved, options: options) }
  }
}

/// Runs an apply or a restore through the engine: builds its options (approval, lock timeout,
/// signals, progress lines), prints the outcome, and turns engine errors into messages with
/// complete, pasteable advice. Shared by `apply` and `restore`.
package struct ApplyRun {
  /// `--auto-approve`, `--allow-destroy`, `-lock-timeout`: shared by `apply` and `restore`.
  package static let specs: [OptionSpec] = [
    OptionSpec(["--auto-approve", "-auto-approve"], help: "Apply without asking for confirmation (unsafe plans need --allow-destroy too)."),
    OptionSpec(["--allow-destroy", "-allow-destroy"], help: "With --auto-approve, also apply an unsafe plan (clears, removals, SOS off)."),
    OptionSpec(["--lock-timeout", "-lock-timeout"], value: "DURATION", help: "Wait up to DURATION for another apply's lock (default 0s)."),
  ]

  /// What the command line says about approval, locking and output.
  package struct Settings: Sendable {
    package var autoApprove: Bool
    package var allowDestroy: Bool
    package var lockTimeout: Duration
    package var output: PlanOutputOptions

    init(_ arguments: ParsedArguments, command: String) throws(UsageError) {
      autoApprove = arguments.has("--auto-approve")
      allowDestroy = arguments.has("--allow-destroy")
      lockTimeout = try arguments.value("--lock-timeout").map { (text) throws(UsageError) in
        try DurationArgument.value(text, option: "-lock-timeout")
      } ?? .zero
      output = PlanOutputOptions(arguments)
      if allowDestroy && !autoApprove {
        throw UsageError("--allow-destroy only matters with --auto-approve (without it, \(command) asks before any change)")
      }
    }
  }

  package var watch: CLIWatch
  package var settings: Settings
  package var context: CommandContext
  /// The command running the apply (`apply` or `restore`), for messages.
  package var command: String = "apply"
  /// The file argument that reruns it (the manifest, the saved plan or the backup), for hints.
  package var rerunArgument: String
  /// The manifest the plan comes from, for "plan again" advice.
  package var manifestArgument: String?
  /// The command line recorded as the lock holder.
  package var commandLine: String
  /// Whether `rerunArgument` is a saved plan: once part of it is applied it no longer matches
  /// the watch, so finishing means planning again, not running it again.
  package var appliesSavedPlan = false
  /// The identity of the watch the saved plan was made for (`nil`: not a saved plan, or one that
  /// names no watch), so that a refusal to apply it to another watch advises both ways on.
  package var savedPlanWatch: String?
  /// What `--redact` masks in everything the run prints besides the plan (progress lines, the
  /// summary of a partial apply, errors): the manifest's numbers from the start, the plan's once
  /// it is made (`PhoneRedaction.Mask`).
  private let mask: Locked<PhoneRedaction.Mask>
  /// Set when the watch put a list back during a write whose answer was lost
  /// (`EngineEvent.putBackOnWatchDuringApply`): the advice does not say nothing reached it.
  let putBack = Flag()
  /// Set when the read-back found resources changed on the watch while the apply wrote
  /// (`ReconcileEvent.changedWhileWriting`): a failed verification's advice keeps them.
  package let wearerChangedWhileWriting = Flag()

  /// A run of `command` on `watch`; `manifestSource` is the manifest's bytes when the command
  /// read one, so its numbers are masked with `--redact` even before the plan is made.
  package init(watch: CLIWatch, settings: Settings, context: CommandContext, command: String = "apply",
       rerunArgument: String, manifestArgument: String?, commandLine: String, manifestSource: [UInt8]? = nil) {
    self.watch = watch
    self.settings = settings
    self.context = context
    self.command = command
    self.rerunArgument = rerunArgument
    self.manifestArgument = manifestArgument
    self.commandLine = commandLine
    mask = Locked(PhoneRedaction.Mask(redact: settings.output.redact, manifest: manifestSource))
  }

  /// The mask for what this run prints, knowing `plan`'s numbers from now on.
  package func masking(_ plan: Plan) -> PhoneRedaction.Mask {
    mask.mutate { $0 = $0.adding(plan) }
    return mask.value
  }

  /// The mask for what this run prints now (`masking(_:)` adds a plan's numbers).
  package var currentMask: PhoneRedaction.Mask { mask.value }

  /// Calls `body` with the options, prints the outcome; throws a `CommandFailure` describing
  /// every failure.
  package func run(_ body: (ApplyOptions) async throws(EngineError) -> ApplyOutcome) async throws -> ExitStatus {
    let refusedForTerminal = Flag(), refusedPlanIsUnsafe = Flag(), changedAfterWriting = Flag()
    let result: Result<ApplyOutcome, EngineError>
    do {
      var options = options(refusedForTerminal: refusedForTerminal, unsafe: refusedPlanIsUnsafe)
      let printing = options.events
      options.events = { event in
        if case .changedOnWatchDuringApply(_, _, let kept) = event, kept.values.contains(true) { changedAfterWriting.set() }
        printing(event)
      }
      result = .success(try await body(options))
    } catch { result = .failure(error) }
    let outcome: ApplyOutcome
    switch result {
    case .success(let value):
      outcome = value
    case .failure(.declined) where refusedForTerminal.isSet:
      let alternative = command == "apply"
        ? ", or save the plan with '\(watch.command("plan -out changes.tfplan", manifestArgument))' and apply that file" : ""
      // --auto-approve alone would be refused by the safety gate.
      let flags = refusedPlanIsUnsafe.isSet ? "--auto-approve --allow-destroy (this plan is unsafe)" : "--auto-approve"
      throw CommandFailure("refusing to \(command) without confirmation: standard input is not a terminal.\n"
        + "  Re-run with \(flags)\(alternative).")
    case .failure(let error):
      throw CommandFailure(describe(error))
    }
    switch outcome {
    case .noChanges where command != "apply":
      // The plan said "No changes. The watch matches BACKUP": nothing was restored, so nothing
      // is "complete" (an apply keeps Terraform's "Apply complete! Resources: 0 added, …").
      break
    case .noChanges:
      context.stdout.write("\nApply complete! Resources: 0 added, 0 changed, 0 destroyed.\n")
    case .applied(let report):
      let counts = "Resources: \(report.added) added, \(report.changed) changed, \(report.destroyed) destroyed."
      // Written and verified, then changed on the watch as the apply ended (announced, and
      // read once more): the watch does not hold what was applied — not "complete!" beside an
      // exit status of 1 (fresh-eyes finding) — and the exit status says so.
      let verb = command == "apply" ? "Apply" : "Restore"
      context.stdout.write(changedAfterWriting.isSet ? "\n\(verb) written and verified, then changed on the watch itself. \(counts)\n"
                                                      : "\n\(verb) complete! \(counts)\n")
      if changedAfterWriting.isSet {
        throw CommandFailure("every change was written and verified, but the watch was changed on the watch itself as the \(command) ended "
          + "(the warning above says what): it does not hold what was \(command == "apply" ? "applied" : "restored") now. "
          + "See it with '\(watch.command("drift", manifestArgument))'.")
      }
    }
    return .success
  }

  private func options(refusedForTerminal: Flag, unsafe: Flag) -> ApplyOptions {
    let context = self.context
    // A restore's "manifest" is the backup stated as one: its lines are no file a person wrote.
    let renderer = { var renderer = settings.output.renderer(context); renderer.sources = command == "apply"; return renderer }()
    let verbose = context.stdoutIsTerminal
    let actions = Locked<[ResourceAddress: Action]>([:])
    let run = self
    let approval: Approval = settings.autoApprove ? .automatic(allowDestroy: settings.allowDestroy) : .ask { plan in
      guard context.stdinIsTerminal else {
        refusedForTerminal.set()
        if !plan.unsafeFindings.isEmpty { unsafe.set() }
        return false
      }
      context.stdout.write("""

        Do you want to perform these actions?
          tsapply will perform the actions described above.
          Only 'yes' will be accepted to approve.

          Enter a value: 
        """)
      let answer = context.readLine()?.trimmingCharacters(in: .whitespaces)
      guard answer == "yes" else { return false }
      context.stdout.write("\n")
      return true
    }
    // The backup as advice names it, once taken: what a second signal's words point back to.
    let backup = Locked<String?>(nil)
    let planCommand = watch.command("plan", manifestArgument), historyCommand = watch.command("history")
    let stop = StopSignals(notice: { signal in
      let again = signal == SIGINT ? "Ctrl-C again" : "send \(StopSignals.name(signal)) again"
      context.stderr.write("\n\(signal == SIGINT ? "Interrupt" : StopSignals.name(signal)) received. Finishing the current device call, then stopping (\(again) to quit at once)...\n")
    }, quitting: { _ in
      let back = backup.value.map { "'tsapply restore \(ShellWord.quoted($0))' brings the watch back to how it was before it; " } ?? ""
      context.stderr.write("Quitting at once: the watch may hold part of this \(run.command). '\(planCommand)' shows what is left to change; "
        + "\(back)'\(historyCommand)' lists this \(run.command) as unfinished.\n")
    })
    let options = ApplyOptions(approval: approval, lockTimeout: settings.lockTimeout, command: commandLine, stop: stop) { event in
      switch event {
      case .waitingForLock(let holder):
        context.stderr.write("Waiting for the watch's lock (held by \(holder.map(\.description) ?? "another tsapply")), up to the lock timeout...\n")
      case .waitingForLease(let failure):
        context.stderr.write("Waiting up to the lock timeout: \(failure)...\n")
      case .planned(let plan):
        actions.set(Dictionary(plan.resourceChanges.map { ($0.address, $0.action) }, uniquingKeysWith: { first, _ in first }))
        _ = run.masking(plan)
        context.stdout.write(renderer.render(plan))
      case .reconcile(.backedUp(let path)):
        let shown = CLIWatch.relative(path, context)
        backup.set(shown)
        context.stdout.write("Backed up the watch's current state to \(shown) (restore with 'tsapply restore \(ShellWord.quoted(shown))').\n")
      case .reconcile(.apply(let progress)):
        ApplyRun.print(progress, actions: actions.value, verbose: verbose, mask: run.currentMask, to: context)
      case .recordFailed(let error):
        context.stderr.write("Warning: could not record the applied state for drift detection: \(error)\n")
      case .historyFailed(let error):
        context.stderr.write("Warning: could not add this apply to the watch's history: \(error)\n")
      case .changedOnWatchDuringApply(let lists, let backupPath, let kept):
        context.stderr.write(Self.changedDuringApply(lists, backupPath: backupPath.map { CLIWatch.relative($0, context) }, kept: kept,
                                                     watch: run.watch, manifest: run.manifestArgument, mask: run.currentMask))
      case .notHearingTheWatch(let lists):
        context.stderr.write(Self.notHearing(lists))
      case .putBackOnWatchDuringApply(let lists):
        run.putBack.set()
        context.stderr.write(Self.putBack(lists, mask: run.currentMask))
      case .reconcile(.changedWhileWriting(let drift)):
        run.wearerChangedWhileWriting.set()
        context.stderr.write(Self.changedWhileWriting(drift, watch: run.watch, manifest: run.manifestArgument, mask: run.currentMask))
      }
    }
    return options
  }

  /// The warning for lists put back on the watch as the plan found them while the apply wrote
  /// them, its write's answer lost (`EngineEvent.putBackOnWatchDuringApply`), ending with a newline.
  package static func putBack(_ lists: [DeviceEvent.Kind: [Contact]], mask: PhoneRedaction.Mask) -> String {
    lists.sorted { $0.key.rawValue < $1.key.rawValue }.map { kind, contacts in
      let list = kind == .contactsChanged ? "contacts" : "emergency contacts"
      let names = contacts.map { mask.text("\($0.name) (\($0.phoneNum))") }.joined(separator: ", ")
      return "Warning: while this apply was writing, the watch's \(list) were changed on the watch itself back to what the watch held "
        + "when the plan was made, and reading them back shows that list: this apply's write to them, if it landed, was undone on the "
        + "watch. The watch announced \(counted(contacts.count, String(list.dropLast()), list)): \(names.isEmpty ? "none" : names).\n"
    }.joined()
  }

  /// The warning for an apply that cannot hear the watch announce changes to `lists` while it
  /// writes them (`EngineEvent.notHearingTheWatch`), ending with a newline.
  package static func notHearing(_ lists: [ResourceAddress]) -> String {
    let names = lists.map { $0 == .contacts ? "contacts" : "emergency contacts" }.joined(separator: " and ")
    return "Warning: this apply cannot hear the watch announce changes to its \(names) (its listener did not open in time: "
      + "a bridge's event stream, on a slow link): a change made on the watch while the apply writes them may be written over "
      + "without a warning. The backup holds the watch as it was when the plan was made.\n"
  }

  /// The warning for lists the watch announced while the apply wrote: who they hold, whether
  /// the watch still holds that change (`kept`: the apply's read-back), and how to see it and
  /// bring it back (commands for `watch`, with `manifest`).
  package static func changedDuringApply(_ lists: [DeviceEvent.Kind: [Contact]], backupPath: String?, kept: [DeviceEvent.Kind: Bool],
                                         watch: CLIWatch, manifest: String?, mask: PhoneRedaction.Mask) -> String {
    var text = ""
    for (kind, contacts) in lists.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
      let list = kind == .contactsChanged ? "contacts" : "emergency contacts"
      let names = contacts.map { mask.text("\($0.name) (\($0.phoneNum))") }.joined(separator: ", ")
      let outcome = switch kept[kind] {
      case true?: "the watch still holds that change (reading it back shows it; the apply did not write over it), so it is drift now"
      case false?: "the apply wrote over that change (reading the watch back shows what it wrote)"
      case nil: "the apply may have written over that change"
      }
      text += "Warning: while this apply was writing, the watch's \(list) were changed on the watch itself; \(outcome). "
        + "The watch announced \(counted(contacts.count, String(list.dropLast()), list)): \(names.isEmpty ? "none" : names).\n"
    }
    if lists.keys.allSatisfy({ kept[$0] == true }) {
      // The watch holds the change: nothing to bring back (a restore would only undo the apply's
      // other changes); it is seen as drift, and kept by putting it in the manifest.
      text += "  See it with '\(watch.command("drift", manifest))'; keep it with '\(watch.command("drift --adopt", manifest))' (it goes into the manifest)"
        + (backupPath.map { "; a backup of the watch with it is \($0)" } ?? "") + ".\n"
    } else if let backupPath {
      // The backup holds the watch as this apply left it, with the announced list in it
      // (`Watch.reportChanges`): restoring it puts that list back over what the apply wrote to
      // it and changes nothing else (fresh-eyes finding: the advice said it brought the whole
      // watch back and undid the apply, which put users off a restore that undoes only the list).
      let those = lists.count == 1 ? "that list" : "those lists"
      text += "  \(lists.count == 1 ? "That list" : "Those lists"), as the watch announced \(lists.count == 1 ? "it" : "them"), "
        + "\(lists.count == 1 ? "is" : "are") kept in \(backupPath). To keep what was changed on the watch, put it into the manifest "
        + "and apply again; '\(watch.command("restore", backupPath))' puts \(those) back over what this apply wrote to \(lists.count == 1 ? "it" : "them") "
        + "and leaves the rest as the apply left it (its plan shows what it would change before you answer).\n"
    }
    return text
  }

  /// The warning for resources the apply's read-back found changed on the watch while it wrote
  /// (`ReconcileEvent.changedWhileWriting`: no listener announced them), ending with a newline.
  package static func changedWhileWriting(_ drift: [ResourceChange], watch: CLIWatch, manifest: String?, mask: PhoneRedaction.Mask) -> String {
    "Warning: while this apply was writing, the watch itself changed: \(Reconcile.driftSummary(drift) { mask.address($0) }). "
      + "Reading the watch back shows it; the apply did not write over it, so it is drift now.\n"
      + "  See it with '\(watch.command("drift", manifest))'; keep it with '\(watch.command("drift --adopt", manifest))' (it goes into the manifest).\n"
  }

  /// Prints one progress line per resource of a step (`address: Creating...`, `address:
  /// Creation complete [0.3s elapsed]`), and with `verbose` one per device call; addresses are
  /// masked as in the plan (`mask`, `--redact`).
  package static func print(_ progress: ApplyProgress, actions: [ResourceAddress: Action], verbose: Bool,
                            mask: PhoneRedaction.Mask, to context: CommandContext) {
    switch progress {
    case .stepStarted(let step):
      for address in step.addresses {
        context.stdout.write("\(mask.address(address)): \(verb(actions[address], done: false))...\n")
      }
    case .deviceCall(let name, let seconds):
      if verbose { context.stdout.write("  device call \(name) done [\(elapsedText(seconds)) elapsed]\n") }
    case .stepFinished(let step, let seconds):
      for address in step.addresses {
        context.stdout.write("\(mask.address(address)): \(verb(actions[address], done: true)) [\(elapsedText(seconds)) elapsed]\n")
      }
    case .landedWithoutAnswer(let step, let error):
      let said = mask.text("\(error)")
      let answer = error.mayHaveTakenEffect ? "the answer to the write was lost (\(said))" : "the watch refused the write (\(said))"
      // One write for the whole step (e.g. every reminder in one replaceAllReminders): said
      // once, naming every resource it carried.
      let names = step.addresses.map { mask.address($0) }
      let subject = names.count == 1 ? names[0] : names.dropLast().joined(separator: ", ") + " and " + names[names.count - 1] + " (one write)"
      context.stdout.write("\(subject): \(answer), yet reading it back shows the watch holds \(names.count == 1 ? "it" : "them"): applied, not written again\n")
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

  /// The command that shows what the watch holds against what this run wants: `plan` of the
  /// manifest; for a restore, which has none, the restore of the same backup, which shows its
  /// plan and asks before it writes (fresh-eyes finding: after a failed restore, the advice's
  /// bare `plan` read `watch.yaml`, failing or comparing the watch with another manifest).
  private var planAgain: String {
    command == "restore" ? watch.command("restore", rerunArgument) : watch.command("plan", manifestArgument)
  }

  /// The message for `error`, with the commands that help next, complete and pasteable; with
  /// `--redact`, every address, name and number in it masked as in the plan.
  package func describe(_ error: EngineError) -> String {
    let planAgain = self.planAgain
    let mask = currentMask
    switch error {
    case .invalid(let input):
      ManifestInput.printDiagnostics(input.diagnostics, source: input.source, json: false,
                                     redact: settings.output.redact, context: context)
      return error.description
    case .locked(let failure):
      return "\(failure); nothing was read or written.\n  " + failure.advice
    case .unsafe(_, let findings):
      let save = manifestArgument.map { "save it with '\(watch.command("plan -out changes.tfplan", $0))' and apply that file, " } ?? ""
      return "refusing to \(command) without review: this plan " + mask.text(findings.map(\.description).joined(separator: "; "))
        + ". Nothing was written.\n"
        + "  Review it and answer 'yes' ('\(watch.command(command, rerunArgument))' on a terminal), \(save)"
        + "or add --allow-destroy to --auto-approve."
    case .declined:
      return "\(command == "apply" ? "Apply" : "Restore") cancelled: the watch was not touched."
    case .savedPlanRefused(let problems):
      let lines = problems.map { "  " + mask.message(ControlCharacters.escaped($0.message)) }.joined(separator: "\n")
      let replan = "plan -out \(ShellWord.quoted(rerunArgument))"
      if let own = savedPlanWatch, own != watch.watch.identity {
        // Made for another watch: nothing is stale about it. It goes to its own watch as it is
        // (when that is all that is wrong), or a new plan is made for the watch chosen.
        let chosen = "make a new plan for \(watch.shownSpec): '\(watch.command(replan, manifestArgument))'"
        let advice = problems.count == 1
          ? "Apply it to the watch it was made for: '\(watch.command("apply", rerunArgument, device: own))', or " + chosen
          : "Make a new plan for the watch it was made for: '\(watch.command(replan, manifestArgument, device: own))', or " + chosen
        return "cannot apply \(rerunArgument); nothing was written:\n" + lines + "\n  " + advice
      }
      return "cannot apply \(rerunArgument); nothing was written:\n" + lines
        + "\n  Make a new plan: '\(watch.command(replan, manifestArgument))'"
    case .apply(let failure):
      return describe(failure, planAgain: planAgain, mask: mask)
    default:
      return mask.message(error.description)
    }
  }

  private func describe(_ error: ApplyError, planAgain: String, mask: PhoneRedaction.Mask) -> String {
    let renderer = settings.output.renderer(context)
    func list(_ addresses: [ResourceAddress]) -> String {
      addresses.isEmpty ? "(none)" : addresses.map(mask.address).joined(separator: ", ")
    }
    switch error {
    case .partial(let failure, let backupPath):
      var text = "\(command) stopped part-way: \(mask.message(failure.cause.description))\n"
      text += "  applied:      " + list(failure.applied) + "\n"
      // A write whose answer was lost and whose list could not be read back (or reads as
      // neither before nor sent) is not "failed" (the watch holds what it held): it is unknown.
      var unknown = false
      if case .outcomeUnknown(_, let found) = failure.cause {
        switch found {
        case .unreadable, .other: unknown = true
        case .applied, .notApplied: break
        }
      }
      text += (unknown ? "  unknown:      " : "  failed:       ") + list(failure.failed) + "\n"
      text += "  not applied:  " + list(failure.notApplied) + "\n"
      let restore = "'\(watch.command("restore", watch.relative(backupPath)))'"
      // A lost answer whose list reads back as neither what was sent nor what was there: the
      // list was changed on the watch itself, as when the apply stopped before writing over a
      // change (fresh-eyes finding: "run the apply again to finish" removed the wearer's contact).
      var changedPart: String?
      if case .changedOnWatch(let part) = failure.cause { changedPart = part }
      if case .outcomeUnknown(_, .other) = failure.cause { changedPart = failure.failed.map(\.rawValue).joined(separator: ", ") }
      if let part = changedPart {
        // Stopped to keep a change made on the watch: both ways on would undo it, so they are
        // not offered bare — the change is seen first, and kept by putting it in the manifest —
        // also when it stopped before its first write (nothing to undo, but applying again
        // would write over the change all the same).
        let written = failure.reached != nil
        text += (written ? "" : "Nothing was written to the watch, so there is nothing to undo. ")
          + "The change made on the watch to \(part) is kept; running the apply again"
          + (written ? " or restoring the backup" : "") + " would undo it. "
          + "See it with '\(watch.command("drift", manifestArgument))'; keep it with '\(watch.command("drift --adopt", manifestArgument))' "
          + "(it goes into the manifest), then apply again to \(written ? "finish" : "apply the rest")."
          + (written ? " Backup of the state before this apply: \(watch.relative(backupPath))." : "")
        return text
      }
      if failure.reached == nil {
        // No write was sent: there is nothing to undo, and restoring the backup would undo what
        // changed on the watch meanwhile (the reason it stopped, when it found such a change).
        let replan = appliesSavedPlan ? watch.command("plan -out \(ShellWord.quoted(rerunArgument))", manifestArgument) : planAgain
        text += "Nothing was written to the watch, so there is nothing to undo. See what it holds now with '\(replan)'"
          + (appliesSavedPlan ? ", review the new plan and apply that file."
             : command == "restore" ? " (it shows what it would change and asks before it writes)." : ", then apply again.")
        return text
      }
      if failure.applied.isEmpty && !unknown && putBack.isSet {
        // The list reads back as before, but the watch put it back during the write (the
        // warning above): the write may have landed and been undone there.
        text += "The watch holds what it held before this apply, but it was changed on the watch during the write (the warning above): "
          + "whether the write landed cannot be told. Running the apply again writes it again, undoing that change; "
          + "see what it would do first with '\(planAgain)'."
        return text
      }
      // The watch refused the write for what was sent or what it holds (a 300x parameter, a
      // 4001 refusal, a limit: `DeviceError.isRefusal`): the same apply gets the same answer, so
      // "run it again" is not offered (fresh-eyes fe99 #5: a reminder whose notes were edited on
      // the watch beyond the SDK's limit made every rerun fail the same way).
      var refusal: String?
      if case .device(let cause) = failure.cause, DeviceError.isRefusal(cause.code) {
        refusal = "The watch refused this step (\(cause.code.rawValue)), so running the same apply again gets the same answer: "
          + "see what it writes with '\(planAgain)' and change what the watch refuses (docs/platforms.md \"Errors\" says what the code means)"
      }
      if failure.applied.isEmpty && !unknown {
        // Written, and nothing reached the watch (the write failed, or its lost answer's read-back
        // shows the list as before): it holds what the plan was made from, so there is nothing to
        // undo and the same apply — a saved plan too — can simply run again.
        text += "Nothing reached the watch (it holds what it held before), so there is nothing to undo. "
          + (refusal.map { $0 + "." } ?? "Run '\(watch.command(command, rerunArgument))' again to apply it.")
        return text
      }
      if let refusal, !appliesSavedPlan {
        text += refusal + "; or run \(restore) to undo what was applied."
        return text
      }
      if appliesSavedPlan {
        // The watch no longer holds what the saved plan was made from: it would be refused.
        // With nothing known to have landed (only writes whose outcome is unknown), whether it
        // still matches is not known either: said so, not as a fact (fresh-eyes fe93: "no longer
        // matches", and the same saved plan was then accepted and finished).
        let replan = watch.command("plan -out \(ShellWord.quoted(rerunArgument))", manifestArgument)
        text += (failure.applied.isEmpty ? "The saved plan may no longer match the watch (a write whose outcome is unknown may have landed). "
                 : "The saved plan no longer matches the watch. ")
          + "To finish, plan what is left with '\(replan)', review it and apply that file; or run \(restore) to undo."
      } else {
        text += "Run '\(watch.command(command, rerunArgument))' again to finish, or \(restore) to undo."
      }
      return text
    case .verificationFailed(let remaining, let diagnostics, let backupPath, _):
      var text = "the watch does not match the manifest after applying; reading it back shows these differences:\n"
      if let remaining { text += renderer.render(remaining) }
      text += diagnostics.map { "  \(mask.message($0.description))\n" }.joined()
      if wearerChangedWhileWriting.isSet {
        // The differences hold what the wearer changed while this apply wrote (the warning
        // above): applying again would undo it, so it is seen and kept first (fresh-eyes
        // finding: "see the watch with 'tsapply plan …'", whose plan switched the wearer's
        // reminder back).
        text += "The watch itself was changed while this apply wrote (the warning above): running the apply again would undo that. "
          + "See it with '\(watch.command("drift", manifestArgument))'; keep it with '\(watch.command("drift --adopt", manifestArgument))' "
          + "(it goes into the manifest), then apply again. Backup of the previous state: \(watch.relative(backupPath))"
        return text
      }
      text += "Backup of the previous state: \(watch.relative(backupPath)); see the watch with '\(planAgain)'"
      return text
    case .readBackFailed(let deviceError, let backupPath):
      return "every change was written, but reading the watch back to verify failed: \(mask.message(deviceError.description)).\n"
        + "  Check with '\(planAgain)'. Backup of the previous state: \(watch.relative(backupPath))"
    case .stateChanged:
      return "the plan was not made from this watch state; nothing was written. Plan again: '\(planAgain)'"
    case .backupFailed:
      return "\(error)"
    }
  }
}

/// A flag set once from a `@Sendable` closure and read after it returns.
package final class Flag: @unchecked Sendable {
  private let lock = NSLock()
  private var value = false
  package init() {}
  package func set() {
    lock.lock()
    value = true
    lock.unlock()
  }
  package var isSet: Bool {
    lock.lock()
    defer { lock.unlock() }
    return value
  }
}

