/// A unified diff of two texts, line by line, for `tsapply fmt --diff`.
///
/// Written here because the package takes no dependencies: common leading and trailing lines
/// are skipped, the rest is aligned by a longest-common-subsequence table (when the changed
/// middle exceeds `maxTable` cells it is shown as one replacement), and changes are grouped
/// into hunks with `context` lines around them, in the `diff -u` format
/// (`--- a/FILE`, `+++ b/FILE`, or the path itself when it is absolute; `@@ -start,count +start,count @@`). Lines keep their line ends
/// out of the comparison; a CRLF file diffs like an LF file.
public enum UnifiedDiff {
  /// Largest LCS table, in cells, before the middle is shown as one replacement.
  static let maxTable = 4_000_000

  /// The diff of `old` to `new`, naming `file`; empty when the texts have the same lines.
  public static func diff(_ old: String, _ new: String, file: String, context: Int = 3) -> String {
    let a = lines(old), b = lines(new)
    let operations = align(a, b)
    guard operations.contains(where: { $0.kind != .same }) else { return "" }
    // git's a/ and b/ prefixes only make sense in front of a relative path.
    let (old, new) = file.hasPrefix("/") ? (file, file) : ("a/" + file, "b/" + file)
    var text = "--- \(old)\n+++ \(new)\n"
    for hunk in hunks(operations, context: context) {
      text += header(hunk)
      for op in hunk {
        switch op.kind {
        case .same: text += " " + a[op.oldIndex] + "\n"
        case .removed: text += "-" + a[op.oldIndex] + "\n"
        case .added: text += "+" + b[op.newIndex] + "\n"
        }
      }
    }
    return text
  }

  struct Operation: Equatable {
    enum Kind { case same, removed, added }
    var kind: Kind
    /// Index in the old lines (for `.added`: the old line it comes before).
    var oldIndex: Int
    /// Index in the new lines (for `.removed`: the new line it comes before).
    var newIndex: Int
  }

  static func lines(_ text: String) -> [String] {
    // "\r\n" is one Character in Swift, so both line ends are separators.
    var result = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).map(String.init)
    if result.last == "" { result.removeLast() }
    return result
  }

  /// Same, removed and added lines in order.
  static func align(_ a: [String], _ b: [String]) -> [Operation] {
    var prefix = 0
    while prefix < a.count, prefix < b.count, a[prefix] == b[prefix] { prefix += 1 }
    var suffix = 0
    while suffix < a.count - prefix, suffix < b.count - prefix, a[a.count - 1 - suffix] == b[b.count - 1 - suffix] { suffix += 1 }
    var operations = (0..<prefix).map { Operation(kind: .same, oldIndex: $0, newIndex: $0) }
    operations += middle(a, prefix..<(a.count - suffix), b, prefix..<(b.count - suffix))
    operations += (0..<suffix).map { Operation(kind: .same, oldIndex: a.count - suffix + $0, newIndex: b.count - suffix + $0) }
    return operations
  }

  private static func middle(_ a: [String], _ ra: Range<Int>, _ b: [String], _ rb: Range<Int>) -> [Operation] {
    let n = ra.count, m = rb.count
    guard n * m <= maxTable else {
      return ra.map { Operation(kind: .removed, oldIndex: $0, newIndex: rb.lowerBound) }
        + rb.map { Operation(kind: .added, oldIndex: ra.upperBound, newIndex: $0) }
    }
    // lcs[i][j]: length of the longest common subsequence of a[ra][i...] and b[rb][j...].
    var lcs = [[Int]](repeating: [Int](repeating: 0, count: m + 1), count: n + 1)
    for i in stride(from: n - 1, through: 0, by: -1) {
      for j in stride(from: m - 1, through: 0, by: -1) {
        lcs[i][j] = a[ra.lowerBound + i] == b[rb.lowerBound + j] ? lcs[i + 1][j + 1] + 1 : max(lcs[i + 1][j], lcs[i][j + 1])
      }
    }
    var operations: [Operation] = []
    var i = 0, j = 0
    while i < n || j < m {
      let oldIndex = ra.lowerBound + i, newIndex = rb.lowerBound + j
      if i < n, j < m, a[oldIndex] == b[newIndex] {
        operations.append(Operation(kind: .same, oldIndex: oldIndex, newIndex: newIndex))
        i += 1; j += 1
      } else if i < n, j == m || lcs[i + 1][j] >= lcs[i][j + 1] {
        operations.append(Operation(kind: .removed, oldIndex: oldIndex, newIndex: newIndex))
        i += 1
      } else {
        operations.append(Operation(kind: .added, oldIndex: oldIndex, newIndex: newIndex))
        j += 1
      }
    }
    return operations
  }

  /// Runs of operations around changes, with up to `context` unchanged lines on each side;
  /// changes closer than 2 × `context` lines share a hunk.
  static func hunks(_ operations: [Operation], context: Int) -> [[Operation]] {
    let changed = operations.indices.filter { operations[$0].kind != .same }
    var hunks: [[Operation]] = []
    var start = -1, end = -1
    for index in changed {
      if start >= 0, index - end <= 2 * context {
        end = index
        continue
      }
      if start >= 0 { hunks.append(Array(operations[max(0, start - context)...min(operations.count - 1, end + context)])) }
      start = index
      end = index
    }
    if start >= 0 { hunks.append(Array(operations[max(0, start - context)...min(operations.count - 1, end + context)])) }
    return hunks
  }

  private static func header(_ hunk: [Operation]) -> String {
    let old = hunk.filter { $0.kind != .added }, new = hunk.filter { $0.kind != .removed }
    let oldStart = old.first.map { $0.oldIndex + 1 } ?? (hunk.first?.oldIndex ?? 0)
    let newStart = new.first.map { $0.newIndex + 1 } ?? (hunk.first?.newIndex ?? 0)
    return "@@ -\(oldStart),\(old.count) +\(newStart),\(new.count) @@\n"
  }
}
