import Foundation
import Testing
import TSEngine
import TSModel

/// A watch tsapply has applied to whose state file is gone is out of reach, not new: opening
/// it (plan, apply, drift, the monitor) never advises making a blank watch in its place, which
/// a monitor would then heal and report as the wearer's (fresh-eyes finding). A watch never
/// applied to keeps that advice.
@Suite struct OutOfReachTests {
  @Test(arguments: [true, false])
  func aWatchAppliedBeforeIsOutOfReachNotNew(applied: Bool) async throws {
    let space = try Workspace()
    if applied {
      let document = try space.document("contacts:\n  - {name: Ann, phone: \"+15550100\"}\n")
      _ = try await space.open().apply(document, options: ApplyOptions(approval: .automatic(allowDestroy: false), command: "test"))
    }
    let path = space.directory + "/watch.json"
    #expect(rename(path, path + ".away") == 0)
    do throws(EngineError) {
      _ = try await space.engine.open(space.spec)
      Issue.record("opened a watch whose file is gone")
    } catch {
      guard case .device(let failure) = error else { Issue.record("\(error)"); return }
      #expect(failure.message.contains("create one with 'tsapply device init") == !applied, "\(failure.message)")
      #expect(failure.message.contains("tsapply has applied to this watch before, so it is out of reach, not new") == applied, "\(failure.message)")
    }
  }
}
