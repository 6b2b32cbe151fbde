import Foundation
import Testing
import TSTestSupport

/// `tsapply monitor` as the built binary, against file-backed simulated watches changed by
/// `tsapply device simulate` from other processes.
@Suite(.serialized) struct MonitorCommandTests {
  static let manifest = MonitorFixtures.manifest

  /// A workspace whose watch (`--device sim:watch.json`, profile `profile`) holds `manifest`.
  static func workspace(profile: String = "default", manifest: String = MonitorCommandTests.manifest,
                        apply: Bool = true) throws -> URL {
    let directory = try TSApplyBinary.temporaryDirectory()
    try manifest.write(to: directory.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    let made = try run(["device", "init", "--profile", profile, "--device", "sim:watch.json"], in: directory)
    #expect(made.status == 0, "\(made.stderr)")
    if apply {
      let applied = try run(["apply", "--auto-approve", "--allow-destroy", "--device", "sim:watch.json"], in: directory)
      #expect(applied.status == 0, "\(applied.stdout)\(applied.stderr)")
    }
    return directory
  }

  /// `tsapply ARGUMENTS` in `directory`, with the workspace's own state folder (`state/`), as
  /// the monitors it starts use.
  static func run(_ arguments: [String], in directory: URL) throws -> ProcessResult {
    try TSApplyBinary.run(arguments, in: directory, environment: ["TSAPPLY_STATE_DIR": directory.path + "/state"])
  }

  /// Makes a change on the watch (`tsapply device simulate WORDS`); returns when the state
  /// file was written (its modification time read right after).
  @discardableResult
  static func simulate(_ words: [String], in directory: URL, device: String = "sim:watch.json") throws -> Date {
    let result = try run(["device", "simulate"] + words + ["--device", device], in: directory)
    #expect(result.status == 0, "\(result.stderr)")
    let file = device.hasPrefix("sim:/") ? String(device.dropFirst(4)) : directory.path + "/" + device.dropFirst(4)
    return (try? FileManager.default.attributesOfItem(atPath: file)[.modificationDate] as? Date) ?? Date()
  }

  @Test(arguments: [
    // (profile, change, interval): listeners report at once; polled platforms within an interval.
    ("default", ["contact-add", "Zed", "+15550199"], "60s"),
    ("fw", ["contact-add", "Zed", "+15550199"], "60s"),
    ("fit", ["contact-add", "Zed", "+15550199"], "2s"),
    ("npk", ["emergency-set", "Pop", "+15550112"], "2s"),
  ])
  func aWatchSideChangeIsReportedWithinOneInterval(_ profile: String, _ change: [String], _ interval: String) async throws {
    let oneEmergencyContact = Self.manifest.replacingOccurrences(of: "    - {name: Dad, phone: \"+15550111\"}\n", with: "")
    let manifest = switch profile {
    case "npk": "version: 1\nemergency:\n  sos: true\n  contacts:\n    - {name: Mom, phone: \"+15550110\"}\n"
    case "fit": oneEmergencyContact
    default: Self.manifest
    }
    let directory = try Self.workspace(profile: profile, manifest: manifest)
    let monitor = try MonitorProcess(["--interval", interval], in: directory)
    let online = try await monitor.wait(for: "online")
    let changed = try Self.simulate(change, in: directory)
    let drift = try await monitor.wait(for: "drift")
    let latency = try MonitorProcess.time(of: drift).timeIntervalSince(changed)
    let listeners = online["listeners"] as? [String: String] ?? [:]
    #expect(latency <= MonitorProcess.seconds(interval) + 5, "reported \(latency)s after the change")
    if listeners[change[0] == "contact-add" ? "contacts" : "emergency_contacts"] == "listening" {
      #expect(latency < 10, "a listener reports long before the \(interval) interval: \(latency)s")
    }
    #expect((drift["reconcile"] as? String) == "off")
    #expect(!(drift["message"] as? String ?? "").isEmpty)
    let stopped = monitor.stop()
    #expect(stopped.status == 0, "\(stopped.stderr)")
  }

  @Test func reconcileMakesTheWatchMatchAgainWithinTwoIntervals() async throws {
    let directory = try Self.workspace()
    let monitor = try MonitorProcess(["--reconcile", "--interval", "1s"], in: directory)
    try await monitor.wait(for: "online")
    let changed = try Self.simulate(["emergency-set", "Mom", "+15550110"], in: directory)
    let drift = try await monitor.wait(for: "drift")
    #expect((drift["reconcile"] as? String) == "applied")
    let applied = try await monitor.wait(for: "applied")
    #expect(applied["drift_id"] as? String == drift["id"] as? String)
    #expect((applied["backup"] as? String)?.contains("/backups/") == true)
    let resolved = try await monitor.wait(for: "resolved")
    #expect(resolved["healed"] as? Bool == true)
    let healedAfter = try MonitorProcess.time(of: resolved).timeIntervalSince(changed)
    #expect(healedAfter <= 2 * 1 + 5, "the watch matched the manifest again \(healedAfter)s after the change")
    let plan = try Self.run(["plan", "--detailed-exitcode", "--device", "sim:watch.json"], in: directory)
    #expect(plan.status == 0, "the watch matches the manifest again: \(plan.stdout)")
    #expect(monitor.stop().status == 0)
  }

  @Test func anUnsafeHealIsReportedAndLeftAlone() async throws {
    let directory = try Self.workspace()
    let monitor = try MonitorProcess(["--reconcile", "--interval", "500ms"], in: directory)
    try await monitor.wait(for: "online")
    try Self.simulate(["emergency-set", "Mom", "+15550110", "Dad", "+15550111", "Zed", "+15550199"], in: directory)
    let drift = try await monitor.wait(for: "drift")
    #expect((drift["reconcile"] as? String) == "unsafe")
    #expect(((drift["findings"] as? [[String: Any]])?.first?["kind"] as? String) == "removes_emergency_contacts")
    try await Task.sleep(for: .seconds(2))
    #expect(monitor.events().filter { $0["kind"] as? String == "drift" }.count == 1, "reported once, not fought")
    #expect(monitor.events().allSatisfy { $0["kind"] as? String != "applied" })
    let plan = try Self.run(["plan", "--detailed-exitcode", "--device", "sim:watch.json"], in: directory)
    #expect(plan.status == 2, "left alone: the contact added on the watch is still there")
    #expect(monitor.stop().status == 0)
  }

  /// A workspace with an empty manifest and a Fit watch in the folder of a recording `--on-sos`
  /// program (`MonitorFixtures.recorder`).
  static func recordingWorkspace() throws -> (directory: URL, folder: String, script: String, device: String) {
    let directory = try TSApplyBinary.temporaryDirectory()
    let (folder, script) = try MonitorFixtures.recorder(in: directory.path)
    let device = "sim:" + folder + "/watch.json"
    #expect(try Self.run(["device", "init", "--profile", "fit", "--device", device], in: directory).status == 0)
    try "version: 1\n".write(to: directory.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    return (directory, folder, script, device)
  }

  @Test func onSOSRunsExactlyTheGivenProgramWithTheEventInItsEnvironment() async throws {
    let (directory, folder, script, device) = try Self.recordingWorkspace()
    let command = MonitorFixtures.quoted(script) + " 'SOS: \"$(touch pwned3)\" $HOME' \"line one\nline two\""
    let monitor = try MonitorProcess(["--device", device, "--on-sos", command], in: directory)
    try await monitor.wait(for: "online")
    try Self.simulate(["sos"], in: directory, device: device)
    let sos = try await monitor.wait(for: "sos")
    try await MonitorProcess.until(timeout: 60) { FileManager.default.fileExists(atPath: folder + "/deliveries") }
    #expect(try MonitorFixtures.arguments(in: folder) == [script, #"SOS: "$(touch pwned3)" $HOME"#, "line one\nline two"])
    let environment = try MonitorFixtures.environment(in: folder)
    #expect(environment["TSAPPLY_EVENT_ID"] == sos["id"] as? String)
    #expect(environment["TSAPPLY_EVENT_KIND"] == "sos")
    #expect(environment["TSAPPLY_EVENT_WATCH"] == device)
    #expect(environment["TSAPPLY_EVENT_PROFILE"] == "fit")
    #expect(environment["TSAPPLY_EVENT_JSON"].flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }?["id"]
            as? String == sos["id"] as? String)
    #expect(MonitorFixtures.shellTraces(in: [directory.path, folder, FileManager.default.currentDirectoryPath]).isEmpty,
            "something was run by a shell")
    #expect(monitor.stop().status == 0)
  }

