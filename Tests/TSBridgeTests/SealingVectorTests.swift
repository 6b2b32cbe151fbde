import Foundation
import Testing
@testable import TSBridge

/// The shared sealing test vectors, docs/bridge-sealing-vectors.json: inputs (key, context,
/// nonce, plaintext) and the exact sealed bytes. This implementation (libcrypto's
/// ChaCha20-Poly1305) must produce every one byte for byte and open it; any other
/// implementation (the companion app's CryptoKit cipher, a client written from
/// docs/bridge-protocol.md) checks itself against the same file.
///
/// `TSAPPLY_RECORD_GOLDENS=1` rewrites the file from the inputs below and fails the test, as
/// for golden files; the committed file is then the reference.
@Suite struct SealingVectorTests {
  static let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("docs/bridge-sealing-vectors.json").path

  /// One vector's inputs.
  struct Input {
    var name: String
    var context: SealContext
    var nonce: [UInt8]
    var plaintext: String
  }

  static let key = SealingKey(bytes: Array(0..<32))!
  static let requestNonce: [UInt8] = [0x00, 0x00, 0x01, 0x93, 0x5C, 0x4A, 0x00, 0x00, 0x12, 0x34, 0x56, 0x78]
  static let inputs: [Input] = [
    Input(name: "listing request (GET, empty plaintext, sealed into TSApply-Seal)",
          context: .request(method: "GET", path: "/v1/watches", lastEventID: nil), nonce: requestNonce, plaintext: ""),
    Input(name: "call request",
          context: .request(method: "POST", path: "/v1/watches/7A:0F:06:93:F6:CE/call", lastEventID: nil),
          nonce: [0x00, 0x00, 0x01, 0x93, 0x5C, 0x4A, 0x00, 0x00, 0x12, 0x34, 0x56, 0x79],
          plaintext: #"{"method":"setAllContacts","args":{"contacts":[{"name":"李明","phoneNum":"+8613800138000"}]}}"#),
    Input(name: "event stream request resuming after an event id",
          context: .request(method: "GET", path: "/v1/watches/7A:0F:06:93:F6:CE/events", lastEventID: "k3x9-17"),
          nonce: [0x00, 0x00, 0x01, 0x93, 0x5C, 0x4A, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00], plaintext: ""),
    Input(name: "response (bridge side: counter's top bit set)", context: .response(requestNonce: requestNonce),
          nonce: [0x00, 0x00, 0x01, 0x93, 0x5C, 0x4A, 0x80, 0x00, 0x00, 0x00, 0x00, 0x01],
          plaintext: #"{"result":null}"#),
    Input(name: "event (bridge side)", context: .event(requestNonce: requestNonce, id: "k3x9-18"),
          nonce: [0x00, 0x00, 0x01, 0x93, 0x5C, 0x4A, 0x80, 0x00, 0x00, 0x00, 0x00, 0x02],
          plaintext: #"{"type":"sosRequested"}"#),
    Input(name: "event with time (bridge side; `time` is optional, docs/bridge-protocol.md \"Events\")",
          context: .event(requestNonce: requestNonce, id: "k3x9-19"),
          nonce: [0x00, 0x00, 0x01, 0x93, 0x5C, 0x4A, 0x80, 0x00, 0x00, 0x00, 0x00, 0x03],
          plaintext: #"{"time":"2026-12-04T22:50:10.250Z","type":"sosRequested"}"#),
  ]

  static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

  static func bytes(hex text: String) -> [UInt8]? {
    guard text.count % 2 == 0 else { return nil }
    var result: [UInt8] = []
    var index = text.startIndex
    while index < text.endIndex {
      let next = text.index(index, offsetBy: 2)
      guard let byte = UInt8(text[index..<next], radix: 16) else { return nil }
      result.append(byte)
      index = next
    }
    return result
  }

  static func json(_ context: SealContext) -> [String: Any] {
    switch context {
    case .request(let method, let path, let lastEventID):
      var fields: [String: Any] = ["kind": "request", "method": method, "path": path]
      if let lastEventID { fields["lastEventID"] = lastEventID }
      return fields
    case .response(let nonce): return ["kind": "response", "requestNonce": hex(nonce)]
    case .event(let nonce, let id): return ["kind": "event", "requestNonce": hex(nonce), "id": id]
    }
  }

  static func context(_ fields: [String: Any]) -> SealContext? {
    switch fields["kind"] as? String {
    case "request":
      guard let method = fields["method"] as? String, let path = fields["path"] as? String else { return nil }
      return .request(method: method, path: path, lastEventID: fields["lastEventID"] as? String)
    case "response":
      return (fields["requestNonce"] as? String).flatMap { bytes(hex: $0) }.map { .response(requestNonce: $0) }
    case "event":
      guard let nonce = (fields["requestNonce"] as? String).flatMap({ bytes(hex: $0) }), let id = fields["id"] as? String else { return nil }
      return .event(requestNonce: nonce, id: id)
    default: return nil
    }
  }

  /// The file's text for `inputs`, sealed here.
  static func render() throws -> String {
    let sealer = Sealer(key: key, side: .client)
    let vectors: [[String: Any]] = inputs.map { input in
      ["name": input.name, "context": json(input.context), "nonce": hex(input.nonce), "plaintext": input.plaintext,
       "sealed": hex(sealer.seal(Array(input.plaintext.utf8), for: input.context, nonce: input.nonce).bytes)]
    }
    let document: [String: Any] = [
      "about": "Sealing test vectors for tsapply bridge protocol v1 (docs/bridge-protocol.md \"Sealing\"): sealed = "
        + "\"TSB1\" + kind byte + nonce + ChaCha20-Poly1305(key, nonce, plaintext, aad = the 17 header bytes + context bytes). "
        + "Hex for bytes; plaintext in UTF-8.",
      "key": hex(key.bytes),
      "vectors": vectors,
    ]
    let data = try JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
    return String(decoding: data, as: UTF8.self) + "\n"
  }

  @Test func theCommittedVectorsAreWhatThisImplementationSeals() throws {
    if ProcessInfo.processInfo.environment["TSAPPLY_RECORD_GOLDENS"] != nil {
      try Self.render().write(toFile: Self.path, atomically: true, encoding: .utf8)
      Issue.record("Recorded \(Self.path); run again without TSAPPLY_RECORD_GOLDENS")
      return
    }
    let text = try String(contentsOfFile: Self.path, encoding: .utf8)
    #expect(text == (try Self.render()), "docs/bridge-sealing-vectors.json is not what this implementation seals")
  }

  /// Reads the file as another implementation would, from its fields alone: each sealed message
  /// opens under the key and its context, to its plaintext, and not under a changed context or
  /// with any byte flipped.
  @Test func everyVectorOpensWhereItWasSealedForAndNowhereElse() throws {
    let data = try #require(FileManager.default.contents(atPath: Self.path))
    let document = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    let key = try #require((document["key"] as? String).flatMap { Self.bytes(hex: $0) }.flatMap { SealingKey(bytes: $0) })
    let vectors = try #require(document["vectors"] as? [[String: Any]])
    #expect(vectors.count == Self.inputs.count)
    let sealer = Sealer(key: key, side: .bridge)
    for vector in vectors {
      let name = vector["name"] as? String ?? "?"
      let context = try #require((vector["context"] as? [String: Any]).flatMap { Self.context($0) }, "\(name)")
      let sealed = try #require((vector["sealed"] as? String).flatMap { Self.bytes(hex: $0) }, "\(name)")
      let message = try #require(SealedMessage(bytes: sealed), "\(name)")
      #expect(Self.hex(message.nonce) == vector["nonce"] as? String, "\(name)")
      #expect(sealer.open(message, for: context) == Array((vector["plaintext"] as? String ?? "").utf8), "\(name)")
      if case .event = context {
        // An event's plaintext is a `BridgeEvent`, with or without its optional `time`.
        let event = BridgeJSON.decode(BridgeEvent.self, from: Array((vector["plaintext"] as? String ?? "").utf8))
        #expect(event?.type == .sosRequested && (event?.time == nil || event?.date != nil), "\(name)")
      }
      #expect(sealer.open(message, for: .event(requestNonce: Array(repeating: 9, count: 12), id: "x")) == nil, "\(name): another context")
      for index in [0, 4, 5, 16, 17, sealed.count - 1] {
        var changed = sealed
        changed[index] ^= 0x01
        #expect(SealedMessage(bytes: changed).flatMap { sealer.open($0, for: context) } == nil, "\(name): byte \(index) flipped")
      }
    }
  }
}
