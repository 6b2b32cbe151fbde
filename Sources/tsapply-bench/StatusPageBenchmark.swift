import Foundation
import TSHeadlessChromium

/// `status-page [N] [PRESSES] [BINARY]`: `tsapply monitor --fleet --serve` (BINARY, default
/// `.build/release/tsapply`) over N `sim:` watches set up as for `monitor-fleet` (each drifted,
/// so all N are listed under "needs attention": the heaviest page), read in headless Chromium
/// (`HeadlessChromium`, Debian's `chromium`):
/// - time to first paint: `first-contentful-paint` of a fresh tab (5 tabs, median), and the
///   page's size;
/// - SOS press → visible: PRESSES (default 20) presses (`tsapply device simulate sos`), each
///   from the state file's write (its mtime) to when a MutationObserver in the page sees the
///   card (browser clock; same machine), median and worst;
/// - the monitor's CPU (user + system, from /proc) over 20 s with 10 pages open and idle (ten
///   browsers, one page each), and over 10 presses with 10 pages open.
enum StatusPageBenchmark {
  static func run(_ arguments: [String]) async throws -> Int32 {
    let count = arguments.first.flatMap(Int.init) ?? 1000
    let presses = arguments.dropFirst().first.flatMap(Int.init) ?? 20
    let (binary, directory) = try FleetBenchmark.drifted(count, binary: arguments.dropFirst(2).first)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let token = "bench-token-\(UUID().uuidString)"
    try FleetBenchmark.write(token, to: directory + "/page.token")
    chmod(directory + "/page.token", 0o600)

    let (process, reader) = try FleetBenchmark.startReadyMonitor(binary: binary, in: directory, count: count,
                                                                 extra: ["--serve", "127.0.0.1:0", "--serve-token-file", "page.token"])
    defer { if process.isRunning { process.terminate(); process.waitUntilExit() } }
    let environment = ProcessInfo.processInfo.environment.merging(["TSAPPLY_STATE_DIR": directory + "/state"]) { _, new in new }
    let errors = directory + "/monitor.stderr"
    let drained = Task.detached { while !reader.availableData.isEmpty {} }
    defer { drained.cancel() }
    let stderr = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
    guard let line = stderr.split(separator: "\n").first(where: { $0.hasPrefix("Status page on ") }) else {
      throw BenchmarkFailure("no page address: \(stderr)")
    }
    let url = String(line.dropFirst("Status page on ".count).prefix { $0 != " " })
    let pid = process.processIdentifier
    let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
    func cpu() throws -> Double { Double(try MonitorBenchmark.cpuTicks(pid)) / ticks }

    let browser = try HeadlessChromium.start()
    defer { browser.stop() }
    // The first tab takes the token (and the cookie); the others come with the cookie.
    let first = try browser.open(url + "?token=" + token)
    try first.wait(until: "document.getElementById('conn').textContent.indexOf('Live') === 0", timeout: 60)
    let bytes = (try first.evaluate("performance.getEntriesByType('navigation')[0].transferSize") as? Double) ?? 0
    var paints: [Double] = []
    for _ in 0..<5 {
      let tab = try browser.open(url)
      try tab.wait(until: "performance.getEntriesByName('first-contentful-paint').length > 0", timeout: 60)
      paints.append((try tab.evaluate("performance.getEntriesByName('first-contentful-paint')[0].startTime") as? Double) ?? .nan)
      tab.close()
    }
    print(String(format: "status page, %d watches (all drifted: %d under needs attention), page %.0f KiB:", count, count, bytes / 1024))
    print(String(format: "  time to first paint: median %.0f ms (5 fresh tabs: %@)", median(paints),
                 paints.map { String(format: "%.0f", $0) }.joined(separator: ", ")))

    func press(_ index: Int, watching tab: HeadlessChromium.Tab) throws -> Double {
      let name = String(format: "room-%04d", index)
      try tab.evaluate("""
        window.seenAt = 0; new MutationObserver(function(m, o){ if (document.querySelector('#sos article[data-name="\(name)"]')) \
        { window.seenAt = Date.now(); o.disconnect(); } }).observe(document.getElementById('sos'), {childList: true, subtree: true})
        """)
      let simulate = Process()
      simulate.executableURL = URL(fileURLWithPath: binary)
      simulate.arguments = ["device", "simulate", "sos", "--device", "sim:watches/\(name).json"]
      simulate.currentDirectoryURL = URL(fileURLWithPath: directory)
      simulate.environment = environment
      simulate.standardOutput = FileHandle.nullDevice
      try simulate.run()
      simulate.waitUntilExit()
      let written = try FileManager.default.attributesOfItem(atPath: directory + "/watches/\(name).json")[.modificationDate] as? Date ?? Date()
      try tab.wait(until: "window.seenAt > 0", timeout: 30, every: 0.02)
      let seen = (try tab.evaluate("window.seenAt") as? Double) ?? .nan
      return seen - written.timeIntervalSince1970 * 1000
    }
    var latencies: [Double] = []
    for index in 0..<presses { latencies.append(try press(index % count, watching: first)) }
    print(String(format: "  SOS press -> visible on the page (1 page open): median %.0f ms, worst %.0f ms (%d presses)",
                 median(latencies), latencies.max() ?? .nan, presses))

    // Ten pages, each in a browser of its own, as ten people on shift have (a browser keeps at
    // most six connections to one server over HTTP/1.1, and each page's event stream holds one).
    var browsers: [HeadlessChromium] = []
    defer { browsers.forEach { $0.stop() } }
    var tabs = [first]
    for index in 1..<10 {
      let own = try HeadlessChromium.start()
      browsers.append(own)
      let tab = try own.open(url + "?token=" + token)
      do {
        try tab.wait(until: "document.getElementById('conn').textContent.indexOf('Live') === 0", timeout: 120)
      } catch {
        throw BenchmarkFailure("page \(index + 1) of 10: \(error); it shows: "
          + ((try? tab.evaluate("location.href + ' ' + document.title + ' ' + document.body.innerText.slice(0, 300)") as? String) ?? "?"))
      }
      tabs.append(tab)
    }
    let idleStart = try cpu()
    try await Task.sleep(for: .seconds(20))
    let idle = try cpu() - idleStart
    print(String(format: "  monitor CPU with 10 pages open, idle 20 s: %.2f s = %.2f%% of one core", idle, idle / 20 * 100))
    let busyStart = try cpu()
    let wallStart = Date()
    var busyLatencies: [Double] = []
    for index in presses..<(presses + 10) { busyLatencies.append(try press(index % count, watching: first)) }
    let busy = try cpu() - busyStart
    let wall = Date().timeIntervalSince(wallStart)
    print(String(format: "  monitor CPU with 10 pages open over 10 presses: %.2f s in %.1f s wall = %.0f%% of one core; press -> visible median %.0f ms",
                 busy, wall, busy / wall * 100, median(busyLatencies)))
    return 0
  }

  static func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
  }
}
