import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TSBridge
import TSModel

/// One sealed request/response exchange with a bridge over URLSession, and what can go wrong on
/// the way. No retries here: `BridgeDevice` decides which calls may be repeated.
struct BridgeTransport: Sendable {
  let base: String
  let sealer: Sealer
  let session: URLSession
  let timeout: Double

  /// Why no authenticated answer came back.
  enum Failure: Error {
    /// The connection could not be made: the request never left (safe to treat as not done).
    case notSent(String)
    /// No answer within the timeout: the request may or may not have been carried out.
    case timedOut
    /// The connection broke, or the answer could not be authenticated, after the request was
    /// sent: it may or may not have been carried out.
    case lost(String)
    /// The bridge answered with a protocol error (HTTP status, message), or speaks another major version.
    case refused(status: Int, WireError, holder: LockHolder?)
  }

  /// The status and authenticated plaintext of the answer to `method path` carrying `plaintext`
  /// (sealed into the body, or for GET into the `TSApply-Seal` header).
  func exchange(_ method: String, _ path: String, _ plaintext: [UInt8]) async throws(Failure) -> (status: Int, body: [UInt8], sent: Int) {
    guard let url = URL(string: base + path) else { throw .notSent("bad URL \(base)\(path)") }
    var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
    request.httpMethod = method
    request.setValue(BridgeProtocol.version, forHTTPHeaderField: BridgeProtocol.versionHeader)
    // A fresh connection per request: a request is never resent on a kept-alive connection that
    // died (libcurl would, or wait for the timeout), so a dropped connection is seen at once.
    request.setValue("close", forHTTPHeaderField: "Connection")
    let sealed = sealer.seal(plaintext, for: .request(method: method, path: path, lastEventID: nil))
    if method == "GET" {
      request.setValue(Data(sealed.bytes).base64EncodedString(), forHTTPHeaderField: BridgeProtocol.sealHeader)
    } else {
      request.setValue(BridgeProtocol.sealedType, forHTTPHeaderField: "Content-Type")
      request.httpBody = Data(sealed.bytes)
    }
    let data: Data
    let response: URLResponse
    do {
      (data, response) = try await session.data(for: request)
    } catch {
      throw Self.failure(error)
    }
    guard let http = response as? HTTPURLResponse else { throw .lost("the bridge's answer is not HTTP") }
    try Self.checkVersion(http)
    let type = http.value(forHTTPHeaderField: "Content-Type") ?? ""
    if type.hasPrefix(BridgeProtocol.sealedType) {
      guard let message = SealedMessage(bytes: Array(data)),
            let body = sealer.open(message, for: .response(requestNonce: sealed.nonce)) else {
        throw .lost("the bridge's answer could not be authenticated (changed in transit?)")
      }
      if http.statusCode != 200 { throw Self.refusal(http.statusCode, body) }
      return (http.statusCode, body, sealed.bytes.count + data.count)
    }
    // Unsealed answers are protocol refusals only (400 version, 401, 404, 413); never results.
    throw Self.refusal(http.statusCode == 200 ? 502 : http.statusCode, Array(data))
  }

  static func refusal(_ status: Int, _ body: [UInt8]) -> Failure {
    let answer = BridgeJSON.decode(Answer<Empty>.self, from: body)
    let error = answer?.error ?? WireError(status: status, "the bridge answered HTTP \(status) without an explanation")
    return .refused(status: status, error, holder: answer?.holder)
  }

  static func checkVersion(_ response: HTTPURLResponse) throws(Failure) {
    guard let version = response.value(forHTTPHeaderField: BridgeProtocol.versionHeader),
          let major = BridgeProtocol.major(of: version), major != BridgeProtocol.major else { return }
    throw .refused(status: 400, WireError(status: 400, "the bridge speaks protocol v\(major) (\(version)); this tsapply speaks v\(BridgeProtocol.major) (\(BridgeProtocol.version)): update tsapply or the bridge app so both speak the same major version"), holder: nil)
  }

  static func failure(_ error: any Error) -> Failure {
    guard let error = error as? URLError else { return .lost("\(error)") }
    switch error.code {
    case .timedOut: return .timedOut
    case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet, .badURL, .unsupportedURL:
      return .notSent(error.localizedDescription)
    default: return .lost(error.localizedDescription)
    }
  }
}
