import Foundation

/// Headless Chromium (Debian's `chromium`) driven over the DevTools protocol on a pipe
/// (`--remote-debugging-pipe`: commands on descriptor 3, answers on 4, each message JSON ended
/// by a NUL): no port, no WebSocket library. For the status page's end-to-end tests and
/// benchmark: open pages, evaluate script in them, type, take screenshots.
///
/// ```swift
/// let browser = try HeadlessChromium.start()
/// defer { browser.stop() }
/// let tab = try browser.open("http://127.0.0.1:8080/")
/// let title = try tab.evaluate("document.title") as? String
/// ```
public final class HeadlessChromium: @unchecked Sendable {
  /// The browser program: `TSAPPLY_CHROMIUM`, else the first of `chromium`, `chromium-browser`,
  /// `google-chrome` on `PATH`; `nil` when there is none (script/bootstrap installs `chromium`).
  public static var program: String? {
    if let given = ProcessInfo.processInfo.environment["TSAPPLY_CHROMIUM"], !given.isEmpty { return given }
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    for name in ["chromium", "chromium-browser", "google-chrome"] {
      for folder in path.split(separator: ":") where FileManager.default.isExecutableFile(atPath: "\(folder)/\(name)") {
        return "\(folder)/\(name)"
      }
    }
    return nil
  }

  /// A browser call that failed or got no answer.
  public struct Failure: Error, CustomStringConvertible {
    public var description: String
    /// A failure saying `description`.
    public init(description: String) { self.description = description }
  }

  private let pid: pid_t
  private let commands: FileHandle
  private let profile: String
  private let lock = NSCondition()
  private var answers: [Int: [String: Any]] = [:]
  private var nextID = 0
  private var ended = false

  /// Starts the browser with an empty profile in a temporary folder.
  /// - Throws: `Failure` when no browser is installed or it does not start.
  public static func start() throws -> HeadlessChromium {
    guard let program else { throw Failure(description: "no chromium on PATH (script/bootstrap installs Debian's chromium)") }
    return try HeadlessChromium(program: program)
  }

  private init(program: String) throws {
    profile = NSTemporaryDirectory() + "tsapply-chromium-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: profile, withIntermediateDirectories: true)
    var toBrowser: [Int32] = [-1, -1], fromBrowser: [Int32] = [-1, -1]
    guard pipe(&toBrowser) == 0, pipe(&fromBrowser) == 0 else { throw Failure(description: "no pipe") }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_adddup2(&actions, toBrowser[0], 3)
    posix_spawn_file_actions_adddup2(&actions, fromBrowser[1], 4)
    let arguments = [program, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                     "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
                     "--disable-component-update", "--disable-sync", "--mute-audio", "--hide-scrollbars",
                     "--user-data-dir=\(profile)", "--remote-debugging-pipe", "about:blank"]
    let argv = arguments.map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var child: pid_t = 0
    let started = posix_spawn(&child, program, &actions, nil, argv, environ)
    Foundation.close(toBrowser[0])
    Foundation.close(fromBrowser[1])
    guard started == 0 else {
      Foundation.close(toBrowser[1])
      Foundation.close(fromBrowser[0])
      throw Failure(description: "\(program) could not be started: \(String(cString: strerror(started)))")
    }
    pid = child
    commands = FileHandle(fileDescriptor: toBrowser[1], closeOnDealloc: true)
    let answersHandle = FileHandle(fileDescriptor: fromBrowser[0], closeOnDealloc: true)
    let thread = Thread { [weak self] in
      var pending = Data()
      while true {
        let chunk = answersHandle.availableData
        if chunk.isEmpty { break }
        pending += chunk
        while let end = pending.firstIndex(of: 0) {
          let message = pending[pending.startIndex..<end]
          pending = Data(pending[pending.index(after: end)...])
          guard let self, let object = (try? JSONSerialization.jsonObject(with: message)) as? [String: Any],
                let id = object["id"] as? Int else { continue }
          self.lock.withLock {
            self.answers[id] = object
            self.lock.broadcast()
          }
        }
      }
      self?.lock.withLock {
        self?.ended = true
        self?.lock.broadcast()
      }
    }
    thread.start()
    _ = try call("Browser.getVersion", timeout: 60)
  }

  /// Ends the browser and removes its profile.
  public func stop() {
    kill(pid, SIGKILL)
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    try? FileManager.default.removeItem(atPath: profile)
  }

