import TSModel

/// One libyaml parser event, copied into Swift values (no C type, no pointer into libyaml).
struct YAMLEvent: Sendable {
  /// The event's kind and data.
  enum Kind: Sendable {
    case streamStart, streamEnd
    case documentStart, documentEnd
    case alias(anchor: String)
    case scalar(YAMLScalar, tag: String?, anchor: String?)
    case sequenceStart(tag: String?, anchor: String?, isFlow: Bool)
    case sequenceEnd
    case mappingStart(tag: String?, anchor: String?, isFlow: Bool)
    case mappingEnd
  }

  var kind: Kind
  /// Where the event starts (1-based).
  var start: SourcePosition
  /// Where the event ends (1-based).
  var end: SourcePosition
}
