// An HTTP/1.1 listener over Network.framework that feeds the package's shared request handling
// (`BridgeService.handle`, Sources/TSBridge/BridgeService.swift): it only frames requests and
// responses. Routing, sealing, replay protection, leases and events are all in the package.
import Foundation
import Network
import TSBridge

final class NetworkListener: @unchecked Sendable {
  let listener: NWListener
  let service: BridgeService
  let queue = DispatchQueue(label: "bridge.listener")

  /// Listens on `port` on every interface of the phone (the local network the laptop shares).
  init(port: UInt16, service: BridgeService) throws {
    listener = try NWListener(using: .tcp, on: NWEndpoint.Port(rawValue: port)!)
    self.service = service
  }

  func start() {
    listener.newConnectionHandler = { [weak self] connection in
      guard let self else { return }
      connection.start(queue: queue)
      read(connection, buffer: Data())
    }
    listener.start(queue: queue)
  }

  func stop() { listener.cancel() }

  /// Reads until a whole request (head and `Content-Length` body) is there, then answers it.
  private func read(_ connection: NWConnection, buffer: Data) {
    connection.receive(minimumIncompleteLength: 1, maximumLength: 64 * 1024) { [weak self] data, _, complete, error in
      guard let self, error == nil else { connection.cancel(); return }
      var buffer = buffer
      if let data { buffer.append(data) }
      if let request = Self.parse(buffer) {
        Task { await self.answer(request, on: connection) }
      } else if complete || buffer.count > BridgeProtocol.maxBodyBytes + 64 * 1024 {
        Self.send(BridgeResponse(status: 413, headers: [:], body: .bytes([])), on: connection)
      } else {
        read(connection, buffer: buffer)
      }
    }
  }

  private func answer(_ request: BridgeRequest, on connection: NWConnection) async {
    let response = await service.handle(request)
    guard case .events(let events) = response.body else {
      Self.send(response, on: connection)
      return
    }
    var head = "HTTP/1.1 \(response.status) OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n"
    for (name, value) in response.headers { head += "\(name): \(value)\r\n" }
    connection.send(content: Data((head + "\r\n").utf8), completion: .idempotent)
    for await chunk in events {
      let framed = Data((String(chunk.count, radix: 16) + "\r\n").utf8) + Data(chunk) + Data("\r\n".utf8)
      var failed = false
      await withCheckedContinuation { done in
        connection.send(content: framed, completion: .contentProcessed { error in
          failed = error != nil
          done.resume()
        })
      }
      if failed { break }
    }
    connection.cancel()
  }

  /// A complete request in `buffer`, or `nil` while more is needed.
  static func parse(_ buffer: Data) -> BridgeRequest? {
    guard let end = buffer.range(of: Data("\r\n\r\n".utf8)) else { return nil }
    let head = String(decoding: buffer[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
    let line = head.first?.split(separator: " ") ?? []
    guard line.count >= 2 else { return nil }
    var headers: [String: String] = [:]
    for field in head.dropFirst() {
      guard let colon = field.firstIndex(of: ":") else { continue }
      headers[field[..<colon].lowercased()] = field[field.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
    let length = Int(headers["content-length"] ?? "0") ?? 0
    let body = buffer[end.upperBound...]
    guard body.count >= length else { return nil }
    let target = String(line[1])
    let path = String(target.prefix { $0 != "?" }).removingPercentEncoding ?? String(target.prefix { $0 != "?" })
    return BridgeRequest(method: String(line[0]), path: path, headers: headers, body: Array(body.prefix(length)))
  }

  static func send(_ response: BridgeResponse, on connection: NWConnection) {
    let body = response.bytes
    var head = "HTTP/1.1 \(response.status) \(response.status == 200 ? "OK" : "Error")\r\nContent-Length: \(body.count)\r\nConnection: close\r\n"
    for (name, value) in response.headers { head += "\(name): \(value)\r\n" }
    connection.send(content: Data((head + "\r\n").utf8) + Data(body), completion: .contentProcessed { _ in connection.cancel() })
  }
}
