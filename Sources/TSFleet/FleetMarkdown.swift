import TSModel
import TSPlan

extension FleetReport {
  /// Characters of Markdown after which the remaining groups are only counted: a GitHub
  /// comment holds at most 65,536.
  public static let markdownLimit = 60_000

  /// The report as GitHub-flavoured Markdown (`plan --fleet --markdown`), for a pull-request
  /// comment or `$GITHUB_STEP_SUMMARY`: a heading with the totals, a `> [!WARNING]` alert for
  /// failed watches and for unsafe plans, then one `<details>` block per group of watches with
  /// the same outcome (as `review` groups them; failed and unsafe groups open, the others
  /// collapsed) naming its first `nameLimit × 10` watches and its manifests, with the plan's
  /// body in a code block. Groups with nothing to do are one line each. Past `markdownLimit`
  /// characters, the remaining groups are counted, not shown. `renderer` must not colour.
  /// Text from manifests and watches is escaped (`Markdown`). Ends with a newline.
  public func markdown(renderer: HumanPlanRenderer, options: FleetReviewOptions = FleetReviewOptions()) -> String {
    let shown = options.only.map { filter in watches.filter(filter.matches) } ?? watches
    let groups = Self.groups(shown, renderer: renderer)
    var out = "### tsapply \(operation) --fleet " + Markdown.escaped(fleetFile) + ": "
      + Markdown.escaped(String(totals.dropLast())) + "\n\n"
    if let only = options.only { out += "Shown: \(shown.count) of \(counted(watches.count, "watch", "watches")) (`--only \(only.text)`).\n\n" }
    let failed = shown.filter { $0.verdict.isFailure && !$0.verdict.isUnreachable || $0.verdict.isRetrying }
    if !failed.isEmpty {
      out += "> [!WARNING]\n> **\(counted(failed.count, "watch", "watches")) failed:** "
        + Markdown.escaped(names(failed, limit: options.nameLimit * 2)) + ".\n\n"
    }
    let unreachable = shown.filter(\.verdict.isUnreachable)
    if !unreachable.isEmpty {
      out += "> [!WARNING]\n> **\(counted(unreachable.count, "watch", "watches")) out of reach** (nothing was read or written): "
        + Markdown.escaped(names(unreachable, limit: options.nameLimit * 2)) + ".\n\n"
    }
    let unsafe = shown.filter { !$0.verdict.isFailure && $0.plan?.unsafeFindings.isEmpty == false }
    if !unsafe.isEmpty {
      out += "> [!CAUTION]\n> **\(counted(unsafe.count, "watch has", "watches have")) an unsafe plan** (a destructive change: "
        + "`apply --auto-approve` refuses it without `--allow-destroy`; the reviewed saved plan is applied): "
        + Markdown.escaped(names(unsafe, limit: options.nameLimit * 2)) + ".\n\n"
    }
    if shown.contains(where: { $0.basis != nil }) { out += Markdown.escaped(String(FleetStateBasis.caveat.dropLast())) + "\n\n" }
    for (index, group) in groups.enumerated() {
      let block = markdownGroup(group, renderer: renderer, options: options)
      if out.count + block.count > Self.markdownLimit {
        let rest = groups[index...]
        out += "\(rest.count) more group\(rest.count == 1 ? "" : "s") of \(counted(rest.reduce(0) { $0 + $1.rows.count }, "watch", "watches")) "
          + "left out (a comment holds 65,536 characters): see the job's log, or `--json`.\n\n"
        break
      }
      out += block
    }
    return out
  }

  private func markdownGroup(_ group: FleetGroup, renderer: HumanPlanRenderer, options: FleetReviewOptions) -> String {
    let rows = group.rows, first = rows[0]
    let who = rows.count == 1 ? ControlCharacters.escaped(first.name) : "\(rows.count) watches"
    let headline = headline(group, renderer: renderer)
    let body = Self.body(first, renderer: Self.shown(group, renderer: renderer))
    if body.isEmpty || (group.rank == 3 && first.plan?.resourceDrift.isEmpty != false) {
      let list = rows.count == 1 ? "" : ": " + Markdown.escaped(names(rows, limit: options.nameLimit * 10))
      return "- **" + Markdown.escaped(who) + "**" + list + " — " + Markdown.escaped(FleetStateBasis.line(headline, rows)) + "\n\n"
    }
    var note = rows.count == 1 ? "" : "Watches: " + Markdown.escaped(names(rows, limit: options.nameLimit * 10)) + "."
    if let manifests = rows.count == 1 ? first.manifests.isEmpty ? nil : "manifest " + first.manifests.joined(separator: " over ")
                                       : manifests(rows) {
      note += (note.isEmpty ? "" : "<br>\n") + Markdown.escaped(manifests.prefix(1).uppercased() + manifests.dropFirst())
    }
    if let basis = FleetStateBasis.text(rows) {
      note += (note.isEmpty ? "" : "<br>\n") + Markdown.escaped(basis.prefix(1).uppercased() + basis.dropFirst())
    }
    if group.rank == 1 { note = "**Unsafe:** " + (note.isEmpty ? "" : note) }
    return Markdown.details(summary: who + ": " + headline, note: note, body: body, open: group.rank <= 1)
  }
}
