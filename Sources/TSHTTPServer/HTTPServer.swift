import CMicroHTTPD
import Foundation
import TSModel

/// A small HTTP/1.1 server over libmicrohttpd, for the bridge server (`tsapply bridge serve`)
/// and for tests that need a real listener (e.g. a webhook receiver on 127.0.0.1).
///
/// One thread per connection; each complete request (body read, at most
/// `Configuration.maxBodyBytes`) is passed to the handler, whose response is sent back.
/// A body over the limit is answered `413` as soon as its `Content-Length` is read (414 and 431
/// for a path or header fields over theirs), without calling the handler. Streaming responses
/// (`HTTPResponse.Body.stream`) are sent chunked as the handler writes them, and end as soon as
/// the client closes the connection. A peer cannot hold connections it sends no whole request
/// on: each has `Configuration.requestDeadline` seconds, and the oldest make room for new ones
/// (`ConnectionGuard`).
///
/// ```swift
/// let server = try HTTPServer.start(.init(host: "127.0.0.1", port: 0)) { request in
///   HTTPResponse(status: 200, contentType: "text/plain", bytes: Array("hello \(request.path)".utf8))
/// }
/// print(server.baseURL)   // http://127.0.0.1:40123 (a free port the system chose)
/// server.stop()           // closes streams, waits for running handlers, frees the port
/// ```
///
/// The handler runs as a Swift task while the connection's thread waits for it, so it may
/// `await` freely. IPv4 only; a host name is not resolved (give an address).
public final class HTTPServer: @unchecked Sendable {
  /// Where and how the server listens, and the limits that keep one peer from locking the
  /// others out (see `ConnectionGuard`).
  public struct Configuration: Sendable {
    /// IPv4 address to bind, e.g. `127.0.0.1` (loopback only) or `0.0.0.0` (every interface).
    public var host: String
    /// Port to bind; 0 lets the system choose a free one (read it from `HTTPServer.port`).
    public var port: UInt16
    /// Largest request body accepted, in bytes; a larger `Content-Length` is answered 413 as
    /// soon as the header fields are in (the body is not read); a chunked body that grows past
    /// it closes the connection.
    public var maxBodyBytes: Int
    /// Longest path and query, in bytes (percent-decoded); longer is answered 414.
    public var maxURLBytes: Int
    /// Most bytes of header fields (names and values); more is answered 431.
    public var maxHeaderBytes: Int
    /// Seconds a connection may send nothing while a response is being written before it is
    /// closed (0: never). Streaming responses stay open through their keep-alive bytes.
    public var idleTimeout: UInt32
    /// Seconds a connection has, from when it opens or its previous response ended, to send a
    /// whole request (header fields and body); then it is closed without an answer.
    public var requestDeadline: Double
    /// Most connections from one address still sending their request; a new one closes the
    /// oldest of them.
    public var waitingPerAddress: Int
    /// Most connections in all still sending their request; a new one closes the oldest.
    public var waitingLimit: Int
    /// Most connections open at once (waiting, being answered, streaming); more are refused.
    public var connectionLimit: UInt32
    /// The answer to a request refused before the handler (413, 414, 431) with a message; by
    /// default a JSON error `{"error": {"domain": "tsapply.http", "code": STATUS, "message": …}}`.
    public var refusal: (@Sendable (_ status: Int, _ message: String) -> HTTPResponse)?
    /// How long `start` waits for a port another process still listens on (one that is
    /// stopping: a monitor restarted at once), trying again with `Backoff` (from 100 ms, at
    /// most 1 s apart); zero, the default: refused at once (`HTTPServerError.portInUse`). A port
    /// held only by closed connections (TIME_WAIT) is taken at once: the listening socket
    /// reuses the address (libmicrohttpd sets SO_REUSEADDR).
    public var portWait: Duration = .zero

    /// A configuration; by default a free port on 127.0.0.1, 1 MiB bodies, 8 KiB paths, 16 KiB
    /// of header fields, 60 s idle, 10 s for a whole request, 16 connections sending their
    /// request per address and 64 in all, 256 connections.
    public init(host: String = "127.0.0.1", port: UInt16 = 0, maxBodyBytes: Int = 1 << 20,
                idleTimeout: UInt32 = 60, connectionLimit: UInt32 = 256) {
      self.host = host
      self.port = port
      self.maxBodyBytes = maxBodyBytes
      maxURLBytes = 8 << 10
      maxHeaderBytes = 16 << 10
      self.idleTimeout = idleTimeout
      requestDeadline = 10
      waitingPerAddress = 16
      waitingLimit = 64
      self.connectionLimit = connectionLimit
    }

