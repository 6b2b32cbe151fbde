/// "Did you mean" suggestions for misspelt words (unknown keys, options, commands).
public enum Suggestion {
  /// The candidate closest to `word` by edit distance, if it is close enough to be a likely typo
  /// (distance at most a third of the longer word, and at most 3; compared case-insensitively).
  public static func closest(to word: String, in candidates: [String]) -> String? {
    let scored = candidates.map { ($0, editDistance(word.lowercased(), $0.lowercased())) }
    guard let best = scored.min(by: { $0.1 < $1.1 }) else { return nil }
    let limit = min(3, max(1, max(word.count, best.0.count) / 3))
    return best.1 <= limit ? best.0 : nil
  }

  /// Edit distance between two strings, counted in Characters: insertions, deletions,
  /// substitutions and swaps of two adjacent characters each count one (optimal string
  /// alignment), so the typo "notse" is 1 from "notes".
  public static func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a), b = Array(b)
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var beforePrevious = [Int](repeating: 0, count: b.count + 1)
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
      current[0] = i
      for j in 1...b.count {
        current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
          current[j] = min(current[j], beforePrevious[j - 2] + 1)
        }
      }
      (beforePrevious, previous, current) = (previous, current, beforePrevious)
    }
    return previous[b.count]
  }
}
