import TSModel

/// Renders a plan as GitHub-flavoured Markdown (`tsapply plan --markdown`), for a pull-request
/// comment or `$GITHUB_STEP_SUMMARY`.
///
/// Shape: a `### tsapply plan: 0 to add, 1 to change, 0 to destroy` heading (or `no changes`),
/// a line naming the manifest and the watch, the safety gate's verdict as a `> [!WARNING]` alert
/// when the plan is unsafe, then the plan's body (`HumanPlanRenderer.body`, no colour) in a
/// collapsed `<details>` block holding a fenced code block. Text from the manifest or the watch
/// goes only into code spans and code blocks whose fences are longer than any run of backticks
/// in it, and into HTML with `&`, `<`, `>` and `"` escaped, so a name cannot inject Markdown or
/// HTML. With `redact`, phone numbers are masked as in the human plan.
public struct MarkdownPlanRenderer: Sendable {
  /// Whether to mask phone numbers (`--redact`).
  public var redact: Bool
  /// Fingerprints beside masked numbers (`--redact`), as in the human plan.
  public var fingerprints: PhoneFingerprints?

  /// A renderer with the given redaction.
  public init(redact: Bool, fingerprints: PhoneFingerprints? = nil) {
    self.redact = redact
    self.fingerprints = fingerprints
  }

  /// The human renderer whose text the Markdown wraps.
  public var human: HumanPlanRenderer { HumanPlanRenderer(color: false, redact: redact, fingerprints: fingerprints) }

  /// The whole Markdown, ending with a newline.
  public func render(_ plan: Plan) -> String {
    let counts = plan.counts
    var out = "### tsapply plan: " + (plan.isEmpty ? "no changes" : "\(counts.add) to add, \(counts.change) to change, \(counts.destroy) to destroy")
      + "\n\n"
    out += "Compared " + Markdown.code(plan.manifestFile) + " with " + Markdown.code(HumanPlanRenderer.watchPhrase(plan)) + ".\n\n"
    if let warning = Self.unsafeAlert(plan, human: human) { out += warning + "\n" }
    if plan.isEmpty && plan.resourceDrift.isEmpty { return out + "No changes: the watch matches its manifest.\n" }
    out += Markdown.details(summary: plan.isEmpty ? "Changes made on the watch since the last apply" : "Show the plan",
                            body: human.body(plan), open: false)
    return out
  }

  /// The safety gate's verdict as a GitHub alert, ending with a newline; `nil` when safe.
  public static func unsafeAlert(_ plan: Plan, human: HumanPlanRenderer) -> String? {
    let findings = plan.unsafeFindings
    guard !findings.isEmpty else { return nil }
    let described = human.mask(plan).text(findings.map(\.description).joined(separator: "; "))
    return "> [!WARNING]\n> **Unsafe for an unattended apply:** this plan " + Markdown.escaped(described)
      + ". `--auto-approve` (apply, restore) refuses it unless `--allow-destroy` is also given; a reviewed saved plan is applied.\n"
  }
}

/// Markdown pieces that are safe for any text.
public enum Markdown {
  /// `text` as an inline code span: delimited by one more backtick than its longest run, with
  /// spaces inside when it starts or ends with a backtick; control characters escaped and line
  /// breaks as spaces.
  public static func code(_ text: String) -> String {
    let flat = ControlCharacters.escaped(text.replacingOccurrences(of: "\n", with: " "))
    let fence = String(repeating: "`", count: longestRun(of: "`", in: flat) + 1)
    let pad = flat.hasPrefix("`") || flat.hasSuffix("`") ? " " : ""
    return fence + pad + flat + pad + fence
  }

  /// `text` for running Markdown or HTML: every character Markdown or HTML could read as
  /// syntax escaped (`\*`, `&lt;`), control characters escaped.
  public static func escaped(_ text: String) -> String {
    var out = ""
    for character in html(text) {
      if "\\`*_[]()#|~!".contains(character) { out.append("\\") }
      out.append(character)
    }
    return out
  }

  /// `text` for HTML (a `<summary>`, where Markdown is not read): `&`, `<`, `>`, `"` escaped,
  /// control characters escaped, line breaks as spaces.
  public static func html(_ text: String) -> String {
    var out = ""
    for character in ControlCharacters.escaped(text) {
      switch character {
      case "&": out += "&amp;"
      case "<": out += "&lt;"
      case ">": out += "&gt;"
      case "\"": out += "&quot;"
      case "\n": out += " "
      default: out.append(character)
      }
    }
    return out
  }

  /// A `<details>` block with `summary` (HTML-escaped), then `note` (Markdown already made safe,
  /// e.g. of `code(_:)` and `escaped(_:)`; may be empty), then `body` in a fenced code block
  /// whose fence is longer than any run of backticks in it. Ends with a blank line.
  public static func details(summary: String, note: String = "", body: String, open: Bool) -> String {
    let fence = String(repeating: "`", count: max(3, longestRun(of: "`", in: body) + 1))
    let text = body.hasSuffix("\n") ? body : body + "\n"
    return "<details\(open ? " open" : "")><summary>\(html(summary))</summary>\n\n"
      + (note.isEmpty ? "" : note + "\n\n") + "\(fence)text\n\(text)\(fence)\n\n</details>\n\n"
  }

  static func longestRun(of mark: Character, in text: String) -> Int {
    var longest = 0, current = 0
    for character in text {
      current = character == mark ? current + 1 : 0
      longest = max(longest, current)
    }
    return longest
  }
}
