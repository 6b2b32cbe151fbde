import Foundation
import TSApply
import TSDevice
import TSManifest
import TSModel
import TSPlan

/// The `records` target: bytes as each JSON record tsapply writes and reads back later — a
/// saved plan (`SavedPlan.parse`, `tsapply show` and `apply PLANFILE`), a backup (`Backup.read`,
/// `tsapply restore`), a last-applied record (`LastApplied.read`, drift) and a simulated watch's
/// state file (`SimulatedDevice(path:)`).
///
/// Properties, besides not crashing:
/// - every refusal is a clear error: a typed error whose message names the file and says what
///   is wrong in plain words (no `DecodingError` dump); a last-applied record that cannot be
///   used is ignored, by design (drift is a courtesy);
/// - whatever is accepted is used the way tsapply uses it without trouble, and reads back equal
///   when written again: a saved plan renders (text escapes control characters, JSON parses,
///   `--redact` output does not depend on the phone numbers beyond their last two digits); a
///   backup restores — when its state passes restore's checks, the simulated watch takes the
///   restore plan and planning the backup again gives no changes; a last-applied record gives
///   drift that renders; a state file opens as a watch whose state reads, exports and renders;
/// - the fast JSON path (`JSONReader`) reads exactly what `JSONDecoder` reads, when it reads
///   the bytes at all.
enum RecordsTarget {
  static let target = FuzzTarget(
    name: "records",
    summary: "JSON records read back: saved plans, backups, last-applied records, simulator state files",
    seeds: [SeedSource("Tests/TSFuzzTests/Corpus/records")],
    dictionary: "Tests/TSFuzzTests/Dictionaries/records.dict",
    maxLength: 16384,
    check: check)

