/// One HTTP request as the server received it, body complete.
public struct HTTPRequest: Sendable {
  /// The method, as sent (`GET`, `POST`, `DELETE`, …).
  public var method: String
  /// The path without the query, percent-decoded (`/v1/watches/AA:BB:CC:DD:EE:FF`).
  public var path: String
  /// The query's arguments, decoded (`?count=2` → `["count": "2"]`); a repeated name keeps the last value.
  public var query: [String: String]
  /// Header fields, names in lower case (`content-type`); a repeated field keeps the last value.
  public var headers: [String: String]
  /// The body; empty when none was sent.
  public var body: [UInt8]

  /// A request; the server builds these, tests and other listeners may too.
  public init(method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:], body: [UInt8] = []) {
    self.method = method
    self.path = path
    self.query = query
    self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { _, last in last })
    self.body = body
  }

  /// The value of header `name` (any letter case), if sent.
  public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// What the handler answers.
public struct HTTPResponse: Sendable {
  /// The status code, e.g. 200.
  public var status: Int
  /// Header fields to send (`Content-Length` and `Transfer-Encoding` are set by the server).
  public var headers: [String: String]
  /// The body.
  public var body: Body

  /// How the body is sent.
  public enum Body: Sendable {
    /// These bytes, with a `Content-Length`.
    case bytes([UInt8])
    /// Bytes written to the stream as they come, chunked, until the stream finishes, the
    /// client goes away or the server stops (Server-Sent Events, long downloads).
    case stream(HTTPStream)
    /// No response at all: the connection is closed as if the server died after reading the
    /// request (fault injection: "the response was lost").
    case dropConnection
  }

  /// A response of `status` with `headers` and `body` (empty by default).
  public init(status: Int, headers: [String: String] = [:], body: Body = .bytes([])) {
    self.status = status
    self.headers = headers
    self.body = body
  }

  /// A response of `status` whose body is `bytes`, typed `contentType`.
  public init(status: Int, contentType: String, bytes: [UInt8], headers: [String: String] = [:]) {
    var all = headers
    all["Content-Type"] = contentType
    self.init(status: status, headers: all, body: .bytes(bytes))
  }
}
