internal import CCrypto

/// SHA-256 through OpenSSL's libcrypto, as lowercase hex.
///
/// Used for the manifest content hash and the watch-state fingerprint that bind a saved plan.
public enum SHA256Digest {
  /// The SHA-256 of `bytes`, 64 lowercase hex characters.
  public static func hex<Bytes: Collection>(of bytes: Bytes) -> String where Bytes.Element == UInt8 {
    let input = Array(bytes)
    var digest = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
    input.withUnsafeBufferPointer { buffer in
      _ = CCrypto.SHA256(buffer.baseAddress, buffer.count, &digest)
    }
    let hexDigits = Array("0123456789abcdef".utf8)
    var out = [UInt8]()
    out.reserveCapacity(64)
    for byte in digest {
      out.append(hexDigits[Int(byte >> 4)])
      out.append(hexDigits[Int(byte & 0xF)])
    }
    return String(decoding: out, as: UTF8.self)
  }
}
