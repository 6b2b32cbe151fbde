import TSModel

/// Renders a plan as text in Terraform's style.
///
/// Shape: a header explaining the symbols (`+` create, `~` update in-place, `-` destroy), one
/// block per resource change with only the changed fields as `old -> new`, in the manifest's
/// keys and spellings (`ManifestWords`, `FieldFormatter`: `~ lunch_break.end = "14:00" -> "13:30"`,
/// `~ repeat = workday -> [mon, wed, fri]`; a paired contact in place as
/// `~ contact "Mom" { ~ phone = … -> … }`), each line ending with where the manifest sets its
/// value (`# watch.yaml:12`, `sources`),
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
  /// Whether each field line of a planned change ends with where the manifest sets it
  /// (`# residents/room-12.yaml:12`, `FieldChange.source`); a line set at the same place as the
  /// line above (same file and line) leaves it out. Never on drift (no manifest set it) nor on one-line headlines.
  public var sources: Bool

  /// A renderer with the given colour, redaction and source settings.
  public init(color: Bool, redact: Bool, fingerprints: PhoneFingerprints? = nil, sources: Bool = true) {
    self.color = color
    self.redact = redact
    self.fingerprints = fingerprints
    self.sources = sources
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
  /// resource's block without its comments, joined (`~ reminder.drinking { ~ period.every = 2h -> 3h }`),
  /// or, for a block longer than `width` characters, its symbol, address and number of fields
  /// (`~ contacts (12 changes)`); `No changes.` for an empty plan. Masked as the blocks are.
  public func headline(_ plan: Plan, width: Int = 100) -> String {
    guard !plan.isEmpty else { return "No changes." }
    return plan.resourceChanges.map { change in
      let parts = block(change, plan: plan, aligned: false).filter { !$0.trimmingPrefix(while: \.isWhitespace).hasPrefix("#") }
        .map { String($0.trimmingPrefix(while: \.isWhitespace)) }
      let line = parts.joined(separator: " ")
      let fields = Self.rows(change, formatter: FieldFormatter(redact: false)).filter { !$0.template }.count
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
  /// For drift of the emergency list that alters whom an SOS press reaches
  /// (`ResourceChange.putsSOSAtRisk`): what it means for a press, in the words of the plan's
  /// `(!)` lines; `nil` otherwise.
  static func sosRisk(_ change: ResourceChange) -> String? {
    guard change.putsSOSAtRisk, case .emergency(let now)? = change.after else { return nil }
    if !now.isSosOn { return "SOS was switched off on the watch: a long press calls no one" }
    if now.contacts.isEmpty { return "the watch holds no emergency contact: a long press calls no one" }
    return "the emergency numbers changed on the watch: a long press calls others than the last apply left"
  }

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
            "    --auto-approve (apply, restore) refuses it unless --allow-destroy is also given."]
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
    // What the actions undo, exactly (`Plan.undoing`): a change the plan leaves is not said to be
    // undone (fresh-eyes finding: "the actions below undo these changes" beside a reminder the
    // wearer switched off, which the manifest does not switch).
    // Field by field (`Plan.leaves`): a resource whose drift the actions undo only in part says
    // which fields stay (fresh-eyes finding: "undo these changes" while `enabled` stayed).
    let mask = mask(plan)
    let name = { (address: ResourceAddress) in mask.text(ControlCharacters.escaped(address.rawValue)) }
    var undone: [ResourceAddress] = [], left: [ResourceAddress] = [], partly: [String] = []
    for change in plan.resourceDrift {
      let stays = plan.leaves(change)
      if stays.isEmpty {
        undone.append(change.address)
      } else if stays.count == change.fields.count {
        left.append(change.address)
      } else {
        let fields = stays.map { ManifestWords.key($0.field) }
        partly.append("\(name(change.address)) only in part (\(fields.joined(separator: ", ")) \(fields.count == 1 ? "stays" : "stay") as the watch has \(fields.count == 1 ? "it" : "them"))")
      }
    }
    var said: [String] = []
    if !undone.isEmpty { said.append("the changes to " + undone.map(name).joined(separator: ", ")) }
    said += partly
    let leftWords = left.isEmpty ? nil : left.map(name).joined(separator: ", ") + " \(left.count == 1 ? "stays" : "stay") as the watch has "
      + (left.count == 1 ? "it" : "them") + " (the manifest does not manage what changed there, or already agrees with it)"
    lines.append(said.isEmpty ? "The manifest does not manage these, or already agrees with them: nothing will be undone."
                 : left.isEmpty && partly.isEmpty ? "The actions below undo these changes."
                 : "The actions below undo " + said.joined(separator: "; ") + (leftWords.map { "; " + $0 } ?? "") + ".")
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
    } else if let risk = Self.sosRisk(change) {
      // What the plan marks when it makes it, drift marks when the watch did (fresh-eyes fe101:
      // `~ sos = true -> false` under drift without the plan's emphasis).
      lines.append("  " + paint("# (!) \(risk)", .bold, .red))
    }
    lines.append("  " + symbol(change.action) + " \(address) {")
    // Names, notes and addresses are free text: a number written into one is masked too (file
    // names in the source comments are not).
    let mask = redact ? mask(plan).adding([change]) : .off
    return lines.map(mask.text) + fieldLines(change, aligned: aligned, sources: aligned && sources && !drift, drift: drift, mask: mask)
      + ["    }"]
  }

  /// What `redact` masks in text about `plan`: its numbers (`PhoneRedaction.numbers(in:)`) by
  /// their digits, and everything phone-like.
  func mask(_ plan: Plan) -> PhoneRedaction.Mask {
    redact ? PhoneRedaction.Mask(redact: true).adding(plan) : .off
  }

  /// One line per changed field, in the manifest's words (`ManifestWords`): `~ repeat = workday
  /// -> [mon, wed, fri]`, `+ contact {name = "Lee", phone = "+15550103"}`, `~ sos = false -> true`.
  /// A reminder whose schedule changes kind (or is created or deleted) shows the schedule whole
  /// as the manifest writes it: `- period = {start = "09:00", end = "18:00", every = 1h}` then
  /// `+ at = ["08:00"]`.
  /// With `sources`, a line whose source differs from the line above ends with it, the
  /// comments of a block in one column (`# watch.yaml:12`).
  private func fieldLines(_ change: ResourceChange, aligned: Bool, sources: Bool, drift: Bool, mask: PhoneRedaction.Mask) -> [String] {
    let formatter = FieldFormatter(redact: redact, fingerprints: redact ? fingerprints : nil)
    // A one-line headline shows what the manifest asks for, not what the template adds.
    let rows = Self.rows(change, formatter: formatter, drift: drift).filter { aligned || !$0.template }
    let width = aligned ? rows.filter { $0.name != "contact" }.map(\.name.count).max() ?? 0 : 0
    let texts = rows.map { row in
      let name = row.name == "contact" ? row.name : row.name + String(repeating: " ", count: max(0, width - row.name.count))
      return (symbol: symbol(row.action), rest: " " + name + (row.name == "contact" ? " " : " = ") + mask.text(row.value))
    }
    var shown: [String?] = []
    var previous: SourcePosition?
    for row in rows {
      guard !row.template else {
        shown.append(Self.templateComment)
        previous = nil
        continue
      }
      let same = previous.map { $0.file == row.source?.file && $0.line == row.source?.line } ?? false
      shown.append(sources && !same ? row.source.map { "# " + ControlCharacters.escaped($0.file) + ":\($0.line)" } : nil)
      previous = row.source
    }
    // Masking keeps lengths.
    let column = Self.commentColumn(zip(texts, shown).filter { $0.1 != nil }.map { 7 + $0.0.rest.count })
    return zip(texts, shown).map { text, source in
      let line = "      " + text.symbol + text.rest
      guard let source else { return line }
      return line + Self.commentGap(after: 7 + text.rest.count, column: column) + source
    }
  }

  /// The widest a field line is padded to before its source comment; a longer line is not
  /// counted when the comments of its block are aligned (`commentColumn`).
  public static let sourceColumn = 80

  /// Where the trailing comments of lines `lengths` characters long start, less the two spaces
  /// before them: the length of the longest line that fits within `sourceColumn`, as Terraform
  /// aligns `=` by the longest key of a block. A longer line (a contact with a long name, a
  /// long list of times) is left out, so it does not push every other comment to the cap; its
  /// own comment follows it after two spaces (`commentGap`).
  public static func commentColumn(_ lengths: [Int]) -> Int {
    lengths.filter { $0 <= sourceColumn }.max() ?? 0
  }

  /// The spaces between a line `length` characters long and its comment aligned at `column`
  /// (`commentColumn`): at least two.
  public static func commentGap(after length: Int, column: Int) -> String {
    String(repeating: " ", count: max(2, column + 2 - length))
  }

  /// A field line before it is laid out: its symbol, manifest key, formatted value(s) and where
  /// the manifest sets it.
  struct Row {
    var action: Action
    var name: String
    var value: String
    var source: SourcePosition?
    /// The value comes from the watch's custom-reminder template, not the manifest.
    var template = false
  }

  /// The comment on a field line whose value the watch's template gives (`Row.template`).
  static let templateComment = "# the watch's template"


  /// The rows of `change` (see `fieldLines`).
  /// A reminder being created (not drift) also shows what the watch's template gives it
  /// (`ReminderField.template`), each such row marked `template`.
  static func rows(_ change: ResourceChange, formatter: FieldFormatter, drift: Bool = false) -> [Row] {
    let schedule: Set<String> = ["timeType", "startTime", "endTime", "interval", "timePoints"]
    var fields = change.fields
    var fromTemplate: Set<String> = []
    if !drift, change.action == .create, case .reminder(let after)? = change.after {
      let given = ReminderField.template(after, given: Set(fields.map(\.field)))
      fromTemplate = Set(given.map(\.field))
      fields = ReminderField.ordered(fields + given)
    }
    let switched = fields.contains { $0.field == "timeType" }
    var rows: [Row] = []
    for field in fields {
      let template = fromTemplate.contains(field.field)
      if switched && schedule.contains(field.field) {
        guard field.field == "timeType" else { continue }
        if field.before != nil, case .reminder(let before)? = change.before {
          rows.append(Row(action: .delete, name: ManifestWords.schedule(field.before), value: formatter.schedule(before) + " -> null",
                          source: field.source))
        }
        if field.after != nil, case .reminder(let after)? = change.after {
          rows.append(Row(action: .create, name: ManifestWords.schedule(field.after), value: formatter.schedule(after),
                          source: field.source, template: template))
        }
        continue
      }
      let action: Action = field.before == nil ? .create : (field.after == nil ? .delete : .update)
      let isContact = field.field == "contacts"
      var value: String = switch action {
      case .create: formatter.format(field.after, field: field.field)
      case .delete: formatter.format(field.before, field: field.field) + (isContact ? "" : " -> null")
      case .update: isContact ? formatter.contactChange(field.before, field.after)
                              : formatter.formatChange(field.before, field.after, field: field.field)
      }
      // A lunch break switched on for the hours the watch already holds: no field shows them.
      if field.field == "isLunchBreakDNDEnabled", field.after == .bool(true), case .reminder(let after)? = change.after,
         !fields.contains(where: { $0.field == "lunchBreakDNDStartTime" || $0.field == "lunchBreakDNDEndTime" }),
         let start = MinuteOfDay(rawValue: after.lunchBreakDNDStartTime), let end = MinuteOfDay(rawValue: after.lunchBreakDNDEndTime),
         start < end {  // a window: not where only the switch is stored (fit-basic holds 0–0; fresh-eyes fe97 #5)
        value += " (\(start)–\(end), the hours the watch holds)"
      }
      rows.append(Row(action: action, name: ManifestWords.key(field.field), value: value, source: field.source, template: template))
    }
    return rows
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
