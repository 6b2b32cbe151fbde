import TSModel

/// Short keyed fingerprints of phone numbers, shown beside a masked number with `--redact`
/// (`"+******56" ‹kqztrb›`), so a reviewer sees that a number changed and which numbers are the
/// same without seeing any of them (docs/plan.md "Redaction").
///
/// A fingerprint is the first 24 bits of HMAC-SHA256(key, the number's digits), written as six
/// letters of `alphabet` (no digits, so no phone mask ever reads one as part of a number): the
/// same number gives the same fingerprint however it is written (`+1 555 0100`, `+15550100`);
/// without the key (kept 0600 in the records folder, `RedactionKey` in TSEngine) nothing about
/// the number can be learnt from it, not even by trying every number. Two different numbers of
/// one change look equal once in 16.7 million.
public struct PhoneFingerprints: Sendable, Hashable {
  /// Letters shown (4 bits each).
  public static let length = 6
  /// The sixteen letters that stand for the hex digits 0…f.
  static let alphabet = Array("bcdfghjkmnpqrstv")
  private let key: [UInt8]

  /// Fingerprints under `key` (32 random bytes, per installation).
  public init(key: [UInt8]) { self.key = key }

  /// The fingerprint of `phone`: `length` letters of `alphabet`.
  public func fingerprint(_ phone: String) -> String {
    let hex = SHA256Digest.hmacHex(of: Array(("tsapply-phone:" + PhoneRedaction.digits(of: phone)).utf8), key: key)
    return String(hex.prefix(Self.length).map { Self.alphabet[Int(String($0), radix: 16) ?? 0] })
  }

  /// The fingerprint as shown after a masked number: `‹kqztrb›`.
  public func tag(_ phone: String) -> String { "‹" + fingerprint(phone) + "›" }
}
