/// Rows of text in left-aligned columns, as tsapply's tables print them (the fleet's reports,
/// the apply history).
public enum TextColumns {
  /// `rows` under `header` in left-aligned columns two spaces apart (the last column unpadded),
  /// one line each, ending with a newline.
  public static func render(_ header: [String], _ rows: [[String]]) -> String {
    var widths = header.map(\.count)
    for row in rows { for (index, cell) in row.enumerated() where index < widths.count { widths[index] = max(widths[index], cell.count) } }
    func line(_ cells: [String]) -> String {
      cells.enumerated().map { index, cell in
        index == cells.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
      }.joined(separator: "  ")
    }
    return ([line(header)] + rows.map(line)).joined(separator: "\n") + "\n"
  }
}
