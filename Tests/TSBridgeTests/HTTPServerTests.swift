import Foundation
import Testing
import TSHTTPClient
import TSHTTPServer
import TSModel
import TSTestSupport

/// `HTTPServer` on 127.0.0.1 and a free port: requests reach the handler whole, bodies over the
/// limit are 413 without it, a dropped connection is seen as one, streams flow, stop frees the port.
@Suite struct HTTPServerTests {
  /// `method` `url` through the project's client; the timeout only guards against a hang (a
  /// loaded machine may be slow).
  static func send(_ method: String, _ url: String, headers: [(String, String)] = [], body: [UInt8] = [],
                   reuse: Bool = true) async throws(HTTPClientError) -> HTTPClientResponse {
    try await HTTPClient.shared.send(HTTPClientRequest(method: method, url: url, headers: headers, body: body, timeout: 120,
                                                      reuseConnection: reuse))
  }

  @Test func echoesRequestsAndRefusesOversizedBodies() async throws {
    let server = try HTTPServer.start(.init(maxBodyBytes: 64)) { request in
      let text = "\(request.method) \(request.path) q=\(request.query["q"] ?? "-") h=\(request.header("X-Test") ?? "-") \(request.body.count)"
      return HTTPResponse(status: 201, contentType: "text/plain", bytes: Array(text.utf8), headers: ["X-Reply": "yes"])
    }
    defer { server.stop() }
    #expect(server.port != 0)
    let url = "\(server.baseURL)/a/AA%3ABB?q=1"
    let answer = try await Self.send("POST", url, headers: [("X-Test", "v")], body: Array(repeating: 1, count: 64))
    #expect(answer.status == 201)
    #expect(answer.head.headers["x-reply"] == "yes")
    #expect(String(decoding: answer.body, as: UTF8.self) == "POST /a/AA:BB q=1 h=v 64")
    let tooBig = try await Self.send("POST", url, headers: [("X-Test", "v")], body: Array(repeating: 1, count: 65))
    #expect(tooBig.status == 413)
  }

  /// A header or query argument given twice reaches the handler as one value holding both,
  /// joined by ", " (RFC 9110 §5.3), not as whichever came last: two `TSApply-Protocol` headers
  /// were taken as the second (fresh-eyes fe98), where the bridge must refuse what it cannot read
  /// as one version.
  @Test func aRepeatedFieldHoldsEveryValue() async throws {
    let server = try HTTPServer.start { request in
      HTTPResponse(status: 200, contentType: "text/plain",
                   bytes: Array("h=\(request.header("X-Test") ?? "-") q=\(request.query["q"] ?? "-")".utf8))
    }
    defer { server.stop() }
    let answer = try await Self.send("GET", server.baseURL + "/a?q=1&q=2", headers: [("X-Test", "1.0"), ("X-Test", "2.0")])
    #expect(String(decoding: answer.body, as: UTF8.self) == "h=1.0, 2.0 q=1, 2")
  }

