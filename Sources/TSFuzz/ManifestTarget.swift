import Foundation
import TSApply
import TSApplyCLI
import TSDevice
import TSManifest
import TSModel
import TSPlan

/// The `manifest` target: bytes as a `watch.yaml`, through every stage that reads one.
///
/// Each input is loaded; its diagnostics are printed as `validate` prints them (human,
/// `--redact`, `--json`); a valid manifest is formatted (`fmt`), encoded (`ManifestEncoder`,
/// what `export` writes), and, on every platform profile, planned against the factory-fresh
/// watch, rendered (text, JSON, redacted), applied to an in-memory simulated watch, planned
/// again, checked for drift and exported; the first plan of each input is also saved as a plan
/// file and read back, and the JSON renderer runs on one profile per input (by its length).
///
/// Properties, besides not crashing:
/// - a manifest is refused only with an error; printed diagnostics escape control characters and
///   their JSON is JSON;
/// - the fast path for contact lists changes nothing: the lists it captured from libyaml's events,
///   put back as nodes, are the tree read without capturing (same diagnostics), and the manifest
///   loads to the same result (manifest and every diagnostic) with and without it;
/// - `fmt` formats every valid manifest, keeps its meaning (the formatted text loads to an equal
///   `Manifest`, positions aside, with the same warnings) and is idempotent;
/// - the encoder's text loads to the same manifest and is already in canonical form;
/// - every plan renders (text without raw control characters, JSON that parses) and survives a
///   saved-plan round trip; the simulated watch takes every plan the planner makes, each
///   change's `after` is what the watch reads back, and planning again gives no changes; drift
///   from the factory state shows exactly when the plan changed something;
/// - the export round trip is stable: state → export → manifest → plan against that state is
///   empty (that the export is in canonical form follows from the encoder's property);
/// - `drift --adopt` of the watch put back to its factory state adopts into the input's own text
///   a manifest that loads, changing nothing else it plans (`checkAdoption`);
/// - no phone number from the input appears in any redacted output: redacted diagnostics hold
///   no run of five or more digits at all, redacted plans none of the manifest's phone numbers.
enum ManifestTarget {
  /// The name positions carry for the fuzzed manifest.
  static let file = "fuzz.yaml"
  /// The identity written into rendered and saved plans.
  static let deviceIdentity = "sim:/fuzz/.tsapply/device.json"
  /// A fixed date for export headers.
  static let exportDate = Date(timeIntervalSince1970: 1_800_000_000)

  static let target = FuzzTarget(
    name: "manifest",
    summary: "watch.yaml bytes: load, diagnostics, fmt, encode, plan/render/apply/export on every profile",
    seeds: [SeedSource("examples", suffix: ".yaml"),
            SeedSource("Tests/TSManifestTests/Fixtures", suffix: ".yaml"),
            SeedSource("Tests/TSManifestTests/Golden", suffix: ".yaml"),
            SeedSource("Tests/TSApplyTests/Golden", suffix: ".yaml"),
            SeedSource("Tests/EndToEndTests/Golden", suffix: ".yaml"),
            SeedSource("Tests/TSFuzzTests/Corpus/manifest")],
    dictionary: "Tests/TSFuzzTests/Dictionaries/manifest.dict",
    maxLength: 8192,
    check: check)

  /// Checks one input against every property listed on the type.
  static func check(_ bytes: [UInt8]) async throws(PropertyFailure) {
    let loaded = ManifestLoader.load(bytes: bytes, file: file)
    try require(loaded.manifest != nil || loaded.diagnostics.hasErrors, "a manifest is refused only with an error",
                "no manifest and no error: \(loaded.diagnostics)")
    try checkDiagnostics(loaded.diagnostics, source: bytes, what: "validate")
    try checkContactListCapture(bytes, loaded: loaded)
    // fmt leaves a manifest with errors alone by construction (it formats only what loads).
    guard let manifest = loaded.manifest else { return }
    // In a valid manifest every value under a `phone` key is a contact's phone.
    let phones = Properties.phones(of: manifest)
    try checkFormat(bytes, ManifestFormatter.format(bytes: bytes, file: file), manifest: manifest, warnings: loaded.diagnostics)
    try checkEncoding(manifest)
    // The JSON renderer costs more than the rest of a profile's checks together; it runs on
    // one profile per input, chosen by the input's length, so each profile gets its share.
    let jsonProfile = bytes.count % PlatformProfile.all.count
    var savedOne = false
    for (index, profile) in PlatformProfile.all.enumerated() {
      try await checkPlan(manifest, on: profile, source: bytes, phones: phones, json: index == jsonProfile, saving: &savedOne)
    }
  }