  /// Checks one input as each kind of record.
  static func check(_ bytes: [UInt8]) async throws(PropertyFailure) {
    let folder = Scratch.folder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try checkFastPath(bytes)
    try checkSavedPlan(bytes, path: folder + "/changes.tfplan")
    let path = folder + "/record.json"
    guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
      throw PropertyFailure("the harness can write its scratch file", path)
    }
    try await checkBackup(path: path, folder: folder)
    try checkLastApplied(bytes, path: path)
    try await checkStateFile(path: path)
  }

  // MARK: The fast JSON path

  /// `JSONReader` (the fast path of state files and records) may give up on any input, but what
  /// it reads must be what `JSONDecoder` reads from the same bytes.
  static func checkFastPath(_ bytes: [UInt8]) throws(PropertyFailure) {
    try checkFastPath(bytes, as: SimulatedWatch.self)
    try checkFastPath(bytes, as: LastApplied.self)
    try checkFastPath(bytes, as: DeviceState.self)
  }

  static func checkFastPath<T: FastJSONDecodable & Equatable>(_ bytes: [UInt8], as type: T.Type) throws(PropertyFailure) {
    let data = Data(bytes)
    guard let fast = JSONReader.decode(type, from: data) else { return }
    let slow = try? JSONDecoder().decode(type, from: data)
    try require(slow == fast, "the fast JSON path reads what JSONDecoder reads", "\(T.self): fast \(fast), JSONDecoder \(slow.map { "\($0)" } ?? "refuses")")
  }

  // MARK: Saved plans

  static func checkSavedPlan(_ bytes: [UInt8], path: String) throws(PropertyFailure) {
    let saved: SavedPlan
    do {
      guard let parsed = try SavedPlan.parse(bytes, path: path) else { return }
      saved = parsed
    } catch {
      try Properties.requireClearRefusal(error.description, naming: path, "a refused saved plan")
      return
    }
    try checkRendering(saved.plan, what: "tsapply show")
    _ = saved.staleness(manifestBytes: bytes, state: DeviceState())
    _ = saved.manifestLocation(planPath: path)
    let again: SavedPlan?
    do { again = try SavedPlan.parse(Array(canonicalJSON(saved).utf8), path: path) } catch {
      throw PropertyFailure("an accepted record reads back equal when written again", "saved plan: \(error)")
    }
    try require(again == saved, "an accepted record reads back equal when written again", "saved plan:\n\(canonicalJSON(saved))")
  }

  // MARK: Backups

  static func checkBackup(path: String, folder: String) async throws(PropertyFailure) {
    let backup: Backup
    do { backup = try Backup.read(path: path) } catch {
      try Properties.requireClearRefusal(error.description, naming: path, "a refused backup")
      return
    }
    let copy = folder + "/backup-again.json"
    let again: Backup?
    do {
      try Data(canonicalJSON(backup).utf8).write(to: URL(fileURLWithPath: copy))
      again = try Backup.read(path: copy)
    } catch {
      throw PropertyFailure("an accepted record reads back equal when written again", "backup: \(error)")
    }
    try require(again == backup, "an accepted record reads back equal when written again", "backup:\n\(canonicalJSON(backup))")
    guard let profile = try? PlatformProfile.named(backup.profile) else { return }
    try await checkRestore(backup.state, on: profile)
  }

  /// What `tsapply restore` does with an accepted backup (Watch.manifest(restoring:) in
  /// TSEngine): state the backup as a manifest, encode it and load it back (so restore checks
  /// it as it checks any manifest), plan it against a factory-fresh watch, apply, plan again.
  static func checkRestore(_ state: DeviceState, on profile: PlatformProfile) async throws(PropertyFailure) {
    let capabilities = profile.capabilities
    let (stated, problems) = StateManifest.manifest(for: state, capabilities: capabilities, file: "backup")
    guard !problems.hasErrors, let yaml = try? ManifestEncoder.encode(stated),
          let manifest = ManifestLoader.load(bytes: Array(yaml.utf8), file: "backup (as a manifest)").manifest else { return }
    let fresh = profile.factoryState
    let result = Planner.plan(manifest, state: fresh, capabilities: capabilities)
    guard var plan = result.plan else { return }
    plan.device = ManifestTarget.deviceIdentity
    try checkRendering(plan, what: "the restore plan on \(profile.name)")
    let device = SimulatedDevice(profile: profile)
    let steps = ApplyOrder.steps(for: plan, state: fresh, capabilities: capabilities)
    do {
      _ = try await Applier(device: device, allowsOnce: capabilities.reminders.supportsOnce).execute(steps, expected: fresh)
    } catch {
      throw PropertyFailure("the watch takes every restore plan the planner makes",
                            "on \(profile.name): \(error)\n\(ManifestTarget.summary(plan))\n\(yaml)")
    }
    let after: DeviceState
    do { after = try await device.readState(capabilities: capabilities) } catch {
      throw PropertyFailure("the watch can be read after a restore", "on \(profile.name): \(error)")
    }
    let again = Planner.plan(manifest, state: after, capabilities: capabilities)
    try require(again.plan?.isEmpty == true, "a restore, then planning the backup again, gives no changes",
                "on \(profile.name): \(again.plan.map(ManifestTarget.summary) ?? "\(again.diagnostics)")\n\(yaml)")
  }

  // MARK: Last-applied records

  static func checkLastApplied(_ bytes: [UInt8], path: String) throws(PropertyFailure) {
    // The record is used only for the watch it names; read it as that watch would.
    struct Named: Decodable { var device: String? }
    let device = (try? JSONDecoder().decode(Named.self, from: Data(bytes)))?.device ?? "sim:/fuzz/.tsapply/device.json"
    guard let record = LastApplied.read(at: path, device: device),
          let profile = try? PlatformProfile.named(record.profile) else { return }
    let current = profile.factoryState
    var plan = Plan(manifestFile: "watch.yaml", profile: profile.name, priorStateDigest: current.fingerprint, resourceChanges: [])
    plan.resourceDrift = Drift.changes(since: record.state, current: current, capabilities: profile.capabilities)
    try checkRendering(plan, what: "the drift since a last-applied record")
  }

  // MARK: State files

  static func checkStateFile(path: String) async throws(PropertyFailure) {
    let device: SimulatedDevice
    do { device = try SimulatedDevice(path: path) } catch {
      try Properties.requireClearRefusal(error.description, naming: path, "a refused state file")
      return
    }
    let profile: PlatformProfile
    let state: DeviceState
    do {
      profile = try device.profile()
      state = try await device.readState(capabilities: profile.capabilities)
    } catch {
      throw PropertyFailure("an accepted state file reads as a watch", "\(error)")
    }
    let capabilities = profile.capabilities
    var plan = Plan(manifestFile: "watch.yaml", profile: profile.name, priorStateDigest: state.fingerprint, resourceChanges: [])
    plan.resourceDrift = Drift.changes(since: profile.factoryState, current: state, capabilities: capabilities)
    try checkRendering(plan, what: "the drift of a state file")
    let output: ManifestExport.Output
    do { output = try ManifestExport.export(state, capabilities: capabilities, date: ManifestTarget.exportDate) } catch {
      throw PropertyFailure("export writes every state", "\(error)")
    }
    // A state the manifest can state without a word of warning round-trips exactly.
    guard output.diagnostics.isEmpty else { return }
    let loaded = ManifestLoader.load(bytes: Array(output.text.utf8), file: "export.yaml")
    guard let manifest = loaded.manifest, loaded.diagnostics.isEmpty else { return }
    let result = Planner.plan(manifest, state: state, capabilities: capabilities)
    guard let replanned = result.plan, result.diagnostics.isEmpty else { return }
    try require(replanned.isEmpty, "the export round trip is stable (export, then plan against that state: no changes)",
                "on \(profile.name): \(ManifestTarget.summary(replanned))\n\(output.text)")
  }

  // MARK: Rendering

  /// Renders `plan` as `show` does and checks the output. Redaction is checked by difference:
  /// the redacted output of `plan` and of the same plan with every phone number changed in all
  /// but its last two digits must be the same text (warnings, free text, aside).
  static func checkRendering(_ plan: Plan, what: String) throws(PropertyFailure) {
    try Properties.requireNoControlCharacters(HumanPlanRenderer(color: false, redact: false).render(plan), "\(what) (text)")
    try Properties.requireJSON(JSONPlanRenderer.render(plan, redact: false), "\(what) (JSON)")
    // Warnings are free text, redacted by other rules (checked by the manifest target); they are
    // masked first in both plans, so only the plan's phone fields can make the outputs differ.
    let base = PhoneVariants.maskingWarnings(of: plan)
    let text = HumanPlanRenderer(color: false, redact: true).render(base)
    try Properties.requireNoControlCharacters(text, "\(what) (text, --redact)")
    let json = JSONPlanRenderer.render(base, redact: true)
    try Properties.requireJSON(json, "\(what) (JSON, --redact)")
    guard !PhoneRedaction.phones(in: plan).isEmpty else { return }
    let other = PhoneVariants.changingPhones(of: base)
    try require(HumanPlanRenderer(color: false, redact: true).render(other) == text,
                "redacted output shows no phone number beyond its last two digits",
                "\(what) (text, --redact) changes with the phone numbers:\n\(text)")
    try require(JSONPlanRenderer.render(other, redact: true) == json,
                "redacted output shows no phone number beyond its last two digits",
                "\(what) (JSON, --redact) changes with the phone numbers:\n\(json)")
  }
}

