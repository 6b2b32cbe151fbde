import Foundation
import Testing
import TSTestSupport

/// `tsapply validate` run as a built binary: examples pass, fixtures fail with exact messages,
/// standard input and JSON output work.
@Suite struct ValidateTests {
  static let root = TSApplyBinary.packageRoot
  static let examples: [String] = {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("examples").path)) ?? []
    return names.filter { $0.hasSuffix(".yaml") }.sorted()
  }()
  static let badContacts = root.appendingPathComponent("Tests/TSManifestTests/Fixtures/bad-contacts.yaml")

  @Test func examplesDirectoryHasTheThreeExamples() {
    #expect(Set(["watch.yaml", "minimal.yaml", "family.yaml"]).isSubset(of: Set(Self.examples)))
  }

  @Test(arguments: examples)
  func everyExampleIsValid(_ name: String) throws {
    let result = try TSApplyBinary.run(["validate", "examples/\(name)"], in: Self.root)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == "examples/\(name) is valid.\n")
    #expect(result.stderr == "")
  }

  @Test func invalidManifestExitsOneWithCompilerStyleDiagnostics() throws {
    let result = try TSApplyBinary.run(["validate", "Tests/TSManifestTests/Fixtures/bad-contacts.yaml"], in: Self.root)
    #expect(result.status == 1)
    #expect(result.stdout == "")
    let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    #expect(Array(lines.prefix(3)) == [
      "Tests/TSManifestTests/Fixtures/bad-contacts.yaml:4:28: error: contacts[1].phone: \"1-800-FLOWERS\" contains letters; write the number in digits only (letter numbers and extensions cannot be stored, and tsapply never guesses a number)",
      "  - {name: Florist, phone: 1-800-FLOWERS}",
      "                           ^",
    ])
    #expect(lines.contains("Tests/TSManifestTests/Fixtures/bad-contacts.yaml:3:12: warning: contacts[0].name: is 36 bytes; the watch stores at most 32, so it will be stored as \"Bartholomew Fitzgerald-Hawthorne\" (32 bytes)"))
    #expect(lines.suffix(2) == ["Tests/TSManifestTests/Fixtures/bad-contacts.yaml is not valid: 8 errors, 2 warnings.", ""])
  }

  @Test func standardInputIsReadForDash() throws {
    let valid = try TSApplyBinary.run(["validate", "-"], stdin: "contacts:\n  - {name: Alex, phone: \"+15550100\"}\n")
    #expect(valid.status == 0)
    #expect(valid.stdout == "- is valid.\n")
    let invalid = try TSApplyBinary.run(["validate", "-"], stdin: "reminders:\n  drinking:\n    enabled: yes\n")
    #expect(invalid.status == 1)
    #expect(invalid.stderr == """
      -:3:14: error: reminders.drinking.enabled: "yes" is not a boolean; write true (tsapply reads only true and false)
          enabled: yes
                   ^
      - is not valid: 1 error.

      """)
  }

  @Test func jsonListsErrorsAndWarningsSeparately() throws {
    let result = try TSApplyBinary.run(["validate", "--json", Self.badContacts.path])
    #expect(result.status == 1)
    let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    #expect(object["valid"] as? Bool == false)
    #expect(object["format_version"] as? String == "1")
    let errors = try #require(object["errors"] as? [[String: Any]])
    let warnings = try #require(object["warnings"] as? [[String: Any]])
    #expect(errors.count == 8)
    #expect(warnings.count == 2)
    #expect(errors.first?["line"] as? Int == 4)
    #expect(errors.first?["column"] as? Int == 28)
    #expect(errors.first?["field"] as? String == "contacts[1].phone")
  }

  @Test func defaultFileIsWatchYamlInTheCurrentDirectory() throws {
    let directory = try TSApplyBinary.temporaryDirectory()
    let missing = try TSApplyBinary.run(["validate"], in: directory)
    #expect(missing.status == 1)
    #expect(missing.stderr == "error: cannot read watch.yaml: no such file or directory\nwatch.yaml is not valid: 1 error.\n")
    try Data("contacts: []\n".utf8).write(to: directory.appendingPathComponent("watch.yaml"))
    let found = try TSApplyBinary.run(["validate"], in: directory)
    #expect(found.status == 0)
    #expect(found.stdout == "watch.yaml is valid.\n")
  }

  @Test func warningsAloneExitZero() throws {
    let long = String(repeating: "a", count: 40)
    let result = try TSApplyBinary.run(["validate", "-"], stdin: "contacts:\n  - {name: \(long), phone: \"1\"}\n")
    #expect(result.status == 0)
    #expect(result.stdout == "- is valid (1 warning).\n")
    #expect(result.stderr.hasPrefix("-:2:12: warning: contacts[0].name: is 40 bytes"))
  }

  /// `--profile NAME` checks a platform's capacities without a watch (issue 24: 6 emergency
  /// contacts on a watch that holds 5, contacts on npk), with the messages `plan` gives.
  static let profileCases: [(profile: String, errors: [String])] = [
    ("default", ["-:5:3: error: emergency.contacts: 6 emergency contacts, but the watch (profile default) holds at most 5: remove 1 of them"]),
    ("npk", ["-:1:1: error: contacts: the watch (profile npk) does not store regular contacts; remove the `contacts` section (in a fleet, a layer for these watches can write contacts: [])",
             "-:5:3: error: emergency.contacts: 6 emergency contacts, but the watch (profile npk) holds at most 1: remove 5 of them"]),
  ]

  /// On npk, where emergency contacts refer to contacts declared under `contacts:`, the advice
  /// to remove the section says to write them out first: removing it alone gives another error
  /// that says to declare them there (fresh-eyes fe96 #8, advice going in a circle).
  @Test func removingContactsOnNpkSaysToWriteOutTheEmergencyContactsThatReferToThem() throws {
    let manifest = "contacts:\n  - {name: Ward desk, phone: \"+15550100\"}\nemergency:\n  sos: true\n  contacts:\n    - {contact: Ward desk}\n"
    let checked = try TSApplyBinary.run(["validate", "-", "--profile", "npk"], stdin: manifest)
    #expect(checked.status == 1)
    #expect(checked.stderr.contains("-:1:1: error: contacts: the watch (profile npk) does not store regular contacts; write the emergency "
      + "contacts that refer to them out with name and phone ({contact: Ward desk} as {name: Ward desk, phone: …} with its number under "
      + "contacts:), then remove the `contacts` section"),
      "\(checked.stderr)")
    let written = "emergency:\n  sos: true\n  contacts:\n    - {name: Ward desk, phone: \"+15550100\"}\n"
    #expect(try TSApplyBinary.run(["validate", "-", "--profile", "npk"], stdin: written).status == 0)
    // Every name referred to is named, each as YAML writes it (fresh-eyes fe97 #9: only the
    // first, and a name with ": " could not be pasted).
    let two = "contacts:\n  - {name: \"Ward: desk\", phone: \"+15550100\"}\n  - {name: Ann, phone: \"+15550101\"}\n"
      + "emergency:\n  sos: true\n  contacts:\n    - {contact: \"Ward: desk\"}\n    - {contact: Ann}\n"
    let both = try TSApplyBinary.run(["validate", "-", "--profile", "npk"], stdin: two)
    #expect(both.stderr.contains("({contact: 'Ward: desk'} as {name: 'Ward: desk', phone: …} with its number under contacts:; "
      + "the same for Ann), then remove"), "\(both.stderr)")
  }

  @Test(arguments: profileCases.indices)
  func aProfileChecksCapacitiesWithoutAWatch(_ index: Int) throws {
    let row = Self.profileCases[index]
    var manifest = "contacts:\n  - {name: A, phone: \"+15550100\"}\nemergency:\n  sos: true\n  contacts:\n"
    for (n, name) in ["A", "B", "C", "D", "E", "F"].enumerated() { manifest += "    - {name: \(name), phone: \"+1555010\(n)\"}\n" }
    let plain = try TSApplyBinary.run(["validate", "-"], stdin: manifest)
    #expect(plain.status == 0, "\(plain.stderr)")
    let checked = try TSApplyBinary.run(["validate", "-", "--profile", row.profile], stdin: manifest)
    #expect(checked.status == 1)
    let errors = checked.stderr.split(separator: "\n").map(String.init).filter { $0.contains(": error: ") }
    #expect(errors == row.errors, "\(checked.stderr)")
    #expect(checked.stderr.hasSuffix("- is not valid for profile \(row.profile): \(row.errors.count) error\(row.errors.count == 1 ? "" : "s").\n"))
    let fits = try TSApplyBinary.run(["validate", "-", "--profile", "default"], stdin: "emergency:\n  sos: true\n  contacts:\n    - {name: A, phone: \"+15550100\"}\n")
    #expect(fits.stdout == "- is valid for profile default.\n", "\(fits.stderr)")
    let unknown = try TSApplyBinary.run(["validate", "-", "--profile", "nkp"], stdin: manifest)
    #expect(unknown.status == 64)
    #expect(unknown.stderr.hasPrefix("Error: unknown profile 'nkp'; expected one of: default, npk, fit, fit-basic, fw; did you mean 'npk'?"))
  }
}