  // MARK: The contact-list fast path

  /// `loaded` (read with the fast path for contact lists, `ContactListCapture`) is what reading
  /// every list through the tree gives, and so is the YAML tree once the captured lists are put
  /// back.
  static func checkContactListCapture(_ bytes: [UInt8], loaded: ManifestLoadResult) throws(PropertyFailure) {
    let property = "the contact-list fast path reads what the tree path reads"
    let captured = YAMLReader.read(bytes: bytes, file: file, capturesContactLists: true).expandingCapturedLists()
    let tree = YAMLReader.read(bytes: bytes, file: file)
    try require(captured.root == tree.root, property, "the YAML tree differs once captured lists are put back")
    try require(captured.diagnostics == tree.diagnostics, property,
                "YAML diagnostics: captured \(captured.diagnostics), tree \(tree.diagnostics)")
    let slow = ManifestLoader.load(bytes: bytes, file: file, capturesContactLists: false)
    try require(loaded.manifest == slow.manifest, property, "the manifests differ")
    try require(loaded.diagnostics == slow.diagnostics, property,
                "diagnostics: fast \(loaded.diagnostics), tree \(slow.diagnostics)")
  }

  // MARK: Diagnostics

  /// Prints `diagnostics` as `validate` does — human text, and redacted as text and JSON — and
  /// checks the output: no raw control characters in text, JSON that lists every diagnostic,
  /// and no run of five or more digits in redacted output (`--redact` masks every phone-like
  /// run in messages, field paths and echoed lines; positions have at most four digits).
  static func checkDiagnostics(_ diagnostics: [Diagnostic], source: [UInt8], what: String) throws(PropertyFailure) {
    try Properties.requireNoControlCharacters(printed(diagnostics, source: source, json: false, redact: false),
                                              "\(what) diagnostics")
    let human = printed(diagnostics, source: source, json: false, redact: true)
    try Properties.requireNoControlCharacters(human, "\(what) --redact diagnostics")
    let json = printed(diagnostics, source: source, json: true, redact: true)
    let value = try Properties.requireJSON(json, "\(what) --redact --json")
    let errors = diagnostics.filter { $0.severity == .error }.count
    guard let root = value as? [String: Any], root["valid"] as? Bool == (errors == 0),
          (root["errors"] as? [Any])?.count == errors,
          (root["warnings"] as? [Any])?.count == diagnostics.count - errors else {
      throw PropertyFailure("JSON diagnostics list every diagnostic", "\(what) --json:\n\(json)")
    }
    try Properties.requireFullyMasked(human, "\(what) --redact diagnostics")
    try Properties.requireFullyMasked(Properties.strings(inJSON: value), "\(what) --redact --json diagnostics")
  }

  private static func printed(_ diagnostics: [Diagnostic], source: [UInt8], json: Bool, redact: Bool) -> String {
    let stdout = BufferOutput(), stderr = BufferOutput()
    ManifestInput.printDiagnostics(diagnostics, source: source, json: json, redact: redact,
                                   context: CommandContext(stdout: stdout, stderr: stderr, currentDirectory: "/"))
    return stdout.text + stderr.text
  }

  // MARK: fmt and encoding

