// ChaCha20-Poly1305 from CryptoKit for the sealing format (docs/bridge-protocol.md "Sealing"):
// the package's default uses libcrypto, which iOS does not ship.
import CryptoKit
import Foundation
import TSBridge

struct CryptoKitChaChaPoly: AEAD {
  func seal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8]) -> [UInt8] {
    // Key and nonce sizes are fixed by the format (32 and 12 bytes); a failure here is a bug.
    let box = try! ChaChaPoly.seal(plaintext, using: SymmetricKey(data: key), nonce: try! ChaChaPoly.Nonce(data: nonce),
                                   authenticating: aad)
    return Array(box.ciphertext) + Array(box.tag)
  }

  func open(_ sealed: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8]) -> [UInt8]? {
    guard sealed.count >= AEADSizes.tag, let nonce = try? ChaChaPoly.Nonce(data: nonce),
          let box = try? ChaChaPoly.SealedBox(nonce: nonce, ciphertext: sealed.dropLast(AEADSizes.tag), tag: sealed.suffix(AEADSizes.tag)) else {
      return nil
    }
    return (try? ChaChaPoly.open(box, using: SymmetricKey(data: key), authenticating: aad)).map(Array.init)
  }
}
