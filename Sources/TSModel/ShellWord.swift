/// One word of a command line printed for a person to paste into a POSIX shell: the advice of
/// error messages and notes (`'tsapply plan -out changes.tfplan --device "sim:my dir/w.json"
/// m.yaml'`). Source of the rule: docs/device.md ("Advice in error messages names a watch…").
public enum ShellWord {
  /// Characters a word may hold and stay unquoted.
  static let plain = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-:+@%,=")

  /// `word` as one shell word: unchanged when it holds only letters, digits and `/._-:+@%,=`;
  /// otherwise (the empty word included) in double quotes with `"`, `\`, `$` and `` ` ``
  /// escaped. Double, not single, quotes: advice sits in single quotes of its own, so a single
  /// quote inside it would end them.
  public static func quoted(_ word: String) -> String {
    guard word.isEmpty || !word.allSatisfy(plain.contains) else { return word }
    var quoted = "\""
    for character in word {
      if "\"\\$`".contains(character) { quoted.append("\\") }
      quoted.append(character)
    }
    return quoted + "\""
  }
}
