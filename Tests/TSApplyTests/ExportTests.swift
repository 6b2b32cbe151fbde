import Foundation
import Testing
import TSApply
import TSDevice
import TSManifest
import TSModel
import TSPlan
import TSTestSupport

/// `tsapply export`: golden output per profile, and the round trip — the exported YAML, read
/// back with `ManifestLoader`, plans empty against the watch it came from — on every profile
/// and many generated watch states.
@Suite struct ExportTests {
  static let iterations = 40
  /// A fixed date so the header of the goldens is stable.
  static let date = Date(timeIntervalSince1970: 1_800_000_000)

  /// A varied watch state on `profile`: what applying `count` generated manifests leaves.
  static func state(_ profile: PlatformProfile, random: inout Generator, applying count: Int) async throws -> DeviceState {
    let device = watch(profile)
    let backups = try backupDirectory()
    for _ in 0..<count { _ = try? await planAndApply(random.manifest(), on: device, backups: backups) }
    return try await device.readState(capabilities: profile.capabilities)
  }

  @Test(arguments: PlatformProfile.all.map(\.name))
  func golden(_ name: String) async throws {
    let profile = try PlatformProfile.named(name)
    var random = generator(profile, seed: 2026)
    let state = try await Self.state(profile, random: &random, applying: 2)
    let output = try ManifestExport.export(state, capabilities: profile.capabilities, date: Self.date)
    #expect(output.diagnostics == [])
    expectGolden(output.text, "export-\(name).yaml")
  }

