import Foundation
import TSModel

/// Text shapes shared by the fleet's reports.
enum FleetText {
  /// `rows` under `header` in left-aligned columns two spaces apart (the last column unpadded),
  /// one line each, ending with a newline.
  static func columns(_ header: [String], _ rows: [[String]]) -> String {
    TextColumns.render(header, rows)
  }

  /// `value` pretty-printed with sorted keys, ending with a newline.
  static func json(_ value: JSONValue) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    return ((try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}") + "\n"
  }
}