  static func checkFormat(_ bytes: [UInt8], _ result: ManifestFormatResult, manifest: Manifest,
                          warnings: [Diagnostic]) throws(PropertyFailure) {
    guard let formatted = result.formatted else {
      throw PropertyFailure("fmt formats every valid manifest", "\(result.diagnostics)")
    }
    try require(result.isChanged == (formatted != bytes), "fmt reports a change exactly when the text changes",
                "isChanged \(result.isChanged)")
    // Text already in canonical form keeps its meaning and formats to itself again.
    guard result.isChanged else { return }
    let text = String(decoding: formatted, as: UTF8.self)
    let reloaded = ManifestLoader.load(bytes: formatted, file: file)
    guard let again = reloaded.manifest else {
      throw PropertyFailure("fmt keeps the meaning", "the formatted text does not load: \(reloaded.diagnostics)\n\(text)")
    }
    try require(Properties.meaning(again) == Properties.meaning(manifest), "fmt keeps the meaning",
                "before:\n\(encoded(manifest))\nafter:\n\(encoded(again))\nformatted text:\n\(text)")
    try require(reloaded.diagnostics.map(\.field).sorted() == warnings.map(\.field).sorted(),
                "fmt keeps the meaning (the same warnings)",
                "before: \(warnings)\nafter: \(reloaded.diagnostics)\nformatted text:\n\(text)")
    let second = ManifestFormatter.format(bytes: formatted, file: file)
    try require(second.formatted == formatted && !second.isChanged, "fmt is idempotent",
                "first:\n\(text)\nsecond:\n\(second.formatted.map { String(decoding: $0, as: UTF8.self) } ?? "refused: \(second.diagnostics)")")
  }

  static func checkEncoding(_ manifest: Manifest) throws(PropertyFailure) {
    let text: String
    do { text = try ManifestEncoder.encode(manifest) } catch {
      throw PropertyFailure("the encoder writes every valid manifest", "\(error)")
    }
    let loaded = ManifestLoader.load(bytes: Array(text.utf8), file: "encoded.yaml")
    guard let again = loaded.manifest else {
      throw PropertyFailure("the encoder's text loads", "\(loaded.diagnostics)\n\(text)")
    }
    try require(Properties.meaning(again, ignoringShortNameSpelling: true)
                  == Properties.meaning(manifest, ignoringShortNameSpelling: true),
                "encoding then loading gives the same manifest", "encoded:\n\(text)\nreloaded:\n\(encoded(again))")
    let formatted = ManifestFormatter.format(bytes: Array(text.utf8), file: "encoded.yaml")
    try require(formatted.formatted != nil && !formatted.isChanged, "the encoder writes canonical form",
                "fmt changes the encoder's text:\n\(text)")
  }

  /// A position-free rendering of `manifest` for failure messages.
  static func encoded(_ manifest: Manifest) -> String {
    (try? ManifestEncoder.encode(manifest)) ?? "\(manifest)"
  }

  // MARK: Plan, apply, export

