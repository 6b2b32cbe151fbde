import TSModel

/// YAML text with emoji markers (1️⃣, 2️⃣, …) standing for positions, as swift-format's tests do:
/// the markers are removed from `text`, and `position(_:)` gives the 1-based line and column
/// (in Unicode scalars) where each one stood.
public struct MarkedText: Sendable {
  /// The text without markers.
  public let text: String
  /// The file name the positions carry.
  public let file: String
  private let markers: [String: SourcePosition]

  public static let markerSymbols = ["1️⃣", "2️⃣", "3️⃣", "4️⃣", "5️⃣", "6️⃣", "7️⃣", "8️⃣", "9️⃣"]

  public init(_ marked: String, file: String = "watch.yaml") {
    self.file = file
    var output = ""
    var found: [String: SourcePosition] = [:]
    var line = 1
    var column = 1
    var rest = Substring(marked)
    outer: while !rest.isEmpty {
      for symbol in Self.markerSymbols where rest.hasPrefix(symbol) {
        found[symbol] = SourcePosition(file: file, line: line, column: column)
        rest = rest.dropFirst(symbol.count)
        continue outer
      }
      let character = rest.removeFirst()
      output.append(character)
      if character == "\n" || character == "\r\n" {
        line += 1
        column = 1
      } else {
        column += character.unicodeScalars.count
      }
    }
    text = output
    markers = found
  }

  /// The position of `marker` (e.g. "1️⃣"); traps if the marker is not in the text.
  public func position(_ marker: String) -> SourcePosition {
    guard let position = markers[marker] else { preconditionFailure("marker \(marker) not found") }
    return position
  }
}
