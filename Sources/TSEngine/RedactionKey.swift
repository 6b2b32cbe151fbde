import Foundation
import TSManifest
import TSModel
import TSPlan

/// The per-installation key of `--redact`'s phone fingerprints (`PhoneFingerprints`):
/// `<state root>/redaction.key`, 64 hex digits (32 random bytes from the system's secure
/// generator), mode 0600, created on first use with `SecureFile` (atomically, never replacing
/// one that exists, so two first uses at once agree on one key). Fingerprints are stable as long
/// as the file is kept; deleting it gives new ones. A CI runner keeps it with tsapply's other
/// records (docs/editor-and-ci.md).
public enum RedactionKey {
  /// The key file's name in the state root.
  public static let fileName = "redaction.key"

  /// The key file under the state root `root` (absolute).
  public static func path(root: String) -> String { root + "/" + fileName }

  /// The fingerprints of this installation: the key read from the state root `root`, created
  /// there first when there is none and `create` is true (`nil` when there is none and it is
  /// false: a read-only command such as `drift` writes nothing).
  /// - Throws: `SecureFileError` when the file cannot be read or created, or holds anything but
  ///   64 hex digits (it is never replaced: the fingerprints reviewers compared would change).
  public static func fingerprints(root: String, create: Bool = true) throws(SecureFileError) -> PhoneFingerprints? {
    let path = path(root: root)
    if !SecureFile.exists(path) {
      guard create else { return nil }
      var generator = SystemRandomNumberGenerator()
      let key = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
      let text = key.map { String(format: "%02x", $0) }.joined() + "\n"
      do {
        try SecureFile.write(Array(text.utf8), to: path, overwrite: false)
      } catch where SecureFile.exists(path) {
        // Another tsapply created it first: its key is the one.
      }
    }
    let bytes: [UInt8]
    switch ManifestSource.file(path: path, displayName: path).read(maxBytes: 1024, noun: "redaction key") {
    case .success(let read): bytes = read
    case .failure(let problem): throw SecureFileError(path: path, reason: problem.diagnostic.message)
    }
    let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    let pairs = stride(from: 0, to: text.utf8.count, by: 2).map { Array(text.utf8)[$0..<min($0 + 2, text.utf8.count)] }
    let key = pairs.compactMap { UInt8(String(decoding: $0, as: UTF8.self), radix: 16) }
    guard text.utf8.count == 64, text.allSatisfy(\.isHexDigit), key.count == 32 else {
      throw SecureFileError(path: path, reason: "it is not a tsapply redaction key (64 hex digits); move it away and tsapply makes a new one (fingerprints then change)")
    }
    return PhoneFingerprints(key: key)
  }
}
