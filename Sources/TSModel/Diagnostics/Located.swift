/// A value read from a manifest together with the position it was read from.
///
/// Decoding keeps positions on every field so that checks made later (validation, capability
/// checks at plan time) can still point at the exact line and column.
public struct Located<Value> {
  /// The decoded value.
  public var value: Value
  /// Where the value starts in the manifest.
  public var position: SourcePosition

  /// Pairs a value with its position.
  public init(_ value: Value, at position: SourcePosition) {
    self.value = value
    self.position = position
  }
}

extension Located: Equatable where Value: Equatable {}
extension Located: Hashable where Value: Hashable {}
extension Located: Sendable where Value: Sendable {}