  @Test(arguments: PlatformProfile.all.map(\.name))
  func exportThenPlanIsEmpty(_ name: String) async throws {
    let profile = try PlatformProfile.named(name)
    var random = generator(profile, seed: UInt64(name.utf8.count * 104_729))
    var states = Set<DeviceState>()
    for iteration in 0..<Self.iterations {
      let state = try await Self.state(profile, random: &random, applying: iteration % 3)
      states.insert(state)
      let output = try ManifestExport.export(state, capabilities: profile.capabilities, date: Self.date)
      #expect(output.diagnostics == [], "iteration \(iteration) on \(name)")
      let loaded = ManifestLoader.load(bytes: Array(output.text.utf8), file: "export.yaml")
      let manifest = try #require(loaded.manifest, "iteration \(iteration) on \(name): \(loaded.diagnostics)\n\(output.text)")
      let result = Planner.plan(manifest, state: state, capabilities: profile.capabilities)
      let plan = try #require(result.plan, "iteration \(iteration) on \(name): \(result.diagnostics)")
      #expect(plan.isEmpty, "iteration \(iteration) on \(name): \(plan.resourceChanges.map(\.address))\n\(output.text)")
      #expect(ManifestFormatter.format(bytes: Array(output.text.utf8), file: "export.yaml").isChanged == false,
              "iteration \(iteration) on \(name): the export is not in canonical form")
    }
    #expect(states.count > Self.iterations / 3, "only \(states.count) distinct states on \(name)")
  }

  @Test func duplicateCustomNamesGetDistinctNamesAndAWarning() async throws {
    let profile = PlatformProfile.default
    var state = try await watch(profile).readState(capabilities: profile.capabilities)
    let template = try await watch(profile).createCustomReminderTemplate()
    let long = String(repeating: "x", count: 32)
    for (index, name) in ["Walk", "Walk", "Walk (2)", "Walk", long, long].enumerated() {
      var reminder = template
      reminder.reminderId = String(40 + index)
      reminder.reminderName = name
      state.reminders.append(reminder)
    }
    let output = try ManifestExport.export(state, capabilities: profile.capabilities, date: Self.date)
    let manifest = try #require(ManifestLoader.load(bytes: Array(output.text.utf8), file: "export.yaml").manifest)
    let names = manifest.reminders?.custom?.value.compactMap(\.name?.value) ?? []
    #expect(names == ["Walk", "Walk (3)", "Walk (2)", "Walk (4)", long, String(repeating: "x", count: 28) + " (2)"])
    #expect(output.diagnostics.map(\.severity) == [.warning, .warning, .warning])
    #expect(output.diagnostics.first?.message.contains("ID 41") == true)
  }

  @Test func restoreStillRefusesDuplicateNames() async throws {
    let profile = PlatformProfile.default
    var state = try await watch(profile).readState(capabilities: profile.capabilities)
    let template = try await watch(profile).createCustomReminderTemplate()
    for index in 0..<2 {
      var reminder = template
      reminder.reminderId = String(40 + index)
      reminder.reminderName = "Walk"
      state.reminders.append(reminder)
    }
    let (manifest, problems) = StateManifest.manifest(for: state, capabilities: profile.capabilities, file: "backup")
    #expect(problems.map(\.severity) == [.error])
    #expect(manifest.reminders?.custom?.value.count == 1)
  }

  /// A number the watch holds with formatting (a hand-edited state file; the SDK itself keeps
  /// only digits and '+') cannot be stated exactly: the export says so, naming the contact, not
  /// the number (found by the records fuzz target).
  @Test func aFormattedNumberOnTheWatchIsExportedWithAWarning() async throws {
    let profile = PlatformProfile.fit
    var state = try await watch(profile).readState(capabilities: profile.capabilities)
    state.contacts = [Contact(name: "李明", phoneNum: "+8613912341.55678", shortName: nil)]
    let output = try ManifestExport.export(state, capabilities: profile.capabilities, date: Self.date)
    #expect(output.diagnostics.map(\.message) == [
      "the watch holds the contact \"李明\" with formatting (spaces, dashes, dots or parentheses) in its phone number; a manifest states a number without it, so applying this writes the number as its digits alone"])
    let manifest = try #require(ManifestLoader.load(bytes: Array(output.text.utf8), file: "export.yaml").manifest)
    #expect(manifest.contacts?.value.first?.phone.value == "+861391234155678")
  }

  /// A tester's report: a watch holding a period interval no manifest may state (0, negative,
  /// longer than the period) or a phone the phone rules refuse was exported without an error,
  /// and the first `plan` of the file refused it. The export now reads its own text back with
  /// every manifest rule, and says which field will not load.
  @Test(arguments: [(0, "+15550100", "reminders.sedentary.period.every"), (-60, "+15550100", "reminders.sedentary.period.every"),
                    (100_000, "+15550100", "reminders.sedentary.period.every"), (60, "1:1:1:1:1", "contacts[0].phone")])
  func valuesNoManifestMayStateAreErrors(_ interval: Int, _ phone: String, _ field: String) async throws {
    let profile = PlatformProfile.default
    var state = try await watch(profile).readState(capabilities: profile.capabilities)
    let index = try #require(state.reminders.firstIndex { $0.reminderType == .sedentary })
    state.reminders[index].timeType = .period
    state.reminders[index].interval = interval
    state.contacts = [Contact(name: "Ann", phoneNum: phone, shortName: nil)]
    let output = try ManifestExport.export(state, capabilities: profile.capabilities, date: Self.date)
    let errors = output.diagnostics.filter { $0.severity == .error }
    #expect(errors.map(\.field) == [field], "\(output.diagnostics)")
    #expect(errors.first?.message.hasPrefix("the watch holds a value a manifest cannot state") == true)
    #expect(!(errors.first?.message.contains(phone) ?? true), "the number is masked: \(errors)")
    #expect(ManifestLoader.load(bytes: Array(output.text.utf8), file: "export.yaml").manifest == nil)
  }

  /// The shortening a name's error offers is pasted as written: digits in it are not masked as a
  /// phone number's (fresh-eyes fe99 #4: `"Room *****67 pills 0800 and 2000"`), while the
  /// watch's phone numbers still are.
  @Test func aNamesShorteningKeepsItsDigits() async throws {
    let profile = PlatformProfile.default
    var state = try await watch(profile).readState(capabilities: profile.capabilities)
    var reminder = try #require(profile.capabilities.reminders.customTemplate)
    reminder.reminderName = "Room 1234567 pills 0800 and 2000 daily"
    reminder.reminderId = "40"
    state.reminders.append(reminder)
    state.contacts = [Contact(name: "Room 1234567", phoneNum: "9:8:7:6:5:4", shortName: nil)]
    let output = try ManifestExport.export(state, capabilities: profile.capabilities, date: Self.date)
    let messages = output.diagnostics.filter { $0.severity == .error }.map(\.message)
    #expect(messages.contains { $0.contains("shorten it, e.g. to \"Room 1234567 pills 0800 and 2000\"") }, "\(output.diagnostics)")
    #expect(!messages.contains { $0.contains("9:8:7:6:5:4") }, "the phone is masked: \(messages)")
  }

  @Test func headerNamesProfileAndDate() {
    #expect(ManifestExport.header(profile: "fit", date: Self.date).hasPrefix(
      "# Exported by tsapply from a watch with the 'fit' platform profile on 2027-01-15 (UTC).\n"))
  }
}
