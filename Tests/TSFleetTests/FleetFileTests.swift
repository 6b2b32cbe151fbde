import Foundation
import Testing
import TSFleet
import TSModel

/// Reading fleet.yaml: every mistake one fleet file can hold is an error naming the file, line,
/// column and field; nothing is read from a watch.
@Suite struct FleetFileTests {
  struct Case: Sendable, CustomTestStringConvertible {
    var name: String
    var fleet: String
    var errors: [String]
    var testDescription: String { name }
  }

  /// Files the cases may name: two manifests and the defaults.
  static func space() throws -> FleetSpace {
    let space = try FleetSpace()
    try space.write("residents/a.yaml", "contacts: []\n")
    try space.write("residents/b.yaml", "contacts: []\n")
    try space.write("wards/ward-a.yaml", "contacts: []\n")
    return space
  }

  static let cases: [Case] = [
    Case(name: "a watch name used twice", fleet: """
      watches:
        room-12: {device: "sim:a.json", manifest: residents/a.yaml}
        room-12: {device: "sim:b.json", manifest: residents/b.yaml}

      """, errors: ["fleet.yaml:3:3: error: watches.room-12: duplicate key \"room-12\": it is already defined on line 2, column 3"]),
    Case(name: "a device spec used by two watches", fleet: """
      watches:
        room-12:
          device: sim:watches/12.json
          manifest: residents/a.yaml
        room-14:
          device: sim:watches/12.json
          manifest: residents/b.yaml

      """, errors: ["fleet.yaml:6:13: error: watches.room-14.device: the device sim:watches/12.json is already used by the watch room-12 (line 3, column 13); each watch needs its own device"]),
    Case(name: "over MQTT, two devices with one watch ID", fleet: """
      transport: mqtt://127.0.0.1:1883
      site: ward-a
      watches:
        room-12: {device: "sim:east/room.json", manifest: residents/a.yaml}
        room-14: {device: "sim:west/room.json", manifest: residents/b.yaml}

      """, errors: ["fleet.yaml:5:21: error: watches.room-14.device: the device ID room is already used by the watch room-12 (line 4, column 21); over MQTT a watch is known by its device ID, so each must be unique"]),
    Case(name: "a manifest that is not there", fleet: """
      watches:
        room-12: {device: "sim:a.json", manifest: residents/missing.yaml}

      """, errors: ["fleet.yaml:2:45: error: watches.room-12.manifest: cannot read residents/missing.yaml: no such file or directory"]),
    Case(name: "defaults that are not there", fleet: """
      defaults: wards/ward-b.yaml
      watches:
        room-12: {device: "sim:a.json"}

      """, errors: ["fleet.yaml:1:11: error: defaults: cannot read wards/ward-b.yaml: no such file or directory"]),
    Case(name: "a misspelt key", fleet: """
      watches:
        room-12: {device: "sim:a.json", manifests: residents/a.yaml}

      """, errors: ["fleet.yaml:2:3: error: watches.room-12: manifest is required when the fleet has no defaults or layers (e.g. manifest: residents/room-12.yaml)",
                    "fleet.yaml:2:35: error: watches.room-12.manifests: unknown key \"manifests\"; did you mean \"manifest\"?"]),
    // A manifest's hint for a misplaced at: (MistakeHints.misplacedTimePoints) is not given in a fleet file.
    Case(name: "at: in a fleet file", fleet: """
      watches:
        room-12: {device: "sim:a.json", manifest: residents/a.yaml}
      at: ["08:00"]

      """, errors: ["fleet.yaml:3:1: error: at: unknown key \"at\" (expected one of: version, defaults, layers, transport, site, watches, rollout)"]),
    Case(name: "a watch without a device", fleet: """
      watches:
        room-12: {manifest: residents/a.yaml}

      """, errors: ["fleet.yaml:2:3: error: watches.room-12: device is required (e.g. device: bridge:ward-a/AA:BB:CC:DD:EE:12 or sim:watches/room-12.json)"]),
    Case(name: "a watch name that cannot be selected or shown", fleet: """
      watches:
        "room 12": {device: "sim:a.json", manifest: residents/a.yaml}

      """, errors: ["fleet.yaml:2:3: error: watches.room 12: the watch name \"room 12\" may hold only letters, digits, '.', '_' and '-', starting with a letter or digit"]),
    Case(name: "a transport without a site, and one that is not a broker address", fleet: """
      transport: http://broker:1883
      watches:
        room-12: {device: "sim:a.json", manifest: residents/a.yaml}

      """, errors: ["fleet.yaml:1:1: error: site: a fleet with a transport needs site: (the site's part of the topics, e.g. site: ward-a)",
                    "fleet.yaml:1:12: error: transport: 'http://broker:1883' is not a broker address; expected mqtt://HOST:PORT or mqtts://HOST:PORT"]),
    Case(name: "a site that cannot be a topic level", fleet: """
      transport: mqtt://127.0.0.1:1883
      site: ward/a
      watches:
        room-12: {device: "sim:a.json", manifest: residents/a.yaml}

      """, errors: ["fleet.yaml:2:7: error: site: \"ward/a\" holds '/', which cannot be part of an MQTT topic here (letters, digits, '.', '_', ':' and '-' only)"]),
    Case(name: "device specs of no known scheme", fleet: """
      watches:
        room-12: {device: "watches/room-12.json", manifest: residents/a.yaml}
        room-14: {device: "sim:", manifest: residents/a.yaml}

      """, errors: ["fleet.yaml:2:21: error: watches.room-12.device: unknown device 'watches/room-12.json': expected sim:PATH, the path of a simulated watch's state file; did you mean 'sim:watches/room-12.json'?",
                    "fleet.yaml:3:21: error: watches.room-14.device: unknown device 'sim:': expected sim:PATH, the path of a simulated watch's state file, with the part after 'sim:' (e.g. sim:.tsapply/device.json)"]),
    Case(name: "another version", fleet: "version: 2\nwatches:\n  room-12: {device: \"sim:a.json\", manifest: residents/a.yaml}\n",
         errors: ["fleet.yaml:1:10: error: version: expected the fleet file format version 1"]),
    Case(name: "defaults and layers both", fleet: """
      defaults: wards/ward-a.yaml
      layers:
        - manifest: wards/ward-a.yaml
      watches:
        room-12: {device: "sim:a.json"}

      """, errors: ["fleet.yaml:2:1: error: layers: a fleet file has defaults: or layers:, not both; defaults: FILE is the same as layers: [{manifest: FILE}], so move it into layers: as the first entry"]),
    Case(name: "a layer without a manifest, and one that is not there", fleet: """
      layers:
        - select: {ward: A}
        - manifest: wards/ward-b.yaml
      watches:
        room-12: {device: "sim:a.json", labels: {ward: A}}

      """, errors: ["fleet.yaml:2:5: error: layers[0]: manifest is required (e.g. manifest: wards/common.yaml)",
                    "fleet.yaml:3:15: error: layers[1].manifest: cannot read wards/ward-b.yaml: no such file or directory"]),
    Case(name: "an unknown profile, on a watch and in a selector", fleet: """
      layers:
        - {manifest: wards/ward-a.yaml, select: {profile: [fit, fww]}}
      watches:
        room-12: {device: "sim:a.json", profile: npx}

      """, errors: ["fleet.yaml:2:59: error: layers[0].select.profile: unknown profile \"fww\"; expected one of default, npk, fit, fit-basic, fw; did you mean \"fw\"?",
                    "fleet.yaml:4:44: error: watches.room-12.profile: unknown profile \"npx\"; expected one of default, npk, fit, fit-basic, fw; did you mean \"npk\"?"]),
    Case(name: "profile written as a label", fleet: """
      layers:
        - manifest: wards/ward-a.yaml
      watches:
        room-12: {device: "sim:a.json", labels: {profile: fw}}

      """, errors: ["fleet.yaml:4:44: error: watches.room-12.labels.profile: profile is the watch's platform, a built-in label; write it beside device (profile: fw), not under labels"]),
    Case(name: "a layer chosen by profile over a watch that declares none", fleet: """
      layers:
        - manifest: wards/ward-a.yaml
        - {manifest: wards/ward-a.yaml, select: {profile: fw}}
      watches:
        room-12: {device: "sim:a.json", profile: fw}
        room-14: {device: "sim:b.json"}

      """, errors: ["fleet.yaml:6:3: error: watches.room-14.profile: the layer wards/ward-a.yaml (line 3) is chosen by profile, and this watch declares none; write its platform beside device (profile: default | npk | fit | fit-basic | fw)"]),
    Case(name: "no watches", fleet: "version: 1\n", errors: ["fleet.yaml:1:1: error: watches: a fleet file needs watches: (each with a device and a manifest)"]),
    Case(name: "an empty file", fleet: "# nothing\n", errors: ["fleet.yaml:1:1: error: the fleet file is empty; it needs at least watches:"]),
  ]

