import Foundation
import Testing
import TSBridge
import TSHTTPClient
import TSDevice
import TSModel
import TSTestSupport

/// A `tsapply bridge serve` child process on 127.0.0.1 (a free port), serving simulated watches
/// of a fresh directory, with its own config directory, paired as `home`.
final class BridgeFixture: @unchecked Sendable {
  let directory: URL
  let watches: [String]
  var server: ListeningProcess
  var pairing: String
  var port: Int

  /// Environment of every command of this fixture: its config directory (pairings, bridge id).
  var environment: [String: String] { ["XDG_CONFIG_HOME": directory.path + "/config"] }

  /// Watches `w0.json`, `w1.json`, … of `profiles`, served with `serveEnvironment` on top.
  init(_ profiles: [String], serveEnvironment: [String: String] = [:]) throws {
    directory = try TSApplyBinary.temporaryDirectory()
    watches = profiles.indices.map { "w\($0).json" }
    for (file, profile) in zip(watches, profiles) {
      let created = try TSApplyBinary.run(["device", "init", "--profile", profile, "--device", "sim:" + file], in: directory)
      #expect(created.status == 0, "\(created.stderr)")
    }
    (server, pairing, port) = (try ListeningProcess(["bridge", "serve"], in: directory), "", 0)
    try start(serveEnvironment)
  }

  /// As `init`, off the shared threads.
  static func make(_ profiles: [String], serveEnvironment: [String: String] = [:]) async throws -> BridgeFixture {
    try await offThePool { try BridgeFixture(profiles, serveEnvironment: serveEnvironment) }
  }

  /// Starts the bridge server again (same id and key, a new port) and pairs with it again.
  func restart() async throws { try await offThePool { try self.start() } }

  /// Starts (again) the bridge server and pairs with it as `home`.
  func start(_ serveEnvironment: [String: String] = [:]) throws {
    let arguments = ["bridge", "serve", "--listen", "127.0.0.1:0", "--show-pairing"] + watches.flatMap { ["--device", "sim:" + $0] }
    server = try ListeningProcess(arguments, in: directory, environment: environment.merging(serveEnvironment) { $1 })
    let marker = "Pairing string: "
    let output = try server.waitUntil { $0.components(separatedBy: marker).dropFirst().first?.contains("\n") == true }
    pairing = String(try #require(output.components(separatedBy: marker).last?.prefix { $0 != "\n" }))
    let parsed = try PairingString(parsing: pairing)
    #expect(parsed.host == "127.0.0.1")
    port = parsed.port
    let paired = try TSApplyBinary.run(["bridge", "pair", pairing, "--name", "home"], in: directory, environment: environment)
    #expect(paired.status == 0, "\(paired.stderr)")
  }

  /// Runs `tsapply arguments` in the fixture's directory and environment.
  func run(_ arguments: [String], environment extra: [String: String] = [:]) async throws -> ProcessResult {
    let (directory, environment) = (directory, environment.merging(extra) { $1 })
    return try await offThePool { try TSApplyBinary.run(arguments, in: directory, environment: environment) }
  }

  /// As `stop`, off the shared threads.
  func stopped() async -> (Int32, String) { (try? await offThePool { self.stop() }) ?? (-1, "") }

  /// Stops the server with SIGTERM; its status and log.
  @discardableResult
  func stop() -> (Int32, String) {
    server.send(SIGTERM)
    let (status, _, log) = server.finish()
    return (status, log)
  }

  /// The simulated watch's state file `index`, as bytes.
  func state(_ index: Int = 0) throws -> Data { try Data(contentsOf: directory.appendingPathComponent(watches[index])) }

  /// A manifest using what `profile` supports: a built-in, a custom reminder, contacts, emergency.
  static func manifest(_ profile: String) throws -> String {
    let caps = try PlatformProfile.named(profile).capabilities
    var text = "reminders:\n  sedentary: {enabled: true, period: {start: \"09:00\", end: \"18:00\", every: 60}}\n"
    if caps.reminders.maxCustomReminders > 0 { text += "  custom:\n    - {name: Walk, repeat: workday, at: [\"19:30\"]}\n" }
    if caps.contacts.maxContacts > 0 {
      text += "contacts:\n  - {name: Ann Lee, phone: \"+15550100\"}\n  - {name: Bob Roe, phone: \"+15550111\"}\n"
    }
    if caps.contacts.supportsEmergencyContacts {
      text += "emergency:\n  sos: true\n  contacts:\n    - {name: Sam Roe, phone: \"+15550101\"}\n"
    }
    return text
  }
}

/// The pairing key, the one secret that reads and changes the watch (fresh-eyes fe98 #2, #3):
/// given on standard input it stays out of the process list; a pairing file or `bridge serve`'s
/// identity that others may read or replace is refused with the chmod that fixes it, not used.
@Suite(.serialized) struct BridgeKeyFileTests {
  @Test func theKeyComesFromStandardInputAndLooseFilesAreRefused() async throws {
    let bridge = try await BridgeFixture.make(["default"])
    let config = bridge.directory.path + "/config/tsapply"
    let read = try await offThePool {
      try TSApplyBinary.run(["bridge", "pair", "-", "--name", "typed"], in: bridge.directory, stdin: bridge.pairing + "\n", environment: bridge.environment)
    }
    #expect(read.status == 0, "\(read.stderr)")
    #expect(try await bridge.run(["device", "show", "--device", "bridge:typed"]).status == 0)
    let cases: [(path: String, mode: Int, expected: String)] = [
      (config + "/bridges/typed.json", 0o644, "its mode is 0644: others may read or change the key in it, which opens the watch; run 'chmod 600 "),
      (config + "/bridges", 0o777, "its folder's mode is 0777: others may put a file there in its place; run 'chmod 700 "),
    ]
    for row in cases {
      let kept = try #require(try FileManager.default.attributesOfItem(atPath: row.path)[.posixPermissions] as? Int)
      chmod(row.path, mode_t(row.mode))
      let refused = try await bridge.run(["device", "show", "--device", "bridge:typed"])
      #expect(refused.status != 0 && refused.stderr.contains("the pairing 'typed' is not used: cannot use \(config)/bridges/typed.json: " + row.expected),
              "\(refused.stderr)")
      chmod(row.path, mode_t(kept))
    }
    let (_, _) = await bridge.stopped()
    chmod(config + "/bridge-serve.json", 0o640)
    let serve = try await bridge.run(["bridge", "serve", "--listen", "127.0.0.1:0", "--device", "sim:" + bridge.watches[0]])
    #expect(serve.status != 0 && serve.stderr.contains("bridge-serve.json: its mode is 0640"), "\(serve.stderr)")
  }
}

