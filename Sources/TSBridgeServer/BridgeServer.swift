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
  /// `BridgeProtocol.maxBodyBytes`.
  /// - Throws: `HTTPServerError` when the address cannot be bound.
  public init(service: BridgeService, host: String = "127.0.0.1", port: UInt16 = 0) throws(HTTPServerError) {
    self.service = service
    var configuration = HTTPServer.Configuration(host: host, port: port, maxBodyBytes: BridgeProtocol.maxBodyBytes)
    let tooLarge = BridgeService.tooLarge
    configuration.tooLarge = HTTPResponse(status: tooLarge.status, headers: tooLarge.headers, body: .bytes(tooLarge.bytes))
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
