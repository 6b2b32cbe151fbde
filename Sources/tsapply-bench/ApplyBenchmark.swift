import Foundation
import TSApply
import TSDevice
import TSManifest
import TSModel
import TSPlan

/// `tsapply-bench apply`: device calls and link bytes of one apply, per profile and scenario,
/// beside the fewest calls the SDK's rules allow for that change; then the wall time and peak
/// memory of planning a 200-contact manifest in-process.
///
/// The minimum is computed independently of `ApplyOrder`: reads = one per managed kind to plan
/// (reminders, contacts, emergency), plus per written list one read just before writing (so a
/// change made on the watch meanwhile is never overwritten) and one after, to verify; writes = per create a
/// template call plus one write (a replace-all platform folds every other reminder change into
/// it), else one replace-all for all reminder updates and deletes where the platform has it or
/// one call each where it does not, plus one call for contacts and one for emergency contacts.
enum ApplyBenchmark {
  struct Scenario: Sendable {
    var name: String
    var yaml: @Sendable (DeviceCapabilities) -> String
  }

  static let scenarios: [Scenario] = [
    Scenario(name: "toggle 1 built-in") { _ in "reminders:\n  drinking:\n    enabled: true\n" },
    Scenario(name: "2 built-ins edited") { _ in
      """
      reminders:
        sedentary: {enabled: true, period: {start: "09:00", end: "18:00", every: 60}}
        drinking: {enabled: true}

      """
    },
    Scenario(name: "everything") { caps in
      var text = """
        reminders:
          sedentary: {enabled: true, period: {start: "09:00", end: "18:00", every: 60}}
          drinking: {enabled: false}

        """
      if caps.reminders.maxCustomReminders > 0 {
        text += "  custom:\n    - {name: Walk, repeat: workday, at: [\"19:30\"]}\n    - {name: Read, repeat: weekend, at: [\"21:00\"]}\n"
      }
      if caps.contacts.maxContacts > 0 {
        text += "contacts:\n" + (0..<5).map { "  - {name: Person \($0), phone: \"+1555010\($0)\"}\n" }.joined()
      }
      if caps.contacts.supportsEmergencyContacts {
        text += "emergency:\n  sos: true\n  contacts:\n    - {name: Sam Roe, phone: \"+15550101\"}\n"
      }
      return text
    },
  ]

  static func run(_ arguments: [String]) async throws -> Int32 {
    print("profile    scenario             reads  writes (min)  calls  bytes sent/received")
    for profile in PlatformProfile.all {
      for scenario in scenarios {
        try await measure(profile, scenario)
      }
    }
    try await planTiming()
    return 0
  }

  private static func measure(_ profile: PlatformProfile, _ scenario: Scenario) async throws {
    let loaded = ManifestLoader.load(bytes: Array(scenario.yaml(profile.capabilities).utf8), file: "bench.yaml")
    guard let manifest = loaded.manifest else {
      print("\(profile.name) \(scenario.name): manifest invalid: \(loaded.diagnostics)")
      return
    }
    let device = SimulatedDevice(profile: profile)
    let reconciler = try await Reconciler.connect(device)
    let (state, result) = try await reconciler.plan(manifest)
    guard let plan = result.plan else {
      print(pad(profile.name, 10) + " " + pad(scenario.name, 20) + " not applicable: " + (result.diagnostics.first?.message ?? ""))
      return
    }
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tsapply-bench-\(UUID().uuidString)").path
    _ = try await reconciler.apply(plan, manifest: manifest, state: state, backupDirectory: directory, now: Date())
    try? FileManager.default.removeItem(atPath: directory)
    let stats = await device.statistics()
    let readNames: Set<String> = ["fetchAllReminders", "getAllContacts", "getEmergencyContacts"]
    let reads = stats.calls.filter { readNames.contains($0.key) }.values.reduce(0, +)
    let writes = stats.totalCalls - reads
    let minimum = minimumWrites(plan, capabilities: profile.capabilities)
    let line = pad(profile.name, 10) + " " + pad(scenario.name, 20) + " " + pad("\(reads) (\(minimumReads(plan, manifest, profile.capabilities)))", 6)
      + " " + pad("\(writes) (\(minimum))", 13) + " " + pad("\(stats.totalCalls)", 6) + " \(stats.bytesSent)/\(stats.bytesReceived)"
    print(line)
  }

  static func minimumWrites(_ plan: Plan, capabilities: DeviceCapabilities) -> Int {
    let reminders = plan.resourceChanges.filter { $0.address.rawValue.hasPrefix("reminder.") }
    let creates = reminders.filter { $0.action == .create }.count
    let others = reminders.count - creates
    let replaceAll = capabilities.reminders.operations.contains(.replaceAll)
    var calls = 2 * creates
    if creates == 0 || !replaceAll { calls += replaceAll ? min(others, 1) : others }
    calls += plan.resourceChanges.filter { $0.address == .contacts || $0.address == .emergency }.count
    return calls
  }

  static func minimumReads(_ plan: Plan, _ manifest: Manifest, _ caps: DeviceCapabilities) -> Int {
    let planReads = 1 + (caps.contacts.maxContacts > 0 ? 1 : 0) + (caps.contacts.supportsEmergencyContacts ? 1 : 0)
    let touched = Set(plan.resourceChanges.map { $0.address.rawValue.hasPrefix("reminder.") ? "reminders" : $0.address.rawValue })
    // One read before the first write of each list (the guard against overwriting a change made
    // on the watch meanwhile) and one after, to verify.
    return planReads + 2 * touched.count
  }

  /// Planning and rendering a 200-contact, 10-custom-reminder manifest against a watch roomy
  /// enough to hold it (the default profile with its contact limit raised), in-process.
  private static func planTiming() async throws {
    let bytes = Array(ValidateBenchmark.manifest(contacts: 200, customReminders: 10).utf8)
    var caps = PlatformProfile.default.capabilities
    caps.contacts.maxContacts = 250
    let state = PlatformProfile.default.factoryState
    var plan: Plan?
    let times = BenchmarkClock.measure(iterations: 50) {
      guard let manifest = ManifestLoader.load(bytes: bytes, file: "bench.yaml").manifest else { return }
      plan = Planner.plan(manifest, state: state, capabilities: caps).plan
      if let plan { _ = HumanPlanRenderer(color: false, redact: false).render(plan) }
    }
    print("\nload + plan + render, 200 contacts (\(plan?.resourceChanges.count ?? 0) changes): \(BenchmarkClock.summary(times))")
    print("peak RSS: \(BenchmarkClock.peakResidentKiB()) KiB")
  }

  private static func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
  }
}
