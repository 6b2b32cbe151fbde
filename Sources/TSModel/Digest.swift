#if canImport(CryptoKit)
internal import CryptoKit
#else
internal import CCrypto
#endif

/// SHA-256 and HMAC-SHA256, as lowercase hex: through OpenSSL's libcrypto on Linux, through
/// CryptoKit on Apple platforms (so the iOS bridge app needs no OpenSSL); the same bytes either
/// way (RFC 6234, RFC 2104; Tests/TSModelTests check the published test vectors on Linux).
///
/// Used for the manifest content hash and the watch-state fingerprint that bind a saved plan.
public enum SHA256Digest {
  /// The SHA-256 of `bytes`, 64 lowercase hex characters.
  public static func hex<Bytes: Collection>(of bytes: Bytes) -> String where Bytes.Element == UInt8 {
    lowercaseHex(self.bytes(of: bytes))
  }

  /// The SHA-256 of `bytes`, its 32 bytes (for base64 forms such as a Content-Security-Policy
  /// hash, and for comparing secrets of any length in constant time).
  public static func bytes<Bytes: Collection>(of bytes: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
    let input = Array(bytes)
    #if canImport(CryptoKit)
    return Array(CryptoKit.SHA256.hash(data: input))
    #else
    var digest = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
    input.withUnsafeBufferPointer { buffer in
      _ = CCrypto.SHA256(buffer.baseAddress, buffer.count, &digest)
    }
    return digest
    #endif
  }

  /// The HMAC-SHA256 of `message` keyed by `key` (RFC 2104), 64 lowercase hex characters: what
  /// signs a monitor's webhook bodies.
  public static func hmacHex(of message: [UInt8], key: [UInt8]) -> String {
    #if canImport(CryptoKit)
    return lowercaseHex(Array(HMAC<CryptoKit.SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key))))
    #else
    var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
    var length: UInt32 = 0
    // An empty key or message still needs a valid pointer; the lengths say 0.
    let keyBytes = key.isEmpty ? [0] : key, messageBytes = message.isEmpty ? [0] : message
    keyBytes.withUnsafeBufferPointer { keyBuffer in
      messageBytes.withUnsafeBufferPointer { messageBuffer in
        _ = HMAC(EVP_sha256(), keyBuffer.baseAddress, Int32(key.count), messageBuffer.baseAddress, message.count,
                 &digest, &length)
      }
    }
    return lowercaseHex(digest.prefix(Int(length)))
    #endif
  }

  /// Whether `a` and `b` hold the same bytes, in a time that depends only on their length
  /// (`CRYPTO_memcmp`; on Apple platforms every byte pair is compared, the differences OR-ed),
  /// for comparing signatures.
  public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    guard !a.isEmpty else { return true }
    #if canImport(CryptoKit)
    var difference: UInt8 = 0
    for index in a.indices { difference |= a[index] ^ b[index] }
    return difference == 0
    #else
    return a.withUnsafeBytes { x in b.withUnsafeBytes { y in CRYPTO_memcmp(x.baseAddress, y.baseAddress, x.count) == 0 } }
    #endif
  }

  private static func lowercaseHex<Bytes: Collection>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
    let hexDigits = Array("0123456789abcdef".utf8)
    var out = [UInt8]()
    out.reserveCapacity(bytes.count * 2)
    for byte in bytes {
      out.append(hexDigits[Int(byte >> 4)])
      out.append(hexDigits[Int(byte & 0xF)])
    }
    return String(decoding: out, as: UTF8.self)
  }
}
