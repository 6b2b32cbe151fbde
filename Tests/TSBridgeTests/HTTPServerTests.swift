import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TSHTTPServer
import TSTestSupport

/// `HTTPServer` on 127.0.0.1 and a free port: requests reach the handler whole, bodies over the
/// limit are 413 without it, a dropped connection is seen as one, streams flow, stop frees the port.
@Suite struct HTTPServerTests {
  /// A session whose timeout only guards against a hang (a loaded machine may be slow).
  static func session(timeout: Double = 120) -> URLSession {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.timeoutIntervalForRequest = timeout
    return URLSession(configuration: configuration)
  }

  @Test func echoesRequestsAndRefusesOversizedBodies() async throws {
    let server = try HTTPServer.start(.init(maxBodyBytes: 64)) { request in
      let text = "\(request.method) \(request.path) q=\(request.query["q"] ?? "-") h=\(request.header("X-Test") ?? "-") \(request.body.count)"
      return HTTPResponse(status: 201, contentType: "text/plain", bytes: Array(text.utf8), headers: ["X-Reply": "yes"])
    }
    defer { server.stop() }
    #expect(server.port != 0)
    var request = URLRequest(url: URL(string: "\(server.baseURL)/a/AA%3ABB?q=1")!)
    request.httpMethod = "POST"
    request.setValue("v", forHTTPHeaderField: "X-Test")
    request.httpBody = Data(repeating: 1, count: 64)
    let (data, response) = try await Self.session().data(for: request)
    let http = try #require(response as? HTTPURLResponse)
    #expect(http.statusCode == 201)
    #expect(http.value(forHTTPHeaderField: "X-Reply") == "yes")
    #expect(String(decoding: data, as: UTF8.self) == "POST /a/AA:BB q=1 h=v 64")
    request.httpBody = Data(repeating: 1, count: 65)
    let (_, tooBig) = try await Self.session().data(for: request)
    #expect((tooBig as? HTTPURLResponse)?.statusCode == 413)
  }

  /// (A client must not send a request it cannot repeat on a kept-alive connection: libcurl
  /// under Linux URLSession then waits for its timeout when the connection drops. The bridge
  /// client sends `Connection: close`.)
  @Test func aDroppedConnectionIsNotATimeout() async throws {
    let server = try HTTPServer.start { request in
      request.path == "/drop" ? HTTPResponse(status: 0, body: .dropConnection) : HTTPResponse(status: 200, contentType: "text/plain", bytes: [0x41])
    }
    defer { server.stop() }
    let session = Self.session()
    var first = URLRequest(url: URL(string: "\(server.baseURL)/first")!)
    first.setValue("close", forHTTPHeaderField: "Connection")
    _ = try await session.data(for: first)
    var request = URLRequest(url: URL(string: "\(server.baseURL)/drop")!)
    request.httpMethod = "POST"
    request.httpBody = Data("x".utf8)
    do {
      _ = try await session.data(for: request)
      Issue.record("a dropped connection answered")
    } catch let error as URLError {
      #expect(error.code != .timedOut, "the drop was seen only as a timeout")
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
    let (data, _) = try await Self.session().data(from: URL(string: "\(server.baseURL)/events")!)
    #expect(String(decoding: data, as: UTF8.self) == "event 1\nevent 2\nevent 3\n")
    let open = HTTPStream(keepAliveInterval: 0.1)
    let (called, calls) = AsyncStream<Void>.makeStream()
    let endless = try HTTPServer.start { _ in
      calls.yield()
      return HTTPResponse(status: 200, body: .stream(open))
    }
    let reader = Task { try? await Self.session().data(from: URL(string: "\(endless.baseURL)/")!) }
    for await _ in called { break }
    endless.stop()
    _ = await reader.value
    #expect(open.isClosed)
    server.stop()
    await #expect(throws: URLError.self) { try await Self.session().data(from: URL(string: "\(server.baseURL)/")!) }
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

  @Test func refusesAnAddressThatIsNotIPv4() {
    #expect(throws: HTTPServerError.badAddress("localhost")) { try HTTPServer.start(.init(host: "localhost")) { _ in HTTPResponse(status: 200) } }
  }
}
