/// Who holds a watch's whole-apply lock (or a bridge's lease): shown to a second apply that
/// has to wait or give up, so the user knows whom to ask.
public struct LockHolder: Hashable, Codable, Sendable, CustomStringConvertible {
  /// Process ID of the holder.
  public var pid: Int32
  /// Host name of the machine the holder runs on.
  public var host: String
  /// The holder's command line, e.g. `tsapply apply watch.yaml` (arguments only, never
  /// environment values).
  public var command: String
  /// When the lock was taken, ISO 8601 UTC (`2026-12-01T09:30:00Z`).
  public var since: String

  /// A holder record.
  public init(pid: Int32, host: String, command: String, since: String) {
    self.pid = pid
    self.host = host
    self.command = command
    self.since = since
  }

  /// `pid 4242 on host lab-1 ('tsapply apply watch.yaml'), since 2026-12-01T09:30:00Z`. Every
  /// field as another process or a bridge wrote it, so shown with control characters escaped
  /// (`ControlCharacters.escaped`: no escape sequence or line of its own reaches a terminal) and
  /// cut: the host at `shownHostLength`, the command at `shownCommandLength` characters, the time
  /// at 40, each cut one ending in `…`.
  public var description: String {
    func shown(_ text: String, _ limit: Int) -> String {
      ControlCharacters.escaped(text.count > limit ? String(text.prefix(limit)) + "…" : text)
    }
    return "pid \(pid) on host \(shown(host, Self.shownHostLength)) ('\(shown(command, Self.shownCommandLength))'), since \(shown(since, 40))"
  }

  /// The longest host name a description shows whole, in characters (a DNS name has at most 253).
  public static let shownHostLength = 255
  /// The longest command line a description shows whole, in characters.
  public static let shownCommandLength = 1000

  /// This holder as `problem` accepts it: every field with its control characters escaped and
  /// cut to its limit in bytes (at a character's end), `pid` as is. What a lock file and a
  /// lease request carry (a command line may hold a newline, or be longer than 4 KiB).
  public var wellFormed: LockHolder {
    func cut(_ text: String, _ limit: Int) -> String {
      let text = ControlCharacters.escaped(text)
      guard text.utf8.count > limit else { return text }
      var kept = "", used = 0
      for character in text {
        used += character.utf8.count
        if used > limit { break }
        kept.append(character)
      }
      return kept
    }
    return LockHolder(pid: pid, host: cut(host, 255), command: cut(command, 4096), since: cut(since, 64))
  }

  /// Why this holder, sent to a bridge in a lease request, is refused (protocol 1.5,
  /// docs/bridge-protocol.md "Leases"): `pid` below 1, a `host` over 255 or a `command` over
  /// 4096 UTF-8 bytes, a `since` over 64, or a control character in any of them; `nil` when
  /// it is well-formed.
  public var problem: String? {
    if pid < 1 { return "holder.pid must be a process ID (1 or more)" }
    for (name, text, limit) in [("host", host, 255), ("command", command, 4096), ("since", since, 64)] {
      if text.utf8.count > limit { return "holder.\(name) is longer than \(limit) bytes" }
      if let scalar = ControlCharacters.first(in: text) {
        return "holder.\(name) holds a control character (\(ControlCharacters.codePoint(scalar)))"
      }
    }
    return nil
  }
}
