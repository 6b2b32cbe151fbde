import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One HTTP/1.1 exchange over a plain TCP socket, blocking, on the calling thread: what the
/// bridge client needs of HTTP (protocol v1 is plain HTTP on the local network; the bodies are
/// sealed, so no TLS) and nothing more.
///
/// Why not URLSession: on Linux, FoundationNetworking drives libcurl's multi interface with
/// libdispatch timers that fire continuously while a response is awaited, so a waiting client
/// burned a whole core (4.0 s of CPU in a 5 s wait for one slow call; a monitor holding the
/// event stream open used 19.9 s of CPU in 20 s). A socket waited on with `poll(2)` costs
/// nothing while it waits. Each exchange opens its own connection (`Connection: close`), so a
/// request is never resent on a kept-alive connection that died.
///
/// Responses are read with `Content-Length`, `Transfer-Encoding: chunked` or to the end of the
/// connection; heads are at most 64 KiB and bodies at most `maxBodyBytes`.
final class HTTPConnection: @unchecked Sendable {
  /// Why an exchange did not complete.
  enum Failure: Error, Equatable {
    /// No connection could be made: the request never left.
    case notSent(String)
    /// The deadline passed after the request was (or may have been) sent.
    case timedOut
    /// The connection broke or the answer was not HTTP, after the request was sent.
    case lost(String)
  }

  /// A response's status line and header fields (names in lower case).
  struct Head: Equatable {
    var status: Int
    var headers: [String: String]
  }

  static let maxHeadBytes = 64 * 1024
  static let maxBodyBytes = 16 * 1024 * 1024

  private let descriptor: Int32
  private let lock = NSLock()
  private var closed = false
  /// Bytes read past what the last read needed.
  private var pending: [UInt8] = []

  private init(descriptor: Int32) {
    self.descriptor = descriptor
  }

  deinit { Glibc.close(descriptor) }

