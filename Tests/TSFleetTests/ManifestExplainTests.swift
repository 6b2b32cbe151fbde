import Testing
import TSFleet
import TSManifest
import TSModel

/// `plan --fleet --watch --explain`: each value of a watch's merged manifest names the file and
/// line that set it and the ones it overrode; a value a layer gives that the watch does not get
/// says what dropped it.
@Suite struct ManifestExplainTests {
  static let common = """
    reminders:
      sedentary: {enabled: true, repeat: workday, notes: Stand up}
      custom:
        - {name: Lunch, at: ["12:00"]}
    contacts:
      - {name: Ward desk, phone: "+1 555 0100"}
    emergency:
      sos: false

    """
  static let ward = """
    contacts:
      - {name: Ward desk, phone: "+1 555 0199"}
    emergency:
      sos: true
      contacts:
        - {contact: Ward desk}

    """
  static let own = """
    reminders:
      sedentary: {enabled: false}
      custom:
        - {name: Lunch, remove: true}

    """

  struct Case: Sendable, CustomTestStringConvertible {
    var path: String
    var line: String
    var overrides: [String]
    var testDescription: String { path }
  }

  /// `path` → its text line (value and `# file:line`, with what dropped it), and its overrides.
  static let cases: [Case] = [
    Case(path: "contacts[\"Ward desk\"].phone", line: "contacts[\"Ward desk\"].phone = \"+15550199\"  # ward.yaml:2",
         overrides: ["common.yaml:6: \"+15550100\""]),
    Case(path: "emergency.sos", line: "emergency.sos = true  # ward.yaml:4", overrides: ["common.yaml:8: false"]),
    Case(path: "emergency.contacts[\"Ward desk\"].contact", line: "emergency.contacts[\"Ward desk\"].contact = \"Ward desk\"  # ward.yaml:6",
         overrides: []),
    Case(path: "reminders.sedentary.enabled", line: "reminders.sedentary.enabled = false  # own.yaml:2", overrides: ["common.yaml:2: true"]),
    Case(path: "reminders.sedentary.notes",
         line: "reminders.sedentary.notes = \"Stand up\"  # common.yaml:2, not kept: reminders.sedentary is replaced whole by own.yaml:2, which leaves it out",
         overrides: []),
    Case(path: "reminders.custom[\"Lunch\"].at",
         line: "reminders.custom[\"Lunch\"].at = [\"12:00\"]  # common.yaml:4, not kept: removed by own.yaml:4", overrides: []),
  ]

  @Test(arguments: cases)
  func eachValueNamesItsFileAndWhatItOverrode(_ c: Case) throws {
    let manifests = [try manifest(Self.common, file: "common.yaml", resolvesReferences: false),
                     try manifest(Self.ward, file: "ward.yaml", resolvesReferences: false),
                     try manifest(Self.own, file: "own.yaml", resolvesReferences: false)]
    let lines = ManifestExplain.explain(manifests)
    let line = try #require(lines.first { $0.path == c.path }, "\(lines.map(\.path))")
    #expect(line.overrides.map { "\($0.source.file):\($0.source.line): \($0.value)" } == c.overrides)
    let text = ManifestExplain.text([line], watch: "room-1", files: ["own.yaml", "ward.yaml", "common.yaml"], redact: false)
    #expect(text.hasSuffix("\n\n" + c.line + "\n" + c.overrides.map { "    overrides \($0)\n" }.joined()), "\(text)")
  }

  /// In block style too, each value names its key's line (as the plan does, docs/plan.md
  /// "Where a value is set"), and a unit replaced whole names the replacing reminder's key.
  @Test func blockStyleValuesNameTheirKeysLines() throws {
    let common = """
      reminders:
        drinking:
          enabled: true
          notes: Drink
          lunch_break:
            start: "12:00"
            end: "13:15"
      contacts:
        - name: Nurse
          phone: "+15550111"
          short_name: Z

      """
    let own = """
      reminders:
        drinking:
          enabled: false

      """
    let lines = ManifestExplain.explain([try manifest(common, file: "common.yaml", resolvesReferences: false),
                                         try manifest(own, file: "own.yaml", resolvesReferences: false)])
    let named = Dictionary(uniqueKeysWithValues: lines.map { ($0.path, "\($0.source.file):\($0.source.line)") })
    #expect(named == ["reminders.drinking.enabled": "own.yaml:3", "reminders.drinking.notes": "common.yaml:4",
                      "reminders.drinking.lunch_break": "common.yaml:5", "contacts[\"Nurse\"].phone": "common.yaml:10",
                      "contacts[\"Nurse\"].short_name": "common.yaml:11"], "\(named)")
    let notes = try #require(lines.first { $0.path == "reminders.drinking.notes" })
    #expect(notes.dropped == "reminders.drinking is replaced whole by own.yaml:2, which leaves it out")
  }

  /// Every value the merged manifest holds is explained once, and nothing it does not hold is
  /// explained as kept.
  @Test func keptValuesAreExactlyTheMergedOnes() throws {
    let manifests = [try manifest(Self.common, file: "common.yaml", resolvesReferences: false),
                     try manifest(Self.ward, file: "ward.yaml", resolvesReferences: false),
                     try manifest(Self.own, file: "own.yaml", resolvesReferences: false)]
    let kept = ManifestExplain.explain(manifests).filter { $0.dropped == nil }.map(\.path)
    #expect(Set(kept).count == kept.count)
    #expect(Set(kept) == ["contacts[\"Ward desk\"].phone", "emergency.sos", "emergency.contacts[\"Ward desk\"].contact",
                          "reminders.sedentary.enabled"])
  }

  /// With `redact`, no phone number is printed beyond its last two digits.
  @Test func redactMasksPhones() throws {
    let manifests = [try manifest(Self.common, file: "common.yaml", resolvesReferences: false),
                     try manifest(Self.ward, file: "ward.yaml", resolvesReferences: false)]
    let text = ManifestExplain.text(ManifestExplain.explain(manifests), watch: "room-1", files: ["ward.yaml", "common.yaml"], redact: true)
    #expect(!text.contains("5550199") && !text.contains("5550100"), "\(text)")
    #expect(text.contains("\"+******99\"") && text.contains("\"+******00\""), "\(text)")
  }
}
