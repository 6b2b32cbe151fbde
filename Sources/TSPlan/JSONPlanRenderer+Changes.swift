import TSModel

extension JSONPlanRenderer {
  /// `changes` in the plan's `resource_changes` shape (for documents that carry changes outside
  /// a plan, e.g. a monitor's drift events); with `redact`, every `phoneNum` masked.
  public static func changes(_ changes: [ResourceChange], redact: Bool) -> JSONValue {
    let array = JSONValue.array(changes.map(resourceChange))
    return redact ? array.redactingPhones() : array
  }

  /// `findings` in the plan's `safety_findings` shape: `{kind, message, unsafe}` each.
  public static func findings(_ findings: [SafetyFinding]) -> JSONValue {
    .array(findings.map { .object(["kind": .string($0.kind), "message": .string($0.description), "unsafe": .bool($0.isUnsafe)]) })
  }
}