  /// Connects to `host` (a name, an IPv4 or an IPv6 address) on `port` before `deadline`.
  /// - Throws: `.notSent` when no address answers in time.
  static func connect(host: String, port: Int, deadline: Deadline) throws(Failure) -> HTTPConnection {
    var hints = addrinfo()
    hints.ai_family = AF_UNSPEC
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    var list: UnsafeMutablePointer<addrinfo>?
    let status = getaddrinfo(host, String(port), &hints, &list)
    guard status == 0, let first = list else {
      throw .notSent("cannot resolve \(host): \(String(cString: gai_strerror(status)))")
    }
    defer { freeaddrinfo(list) }
    var reason = "no address"
    var entry: UnsafeMutablePointer<addrinfo>? = first
    while let address = entry {
      entry = address.pointee.ai_next
      let socket = Glibc.socket(address.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
      guard socket >= 0 else { reason = String(cString: strerror(errno)); continue }
      let flags = fcntl(socket, F_GETFL)
      _ = fcntl(socket, F_SETFL, flags | O_NONBLOCK)
      if Glibc.connect(socket, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 || errno == EINPROGRESS {
        if wait(socket, for: Int16(POLLOUT), until: deadline) {
          var error: Int32 = 0
          var length = socklen_t(MemoryLayout<Int32>.size)
          getsockopt(socket, SOL_SOCKET, SO_ERROR, &error, &length)
          if error == 0 { return HTTPConnection(descriptor: socket) }
          reason = String(cString: strerror(error))
        } else {
          reason = "no answer within the timeout"
        }
      } else {
        reason = String(cString: strerror(errno))
      }
      Glibc.close(socket)
    }
    throw .notSent("cannot connect to \(host):\(port): \(reason)")
  }

  /// Closes the connection from any thread; a read or write waiting on it ends with `.lost`.
  func cancel() {
    lock.withLock {
      guard !closed else { return }
      closed = true
      shutdown(descriptor, Int32(SHUT_RDWR))
    }
  }

  /// Sends `method path` with `headers` (and `Content-Length` when there is a body).
  func send(_ method: String, _ path: String, host: String, headers: [(String, String)], body: [UInt8],
            deadline: Deadline) throws(Failure) {
    var head = "\(method) \(path) HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n"
    for (name, value) in headers { head += "\(name): \(value)\r\n" }
    if method != "GET" || !body.isEmpty { head += "Content-Length: \(body.count)\r\n" }
    head += "\r\n"
    var bytes = Array(head.utf8) + body
    while !bytes.isEmpty {
      guard Self.wait(descriptor, for: Int16(POLLOUT), until: deadline) else { throw .timedOut }
      let sent = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
      if sent < 0 {
        if errno == EAGAIN || errno == EINTR { continue }
        throw .lost("the connection broke while sending: \(String(cString: strerror(errno)))")
      }
      bytes.removeFirst(sent)
    }
  }

  /// Reads the status line and header fields.
  func readHead(deadline: Deadline) throws(Failure) -> Head {
    while true {
      if let end = Self.find([13, 10, 13, 10], in: pending) {
        let text = String(decoding: pending[..<end], as: UTF8.self)
        pending.removeFirst(end + 4)
        let lines = text.components(separatedBy: "\r\n")
        let parts = lines[0].split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]), (100...599).contains(status) else {
          throw .lost("the answer is not HTTP/1.1")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
          guard let colon = line.firstIndex(of: ":") else { continue }
          headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Head(status: status, headers: headers)
      }
      guard pending.count <= Self.maxHeadBytes else { throw .lost("the answer's head is over \(Self.maxHeadBytes) bytes") }
      guard try readMore(deadline: deadline) else { throw .lost("the connection closed before an answer") }
    }
  }

  /// Reads the whole body of a response with `head`.
  func readBody(_ head: Head, deadline: Deadline) throws(Failure) -> [UInt8] {
    var body: [UInt8] = []
    try readBody(head, deadline: deadline) { chunk in
      body += chunk
      return body.count <= Self.maxBodyBytes
    }
    guard body.count <= Self.maxBodyBytes else { throw .lost("the answer is over \(Self.maxBodyBytes) bytes") }
    return body
  }

  /// Reads the body of a response with `head`, handing each piece to `receive` as it arrives
  /// (a stream: Server-Sent Events); stops early when `receive` returns `false`. Each wait for
  /// more bytes ends at `deadline`, or with `idle`, that many seconds after the last bytes came.
  func readBody(_ head: Head, deadline: Deadline, idle: Double? = nil, _ receive: ([UInt8]) -> Bool) throws(Failure) {
    func more() throws(Failure) -> Bool { try readMore(deadline: idle.map { .after($0) } ?? deadline) }
    if head.headers["transfer-encoding"]?.lowercased().contains("chunked") == true {
      var decoder = ChunkedDecoder()
      while true {
        let (data, finished) = try decoder.feed(&pending)
        if !data.isEmpty, !receive(data) { return }
        if finished { return }
        guard try more() else { throw .lost("the connection closed inside a chunked answer") }
      }
    }
    if let text = head.headers["content-length"] {
      guard var remaining = Int(text), remaining >= 0 else { throw .lost("a bad Content-Length: \(text)") }
      while true {
        let take = min(remaining, pending.count)
        if take > 0 {
          let data = Array(pending.prefix(take))
          pending.removeFirst(take)
          remaining -= take
          if !receive(data) { return }
        }
        if remaining == 0 { return }
        guard try more() else { throw .lost("the connection closed \(remaining) bytes before the answer's end") }
      }
    }
    while true {
      if !pending.isEmpty {
        let data = pending
        pending = []
        if !receive(data) { return }
      }
      guard try more() else { return }
    }
  }

  /// Reads what is available into `pending`; `false` at the end of the connection.
  private func readMore(deadline: Deadline) throws(Failure) -> Bool {
    while true {
      if lock.withLock({ closed }) { throw .lost("the connection was closed") }
      guard Self.wait(descriptor, for: Int16(POLLIN), until: deadline) else { throw .timedOut }
      var buffer = [UInt8](repeating: 0, count: 16 * 1024)
      let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
      if count > 0 {
        pending += buffer.prefix(count)
        return true
      }
      if count == 0 { return false }
      if errno == EAGAIN || errno == EINTR { continue }
      throw .lost("the connection broke: \(String(cString: strerror(errno)))")
    }
  }

  /// Waits until `descriptor` is ready for `events` (or broken); `false` when `deadline` passes.
  private static func wait(_ descriptor: Int32, for events: Int16, until deadline: Deadline) -> Bool {
    while true {
      let remaining = deadline.remainingMilliseconds
      guard remaining > 0 else { return false }
      var entry = pollfd(fd: descriptor, events: events, revents: 0)
      let ready = poll(&entry, 1, Int32(min(remaining, Int(Int32.max))))
      if ready > 0 { return true }
      if ready < 0, errno != EINTR { return true }  // let the read or write report the error
    }
  }

  static func find(_ needle: [UInt8], in bytes: [UInt8]) -> Int? {
    guard bytes.count >= needle.count else { return nil }
    for start in 0...(bytes.count - needle.count) where bytes[start] == needle[0] {
      if Array(bytes[start..<start + needle.count]) == needle { return start }
    }
    return nil
  }

  /// A point in time on the monotonic clock; `.never` for none.
  struct Deadline: Sendable {
    let uptimeNanoseconds: UInt64

    /// `seconds` from now.
    static func after(_ seconds: Double) -> Deadline {
      Deadline(uptimeNanoseconds: DispatchTime.now().uptimeNanoseconds + UInt64(max(0, seconds) * 1e9))
    }

    var remainingMilliseconds: Int {
      let now = DispatchTime.now().uptimeNanoseconds
      guard uptimeNanoseconds > now else { return 0 }
      return Int(min((uptimeNanoseconds - now + 999_999) / 1_000_000, UInt64(Int32.max)))
    }
  }
}

/// Decodes `Transfer-Encoding: chunked` as bytes arrive (RFC 9112 §7.1): chunk sizes in hex
/// (extensions ignored), data, CRLF; a zero-size chunk and the trailer section end it.
struct ChunkedDecoder {
  private enum State { case size, data(Int), dataEnd, trailer, done }
  private var state = State.size