  @Test(arguments: cases)
  func reports(_ row: Case) throws {
    let space = try Self.space()
    try space.write("fleet.yaml", row.fleet)
    do {
      _ = try space.load()
      Issue.record("loaded a fleet with errors")
    } catch {
      #expect(error.problem.diagnostics.filter { $0.severity == .error }.map(\.description) == row.errors)
    }
  }

  @Test func aSelectorOfALabelNoWatchHasIsAWarningWithTheLabelMeant() throws {
    let space = try Self.space()
    try space.write("fleet.yaml", """
      layers:
        - {manifest: wards/ward-a.yaml, select: {wrad: A}}
      watches:
        room-12: {device: "sim:a.json", labels: {ward: A}}

      """)
    let loaded = try space.load()
    #expect(loaded.warnings.map(\.description) == [
      "fleet.yaml:2:44: warning: layers[0].select.wrad: no watch has the label \"wrad\", so this layer (wards/ward-a.yaml) is under no watch; did you mean \"ward\"?"])
  }

  /// Each watch gets the layers its labels (and declared profile) select, in the order listed,
  /// under its own manifest; the section header names them top first.
  @Test func eachWatchGetsTheLayersItsLabelsSelectInOrder() throws {
    let space = try Self.space()
    try space.write("wards/common.yaml", "reminders:\n  drinking: {enabled: true}\n  custom:\n    - {name: Lunch, at: [\"12:00\"]}\n")
    try space.write("wards/b.yaml", "reminders:\n  drinking: {enabled: false}\n")
    try space.write("models/fw.yaml", "reminders:\n  custom: []\n")
    try space.write("fleet.yaml", """
      layers:
        - manifest: wards/common.yaml
        - {manifest: wards/b.yaml, select: {ward: [B, C]}}
        - {manifest: models/fw.yaml, select: {profile: fw}}
      watches:
        a-fit: {device: "sim:a.json", profile: fit, labels: {ward: A}}
        b-fw: {device: "sim:b.json", profile: fw, labels: {ward: B}, manifest: residents/b.yaml}
        c-default: {device: "sim:c.json", profile: default, labels: {ward: C}}

      """)
    let loaded = try space.load()
    let byName = Dictionary(uniqueKeysWithValues: loaded.members.map { ($0.name, $0) })
    #expect(byName["a-fit"]?.manifestFiles == ["wards/common.yaml"])
    #expect(byName["b-fw"]?.manifestFiles == ["residents/b.yaml", "models/fw.yaml", "wards/b.yaml", "wards/common.yaml"])
    #expect(byName["c-default"]?.manifestFiles == ["wards/b.yaml", "wards/common.yaml"])
    func reminders(_ name: String) throws -> ManifestRemindersSummary {
      let manifest = try #require(try byName[name]?.document.get().manifest)
      return ManifestRemindersSummary(drinking: manifest.reminders?.drinking?.isEnabled?.value,
                                      custom: manifest.reminders?.custom?.value.compactMap { $0.name?.value })
    }
    #expect(try reminders("a-fit") == ManifestRemindersSummary(drinking: true, custom: ["Lunch"]))
    #expect(try reminders("b-fw") == ManifestRemindersSummary(drinking: false, custom: []))
    #expect(try reminders("c-default") == ManifestRemindersSummary(drinking: false, custom: ["Lunch"]))
  }

  struct ManifestRemindersSummary: Equatable {
    var drinking: Bool?
    var custom: [String]?
  }

  /// Second spellings of `sim:watches/a.json` (`<DIR>` is the fleet's directory): each is the
  /// same watch, refused at its position before any watch is touched.
  static let sameWatch = ["sim:./watches/a.json", "sim:<DIR>/watches/a.json", "sim:watches/../watches/a.json",
                          "sim:link.json", "sim:folder/a.json"]

  @Test(arguments: sameWatch)
  func oneWatchSpeltTwiceIsRefused(_ spelling: String) throws {
    let space = try Self.space()
    try space.watch("a")
    try FileManager.default.createSymbolicLink(atPath: space.directory + "/link.json", withDestinationPath: "watches/a.json")
    try FileManager.default.createSymbolicLink(atPath: space.directory + "/folder", withDestinationPath: "watches")
    let second = spelling.replacingOccurrences(of: "<DIR>", with: space.directory)
    try space.write("fleet.yaml", "watches:\n  a: {device: \"sim:watches/a.json\", manifest: residents/a.yaml}\n  b: {device: \"\(second)\", manifest: residents/b.yaml}\n")
    do {
      _ = try space.load()
      Issue.record("loaded a fleet with one watch twice")
    } catch {
      #expect(error.problem.diagnostics.filter { $0.severity == .error }.map(\.description) == [
        "fleet.yaml:3:15: error: watches.b.device: the device \(second) is already used by the watch a (line 2, column 15, written there as sim:watches/a.json: both name the watch sim:\(space.directory)/watches/a.json); each watch needs its own device",
      ])
    }
  }

  @Test func twoWatchesAreTwoWatches() throws {
    let space = try Self.space()
    try space.watch("a")
    try space.watch("b")
    try space.write("fleet.yaml", "watches:\n  a: {device: \"sim:watches/a.json\", manifest: residents/a.yaml}\n  b: {device: \"sim:./watches/b.json\", manifest: residents/b.yaml}\n")
    #expect(try space.load().members.map(\.name) == ["a", "b"])
  }

  @Test func pathsAreRelativeToTheFleetFileAndNamedFromTheWorkingDirectory() throws {
    let space = try Self.space()
    try space.write("ward/fleet.yaml", "defaults: defaults.yaml\nwatches:\n  room-12: {device: \"sim:watches/12.json\", manifest: r/12.yaml}\n")
    try space.write("ward/defaults.yaml", "contacts: []\n")
    try space.write("ward/r/12.yaml", "contacts:\n  - {name: A, phone: \"12-AB\"}\n")
    let loaded = try FleetLoader.load(path: space.directory + "/ward/fleet.yaml", displayName: "ward/fleet.yaml")
    let member = try #require(loaded.members.first)
    #expect(member.manifestFiles == ["ward/r/12.yaml", "ward/defaults.yaml"])
    guard case .failure(let problem) = member.document else { Issue.record("a manifest with an error was accepted"); return }
    #expect(problem.diagnostics.map(\.description) == [
      "ward/r/12.yaml:2:22: error: contacts[0].phone: \"12-AB\" contains letters; write the number in digits only (letter numbers and extensions cannot be stored, and tsapply never guesses a number)",
    ])
  }

  @Test func anUnknownWatchSelectedIsAnErrorWithASuggestion() throws {
    let space = try Self.space()
    try space.write("fleet.yaml", "watches:\n  room-12: {device: \"sim:a.json\", manifest: residents/a.yaml}\n")
    #expect(throws: FleetLoadFailure.self) { try space.load(["room-21"]) }
    do { _ = try space.load(["room-21"]) } catch {
      #expect(error.problem.diagnostics.map(\.message) == ["fleet.yaml has no watch named \"room-21\"; did you mean \"room-12\"?"])
    }
  }

  /// Every layer with errors is reported in one run, each error with its position, not only
  /// the first layer's.
  @Test func errorsInEveryLayerAreReportedAtOnce() throws {
    let space = try Self.space()
    let layers = [("a", "contacts:\n  - {name: A, phone: \"12-AB\"}\n", ""), ("b", "contacts: []\n", ""),
                  ("c", "reminders:\n  drinking: {enabled: yes}\n", ", select: {ward: A}")]
    var fleet = "layers:\n"
    for (name, text, select) in layers {
      try space.write("wards/\(name).yaml", text)
      fleet += "  - {manifest: wards/\(name).yaml\(select)}\n"
    }
    try space.write("fleet.yaml", fleet + "watches:\n  room-12: {device: \"sim:a.json\", labels: {ward: A}}\n")
    do {
      _ = try space.load()
      Issue.record("loaded a fleet whose layers have errors")
    } catch {
      #expect(error.problem.diagnostics.map(\.description) == [
        "wards/a.yaml:2:22: error: contacts[0].phone: \"12-AB\" contains letters; write the number in digits only (letter numbers and extensions cannot be stored, and tsapply never guesses a number)",
        "wards/c.yaml:2:23: error: reminders.drinking.enabled: \"yes\" is not a boolean; write true (tsapply reads only true and false)",
      ])
      #expect(error.description == "2 errors in the layers wards/a.yaml (under every watch) and wards/c.yaml (under the watches it selects); no watch was read or written")
    }
  }

  @Test func errorsInTheDefaultsStopTheWholeFleetWithTheirPositions() throws {
    let space = try Self.space()
    try space.write("wards/ward-a.yaml", "reminders:\n  drinking: {enabled: yes}\n")
    try space.write("fleet.yaml", "defaults: wards/ward-a.yaml\nwatches:\n  room-12: {device: \"sim:a.json\"}\n")
    do {
      _ = try space.load()
      Issue.record("loaded a fleet whose defaults have errors")
    } catch {
      #expect(error.problem.diagnostics.map(\.description) == [
        "wards/ward-a.yaml:2:23: error: reminders.drinking.enabled: \"yes\" is not a boolean; write true (tsapply reads only true and false)",
      ])
      #expect(error.description == "1 error in the defaults wards/ward-a.yaml (under every watch); no watch was read or written")
    }
  }
}
