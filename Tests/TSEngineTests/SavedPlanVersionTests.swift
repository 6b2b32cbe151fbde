import Foundation
import Testing
import TSApply
import TSEngine
import TSModel
import TSPlan

/// A plan saved by a tsapply of plan format 1 (no manifest paths or sources on its changes)
/// still applies after an upgrade; a plan of format 2 whose changes lost them was edited.
@Suite struct SavedPlanVersionTests {
  static let manifest = "version: 1\nreminders:\n  drinking: {enabled: true, repeat: workday}\ncontacts:\n  - {name: Sam Roe, phone: \"+15550101\"}\n"

  @Test(arguments: [("1", true), ("2", false)])
  func aPlanWithoutOriginsAppliesOnlyAsFormat1(_ version: String, _ applies: Bool) async throws {
    let space = try Workspace()
    let document = try space.document(Self.manifest)
    let watch = try await space.open()
    let planned = try await watch.plan(document)
    #expect(planned.plan.resourceChanges.allSatisfy { $0.fields.allSatisfy { $0.manifestPath != nil && $0.source != nil } })
    let path = space.directory + "/changes.tfplan"
    var saved = try watch.save(planned, document: document, to: path)
    saved.plan.formatVersion = version
    saved.plan.resourceChanges = saved.plan.resourceChanges.map(\.withoutOrigins)
    let outcome = await Result { () async throws(EngineError) in
      try await watch.apply(saved: SavedPlanFile(saved: saved, path: path), options: Workspace.automatic(false))
    }
    switch outcome {
    case .success: #expect(applies, "a format-2 plan without origins was applied")
    case .failure(let error):
      #expect(!applies, "\(error)")
      #expect("\(error)".contains("does not hold the changes its manifest gives"), "\(error)")
    }
    #expect(try await watch.plan(document).plan.isEmpty == applies)
  }
}