  /// Takes what it can from `buffer`: the data decoded, and whether the body is complete.
  mutating func feed(_ buffer: inout [UInt8]) throws(HTTPConnection.Failure) -> (data: [UInt8], finished: Bool) {
    var data: [UInt8] = []
    while true {
      switch state {
      case .done:
        return (data, true)
      case .size:
        guard let end = HTTPConnection.find([13, 10], in: buffer) else {
          guard buffer.count < 1024 else { throw .lost("a bad chunk size line") }
          return (data, false)
        }
        let line = String(decoding: buffer[..<end], as: UTF8.self)
        buffer.removeFirst(end + 2)
        let digits = line.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        guard !digits.isEmpty, digits.count <= 8, let size = Int(digits, radix: 16) else { throw .lost("a bad chunk size: \(line.prefix(20))") }
        state = size == 0 ? .trailer : .data(size)
      case .data(let remaining):
        guard !buffer.isEmpty else { return (data, false) }
        let take = min(remaining, buffer.count)
        data += buffer.prefix(take)
        buffer.removeFirst(take)
        state = take == remaining ? .dataEnd : .data(remaining - take)
      case .dataEnd:
        guard buffer.count >= 2 else { return (data, false) }
        guard buffer[0] == 13, buffer[1] == 10 else { throw .lost("a chunk does not end with CRLF") }
        buffer.removeFirst(2)
        state = .size
      case .trailer:
        guard let end = HTTPConnection.find([13, 10], in: buffer) else { return (data, false) }
        buffer.removeFirst(end + 2)
        if end == 0 { state = .done }
      }
    }
  }
}

extension HTTPConnection {
  /// One whole exchange on a thread of its own (the socket blocks; the concurrency pool must
  /// not): connect, send, read the answer, all before `timeout` seconds pass.
  static func exchange(host: String, port: Int, method: String, path: String, headers: [(String, String)],
                       body: [UInt8], timeout: Double) async throws(Failure) -> (Head, [UInt8]) {
    let result: Result<(Head, [UInt8]), Failure> = await withCheckedContinuation { continuation in
      let thread = Thread {
        let deadline = Deadline.after(timeout)
        do throws(Failure) {
          let connection = try connect(host: host, port: port, deadline: deadline)
          try connection.send(method, path, host: hostHeader(host, port), headers: headers, body: body, deadline: deadline)
          let head = try connection.readHead(deadline: deadline)
          continuation.resume(returning: .success((head, try connection.readBody(head, deadline: deadline))))
        } catch {
          continuation.resume(returning: .failure(error))
        }
      }
      thread.stackSize = 1 << 20
      thread.start()
    }
    return try result.get()
  }

  /// `host:port` for the `Host` header (an IPv6 address in brackets).
  static func hostHeader(_ host: String, _ port: Int) -> String {
    (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
  }
}
