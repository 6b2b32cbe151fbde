import Foundation
import TSModel

/// Text shapes shared by the fleet's reports.
public enum FleetText {
  /// The first `listed` of `names` (escaped), comma-separated, then `and N more (every name in
  /// --json)`; `none` when there are none: a site of hundreds of watches is not one line of
  /// hundreds of names.
  public static func names(_ names: [String], listed: Int = 10) -> String {
    if names.isEmpty { return "none" }
    let shown = names.prefix(listed).map { ControlCharacters.escaped($0) }.joined(separator: ", ")
    return names.count > listed ? shown + ", and \(names.count - listed) more (every name in --json)" : shown
  }

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