/// A plan with its phone numbers changed, for checking redaction by difference.
enum PhoneVariants {
  /// `phone` with every ASCII digit but the last two replaced by the next digit (9 by 0), so
  /// the redacted form stays the same and the number does not.
  static func variant(_ phone: String) -> String {
    let total = phone.filter(\.isASCIIDigitCharacter).count
    var seen = 0
    return String(phone.map { character -> Character in
      guard character.isASCIIDigitCharacter else { return character }
      seen += 1
      guard seen <= total - 2, let value = character.wholeNumberValue else { return character }
      return Character(String((value + 1) % 10))
    })
  }

  /// `plan` with every phone number (in contact values and in field values under `phoneNum`)
  /// changed by `variant`.
  static func changingPhones(of plan: Plan) -> Plan {
    var plan = plan
    plan.resourceChanges = plan.resourceChanges.map(change)
    plan.resourceDrift = plan.resourceDrift.map(change)
    return plan
  }

  /// `plan` with its warnings redacted as `--redact` prints them.
  static func maskingWarnings(of plan: Plan) -> Plan {
    var plan = plan
    let phones = PhoneRedaction.phones(in: plan)
    plan.warnings = plan.warnings.map { warning in
      var warning = warning
      warning.message = PhoneRedaction.redactText(warning.message, phones: phones)
      return warning
    }
    return plan
  }

  private static func change(_ change: ResourceChange) -> ResourceChange {
    var change = change
    change.before = change.before.map(value)
    change.after = change.after.map(value)
    change.fields = change.fields.map { field in
      var field = field
      field.before = field.before.map { fieldValue($0) }
      field.after = field.after.map { fieldValue($0) }
      return field
    }
    return change
  }

  private static func value(_ value: ResourceValue) -> ResourceValue {
    func contact(_ contact: Contact) -> Contact {
      var contact = contact
      contact.phoneNum = variant(contact.phoneNum)
      return contact
    }
    switch value {
    case .reminder: return value
    case .contacts(let contacts): return .contacts(contacts.map(contact))
    case .emergency(let emergency):
      return .emergency(EmergencyContacts(contacts: emergency.contacts.map(contact), isSosOn: emergency.isSosOn))
    }
  }

  private static func fieldValue(_ value: FieldValue, key: String? = nil) -> FieldValue {
    switch value {
    case .string(let text) where key == "phoneNum": .string(variant(text))
    case .list(let items): .list(items.map { fieldValue($0) })
    case .object(let entries): .object(entries.map { FieldValue.KeyValue($0.key, fieldValue($0.value, key: $0.key)) })
    default: value
    }
  }
}

extension Character {
  fileprivate var isASCIIDigitCharacter: Bool { isASCII && isNumber }
}

/// A fresh folder per check for the files the records target reads, under one folder per
/// process in the temporary directory (symbolic links resolved, so messages name it as given).
enum Scratch {
  private static let root: String = {
    let base = URL(fileURLWithPath: NSTemporaryDirectory()).resolvingSymlinksInPath().path
    let path = base + "/tsapply-fuzz-\(getpid())"
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
  }()

  /// A new, empty folder.
  static func folder() -> String {
    let path = root + "/" + UUID().uuidString
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
  }
}
