import Testing
import TSManifest
import TSModel
import TSTestSupport
@testable import TSPlan

/// Property-style: for many generated manifests and watch states on each platform, applying a
/// plan (as the applier writes each `after`, then as the platform stores it) and planning again
/// gives an empty plan.
@Suite struct ConvergenceTests {
  static let iterations = 300

  @Test(arguments: Profiles.all.map(\.profile))
  func applyThenPlanIsEmpty(_ profile: String) throws {
    let capabilities = try #require(Profiles.all.first { $0.profile == profile })
    var generator = Generator(random: SplitMix64(state: UInt64(profile.utf8.reduce(7) { $0 &* 31 &+ Int($1) })),
                              capabilities: capabilities)
    var planned = 0, changed = 0
    for iteration in 0..<Self.iterations {
      let state = generator.state()
      let manifest = generator.manifest()
      // Only SOS-on-without-contacts cases fail to plan here (every other value fits the platform).
      guard let plan = Planner.plan(manifest, state: state, capabilities: capabilities).plan else { continue }
      planned += 1
      if !plan.isEmpty { changed += 1 }
      let applied = Storage.apply(plan, to: state, capabilities: capabilities)
      let again = Planner.plan(manifest, state: applied, capabilities: capabilities)
      #expect(again.plan?.isEmpty == true,
              "iteration \(iteration): \(States.summary(again.plan)) \(again.diagnostics.filter { $0.severity == .error })")
      if again.plan?.isEmpty != true { return }
    }
    // Most generated cases must plan and change something, or the property proves little.
    #expect(planned > Self.iterations * 8 / 10, "only \(planned) of \(Self.iterations) planned")
    #expect(changed > Self.iterations / 2, "only \(changed) of \(Self.iterations) changed anything")
  }
}