    /// The refusal of `status` with `message`.
    func refuse(_ status: Int, _ message: String) -> HTTPResponse {
      if let refusal { return refusal(status, message) }
      let body = "{\"error\":{\"domain\":\"tsapply.http\",\"code\":\(status),\"message\":\"\(message)\"}}"
      return HTTPResponse(status: status, contentType: "application/json", bytes: Array(body.utf8))
    }

    /// Bytes libmicrohttpd may use per connection for the request line and header fields: room
    /// for the limits above, so that it is the handler's checks that refuse, in JSON.
    var headerMemory: Int { max(32 << 10, 2 * (maxURLBytes + maxHeaderBytes)) }
  }

  /// Turns a request into a response.
  public typealias Handler = @Sendable (HTTPRequest) async -> HTTPResponse

  /// The address bound.
  public let host: String
  /// The port listened on (the chosen one when 0 was asked for).
  public let port: UInt16
  /// `http://HOST:PORT`.
  public var baseURL: String { "http://\(host):\(port)" }

  let configuration: Configuration
  let handler: Handler
  let connections: ConnectionGuard
  private let lock = NSLock()
  private var daemon: OpaquePointer?
  private var streams: [ObjectIdentifier: HTTPStream] = [:]
  private var stopped = false

  private init(configuration: Configuration, handler: @escaping Handler, host: String, port: UInt16) {
    self.configuration = configuration
    self.handler = handler
    connections = ConnectionGuard(deadline: configuration.requestDeadline, perAddress: configuration.waitingPerAddress,
                                  total: configuration.waitingLimit)
    self.host = host
    self.port = port
  }

