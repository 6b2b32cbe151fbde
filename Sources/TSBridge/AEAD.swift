#if canImport(CryptoKit)
internal import CryptoKit
#elseif canImport(CCrypto)
internal import CCrypto
#endif

/// An authenticated cipher with a 256-bit key, a 96-bit nonce and a 128-bit tag: what the
/// sealing format (docs/bridge-protocol.md "Sealing") is built on. The package's
/// `ChaCha20Poly1305` is libcrypto's on Linux and CryptoKit's `ChaChaPoly` on Apple platforms
/// (the iOS app, examples/ios-bridge/, needs no OpenSSL); docs/bridge-sealing-vectors.json holds
/// the bytes both must produce.
public protocol AEAD: Sendable {
  /// `plaintext` encrypted under `key` and `nonce`, authenticating `aad` too: ciphertext (as
  /// long as the plaintext) followed by the 16-byte tag.
  func seal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8]) -> [UInt8]
  /// The plaintext of `sealed` (ciphertext ‖ tag), or `nil` when the tag does not match: a
  /// wrong key, nonce or AAD, or any changed byte.
  func open(_ sealed: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8]) -> [UInt8]?
}

/// Sizes shared by every `AEAD` of the sealing format.
public enum AEADSizes {
  /// Key length in bytes (256 bits).
  public static let key = 32
  /// Nonce length in bytes (96 bits).
  public static let nonce = 12
  /// Tag length in bytes (128 bits).
  public static let tag = 16
}

#if canImport(CryptoKit)
/// ChaCha20-Poly1305 (RFC 8439) through CryptoKit's `ChaChaPoly` (Apple platforms).
public struct ChaCha20Poly1305: AEAD {
  /// The cipher; stateless.
  public init() {}

  /// As `AEAD.seal`; traps only for a key or nonce of the wrong size (the format fixes them).
  public func seal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8]) -> [UInt8] {
    precondition(key.count == AEADSizes.key && nonce.count == AEADSizes.nonce, "ChaCha20-Poly1305 needs a 32-byte key and a 12-byte nonce")
    guard let chachaNonce = try? ChaChaPoly.Nonce(data: nonce),
          let box = try? ChaChaPoly.seal(plaintext, using: SymmetricKey(data: key), nonce: chachaNonce, authenticating: aad) else {
      preconditionFailure("CryptoKit: ChaCha20-Poly1305 encryption failed")
    }
    return Array(box.ciphertext) + Array(box.tag)
  }

  /// As `AEAD.open`.
  public func open(_ sealed: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8]) -> [UInt8]? {
    guard key.count == AEADSizes.key, sealed.count >= AEADSizes.tag, let chachaNonce = try? ChaChaPoly.Nonce(data: nonce),
          let box = try? ChaChaPoly.SealedBox(nonce: chachaNonce, ciphertext: sealed.dropLast(AEADSizes.tag),
                                              tag: sealed.suffix(AEADSizes.tag)) else { return nil }
    return (try? ChaChaPoly.open(box, using: SymmetricKey(data: key), authenticating: aad)).map(Array.init)
  }
}
#elseif canImport(CCrypto)
/// ChaCha20-Poly1305 (RFC 8439) through OpenSSL's libcrypto (`EVP_chacha20_poly1305`).
public struct ChaCha20Poly1305: AEAD {
  /// The cipher; stateless.
  public init() {}

  /// As `AEAD.seal`; traps only if libcrypto fails, which it does not for valid sizes.
  public func seal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8]) -> [UInt8] {
    precondition(key.count == AEADSizes.key && nonce.count == AEADSizes.nonce, "ChaCha20-Poly1305 needs a 32-byte key and a 12-byte nonce")
    guard let context = EVP_CIPHER_CTX_new() else { fatalError("libcrypto: out of memory") }
    defer { EVP_CIPHER_CTX_free(context) }
    var output = [UInt8](repeating: 0, count: plaintext.count + AEADSizes.tag)
    var length: Int32 = 0
    var ok = EVP_EncryptInit_ex(context, EVP_chacha20_poly1305(), nil, key, nonce) == 1
    if !aad.isEmpty { ok = ok && EVP_EncryptUpdate(context, nil, &length, aad, Int32(aad.count)) == 1 }
    var written = 0
    if !plaintext.isEmpty {
      ok = ok && output.withUnsafeMutableBufferPointer { buffer in
        EVP_EncryptUpdate(context, buffer.baseAddress, &length, plaintext, Int32(plaintext.count)) == 1
      }
      written = Int(length)
    }
    ok = ok && output.withUnsafeMutableBufferPointer { buffer in
      EVP_EncryptFinal_ex(context, buffer.baseAddress! + written, &length) == 1
    }
    ok = ok && output.withUnsafeMutableBufferPointer { buffer in
      EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_GET_TAG, Int32(AEADSizes.tag), buffer.baseAddress! + plaintext.count) == 1
    }
    precondition(ok, "libcrypto: ChaCha20-Poly1305 encryption failed")
    return output
  }

  /// As `AEAD.open`.
  public func open(_ sealed: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8]) -> [UInt8]? {
    guard key.count == AEADSizes.key, nonce.count == AEADSizes.nonce, sealed.count >= AEADSizes.tag,
          let context = EVP_CIPHER_CTX_new() else { return nil }
    defer { EVP_CIPHER_CTX_free(context) }
    let cipherCount = sealed.count - AEADSizes.tag
    var tag = Array(sealed[cipherCount...])
    var output = [UInt8](repeating: 0, count: cipherCount + AEADSizes.tag)
    var length: Int32 = 0
    guard EVP_DecryptInit_ex(context, EVP_chacha20_poly1305(), nil, key, nonce) == 1 else { return nil }
    if !aad.isEmpty, EVP_DecryptUpdate(context, nil, &length, aad, Int32(aad.count)) != 1 { return nil }
    if cipherCount > 0 {
      let ok = output.withUnsafeMutableBufferPointer { buffer in
        Array(sealed[..<cipherCount]).withUnsafeBufferPointer { input in
          EVP_DecryptUpdate(context, buffer.baseAddress, &length, input.baseAddress, Int32(cipherCount)) == 1
        }
      }
      guard ok else { return nil }
    }
    guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, Int32(AEADSizes.tag), &tag) == 1 else { return nil }
    let verified = output.withUnsafeMutableBufferPointer { buffer in
      EVP_DecryptFinal_ex(context, buffer.baseAddress! + cipherCount, &length) == 1
    }
    return verified ? Array(output[..<cipherCount]) : nil
  }
}
#endif
