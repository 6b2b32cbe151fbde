import Foundation
import Testing
import TSTestSupport

/// examples/fleet/mixed.yaml (docs/fleet.md "Layers and labels"): one watch of each platform
/// under shared layers, planned and applied with the built binary.
@Suite struct FleetLayersTests {
  /// A copy of examples/fleet with its four watches made, each of its declared profile.
  static func mixedFleet() throws -> URL {
    let dir = try TSApplyBinary.temporaryDirectory().appendingPathComponent("fleet")
    try FileManager.default.copyItem(at: TSApplyBinary.packageRoot.appendingPathComponent("examples/fleet"), to: dir)
    for (room, profile) in [("20", "default"), ("21", "fit"), ("22", "fw"), ("23", "npk")] {
      let made = try TSApplyBinary.run(["device", "init", "--device", "sim:watches/room-\(room).json", "--profile", profile], in: dir)
      #expect(made.status == 0, "\(made.stderr)")
    }
    return dir
  }

  /// The plan's text with the temporary directory and the timings taken out.
  static func normalized(_ text: String, _ dir: URL) -> String {
    text.replacingOccurrences(of: dir.resolvingSymlinksInPath().path, with: "<DIR>")
      .replacingOccurrences(of: dir.path, with: "<DIR>")
      .replacingOccurrences(of: #"\d+\.\ds\n"#, with: "<TIME>\n", options: .regularExpression)
  }

  @Test func theMixedFleetPlansWithoutErrorsThroughItsLayers() throws {
    let dir = try Self.mixedFleet()
    let plan = try TSApplyBinary.run(["plan", "--fleet", "mixed.yaml"], in: dir)
    #expect(plan.status == 0, "\(plan.stdout)\(plan.stderr)")
    expectGolden(Self.normalized(plan.stdout, dir), "fleet-mixed-plan.txt")
  }

  /// `--explain`: every planned change names the file and line that set it, and after the plan
  /// each value of the watch's merged manifest names its layer and what it overrode or dropped.
  @Test func explainNamesTheLayerOfEachValue() throws {
    let dir = try Self.mixedFleet()
    let plan = try TSApplyBinary.run(["plan", "--fleet", "mixed.yaml", "--watch", "room-20", "--explain", "--no-color"], in: dir)
    #expect(plan.status == 0, "\(plan.stdout)\(plan.stderr)")
    let out = plan.stdout
    #expect(out.contains("      ~ sos = false -> true") && out.contains("# wards/ward-b.yaml:8\n"), "\(out)")
    #expect(out.contains("Where the values of room-20's manifest come from (the first file wins):\n"
      + "  residents/room-20.yaml\n  wards/ward-b.yaml\n  wards/common.yaml\n"), "\(out)")
    let lines = out.components(separatedBy: "\n")
    #expect(lines.contains { $0.hasPrefix("contacts[\"Ward B desk\"].phone = \"+15550200\"") && $0.hasSuffix("# wards/ward-b.yaml:5") },
            "\(out)")
    #expect(lines.contains { $0.hasPrefix("reminders.custom[\"Lunch\"].at = [\"12:00\"]")
      && $0.hasSuffix("# wards/common.yaml:15, not kept: removed by residents/room-20.yaml:5") }, "\(out)")
    let refused = try TSApplyBinary.run(["plan", "--fleet", "mixed.yaml", "--explain"], in: dir)
    #expect(refused.status != 0 && refused.stderr.contains("--explain tells where one watch's values come from"), "\(refused.stderr)")
  }

  /// The ward-desk number changed in one line of one file changes it in every watch's contacts
  /// and emergency contacts (an npk watch has emergency contacts only), shown by the plan and
  /// written by the apply.
  @Test func oneEditOfTheDeskNumberReachesBothListsOfEveryWatch() throws {
    let dir = try Self.mixedFleet()
    let applied = try TSApplyBinary.run(["apply", "--fleet", "mixed.yaml", "--auto-approve"], in: dir)
    #expect(applied.status == 0, "\(applied.stdout)\(applied.stderr)")
    let ward = dir.appendingPathComponent("wards/ward-b.yaml")
    let text = try String(contentsOf: ward, encoding: .utf8)
    let edited = text.replacingOccurrences(of: "{name: Ward B desk, phone: \"+1 555 0200\"}", with: "{name: Ward B desk, phone: \"+1 555 0299\"}")
    #expect(edited != text)
    try edited.write(to: ward, atomically: true, encoding: .utf8)

    let plan = try TSApplyBinary.run(["plan", "--fleet", "mixed.yaml", "--detailed-exitcode"], in: dir)
    #expect(plan.status == 2, "\(plan.stdout)\(plan.stderr)")
    // The review groups watches with identical changes (`=== 3 watches: …` and their names on
    // the next line); each watch is in one section.
    var changes: [String: Int] = [:]
    for section in plan.stdout.components(separatedBy: "=== ").dropFirst() {
      let lines = section.components(separatedBy: "\n")
      let names = lines[0].range(of: #"^\d+ watches: "#, options: .regularExpression) != nil
        ? lines[1].trimmingCharacters(in: .whitespaces).components(separatedBy: ", ")
        : [String(lines[0].prefix(while: { $0 != " " }))]
      let changed = lines.dropFirst().filter { $0.contains("\"+15550200\" -> \"+15550299\"") }.count
      for name in names { changes[name] = changed }
    }
    // contacts and emergency contacts, each once; the npk watch stores emergency contacts only.
    #expect(changes == ["room-20": 2, "room-21": 2, "room-22": 2, "room-23": 1], "\(plan.stdout)")
    // Changing an emergency contact needs review or --allow-destroy (docs/apply.md "The safety gate").
    let again = try TSApplyBinary.run(["apply", "--fleet", "mixed.yaml", "--auto-approve", "--allow-destroy"], in: dir)
    #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
    for room in ["20", "21", "22", "23"] {
      let shown = try TSApplyBinary.run(["device", "show", "--device", "sim:watches/room-\(room).json", "--json"], in: dir).stdout
      #expect(!shown.contains("+15550200"), "room-\(room): \(shown)")
      let count = shown.components(separatedBy: "+15550299").count - 1
      #expect(count == (room == "23" ? 1 : 2), "room-\(room): \(shown)")
    }
    let settled = try TSApplyBinary.run(["plan", "--fleet", "mixed.yaml", "--detailed-exitcode"], in: dir)
    #expect(settled.status == 0, "\(settled.stdout)")
  }

  /// A watch whose platform is not the one the fleet file declares gets nothing planned: its
  /// layers were chosen for another platform.
  @Test func aWatchOfAnotherProfileThanDeclaredIsRefusedAtTheFleetFileLine() throws {
    let dir = try Self.mixedFleet()
    let made = try TSApplyBinary.run(["device", "init", "--device", "sim:watches/room-22.json", "--profile", "default", "--force"], in: dir)
    #expect(made.status == 0, "\(made.stderr)")
    let plan = try TSApplyBinary.run(["plan", "--fleet", "mixed.yaml", "--watch", "room-22"], in: dir)
    #expect(plan.status == 1)
    #expect(plan.stdout.contains("mixed.yaml:27:56: error: watches.room-22.profile: the fleet file declares profile fw, but the watch is default; its layers are chosen by profile, so nothing was planned or written; write profile: default"),
            "\(plan.stdout)\(plan.stderr)")
  }

  /// `validate --fleet` checks each watch's merged manifest against the profile it declares,
  /// opening no watch (there are none here).
  @Test func validateChecksEachWatchAgainstItsDeclaredProfile() throws {
    let dir = try TSApplyBinary.temporaryDirectory().appendingPathComponent("fleet")
    try FileManager.default.copyItem(at: TSApplyBinary.packageRoot.appendingPathComponent("examples/fleet"), to: dir)
    let valid = try TSApplyBinary.run(["validate", "--fleet", "mixed.yaml"], in: dir)
    #expect(valid.status == 0, "\(valid.stdout)\(valid.stderr)")
    #expect(valid.stdout.hasSuffix("room-23 is valid for profile npk.\n\n4 watches: 4 valid, 0 not valid.\n"), "\(valid.stdout)")
    #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("watches").path))
    // Two emergency contacts of its own reach an npk watch, which holds one.
    try "emergency:\n  contacts:\n    - {name: Son, phone: \"+1 555 0221\"}\n".write(to: dir.appendingPathComponent("residents/room-23.yaml"), atomically: true, encoding: .utf8)
    let fleet = dir.appendingPathComponent("mixed.yaml")
    let text = try String(contentsOf: fleet, encoding: .utf8)
    try text.replacingOccurrences(of: "profile: npk, labels: {ward: B}}", with: "profile: npk, labels: {ward: B}, manifest: residents/room-23.yaml}")
      .write(to: fleet, atomically: true, encoding: .utf8)
    let invalid = try TSApplyBinary.run(["validate", "--fleet", "mixed.yaml", "--watch", "room-23"], in: dir)
    #expect(invalid.status == 1)
    #expect(invalid.stdout.contains("wards/ward-b.yaml:8:3: error: emergency.contacts: 2 emergency contacts, but the watch (profile npk) holds at most 1")
            || invalid.stdout.contains("residents/room-23.yaml:2:3: error: emergency.contacts: 2 emergency contacts, but the watch (profile npk) holds at most 1"),
            "\(invalid.stdout)")
    #expect(invalid.stdout.hasSuffix("room-23 is not valid for profile npk: 1 error.\n\n1 watch: 0 valid, 1 not valid.\n"), "\(invalid.stdout)")
    let refused = try TSApplyBinary.run(["validate", "--fleet", "mixed.yaml", "--profile", "fw"], in: dir)
    #expect(refused.status == 64, "\(refused.stderr)")
  }
}