  /// Starts listening; waits up to `Configuration.portWait` for a port another process listens on.
  /// - Throws: `HTTPServerError.badAddress` for a host that is not an IPv4 address;
  ///   `.portInUse` when another process still listens on the port after that;
  ///   `.cannotListen` when the address cannot be bound otherwise (not on this machine).
  public static func start(_ configuration: Configuration = Configuration(), handler: @escaping Handler) throws(HTTPServerError) -> HTTPServer {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = configuration.port.bigEndian
    guard inet_pton(AF_INET, configuration.host, &address.sin_addr) == 1 else {
      throw .badAddress(configuration.host)
    }
    let box = Box()
    let context = Unmanaged.passRetained(box).toOpaque()
    // poll(2), not select(2): a process with many files open (a monitor of 1,000 watches holds
    // a lock for each) gets descriptors past select's 1,024, which libmicrohttpd would refuse.
    let flags = MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_THREAD_PER_CONNECTION.rawValue | MHD_USE_ITC.rawValue
      | MHD_USE_POLL.rawValue
    let deadline = ContinuousClock.now + configuration.portWait
    var backoff = Backoff(Backoff.Policy(initial: .milliseconds(100), maximum: .seconds(1)))
    var started: OpaquePointer?
    while started == nil {
      started = withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
          tshttp_start(flags, socketAddress, accessHandler, context, completedHandler, context, connectionHandler, context,
                       configuration.idleTimeout, configuration.connectionLimit, configuration.headerMemory)
        }
      }
      guard started == nil else { break }
      let inUse = Self.isInUse(address)
      let wait = backoff.next()
      guard inUse, ContinuousClock.now + wait <= deadline else {
        Unmanaged<Box>.fromOpaque(context).release()
        let bound = "\(configuration.host):\(configuration.port)"
        throw inUse ? .portInUse(bound) : .cannotListen(bound)
      }
      Thread.sleep(forTimeInterval: Backoff.seconds(wait))
    }
    guard let daemon = started else { throw .cannotListen("\(configuration.host):\(configuration.port)") }
    let server = HTTPServer(configuration: configuration, handler: handler, host: configuration.host,
                            port: configuration.port == 0 ? tshttp_port(daemon) : configuration.port)
    server.daemon = daemon
    server.context = context
    box.server = server
    return server
  }

  private var context: UnsafeMutableRawPointer?

  /// Whether another socket listens on `address` (binding it as libmicrohttpd does, with
  /// SO_REUSEADDR, fails with EADDRINUSE).
  private static func isInUse(_ address: sockaddr_in) -> Bool {
    let probe = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard probe >= 0 else { return false }
    defer { close(probe) }
    var on: Int32 = 1
    setsockopt(probe, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
    var copy = address
    let bound = withUnsafePointer(to: &copy) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(probe, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    return bound != 0 && errno == EADDRINUSE
  }

  /// Connections closed because they did not send a whole request in time, or to make room
  /// for newer ones (`Configuration.requestDeadline`, `waitingPerAddress`, `waitingLimit`).
  public var closedWaitingConnections: Int { connections.closedConnections }

  /// Stops listening: closes open streams, waits for running handlers to answer, frees the
  /// port. Calling it again does nothing.
  public func stop() {
    // `stopped` first: a connection thread waiting for its handler stops waiting (`respond`).
    let (daemon, open, context) = lock.withLock { () -> (OpaquePointer?, [HTTPStream], UnsafeMutableRawPointer?) in
      defer {
        stopped = true
        self.daemon = nil
        self.context = nil
        streams = [:]
      }
      return (self.daemon, Array(streams.values), self.context)
    }
    open.forEach { $0.close() }
    if let daemon { MHD_stop_daemon(daemon) }
    connections.stop()
    if let context {
      let box = Unmanaged<Box>.fromOpaque(context)
      box.takeUnretainedValue().server = nil
      box.release()
    }
  }

  deinit { stop() }

  // MARK: Streams

  func track(_ stream: HTTPStream) -> Bool {
    lock.withLock {
      guard !stopped else { return false }
      streams[ObjectIdentifier(stream)] = stream
      return true
    }
  }

  func untrack(_ stream: HTTPStream) {
    _ = lock.withLock { streams.removeValue(forKey: ObjectIdentifier(stream)) }
  }

  /// Runs the handler for `request` and waits for it (on a connection thread) — until the
  /// server stops: then the request is answered 503 without waiting for the handler. `stop()`
  /// waits for every connection thread, often on one of the few threads of Swift's cooperative
  /// pool, which the handler's task may need to finish: two servers stopped at once on a
  /// two-core machine, each with a request under way, waited for each other for ever.
  func respond(_ request: HTTPRequest) -> HTTPResponse {
    let result = ResponseSlot()
    let semaphore = DispatchSemaphore(value: 0)
    let handler = self.handler
    Task.detached {
      result.response = await handler(request)
      semaphore.signal()
    }
    while semaphore.wait(timeout: .now() + .milliseconds(50)) == .timedOut {
      if lock.withLock({ stopped }) { return HTTPResponse(status: 503) }
    }
    return result.response ?? HTTPResponse(status: 500)
  }
}

/// Why the server did not start.
public enum HTTPServerError: Error, Hashable, Sendable, CustomStringConvertible {
  /// The host is not an IPv4 address.
  case badAddress(String)
  /// The address could not be bound (`HOST:PORT`): not on this machine, or not allowed.
  case cannotListen(String)
  /// Another process listens on the port (`HOST:PORT`), still after `Configuration.portWait`.
  case portInUse(String)

  public var description: String {
    switch self {
    case .badAddress(let host): "'\(host)' is not an IPv4 address (e.g. 127.0.0.1)"
    case .cannotListen(let address): "cannot listen on \(address): the address is not on this machine, or the port is not allowed"
    case .portInUse(let address): "cannot listen on \(address): the port is in use (another process listens on it)"
    }
  }
}

// MARK: libmicrohttpd callbacks

/// Holds the server weakly for the C callbacks (the daemon's context pointer).
private final class Box: @unchecked Sendable {
  weak var server: HTTPServer?
}

private final class ResponseSlot: @unchecked Sendable {
  var response: HTTPResponse?
}

/// One request being read: kept in libmicrohttpd's per-request pointer until it completes.
private final class PendingRequest {
  var method: String
  var url: String
  var body: [UInt8] = []
  init(method: String, url: String) {
    self.method = method
    self.url = url
  }
}

/// What the content reader needs: the stream and the server tracking it.
private final class StreamContext {
  let stream: HTTPStream
  weak var server: HTTPServer?
  /// The connection's socket, watched for the client going away while the stream is quiet.
  let socket: Int32
  init(stream: HTTPStream, server: HTTPServer, socket: Int32) {
    self.stream = stream
    self.server = server
    self.socket = socket
  }
}

private func accessHandler(_ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?, _ url: UnsafePointer<CChar>?,
                           _ method: UnsafePointer<CChar>?, _ version: UnsafePointer<CChar>?,
                           _ uploadData: UnsafePointer<CChar>?, _ uploadSize: UnsafeMutablePointer<Int>?,
                           _ requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) -> MHD_Result {
  guard let cls, let connection, let uploadSize, let requestContext,
        let server = Unmanaged<Box>.fromOpaque(cls).takeUnretainedValue().server else { return .NO }
  let configuration = server.configuration
  // The first call for a request: no context yet, or the URI log callback's mark of a `%00`.
  guard let existing = requestContext.pointee, tshttp_uri_holds_nul(existing) == 0 else {
    let holdsNUL = requestContext.pointee != nil
    let pending = PendingRequest(method: method.map { String(cString: $0) } ?? "GET", url: url.map { String(cString: $0) } ?? "/")
    requestContext.pointee = Unmanaged.passRetained(pending).toOpaque()
    // Refusals the header fields already decide are sent at once, without reading a body.
    let query = values(connection, .GET_ARGUMENT_KIND, lowercased: false)
    let headers = values(connection, .HEADER_KIND, lowercased: true)
    let refusal: HTTPResponse?
    if holdsNUL {
      // Decoded, `%00` would end the path or query where it stands: the request is not the one sent.
      refusal = configuration.refuse(400, "the path or query holds %00 (a NUL character), which no path or query may hold")
    } else if pending.url.utf8.count + query.reduce(0, { $0 + $1.key.utf8.count + $1.value.utf8.count + 2 }) > configuration.maxURLBytes {
      refusal = configuration.refuse(414, "the path and query are over \(configuration.maxURLBytes) bytes")
    } else if headers.reduce(0, { $0 + $1.key.utf8.count + $1.value.utf8.count + 4 }) > configuration.maxHeaderBytes {
      refusal = configuration.refuse(431, "the header fields are over \(configuration.maxHeaderBytes) bytes")
    } else if let length = headers["content-length"].flatMap(Int.init), length > configuration.maxBodyBytes {
      refusal = configuration.refuse(413, "the request body is over \(configuration.maxBodyBytes) bytes")
    } else {
      refusal = nil
    }
    guard let refusal else { return .YES }
    server.connections.answering(UInt(bitPattern: connection))
    return send(refusal, on: connection, server: server)
  }
  let pending = Unmanaged<PendingRequest>.fromOpaque(existing).takeUnretainedValue()
  if uploadSize.pointee > 0 {
    // A chunked body past the limit: libmicrohttpd cannot answer in the middle of a body, so
    // the connection is closed rather than the rest read.
    guard pending.body.count + uploadSize.pointee <= configuration.maxBodyBytes, let uploadData else { return .NO }
    uploadData.withMemoryRebound(to: UInt8.self, capacity: uploadSize.pointee) { bytes in
      pending.body.append(contentsOf: UnsafeBufferPointer(start: bytes, count: uploadSize.pointee))
    }
    uploadSize.pointee = 0
    return .YES
  }
  server.connections.answering(UInt(bitPattern: connection))
  let response = server.respond(HTTPRequest(method: pending.method, path: pending.url,
                                            query: values(connection, .GET_ARGUMENT_KIND, lowercased: false),
                                            headers: values(connection, .HEADER_KIND, lowercased: true),
                                            body: pending.body))
  return send(response, on: connection, server: server)
}

private func connectionHandler(_ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
                               _ socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                               _ code: MHD_ConnectionNotificationCode) {
  guard let cls, let connection, let server = Unmanaged<Box>.fromOpaque(cls).takeUnretainedValue().server else { return }
  if code.rawValue == 0 {  // MHD_CONNECTION_NOTIFY_STARTED
    server.connections.opened(UInt(bitPattern: connection), socket: tshttp_connection_fd(connection),
                              address: tshttp_connection_ipv4(connection))
  } else {
    server.connections.closed(UInt(bitPattern: connection))
  }
}

private func send(_ response: HTTPResponse, on connection: OpaquePointer, server: HTTPServer) -> MHD_Result {
  let mhdResponse: OpaquePointer?
  switch response.body {
  case .dropConnection:
    // Returning MHD_NO alone may leave the socket open until the idle timeout: shut it down so
    // the client sees the connection drop at once.
    let socket = tshttp_connection_fd(connection)
    if socket >= 0 { shutdown(socket, Int32(SHUT_RDWR)) }
    return .NO
  case .bytes(let bytes):
    mhdResponse = bytes.withUnsafeBufferPointer { buffer in
      MHD_create_response_from_buffer(buffer.count, UnsafeMutableRawPointer(mutating: buffer.baseAddress),
                                      .RESPMEM_MUST_COPY)
    }
  case .stream(let stream):
    guard server.track(stream) else {
      stream.close()
      return .NO
    }
    let context = Unmanaged.passRetained(StreamContext(stream: stream, server: server, socket: tshttp_connection_fd(connection))).toOpaque()
    mhdResponse = MHD_create_response_from_callback(UInt64.max, 4096, streamReader, context, streamFreed)
  }
  guard let mhdResponse else { return .NO }
  for (name, value) in response.headers {
    _ = MHD_add_response_header(mhdResponse, name, value)
  }
  if case .bytes = response.body, response.status >= 400 {
    // A refused request ends its connection (no request pipelined behind it is read), and the
    // connection counts as waiting again (`ConnectionGuard.refused`): a peer pipelining
    // thousands of refused requests on hundreds of connections and never reading the answers
    // held every slot "being answered" and locked the paired clients out (fresh-eyes finding).
    _ = MHD_add_response_header(mhdResponse, "Connection", "close")
    server.connections.refused(UInt(bitPattern: connection))
  }
  let result = MHD_queue_response(connection, UInt32(clamping: response.status), mhdResponse)
  MHD_destroy_response(mhdResponse)
  return result
}

private func streamReader(_ cls: UnsafeMutableRawPointer?, _ position: UInt64, _ buffer: UnsafeMutablePointer<CChar>?,
                          _ max: Int) -> Int {
  guard let cls, let buffer else { return -2 }
  let context = Unmanaged<StreamContext>.fromOpaque(cls).takeUnretainedValue()
  guard let chunk = context.stream.next(max: max, watching: context.socket) else { return -1 }
  chunk.withUnsafeBytes { bytes in
    UnsafeMutableRawPointer(buffer).copyMemory(from: bytes.baseAddress!, byteCount: chunk.count)
  }
  return chunk.count
}

private func streamFreed(_ cls: UnsafeMutableRawPointer?) {
  guard let cls else { return }
  let context = Unmanaged<StreamContext>.fromOpaque(cls).takeRetainedValue()
  context.stream.close()
  context.server?.untrack(context.stream)
}

private func completedHandler(_ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
                              _ requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                              _ reason: MHD_RequestTerminationCode) {
  if let cls, let connection, let server = Unmanaged<Box>.fromOpaque(cls).takeUnretainedValue().server {
    server.connections.answered(UInt(bitPattern: connection))
  }
  // A request that ended before its first call (libmicrohttpd refused it itself) may still hold the URI log callback's mark.
  guard let requestContext, let pending = requestContext.pointee, tshttp_uri_holds_nul(pending) == 0 else {
    requestContext?.pointee = nil
    return
  }
  Unmanaged<PendingRequest>.fromOpaque(pending).release()
  requestContext.pointee = nil
}

private final class ValueCollector {
  var fields: [String: String] = [:]
  let lowercased: Bool
  init(lowercased: Bool) { self.lowercased = lowercased }
}

/// Every value of `kind` (headers, query arguments) on `connection`; a name given more than once
/// holds every value in order, joined by ", " (RFC 9110 §5.3), so a repeated field is never read
/// as one of its values alone (two `TSApply-Protocol` headers are not the last one).
private func values(_ connection: OpaquePointer, _ kind: MHD_ValueKind, lowercased: Bool) -> [String: String] {
  let collector = ValueCollector(lowercased: lowercased)
  let context = Unmanaged.passUnretained(collector).toOpaque()
  _ = MHD_get_connection_values(connection, kind, { cls, _, key, value in
    guard let cls, let key else { return .YES }
    let collector = Unmanaged<ValueCollector>.fromOpaque(cls).takeUnretainedValue()
    let name = String(cString: key)
    let field = collector.lowercased ? name.lowercased() : name
    let text = value.map { String(cString: $0) } ?? ""
    collector.fields[field] = collector.fields[field].map { $0 + ", " + text } ?? text
    return .YES
  }, context)
  return collector.fields
}
