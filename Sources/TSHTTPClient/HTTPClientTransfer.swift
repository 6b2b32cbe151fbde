import CCurl
import Foundation

/// One request under way in `HTTPClient`: its libcurl easy handle, the answer as it comes, and
/// its deadlines. Everything but `cancel()` runs on the client's thread.
public final class HTTPClientTransfer: @unchecked Sendable {
  let request: HTTPClientRequest
  /// Seconds without a byte after the head that end a stream; `nil` for a whole exchange.
  private let idle: Double?
  private let receive: (@Sendable (HTTPClientPiece) -> Bool)?
  private var completion: (@Sendable (Result<HTTPClientResponse, HTTPClientError>) -> Void)?

  private(set) var easy: UnsafeMutableRawPointer?
  private var headerList: UnsafeMutablePointer<curl_slist>?
  private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)

  private var status = 0
  private var headers: [String: String] = [:]
  private var headComplete = false
  private var body: [UInt8] = []
  private var bodyBytes = 0
  /// Times the request went out on a connection (libcurl's pre-request callback); `nil` when
  /// this libcurl cannot count them (before 7.80.0).
  private var sends: Int?
  /// Why a callback stopped the transfer: `nil` (it did not), `.success` (the receiver had
  /// enough), or the failure to report.
  private var stopped: Result<Void, HTTPClientError>?
  /// The uptime (ns) by which the head, or for a stream after it the next byte, must come.
  private(set) var deadline = UInt64.max

  private let cancelLock = NSLock()
  private var cancelled = false

  init(request: HTTPClientRequest, idle: Double?, receive: (@Sendable (HTTPClientPiece) -> Bool)?,
       completion: @escaping @Sendable (Result<HTTPClientResponse, HTTPClientError>) -> Void) {
    self.request = request
    self.idle = idle
    self.receive = receive
    self.completion = completion
    errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
  }

  deinit {
    cleanup()
    errorBuffer.deallocate()
  }

  /// Ends the transfer from any thread; its completion reports `.lost("cancelled")` unless it
  /// had already finished.
  public func cancel() {
    cancelLock.withLock { cancelled = true }
    HTTPClient.shared.wake()
  }

  var isCancelled: Bool { cancelLock.withLock { cancelled } }

  /// Makes the easy handle for `request`; the failure when libcurl refuses an option.
  func prepare() -> HTTPClientError? {
    guard let handle = curl_easy_init() else { return .notSent("libcurl could not make a transfer") }
    easy = handle
    let context = Unmanaged.passUnretained(self).toOpaque()
    let milliseconds = max(1, Int(request.timeout * 1000))
    var codes = [
      tscurl_set_string(handle, CURLOPT_URL, request.url),
      tscurl_set_protocols(handle, request.schemes.rawValue),
      tscurl_set_long(handle, CURLOPT_NOSIGNAL, 1),
      tscurl_set_long(handle, CURLOPT_PATH_AS_IS, 1),
      tscurl_set_long(handle, CURLOPT_FOLLOWLOCATION, 0),
      tscurl_set_long(handle, CURLOPT_CONNECTTIMEOUT_MS, milliseconds),
      tscurl_set_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer),
      tscurl_set_callback(handle, CURLOPT_HEADERFUNCTION, headerCallback),
      tscurl_set_pointer(handle, CURLOPT_HEADERDATA, context),
      tscurl_set_callback(handle, CURLOPT_WRITEFUNCTION, writeCallback),
      tscurl_set_pointer(handle, CURLOPT_WRITEDATA, context),
    ]
    if idle == nil {
      codes.append(tscurl_set_long(handle, CURLOPT_TIMEOUT_MS, milliseconds))
    } else {
      deadline = DispatchTime.now().uptimeNanoseconds + UInt64(milliseconds) * 1_000_000
    }
    // A request sent again is told apart by counting sends; a libcurl that cannot count them
    // never sends a request on a kept-alive connection, where it would resend it unseen.
    sends = tscurl_set_prereq(handle, prereqCallback, context) == CURLE_OK ? 0 : nil
    if !request.reuseConnection || sends == nil {
      codes.append(tscurl_set_long(handle, CURLOPT_FRESH_CONNECT, 1))
    } else {
      codes.append(tscurl_set_long(handle, CURLOPT_MAXAGE_CONN, HTTPClient.keptAliveSeconds))
    }
    switch request.method {
    case "GET":
      codes.append(tscurl_set_long(handle, CURLOPT_HTTPGET, 1))
    case "HEAD":
      codes.append(tscurl_set_long(handle, CURLOPT_NOBODY, 1))
    default:
      codes.append(tscurl_set_offset(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.count)))
      codes.append(request.body.withUnsafeBytes { tscurl_set_pointer(handle, CURLOPT_COPYPOSTFIELDS, $0.baseAddress ?? UnsafeRawPointer(errorBuffer)) })
      if request.method != "POST" { codes.append(tscurl_set_string(handle, CURLOPT_CUSTOMREQUEST, request.method)) }
    }
    // No `Expect: 100-continue` wait before a body; no form content type unless given.
    var fields = request.headers.map { "\($0.0): \($0.1)" } + ["Expect:"]
    if request.method != "GET", !request.headers.contains(where: { $0.0.lowercased() == "content-type" }) { fields.append("Content-Type:") }
    for field in fields { headerList = curl_slist_append(headerList, field) }
    codes.append(tscurl_set_pointer(handle, CURLOPT_HTTPHEADER, headerList))
    if let failed = codes.first(where: { $0 != CURLE_OK }) {
      return .notSent("libcurl refused an option: \(String(cString: curl_easy_strerror(failed)))")
    }
    return nil
  }

  /// The failure of a stream whose deadline has passed at `now`, or `nil`.
  func expired(at now: UInt64) -> HTTPClientError? { now >= deadline ? .timedOut : nil }

  /// Finishes with libcurl's result `code`.
  func finish(_ code: CURLcode) {
    if let stopped {
      switch stopped {
      case .success: finish(.success(response))
      case .failure(let error): finish(.failure(error))
      }
      return
    }
    guard code == CURLE_OK else {
      finish(.failure(failure(code)))
      return
    }
    guard headComplete else {
      finish(.failure(.lost("the connection closed before an answer")))
      return
    }
    finish(.success(response))
  }

  /// Calls the completion (once) and frees the handle.
  func finish(_ result: Result<HTTPClientResponse, HTTPClientError>) {
    cleanup()
    guard let completion else { return }
    self.completion = nil
    completion(result)
  }

  private var head: HTTPClientHead { HTTPClientHead(status: status, headers: headers) }

  /// The answer so far, with the connections libcurl opened for it (call before `cleanup`).
  private var response: HTTPClientResponse {
    var connects = 0
    if let easy { tscurl_get_long(easy, CURLINFO_NUM_CONNECTS, &connects) }
    return HTTPClientResponse(head: head, body: body, newConnections: connects, sends: max(1, sends ?? 1))
  }

  private func cleanup() {
    if let easy { curl_easy_cleanup(easy) }
    easy = nil
    if let headerList { curl_slist_free_all(headerList) }
    headerList = nil
  }

  /// What libcurl's failure `code` means for the caller: whether the request may have left.
  private func failure(_ code: CURLcode) -> HTTPClientError {
    var detail = String(cString: errorBuffer)
    if detail.isEmpty { detail = String(cString: curl_easy_strerror(code)) }
    var issued: Int = 0
    if let easy { tscurl_get_long(easy, CURLINFO_REQUEST_SIZE, &issued) }
    if issued == 0 {
      // Nothing of the request was written to a connection.
      if code == CURLE_OPERATION_TIMEDOUT { return .notSent("no connection within \(Self.seconds(request.timeout)) s") }
      return .notSent(detail)
    }
    if code == CURLE_OPERATION_TIMEDOUT { return .timedOut }
    return .lost(detail)
  }

  static func seconds(_ value: Double) -> String { value == value.rounded() ? String(Int(value)) : String(value) }

  // MARK: libcurl's callbacks

  /// The request is about to go out on a connection.
  fileprivate func sending() { sends = (sends ?? 0) + 1 }

  /// One header line (libcurl calls once per line, status line and final blank line included).
  fileprivate func header(_ line: UnsafeRawBufferPointer) -> Bool {
    var text = String(decoding: line, as: UTF8.self)
    while let last = text.last, last.isNewline { text.removeLast() }  // "\r\n" is one Character
    if text.hasPrefix("HTTP/") {
      let parts = text.split(separator: " ", maxSplits: 2)
      status = parts.count >= 2 ? Int(parts[1]) ?? 0 : 0
      headers = [:]
      headComplete = false
      return true
    }
    if text.isEmpty {
      // The blank line after an interim (1xx) head is followed by another head.
      guard !(100...199).contains(status) else { return true }
      headComplete = true
      if let idle { deadline = DispatchTime.now().uptimeNanoseconds + UInt64(idle * 1e9) }
      if let receive, !receive(.head(head)) {
        stopped = .success(())
        return false
      }
      return true
    }
    if let colon = text.firstIndex(of: ":") {
      headers[text[..<colon].lowercased()] = text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
    return true
  }

  /// A piece of the body (after any chunked framing is removed).
  fileprivate func data(_ bytes: UnsafeRawBufferPointer) -> Bool {
    bodyBytes += bytes.count
    if let idle { deadline = DispatchTime.now().uptimeNanoseconds + UInt64(idle * 1e9) }
    if let receive {
      guard receive(.data(Array(bytes))) else {
        stopped = .success(())
        return false
      }
      return true
    }
    guard bodyBytes <= request.maxBodyBytes else {
      stopped = .failure(.lost("the answer is over \(request.maxBodyBytes) bytes"))
      return false
    }
    body.append(contentsOf: bytes)
    return true
  }
}

/// CURLOPT_HEADERFUNCTION: hands the line to the transfer in `context`; 0 stops the transfer.
private let headerCallback: tscurl_data_callback = { data, size, count, context in
  guard let context else { return 0 }
  let transfer = Unmanaged<HTTPClientTransfer>.fromOpaque(context).takeUnretainedValue()
  return transfer.header(UnsafeRawBufferPointer(start: data, count: size * count)) ? size * count : 0
}

/// CURLOPT_WRITEFUNCTION: hands the body piece to the transfer in `context`; 0 stops the transfer.
private let writeCallback: tscurl_data_callback = { data, size, count, context in
  guard let context else { return 0 }
  let transfer = Unmanaged<HTTPClientTransfer>.fromOpaque(context).takeUnretainedValue()
  return transfer.data(UnsafeRawBufferPointer(start: data, count: size * count)) ? size * count : 0
}

/// CURLOPT_PREREQFUNCTION: counts a send of the transfer in `context`; never stops it.
private let prereqCallback: tscurl_prereq_callback = { context, _, _, _, _ in
  guard let context else { return 0 }
  Unmanaged<HTTPClientTransfer>.fromOpaque(context).takeUnretainedValue().sending()
  return 0
}
