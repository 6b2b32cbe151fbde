import Foundation
import Testing
import TSHTTPServer
@testable import TSBridgeClient

/// The bridge client's HTTP/1.1 over a socket (`HTTPConnection`), against the real server
/// (libmicrohttpd) on 127.0.0.1: fixed-length answers, chunked streams read as they come,
/// refused connections, timeouts and drops, and chunked decoding fed in every split.
@Suite(.timeLimit(.minutes(2))) struct HTTPConnectionTests {
  @Test func exchangesARequestWithItsBodyAndHeaders() async throws {
    let server = try HTTPServer.start { request in
      let text = "\(request.method) \(request.path) h=\(request.header("X-Test") ?? "-") \(request.body.count)"
      return HTTPResponse(status: 201, contentType: "text/plain", bytes: Array(text.utf8), headers: ["X-Reply": "yes"])
    }
    defer { server.stop() }
    let (head, body) = try await HTTPConnection.exchange(host: "127.0.0.1", port: Int(server.port), method: "POST",
                                                         path: "/v1/watches/AA:BB/call", headers: [("X-Test", "v")],
                                                         body: Array(repeating: 7, count: 3000), timeout: 60)
    #expect(head.status == 201)
    #expect(head.headers["x-reply"] == "yes")
    #expect(String(decoding: body, as: UTF8.self) == "POST /v1/watches/AA:BB/call h=v 3000")
  }

  @Test func readsAStreamPieceByPieceUntilItEnds() async throws {
    let server = try HTTPServer.start { _ in
      let stream = HTTPStream(keepAliveInterval: 600)
      Task {
        for index in 1...3 {
          try? await Task.sleep(for: .milliseconds(50))
          _ = stream.write(Array("event \(index)\n\n".utf8))
        }
        stream.finish()
      }
      return HTTPResponse(status: 200, headers: ["Content-Type": "text/event-stream"], body: .stream(stream))
    }
    defer { server.stop() }
    let port = Int(server.port)
    let pieces: [String] = try await Self.blocking { () throws(HTTPConnection.Failure) -> [String] in
      let connection = try HTTPConnection.connect(host: "127.0.0.1", port: port, deadline: .after(60))
      try connection.send("GET", "/events", host: "127.0.0.1", headers: [], body: [], deadline: .after(60))
      let head = try connection.readHead(deadline: .after(60))
      var pieces: [String] = []
      try connection.readBody(head, deadline: .after(60), idle: 60) { pieces.append(String(decoding: $0, as: UTF8.self)); return true }
      return pieces
    }
    #expect(pieces.joined() == "event 1\n\nevent 2\n\nevent 3\n\n")
    #expect(pieces.count >= 3, "the stream was not read as it came: \(pieces)")
  }

  @Test func failuresSayWhetherTheRequestLeft() async throws {
    // Nothing listens on a port just freed: the request never left.
    let closed = try HTTPServer.start { _ in HTTPResponse(status: 200) }
    let port = Int(closed.port)
    closed.stop()
    do {
      _ = try await HTTPConnection.exchange(host: "127.0.0.1", port: port, method: "GET", path: "/", headers: [], body: [], timeout: 2)
      Issue.record("a closed port answered")
    } catch {
      guard case .notSent = error else { Issue.record("expected notSent, got \(error)"); return }
    }
    let server = try HTTPServer.start { request in
      if request.path == "/slow" { try? await Task.sleep(for: .seconds(3)) }
      return request.path == "/drop" ? HTTPResponse(status: 0, body: .dropConnection) : HTTPResponse(status: 200)
    }
    defer { server.stop() }
    // (The handlers run on the concurrency pool, which other suites' blocking tests can hold for
    // a while: the drop gets a long timeout, the slow answer a short one.)
    for (path, expected, timeout) in [("/slow", HTTPConnection.Failure.timedOut, 1.0), ("/drop", .lost(""), 60)] {
      do {
        _ = try await HTTPConnection.exchange(host: "127.0.0.1", port: Int(server.port), method: "POST", path: path,
                                              headers: [], body: [1], timeout: timeout)
        Issue.record("\(path) answered")
      } catch {
        switch (error, expected) {
        case (.timedOut, .timedOut), (.lost, .lost): break
        default: Issue.record("\(path): expected \(expected), got \(error)")
        }
      }
    }
  }

  /// (encoded body, decoded data); each is fed whole and split at every byte.
  static let chunked: [(String, String?)] = [
    ("5\r\nhello\r\n0\r\n\r\n", "hello"),
    ("3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: x\r\n\r\n", "abcde"),
    ("A\r\n0123456789\r\n0\r\n\r\n", "0123456789"),
    ("0\r\n\r\n", ""),
    ("zz\r\nab\r\n", nil),
    ("2\r\nabX\r\n", nil),
  ]

  @Test(arguments: chunked)
  func decodesChunkedBodiesInAnySplit(_ encoded: String, _ decoded: String?) {
    let bytes = Array(encoded.utf8)
    for split in 0...bytes.count {
      var decoder = ChunkedDecoder()
      var buffer = Array(bytes[..<split])
      var output: [UInt8] = []
      var finished = false
      do {
        let first = try decoder.feed(&buffer)
        output += first.data
        buffer += bytes[split...]
        let second = try decoder.feed(&buffer)
        output += second.data
        finished = second.finished
      } catch {
        #expect(decoded == nil, "split \(split): \(error)")
        continue
      }
      if let decoded {
        #expect(finished && String(decoding: output, as: UTF8.self) == decoded, "split \(split)")
      } else {
        #expect(!finished, "split \(split): accepted a bad body")
      }
    }
  }

  /// Runs `body` (blocking socket calls) on a thread of its own, not on the concurrency pool.
  static func blocking<T: Sendable>(_ body: @escaping @Sendable () throws(HTTPConnection.Failure) -> T) async throws -> T {
    let result: Result<T, HTTPConnection.Failure> = await withCheckedContinuation { continuation in
      Thread { continuation.resume(returning: Result { () throws(HTTPConnection.Failure) -> T in try body() }) }.start()
    }
    return try result.get()
  }
}
