import Foundation
import Synchronization
import TSManifest
import TSModel

extension DeviceState {
  /// SHA-256 (64 lowercase hex characters) of the state's canonical JSON: what `JSONEncoder`
  /// writes with sorted keys, unescaped slashes and no pretty-printing, so equal states always
  /// give equal fingerprints. Written directly (`JSONValue(state)`, `ManifestJSON.encoded`: the
  /// same bytes at a tenth of the cost). `Plan.priorStateDigest` holds it; a saved plan whose
  /// digest differs from the watch's current fingerprint is stale.
  public var fingerprint: String {
    SHA256Digest.hex(of: ManifestJSON.encoded(JSONValue(self)).utf8)
  }

  /// `fingerprint` through `JSONEncoder`, the definition the direct writing must equal (tests).
  public var encoderFingerprint: String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    // Encoding plain value types cannot fail; an empty input would still give a stable digest.
    let data = (try? encoder.encode(self)) ?? Data()
    return SHA256Digest.hex(of: data)
  }
}

/// A state fingerprint (`DeviceState.fingerprint`) computed when first read, not when the plan
/// is made: hashing the canonical JSON costs more than planning, and only a saved plan, the JSON
/// rendering and an apply's guard read it, so a text `plan` (or a fleet's thousand of them)
/// never pays for it. Encodes and compares as the plain 64-character string.
@propertyWrapper
public struct DeferredDigest: Hashable, Codable, Sendable {
  private final class Box: Sendable {
    private enum Content { case known(String), pending(DeviceState) }
    private let content: Mutex<Content>
    init(_ text: String) { content = Mutex(.known(text)) }
    init(of state: DeviceState) { content = Mutex(.pending(state)) }

    var text: String {
      content.withLock { content in
        switch content {
        case .known(let text): return text
        case .pending(let state):
          let text = state.fingerprint
          content = .known(text)
          return text
        }
      }
    }
  }

  private var box: Box

  /// A digest already known (`""` for none).
  public init(wrappedValue: String) { box = Box(wrappedValue) }

  /// The fingerprint of `state`, computed on first use.
  public init(of state: DeviceState) { box = Box(of: state) }

  /// The 64 lowercase hex characters (or the text given).
  public var wrappedValue: String {
    get { box.text }
    set { box = Box(newValue) }
  }

  /// Reads the digest as the plain string it is written as.
  public init(from decoder: any Decoder) throws {
    box = Box(try decoder.singleValueContainer().decode(String.self))
  }

  /// Writes the digest as a plain string (hashing the state first if it was not yet).
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(wrappedValue)
  }

  /// Equal when the digests are (however they were made).
  public static func == (a: DeferredDigest, b: DeferredDigest) -> Bool { a.wrappedValue == b.wrappedValue }
  /// Hashes the digest string, as `==` compares it.
  public func hash(into hasher: inout Hasher) { hasher.combine(wrappedValue) }
}
