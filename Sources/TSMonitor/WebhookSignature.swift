import TSModel

/// The signature of a webhook body: `X-Tsapply-Signature: sha256=<hex>`, the HMAC-SHA256 of the
/// exact body bytes keyed by the shared secret (libcrypto, `SHA256Digest.hmacHex`), lowercase hex.
///
/// A receiver recomputes it over the bytes it received with its copy of the secret and compares
/// with `verify(_:body:secret:)`; a body signed with another secret, or changed on the way, does
/// not verify (docs/monitor.md "Webhooks").
public enum WebhookSignature {
  /// The request header that carries the signature.
  public static let header = "X-Tsapply-Signature"
  /// The prefix of the header's value, naming the algorithm.
  public static let prefix = "sha256="

  /// The header value for `body`: `sha256=` and the HMAC's 64 hex digits.
  public static func value(body: [UInt8], secret: [UInt8]) -> String {
    prefix + SHA256Digest.hmacHex(of: body, key: secret)
  }

  /// Whether `headerValue` (as received, e.g. `sha256=3f…`; hex digits in either case) is the
  /// signature of `body` under `secret`. The comparison takes the same time whatever the value,
  /// so timing does not tell how much of a guess was right; anything malformed is `false`.
  public static func verify(_ headerValue: String, body: [UInt8], secret: [UInt8]) -> Bool {
    guard headerValue.hasPrefix(prefix) else { return false }
    let given = headerValue.utf8.dropFirst(prefix.utf8.count).map { byte in
      (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte) ? byte + 0x20 : byte
    }
    return SHA256Digest.constantTimeEqual(given, Array(SHA256Digest.hmacHex(of: body, key: secret).utf8))
  }
}
