import TSApplyCLI
import TSEngine
import TSFleet
import TSManifest
import TSModel

extension FleetSession {
  /// `tsapply drift --fleet FILE --watch NAME --adopt`: the watch's drift written into its own
  /// manifest (`DriftAdoptRun`), checked against the manifest merged with its layers. Nothing
  /// is written into a layer (it applies to every watch it selects): what a layer sets is named
  /// as not adopted. A watch without a manifest of its own, or whose manifest is also another
  /// watch's or a layer (however the path is spelled, `FleetFile.sharers`), is refused, saying so.
  func adopt(autoApprove: Bool) async throws -> ExitStatus {
    guard let member = loaded.members.first else { throw CommandFailure("drift --fleet --adopt needs one --watch NAME") }
    guard broker == nil else {
      // Its watches are reached through their agents, which hold the drift records. A watch
      // whose manifests are merged is compared with them all there too: `--device SPEC FILE`
      // with its own file alone took the layers' contacts for removals, and its advice to apply
      // would have removed them (fresh-eyes fe105 #4).
      let own = member.watch.manifest.map { loaded.fleet.displayPath($0.value) }
      let layers = own == nil ? member.manifestFiles : Array(member.manifestFiles.dropFirst())
      let how = layers.isEmpty && own != nil
        ? "with 'tsapply drift --adopt --device SPEC \(ShellWord.quoted(own ?? ""))' (SPEC the watch's device as the agent names it, TSAPPLY_STATE_DIR the agent's)"
        : "with the fleet's files: \(member.name) takes values from \(layers.joined(separator: ", ")) as well, so adopt against all of them — a copy of "
          + "\(fleetFile) without its transport: and site: lines, each device as the agent names it, then 'tsapply drift --adopt --fleet COPY --watch "
          + "\(ShellWord.quoted(member.name))' (TSAPPLY_STATE_DIR the agent's); 'tsapply drift --adopt --device' with one file would take what the "
          + "others give for changes to undo"
      throw CommandFailure("\(fleetFile) reaches its watches through an MQTT broker, and its agents hold the drift records: adopt on the agent's host, "
                           + how + "; then commit the manifest and publish it with 'tsapply apply --fleet \(ShellWord.quoted(fleetFile))'")
    }
    guard let written = member.watch.manifest else {
      throw CommandFailure("the watch \(member.name) has no manifest of its own in \(fleetFile): all it has comes from the fleet's layers, and adopting never writes into a layer (a layer applies to every watch it selects). Give it one (manifest: FILE under watches: \(member.name)), then adopt again")
    }
    let path = loaded.fleet.absolutePath(written.value), name = loaded.fleet.displayPath(written.value)
    let (sharing, layers) = loaded.fleet.sharers(ofManifest: written.value, watch: member.name)
    guard layers.isEmpty else {
      throw CommandFailure("\(name) is also a layer of \(fleetFile) (\(layers.map(loaded.fleet.displayPath).joined(separator: ", "))): adopting never writes into a layer (a layer applies to every watch it selects). Give \(member.name) a manifest of its own, then adopt again")
    }
    guard sharing.isEmpty else {
      throw CommandFailure("\(name) is also the manifest of \(sharing.joined(separator: ", ")) in \(fleetFile): adopting \(member.name)'s drift into it would change \(sharing.count == 1 ? "that watch" : "those watches") too. Give \(member.name) a manifest of its own, then adopt again")
    }
    let document: ManifestDocument
    switch member.document {
    case .success(let merged): document = merged
    case .failure(let problem):
      ManifestInput.printDiagnostics(problem.diagnostics, sources: member.sources, json: false, redact: redact, context: context)
      throw CommandFailure("\(problem.errorCount) error\(problem.errorCount == 1 ? "" : "s") in \(problem.subject); nothing was adopted")
    }
    let bytes = member.sources[name] ?? []
    let watch: Watch
    do { watch = try await engine.open(member.device, mayCreate: false) } catch { throw CommandFailure("\(error)") }
    let result: Result<ExitStatus, any Error>
    do {
      let report = try await DriftCommand.drift(document, on: watch, file: name, json: false, redact: redact, context: context)
      var run = DriftAdoptRun(watch: watch, autoApprove: autoApprove, redact: redact, context: context,
                              commandLine: "tsapply drift --adopt --fleet \(fleetFile) --watch \(member.name)")
      run.scopeNote = "Adopting writes only into \(name), the watch's own manifest; \(member.name) also takes values from \(member.manifestFiles.dropFirst().joined(separator: ", "))."
      run.merge = { member.merged(own: $0, named: name) }
      run.applyCommand = "tsapply apply --fleet \(ShellWord.quoted(fleetFile)) --watch \(ShellWord.quoted(member.name))"
      run.adoptCommand = "tsapply drift --adopt --fleet \(ShellWord.quoted(fleetFile)) --watch \(ShellWord.quoted(member.name))"
      result = .success(try await run.run(report, manifest: (path: path, displayName: name, bytes: bytes)))
    } catch {
      result = .failure(error)
    }
    await watch.close()
    return try result.get()
  }
}
