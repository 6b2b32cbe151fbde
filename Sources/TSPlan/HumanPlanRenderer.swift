import TSModel

/// Renders a plan as text in Terraform's style.
///
/// Shape: a header explaining the symbols (`+` create, `~` update in-place, `-` destroy), one
/// block per resource change with only the changed fields as `old -> new` (formatted by
/// `FieldFormatter`; a paired contact in place as `~ contact "Mom" { ~ phoneNum = … -> … }`),
/// destructive changes as `# (!) …` lines under the resource they concern
/// (`safetyFindings(for:)`), the warnings, the summary `Plan: 2 to add, 1 to change, 0 to
/// destroy (contacts: 1 added).` with the list items behind the resource counts, and, for an
/// unsafe plan, the safety gate's verdict. An empty plan renders `No changes. The watch matches <manifest file>.` ANSI colour
/// codes appear only when `color` is true; with `redact`, no full phone number is printed.
/// Text from the watch or the manifest (addresses, values, warnings) has its control characters
/// escaped (`ControlCharacters`), so a hostile watch state cannot inject terminal escapes.
public struct HumanPlanRenderer: Sendable {
  /// Whether to emit ANSI colour codes (a terminal without `--no-color` and `NO_COLOR`).
  public var color: Bool
  /// Whether to mask phone numbers (`--redact`).
  public var redact: Bool
  /// With `redact`: each masked number's keyed fingerprint beside it (`"+******00" ‹kqztrb›`).
  public var fingerprints: PhoneFingerprints?

  /// A renderer with the given colour and redaction settings.
  public init(color: Bool, redact: Bool, fingerprints: PhoneFingerprints? = nil) {
    self.color = color
    self.redact = redact
    self.fingerprints = fingerprints
  }

  /// The whole plan text, ending with a newline.
  public func render(_ plan: Plan) -> String {
    var lines = drift(plan)
    if plan.isEmpty {
      lines.append(paint("No changes.", .bold, .green) + " The watch matches \(plan.manifestFile).")
    } else {
      lines += header(plan)
      for change in plan.resourceChanges { lines += block(change, plan: plan) + [""] }
    }
    lines += tail(plan)
    return lines.joined(separator: "\n") + "\n"
  }

  /// The plan without the lines that name its watch or manifest, ending with a newline: the
  /// drift note, the resource blocks, the warnings, the `Plan:` summary and the safety gate's
  /// verdict, or `No changes.` — equal for every watch given the same changes, so a fleet's
  /// review shows it once for all of them (`legend` goes above it, once).
  public func body(_ plan: Plan) -> String {
    var lines = drift(plan)
    if plan.isEmpty {
      lines.append(paint("No changes.", .bold, .green))
    } else {
      for change in plan.resourceChanges { lines += block(change, plan: plan) + [""] }
    }
    lines += tail(plan)
    return lines.joined(separator: "\n") + "\n"
  }

  /// The symbols' legend of `render`'s header, ending with a newline.
  public var legend: String {
    "Resource actions are indicated with the following symbols:\n  " + paint("+", .green) + " create\n  "
      + paint("~", .yellow) + " update in-place\n  " + paint("-", .red) + " destroy\n"
  }

  /// The plan's changes on one line, for a fleet's group of watches with the same plan: each
  /// resource's block without its comments, joined (`~ reminder.drinking { ~ interval = 2h -> 3h }`),
  /// or, for a block longer than `width` characters, its symbol, address and number of fields
  /// (`~ contacts (12 changes)`); `No changes.` for an empty plan. Masked as the blocks are.
  public func headline(_ plan: Plan, width: Int = 100) -> String {
    guard !plan.isEmpty else { return "No changes." }
    return plan.resourceChanges.map { change in
      let parts = block(change, plan: plan, aligned: false).filter { !$0.trimmingPrefix(while: \.isWhitespace).hasPrefix("#") }
        .map { String($0.trimmingPrefix(while: \.isWhitespace)) }
      let line = parts.joined(separator: " ")
      let fields = change.fields.count
      return line.count <= width ? line
        : mask(plan).adding([change]).text(symbol(change.action) + " " + ControlCharacters.escaped(change.address.rawValue))
          + " (\(fields) change\(fields == 1 ? "" : "s"))"
    }.joined(separator: ", ")
  }

  /// The warnings, then for a plan with changes its summary and the safety gate's verdict.
  private func tail(_ plan: Plan) -> [String] {
    var lines = warnings(plan)
    if !plan.isEmpty {
      let counts = plan.counts
      lines.append(paint("Plan:", .bold) + " \(counts.add) to add, \(counts.change) to change, \(counts.destroy) to destroy\(Self.listItems(plan)).")
      lines += unsafe(plan)
    }
    return lines
  }

  /// The list items behind the resource counts, e.g. ` (contacts: 10 removed)` or
  /// ` (contacts: 1 added; emergency contacts: 1 changed)`; empty when no list changes.
  static func listItems(_ plan: Plan) -> String {
    let parts = plan.listCounts.map { "\($0.list): \($0.counts.summary)" }
    return parts.isEmpty ? "" : " (" + parts.joined(separator: "; ") + ")"
  }

