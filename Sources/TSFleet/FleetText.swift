import Foundation
import TSModel

/// Text shapes shared by the fleet's reports.
enum FleetText {
  /// `rows` under `header` in left-aligned columns two spaces apart (the last column unpadded),
  /// one line each, ending with a newline.
  static func columns(_ header: [String], _ rows: [[String]]) -> String {
    var widths = header.map(\.count)
    for row in rows { for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) } }
    func line(_ cells: [String]) -> String {
      cells.enumerated().map { index, cell in
        index == cells.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
      }.joined(separator: "  ")
    }
    return ([line(header)] + rows.map(line)).joined(separator: "\n") + "\n"
  }

  /// `value` pretty-printed with sorted keys, ending with a newline.
  static func json(_ value: JSONValue) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    return ((try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}") + "\n"
  }
}
