import Foundation
import TSBridge
import TSHTTPServer

/// A `BridgeService` served over HTTP by `HTTPServer` (libmicrohttpd): the reference bridge of
/// `tsapply bridge serve`, and the server the bridge tests and benchmark start on 127.0.0.1.
public final class BridgeServer: Sendable {
  /// The request handling.
  public let service: BridgeService
  /// The HTTP listener.
  public let http: HTTPServer

  /// Starts serving `service` on `host`:`port` (0: a free port), bodies limited to
  /// `BridgeProtocol.maxBodyBytes`, with `HTTPServer`'s limits on connections that send no whole
  /// request (docs/bridge-protocol.md "Limits and timeouts"); its refusals (413, 414, 431) are
  /// the protocol's unsealed JSON errors.
  /// - Throws: `HTTPServerError` when the address cannot be bound.
  public init(service: BridgeService, host: String = "127.0.0.1", port: UInt16 = 0) throws(HTTPServerError) {
    self.service = service
    var configuration = HTTPServer.Configuration(host: host, port: port, maxBodyBytes: BridgeProtocol.maxBodyBytes)
    configuration.refusal = { status, message in
      service.logRefusedUnread(status: status)
      let refusal = BridgeService.refusal(status, message)
      return HTTPResponse(status: refusal.status, headers: refusal.headers, body: .bytes(refusal.bytes))
    }
    http = try HTTPServer.start(configuration) { request in
      await Self.respond(to: request, with: service)
    }
  }

  /// The port listened on.
  public var port: UInt16 { http.port }

  /// Stops listening (open event streams end).
  public func stop() { http.stop() }

  static func respond(to request: HTTPRequest, with service: BridgeService) async -> HTTPResponse {
    let response = await service.handle(BridgeRequest(method: request.method, path: request.path,
                                                      headers: request.headers, body: request.body))
    switch response.body {
    case .bytes(let bytes):
      return HTTPResponse(status: response.status, headers: response.headers, body: .bytes(bytes))
    case .dropConnection:
      return HTTPResponse(status: 0, body: .dropConnection)
    case .events(let events):
      let stream = HTTPStream()
      let pump = Task {
        for await chunk in events {
          if !stream.write(chunk) { break }
        }
        stream.finish()
      }
      stream.onClose { pump.cancel() }
      return HTTPResponse(status: response.status, headers: response.headers, body: .stream(stream))
    }
  }
}
