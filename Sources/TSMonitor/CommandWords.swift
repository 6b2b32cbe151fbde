/// A command given as one string (`--on-sos 'notify-send "SOS on the watch"'`) split into the
/// program and its arguments, so it can be run directly, without a shell.
///
/// The rules, a small part of the POSIX shell's (docs/monitor.md "Running a command"):
/// - words are separated by unquoted spaces, tabs and newlines;
/// - `'…'` keeps everything up to the next `'` as it is;
/// - `"…"` keeps everything up to the next unescaped `"`; inside, `\"` is `"` and `\\` is `\`,
///   any other backslash stays;
/// - outside quotes, `\` makes the next character an ordinary one (`\ ` a space inside a word);
/// - quotes join with what touches them (`--name="Sam Roe"` is one word), and `''` is an empty word;
/// - nothing else is special: `$VAR`, `$(…)`, `` `…` ``, `*`, `~`, `|`, `;`, `&`, `>` and `#`
///   are ordinary characters. There are no variables, substitutions, globs, pipes or
///   redirections, because no shell ever sees the text.
public enum CommandWords {
  /// Why a command string cannot be split.
  public enum Problem: Error, Hashable, Sendable, CustomStringConvertible {
    /// The string holds no word at all.
    case empty
    /// A quote (`'` or `"`) opened at this character offset is never closed.
    case unterminatedQuote(Character, offset: Int)
    /// The string ends with a backslash that escapes nothing.
    case trailingBackslash

    public var description: String {
      switch self {
      case .empty: "the command is empty"
      case .unterminatedQuote(let quote, let offset): "the \(quote) at character \(offset + 1) is never closed"
      case .trailingBackslash: "it ends with a backslash that escapes nothing"
      }
    }
  }

  /// The words of `text`: the program first, then its arguments.
  /// - Throws: `Problem` for an empty command, an unclosed quote or a trailing backslash.
  public static func split(_ text: String) throws(Problem) -> [String] {
    var words: [String] = []
    var word = ""
    var inWord = false
    var characters = Array(text).enumerated().makeIterator()
    while let (offset, character) = characters.next() {
      switch character {
      case " ", "\t", "\n", "\r":
        if inWord { words.append(word) }
        word = ""
        inWord = false
      case "'":
        inWord = true
        var closed = false
        while let (_, next) = characters.next() {
          if next == "'" { closed = true; break }
          word.append(next)
        }
        if !closed { throw .unterminatedQuote("'", offset: offset) }
      case "\"":
        inWord = true
        var closed = false
        while let (_, next) = characters.next() {
          if next == "\"" { closed = true; break }
          if next == "\\" {
            guard let (_, escaped) = characters.next() else { break }
            if escaped != "\"" && escaped != "\\" { word.append("\\") }
            word.append(escaped)
          } else {
            word.append(next)
          }
        }
        if !closed { throw .unterminatedQuote("\"", offset: offset) }
      case "\\":
        guard let (_, escaped) = characters.next() else { throw .trailingBackslash }
        inWord = true
        word.append(escaped)
      default:
        inWord = true
        word.append(character)
      }
    }
    if inWord { words.append(word) }
    guard !words.isEmpty else { throw .empty }
    return words
  }
}