  /// `monitor --fleet` watches what the fleet file names, as it changes: a watch whose file is
  /// missing at start is reported offline (not dropped in silence while the others run) and
  /// watched once it exists; a watch added to the fleet file while the monitor runs gets a
  /// monitor of its own. Both forward their SOS presses (the care-home report: neither did).
  @Test func aFleetMonitorWatchesAWatchMissingAtStartAndOneAddedLater() async throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    let (folder, script) = try MonitorFixtures.recorder(in: directory.path)
    #expect(try Self.run(["device", "init", "--profile", "fit", "--device", "sim:watches/a.json"], in: directory).status == 0)
    try "version: 1\n".write(to: directory.appendingPathComponent("ward.yaml"), atomically: true, encoding: .utf8)
    let fleet = "version: 1\ndefaults: ward.yaml\nwatches:\n  a: {device: sim:watches/a.json}\n  b: {device: sim:watches/b.json}\n"
    try fleet.write(to: directory.appendingPathComponent("fleet.yaml"), atomically: true, encoding: .utf8)
    let monitor = try MonitorProcess(["--fleet", "fleet.yaml", "--interval", "1s", "--on-sos", MonitorFixtures.quoted(script)], in: directory)
    try await monitor.wait(for: "online")
    try await monitor.wait(for: "offline") { ($0["message"] as? String ?? "").contains("no simulated watch") }
    #expect(try Self.run(["device", "init", "--profile", "fit", "--device", "sim:watches/b.json"], in: directory).status == 0)
    try await MonitorProcess.until(timeout: 60) { monitor.events().filter { $0["kind"] as? String == "online" }.count >= 2 }
    #expect(try Self.run(["device", "init", "--profile", "fit", "--device", "sim:watches/c.json"], in: directory).status == 0)
    try (fleet + "  c: {device: sim:watches/c.json}\n").write(to: directory.appendingPathComponent("fleet.yaml"), atomically: true, encoding: .utf8)
    try await MonitorProcess.until(timeout: 60) { monitor.events().filter { $0["kind"] as? String == "online" }.count >= 3 }
    try Self.simulate(["sos"], in: directory, device: "sim:watches/b.json")
    try Self.simulate(["sos"], in: directory, device: "sim:watches/c.json")
    try await MonitorProcess.until(timeout: 60) {
      ((try? String(contentsOfFile: folder + "/deliveries", encoding: .utf8)) ?? "").split(separator: "\n").count >= 2
    }
    let stopped = monitor.stop()
    #expect(stopped.status == 0)
    #expect(stopped.stderr.contains("names 1 more watch (c): monitoring it too"), "\(stopped.stderr)")
    let delivered = try String(contentsOfFile: folder + "/deliveries", encoding: .utf8).split(separator: "\n")
    #expect(Set(delivered).count == 2 && delivered.count == 2, "each press delivered once: \(delivered)")
  }

  /// The fleet file gives a watch another device while the monitor runs (the resident's watch
  /// replaced): the monitor moves to it — the new watch's SOS press is delivered, and events
  /// name the new device — and another spelling of the same device moves nothing (the monitor
  /// went on watching the old device, and the new watch's press reached no one: fresh-eyes
  /// finding).
  @Test func aFleetMonitorFollowsAWatchToTheDeviceTheFleetFileNowGives() async throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    let (folder, script) = try MonitorFixtures.recorder(in: directory.path)
    for device in ["sim:watches/old.json", "sim:watches/new.json"] {
      #expect(try Self.run(["device", "init", "--profile", "fit", "--device", device], in: directory).status == 0)
    }
    try "version: 1\n".write(to: directory.appendingPathComponent("ward.yaml"), atomically: true, encoding: .utf8)
    let fleet = "version: 1\ndefaults: ward.yaml\nwatches:\n  room-5: {device: sim:watches/old.json}\n"
    try fleet.write(to: directory.appendingPathComponent("fleet.yaml"), atomically: true, encoding: .utf8)
    let monitor = try MonitorProcess(["--fleet", "fleet.yaml", "--interval", "1s", "--on-sos", MonitorFixtures.quoted(script)], in: directory)
    try await monitor.wait(for: "online")
    try fleet.replacingOccurrences(of: "sim:watches/old.json", with: "sim:./watches/old.json")
      .write(to: directory.appendingPathComponent("fleet.yaml"), atomically: true, encoding: .utf8)
    try await Task.sleep(for: .milliseconds(2500))  // two looks of the fleet file (every 1 s here)
    #expect(monitor.events().filter { $0["kind"] as? String == "online" }.count == 1, "another spelling moves nothing")
    try fleet.replacingOccurrences(of: "old.json", with: "new.json").write(to: directory.appendingPathComponent("fleet.yaml"), atomically: true, encoding: .utf8)
    try await MonitorProcess.until(timeout: 60) { monitor.events().filter { $0["kind"] as? String == "online" }.count >= 2 }
    try Self.simulate(["sos"], in: directory, device: "sim:watches/new.json")
    try await MonitorProcess.until(timeout: 60) { FileManager.default.fileExists(atPath: folder + "/deliveries") }
    let stopped = monitor.stop()
    #expect(stopped.status == 0)
    #expect(stopped.stderr.contains("fleet.yaml gives room-5 the device sim:watches/new.json: monitoring it there"), "\(stopped.stderr)")
    let onlines = monitor.events().filter { $0["kind"] as? String == "online" }
    #expect(onlines.count == 2 && (onlines.last?["device"] as? String ?? "").hasSuffix("/watches/new.json"), "\(onlines)")
    let sos = monitor.events().filter { $0["kind"] as? String == "sos" }
    #expect(sos.count == 1 && (sos.first?["device"] as? String ?? "").hasSuffix("/watches/new.json"), "\(sos)")
  }

  /// Two watches whose devices the fleet file swaps while the monitor runs are each followed to
  /// the other's device once the monitor of that device retired: both go on being monitored and
  /// their presses delivered (fresh-eyes finding: each new monitor found the device's lock held
  /// by the retiring one, "another tsapply monitor watches this watch" named the monitor itself,
  /// and both watches went unmonitored — the whole monitor ended when they were all it had).
  @Test func twoWatchesSwappingDevicesAreBothFollowed() async throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    let (folder, script) = try MonitorFixtures.recorder(in: directory.path)
    for device in ["sim:watches/a.json", "sim:watches/b.json"] {
      #expect(try Self.run(["device", "init", "--profile", "fit", "--device", device], in: directory).status == 0)
    }
    try "version: 1\n".write(to: directory.appendingPathComponent("ward.yaml"), atomically: true, encoding: .utf8)
    let fleet = directory.appendingPathComponent("fleet.yaml")
    try "version: 1\ndefaults: ward.yaml\nwatches:\n  room-1: {device: sim:watches/a.json}\n  room-2: {device: sim:watches/b.json}\n"
      .write(to: fleet, atomically: true, encoding: .utf8)
    let monitor = try MonitorProcess(["--fleet", "fleet.yaml", "--interval", "1s", "--on-sos", MonitorFixtures.quoted(script)], in: directory)
    try await MonitorProcess.until(timeout: 60) { monitor.events().filter { $0["kind"] as? String == "online" }.count >= 2 }
    // room-1's press not delivered yet (its receiver down): its monitor retires delivering it,
    // holding the device a while.
    _ = FileManager.default.createFile(atPath: folder + "/down", contents: nil)
    try Self.simulate(["sos"], in: directory, device: "sim:watches/a.json")
    try await monitor.wait(for: "error") { $0["reason"] as? String == "delivery" }
    try "version: 1\ndefaults: ward.yaml\nwatches:\n  room-1: {device: sim:watches/b.json}\n  room-2: {device: sim:watches/a.json}\n"
      .write(to: fleet, atomically: true, encoding: .utf8)
    // Both followed while the receiver is still down: the monitor retiring from a is stopped
    // (its grace, then its press stays in a's outbox for a's new monitor), not waited for.
    try await MonitorProcess.until(timeout: 60) { monitor.events().filter { $0["kind"] as? String == "online" }.count >= 4 }
    try Self.simulate(["sos"], in: directory, device: "sim:watches/a.json")
    try await MonitorProcess.until(timeout: 60) { monitor.events().filter { $0["kind"] as? String == "sos" }.count >= 3 }
    try FileManager.default.removeItem(atPath: folder + "/down")
    try await MonitorProcess.until(timeout: 60) {
      ((try? String(contentsOfFile: folder + "/deliveries", encoding: .utf8)) ?? "").split(separator: "\n").count >= 2
    }
    let stopped = monitor.stop()
    #expect(stopped.status == 0, "\(stopped.stderr)")
    #expect(!stopped.stderr.contains("not monitored by this process"), "\(stopped.stderr)")
    let onlines = monitor.events().filter { $0["kind"] as? String == "online" }.suffix(2)
    let followed = Dictionary(onlines.map { ($0["watch"] as? String ?? "", ($0["device"] as? String ?? "").components(separatedBy: "/").last ?? "") }) { $1 }
    #expect(followed == ["room-1": "b.json", "room-2": "a.json"], "\(onlines)")
    // room-1's press is said again by the monitor that takes device a over (left in its outbox,
    // delivered by room-2's monitor: `delivered_by`), still room-1's, with its id.
    let sos = monitor.events().filter { $0["kind"] as? String == "sos" }
    #expect(sos.map { $0["watch"] as? String } == ["room-1", "room-1", "room-2"], "\(sos)")
    #expect(sos[1]["id"] as? String == sos[0]["id"] as? String && sos[1]["left_in_outbox"] as? Bool == true
              && sos[1]["delivered_by"] as? String == "room-2", "\(sos)")
    // room-1's press, left in a's outbox, is delivered by room-2's monitor and still room-1's
    // (fresh-eyes finding: its failure was shown on room-2's row).
    let first = sos.first?["id"] as? String
    let about = monitor.events().filter { ["delivered", "error"].contains($0["kind"] as? String) && $0["event_id"] as? String == first }
    #expect(!about.isEmpty && about.allSatisfy { $0["watch"] as? String == "room-1" }, "\(about)")
  }

  /// An SOS press of a watch removed from the fleet file — while `monitor --fleet` ran, or
  /// while it was stopped — still undelivered when it stopped (its receiver down), is delivered
  /// by the next start, which does not monitor the watch (fresh-eyes findings: it waited in the
  /// outbox until the watch was put back).
  @Test(arguments: [true, false])
  func anUndeliveredPressOfAWatchRemovedFromTheFleetIsDeliveredAfterARestart(removedWhileRunning: Bool) async throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    let (folder, script) = try MonitorFixtures.recorder(in: directory.path)
    _ = FileManager.default.createFile(atPath: folder + "/down", contents: nil)
    for device in ["sim:watches/a.json", "sim:watches/b.json"] {
      #expect(try Self.run(["device", "init", "--profile", "fit", "--device", device], in: directory).status == 0)
    }
    try "version: 1\n".write(to: directory.appendingPathComponent("ward.yaml"), atomically: true, encoding: .utf8)
    let fleet = directory.appendingPathComponent("fleet.yaml")
    try "version: 1\ndefaults: ward.yaml\nwatches:\n  a: {device: sim:watches/a.json}\n  b: {device: sim:watches/b.json}\n"
      .write(to: fleet, atomically: true, encoding: .utf8)
    let arguments = ["--fleet", "fleet.yaml", "--interval", "1s", "--on-sos", MonitorFixtures.quoted(script)]
    let first = try MonitorProcess(arguments, in: directory)
    try await MonitorProcess.until(timeout: 60) { first.events().filter { $0["kind"] as? String == "online" }.count >= 2 }
    try Self.simulate(["sos"], in: directory, device: "sim:watches/a.json")
    let sos = try await first.wait(for: "sos")
    try await first.wait(for: "error") { $0["reason"] as? String == "delivery" }
    let without = "version: 1\ndefaults: ward.yaml\nwatches:\n  b: {device: sim:watches/b.json}\n"
    if removedWhileRunning {
      try without.write(to: fleet, atomically: true, encoding: .utf8)
      try await first.wait(for: "removed")
    }
    let stopped = first.stop()
    if !removedWhileRunning { try without.write(to: fleet, atomically: true, encoding: .utf8) }
    #expect(stopped.status == 0, "\(stopped.stderr)")
    #expect(!FileManager.default.fileExists(atPath: folder + "/deliveries"), "not delivered yet: its receiver is down")

    try FileManager.default.removeItem(atPath: folder + "/down")
    let second = try MonitorProcess(arguments, in: directory)
    try await MonitorProcess.until(timeout: 60) { FileManager.default.fileExists(atPath: folder + "/deliveries") }
    try await second.wait(for: "online")
    let restarted = second.stop()
    #expect(restarted.stderr.contains("Delivering the SOS presses left in the outbox of 1 device fleet.yaml no longer names (a's sim:watches/a.json); it is not monitored."),
            "\(restarted.stderr)")
    let delivered = try String(contentsOfFile: folder + "/deliveries", encoding: .utf8).split(separator: "\n")
    #expect(delivered == [Substring(sos["id"] as? String ?? "-")], "\(delivered)")
    #expect(second.events().filter { $0["kind"] as? String == "online" }.allSatisfy { $0["watch"] as? String == "b" }, "a is not monitored")
  }

  /// A watch the monitor has been waiting for (named by the fleet file, not made yet): an SOS
  /// pressed as soon as it exists, before the monitor's next try reaches it, is delivered once,
  /// replayed (the clinic report: lost, the watch having no event handled before). A press made
  /// before the monitor started waiting would not be.
  @Test func anSOSPressedBeforeTheMonitorFirstReachedAWatchItWaitedForIsDelivered() async throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    let (folder, script) = try MonitorFixtures.recorder(in: directory.path)
    #expect(try Self.run(["device", "init", "--profile", "fit", "--device", "sim:watches/a.json"], in: directory).status == 0)
    try "version: 1\n".write(to: directory.appendingPathComponent("ward.yaml"), atomically: true, encoding: .utf8)
    try "version: 1\ndefaults: ward.yaml\nwatches:\n  a: {device: sim:watches/a.json}\n  b: {device: sim:watches/b.json}\n"
      .write(to: directory.appendingPathComponent("fleet.yaml"), atomically: true, encoding: .utf8)
    let monitor = try MonitorProcess(["--fleet", "fleet.yaml", "--interval", "2s", "--on-sos", MonitorFixtures.quoted(script)], in: directory)
    try await monitor.wait(for: "online")
    try await monitor.wait(for: "offline") { ($0["message"] as? String ?? "").contains("no simulated watch") }
    #expect(try Self.run(["device", "init", "--profile", "fit", "--device", "sim:watches/b.json"], in: directory).status == 0)
    try Self.simulate(["sos"], in: directory, device: "sim:watches/b.json")
    try await MonitorProcess.until(timeout: 60) { FileManager.default.fileExists(atPath: folder + "/deliveries") }
    try await MonitorProcess.until(timeout: 60) { monitor.events().filter { $0["kind"] as? String == "online" }.count >= 2 }
    usleep(500_000)
    let stopped = monitor.stop()
    #expect(stopped.status == 0, "\(stopped.stderr)")
    let delivered = try String(contentsOfFile: folder + "/deliveries", encoding: .utf8).split(separator: "\n")
    #expect(delivered.count == 1, "delivered once: \(delivered)")
    let sos = monitor.events().filter { $0["kind"] as? String == "sos" }
    #expect(sos.count == 1 && sos.first?["watch"] as? String == "b", "\(sos)")
  }

  @Test func aMonitorKilledAfterTheSOSDeliversItWhenRestarted() async throws {
    let directory = try Self.workspace(profile: "fit", manifest: "version: 1\n", apply: false)
    let (folder, script) = try MonitorFixtures.recorder(in: directory.path)
    _ = FileManager.default.createFile(atPath: folder + "/down", contents: nil)
    let arguments = ["--on-sos", MonitorFixtures.quoted(script)]
    let first = try MonitorProcess(arguments, in: directory)
    try await first.wait(for: "online")
    try Self.simulate(["sos"], in: directory)
    let sos = try await first.wait(for: "sos")
    try await first.wait(for: "error") { $0["reason"] as? String == "delivery" }
    first.kill()
    let outbox = try #require(MonitorProcess.outboxFiles(in: directory).first, "the SOS waits in the outbox")
    #expect(outbox.hasSuffix("/\(sos["id"] as? String ?? "?").json"))
    #expect(try ReconcileTests.mode(URL(fileURLWithPath: outbox)) == 0o600)

    try FileManager.default.removeItem(atPath: folder + "/down")
    let second = try MonitorProcess(arguments, in: directory)
    try await MonitorProcess.until(timeout: 60) { FileManager.default.fileExists(atPath: folder + "/deliveries") }
    try await MonitorProcess.until(timeout: 60) { MonitorProcess.outboxFiles(in: directory).isEmpty }
    let stopped = second.stop()
    #expect(stopped.status == 0)
    #expect(try String(contentsOfFile: folder + "/deliveries", encoding: .utf8) == (sos["id"] as? String ?? "?") + "\n",
            "delivered once, with the id the first run gave it")
    #expect(stopped.stderr.contains("left in the outbox by an earlier run"), "\(stopped.stderr)")
    // The restart says the press again (the first run may have been killed before it said it),
    // with its id, marked as left in the outbox; no new press.
    let said = second.events().filter { $0["kind"] as? String == "sos" }
    #expect(said.count == 1 && said.first?["id"] as? String == sos["id"] as? String && said.first?["left_in_outbox"] as? Bool == true,
            "\(said)")
  }

  /// Emergency contacts stored again on the watch without their short names reach the same
  /// numbers: the drift is reported (`sos_at_risk: false`) with no critical `sos_drift` alert;
  /// a number changed on the watch then is SOS at risk (fresh-eyes finding: the short names
  /// alone raised "SOS at risk: a press may reach no one").
  @Test func anEmergencyDriftOfShortNamesOnlyIsNoSOSAtRisk() async throws {
    let directory = try Self.workspace()
    let monitor = try MonitorProcess(["--interval", "1s", "--on-event", "/bin/true", "--events", "all"], in: directory)
    defer { _ = monitor.stop() }
    _ = try await monitor.wait(for: "online")
    try Self.simulate(["emergency-set", "Mom", "+15550110", "Dad", "+15550111"], in: directory)
    let drift = try await monitor.wait(for: "drift")
    #expect(drift["sos_at_risk"] as? Bool == false, "\(drift)")
    _ = try await monitor.wait(for: "alert") { $0["alert"] as? String == "drift" }
    #expect(!monitor.events().contains { $0["alert"] as? String == "sos_drift" }, "\(monitor.events())")

    try Self.simulate(["emergency-set", "Mom", "+15550119", "Dad", "+15550111"], in: directory)
    let atRisk = try await monitor.wait(for: "drift") { $0["sos_at_risk"] as? Bool == true }
    #expect((atRisk["addresses"] as? [String]) == ["emergency"], "\(atRisk)")
    _ = try await monitor.wait(for: "alert") { $0["alert"] as? String == "sos_drift" }
  }

  /// A monitor killed with SIGKILL while it heals (SOS switched off on the watch, the heal's
  /// apply under way) reports that drift when it starts again — `reconcile: interrupted`, with
  /// the time it was found — and then says how it ended: the drift was never reported at all,
  /// nor its SOS-at-risk alert (fresh-eyes finding).
  @Test func aMonitorKilledWhileItHealsReportsTheDriftWhenRestarted() async throws {
    let directory = try Self.workspace()
    try Self.simulate(["emergency-clear"], in: directory)
    let arguments = ["--reconcile", "--interval", "1s", "--on-event", "/bin/true", "--events", "all"]
    let first = try MonitorProcess(arguments, in: directory, environment: ["TSAPPLY_SIM_LATENCY": "700,0"])
    let state = directory.appendingPathComponent("state/watches").path
    func intent() -> String? {
      ((try? FileManager.default.contentsOfDirectory(atPath: state)) ?? []).map { state + "/" + $0 + "/monitor-heal.json" }
        .first { FileManager.default.fileExists(atPath: $0) }
    }
    try await MonitorProcess.until(timeout: 60) { intent() != nil }
    first.kill()
    #expect(first.events().allSatisfy { $0["kind"] as? String != "drift" }, "killed before its heal ended: \(first.events())")
    #expect(first.events().contains { $0["kind"] as? String == "alert" && $0["alert"] as? String == "sos_drift" },
            "SOS at risk raised by the check, before the heal: \(first.events())")
    let kept = try #require(intent())
    #expect(try ReconcileTests.mode(URL(fileURLWithPath: kept)) == 0o600)

    let second = try MonitorProcess(arguments, in: directory)
    let drift = try await second.wait(for: "drift")
    #expect(drift["reconcile"] as? String == "interrupted", "\(drift)")
    #expect((drift["message"] as? String)?.contains("emergency (2 removed, SOS switched off)") == true, "\(drift)")
    #expect((drift["message"] as? String)?.contains("the monitor stopped while healing it") == true, "\(drift)")
    // SOS at risk was raised by the killed monitor's check, before its heal (kept open across
    // the restart), or by the restarted one.
    #expect((first.events() + second.events()).contains { $0["kind"] as? String == "alert" && $0["alert"] as? String == "sos_drift" },
            "\(first.events())\n\(second.events())")
    // How it ended: healed by the next check, or by the killed heal itself.
    try await MonitorProcess.until(timeout: 60) {
      second.events().contains { $0["kind"] as? String == "resolved" && $0["drift_id"] as? String == drift["id"] as? String }
        || second.events().contains { $0["kind"] as? String == "drift" && $0["supersedes"] as? String == drift["id"] as? String }
    }
    // Ended with no new drift: the killed heal's writes ended it, and `resolved` says healed
    // (it said the watch went back by itself, fresh-eyes finding).
    if let resolved = second.events().first(where: { $0["kind"] as? String == "resolved" && $0["drift_id"] as? String == drift["id"] as? String }) {
      #expect(resolved["healed"] as? Bool == true, "\(resolved)")
    }
    try await MonitorProcess.until(timeout: 60) { try Self.run(["plan", "--detailed-exitcode", "--device", "sim:watch.json"], in: directory).status == 0 }
    #expect(second.stop().status == 0)
    #expect(intent() == nil, "taken once reported")
  }

  /// The care-home repro: the monitor killed with SIGKILL, SOS pressed with `device simulate
  /// sos`, the monitor started again seconds later: the replayed event — its log line and what
  /// `--on-sos` is given — says when the wearer pressed (the journal's time), not when the
  /// monitor came back, with `heard_at` and `replayed`.
  @Test func anSOSPressedWhileTheMonitorWasKilledKeepsWhenItWasPressed() async throws {
    let (directory, folder, script, device) = try Self.recordingWorkspace()
    let arguments = ["--device", device, "--on-sos", MonitorFixtures.quoted(script)]
    let first = try MonitorProcess(arguments, in: directory)
    try await first.wait(for: "online")
    first.kill()
    let before = Date()
    try Self.simulate(["sos"], in: directory, device: device)
    let after = Date()
    try await Task.sleep(for: .seconds(3))  // the outage: longer than heard_at's 2 s
    let second = try MonitorProcess(arguments, in: directory)
    let sos = try await second.wait(for: "sos")
    let pressed = try MonitorProcess.time(of: sos)
    #expect(pressed >= before.addingTimeInterval(-0.001) && pressed <= after.addingTimeInterval(0.001),
            "the press's time, \(before)…\(after): \(sos)")
    var heard = sos
    heard["time"] = sos["heard_at"]
    #expect(try MonitorProcess.time(of: heard).timeIntervalSince(pressed) >= 3, "\(sos)")
    #expect(sos["replayed"] as? Bool == true, "\(sos)")
    try await MonitorProcess.until(timeout: 60) { FileManager.default.fileExists(atPath: folder + "/deliveries") }
    let environment = try MonitorFixtures.environment(in: folder)
    #expect(environment["TSAPPLY_EVENT_TIME"] == sos["time"] as? String)
    #expect(environment["TSAPPLY_EVENT_HEARD_AT"] == sos["heard_at"] as? String)
    #expect(environment["TSAPPLY_EVENT_REPLAYED"] == "true")
    #expect(second.stop().status == 0)
  }

  @Test func onceExitsLikeDrift() async throws {
    let fresh = try TSApplyBinary.temporaryDirectory()
    try Self.manifest.write(to: fresh.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    let missing = try Self.run(["monitor", "--once"], in: fresh)
    #expect(missing.status == 1 && missing.stderr.contains("no simulated watch"), "\(missing.stderr)")
    #expect(missing.stdout.isEmpty, "a misconfiguration is no outage: \(missing.stdout)")
    let directory = try Self.workspace()
    // Its first read failing: an `offline` event in the outputs too, for a job that reads them (exit 1).
    let unreadable = try TSApplyBinary.run(["monitor", "--once", "--json", "--device", "sim:watch.json"], in: directory,
                                           environment: ["TSAPPLY_STATE_DIR": directory.path + "/state", "TSAPPLY_SIM_FAULT": "fail@1"])
    #expect(unreadable.status == 1 && unreadable.stdout.contains(#""kind":"offline""#), "\(unreadable.stdout)\(unreadable.stderr)")
    let clean = try Self.run(["monitor", "--once", "--device", "sim:watch.json"], in: directory)
    #expect(clean.status == 0, "\(clean.stderr)")
    #expect(clean.stdout.isEmpty, "no event: nothing drifted")
    try Self.simulate(["contact-add", "Zed", "+15550199"], in: directory)
    let drifted = try Self.run(["monitor", "--once", "--device", "sim:watch.json"], in: directory)
    #expect(drifted.status == 2)
    let line = try #require(drifted.stdout.split(separator: "\n").first)
    let event = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    #expect(event["kind"] as? String == "drift" && event["addresses"] as? [String] == ["contacts"])
    #expect(!drifted.stdout.contains("15550199") && drifted.stdout.contains("+******99"), "phones are masked by default")
    let shown = try Self.run(["monitor", "--once", "--show-sensitive", "--device", "sim:watch.json"], in: directory)
    #expect(shown.stdout.contains("+15550199"))
    // A heal that fails is an error for cron (1), not the drift a heal fixed (2).
    let failing = try TSApplyBinary.run(["monitor", "--once", "--reconcile", "--device", "sim:watch.json"], in: directory,
                                        environment: ["TSAPPLY_STATE_DIR": directory.path + "/state", "TSAPPLY_SIM_FAULT": "fail@7"])
    #expect(failing.status == 1 && failing.stderr.contains("healing the drift failed"), "\(failing.stdout)\(failing.stderr)")
    // A timeout (6001) can pass: the event says `retrying`, by the next run (no count, no time: cron decides).
    #expect(failing.stdout.contains(#""reconcile":"retrying""#) && !failing.stdout.contains("next_retry"), "\(failing.stdout)")
    #expect(failing.stderr.contains("the next run of 'tsapply monitor --once' tries again"), "\(failing.stderr)")
    let healed = try Self.run(["monitor", "--once", "--reconcile", "--device", "sim:watch.json"], in: directory)
    #expect(healed.status == 2 && healed.stdout.contains(#""kind":"applied""#), "\(healed.stdout)\(healed.stderr)")
    // The drift's end is said by the run that healed it, as a running monitor says it: a cron
    // log reader closes the drift (fresh-eyes finding: the next run said nothing, and it stayed open).
    #expect(healed.stdout.split(separator: "\n").last?.contains(#""kind":"resolved""#) == true
            && healed.stdout.contains(#""healed":true"#), "\(healed.stdout)")
    #expect(try Self.run(["monitor", "--once", "--device", "sim:watch.json"], in: directory).status == 0)
  }

  @Test func theLogIsAppendedAndPrivate() async throws {
    let directory = try Self.workspace()
    try Self.simulate(["reminder-toggle", "1"], in: directory)
    for _ in 0..<2 {
      #expect(try Self.run(["monitor", "--once", "--log", "events.jsonl", "--device", "sim:watch.json"], in: directory).status == 2)
    }
    let log = directory.appendingPathComponent("events.jsonl")
    #expect(try ReconcileTests.mode(log) == 0o600)
    let lines = try String(contentsOf: log, encoding: .utf8).split(separator: "\n")
    #expect(lines.count == 2 && lines.allSatisfy { $0.contains(#""kind":"drift""#) })
  }

  /// The example unit's command line, run as systemd would run it (`%h` a temporary home):
  /// it starts, reports the watch online, and stops cleanly on SIGTERM.
  @Test func theSystemdExampleRuns() async throws {
    let unit = try String(contentsOf: TSApplyBinary.packageRoot.appendingPathComponent("examples/systemd/tsapply-monitor.service"),
                          encoding: .utf8)
    let home = try TSApplyBinary.temporaryDirectory()
    let line = try #require(unit.replacingOccurrences(of: "\\\n", with: " ").split(separator: "\n")
      .first { $0.hasPrefix("ExecStart=") }).dropFirst("ExecStart=".count).replacingOccurrences(of: "%h", with: home.path)
    // systemd's splitting, for this line: spaces separate words, "…" quotes one.
    var words: [String] = [], word = "", quoted = false
    for character in line {
      if character == "\"" { quoted.toggle() } else if character == " " && !quoted { if !word.isEmpty { words.append(word) }; word = "" } else { word.append(character) }
    }
    if !word.isEmpty { words.append(word) }
    #expect(words.first == "/usr/local/bin/tsapply" && words.dropFirst().first == "monitor")
    let folder = home.appendingPathComponent("mum-watch")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    try FileManager.default.createDirectory(at: home.appendingPathComponent("bin"), withIntermediateDirectories: true)
    try FileManager.default.createDirectory(at: home.appendingPathComponent(".config/tsapply"), withIntermediateDirectories: true)
    try "#!/bin/sh\nexit 0\n".write(to: home.appendingPathComponent("bin/sos-alert"), atomically: true, encoding: .utf8)
    chmod(home.appendingPathComponent("bin/sos-alert").path, 0o755)
    try "secret\n".write(to: home.appendingPathComponent(".config/tsapply/webhook.key"), atomically: true, encoding: .utf8)
    chmod(home.appendingPathComponent(".config/tsapply/webhook.key").path, 0o600)
    try Self.manifest.write(to: folder.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    #expect(try Self.run(["device", "init"], in: folder).status == 0)
    let running = try TSApplyBinary.start(Array(words.dropFirst()), in: folder,
                                          environment: ["TSAPPLY_STATE_DIR": folder.path + "/state"])
    let log = home.appendingPathComponent(".local/state/tsapply/monitor.jsonl")
    try await MonitorProcess.until(timeout: 60) { ((try? String(contentsOf: log, encoding: .utf8)) ?? "").contains(#""kind":"online""#) }
    running.send(SIGTERM)
    let result = running.wait()
    #expect(result.status == 0, "\(result.stderr)")
    #expect(try ReconcileTests.mode(log) == 0o600)
  }

  @Test(arguments: [SIGTERM, SIGINT])
  func aSignalStopsItCleanly(_ signal: Int32) async throws {
    let directory = try Self.workspace()
    let monitor = try MonitorProcess([], in: directory)
    try await monitor.wait(for: "online")
    let result = monitor.stop(signal)
    #expect(result.status == 0)
    #expect(result.stderr.contains("received: stopping the monitor") && result.stderr.hasSuffix("Monitor stopped.\n"), "\(result.stderr)")
  }

  @Test(arguments: [
    (["-"], "needs a file, not standard input"),
    (["--allow-destroy"], "--allow-destroy only matters with --reconcile"),
    (["--max-applies-per-hour", "3"], "only matters with --reconcile"),
    (["--reconcile", "--max-applies-per-hour", "0"], "expects a whole number from 1 to 1000"),
    (["--interval", "50ms"], "--interval must be at least 100ms"),
    (["--interval", "soon"], "--interval expects a duration"),
    (["--webhook", "http://127.0.0.1:9/x"], "--webhook needs --webhook-secret-file"),
    (["--webhook-secret-file", "secret"], "only matters with --webhook"),
    (["--once", "--on-sos", "true"], "--once makes one check"),
    (["--on-sos", "'unclosed"], "cannot split the command: the ' at character 1 is never closed"),
    (["--on-sos", "no-such-program-anywhere"], "no executable program 'no-such-program-anywhere' on PATH"),
    (["--on-sos", ""], "the command is empty"),
  ])
  func badCommandLinesAreUsageErrors(_ arguments: [String], _ message: String) throws {
    let directory = try Self.workspace(apply: false)
    let result = try TSApplyBinary.run(["monitor"] + arguments, in: directory)
    #expect(result.status == 64, "\(result.stderr)")
    #expect(result.stderr.contains(message), "\(result.stderr)")
  }

  @Test func aWebhookURLAndSecretAreChecked() async throws {
    let directory = try Self.workspace(apply: false)
    try "".write(to: directory.appendingPathComponent("empty"), atomically: true, encoding: .utf8)
    try "s3cret\n".write(to: directory.appendingPathComponent("secret"), atomically: true, encoding: .utf8)
    let empty = try TSApplyBinary.run(["monitor", "--webhook", "http://127.0.0.1:9/", "--webhook-secret-file", "empty"], in: directory)
    #expect(empty.status == 64 && empty.stderr.contains("is empty"), "\(empty.stderr)")
    let ftp = try TSApplyBinary.run(["monitor", "--webhook", "ftp://host/x", "--webhook-secret-file", "secret"], in: directory)
    #expect(ftp.status == 64 && ftp.stderr.contains("expects an http:// or https:// URL"), "\(ftp.stderr)")
  }
}

/// A `tsapply monitor --device sim:watch.json --log events.jsonl …` running in the background;
/// its events are read from the log as they are appended.
final class MonitorProcess {
  let running: TSApplyBinary.Running
  let log: URL
  private var stopped: ProcessResult?

  init(_ arguments: [String], in directory: URL, environment: [String: String] = [:]) throws {
    log = directory.appendingPathComponent("events-\(UUID().uuidString).jsonl")
    let device = arguments.contains("--device") || arguments.contains("--fleet") ? [] : ["--device", "sim:watch.json"]
    running = try TSApplyBinary.start(["monitor", "--log", log.path] + device + arguments, in: directory,
                                      environment: environment.merging(["TSAPPLY_STATE_DIR": directory.path + "/state"]) { $1 })
  }

  deinit { if stopped == nil { running.send(SIGKILL) } }

  /// Every event logged so far.
  func events() -> [[String: Any]] {
    let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
    return text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
  }

  /// Waits (generously) for the first event of `kind` matching `match`.
  @discardableResult
  func wait(for kind: String, timeout: TimeInterval = 60, _ match: ([String: Any]) -> Bool = { _ in true }) async throws -> [String: Any] {
    var found: [String: Any]?
    try await Self.until(timeout: timeout) {
      found = events().first { $0["kind"] as? String == kind && match($0) }
      return found != nil
    }
    return found!
  }

  /// Sends `signal` and collects the exit.
  func stop(_ signal: Int32 = SIGTERM) -> ProcessResult {
    if let stopped { return stopped }
    running.send(signal)
    let result = running.wait()
    stopped = result
    return result
  }

  /// Ends the process at once (SIGKILL), as a crash or a power cut would.
  func kill() { _ = stop(SIGKILL) }

  /// Polls `condition` every 20 ms until it holds, without holding a thread while it waits.
  /// - Throws: when `timeout` seconds pass first.
  static func until(timeout: TimeInterval, _ condition: () throws -> Bool) async throws {
    let deadline = Date().addingTimeInterval(timeout)
    while try !condition() {
      guard Date() < deadline else { throw MonitorTimeout(seconds: timeout) }
      try await Task.sleep(for: .milliseconds(20))
    }
  }

  /// The files in the outboxes under the workspace's state folder.
  static func outboxFiles(in directory: URL) -> [String] {
    let watches = directory.path + "/state/watches"
    return ((try? FileManager.default.contentsOfDirectory(atPath: watches)) ?? []).flatMap { folder in
      let outbox = watches + "/" + folder + "/outbox"
      return ((try? FileManager.default.contentsOfDirectory(atPath: outbox)) ?? []).filter { $0.hasSuffix(".json") }
        .map { outbox + "/" + $0 }
    }
  }

  /// When the monitor made `event` (its `time`).
  static func time(of event: [String: Any]) throws -> Date {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return try #require((event["time"] as? String).flatMap(formatter.date(from:)))
  }

  /// Seconds in a `--interval` value such as `2s`, `500ms`, `60s`.
  static func seconds(_ interval: String) -> TimeInterval {
    interval.hasSuffix("ms") ? (Double(interval.dropLast(2)) ?? 0) / 1000 : Double(interval.dropLast()) ?? 0
  }
}

struct MonitorTimeout: Error, CustomStringConvertible {
  var seconds: TimeInterval
  var description: String { "nothing within \(seconds)s" }
}
