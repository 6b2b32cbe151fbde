import CCurl
import Foundation

/// The project's one HTTP client, over libcurl's multi interface (Debian `libcurl4-openssl-dev`,
/// Homebrew `curl`, through the `CCurl` system-library target): bridge calls and their event
/// streams (`TSBridgeClient`) and the monitor's webhooks (`TSMonitor`) all go through
/// `HTTPClient.shared`.
///
/// One thread per process drives every transfer and waits in `curl_multi_poll` (woken by
/// `curl_multi_wakeup` when a transfer is added or cancelled), so waiting costs no CPU: not for
/// an answer that is slow to come, not for a quiet event stream, not when nothing is under way.
/// (URLSession on Linux drove libcurl with timers that fired continuously while it waited: a
/// whole core, docs/performance.md "The bridge client waits without using the CPU".)
///
/// libcurl does the HTTP: keep-alive (connections are kept in one pool and reused by requests
/// that allow it, for at most `keptAliveSeconds` of idleness), `Content-Length` and chunked
/// bodies, timeouts, TLS for `https`. Redirects are never followed. Only `http` (and `https`
/// where a request allows it) is ever spoken.
///
/// libcurl sends a request again, once, with the same bytes, on a new connection when a
/// kept-alive one closes under it before any answer (the server closed it as the request left);
/// `HTTPClientResponse.sends` says when it did, so a caller whose server refuses a second copy
/// (a bridge: each sealed request is accepted once) can tell that refusal apart.
public final class HTTPClient: @unchecked Sendable {
  /// The client of this process.
  public static let shared = HTTPClient()

  /// Seconds a kept-alive connection may have been idle and still be reused: under the
  /// reference bridge's 10 s deadline for a connection's next request (docs/bridge-protocol.md
  /// "Limits and timeouts"), so it is not the server closing it that a request races.
  public static let keptAliveSeconds = 5

  private let multi: UnsafeMutableRawPointer
  private let lock = NSLock()
  /// Transfers handed over by other threads, not yet added to `multi`.
  private var queued: [HTTPClientTransfer] = []

  private init() {
    curl_global_init(Int(CURL_GLOBAL_DEFAULT))
    multi = curl_multi_init()!
    let thread = Thread { [self] in run() }
    thread.name = "tsapply.http-client"
    thread.stackSize = 1 << 20
    thread.start()
  }

  /// Sends `request` and returns the whole answer (any status: a 404 is an answer).
  /// - Throws: `HTTPClientError`: `.notSent` when no connection could be made, `.timedOut`
  ///   when `request.timeout` passed after the request may have left, `.lost` when the
  ///   connection broke, the answer was not HTTP or was over `request.maxBodyBytes`, or the
  ///   calling task was cancelled.
  public func send(_ request: HTTPClientRequest) async throws(HTTPClientError) -> HTTPClientResponse {
    let box = TransferBox()
    let result: Result<HTTPClientResponse, HTTPClientError> = await withTaskCancellationHandler {
      await withCheckedContinuation { continuation in
        let transfer = HTTPClientTransfer(request: request, idle: nil, receive: nil) { result in
          continuation.resume(returning: result)
        }
        box.set(transfer)
        submit(transfer)
      }
    } onCancel: {
      box.cancel()
    }
    return try result.get()
  }

  /// Sends `request` and hands its answer to `receive` as it comes: the head first, then each
  /// piece of the body as it arrives (a stream: Server-Sent Events), until the body ends or
  /// `receive` returns `false`. `request.timeout` bounds the wait for the head; after it, the
  /// transfer ends with `.timedOut` when `idle` seconds pass without a byte. `completion` is
  /// called once, on the client's thread, with `nil` when the body ended or `receive` stopped
  /// it, else the failure (`.lost("cancelled")` after `cancel()`).
  @discardableResult
  public func stream(_ request: HTTPClientRequest, idle: Double, receive: @escaping @Sendable (HTTPClientPiece) -> Bool,
                     completion: @escaping @Sendable (HTTPClientError?) -> Void) -> HTTPClientTransfer {
    let transfer = HTTPClientTransfer(request: request, idle: idle, receive: receive) { result in
      switch result {
      case .success: completion(nil)
      case .failure(let error): completion(error)
      }
    }
    submit(transfer)
    return transfer
  }

  func submit(_ transfer: HTTPClientTransfer) {
    lock.withLock { queued.append(transfer) }
    curl_multi_wakeup(multi)
  }

  /// Wakes the client's thread (a transfer was cancelled).
  func wake() { curl_multi_wakeup(multi) }

