import TSModel

extension JSONPlanRenderer {
  /// `changes` in the plan's `resource_changes` shape (for documents that carry changes outside
  /// a plan, e.g. a monitor's drift events); with `redact`, every `phoneNum` masked and the
  /// numbers of the changes (`PhoneRedaction.numbers(in:)`) masked in their free text.
  public static func changes(_ changes: [ResourceChange], redact: Bool) -> JSONValue {
    let array = JSONValue.array(changes.map(resourceChange))
    return redact ? masked(array, of: changes) : array
  }

  /// `rendered` — what `changes(changes, redact: false)` gave — as `changes(changes, redact:
  /// true)` gives it, for a caller that needs both without rendering the changes twice (a
  /// monitor digests a drift's changes as they are and shows them masked).
  public static func masked(_ rendered: JSONValue, of changes: [ResourceChange]) -> JSONValue {
    rendered.redactingPhones(known: PhoneRedaction.KnownPhones(PhoneRedaction.numbers(in: changes)))
  }

  /// `findings` in the plan's `safety_findings` shape: `{kind, message, unsafe}` each; each
  /// message (which can list addresses) masked by `mask`.
  public static func findings(_ findings: [SafetyFinding], mask: PhoneRedaction.Mask = .off) -> JSONValue {
    .array(findings.map {
      .object(["kind": .string($0.kind), "message": .string(mask.text($0.description)), "unsafe": .bool($0.isUnsafe)])
    })
  }
}
