import TSModel

/// One option or flag a command accepts.
public struct OptionSpec: Sendable {
  /// Every spelling, e.g. `["--out", "-out", "-o"]`; the first is the canonical name.
  public var names: [String]
  /// Whether the option takes a value (`--device sim:x`, `--device=sim:x`).
  public var takesValue: Bool
  /// Placeholder for the value in help, e.g. `FILE`.
  public var valueName: String
  /// One line of help.
  public var help: String
  /// What shell completion offers for the value: by default files when the value is a `…FILE`,
  /// nothing otherwise (and nothing for a flag).
  public var completion: CompletionValues

  /// - Parameter completion: what shell completion offers for the value; `nil` chooses files
  ///   for a value named `…FILE` and nothing otherwise.
  public init(_ names: [String], value: String? = nil, help: String, completion: CompletionValues? = nil) {
    self.names = names
    self.takesValue = value != nil
    self.valueName = value ?? ""
    self.help = help
    self.completion = completion ?? (value?.hasSuffix("FILE") == true ? .files : .none)
  }

  /// The canonical name, e.g. `--out`.
  public var name: String { names[0] }
}

/// The command line after parsing: flags seen, option values, positional arguments.
public struct ParsedArguments: Sendable, Equatable {
  /// Canonical names of flags that were given.
  public var flags: Set<String> = []
  /// Values by canonical option name, in command-line order.
  public var values: [String: [String]] = [:]
  /// Positional arguments in order (`-` counts as positional: standard input).
  public var positionals: [String] = []

  /// An empty result: no flags, values or positionals.
  public init() {}

  /// Whether the flag with canonical name `name` was given.
  public func has(_ name: String) -> Bool { flags.contains(name) }
  /// The last value given for `name`, if any.
  public func value(_ name: String) -> String? { values[name]?.last }

  /// Parses `arguments` against `options`.
  ///
  /// Accepts `--name value`, `--name=value`, Terraform's single-dash forms when listed in
  /// `names` (`-out FILE`, `-auto-approve`), and `--` to end options.
  /// - Throws: `UsageError` for an unknown option (with a did-you-mean suggestion) or a
  ///   missing value.
  public static func parse(_ arguments: [String], options: [OptionSpec]) throws(UsageError) -> ParsedArguments {
    var result = ParsedArguments()
    var index = 0
    var optionsEnded = false
    while index < arguments.count {
      let argument = arguments[index]
      index += 1
      if optionsEnded || argument == "-" || !argument.hasPrefix("-") {
        result.positionals.append(argument)
        continue
      }
      if argument == "--" {
        optionsEnded = true
        continue
      }
      let (name, inlineValue) = splitInline(argument)
      guard let spec = options.first(where: { $0.names.contains(name) }) else {
        let known = options.flatMap(\.names)
        var message = "unknown option '\(name)'"
        if let suggestion = closestMatch(to: name, in: known) { message += "; did you mean '\(suggestion)'?" }
        throw UsageError(message)
      }
      if spec.takesValue {
        let value: String
        if let inlineValue {
          value = inlineValue
        } else if index < arguments.count {
          value = arguments[index]
          // Another of the command's options where the value should be (`plan -out --device sim:x.json`):
          // taken as the value, it would be a file named `--device`.
          if value.hasPrefix("-"), options.contains(where: { $0.names.contains(splitInline(value).0) }) {
            throw UsageError("option '\(name)' needs a value (\(spec.valueName)), but the next argument is the option '\(splitInline(value).0)'; "
              + "give the value right after '\(name)'")
          }
          index += 1
        } else {
          throw UsageError("option '\(name)' needs a value (\(spec.valueName))")
        }
        result.values[spec.name, default: []].append(value)
      } else {
        if inlineValue != nil { throw UsageError("option '\(name)' takes no value") }
        result.flags.insert(spec.name)
      }
    }
    return result
  }

  private static func splitInline(_ argument: String) -> (String, String?) {
    guard let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
    return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
  }
}

/// The candidate closest to `word` by edit distance, if it is close enough to be a likely typo
/// (distance at most a third of the longer word, and at most 3). Same as `Suggestion.closest`.
public func closestMatch(to word: String, in candidates: [String]) -> String? {
  Suggestion.closest(to: word, in: candidates)
}

/// Edit distance between two strings, counted in Characters (`Suggestion.editDistance`).
public func editDistance(_ a: String, _ b: String) -> Int {
  Suggestion.editDistance(a, b)
}

/// Durations on the command line, in Terraform's (Go's) spelling: a sequence of numbers with
/// units `ms`, `s`, `m`, `h`, e.g. `0s`, `30s`, `1m30s`, `500ms`; a bare `0` is zero.
public enum DurationArgument {
  /// The longest duration accepted: one week (`DurationText.maximum`).
  public static let maximum = DurationText.maximum

  /// The duration `text` spells, or `nil` when it is not one (`DurationText.parse`).
  public static func parse(_ text: String) -> Duration? { DurationText.parse(text) }

  /// `value` of `option` as a duration.
  /// - Throws: `UsageError` naming the option and showing the expected spelling.
  public static func value(_ value: String, option: String) throws(UsageError) -> Duration {
    guard let duration = parse(value) else {
      throw UsageError("\(option) expects a duration such as 0s, 30s, 5m or 1h30m (at most 168h), got '\(value)'")
    }
    return duration
  }
}