  /// Plans `manifest` on `profile`'s factory-fresh watch and checks the plan, its rendering,
  /// the apply, the plan after it, the drift and the export. The saved-plan round trip runs for
  /// the first non-empty plan of an input only (`saved` records it): the codec is the same for
  /// every profile.
  static func checkPlan(_ manifest: Manifest, on profile: PlatformProfile, source: [UInt8],
                        phones: Set<String>, json: Bool = true, saving saved: inout Bool) async throws(PropertyFailure) {
    let capabilities = profile.capabilities
    let state = profile.factoryState
    let what = "the plan on \(profile.name)"
    let result = Planner.plan(manifest, state: state, capabilities: capabilities)
    guard var plan = result.plan else {
      try require(result.diagnostics.hasErrors, "a plan is refused only with an error", "\(what): \(result.diagnostics)")
      try checkDiagnostics(result.diagnostics, source: source, what: "plan on \(profile.name)")
      return
    }
    plan.device = deviceIdentity
    try checkRendering(plan, phones: phones, what: what, json: json)
    if !saved && !plan.isEmpty {
      try checkSavedPlan(plan, source: source, what: what)
      saved = true
    }

    let device = SimulatedDevice(profile: profile)
    let steps = ApplyOrder.steps(for: plan, state: state, capabilities: capabilities)
    do {
      _ = try await Applier(device: device, allowsOnce: capabilities.reminders.supportsOnce).execute(steps, expected: state)
    } catch {
      throw PropertyFailure("the watch takes every plan the planner makes", "\(what): \(error)\n\(summary(plan))")
    }
    let after: DeviceState
    do { after = try await device.readState(capabilities: capabilities) } catch {
      throw PropertyFailure("the watch can be read after an apply", "\(what): \(error)")
    }
    try checkPromises(plan, after: after, what: what)
    let again = Planner.plan(manifest, state: after, capabilities: capabilities)
    guard var replanned = again.plan, replanned.isEmpty else {
      throw PropertyFailure("applying a plan, then planning again, gives no changes",
                            "\(what): \(again.plan.map(summary) ?? "\(again.diagnostics)")\nfirst plan: \(summary(plan))")
    }
    let drift = Drift.changes(since: state, current: after, capabilities: capabilities)
    try require(drift.isEmpty == plan.isEmpty, "drift shows exactly what an apply changed",
                "\(what): \(summary(plan))\ndrift: \(drift.map(\.address))")
    replanned.resourceDrift = drift
    replanned.device = deviceIdentity
    try checkRendering(replanned, phones: phones, what: "the drift on \(profile.name)", plainToo: false, json: false)
    try checkExport(after, capabilities: capabilities, what: "the export on \(profile.name)")
    try checkAdoption(source, applied: after, current: state, capabilities: capabilities, what: "drift --adopt on \(profile.name)")
  }

  /// `drift --adopt` of the watch put back to its factory state after the manifest was applied
  /// (every managed resource drifted), into the input's own text, whatever its layout (anchors,
  /// aliases, flow and block styles, comments): adopting either refuses (saying why) or gives a
  /// text that loads, whose plan keeps every change it had for the resources not adopted, and
  /// plans no change for the adopted ones when nothing is reported as not adopted.
  static func checkAdoption(_ source: [UInt8], applied: DeviceState, current: DeviceState,
                            capabilities: DeviceCapabilities, what: String) throws(PropertyFailure) {
    let drift = Drift.changes(since: applied, current: current, capabilities: capabilities)
    let plan = { (bytes: [UInt8]) -> Plan? in
      ManifestLoader.load(bytes: bytes, file: file).manifest.flatMap { Planner.plan($0, state: current, capabilities: capabilities).plan }
    }
    guard !drift.isEmpty, let pending = plan(source) else { return }
    let outcome: DriftAdoption.Outcome
    do {
      outcome = try DriftAdoption.adopt(drift, into: source, file: file, capabilities: capabilities, pending: pending, plan: plan)
    } catch {
      return
    }
    guard let replanned = plan(outcome.text) else {
      throw PropertyFailure("drift --adopt gives a manifest that loads", "\(what):\n\(String(decoding: outcome.text, as: UTF8.self))")
    }
    let adopted = Set(outcome.adopted.map(\.address))
    let others = { (changes: [ResourceChange]) in changes.filter { !adopted.contains($0.address) } }
    try require(others(replanned.resourceChanges) == others(pending.resourceChanges), "drift --adopt adopts only drift",
                "\(what): \(summary(replanned))")
    if outcome.notAdopted.isEmpty {
      try require(replanned.resourceChanges.allSatisfy { !adopted.contains($0.address) }, "adopted drift plans no change",
                  "\(what): \(summary(replanned))\n\(String(decoding: outcome.text, as: UTF8.self))")
    }
  }

