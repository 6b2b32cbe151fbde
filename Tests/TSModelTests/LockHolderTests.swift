import Testing
import TSModel

/// A lock holder is written by another process or sent by a bridge (its lease's holder, as any
/// client holding the pairing string sent it): shown with its control characters escaped and
/// cut, so no escape sequence, forged line or megabyte reaches the terminal of whoever waits
/// (fresh-eyes finding: a holder's host with `ESC [2J` and a newline cleared the screen and
/// printed "FAKE: Apply complete!").
struct LockHolderTests {
  @Test(arguments: [
    (LockHolder(pid: 7, host: "lab\u{1B}[2J\nFAKE: Apply complete!", command: "c", since: "x"), "lab\\e[2J\\nFAKE: Apply complete!"),
    (LockHolder(pid: 7, host: "h", command: "tsapply apply\r\u{9B}31m", since: "x"), "('tsapply apply\\r\\u{9B}31m')"),
    (LockHolder(pid: 7, host: "h", command: "c", since: "\u{7}2026"), "since \\u{7}2026"),
  ])
  func controlCharactersAreShownEscaped(holder: LockHolder, shown: String) {
    #expect(holder.description.contains(shown), "\(holder.description)")
    #expect(ControlCharacters.first(in: holder.description) == nil, "\(holder.description)")
  }

  @Test func longFieldsAreCut() {
    let holder = LockHolder(pid: 7, host: String(repeating: "h", count: 100_000), command: String(repeating: "c", count: 200_000), since: "x")
    #expect(holder.description.count < LockHolder.shownHostLength + LockHolder.shownCommandLength + 100)
    #expect(holder.description.contains(String(repeating: "c", count: LockHolder.shownCommandLength) + "…')"))
  }

  /// What a bridge refuses (`problem`), and what `wellFormed` makes of it: accepted.
  @Test(arguments: [
    (LockHolder(pid: 0, host: "h", command: "c", since: "s"), "holder.pid"),
    (LockHolder(pid: -1, host: "h", command: "c", since: "s"), "holder.pid"),
    (LockHolder(pid: 1, host: String(repeating: "h", count: 256), command: "c", since: "s"), "holder.host is longer than 255 bytes"),
    (LockHolder(pid: 1, host: "h\n", command: "c", since: "s"), "holder.host holds a control character (U+000A)"),
    (LockHolder(pid: 1, host: "h", command: String(repeating: "é", count: 2049), since: "s"), "holder.command is longer than 4096 bytes"),
    (LockHolder(pid: 1, host: "h", command: "apply 'a\u{1B}b.yaml'", since: "s"), "holder.command holds a control character (U+001B)"),
    (LockHolder(pid: 1, host: "h", command: "c", since: String(repeating: "9", count: 65)), "holder.since is longer than 64 bytes"),
    (LockHolder(pid: 1, host: "h", command: "c", since: "s"), nil),
  ] as [(LockHolder, String?)])
  func aHolderABridgeRefusesIsMadeWellFormed(holder: LockHolder, problem: String?) {
    #expect(holder.problem.map { $0.hasPrefix(problem ?? "-") } ?? (problem == nil), "\(holder.problem ?? "nil")")
    let formed = holder.wellFormed
    #expect(holder.pid < 1 ? formed.problem != nil : formed.problem == nil, "\(formed)")
    if holder.problem == nil { #expect(formed == holder) }
    #expect(formed.command.utf8.count <= 4096 && !formed.command.contains("\u{FFFD}"))
  }
}
