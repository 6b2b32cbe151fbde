import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TSBridge
import TSModel

/// The client side of `GET /v1/watches/{id}/events`: one Server-Sent Events stream feeding the
/// device's listeners. Each event is opened with the pairing key (bound to this stream's
/// request and its id) before it reaches a handler; one that does not open is dropped. When the
/// stream ends or breaks it reconnects (after 1 s, then up to 10 s between tries) with
/// `Last-Event-ID`, so no event is lost while the bridge still holds it. Thread-safe.
final class BridgeEventStream: NSObject, URLSessionDataDelegate, @unchecked Sendable {
  enum Handler {
    case contacts(@Sendable (Result<[Contact], DeviceError>) -> Void)
    case emergency(@Sendable (Result<[Contact], DeviceError>) -> Void)
    case sos(@Sendable (DeviceError?) -> Void)

    var listener: ListenerRefusal.Listener {
      switch self {
      case .contacts: .contacts
      case .emergency: .emergencyContacts
      case .sos: .sos
      }
    }
  }

  let transport: BridgeTransport
  let path: String
  private let lock = NSLock()
  private var handlers: [Handler] = []
  private var refusals: [ListenerRefusal.Listener: DeviceError] = [:]
  private var lastEventID: String?
  private var requestNonce: [UInt8] = []
  private var buffer: [UInt8] = []
  private var session: URLSession?
  private var task: URLSessionDataTask?
  private var stopped = false
  private var failures = 0

  init(transport: BridgeTransport, path: String) {
    self.transport = transport
    self.path = path
  }

  func add(_ handler: Handler) {
    let refused = lock.withLock { () -> DeviceError? in
      handlers.append(handler)
      return refusals[handler.listener]
    }
    if let refused { Self.deliver(.failure(refused), to: handler) }
  }

  func start() {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.timeoutIntervalForRequest = 60
    configuration.timeoutIntervalForResource = .infinity
    let session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
    lock.withLock { self.session = session }
    connect()
  }

  func stop() {
    let (task, session) = lock.withLock { () -> (URLSessionDataTask?, URLSession?) in
      stopped = true
      return (self.task, self.session)
    }
    task?.cancel()
    session?.invalidateAndCancel()
  }

  private func connect() {
    lock.lock()
    guard !stopped, let session, let url = URL(string: transport.base + path) else {
      lock.unlock()
      return
    }
    var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: 60)
    request.setValue(BridgeProtocol.version, forHTTPHeaderField: BridgeProtocol.versionHeader)
    request.setValue(BridgeProtocol.eventStreamType, forHTTPHeaderField: "Accept")
    if let lastEventID { request.setValue(lastEventID, forHTTPHeaderField: "Last-Event-ID") }
    let sealed = transport.sealer.seal([], for: .request(method: "GET", path: path, lastEventID: lastEventID))
    request.setValue(Data(sealed.bytes).base64EncodedString(), forHTTPHeaderField: BridgeProtocol.sealHeader)
    requestNonce = sealed.nonce
    buffer = []
    let task = session.dataTask(with: request)
    self.task = task
    lock.unlock()
    task.resume()
  }

  // MARK: URLSessionDataDelegate

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    let events = lock.withLock { () -> [(String?, [UInt8])] in
      guard dataTask === task else { return [] }
      failures = 0
      buffer += data
      var parsed: [(String?, [UInt8])] = []
      while let end = Self.eventEnd(in: buffer) {
        let block = String(decoding: buffer[..<end.start], as: UTF8.self)
        buffer.removeFirst(end.next)
        var id: String?
        var payload = ""
        for line in block.split(separator: "\n", omittingEmptySubsequences: true) {
          if line.hasPrefix("id:") { id = line.dropFirst(3).trimmingCharacters(in: .whitespaces) }
          if line.hasPrefix("data:") { payload += line.dropFirst(5).trimmingCharacters(in: .whitespaces) }
        }
        guard !payload.isEmpty, let bytes = Data(base64Encoded: payload), let message = SealedMessage(bytes: Array(bytes)),
              let plaintext = transport.sealer.open(message, for: .event(requestNonce: requestNonce, id: id ?? "")) else { continue }
        if let id { lastEventID = id }
        parsed.append((id, plaintext))
      }
      return parsed
    }
    for (_, plaintext) in events {
      guard let event = BridgeJSON.decode(BridgeEvent.self, from: plaintext) else { continue }
      dispatch(event)
    }
  }

  func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
    let delay = lock.withLock { () -> Double? in
      guard task === self.task, !stopped else { return nil }
      failures += 1
      return min(10, Double(failures))
    }
    guard let delay else { return }
    DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [weak self] in self?.connect() }
  }

  /// The end of the first complete event in `bytes` (a blank line) and where the next begins.
  static func eventEnd(in bytes: [UInt8]) -> (start: Int, next: Int)? {
    guard bytes.count >= 2 else { return nil }
    var index = 0
    while index + 1 < bytes.count {
      if bytes[index] == 0x0A && bytes[index + 1] == 0x0A { return (index, index + 2) }
      if index + 3 < bytes.count, bytes[index] == 0x0D, bytes[index + 1] == 0x0A, bytes[index + 2] == 0x0D, bytes[index + 3] == 0x0A {
        return (index, index + 4)
      }
      index += 1
    }
    return nil
  }

  private func dispatch(_ event: BridgeEvent) {
    let targets = lock.withLock { () -> [Handler] in
      if event.type == .listenerRefused, let refusal = event.refusal {
        guard refusals[refusal.listener] == nil else { return [] }
        refusals[refusal.listener] = refusal.error.deviceError
        return handlers.filter { $0.listener == refusal.listener }
      }
      return handlers
    }
    for handler in targets {
      switch (event.type, handler) {
      case (.listenerRefused, _):
        if let refusal = event.refusal { Self.deliver(.failure(refusal.error.deviceError), to: handler) }
      case (.contactsChanged, .contacts(let call)), (.emergencyContactsChanged, .emergency(let call)):
        call(.success(event.contacts ?? []))
      case (.sosRequested, .sos(let call)):
        call(nil)
      default:
        break
      }
    }
  }

  private static func deliver(_ result: Result<[Contact], DeviceError>, to handler: Handler) {
    switch handler {
    case .contacts(let call), .emergency(let call): call(result)
    case .sos(let call):
      if case .failure(let error) = result { call(error) } else { call(nil) }
    }
  }
}
