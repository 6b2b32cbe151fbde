import Foundation
import TSModel

extension DeviceState {
  /// SHA-256 (64 lowercase hex characters) of the state's canonical JSON: `JSONEncoder` with
  /// sorted keys and no pretty-printing, so equal states always give equal fingerprints.
  /// `Plan.priorStateDigest` holds it; a saved plan whose digest differs from the watch's current
  /// fingerprint is stale.
  public var fingerprint: String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    // Encoding plain value types cannot fail; an empty input would still give a stable digest.
    let data = (try? encoder.encode(self)) ?? Data()
    return SHA256Digest.hex(of: data)
  }
}