  /// The client's thread: adds queued transfers, lets libcurl work, finishes what is done,
  /// cancelled or past its own deadlines, and waits in `curl_multi_poll` until something
  /// happens or the nearest deadline (libcurl's or a stream's).
  private func run() {
    var active: [HTTPClientTransfer] = []
    while true {
      for transfer in lock.withLock({ () -> [HTTPClientTransfer] in defer { queued = [] }; return queued }) {
        if transfer.isCancelled {
          transfer.finish(.failure(.lost("cancelled")))
        } else if let error = transfer.prepare() {
          transfer.finish(.failure(error))
        } else if curl_multi_add_handle(multi, transfer.easy) != CURLM_OK {
          transfer.finish(.failure(.notSent("libcurl refused the transfer")))
        } else {
          active.append(transfer)
        }
      }
      var running: Int32 = 0
      curl_multi_perform(multi, &running)
      var left: Int32 = 0
      while let message = curl_multi_info_read(multi, &left) {
        guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
              let index = active.firstIndex(where: { $0.easy == easy }) else { continue }
        let code = tscurl_message_result(message)
        let transfer = active.remove(at: index)
        curl_multi_remove_handle(multi, easy)
        transfer.finish(code)
      }
      let now = DispatchTime.now().uptimeNanoseconds
      var nearest = UInt64.max
      active.removeAll { transfer in
        if let failure = transfer.isCancelled ? .lost("cancelled") : transfer.expired(at: now) {
          curl_multi_remove_handle(multi, transfer.easy)
          transfer.finish(.failure(failure))
          return true
        }
        nearest = min(nearest, transfer.deadline)
        return false
      }
      // At most an hour (libcurl shortens it to its own next timeout).
      let wait: Int32 = nearest == .max ? 3_600_000 : Int32(min(3_600_000, nearest > now ? (nearest - now) / 1_000_000 + 1 : 0))
      curl_multi_poll(multi, nil, 0, wait, nil)
    }
  }
}

/// A request for `HTTPClient`.
public struct HTTPClientRequest: Sendable {
  /// Which URL schemes a request may use.
  public enum Schemes: String, Sendable {
    case http = "http"
    case httpAndHTTPS = "http,https"
  }

  /// `GET`, `POST`, `DELETE`, …; every method but `GET` and `HEAD` sends `body` with its `Content-Length` (0 too).
  public var method: String
  /// The absolute URL, `http://HOST:PORT/PATH` (the path sent as it is, no dot-segment removal).
  public var url: String
  /// Header fields sent besides `Host` and `Content-Length` (libcurl's `Accept: */*` unless given).
  public var headers: [(String, String)]
  public var body: [UInt8]
  /// Seconds for the whole exchange, connecting included; for `stream`, until the answer's head.
  public var timeout: Double
  /// `false`: send on a new connection, never on a kept-alive one. `true`: a kept-alive one
  /// may be used, and libcurl may then send the request twice (`HTTPClientResponse.sends`).
  public var reuseConnection: Bool
  /// The most body bytes accepted; a longer answer ends as `.lost`.
  public var maxBodyBytes: Int
  public var schemes: Schemes

  public init(method: String, url: String, headers: [(String, String)] = [], body: [UInt8] = [], timeout: Double,
              reuseConnection: Bool = true, maxBodyBytes: Int = 16 * 1024 * 1024, schemes: Schemes = .http) {
    self.method = method
    self.url = url
    self.headers = headers
    self.body = body
    self.timeout = timeout
    self.reuseConnection = reuseConnection
    self.maxBodyBytes = maxBodyBytes
    self.schemes = schemes
  }

  /// `http://HOST:PORT` + `path` (an IPv6 address in brackets).
  public static func url(host: String, port: Int, path: String) -> String {
    "http://" + authority(host: host, port: port) + path
  }

  /// `HOST:PORT`, an IPv6 address in brackets (as in a `Host` header).
  public static func authority(host: String, port: Int) -> String {
    (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
  }
}

/// An answer's status line and header fields.
public struct HTTPClientHead: Sendable, Equatable {
  public var status: Int
  /// Header fields by lower-case name (the last of repeated ones), values without surrounding spaces.
  public var headers: [String: String]

  public init(status: Int, headers: [String: String]) {
    self.status = status
    self.headers = headers
  }
}

/// A whole answer.
public struct HTTPClientResponse: Sendable {
  public var head: HTTPClientHead
  public var body: [UInt8]
  /// Connections opened for this exchange: 0 when it went over a kept-alive one.
  public var newConnections: Int
  /// Times the request went out: 2 or more when a kept-alive connection closed under it before
  /// any answer and libcurl sent the same bytes again on a new one (the answer is the last copy's).
  public var sends: Int
  public var status: Int { head.status }
}

/// What a stream hands its receiver: the head once, then body pieces as they arrive.
public enum HTTPClientPiece: Sendable {
  case head(HTTPClientHead)
  case data([UInt8])
}

/// Why an exchange did not complete.
public enum HTTPClientError: Error, Equatable, Sendable, CustomStringConvertible {
  /// No connection could be made: the request never left.
  case notSent(String)
  /// The deadline passed after the request was (or may have been) sent.
  case timedOut
  /// The connection broke, the answer was not HTTP or too large, or the transfer was
  /// cancelled, after the request was (or may have been) sent.
  case lost(String)

  public var description: String {
    switch self {
    case .notSent(let reason): "not sent: \(reason)"
    case .timedOut: "no answer within the timeout"
    case .lost(let reason): "lost: \(reason)"
    }
  }
}

/// Holds a transfer for a task's cancellation handler, which may run before it exists.
private final class TransferBox: @unchecked Sendable {
  private let lock = NSLock()
  private var transfer: HTTPClientTransfer?
  private var cancelled = false

  func set(_ transfer: HTTPClientTransfer) {
    let cancel = lock.withLock { () -> Bool in
      self.transfer = transfer
      return cancelled
    }
    if cancel { transfer.cancel() }
  }

  func cancel() {
    let transfer = lock.withLock { () -> HTTPClientTransfer? in
      cancelled = true
      return self.transfer
    }
    transfer?.cancel()
  }
}
