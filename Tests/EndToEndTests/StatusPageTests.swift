import Foundation
import Testing
import TSHeadlessChromium
import TSMQTT
import TSTestSupport

/// `tsapply monitor --fleet … --serve`: the status page in a real browser (headless Chromium
/// over the DevTools pipe, `HeadlessChromium`), in front of a monitor of 50 simulated watches.
@Suite(.serialized, .timeLimit(.minutes(5))) struct StatusPageTests {
  static let token = "page-token-0123456789abcdef"

  /// 50 simulated watches `w01`…`w50` applied from their manifests, a fleet file, a token file.
  static func fleet(in dir: URL, count: Int = 50) throws -> [String] {
    let names = (1...count).map { String(format: "w%02d", $0) }
    try FileManager.default.createDirectory(at: dir.appendingPathComponent("residents"), withIntermediateDirectories: true)
    try FileManager.default.createDirectory(at: dir.appendingPathComponent("watches"), withIntermediateDirectories: true)
    let first = try TSApplyBinary.run(["device", "init", "--profile", "fw", "--device", "sim:watches/w01.json"], in: dir)
    #expect(first.status == 0, "\(first.stderr)")
    var text = "watches:\n"
    for (index, name) in names.enumerated() {
      if index > 0 {
        try FileManager.default.copyItem(at: dir.appendingPathComponent("watches/w01.json"), to: dir.appendingPathComponent("watches/\(name).json"))
      }
      text += "  \(name): {device: \"sim:watches/\(name).json\", manifest: residents/\(name).yaml}\n"
      try "contacts:\n  - {name: Family, phone: \"+1555011\(index % 10)\"}\n"
        .write(to: dir.appendingPathComponent("residents/\(name).yaml"), atomically: true, encoding: .utf8)
    }
    try text.write(to: dir.appendingPathComponent("fleet.yaml"), atomically: true, encoding: .utf8)
    try (token + "\n").write(to: dir.appendingPathComponent("page.token"), atomically: true, encoding: .utf8)
    chmod(dir.appendingPathComponent("page.token").path, 0o600)
    let applied = try TSApplyBinary.run(["apply", "--fleet", "fleet.yaml", "--auto-approve"], in: dir, environment: environment(dir))
    #expect(applied.status == 0, "\(applied.stdout)\(applied.stderr)")
    return names
  }

  /// Gives every watch of `names` a new manifest and runs `apply --fleet` staged as a canary
  /// of one and a batch of two with a manual pause: it pauses after the canary.
  static func pauseAfterCanary(_ names: [String], in dir: URL) throws {
    for name in names {
      try "contacts:\n  - {name: Ward desk, phone: \"+15550100\"}\n"
        .write(to: dir.appendingPathComponent("residents/\(name).yaml"), atomically: true, encoding: .utf8)
    }
    let paused = try TSApplyBinary.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--allow-destroy", "--canary", "1", "--batch", "2",
                                        "--pause", "manual"], in: dir, environment: Self.environment(dir))
    #expect(paused.stdout.contains("paused after wave 1 of 2"), "\(paused.stdout)\(paused.stderr)")
  }

  /// The `rollout` object of the page's `/status.json`.
  static func rollout(_ url: String) throws -> [String: Any]? {
    let answer = try request(url, "/status.json", headers: ["Authorization: Bearer \(token)"])
    let body = try JSONSerialization.jsonObject(with: Data((answer.components(separatedBy: "\r\n\r\n").last ?? "").utf8)) as? [String: Any]
    return body?["rollout"] as? [String: Any]
  }

  static func environment(_ dir: URL) -> [String: String] { ["TSAPPLY_STATE_DIR": dir.path + "/state"] }

  /// The monitor with the page; its address from standard error.
  static func monitor(in dir: URL, _ extra: [String] = []) throws -> (ListeningProcess, String) {
    let process = try ListeningProcess(["monitor", "--fleet", "fleet.yaml", "--interval", "2s", "--log", "events.jsonl",
                                        "--serve", "127.0.0.1:0", "--serve-token-file", "page.token", "--offline-after", "1s"] + extra,
                                       in: dir, environment: environment(dir))
    let deadline = Date().addingTimeInterval(60)
    while Date() < deadline {
      if let line = process.standardError.split(separator: "\n").first(where: { $0.hasPrefix("Status page on ") }) {
        return (process, String(line.dropFirst("Status page on ".count).prefix { $0 != " " }))
      }
      usleep(20_000)
    }
    throw HeadlessChromium.Failure(description: "no page address: \(process.standardError)")
  }

  /// One request on a fresh connection; the whole answer.
  static func request(_ url: String, _ target: String, headers: [String] = []) throws -> String {
    let port = UInt16(url.split(separator: ":").last!.prefix { $0.isNumber })!
    let connection = try RawConnection(port: port)
    defer { connection.close() }
    connection.send("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" + headers.map { $0 + "\r\n" }.joined() + "\r\n")
    return connection.receive()
  }

  /// The width in a PNG's header.
  static func pngWidth(_ data: Data) -> Int {
    data.count > 24 ? data[16..<20].reduce(0) { $0 << 8 | Int($1) } : 0
  }

  /// Where the screenshots go: `TSAPPLY_SCREENSHOT_DIR`, else the test's folder.
  static func screenshotFolder(_ dir: URL) -> URL {
    ProcessInfo.processInfo.environment["TSAPPLY_SCREENSHOT_DIR"].map { URL(fileURLWithPath: $0) } ?? dir
  }

  /// Alerts are counted in the page's metrics as every other event (fresh-eyes finding:
  /// `tsapply_events_total{kind="alert"}` stayed 0 while alerts were sent).
  @Test func theMetricsCountAlerts() throws {
    let dir = try TSApplyBinary.temporaryDirectory().resolvingSymlinksInPath()
    _ = try Self.fleet(in: dir, count: 1)
    try "#!/bin/sh\nexit 0\n".write(to: dir.appendingPathComponent("alert.sh"), atomically: true, encoding: .utf8)
    chmod(dir.appendingPathComponent("alert.sh").path, 0o755)
    let (monitor, url) = try Self.monitor(in: dir, ["--on-event", "./alert.sh", "--events", "all"])
    defer { monitor.send(SIGKILL); _ = monitor.finish() }
    #expect(try TSApplyBinary.run(["device", "simulate", "contact-add", "Zed", "+15550199", "--device", "sim:watches/w01.json"], in: dir).status == 0)
    let deadline = Date().addingTimeInterval(60)
    var metrics = ""
    while Date() < deadline {
      metrics = try Self.request(url, "/metrics", headers: ["Authorization: Bearer \(Self.token)"])
      if metrics.contains("tsapply_events_total{kind=\"alert\"} ") && !metrics.contains("tsapply_events_total{kind=\"alert\"} 0") { break }
      usleep(100_000)
    }
    let alerts = try String(contentsOf: dir.appendingPathComponent("events.jsonl"), encoding: .utf8)
      .split(separator: "\n").filter { $0.contains("\"kind\":\"alert\"") }.count
    #expect(alerts >= 1)
    #expect(metrics.contains("tsapply_events_total{kind=\"alert\"} \(alerts)"), "\(alerts) alerts logged: \(metrics)")
  }

  @Test func aNurseSeesAnSOSAtOnceAWatchGoingOfflineAndAcknowledgesWithTheToken() throws {
    let dir = try TSApplyBinary.temporaryDirectory().resolvingSymlinksInPath()
    let names = try Self.fleet(in: dir)
    let (monitor, url) = try Self.monitor(in: dir)
    defer { monitor.send(SIGKILL); _ = monitor.finish() }
    let browser = try HeadlessChromium.start()
    defer { browser.stop() }
    let tab = try browser.open(url + "?token=" + Self.token)
    #expect(try tab.evaluate("location.search") as? String == "", "the token left the address")
    try tab.wait(until: "document.getElementById('conn').textContent.indexOf('Live') === 0", timeout: 30)
    try tab.wait(until: "document.querySelectorAll('#grid tbody .s-in-sync').length === \(names.count)", timeout: 60)
    #expect(try tab.evaluate("document.title") as? String == "No open SOS – fleet.yaml")

    // An SOS: on the page within a second of the press, without a reload.
    try tab.evaluate("window.loadedOnce = true")
    let pressed = try MonitorCommandTests.simulate(["sos"], in: dir, device: "sim:watches/w07.json")
    try tab.wait(until: "document.querySelector('#sos article[data-name=\"w07\"]')", timeout: 10, every: 0.005)
    let seen = Date().timeIntervalSince(pressed)
    #expect(seen < 1, "the SOS showed \(seen)s after the press")
    #expect(try tab.evaluate("window.loadedOnce") as? Bool == true, "no reload")
    #expect(try tab.evaluate("document.title") as? String == "1 open SOS – fleet.yaml")
    let card = try #require(try tab.evaluate("document.querySelector('#sos article').innerText") as? String)
    #expect(card.contains("SOS") && card.contains("w07") && card.contains("Pressed") && card.contains("ago"), "\(card)")

    // Keyboard: the first Tab reaches the skip link.
    try tab.evaluate("document.activeElement.blur()")
    try tab.press("Tab")
    #expect(try tab.evaluate("document.activeElement.className") as? String == "skip")

    // A watch goes offline: under "needs attention" with the reason, once past --offline-after.
    try FileManager.default.moveItem(at: dir.appendingPathComponent("watches/w12.json"), to: dir.appendingPathComponent("w12.away"))
    try tab.wait(until: "(document.querySelector('#attention li[data-name=\"w12\"]') || {}).innerText", timeout: 30)
    let attention = try #require(try tab.evaluate("document.querySelector('#attention li[data-name=\"w12\"]').innerText") as? String)
    #expect(attention.contains("offline") && attention.contains("Offline longer than 1 s") && attention.contains("Offline since"), "\(attention)")

    // Screenshots at 1280 and 768 px; no sideways scrolling at 768 px nor at 200 % zoom.
    let folder = Self.screenshotFolder(dir)
    try tab.evaluate("document.activeElement.blur(); window.scrollTo(0, 0)")
    for width in [1280, 768] {
      try tab.resize(width: width, height: 900)
      #expect(try tab.evaluate("document.documentElement.scrollWidth <= window.innerWidth") as? Bool == true, "\(width) px")
      let png = try tab.screenshot(wholePage: false)
      #expect(Self.pngWidth(png) == width)
      try png.write(to: folder.appendingPathComponent("status-page-\(width).png"))
    }
    try tab.resize(width: 640, height: 450, scale: 2)
    #expect(try tab.evaluate("document.documentElement.scrollWidth <= window.innerWidth") as? Bool == true, "200 % zoom")
    try tab.resize(width: 1280, height: 900)

    // Acknowledged with the keyboard: the name typed, Enter.
    try tab.evaluate("document.querySelector('#sos input[name=by]').focus()")
    try tab.type("Nurse Ada")
    try tab.press("Enter")
    try tab.wait(until: "!document.querySelector('#sos article')", timeout: 10)
    #expect(try tab.evaluate("document.title") as? String == "No open SOS – fleet.yaml")
    let log = try String(contentsOf: dir.appendingPathComponent("events.jsonl"), encoding: .utf8)
    let acknowledged = log.split(separator: "\n").filter { $0.contains("\"kind\":\"acknowledged\"") }
    #expect(acknowledged.count == 1 && acknowledged.first?.contains("\"by\":\"Nurse Ada\"") == true, "\(acknowledged)")
    #expect(acknowledged.first?.contains("\"sos_watch\":\"w07\"") == true)

    // The same data as JSON, with the token; nothing without it.
    let json = try Self.request(url, "/status.json", headers: ["Authorization: Bearer \(Self.token)"])
    #expect(json.hasPrefix("HTTP/1.1 200"), "\(json.prefix(300))")
    let body = try #require(json.components(separatedBy: "\r\n\r\n").last)
    let status = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
    let w12 = try #require((status["watches"] as? [[String: Any]])?.first { $0["name"] as? String == "w12" })
    #expect(w12["state"] as? String == "offline" && w12["needs_attention"] as? Bool == true, "\(w12)")
    #expect((status["acknowledged_sos"] as? [[String: Any]])?.first?["acknowledged_by"] as? String == "Nurse Ada")
    let metrics = try Self.request(url, "/metrics", headers: ["Authorization: Bearer \(Self.token)"])
    #expect(metrics.contains("tsapply_watches{state=\"offline\"} 1") && metrics.contains("tsapply_sos_presses_total 1"), "\(metrics)")
    let refused = try Self.request(url, "/status.json", headers: ["Authorization: Bearer nope"])
    #expect(refused.hasPrefix("HTTP/1.1 401") && refused.hasSuffix("\r\n\r\n") && !refused.contains("w12"), "\(refused)")
  }

  /// Over MQTT the page shows what the agents report: their statuses, an SOS, an agent gone.
  @Test func overMQTTThePageShowsTheAgentsStatusesAndSOS() throws {
    let dir = try TSApplyBinary.temporaryDirectory().resolvingSymlinksInPath()
    let broker = try MosquittoBroker.start(in: dir.path, configuration: MosquittoBroker.defaultConfiguration)
    defer { broker.stop() }
    let names = try FleetRolloutTests.fleet(2, in: dir, broker: broker)
    let agents = [try FleetRolloutTests.agent("a1", names.prefix(1), broker: broker, in: dir),
                  try FleetRolloutTests.agent("a2", names.suffix(1), broker: broker, in: dir)]
    defer { for agent in agents { agent.send(SIGKILL); _ = agent.finish() } }
    #expect(try FleetAgentTests.waitForStatus("a2 (online)", in: dir).contains("a1 (online)"))
    let applied = try TSApplyBinary.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--wait", "60s"], in: dir)
    #expect(applied.status == 0, "\(applied.stdout)\(applied.stderr)")
    let monitor = try ListeningProcess(["monitor", "--fleet", "fleet.yaml", "--log", "events.jsonl", "--serve", "127.0.0.1:0",
                                        "--offline-after", "1s"], in: dir)
    defer { monitor.send(SIGKILL); _ = monitor.finish() }
    var url = ""
    for _ in 0..<3000 where url.isEmpty {
      url = monitor.standardError.split(separator: "\n").first { $0.hasPrefix("Status page on ") }
        .map { String($0.dropFirst("Status page on ".count).prefix { $0 != " " }) } ?? ""
      usleep(20_000)
    }
    func status() throws -> [String: Any] {
      let answer = try Self.request(url, "/status.json")
      return try #require(try JSONSerialization.jsonObject(with: Data((answer.components(separatedBy: "\r\n\r\n").last ?? "").utf8)) as? [String: Any])
    }
    func watch(_ name: String) throws -> [String: Any] {
      try #require((try status()["watches"] as? [[String: Any]])?.first { $0["name"] as? String == name })
    }
    func until(_ condition: () throws -> Bool) throws {
      for _ in 0..<1500 { if try condition() { return }; usleep(20_000) }
      Issue.record("not within 30 s: \(try status())")
    }
    try until { try watch("w01")["state"] as? String == "in sync" && watch("w02")["state"] as? String == "in sync" }
    #expect(try watch("w01")["applied_revision"] as? String != nil)

    try MonitorCommandTests.simulate(["sos"], in: dir, device: "sim:watches/w02.json")
    try until { (try status()["open_sos"] as? [[String: Any]])?.first?["watch"] as? String == "w02" }

    agents[0].send(SIGKILL)
    try until { try watch("w01")["state"] as? String == "offline" && watch("w01")["needs_attention"] as? Bool == true }
    let reasons = try watch("w01")["reasons"] as? [String] ?? []
    // At once (not after --offline-after): none of its presses reaches the monitor.
    #expect(reasons.first?.hasPrefix("Its agent a1 is offline: this watch's SOS presses cannot reach this monitor") == true, "\(reasons)")
    #expect(try watch("w02")["state"] as? String == "in sync")
  }

  /// A staged rollout paused by `apply --fleet` in another process shows on the page and in
  /// `/status.json` as `status --fleet` prints it, and follows it when it is continued.
  @Test func aPausedRolloutShowsOnThePageUntilItIsContinued() throws {
    let dir = try TSApplyBinary.temporaryDirectory().resolvingSymlinksInPath()
    let names = try Self.fleet(in: dir, count: 3)
    try Self.pauseAfterCanary(names, in: dir)
    let (monitor, url) = try Self.monitor(in: dir)
    defer { monitor.send(SIGKILL); _ = monitor.finish() }
    let auth = ["Authorization: Bearer \(Self.token)"]
    func rollout() throws -> [String: Any]? { try Self.rollout(url) }
    func until(_ phase: String) throws {
      for _ in 0..<1500 { if try rollout()?["phase"] as? String == phase { return }; usleep(20_000) }
      Issue.record("not \(phase) within 30 s: \(String(describing: try rollout()))")
    }
    try until("paused")
    #expect(try rollout()?["waves_done"] as? Int == 1)
    // Counted from what the monitors read of the watches, as status --fleet counts them.
    let deadline = Date().addingTimeInterval(30)
    while try (rollout()?["unknown_revision"] as? [String])?.isEmpty != true, Date() < deadline { usleep(20_000) }
    #expect(try rollout()?["observed"] as? Bool == true)
    #expect(try rollout()?["with_revision"] as? [String] == [names[0]])
    #expect(try rollout()?["without_revision"] as? [String] == Array(names.dropFirst()))
    let page = try Self.request(url, "/", headers: auth)
    #expect(page.contains("<div class=\"rollout act\"><p><strong>Rollout (") && page.contains("paused after wave 1 of 2"), "\(page.prefix(3000))")
    #expect(page.contains("Continue with &#39;tsapply apply --fleet fleet.yaml --continue&#39;"))

    let continued = try TSApplyBinary.run(["apply", "--fleet", "fleet.yaml", "--auto-approve", "--allow-destroy", "--continue"],
                                          in: dir, environment: Self.environment(dir))
    #expect(continued.status == 0, "\(continued.stdout)\(continued.stderr)")
    try until("completed")
    let done = try Self.request(url, "/", headers: auth)
    #expect(done.contains("<div class=\"rollout\"><p><strong>Rollout (") && done.contains("completed: 2 waves applied"), "\(done.prefix(3000))")
  }

  /// A rollout over a watch added to the fleet file after the monitor started is counted on the
  /// page from what the watches hold, as `status --fleet` counts it: the page compares the
  /// rollout's revision with the fleet file as it is now, not with the watches it started with
  /// (it said no watch had the revision, the canary included).
  @Test func aRolloutOverAWatchAddedSinceTheMonitorStartedIsCountedFromTheWatches() throws {
    let dir = try TSApplyBinary.temporaryDirectory().resolvingSymlinksInPath()
    let names = try Self.fleet(in: dir, count: 3)
    let fleetFile = dir.appendingPathComponent("fleet.yaml")
    let every = try String(contentsOf: fleetFile, encoding: .utf8)
    try every.split(separator: "\n").filter { !$0.contains(names[2]) }.joined(separator: "\n").appending("\n")
      .write(to: fleetFile, atomically: true, encoding: .utf8)
    let (monitor, url) = try Self.monitor(in: dir)
    defer { monitor.send(SIGKILL); _ = monitor.finish() }
    try every.write(to: fleetFile, atomically: true, encoding: .utf8)
    try Self.pauseAfterCanary(names, in: dir)
    func rollout() throws -> [String: Any]? { try Self.rollout(url) }
    // Until every watch was read (the added one's monitor starts with the fleet file's change),
    // the canary's apply too: the page counts what the checks read, one check behind a write.
    let deadline = Date().addingTimeInterval(30)
    var seen = try rollout()
    while seen?["observed"] as? Bool != true || (seen?["without_revision"] as? [String])?.count != 2
      || (seen?["with_revision"] as? [String])?.count != 1, Date() < deadline {
      usleep(20_000)
      seen = try rollout()
    }
    #expect(seen?["observed"] as? Bool == true, "\(String(describing: seen))")
    #expect(seen?["with_revision"] as? [String] == [names[0]], "\(String(describing: seen))")
    #expect(seen?["without_revision"] as? [String] == Array(names.dropFirst()), "\(String(describing: seen))")
  }

  /// A watch removed from the fleet file while `monitor --fleet` runs is no longer monitored:
  /// one `removed` event, its row leaves the page, a change on it is not reported while one on
  /// another watch is; put back in the file, it is monitored again.
  @Test func aWatchRemovedFromTheFleetFileIsNoLongerMonitored() throws {
    let dir = try TSApplyBinary.temporaryDirectory().resolvingSymlinksInPath()
    _ = try Self.fleet(in: dir, count: 3)
    let fleetFile = dir.appendingPathComponent("fleet.yaml")
    let fleet = try String(contentsOf: fleetFile, encoding: .utf8)
    let (monitor, url) = try Self.monitor(in: dir)
    defer { monitor.send(SIGKILL); _ = monitor.finish() }
    func states() throws -> [String: String] {
      let answer = try Self.request(url, "/status.json", headers: ["Authorization: Bearer \(Self.token)"])
      let body = try JSONSerialization.jsonObject(with: Data((answer.components(separatedBy: "\r\n\r\n").last ?? "").utf8)) as? [String: Any]
      let rows = body?["watches"] as? [[String: Any]] ?? []
      return Dictionary(rows.compactMap { row in (row["name"] as? String).map { ($0, row["state"] as? String ?? "") } }, uniquingKeysWith: { $1 })
    }
    func events() -> [[String: Any]] {
      ((try? String(contentsOf: dir.appendingPathComponent("events.jsonl"), encoding: .utf8)) ?? "").split(separator: "\n")
        .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }
    func events(_ kind: String, _ watch: String) -> [[String: Any]] {
      events().filter { $0["kind"] as? String == kind && $0["watch"] as? String == watch }
    }
    func until(_ what: String, _ condition: () throws -> Bool) throws {
      for _ in 0..<3000 { if try condition() { return }; usleep(20_000) }
      Issue.record("not within 60 s: \(what); page: \(try states()); stderr: \(monitor.standardError)")
    }
    try until("every watch in sync") { try states() == ["w01": "in sync", "w02": "in sync", "w03": "in sync"] }

    try (fleet.split(separator: "\n").filter { !$0.contains("w02") }.joined(separator: "\n") + "\n")
      .write(to: fleetFile, atomically: true, encoding: .utf8)
    try until("w02 off the page") { try states() == ["w01": "in sync", "w03": "in sync"] }
    let removed = events().filter { $0["kind"] as? String == "removed" }
    #expect(removed.count == 1 && removed.first?["watch"] as? String == "w02", "\(removed)")
    #expect(removed.first?["fleet"] as? String == "fleet.yaml" && removed.first?["device"] as? String == "sim:watches/w02.json", "\(removed)")
    #expect(monitor.standardError.contains("fleet.yaml no longer names 1 watch (w02): stopped monitoring it"), "\(monitor.standardError)")
    // A check between the edit and the stop is skipped, not reported as a problem of its manifests.
    #expect(events("error", "w02").isEmpty, "\(events("error", "w02"))")

    // No longer checked: a change on w02 is not reported; the same change on w01 is.
    try MonitorCommandTests.simulate(["contact-add", "Zed", "+15550199"], in: dir, device: "sim:watches/w02.json")
    try MonitorCommandTests.simulate(["contact-add", "Zed", "+15550199"], in: dir, device: "sim:watches/w01.json")
    try until("w01's drift") { !events("drift", "w01").isEmpty }
    usleep(2_500_000)  // one more --interval: a monitor of w02 would have read it by now
    #expect(events("drift", "w02").isEmpty, "\(events("drift", "w02"))")

    // Back in the file: monitored again, and its drift reported.
    try fleet.write(to: fleetFile, atomically: true, encoding: .utf8)
    try until("w02's drift after it came back") { !events("drift", "w02").isEmpty }
    #expect(try states()["w02"] == "drift")
    #expect(events("online", "w02").count == 2, "\(events("online", "w02"))")
    #expect(events().filter { $0["kind"] as? String == "removed" }.count == 1)
  }

  /// A monitor restarted with its watch spelled another way (`sim:watch.json`, `sim:./watch.json`,
  /// the absolute path) still shows the press nobody acknowledged: the page's presses are kept
  /// per watch, not per spelling (fresh-eyes finding: the restart showed "No open SOS").
  @Test func aPressNobodyAcknowledgedOutlivesARestartSpelledAnotherWay() throws {
    let dir = try TSApplyBinary.temporaryDirectory()
    #expect(try TSApplyBinary.run(["device", "init", "--device", "sim:watch.json"], in: dir, environment: Self.environment(dir)).status == 0)
    try "version: 1\nemergency: {sos: true, contacts: [{name: Desk, phone: \"+15550100\"}]}\n"
      .write(to: dir.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    func monitor(_ spec: String) throws -> (ListeningProcess, String) {
      let process = try ListeningProcess(["monitor", "--device", spec, "--interval", "2s", "--log", "events.jsonl",
                                          "--serve", "127.0.0.1:0", "watch.yaml"], in: dir, environment: Self.environment(dir))
      for _ in 0..<3000 {
        if let line = process.standardError.split(separator: "\n").first(where: { $0.hasPrefix("Status page on ") }) {
          return (process, String(line.dropFirst("Status page on ".count).prefix { $0 != " " }))
        }
        usleep(20_000)
      }
      throw HeadlessChromium.Failure(description: "no page address: \(process.standardError)")
    }
    func logged(_ text: String) -> Bool {
      ((try? String(contentsOf: dir.appendingPathComponent("events.jsonl"), encoding: .utf8)) ?? "").contains(text)
    }
    func openPresses(_ url: String) throws -> Int {
      let answer = try Self.request(url, "/status.json")
      let body = try JSONSerialization.jsonObject(with: Data((answer.components(separatedBy: "\r\n\r\n").last ?? "").utf8)) as? [String: Any]
      return (body?["open_sos"] as? [[String: Any]])?.count ?? -1
    }
    let (first, url) = try monitor("sim:watch.json")
    for _ in 0..<3000 where !logged("listening") { usleep(20_000) }
    let press = try TSApplyBinary.run(["device", "simulate", "sos", "--device", "sim:watch.json"], in: dir, environment: Self.environment(dir))
    #expect(press.status == 0, "\(press.stderr)")
    for _ in 0..<1500 where try openPresses(url) != 1 { usleep(20_000) }
    #expect(try openPresses(url) == 1)
    first.send(SIGTERM)
    _ = first.finish()
    for spec in ["sim:./watch.json", "sim:" + dir.resolvingSymlinksInPath().path + "/watch.json"] {
      let (again, url) = try monitor(spec)
      #expect(try openPresses(url) == 1, "restarted as \(spec)")
      again.send(SIGTERM)
      _ = again.finish()
    }
  }

  @Test func anotherAddressNeedsATokenFile() throws {
    let dir = try TSApplyBinary.temporaryDirectory().resolvingSymlinksInPath()
    try "version: 1\n".write(to: dir.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    let result = try TSApplyBinary.run(["monitor", "--serve", "0.0.0.0:0", "--device", "sim:watch.json", "watch.yaml"], in: dir)
    #expect(result.status == 64)
    #expect(result.stderr.contains("--serve 0.0.0.0:0 can be reached from other machines: give --serve-token-file FILE"), "\(result.stderr)")
    let once = try TSApplyBinary.run(["monitor", "--once", "--serve", "8080", "--device", "sim:watch.json", "watch.yaml"], in: dir)
    #expect(once.status == 64 && once.stderr.contains("no page to --serve"), "\(once.stderr)")
    // A token someone could guess is refused before anything is served (fresh-eyes fe98).
    try "abc\n".write(to: dir.appendingPathComponent("short.token"), atomically: true, encoding: .utf8)
    chmod(dir.appendingPathComponent("short.token").path, 0o600)
    let short = try TSApplyBinary.run(["monitor", "--serve", "0.0.0.0:0", "--serve-token-file", "short.token", "--device", "sim:watch.json", "watch.yaml"], in: dir)
    #expect(short.status == 1 && short.stderr.contains("the token in short.token is 3 bytes; one that cannot be guessed has at least 16 "
                                                      + "(make one: openssl rand -hex 16 > short.token && chmod 600 short.token)"), "\(short.stderr)")
  }
}