  /// `%00` in the path or query would be decoded into a NUL that ends what the handler sees
  /// (fresh-eyes finding: `/v1/watches%00zzz` served as `/v1/watches`): refused with 400,
  /// without the handler; other escapes are decoded as ever, `%2500` too (a literal `%00`).
  @Test(arguments: [("/a%00zzz", 400), ("/a?q=1%00x", 400), ("/call%00/../lease", 400), ("/a%2500", 200), ("/a%41", 200)])
  func aNULInThePathOrQueryIsRefused(path: String, status: Int) async throws {
    let handled = Locked<[String]>([])
    let server = try HTTPServer.start { request in
      handled.update { $0.append(request.path) }
      return HTTPResponse(status: 200, contentType: "text/plain", bytes: Array(request.path.utf8))
    }
    defer { server.stop() }
    let answer = try await Self.send("GET", server.baseURL + path)
    #expect(answer.status == status, "\(path)")
    #expect(handled.value.count == (status == 200 ? 1 : 0), "\(handled.value)")
    if status == 400 { #expect(String(decoding: answer.body, as: UTF8.self).contains("%00")) }
    // The connection serves the next request as usual.
    #expect(try await Self.send("GET", server.baseURL + "/next").status == 200)
  }

  /// (A request that must not be sent twice goes on a new connection, as the bridge client's
  /// writes do: the drop is then seen at once.)
  @Test func aDroppedConnectionIsNotATimeout() async throws {
    let server = try HTTPServer.start { request in
      request.path == "/drop" ? HTTPResponse(status: 0, body: .dropConnection) : HTTPResponse(status: 200, contentType: "text/plain", bytes: [0x41])
    }
    defer { server.stop() }
    _ = try await Self.send("GET", "\(server.baseURL)/first")
    do {
      _ = try await Self.send("POST", "\(server.baseURL)/drop", body: Array("x".utf8), reuse: false)
      Issue.record("a dropped connection answered")
    } catch {
      guard case .lost = error else { Issue.record("the drop was seen as \(error), not as a lost connection"); return }
    }
  }

  @Test func streamsAndStopsCleanly() async throws {
    let server = try HTTPServer.start { _ in
      let stream = HTTPStream(keepAliveInterval: 600)
      Task {
        for index in 1...3 { stream.write(Array("event \(index)\n".utf8)) }
        stream.finish()
      }
      return HTTPResponse(status: 200, headers: ["Content-Type": "text/event-stream"], body: .stream(stream))
    }
    let events = try await Self.send("GET", "\(server.baseURL)/events")
    #expect(String(decoding: events.body, as: UTF8.self) == "event 1\nevent 2\nevent 3\n")
    let open = HTTPStream(keepAliveInterval: 0.1)
    let (called, calls) = AsyncStream<Void>.makeStream()
    let endless = try HTTPServer.start { _ in
      calls.yield()
      return HTTPResponse(status: 200, body: .stream(open))
    }
    let reader = Task { try? await Self.send("GET", "\(endless.baseURL)/") }
    for await _ in called { break }
    endless.stop()
    _ = await reader.value
    #expect(open.isClosed)
    server.stop()
    await #expect(throws: HTTPClientError.self) { try await Self.send("GET", "\(server.baseURL)/") }
  }

  /// A process with many files open — a monitor of 1,000 watches holds a lock file for each —
  /// gets sockets numbered past select(2)'s 1,024: the server must still take them (it polls
  /// with poll(2); with select it dropped every new connection once the numbers got there).
  @Test func servesConnectionsWhoseDescriptorsArePast1024() async throws {
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    if limit.rlim_cur < 1300 {
      limit.rlim_cur = min(limit.rlim_max, 4096)
      setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
    try #require(limit.rlim_cur >= 1300, "the test needs more than 1,300 open files (ulimit -n)")
    var held: [Int32] = []
    defer { held.forEach { _ = close($0) } }
    while held.last.map({ $0 < 1100 }) ?? true { held.append(open("/dev/null", O_RDONLY)) }
    let server = try HTTPServer.start(.init(host: "127.0.0.1", port: 0)) { _ in
      HTTPResponse(status: 200, contentType: "text/plain", bytes: Array("ok".utf8))
    }
    defer { server.stop() }
    let answer = try await offThePool { () throws -> String in
      let connection = try RawConnection(port: server.port)
      defer { connection.close() }
      connection.send("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
      return connection.receive()
    }
    #expect(answer.hasPrefix("HTTP/1.1 200") && answer.hasSuffix("ok"), "\(answer)")
  }

  /// A port whose last server answered requests and stopped can be listened on again at once
  /// (its connections' TIME_WAIT does not hold it: the listening socket reuses the address).
  @Test func aPortFreedAfterAnsweringCanBeListenedOnAgainAtOnce() async throws {
    let first = try HTTPServer.start { _ in HTTPResponse(status: 200, contentType: "text/plain", bytes: [0x41]) }
    let port = first.port
    for _ in 0..<3 { _ = try await Self.send("GET", "\(first.baseURL)/", reuse: false) }
    first.stop()
    let again = try HTTPServer.start(.init(port: port)) { _ in HTTPResponse(status: 200, contentType: "text/plain", bytes: [0x42]) }
    defer { again.stop() }
    #expect(try await Self.send("GET", "\(again.baseURL)/", reuse: false).body == [0x42])
  }

  /// A port still held by a process that is stopping (a monitor restarted at once, fe17) is
  /// refused as in use without `portWait`; with it, the server waits for the port and takes it.
  @Test func waitsForAPortHeldByAProcessThatIsStopping() async throws {
    let holder = try HTTPServer.start { _ in HTTPResponse(status: 200) }
    let port = holder.port
    #expect(throws: HTTPServerError.portInUse("127.0.0.1:\(port)")) { try HTTPServer.start(.init(port: port)) { _ in HTTPResponse(status: 200) } }
    var waiting = HTTPServer.Configuration(port: port)
    waiting.portWait = .seconds(60)
    let configuration = waiting
    let release = Task.detached {
      try? await Task.sleep(for: .milliseconds(700))
      holder.stop()
    }
    let server = try await offThePool { () throws -> HTTPServer in
      try HTTPServer.start(configuration) { _ in HTTPResponse(status: 200, contentType: "text/plain", bytes: [0x43]) }
    }
    defer { server.stop() }
    await release.value
    #expect(server.port == port)
    #expect(try await Self.send("GET", "\(server.baseURL)/", reuse: false).body == [0x43])
  }

  @Test func refusesAnAddressThatIsNotIPv4() {
    #expect(throws: HTTPServerError.badAddress("localhost")) { try HTTPServer.start(.init(host: "localhost")) { _ in HTTPResponse(status: 200) } }
  }
}
