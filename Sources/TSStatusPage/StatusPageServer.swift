import Foundation
import TSHTTPServer
import TSModel
import TSMonitor

/// `tsapply monitor --serve ADDR`: the status page over the project's HTTP server
/// (TSHTTPServer), read-only but for acknowledging an SOS press. Thin: the state is the
/// `StatusBoard`'s, the HTML `StatusPageHTML`'s; this routes, checks the token and pushes the
/// parts that changed to every open page (docs/monitor.md "Status page").
///
/// | request | answer |
/// |---|---|
/// | `GET /` | the page |
/// | `GET /events` | server-sent events: `update` with `{sos?, attention?, grid?, title, labels}` (parts' HTML) |
/// | `GET /status.json` | `StatusBoard.Snapshot.json` |
/// | `GET /metrics` | `StatusBoard.Snapshot.metrics` (Prometheus text) |
/// | `POST /ack` | `id`, `by` (form): acknowledges an open SOS press; needs a token to be configured |
///
/// With a token, every request must carry it — `Authorization: Bearer TOKEN`, the cookie
/// `tsapply_token`, or `?token=TOKEN` (answered with the cookie and a redirect to the same path
/// without it) — compared in constant time; anything else is answered 401 with an empty body.
public final class StatusPageServer: @unchecked Sendable {
  /// Where and how to serve.
  public struct Options: Sendable {
    /// IPv4 address to bind.
    public var host: String
    /// Port; 0 for a free one.
    public var port: UInt16
    /// The token every request must carry; `nil` serves without one (loopback only: the
    /// command refuses another address without `--serve-token-file`).
    public var token: [UInt8]?
    /// What the page's heading and title name (the fleet file, the manifest).
    public var heading: String
    /// Shortest time between two sends of the grid when a watch's state changed (SOS and
    /// attention go at once).
    public var gridInterval: Duration
    /// Shortest time between two sends of the grid when only "last seen" changed (each check
    /// of each watch changes it; the page's script keeps "ago" current meanwhile).
    public var seenInterval: Duration
    /// How long to wait for the port while another process still listens on it
    /// (`HTTPServer.Configuration.portWait`): a monitor restarted at once finds the old one
    /// still stopping (it delivers what it holds first, up to 10 s).
    public var portWait: Duration = .seconds(20)

    /// Options; the grid is sent at most every 2 s for a state, every 30 s for "last seen".
    public init(host: String, port: UInt16, token: [UInt8]?, heading: String, gridInterval: Duration = .seconds(2),
                seenInterval: Duration = .seconds(30)) {
      self.host = host
      self.port = port
      self.token = token
      self.heading = heading
      self.gridInterval = gridInterval
      self.seenInterval = seenInterval
    }
  }

  /// The board shown.
  public let board: StatusBoard
  /// How it is served.
  public let options: Options
  private let acknowledged: @Sendable (StatusBoard.SOSPress) -> Void
  private var server: HTTPServer?
  private let condition = NSCondition()
  private let acknowledging = NSLock()
  private var streams: [ObjectIdentifier: HTTPStream] = [:]
  private var wakeups = 0
  private var stopping = false
  private var pusher: Thread?
  private let pusherDone = DispatchSemaphore(value: 0)
  private let securityHeaders: [String: String]

  /// `http://HOST:PORT/`.
  public var url: String { (server?.baseURL ?? "http://\(options.host):\(options.port)") + "/" }

  private init(board: StatusBoard, options: Options, acknowledged: @escaping @Sendable (StatusBoard.SOSPress) -> Void) {
    self.board = board
    self.options = options
    self.acknowledged = acknowledged
    let scriptHash = Data(SHA256Digest.bytes(of: Array(StatusPageHTML.script.utf8))).base64EncodedString()
    let styleHash = Data(SHA256Digest.bytes(of: Array(StatusPageHTML.style.utf8))).base64EncodedString()
    securityHeaders = [
      "Content-Security-Policy": "default-src 'none'; script-src 'sha256-\(scriptHash)'; style-src 'sha256-\(styleHash)'; "
        + "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
      "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store",
      "X-Frame-Options": "DENY",
    ]
  }