  /// The watch a plan was made for: `the watch sim:/abs/device.json (profile default)`.
  public static func watchPhrase(_ plan: Plan) -> String {
    "the watch " + (plan.device.map { ControlCharacters.escaped($0) + " " } ?? "") + "(profile \(plan.profile))"
  }

  /// The safety gate's verdict under the summary, when the plan is unsafe for an unattended apply.
  private func unsafe(_ plan: Plan) -> [String] {
    let findings = plan.unsafeFindings
    guard !findings.isEmpty else { return [] }
    let described = findings.map(\.description).joined(separator: "; ")
    return ["", paint("(!) Unsafe for an unattended apply:", .bold, .red) + " this plan "
              + mask(plan).text(described) + ".",
            "    'apply --auto-approve' refuses it unless --allow-destroy is also given."]
  }

  private func header(_ plan: Plan) -> [String] {
    ["tsapply compared \(plan.manifestFile) with \(Self.watchPhrase(plan))."]
      + legend.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
      + ["", "tsapply will perform the following actions:", ""]
  }

  /// Terraform's "Objects have changed outside of Terraform" note, when there is drift.
  private func drift(_ plan: Plan) -> [String] {
    guard !plan.resourceDrift.isEmpty else { return [] }
    var lines = [
      paint("Note: Objects have changed outside of tsapply", .bold),
      "",
      "tsapply detected the following changes made on the watch since the last \"tsapply apply\":",
      "",
    ]
    for change in plan.resourceDrift { lines += block(change, plan: plan, drift: true) + [""] }
    lines.append(plan.isEmpty ? "The manifest does not manage these, or already agrees with them: nothing will be undone."
                              : "Unless the manifest already states them, the actions below undo these changes.")
    return lines + ["", String(repeating: "─", count: 77), ""]
  }

  /// `aligned`: field names padded to one width (false for one-line headlines).
  func block(_ change: ResourceChange, plan: Plan, drift: Bool = false, aligned: Bool = true) -> [String] {
    let verb = switch (change.action, drift) {
    case (.create, false): "will be created"
    case (.update, false): "will be updated in-place"
    case (.delete, false): "will be destroyed"
    case (.create, true): "has been created"
    case (.update, true): "has changed"
    case (.delete, true): "has been deleted"
    }
    let address = ControlCharacters.escaped(change.address.rawValue)
    var lines = ["  " + paint("# \(address) \(verb)", .bold)]
    let counts = ContactCounts(change.fields)
    let list = change.address == .emergency ? "emergency contacts" : "contacts"
    if !counts.summary.isEmpty { lines.append("  # \(list): \(counts.summary)") }
    var single = plan
    single.resourceChanges = [change]
    if !drift {
      for finding in safetyFindings(for: single) { lines.append("  " + paint("# (!) \(finding)", .bold, .red)) }
    }
    lines.append("  " + symbol(change.action) + " \(address) {")
    lines += fieldLines(change.fields, aligned: aligned)
    lines.append("    }")
    // Names, notes and addresses are free text: a number written into one is masked too.
    let mask = redact ? mask(plan).adding([change]) : .off
    return lines.map(mask.text)
  }

  /// What `redact` masks in text about `plan`: its numbers (`PhoneRedaction.numbers(in:)`) by
  /// their digits, and everything phone-like.
  func mask(_ plan: Plan) -> PhoneRedaction.Mask {
    redact ? PhoneRedaction.Mask(redact: true).adding(plan) : .off
  }

  private func fieldLines(_ fields: [FieldChange], aligned: Bool) -> [String] {
    let formatter = FieldFormatter(redact: redact, fingerprints: redact ? fingerprints : nil)
    let width = aligned ? fields.filter { $0.field != "contacts" }.map(\.field.count).max() ?? 0 : 0
    return fields.map { field in
      let action: Action = field.before == nil ? .create : (field.after == nil ? .delete : .update)
      let name = field.field == "contacts" ? "contact" : field.field + String(repeating: " ", count: max(0, width - field.field.count))
      let value: String = switch action {
      case .create: formatter.format(field.after, field: field.field)
      case .delete: formatter.format(field.before, field: field.field) + (field.field == "contacts" ? "" : " -> null")
      case .update: field.field == "contacts" ? formatter.contactChange(field.before, field.after)
                                              : formatter.formatChange(field.before, field.after, field: field.field)
      }
      let separator = field.field == "contacts" ? " " : " = "
      return "      " + symbol(action) + " " + name + separator + value
    }
  }

  private func warnings(_ plan: Plan) -> [String] {
    guard !plan.warnings.isEmpty else { return [] }
    let phones = PhoneRedaction.numbers(in: plan)
    let texts = plan.warnings.map {
      ControlCharacters.escaped(redact ? PhoneRedaction.redactText($0.description, phones: phones) : $0.description)
    }
    return [paint("Warnings:", .bold, .yellow)] + texts.map { "  " + $0 } + [""]
  }

  private func symbol(_ action: Action) -> String {
    switch action {
    case .create: paint("+", .green)
    case .update: paint("~", .yellow)
    case .delete: paint("-", .red)
    }
  }

  enum Style: String {
    case bold = "1", red = "31", green = "32", yellow = "33"
  }

  func paint(_ text: String, _ styles: Style...) -> String {
    guard color else { return text }
    return "\u{1B}[" + styles.map(\.rawValue).joined(separator: ";") + "m" + text + "\u{1B}[0m"
  }
}
