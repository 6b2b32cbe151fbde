import Foundation
import Testing
import TSDevice
import TSEngine
import TSManifest
import TSModel
import TSTestSupport

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

  /// The default watch of a directory (`.tsapply/device.json`), opened read-only as `drift`
  /// and `monitor --once` do, or as `plan` and `apply` do (which create it on first use): once
  /// applied to, its file gone is out of reach — not "nothing has been planned or applied"
  /// (fresh-eyes finding), and no blank watch is made in its place, which `plan` then showed
  /// as everything changed on the watch.
  @Test(arguments: [(true, false), (false, false), (true, true)])
  func theDefaultWatchAppliedBeforeIsOutOfReachNotNew(applied: Bool, mayCreate: Bool) async throws {
    let directory = try TSApplyBinary.temporaryDirectory().resolvingSymlinksInPath().path
    let engine = Engine(registry: DeviceRegistry(schemes: [SimulatorScheme()], defaultSpec: "sim:.tsapply/device.json"),
                        environment: ["TSAPPLY_STATE_DIR": directory + "/state"], currentDirectory: directory)
    let watch = try await engine.open(nil)
    if applied {
      let text = "contacts:\n  - {name: Ann, phone: \"+15550100\"}\n"
      let document = ManifestDocument(manifest: try #require(ManifestLoader.load(bytes: Array(text.utf8), file: "watch.yaml").manifest),
                                      bytes: Array(text.utf8), path: directory + "/watch.yaml")
      _ = try await watch.apply(document, options: ApplyOptions(approval: .automatic(allowDestroy: false), command: "test"))
    }
    await watch.close()
    let path = directory + "/.tsapply/device.json"
    #expect(rename(path, path + ".away") == 0)
    do throws(EngineError) {
      _ = try await engine.open(nil, mayCreate: mayCreate)
      Issue.record("opened a watch whose file is gone")
    } catch {
      guard case .device(let failure) = error else { Issue.record("\(error)"); return }
      #expect(failure.message.contains("nothing has been planned or applied") == !applied, "\(failure.message)")
      #expect(failure.message.contains("tsapply has applied to this watch before, so it is out of reach, not new") == applied, "\(failure.message)")
    }
    #expect(!FileManager.default.fileExists(atPath: path))
  }
}