  /// Starts serving `board`; `acknowledged` is called with each press acknowledged on the page
  /// (write the `acknowledged` event).
  /// - Throws: `HTTPServerError` when the address cannot be bound (the port still in use after
  ///   `Options.portWait`).
  public static func start(board: StatusBoard, options: Options,
                           acknowledged: @escaping @Sendable (StatusBoard.SOSPress) -> Void) throws(HTTPServerError) -> StatusPageServer {
    let page = StatusPageServer(board: board, options: options, acknowledged: acknowledged)
    var configuration = HTTPServer.Configuration(host: options.host, port: options.port, maxBodyBytes: 4096)
    configuration.refusal = { status, _ in HTTPResponse(status: status) }
    configuration.portWait = options.portWait
    page.server = try HTTPServer.start(configuration) { [weak page] request in
      await page?.respond(request) ?? HTTPResponse(status: 503)
    }
    board.observe { [weak page] in page?.wake() }
    let thread = Thread { [weak page] in page?.push() }
    thread.name = "status page"
    page.pusher = thread
    thread.start()
    return page
  }

  /// Stops serving: closes the open pages' streams and frees the port.
  public func stop() {
    condition.withLock {
      stopping = true
      condition.broadcast()
    }
    if pusher != nil { pusherDone.wait() }
    pusher = nil
    server?.stop()
    server = nil
  }

  /// Open event streams (pages connected).
  public var openPages: Int { condition.withLock { streams.count } }

  // MARK: Requests

  func respond(_ request: HTTPRequest) async -> HTTPResponse {
    // Without a token the page is for this machine only: a name other than a loopback one in
    // `Host` is a page elsewhere reaching it through DNS rebinding, and gets nothing.
    if options.token == nil, !Self.isLoopbackHost(request.header("Host")) {
      return answer(421, "text/plain; charset=utf-8",
                    "this page answers to 127.0.0.1, localhost and [::1] only (serve it with --serve-token-file to use another name)\n")
    }
    if let token = options.token {
      switch authorize(request, token: token) {
      case .refused: return HTTPResponse(status: 401, headers: ["WWW-Authenticate": "Bearer realm=\"tsapply\""])
      case .byQuery:
        // Keep the token out of the address bar and history: a cookie, and the path again.
        return HTTPResponse(status: 303, headers: securityHeaders.merging([
          "Location": Self.sameSiteLocation(request.path),
          "Set-Cookie": "tsapply_token=\(Self.cookieValue(token)); Path=/; HttpOnly; SameSite=Strict",
        ]) { _, new in new })
      case .allowed: break
      }
    }
    switch (request.method, request.path) {
    case ("GET", "/"), ("HEAD", "/"):
      let snapshot = board.snapshot()
      return html(StatusPageHTML.page(snapshot, heading: options.heading, canAcknowledge: options.token != nil))
    case ("GET", "/status.json"):
      return answer(200, "application/json; charset=utf-8", board.snapshot().json)
    case ("GET", "/metrics"):
      return answer(200, "text/plain; version=0.0.4; charset=utf-8", board.snapshot().metrics)
    case ("GET", "/events"):
      return events()
    case ("POST", "/ack"):
      return acknowledge(request)
    case (_, "/"), (_, "/status.json"), (_, "/metrics"), (_, "/events"), (_, "/ack"):
      return answer(405, "text/plain; charset=utf-8", "method not allowed\n")
    default:
      return answer(404, "text/plain; charset=utf-8", "not found\n")
    }
  }

  enum Authorization { case allowed, byQuery, refused }

  /// Whether `host` (a `Host` header: name, optional port) names this machine's loopback.
  static func isLoopbackHost(_ host: String?) -> Bool {
    guard var name = host?.trimmingCharacters(in: .whitespaces).lowercased(), !name.isEmpty else { return false }
    if name.hasPrefix("[") {
      name = String(name.prefix { $0 != "]" }) + "]"
    } else if let colon = name.lastIndex(of: ":") {
      name = String(name[..<colon])
    }
    return ["127.0.0.1", "localhost", "[::1]"].contains(name)
  }