  /// Renders `plan` as `plan` and `show` print it — redacted text, with `plainToo` plain text,
  /// with `json` redacted JSON — and checks the output. (Colour only adds escape codes around
  /// fixed words; unredacted JSON is the same renderer without the masking.)
  static func checkRendering(_ plan: Plan, phones: Set<String>, what: String, plainToo: Bool = true,
                             json renderJSON: Bool = true) throws(PropertyFailure) {
    let shown = PhoneRedaction.phones(in: plan).reduce(into: phones) { $0.formUnion(Properties.phoneRuns(in: $1)) }
    let redacted = HumanPlanRenderer(color: false, redact: true).render(plan)
    try Properties.requireNoControlCharacters(redacted, "\(what) (text, --redact)")
    try Properties.requireRedacted(redacted, phones: shown, "\(what) (text, --redact)")
    if plainToo {
      try Properties.requireNoControlCharacters(HumanPlanRenderer(color: false, redact: false).render(plan), "\(what) (text)")
    }
    guard renderJSON else { return }
    let json = try Properties.requireJSON(JSONPlanRenderer.render(plan, redact: true), "\(what) (JSON, --redact)")
    try Properties.requireRedacted(Properties.strings(inJSON: json), phones: shown, "\(what) (JSON, --redact)")
  }

  /// A saved plan of `plan` reads back as the same saved plan.
  static func checkSavedPlan(_ plan: Plan, source: [UInt8], what: String) throws(PropertyFailure) {
    let saved = SavedPlan(manifestPath: "watch.yaml", manifestDigest: SHA256Digest.hex(of: source),
                          device: deviceIdentity, plan: plan)
    let text = canonicalJSON(saved)
    let parsed: SavedPlan?
    do { parsed = try SavedPlan.parse(Array(text.utf8), path: "fuzz.tfplan") } catch {
      throw PropertyFailure("a saved plan reads back", "\(what): \(error)\n\(text)")
    }
    try require(parsed == saved, "a saved plan reads back", "\(what): read back differently\n\(text)")
  }

  /// Each change's `after` is what the watch holds after the apply (the ID of a created
  /// reminder aside).
  static func checkPromises(_ plan: Plan, after state: DeviceState, what: String) throws(PropertyFailure) {
    for change in plan.resourceChanges {
      guard let promised = change.after else { continue }
      let held: ResourceValue?
      switch promised {
      case .reminder(let reminder) where change.action == .create:
        held = state.customReminders.first { $0.reminderName == reminder.reminderName }.map { found in
          var found = found
          found.reminderId = reminder.reminderId
          return .reminder(found)
        }
      case .reminder(let reminder):
        held = state.reminders.first { $0.reminderId == reminder.reminderId }.map(ResourceValue.reminder)
      case .contacts:
        held = .contacts(state.contacts)
      case .emergency:
        held = state.emergency.map(ResourceValue.emergency)
      }
      try require(held == promised, "a plan's after is what the watch reads back",
                  "\(what): \(change.address)\npromised: \(promised)\nheld: \(held.map { "\($0)" } ?? "nothing")")
    }
  }

  static func checkExport(_ state: DeviceState, capabilities: DeviceCapabilities, what: String) throws(PropertyFailure) {
    let output: ManifestExport.Output
    do { output = try ManifestExport.export(state, capabilities: capabilities, date: exportDate) } catch {
      throw PropertyFailure("export writes every state", "\(what): \(error)")
    }
    try require(!output.diagnostics.hasErrors, "export states everything an apply leaves", "\(what): \(output.diagnostics)")
    let bytes = Array(output.text.utf8)
    let loaded = ManifestLoader.load(bytes: bytes, file: "export.yaml")
    guard let exported = loaded.manifest else {
      throw PropertyFailure("the export loads", "\(what): \(loaded.diagnostics)\n\(output.text)")
    }
    let result = Planner.plan(exported, state: state, capabilities: capabilities)
    try require(result.plan?.isEmpty == true, "the export round trip is stable (export, then plan against that state: no changes)",
                "\(what): \(result.plan.map(summary) ?? "\(result.diagnostics)")\n\(output.text)")
  }

  /// One line per change: address, action and changed fields.
  static func summary(_ plan: Plan) -> String {
    plan.resourceChanges.map { "\($0.action.symbol) \($0.address) \($0.fields.map(\.field))" }.joined(separator: "; ")
  }
}
