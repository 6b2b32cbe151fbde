import Foundation
import TSBridge
import TSHTTPClient
import TSModel

/// One sealed request/response exchange with a bridge (plain HTTP/1.1 through the project's
/// libcurl client, `HTTPClient`), and what can go wrong on the way. No retries here:
/// `BridgeDevice` decides which calls may be repeated, each time sealed afresh.
///
/// Exchanges reuse kept-alive connections (no connection set-up, and no new server thread, per
/// call). Reuse sends nothing twice by itself, with one exception: libcurl sends a request
/// again, once, with the same bytes, on a new connection when a kept-alive one closes under it
/// before any answer (a bridge making room under a flood of idle connections closes the
/// oldest, LockOutTests). The bridge accepts each sealed request once, so that copy is either
/// the only one it carries out (the first never arrived whole: the normal answer comes back)
/// or refused as a replay (401) because the first was carried out and its answer lost with the
/// connection: that refusal is reported as `.lost` (the request may have been carried out),
/// never as a wrong key and never as a write refused.
struct BridgeTransport: Sendable {
  /// The bridge's address (a name, an IPv4 or an IPv6 address) and port.
  let host: String
  let port: Int
  let sealer: Sealer
  /// Seconds an exchange may take, connection included.
  let timeout: Double
  /// Whether exchanges may use kept-alive connections (`false`: a new connection each, as
  /// tsapply did before 1.1; for the benchmark's comparison).
  var reuseConnections = true

  /// Why no authenticated answer came back.
  enum Failure: Error {
    /// The connection could not be made: the request never left (safe to treat as not done).
    case notSent(String)
    /// No answer within the timeout: the request may or may not have been carried out.
    case timedOut
    /// The connection broke, or the answer could not be authenticated, after the request was
    /// sent: it may or may not have been carried out.
    case lost(String)
    /// A kept-alive connection closed under the request and libcurl's copy of it was refused
    /// as a replay: the first may have been carried out (for a write, as `lost`); a read is sent
    /// again, sealed afresh, on a new connection (`BridgeCaller.send`).
    case connectionClosed(String)
    /// The bridge answered with a protocol error (HTTP status, message), or speaks another major
    /// version; on 409 with the lease's holder and the seconds it lives unless renewed (1.3).
    case refused(status: Int, WireError, holder: LockHolder?, expiresIn: Int? = nil)
    /// An answer the bridge did not seal (HTTP status, what it said, control characters
    /// escaped): the bridge's refusals before it reads a request (400 version, 401, 404, 413) —
    /// or one forged on the way, which no key is needed for. It is no proof the request was not
    /// carried out: a write so answered may have reached the watch (`BridgeCaller.linkError`).
    case unauthenticated(status: Int, said: String?)
  }

  /// The status and authenticated plaintext of the answer to `method path` carrying `plaintext`
  /// (sealed into the body, or for GET into the `TSApply-Seal` header).
  /// `newConnection`: on a connection of its own, whatever `reuseConnections` says.
  func exchange(_ method: String, _ path: String, _ plaintext: [UInt8], newConnection: Bool = false) async throws(Failure)
    -> (status: Int, body: [UInt8], sent: Int) {
    let sealed = sealer.seal(plaintext, for: .request(method: method, path: path, lastEventID: nil))
    var headers = [(BridgeProtocol.versionHeader, BridgeProtocol.version)]
    var body: [UInt8] = []
    if method == "GET" {
      headers.append((BridgeProtocol.sealHeader, Data(sealed.bytes).base64EncodedString()))
    } else {
      headers.append(("Content-Type", BridgeProtocol.sealedType))
      body = sealed.bytes
    }
    let head: HTTPClientHead
    let data: [UInt8]
    let sends: Int
    do {
      let answer = try await HTTPClient.shared.send(HTTPClientRequest(method: method, url: url(path), headers: headers, body: body,
                                                                      timeout: timeout, reuseConnection: reuseConnections && !newConnection))
      (head, data, sends) = (answer.head, answer.body, answer.sends)
    } catch {
      switch error {
      case .notSent(let reason): throw .notSent(reason)
      case .timedOut: throw .timedOut
      case .lost(let reason): throw .lost(reason)
      }
    }
    // Headers are not sealed: a version header is read only on an unsealed answer, and there
    // it is no more trusted than the status (below). A sealed answer that opens is the bridge's,
    // of this major version, whatever header came with it.
    let type = head.headers["content-type"] ?? ""
    if sends > 1, head.status == 401, !type.hasPrefix(BridgeProtocol.sealedType) {
      throw .connectionClosed("the connection closed under the request and the copy libcurl sent again was refused as a replay: the bridge may have carried it out")
    }
    if type.hasPrefix(BridgeProtocol.sealedType) {
      guard let message = SealedMessage(bytes: data),
            let opened = sealer.open(message, for: .response(requestNonce: sealed.nonce)) else {
        throw .lost("the bridge's answer could not be authenticated (changed in transit?)")
      }
      if head.status != 200 { throw Self.refusal(head.status, opened) }
      return (head.status, opened, sealed.bytes.count + data.count)
    }
    // Unsealed answers are protocol refusals only (400 version, 401, 404, 413); never results,
    // and never trusted as a refusal of what changes the watch: anyone on the path can forge one.
    // A success must be sealed: one that is not is an answer that does not authenticate, as a
    // sealed one that does not open is (9310, a lost answer; fresh-eyes finding: called "HTTP 502").
    if (200..<300).contains(head.status) {
      throw .lost("the bridge's answer (HTTP \(head.status)) was not sealed, so it could not be authenticated (changed in transit, or not from the bridge)")
    }
    // Another major version says so in words, but as what it is: an answer no key stands behind
    // (fresh-eyes finding: a forged "v2" 400 to a write that landed was taken for a refusal,
    // "Nothing reached the watch").
    let said = Self.otherVersion(head.headers[BridgeProtocol.versionHeader.lowercased()])
      ?? BridgeJSON.decode(Answer<Empty>.self, from: data)?.error?.message
    throw .unauthenticated(status: head.status, said: said.map { ControlCharacters.escaped(String($0.prefix(300))) })
  }

  /// The URL of `path` on this bridge.
  func url(_ path: String) -> String { HTTPClientRequest.url(host: host, port: port, path: path) }

  /// `HOST:PORT` of the bridge, for messages.
  var authority: String { HTTPClientRequest.authority(host: host, port: port) }

  static func refusal(_ status: Int, _ body: [UInt8]) -> Failure {
    let answer = BridgeJSON.decode(Answer<Empty>.self, from: body)
    let error = answer?.error ?? WireError(status: status, "the bridge answered HTTP \(status) without an explanation")
    return .refused(status: status, error, holder: answer?.holder, expiresIn: answer?.expiresIn)
  }

  /// What an answer whose `TSApply-Protocol` header names another major version says; `nil`
  /// for this major version or none.
  static func otherVersion(_ version: String?) -> String? {
    guard let version, let major = BridgeProtocol.major(of: version), major != BridgeProtocol.major else { return nil }
    return "the bridge speaks protocol v\(major) (\(version)); this tsapply speaks v\(BridgeProtocol.major) (\(BridgeProtocol.version)): "
      + "update tsapply or the bridge app so both speak the same major version"
  }
}