  /// `path` as a redirect that stays on this page's site: one leading `/`, never `//` or `/\`
  /// (which browsers take for another host).
  static func sameSiteLocation(_ path: String) -> String {
    "/" + path.drop { $0 == "/" || $0 == "\\" }
  }

  /// Whether `request` carries `token` (header, cookie or query), each compared in constant time.
  func authorize(_ request: HTTPRequest, token: [UInt8]) -> Authorization {
    let expected = SHA256Digest.bytes(of: token)
    func matches(_ given: String?) -> Bool {
      guard let given else { return false }
      return SHA256Digest.constantTimeEqual(SHA256Digest.bytes(of: Array(given.utf8)), expected)
    }
    if let header = request.header("Authorization"), header.lowercased().hasPrefix("bearer "),
       matches(String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces)) { return .allowed }
    let cookies = (request.header("Cookie") ?? "").split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
    if let cookie = cookies.first(where: { $0.hasPrefix("tsapply_token=") }),
       matches(Self.cookieToken(String(cookie.dropFirst("tsapply_token=".count)))) { return .allowed }
    if request.method == "GET", matches(request.query["token"]) { return .byQuery }
    return .refused
  }

  /// The token as a cookie value: percent-encoded (a token may hold any byte but a line end).
  static func cookieValue(_ token: [UInt8]) -> String {
    String(decoding: token, as: UTF8.self).addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
  }

  static func cookieToken(_ value: String) -> String? { value.removingPercentEncoding }

  private func acknowledge(_ request: HTTPRequest) -> HTTPResponse {
    guard options.token != nil else {
      return answer(403, "text/plain; charset=utf-8", "acknowledging needs the monitor started with --serve-token-file\n")
    }
    // The cookie is SameSite=Strict; a browser's cross-site form post also names its origin,
    // and says where it comes from (`Sec-Fetch-Site`): anything but this page (`same-origin`)
    // or a person (`none`: typed, a bookmark) is refused, with an `Origin` or without.
    if let origin = request.header("Origin"), let host = request.header("Host"), origin != "http://\(host)" {
      return answer(403, "text/plain; charset=utf-8", "cross-origin request refused\n")
    }
    if let site = request.header("Sec-Fetch-Site")?.lowercased(), !["same-origin", "none"].contains(site) {
      return answer(403, "text/plain; charset=utf-8", "cross-site request refused (Sec-Fetch-Site: \(ControlCharacters.escaped(String(site.prefix(40)))))\n")
    }
    let form = Self.form(request.body)
    guard let id = form["id"], let person = form["by"], !StatusBoard.cleanName(person).isEmpty else {
      return answer(400, "text/plain; charset=utf-8", "expected the form fields id and by (your name)\n")
    }
    // The record first (the acknowledged event in the log), then the page: one at a time, so a
    // press is acknowledged, and recorded, once.
    let done = acknowledging.withLock { () -> Bool in
      guard var press = board.openPress(id) else { return false }
      press.acknowledgedBy = board.acknowledger(person)
      press.acknowledgedAt = Date()
      acknowledged(press)
      return board.acknowledge(id, by: person, at: press.acknowledgedAt) != nil
    }
    guard done else {
      return answer(409, "text/plain; charset=utf-8", "no open SOS press \(id): acknowledged already, or unknown\n")
    }
    if request.header("X-Requested-With") == "fetch" { return HTTPResponse(status: 204, headers: securityHeaders) }
    return HTTPResponse(status: 303, headers: securityHeaders.merging(["Location": "/"]) { _, new in new })
  }

  /// `application/x-www-form-urlencoded` fields (`+` is a space); a repeated name keeps the last.
  static func form(_ body: [UInt8]) -> [String: String] {
    var fields: [String: String] = [:]
    for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
      let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      func decode(_ text: Substring) -> String? { String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding }
      guard let name = decode(parts[0]) else { continue }
      fields[name] = parts.count > 1 ? decode(parts[1]) : ""
    }
    return fields
  }

  private func answer(_ status: Int, _ type: String, _ text: String) -> HTTPResponse {
    HTTPResponse(status: status, contentType: type, bytes: Array(text.utf8), headers: securityHeaders)
  }

  private func html(_ text: String) -> HTTPResponse { answer(200, "text/html; charset=utf-8", text) }

  // MARK: Live updates

  private func events() -> HTTPResponse {
    let stream = HTTPStream()
    let snapshot = board.snapshot()
    // The whole page as it is now first (it may have changed since the page was served).
    stream.write(Self.event(update(snapshot, parts: StatusPageHTML.Part.allCases)))
    let key = ObjectIdentifier(stream)
    condition.withLock { streams[key] = stream }
    stream.onClose { [weak self] in
      guard let self else { return }
      _ = self.condition.withLock { self.streams.removeValue(forKey: key) }
    }
    return HTTPResponse(status: 200, headers: securityHeaders.merging([
      "Content-Type": "text/event-stream; charset=utf-8", "X-Accel-Buffering": "no",
    ]) { _, new in new }, body: .stream(stream))
  }

  private func wake() {
    condition.withLock {
      wakeups += 1
      condition.signal()
    }
  }

  /// The pusher's loop: on each change (or every second, for the offline threshold), sends the
  /// parts whose versions moved to every open page; the grid at most every `gridInterval` when a
  /// state changed, every `seenInterval` when only "last seen" did.
  private func push() {
    var sent = board.versions
    var lastGrid = ContinuousClock.now - options.seenInterval
    var seenWakeups = 0
    var nextTick = Date().addingTimeInterval(1)
    /// When the grid is due (`nil`: it is as sent).
    func gridDue(_ current: StatusBoard.Versions) -> ContinuousClock.Instant? {
      if current.gridState != sent.gridState { return lastGrid + options.gridInterval }
      if current.grid != sent.grid { return lastGrid + options.seenInterval }
      return nil
    }
    while true {
      var due: Date = nextTick
      if let gridAt = gridDue(board.versions) {
        let now = ContinuousClock.now
        due = min(due, Date().addingTimeInterval(gridAt > now ? Backoff.seconds(gridAt - now) : 0))
      }
      let stop = condition.withLock { () -> Bool in
        while !stopping && wakeups == seenWakeups && Date() < due { _ = condition.wait(until: due) }
        seenWakeups = wakeups
        return stopping
      }
      if stop { break }
      if Date() >= nextTick {
        board.tick()
        nextTick = Date().addingTimeInterval(1)
      }
      let open = condition.withLock { Array(streams.values) }
      guard !open.isEmpty else {
        // Nobody to tell: each page that connects gets the whole page first.
        sent = board.versions
        continue
      }
      let current = board.versions
      var parts: [StatusPageHTML.Part] = []
      if current.sos != sent.sos { parts.append(.sos) }
      if current.attention != sent.attention { parts.append(.attention) }
      if let gridAt = gridDue(current), ContinuousClock.now >= gridAt {
        parts.append(.grid)
        lastGrid = ContinuousClock.now
        sent.grid = current.grid
        sent.gridState = current.gridState
      }
      sent.sos = current.sos
      sent.attention = current.attention
      guard !parts.isEmpty else { continue }
      let snapshot = board.snapshot()
      let bytes = Self.event(update(snapshot, parts: parts))
      for stream in open { stream.write(bytes) }
    }
    condition.withLock { Array(streams.values) }.forEach { $0.finish() }
    pusherDone.signal()
  }

  /// The `update` event's data: the parts' HTML, the title and the labels.
  private func update(_ snapshot: StatusBoard.Snapshot, parts: [StatusPageHTML.Part]) -> JSONValue {
    var object: [String: JSONValue] = [
      "title": .string(StatusPageHTML.title(snapshot, heading: options.heading)),
      "labels": .array(Set(snapshot.rows.flatMap(\.labels)).sorted().map(JSONValue.string)),
    ]
    for part in parts {
      object[part.rawValue] = .string(StatusPageHTML.part(part, snapshot, canAcknowledge: options.token != nil))
    }
    return .object(object)
  }

  /// One server-sent event `update` whose data is `value` as one JSON line.
  static func event(_ value: JSONValue) -> [UInt8] {
    Array(("event: update\ndata: " + MonitorEvent.compact(value) + "\n\n").utf8)
  }
}