  /// One protocol call (in `session`, for a page); its `result`.
  /// - Throws: `Failure` with the browser's error, or when no answer comes within `timeout` seconds.
  @discardableResult
  public func call(_ method: String, _ params: [String: Any] = [:], session: String? = nil, timeout: TimeInterval = 30) throws -> [String: Any] {
    let id = lock.withLock { () -> Int in
      nextID += 1
      return nextID
    }
    var message: [String: Any] = ["id": id, "method": method, "params": params]
    if let session { message["sessionId"] = session }
    var data = try JSONSerialization.data(withJSONObject: message)
    data.append(0)
    try commands.write(contentsOf: data)
    let deadline = Date().addingTimeInterval(timeout)
    let answer = lock.withLock { () -> [String: Any]? in
      while answers[id] == nil && !ended && Date() < deadline { _ = lock.wait(until: deadline) }
      return answers.removeValue(forKey: id)
    }
    guard let answer else { throw Failure(description: "\(method): no answer within \(timeout)s") }
    if let error = answer["error"] as? [String: Any] { throw Failure(description: "\(method): \(error["message"] ?? error)") }
    return answer["result"] as? [String: Any] ?? [:]
  }

  /// A new tab showing `url`, `width` × `height` CSS pixels; returns once its document is loaded.
  public func open(_ url: String, width: Int = 1280, height: Int = 900) throws -> Tab {
    let target = try call("Target.createTarget", ["url": "about:blank"])
    guard let targetID = target["targetId"] as? String,
          let session = try call("Target.attachToTarget", ["targetId": targetID, "flatten": true])["sessionId"] as? String else {
      throw Failure(description: "no tab")
    }
    let tab = Tab(browser: self, session: session, targetID: targetID)
    try tab.resize(width: width, height: height)
    try tab.navigate(url)
    return tab
  }

  /// An open tab.
  public struct Tab: Sendable {
    let browser: HeadlessChromium
    /// The protocol session attached to it.
    public let session: String
    let targetID: String

    /// Loads `url` and waits until the document is complete.
    public func navigate(_ url: String) throws {
      try browser.call("Page.navigate", ["url": url], session: session)
      try wait(until: "document.readyState === 'complete' && location.href !== 'about:blank'", timeout: 30)
    }

    /// Sets the viewport to `width` × `height` CSS pixels at `scale` device pixels each
    /// (`scale` 2 is how a page looks at 200 % zoom in a window of width × scale pixels).
    public func resize(width: Int, height: Int, scale: Double = 1) throws {
      try browser.call("Emulation.setDeviceMetricsOverride",
                       ["width": width, "height": height, "deviceScaleFactor": scale, "mobile": false], session: session)
    }

    /// The value of `expression` (JSON-like: strings, numbers, booleans, arrays, objects); promises are awaited.
    /// - Throws: `Failure` when it throws in the page.
    @discardableResult
    public func evaluate(_ expression: String) throws -> Any? {
      let result = try browser.call("Runtime.evaluate", ["expression": expression, "returnByValue": true, "awaitPromise": true],
                                    session: session)
      if let exception = result["exceptionDetails"] as? [String: Any] {
        throw Failure(description: "\(expression): \((exception["exception"] as? [String: Any])?["description"] ?? exception)")
      }
      return (result["result"] as? [String: Any])?["value"]
    }

    /// Waits until `condition` (a script expression) is true in the page; how long it took.
    /// - Throws: `Failure` when `timeout` seconds pass first.
    @discardableResult
    public func wait(until condition: String, timeout: TimeInterval, every interval: TimeInterval = 0.01) throws -> TimeInterval {
      let start = Date()
      while true {
        if (try? evaluate("!!(\(condition))")) as? Bool == true { return Date().timeIntervalSince(start) }
        guard Date().timeIntervalSince(start) < timeout else { throw Failure(description: "not within \(timeout)s: \(condition)") }
        Thread.sleep(forTimeInterval: interval)
      }
    }

    /// Types `text` into the focused element, as a keyboard would.
    public func type(_ text: String) throws {
      try browser.call("Input.insertText", ["text": text], session: session)
    }

    /// Presses and releases a key (`Enter`, `Tab`) on the focused element.
    public func press(_ key: String) throws {
      let codes = ["Enter": 13, "Tab": 9, "Escape": 27, " ": 32]
      var down: [String: Any] = ["type": "keyDown", "key": key, "code": key == " " ? "Space" : key,
                                 "windowsVirtualKeyCode": codes[key] ?? 0]
      if key == "Enter" { down["text"] = "\r" }
      try browser.call("Input.dispatchKeyEvent", down, session: session)
      try browser.call("Input.dispatchKeyEvent", ["type": "keyUp", "key": key, "code": down["code"]!,
                                                  "windowsVirtualKeyCode": codes[key] ?? 0], session: session)
    }

    /// A PNG of the viewport, or of the whole page (`wholePage`), at the current size.
    public func screenshot(wholePage: Bool = true) throws -> Data {
      let result = try browser.call("Page.captureScreenshot", ["format": "png", "captureBeyondViewport": wholePage], session: session)
      guard let base64 = result["data"] as? String, let data = Data(base64Encoded: base64) else { throw Failure(description: "no screenshot") }
      return data
    }

    /// Closes the tab.
    public func close() {
      _ = try? browser.call("Target.closeTarget", ["targetId": targetID])
    }
  }
}