/// Plan, apply, export, drift and restore through `tsapply bridge serve` over 127.0.0.1, on every
/// profile; the apply-then-plan-is-empty property through the bridge.
@Suite(.serialized) struct BridgeEndToEndTests {
  @Test(arguments: PlatformProfile.all.map(\.name))
  func everyCommandThroughTheBridge(_ profile: String) async throws {
    let bridge = try await BridgeFixture.make([profile])
    defer { bridge.stop() }
    try BridgeFixture.manifest(profile).write(to: bridge.directory.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    let before = try bridge.state()
    let plan = try await bridge.run(["plan", "--detailed-exitcode", "--device", "bridge:home"])
    #expect(plan.status == 2, "\(plan.stderr)")
    #expect(try bridge.state() == before, "a plan wrote to the watch")
    let apply = try await bridge.run(["apply", "--auto-approve", "--device", "bridge:home"])
    #expect(apply.status == 0, "\(apply.stderr)")
    let backup = try #require(TSApplyBinary.backupPath(in: apply.stdout))
    let empty = try await bridge.run(["plan", "--detailed-exitcode", "--device", "bridge:home"])
    #expect(empty.status == 0, "apply, then plan is not empty: \(empty.stdout)")

    // The same manifest applied in-process to a copy of the factory watch gives the same state.
    try before.write(to: bridge.directory.appendingPathComponent("direct.json"))
    #expect(try await bridge.run(["apply", "--auto-approve", "--device", "sim:direct.json"]).status == 0)
    let direct = try SimulatedDevice(path: bridge.directory.path + "/direct.json").snapshot().deviceState
    let bridged = try SimulatedDevice(path: bridge.directory.path + "/w0.json").snapshot().deviceState
    #expect(direct == bridged)

    let export = try await bridge.run(["export", "--device", "bridge:home", "-o", "exported.yaml"])
    #expect(export.status == 0, "\(export.stderr)")
    #expect(try await bridge.run(["plan", "--detailed-exitcode", "--device", "bridge:home", "exported.yaml"]).status == 0)

    // A change on the watch itself is drift since the last apply.
    #expect(try await bridge.run(["device", "simulate", "reminder-toggle", "0", "--device", "sim:w0.json"]).status == 0)
    let drift = try await bridge.run(["plan", "--detailed-exitcode", "--device", "bridge:home"])
    #expect(drift.status == 2)
    #expect(drift.stdout.contains("Objects have changed outside of tsapply"), "\(drift.stdout)")

    let restore = try await bridge.run(["restore", "--auto-approve", "--allow-destroy", "--device", "bridge:home", backup])
    #expect(restore.status == 0, "\(restore.stderr)")
    let restored = try SimulatedDevice(path: bridge.directory.path + "/w0.json").snapshot().deviceState
    let factory = try SimulatedDevice(profile: PlatformProfile.named(profile)).snapshot().deviceState
    #expect(restored.contacts == factory.contacts && restored.emergency == factory.emergency)
    #expect(restored.reminders.filter { $0.reminderType != .custom } == factory.reminders.filter { $0.reminderType != .custom })
    #expect(restored.customReminders.isEmpty == factory.customReminders.isEmpty)
    let (status, log) = await bridge.stopped()
    #expect(status == 0)
    for secret in ["Ann Lee", "+15550100", "5550111", "Sam Roe", "Walk"] { #expect(!log.contains(secret), "the bridge logged \(secret)") }
  }

  /// The pairing string holds the key: printed at the first start (a new key), not at a restart
  /// whose standard output is not a terminal (a journal would keep it), then again with
  /// `--show-pairing` (fresh-eyes fe98: printed into the journal at every start under systemd).
  @Test func aRestartedBridgeDoesNotPrintItsKeyIntoALog() async throws {
    let bridge = try await BridgeFixture.make(["default"])
    let (_, _) = await bridge.stopped()
    let key = try #require(bridge.pairing.split(separator: "/").last.map(String.init))
    for (flags, shown) in [([String](), false), (["--show-pairing"], true)] {
      let server = try ListeningProcess(["bridge", "serve", "--listen", "127.0.0.1:0", "--device", "sim:w0.json"] + flags,
                                        in: bridge.directory, environment: bridge.environment)
      let output = try await offThePool { try server.waitUntil { $0.contains("Pairing string: ") && $0.hasSuffix("\n") } }
      server.send(SIGTERM)
      _ = server.finish()
      #expect(output.contains(key) == shown, "\(output)")
      if !shown { #expect(output.contains("Pairing string: not shown (it holds the key"), "\(output)") }
    }
  }

  @Test func aBridgeServingSeveralWatchesNeedsTheWatchID() async throws {
    let bridge = try await BridgeFixture.make(["default", "fw"])
    defer { bridge.stop() }
    try "reminders:\n  drinking: {enabled: true}\n".write(to: bridge.directory.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    let vague = try await bridge.run(["plan", "--device", "bridge:home"])
    #expect(vague.status == 1)
    #expect(vague.stderr.contains("serves 2 watches; name one: bridge:NAME/WATCH-ID"), "\(vague.stderr)")
    let served = try await offThePool { try bridge.server.waitFor("Pairing string") }.split(separator: "\n").filter { $0.hasPrefix("Serving ") }
    let id = try #require(served.last?.split(separator: " ")[1]).description
    let apply = try await bridge.run(["apply", "--auto-approve", "--device", "bridge:home/\(id)"])
    #expect(apply.status == 0, "\(apply.stderr)")
    #expect(try SimulatedDevice(path: bridge.directory.path + "/w1.json").snapshot().reminders.contains { $0.reminderId == "1" && $0.isEnabled })
    let unknown = try await bridge.run(["plan", "--device", "bridge:home/02:00:00:00:00:01"])
    #expect(unknown.status == 1)
    #expect(unknown.stderr.contains("serves no watch 02:00:00:00:00:01"), "\(unknown.stderr)")
  }

  /// `device show` over a bridge shows what the watch holds, line for line as `device show` of
  /// the served simulated watch (but its journal), in JSON too, masked with `--redact`; through
  /// the core `tsapply` (which hands `bridge:` to tsapply-net) and `TSAPPLY_DEVICE` alike.
  @Test func deviceShowReadsTheWatchThroughTheBridge() async throws {
    let bridge = try await BridgeFixture.make(["default"])
    defer { bridge.stop() }
    try BridgeFixture.manifest("default").write(to: bridge.directory.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    #expect(try await bridge.run(["apply", "--auto-approve", "--device", "bridge:home"]).status == 0)
    let simulated = try await bridge.run(["device", "show", "--device", "sim:w0.json"])
    for run in [try await bridge.run(["device", "show", "--device", "bridge:home"]),
                try await bridge.run(["device", "show"], environment: ["TSAPPLY_DEVICE": "bridge:home"])] {
      #expect(run.status == 0, "\(run.stderr)")
      let lines = run.stdout.split(separator: "\n", omittingEmptySubsequences: false)
      #expect(lines.first?.hasPrefix("Watch: bridge:") == true, "\(run.stdout)")
      let same = simulated.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropFirst()
        .filter { !$0.hasPrefix("Watch-side changes") }
      #expect(Array(lines.dropFirst()) == Array(same.dropLast()), "\(run.stdout)\nis not\n\(simulated.stdout)")
      #expect(run.stdout.contains("Ann Lee  +15550100"), "\(run.stdout)")
    }
    let json = try await bridge.run(["device", "show", "--json", "--device", "bridge:home"])
    #expect(json.status == 0, "\(json.stderr)")
    let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
    #expect((object["device"] as? String)?.hasPrefix("bridge:") == true)
    #expect(object["profile"] as? String == "default")
    #expect((object["contacts"] as? [[String: Any]])?.compactMap { $0["phoneNum"] as? String } == ["+15550100", "+15550111"])
    let redacted = try await bridge.run(["device", "show", "--redact", "--device", "bridge:home"])
    #expect(redacted.status == 0, "\(redacted.stderr)")
    #expect(!redacted.stdout.contains("5550100") && redacted.stdout.contains("******00"), "\(redacted.stdout)")
  }

  /// `device listen` over a bridge hears the served watch's changes and SOS through the bridge's
  /// event stream.
  @Test func deviceListenHearsTheWatchThroughTheBridge() async throws {
    let bridge = try await BridgeFixture.make(["default"])
    defer { bridge.stop() }
    let listen = try ListeningProcess(["device", "listen", "--count", "2", "--timeout", "60", "--device", "bridge:home"],
                                      in: bridge.directory, environment: bridge.environment)
    _ = try await offThePool { try listen.waitFor("Listening for changes on the watch bridge:") }
    // The stream is open once the bridge has answered it (its log line comes after it subscribed).
    for _ in 0..<100 where !bridge.server.standardError.contains("/events 200") { try await Task.sleep(for: .milliseconds(100)) }
    _ = try MonitorCommandTests.simulate(["contact-add", "Zed Poe", "+15550199"], in: bridge.directory, device: "sim:" + bridge.watches[0])
    _ = try MonitorCommandTests.simulate(["sos"], in: bridge.directory, device: "sim:" + bridge.watches[0])
    let (status, output, errors) = try await offThePool { listen.finish() }
    #expect(status == 0, "\(output)\n\(errors)")
    #expect(output.contains("contacts changed: 1 contact (Zed Poe)"), "\(output)")
    #expect(output.contains("SOS requested"), "\(output)")
  }
}

/// Faults between tsapply and the bridge: the engine reports exactly what the watch holds, never
/// repeats a write blindly, and converges on a rerun.
@Suite(.serialized) struct BridgeFaultTests {
  static func prepared(_ serveEnvironment: [String: String] = [:]) async throws -> BridgeFixture {
    let bridge = try await BridgeFixture.make(["default"], serveEnvironment: serveEnvironment)
    try BridgeFixture.manifest("default").write(to: bridge.directory.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    return bridge
  }

  /// The answer to a write dropped after the watch took it: the list is read back, the write is
  /// applied (said on its line) and never sent again, and the apply goes on to the end.
  @Test func aWriteWhoseAnswerWasDroppedIsReadBackAndNotRepeated() async throws {
    let bridge = try await Self.prepared([BridgeFaults.variable: "drop-response@setAllContacts"])
    let applied = try await bridge.run(["apply", "--auto-approve", "--device", "bridge:home"])
    #expect(applied.status == 0, "\(applied.stderr)")
    #expect(applied.stdout.contains("contacts: the answer to the write was lost ("), "\(applied.stdout)")
    #expect(applied.stdout.contains("the connection to the bridge was lost before it answered setAllContacts"), "\(applied.stdout)")
    #expect(applied.stdout.contains("com.topstepcomkit.bleConnect 9310"), "\(applied.stdout)")
    #expect(applied.stdout.contains("yet reading it back shows the watch holds it: applied, not written again"), "\(applied.stdout)")
    #expect(applied.stdout.contains("Apply complete!"), "\(applied.stdout)")
    let watch = try SimulatedDevice(path: bridge.directory.path + "/w0.json").snapshot()
    #expect(watch.contacts.map(\.name) == ["Ann Lee", "Bob Roe"])
    #expect(try await bridge.run(["plan", "--detailed-exitcode", "--device", "bridge:home"]).status == 0)
    #expect(try await bridge.run(["drift", "--device", "bridge:home"]).status == 0)
    let (_, log) = await bridge.stopped()
    let writes = log.split(separator: "\n").filter { $0.contains(" setAllContacts ") }
    #expect(writes.count == 1, "setAllContacts was sent \(writes.count) times: \(writes)")
  }

  /// A lost answer at every call of an apply over a bridge (the call reaches the watch, then the
  /// connection is dropped): a write that landed is said to be applied and the apply completes;
  /// any other call's loss fails the run with drift never reporting the apply's own writes, and
  /// a rerun converges with no drift.
  @Test(arguments: ["default", "fit"])
  func aLostAnswerAtEveryCallIsReportedAsTheWatchHoldsIt(_ profile: String) async throws {
    // How many calls a clean apply makes.
    let clean = try await BridgeFixture.make([profile])
    try BridgeFixture.manifest(profile).write(to: clean.directory.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    #expect(try await clean.run(["apply", "--auto-approve", "--device", "bridge:home"]).status == 0)
    let calls = await clean.stopped().1.split(separator: "\n").filter { $0.contains("/call 200") }.count
    #expect(calls > 5)
    var lostWrites = 0
    for call in 1...calls {
      let bridge = try await BridgeFixture.make([profile], serveEnvironment: [BridgeFaults.variable: "drop-response@\(call)"])
      try BridgeFixture.manifest(profile).write(to: bridge.directory.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
      let run = try await bridge.run(["apply", "--auto-approve", "--device", "bridge:home"])
      if run.stdout.contains("the answer to the write was lost") {
        lostWrites += 1
        #expect(run.stdout.contains("applied, not written again"), "\(profile) call \(call): \(run.stdout)")
        #expect(run.status == 0 && run.stdout.contains("Apply complete!"), "\(profile) call \(call): \(run.stdout)\n\(run.stderr)")
      }
      #expect(!run.stderr.contains("the answer to a write was lost"), "\(profile) call \(call): a landed write stopped the apply: \(run.stderr)")
      let drift = try await bridge.run(["drift", "--device", "bridge:home"])
      #expect(drift.status == 0, "\(profile) call \(call): drift after the run: \(drift.stdout)")
      #expect(try await bridge.run(["apply", "--auto-approve", "--device", "bridge:home"]).status == 0, "\(profile) call \(call)")
      let after = try await bridge.run(["drift", "--pending", "--device", "bridge:home"])
      #expect(after.status == 0, "\(profile) call \(call): after the rerun: \(after.stdout)")
      _ = await bridge.stopped()
    }
    #expect(lostWrites >= 3, "\(profile): only \(lostWrites) writes lost their answer")
  }

  /// The served watch's link drops and comes back under a call (`reconnect@2`: the SDK's
  /// listeners die with the connection): an SOS pressed afterwards still reaches the bridge's
  /// event stream, and so a monitor listening through the bridge, once.
  @Test func anSOSAfterTheWatchReconnectedReachesTheMonitor() async throws {
    let bridge = try await Self.prepared([SimulationOptions.faultVariable: "reconnect@2"])
    defer { bridge.stop() }
    // readState's second link call meets the reconnect: the plan fails with the SDK's 9310.
    let plan = try await bridge.run(["plan", "--device", "bridge:home"])
    #expect(plan.status == 1 && plan.stderr.contains("simulated reconnect at call 2"), "\(plan.stderr)")
    let monitor = try MonitorProcess(["--device", "bridge:home"], in: bridge.directory, environment: bridge.environment)
    defer { _ = monitor.stop() }
    try await monitor.wait(for: "online")
    _ = try MonitorCommandTests.simulate(["sos"], in: bridge.directory, device: "sim:" + bridge.watches[0])
    try await monitor.wait(for: "sos", timeout: 30)
    try await Task.sleep(for: .seconds(1))
    #expect(monitor.events().filter { $0["kind"] as? String == "sos" }.count == 1, "\(monitor.events())")
  }

  /// An answer slower than the timeout is a lost one (6001): the list is read back, holds the
  /// write, and the apply goes on to the end.
  @Test func aSlowAnswerPastTheTimeoutIs6001AndReadBack() async throws {
    let bridge = try await Self.prepared([BridgeFaults.variable: "delay@setAllContacts:6000"])
    defer { bridge.stop() }
    let run = try await bridge.run(["apply", "--auto-approve", "--device", "bridge:home"], environment: ["TSAPPLY_BRIDGE_TIMEOUT": "2"])
    #expect(run.status == 0, "\(run.stderr)")
    #expect(run.stdout.contains("no answer from the bridge to setAllContacts within 2 s"), "\(run.stdout)")
    #expect(run.stdout.contains("com.topstepcomkit.contact 6001"), "\(run.stdout)")
    #expect(run.stdout.contains("yet reading it back shows the watch holds it: applied, not written again"), "\(run.stdout)")
    #expect(try await bridge.run(["plan", "--detailed-exitcode", "--device", "bridge:home"]).status == 0)
  }

  /// A read that gets no answer, tries included, says so as a read: the watch is unchanged by it.
  @Test func aReadWithoutAnAnswerIsWordedAsARead() async throws {
    let bridge = try await Self.prepared([BridgeFaults.variable: "delay@1:4000,delay@2:4000,delay@3:4000"])
    defer { bridge.stop() }
    let plan = try await bridge.run(["plan", "--device", "bridge:home"], environment: ["TSAPPLY_BRIDGE_TIMEOUT": "1"])
    #expect(plan.status == 1)
    // Each of the three tries waited the timeout: said, so a 3 s wait is not called 1 s (fresh-eyes finding).
    #expect(plan.stderr.contains("no answer from the bridge to readState within 1 s, each of 3 tries; it only reads, so the watch is unchanged by it"),
            "\(plan.stderr)")
    #expect(!plan.stderr.contains("may or may not"), "\(plan.stderr)")
  }

  @Test func aSlowReadIsRetried() async throws {
    let bridge = try await Self.prepared([BridgeFaults.variable: "delay@1:6000"])
    defer { bridge.stop() }
    let plan = try await bridge.run(["plan", "--detailed-exitcode", "--device", "bridge:home"], environment: ["TSAPPLY_BRIDGE_TIMEOUT": "2"])
    #expect(plan.status == 2, "\(plan.stderr)")
  }

  @Test func theServerKilledMidApply() async throws {
    let bridge = try await Self.prepared(["TSAPPLY_SIM_LATENCY": "400,0"])
    let apply = try ListeningProcess(["apply", "--auto-approve", "--device", "bridge:home"], in: bridge.directory,
                                     environment: bridge.environment)
    _ = try await offThePool { try apply.waitFor("Backed up the watch's current state") }
    bridge.server.send(SIGKILL)
    _ = try await offThePool { bridge.server.finish() }
    let (status, output, errors) = try await offThePool { apply.finish() }
    #expect(status == 1, "\(output)")
    #expect(errors.contains("cannot reach the bridge") || errors.contains("the connection to the bridge was lost")
            || errors.contains("the answer to a write was lost"), "\(errors)")
    #expect(!errors.contains("Fatal") && !errors.contains("Crash"))
    try await bridge.restart()
    defer { bridge.stop() }
    let rerun = try await bridge.run(["apply", "--auto-approve", "--device", "bridge:home"])
    #expect(rerun.status == 0, "\(rerun.stderr)")
    #expect(try await bridge.run(["plan", "--detailed-exitcode", "--device", "bridge:home"]).status == 0)
  }

  /// A lease whose answer was lost (granted, then the connection dropped: as when the request
  /// is held back on the way until its sender gave up) neither fails the apply nor locks the
  /// watch: the apply asks again as a later attempt, which takes the lease over, and the next
  /// apply from another process is served at once (fresh-eyes finding: the owner locked out for
  /// the lease's 60 s, again and again).
  @Test func aLeaseWhoseAnswerWasLostLocksNobodyOut() async throws {
    let bridge = try await Self.prepared([BridgeFaults.variable: "drop-response@lease"])
    let applied = try await bridge.run(["apply", "--auto-approve", "--device", "bridge:home"])
    #expect(applied.status == 0, "\(applied.stderr)")
    let next = try await bridge.run(["apply", "--auto-approve", "--device", "bridge:home"], environment: ["TSAPPLY_STATE_DIR": try TSApplyBinary.temporaryDirectory().path])
    #expect(next.status == 0 && next.stdout.contains("No changes"), "\(next.stderr)")
    let (_, log) = await bridge.stopped()
    #expect(log.contains("/lease 0 granted (fault: response dropped)") && log.contains("/lease 200 granted (attempt 2)"), "\(log)")
    #expect(!log.contains("/lease 409"), "\(log)")
  }

  @Test func twoClientsCannotApplyAtOnce() async throws {
    let bridge = try await Self.prepared(["TSAPPLY_SIM_LATENCY": "300,0"])
    defer { bridge.stop() }
    let laptopA = try TSApplyBinary.temporaryDirectory().path, laptopB = try TSApplyBinary.temporaryDirectory().path
    let first = try ListeningProcess(["apply", "--auto-approve", "--device", "bridge:home"], in: bridge.directory,
                                     environment: bridge.environment.merging(["TSAPPLY_STATE_DIR": laptopA]) { $1 })
    _ = try await offThePool { try first.waitFor("Plan:") }
    let second = try await bridge.run(["apply", "--auto-approve", "--device", "bridge:home"], environment: ["TSAPPLY_STATE_DIR": laptopB])
    #expect(second.status == 1)
    #expect(second.stderr.contains("pid \(first.pid)"), "\(second.stderr)")
    #expect(second.stderr.contains("nothing was read or written"), "\(second.stderr)")
    let (status, _, errors) = try await offThePool { first.finish() }
    #expect(status == 0, "\(errors)")
    let after = try await bridge.run(["apply", "--auto-approve", "--device", "bridge:home"], environment: ["TSAPPLY_STATE_DIR": laptopB])
    #expect(after.status == 0, "the lease was not given back: \(after.stderr)")
  }

  /// An apply killed with -9 cannot give its lease back: the next apply on this host says that
  /// its holder no longer runs and when the lease expires, and `-lock-timeout` asks the bridge
  /// for the lease less and less often while it waits.
  @Test func aLeaseWhoseHolderWasKilledIsNamedAsSuch() async throws {
    let bridge = try await Self.prepared(["TSAPPLY_SIM_LATENCY": "300,0"])
    defer { bridge.stop() }
    let killed = try ListeningProcess(["apply", "--auto-approve", "--device", "bridge:home"], in: bridge.directory,
                                      environment: bridge.environment)
    _ = try await offThePool { try killed.waitFor("Plan:") }
    killed.send(SIGKILL)
    _ = try await offThePool { killed.finish() }
    let next = try await bridge.run(["apply", "--auto-approve", "--device", "bridge:home"])
    #expect(next.status == 1)
    #expect(next.stderr.contains("pid \(killed.pid) on this host (\(ProcessInfo.processInfo.hostName))"), "\(next.stderr)")
    #expect(next.stderr.contains("which is no longer running (killed?); the lease expires in "), "\(next.stderr)")
    #expect(next.stderr.contains("nothing was read or written"), "\(next.stderr)")
    #expect(!next.stderr.contains("Wait for it to finish"), "\(next.stderr)")
    #expect(next.stderr.contains("or give -lock-timeout="), "\(next.stderr)")
    let before = bridge.server.standardError.components(separatedBy: "/lease 409").count
    let waited = try await bridge.run(["apply", "--auto-approve", "--device", "bridge:home", "-lock-timeout=6s"])
    #expect(waited.status == 1, "\(waited.stderr)")
    #expect(waited.stderr.contains("(waited 6."), "\(waited.stderr)")
    #expect(waited.stderr.contains("Waiting up to the lock timeout: the watch is locked: its lease on the bridge is held by pid \(killed.pid)"),
            "\(waited.stderr)")
    // Every 250 ms that would be 25 requests; backing off from 250 ms, about 6.
    let asked = bridge.server.standardError.components(separatedBy: "/lease 409").count - before
    #expect((2...10).contains(asked), "asked for the lease \(asked) times in 6 s")
  }
}

/// Requests an attacker (or a broken client) could send, straight to `tsapply bridge serve`:
/// each is refused with its status and nothing reaches the watch.
@Suite(.serialized) struct BridgeSecurityTests {
  struct Exchange {
    var status: Int
    var body: [UInt8]
  }

  static func send(_ port: Int, _ method: String, _ path: String, headers: [String: String] = [:], body: [UInt8]) async throws -> Exchange {
    let request = HTTPClientRequest(method: method, url: HTTPClientRequest.url(host: "127.0.0.1", port: port, path: path),
                                    headers: [BridgeProtocol.versionHeader: BridgeProtocol.version].merging(headers) { $1 }
                                      .sorted { $0.key < $1.key }.map { ($0.key, $0.value) },
                                    body: body, timeout: 120, reuseConnection: false)
    let answer = try await HTTPClient.shared.send(request)
    return Exchange(status: answer.status, body: answer.body)
  }

  /// The `call` path of the bridge's only watch, and a client's sealer under its pairing key.
  static func callPath(_ bridge: BridgeFixture) async throws -> (String, Sealer) {
    let pairing = try PairingString(parsing: bridge.pairing)
    let served = try await offThePool { try bridge.server.waitFor("Pairing string") }.split(separator: "\n").first { $0.hasPrefix("Serving ") }
    let id = try #require(served?.split(separator: " ")[1]).description
    return ("/v1/watches/\(id)/call", Sealer(key: pairing.key, side: .client))
  }

  @Test func refusedRequestsLeaveTheWatchUntouched() async throws {
    let bridge = try await BridgeFixture.make(["default"])
    defer { bridge.stop() }
    let (path, client) = try await Self.callPath(bridge)
    let write = Array(#"{"method":"setAllContacts","args":{"contacts":[{"name":"Eve","phoneNum":"+15550199"}]}}"#.utf8)
    // Each body is sealed just before it is sent: one sealed more than 30 s earlier is refused
    // as stale, whatever else is wrong with it.
    let seal = { (body: [UInt8], path: String) in client.seal(body, for: .request(method: "POST", path: path, lastEventID: nil)).bytes }
    let cases: [(String, String, () -> [UInt8], Int)] = [
      ("wrong key", path, { Sealer(key: SealingKey.random(), side: .client).seal(write, for: .request(method: "POST", path: path, lastEventID: nil)).bytes }, 401),
      ("tampered body", path, {
        var tampered = seal(write, path)
        tampered[tampered.count - 1] ^= 0x01
        return tampered
      }, 401),
      ("plain JSON", path, { write }, 401),
      ("oversized body", path, { Array(repeating: 0x41, count: BridgeProtocol.maxBodyBytes + 10) }, 413),
      ("bad JSON", path, { seal(Array("{\"method\": ".utf8), path) }, 400),
      ("unknown method", path, { seal(Array(#"{"method":"eraseWatch"}"#.utf8), path) }, 400),
      ("unknown watch id", "/v1/watches/02:00:00:00:00:09/call", { seal(write, "/v1/watches/02:00:00:00:00:09/call") }, 404),
    ]
    let before = try bridge.state()
    for (label, target, body, status) in cases {
      let answer: Exchange
      do {
        answer = try await Self.send(bridge.port, "POST", target, headers: ["Content-Type": BridgeProtocol.sealedType], body: body())
      } catch where status == 413 {
        // The bridge answers 413 as soon as the length is known and closes the connection; a
        // client still sending the body may see the close first (EPIPE) on a loaded machine.
        // Refused either way: the watch is compared below.
        continue
      }
      #expect(answer.status == status, "\(label)")
      if status != 400 && status != 404 {
        let error = BridgeJSON.decode(Answer<Empty>.self, from: answer.body)?.error
        #expect(error?.domain == "tsapply.bridge" && error?.code == status, "\(label): an unsealed refusal with its status")
      }
    }
    #expect(try bridge.state() == before, "a refused request changed the watch")
    // A replay of a request the bridge accepted once is refused, and runs once.
    let harmless = seal(Array(#"{"method":"getAllContacts"}"#.utf8), path)
    #expect(try await Self.send(bridge.port, "POST", path, body: harmless).status == 200)
    #expect(try await Self.send(bridge.port, "POST", path, body: harmless).status == 401)
    // (Sealed just now: a request sealed more than 30 s ago is refused as stale, on a slow machine too.)
    let accepted = seal(write, path)
    let replayedWrite = try await Self.send(bridge.port, "POST", path, body: accepted)
    #expect(replayedWrite.status == 200)
    let written = try bridge.state()
    #expect(try await Self.send(bridge.port, "POST", path, body: accepted).status == 401)
    #expect(try bridge.state() == written)
    let (_, log) = await bridge.stopped()
    #expect(log.split(separator: "\n").filter { $0.contains(" setAllContacts ") }.count == 1, "\(log)")
    #expect(!log.contains("Eve") && !log.contains("5550199"))
  }

  /// A write captured off the network is refused after the bridge restarts, while it is still
  /// inside the time window: the nonces the bridge accepted outlive the process. A client that
  /// seals afresh is served at once after the restart.
  @Test func aCapturedWriteIsRefusedAfterARestart() async throws {
    let bridge = try await BridgeFixture.make(["default"])
    defer { bridge.stop() }
    let (path, client) = try await Self.callPath(bridge)
    func write(_ name: String) -> [UInt8] {
      let body = Array(#"{"method":"setAllContacts","args":{"contacts":[{"name":"\#(name)","phoneNum":"+15550100"}]}}"#.utf8)
      return client.seal(body, for: .request(method: "POST", path: path, lastEventID: nil)).bytes
    }
    let headers = ["Content-Type": BridgeProtocol.sealedType]
    let old = write("Old Value")
    #expect(try await Self.send(bridge.port, "POST", path, headers: headers, body: old).status == 200)
    #expect(try await Self.send(bridge.port, "POST", path, headers: headers, body: write("New Value")).status == 200)
    let (status, _) = await bridge.stopped()
    #expect(status == 0)
    try await bridge.restart()
    let replayed = try await Self.send(bridge.port, "POST", path, headers: headers, body: old)
    #expect(replayed.status == 401)
    #expect(BridgeJSON.decode(Answer<Empty>.self, from: replayed.body)?.error?.message.contains("replay") == true)
    #expect(try SimulatedDevice(path: bridge.directory.path + "/w0.json").snapshot().contacts.map(\.name) == ["New Value"])
    // A legitimate client right after the restart: tsapply seals every request afresh.
    #expect(try await Self.send(bridge.port, "POST", path, headers: headers, body: write("Newest")).status == 200)
    try BridgeFixture.manifest("default").write(to: bridge.directory.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    let plan = try await bridge.run(["plan", "--device", "bridge:home"])
    #expect(plan.status == 0, "\(plan.stderr)")
    let journal = bridge.directory.path + "/config/tsapply"
    for file in try FileManager.default.contentsOfDirectory(atPath: journal) where file.contains("nonces") {
      #expect(try (FileManager.default.attributesOfItem(atPath: journal + "/" + file)[.posixPermissions] as? NSNumber)?.intValue == 0o600, "\(file)")
    }
  }

  @Test func theWrongKeyIsAPlainErrorForTheUser() async throws {
    let bridge = try await BridgeFixture.make(["default"])
    defer { bridge.stop() }
    var parsed = try PairingString(parsing: bridge.pairing)
    parsed.key = SealingKey.random()
    #expect(try await bridge.run(["bridge", "pair", parsed.description, "--name", "stale"]).status == 0)
    try BridgeFixture.manifest("default").write(to: bridge.directory.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    let plan = try await bridge.run(["plan", "--device", "bridge:stale", "--detailed-exitcode"])
    #expect(plan.status == 1)
    #expect(plan.stderr.contains("not sealed under this bridge's pairing key"), "\(plan.stderr)")
    #expect(plan.stderr.contains("most likely the bridge has a new pairing key ('tsapply bridge serve --new-key', or \"Pair again\" in the app); "
      + "pair again with the string it shows now: 'tsapply bridge pair - --name stale'"), "\(plan.stderr)")
    #expect(plan.stderr.contains("tsapply.bridge 401"), "\(plan.stderr)")
    let file = bridge.directory.path + "/config/tsapply/bridges/stale.json"
    #expect(try (FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? NSNumber)?.intValue == 0o600)
    let folder = bridge.directory.path + "/config/tsapply/bridges"
    #expect(try (FileManager.default.attributesOfItem(atPath: folder)[.posixPermissions] as? NSNumber)?.intValue == 0o700)
  }

  /// A saved plan names the watch by the bridge's id, which reaches the pairing of that bridge
  /// paired last: re-paired under a name beside a stale pairing named after the bridge (the
  /// default name), `apply PLANFILE` works as its advice says (fresh-eyes fe101 #1: 401), and
  /// pairing says the other one is stale.
  @Test func aSavedPlanReachesTheBridgeThroughThePairingPairedLast() async throws {
    let bridge = try await BridgeFixture.make(["default"])
    defer { bridge.stop() }
    var old = try PairingString(parsing: bridge.pairing)
    old.key = SealingKey.random()
    #expect(try await bridge.run(["bridge", "pair", old.description]).status == 0)
    let again = try await bridge.run(["bridge", "pair", bridge.pairing, "--name", "home"])
    #expect(again.stdout.contains("Note: '\(old.bridgeID)' is paired with the same bridge under another key or address"), "\(again.stdout)")
    try BridgeFixture.manifest("default").write(to: bridge.directory.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    let saved = try await bridge.run(["plan", "-out", "p.tfplan", "--device", "bridge:home"])
    #expect(saved.status == 0 && saved.stdout.contains("tsapply apply p.tfplan"), "\(saved.stdout)\(saved.stderr)")
    let applied = try await bridge.run(["apply", "p.tfplan"])
    #expect(applied.status == 0, "\(applied.stdout)\(applied.stderr)")
  }

  @Test func serveStopsCleanlyOnSIGINTAndNeedsAWatch() async throws {
    let bridge = try await BridgeFixture.make(["npk"])
    bridge.server.send(SIGINT)
    let (status, _, errors) = try await offThePool { bridge.server.finish() }
    #expect(status == 0)
    #expect(errors.contains("SIGINT received: the bridge stopped."))
    let none = try await bridge.run(["bridge", "serve"])
    #expect(none.status == 64)
    let elsewhere = try await bridge.run(["bridge", "serve", "--device", "sim:w0.json", "--listen", "0.0.0.0:0"])
    #expect(elsewhere.status == 64)
    #expect(elsewhere.stderr.contains("--advertise"), "\(elsewhere.stderr)")
  }
}
