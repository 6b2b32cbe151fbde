import Foundation
import Testing
import TSApply
import TSDevice
import TSManifest
import TSModel
import TSPlan
import TSTestSupport

/// The seeds of the `records` target are the records tsapply writes today, one of each kind per
/// platform profile, made by the code that writes them from generated manifests: a saved plan,
/// a backup, a last-applied record and a simulated watch's state file (with a journal entry).
///
/// The files in `Tests/TSFuzzTests/Corpus/records/` must equal what this test generates, so the
/// seeds follow the formats as they change: after a format change, run the test once with
/// `TSAPPLY_RECORD_GOLDENS=1` to write them again (the test then fails, so that is never silent).
@Suite struct RecordSeedTests {
  static let folder = (packageRoot as NSString).appendingPathComponent("Tests/TSFuzzTests/Corpus/records")
  static let date = Date(timeIntervalSince1970: 1_800_000_000)

  /// The seeds, by file name.
  static func seeds() async throws -> [String: String] {
    var seeds: [String: String] = [:]
    for profile in PlatformProfile.all {
      let capabilities = profile.capabilities
      var random = Generator(random: SplitMix64(state: UInt64(profile.name.utf8.count) * 7_919), capabilities: capabilities)
      let device = SimulatedDevice(profile: profile)
      let identity = "sim:/seeds/\(profile.name)/.tsapply/device.json"
      // Two applies of generated manifests make a varied state; the plan of a third is saved.
      var state = profile.factoryState
      var pending: (Manifest, Plan)?
      for round in 0..<12 where pending == nil {
        let manifest = random.manifest()
        guard var plan = Planner.plan(manifest, state: state, capabilities: capabilities).plan, !plan.isEmpty else { continue }
        if round >= 2 {
          plan.device = identity
          pending = (manifest, plan)
          break
        }
        let steps = ApplyOrder.steps(for: plan, state: state, capabilities: capabilities)
        _ = try await Applier(device: device, allowsOnce: capabilities.reminders.supportsOnce).execute(steps, expected: state)
        state = try await device.readState(capabilities: capabilities)
      }
      let (manifest, plan) = try #require(pending, "no plan for \(profile.name)")
      let yaml = try ManifestEncoder.encode(manifest)
      let saved = SavedPlan(manifestPath: "watch.yaml", manifestDigest: SHA256Digest.hex(of: Array(yaml.utf8)),
                            device: identity, plan: plan)
      seeds["saved-plan-\(profile.name).json"] = canonicalJSON(saved)
      seeds["backup-\(profile.name).json"] = canonicalJSON(Backup(createdAt: date, profile: profile.name, device: identity, state: state))
      seeds["last-applied-\(profile.name).json"] = canonicalJSON(LastApplied(device: identity, profile: profile.name, state: state))
      if capabilities.contacts.sosRequestListener { try device.simulateSOSPress(at: Self.date) }
      var watch = try device.snapshot()
      watch.journalEpoch = "5eed"  // random per watch made; fixed here so the seed is the same each time
      seeds["state-\(profile.name).json"] = String(decoding: try watch.jsonData(), as: UTF8.self)
    }
    return seeds
  }

  @Test func seedsAreTheRecordsTsapplyWritesToday() async throws {
    let seeds = try await Self.seeds()
    #expect(seeds.count == 4 * PlatformProfile.all.count)
    if ProcessInfo.processInfo.environment["TSAPPLY_RECORD_GOLDENS"] != nil {
      try FileManager.default.createDirectory(atPath: Self.folder, withIntermediateDirectories: true)
      for (name, text) in seeds {
        try text.write(toFile: (Self.folder as NSString).appendingPathComponent(name), atomically: true, encoding: .utf8)
      }
      Issue.record("Wrote \(seeds.count) record seeds to \(Self.folder); run again without TSAPPLY_RECORD_GOLDENS")
      return
    }
    let present = Set(((try? FileManager.default.contentsOfDirectory(atPath: Self.folder)) ?? []).filter { $0.hasSuffix(".json") })
    #expect(present == Set(seeds.keys), "record seeds differ in name; write them with TSAPPLY_RECORD_GOLDENS=1")
    for (name, text) in seeds.sorted(by: { $0.key < $1.key }) {
      let stored = try? String(contentsOfFile: (Self.folder as NSString).appendingPathComponent(name), encoding: .utf8)
      #expect(stored == text, "\(name) is not what tsapply writes today; write the seeds with TSAPPLY_RECORD_GOLDENS=1")
    }
  }

  @Test func eachSeedIsAcceptedByItsReader() throws {
    for name in try FileManager.default.contentsOfDirectory(atPath: Self.folder) where name.hasSuffix(".json") {
      let path = (Self.folder as NSString).appendingPathComponent(name)
      let bytes = try #require(FileManager.default.contents(atPath: path).map(Array.init))
      if name.hasPrefix("saved-plan-") { #expect(try SavedPlan.parse(bytes, path: path) != nil, "\(name)") }
      if name.hasPrefix("backup-") { #expect(throws: Never.self, "\(name)") { try Backup.read(path: path) } }
      if name.hasPrefix("last-applied-") {
        let device = try #require(try JSONDecoder().decode(LastApplied.self, from: Data(bytes)).device as String?)
        #expect(LastApplied.read(at: path, device: device) != nil, "\(name)")
      }
      if name.hasPrefix("state-") {
        // Opening a state file takes a lock beside it: open a copy, not the seed.
        let copy = try TSApplyBinary.temporaryDirectory().appendingPathComponent(name).path
        try Data(bytes).write(to: URL(fileURLWithPath: copy))
        #expect(throws: Never.self, "\(name)") { try SimulatedDevice(path: copy) }
      }
    }
  }
}
