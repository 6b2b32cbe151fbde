import Testing
@testable import TSApplyCLI

/// The small line diff behind `tsapply fmt --diff`.
@Suite struct UnifiedDiffTests {
  struct Case: Sendable, CustomTestStringConvertible {
    var name: String
    var old: String
    var new: String
    var expected: String
    var testDescription: String { name }
  }

  static let cases: [Case] = [
    Case(name: "same text", old: "a\nb\n", new: "a\nb\n", expected: ""),
    Case(name: "one changed line in the middle, three lines of context",
         old: "1\n2\n3\n4\n5\n6\n7\n8\n9\n", new: "1\n2\n3\n4\nfive\n6\n7\n8\n9\n", expected: """
      --- a/f
      +++ b/f
      @@ -2,7 +2,7 @@
       2
       3
       4
      -5
      +five
       6
       7
       8

      """),
    Case(name: "two changes far apart make two hunks",
         old: (1...20).map(String.init).joined(separator: "\n") + "\n",
         new: (1...20).map { $0 == 2 ? "two" : $0 == 19 ? "nineteen" : String($0) }.joined(separator: "\n") + "\n", expected: """
      --- a/f
      +++ b/f
      @@ -1,5 +1,5 @@
       1
      -2
      +two
       3
       4
       5
      @@ -16,5 +16,5 @@
       16
       17
       18
      -19
      +nineteen
       20

      """),
    Case(name: "lines moved: removals and additions aligned by the longest common subsequence",
         old: "a\nb\nc\n", new: "b\nc\na\n", expected: """
      --- a/f
      +++ b/f
      @@ -1,3 +1,3 @@
      -a
       b
       c
      +a

      """),
    Case(name: "CRLF line ends compare like LF", old: "a\r\nb\r\n", new: "a\nb\n", expected: ""),
    Case(name: "added at the end of a file", old: "a\n", new: "a\nb\n", expected: """
      --- a/f
      +++ b/f
      @@ -1,1 +1,2 @@
       a
      +b

      """),
  ]

  @Test(arguments: cases)
  func diff(_ test: Case) {
    #expect(UnifiedDiff.diff(test.old, test.new, file: "f") == test.expected)
  }
}
