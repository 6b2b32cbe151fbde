import Foundation
import Testing
import TSEngine
import TSFleet
import TSModel

/// `FleetManifests`, the merged manifests a `monitor --fleet` reads at every check: after every
/// kind of edit, each watch's document is the one a fresh `FleetLoader.load` of that watch gives.
@Suite struct FleetManifestsTests {
  /// Each watch's bytes (own manifest, then defaults) as `manifests` gives them, or its first
  /// error; and the same from a fresh load of the fleet file, selecting that watch.
  func compare(_ manifests: FleetManifests, _ space: FleetSpace, names: [String]) -> (kept: [String], fresh: [String]) {
    func text(_ result: Result<ManifestDocument, FleetInputProblem>) -> String {
      switch result {
      case .success(let document): String(decoding: document.bytes, as: UTF8.self)
      case .failure(let problem) where problem.notInFleet: "not in the fleet file"
      // A fresh load selecting a name the file lacks refuses it as `--watch` does.
      case .failure(let problem) where problem.diagnostics.contains { $0.message.contains("has no watch named") }: "not in the fleet file"
      case .failure(let problem): "error: " + (problem.diagnostics.first { $0.severity == .error }?.message ?? "")
      }
    }
    let kept = names.map { text(manifests.document(for: $0)) }
    let fresh = names.map { name -> String in
      do throws(FleetLoadFailure) {
        guard let member = try space.load([name]).members.first else { return "none" }
        return text(member.document)
      } catch {
        return text(.failure(error.problem))
      }
    }
    return (kept, fresh)
  }

  /// Unseeded (the first check loads the fleet), and seeded with the fleet as the command
  /// loaded it (`loaded:`, what `monitor --fleet` passes so the fleet is not read again).
  @Test(arguments: [false, true])
  func afterEveryEditEachWatchReadsAsAFreshLoadWould(seeded: Bool) throws {
    let space = try FleetSpace()
    try space.write("wards/ward-a.yaml", "contacts:\n  - {name: Ward desk, phone: \"+15550100\"}\n")
    try space.write("residents/room-1.yaml", "emergency:\n  contacts:\n    - {name: Ann, phone: \"+15550111\"}\n")
    try space.write("residents/room-2.yaml", "emergency:\n  contacts:\n    - {name: Bob, phone: \"+15550122\"}\n")
    try space.write("fleet.yaml", "defaults: wards/ward-a.yaml\nwatches:\n  room-1: {device: \"sim:watches/room-1.json\", manifest: residents/room-1.yaml}\n  room-2: {device: \"sim:watches/room-2.json\", manifest: residents/room-2.yaml}\n")
    let manifests = FleetManifests(path: space.directory + "/fleet.yaml", displayName: "fleet.yaml", registry: .simulated,
                                   environment: ProcessInfo.processInfo.environment, loaded: seeded ? try space.load([]) : nil)
    let names = ["room-1", "room-2", "room-3"]
    // (what is edited, the file, its new text, what room-1's document holds then)
    let edits: [(String, String, String, String)] = [
      ("nothing", "", "", "Ann"),
      ("room-1's own manifest", "residents/room-1.yaml", "emergency:\n  contacts:\n    - {name: Ann B, phone: \"+15550111\"}\n", "Ann B"),
      ("the defaults", "wards/ward-a.yaml", "contacts:\n  - {name: Night desk, phone: \"+15550101\"}\n", "Night desk"),
      ("the fleet file: room-2 out, room-3 in", "fleet.yaml",
       "defaults: wards/ward-a.yaml\nwatches:\n  room-1: {device: \"sim:watches/room-1.json\", manifest: residents/room-1.yaml}\n  room-3: {device: \"sim:watches/room-3.json\", manifest: residents/room-2.yaml}\n", "Ann B"),
      ("room-1's own manifest broken", "residents/room-1.yaml", "emergency: [\n", "error"),
      ("room-1's own manifest mended", "residents/room-1.yaml", "emergency:\n  contacts:\n    - {name: Ann C, phone: \"+15550111\"}\n", "Ann C"),
      ("the fleet file broken", "fleet.yaml", "watches: {room-1: \n", "error"),
      ("the fleet file mended", "fleet.yaml", "watches:\n  room-1: {device: \"sim:watches/room-1.json\", manifest: residents/room-1.yaml}\n", "Ann C"),
      ("the defaults removed from a fleet that no longer names them", "wards/ward-a.yaml", "version: 1\n", "Ann C"),
    ]
    for (edit, file, text, expected) in edits {
      if !file.isEmpty { try space.write(file, text) }
      // Twice: the second answer comes from what the first kept.
      for _ in 0..<2 {
        let (kept, fresh) = compare(manifests, space, names: names)
        #expect(kept == fresh, "after \(edit)")
        #expect(kept[0].contains(expected), "after \(edit): \(kept[0])")
      }
    }
    #expect(compare(manifests, space, names: names).kept[1] == "not in the fleet file")
    // Said as what it is, not as a refused --watch (a running monitor --fleet asks for it).
    guard case .failure(let problem) = manifests.document(for: "room-2") else { Issue.record("room-2 is still named"); return }
    #expect(problem.notInFleet && problem.diagnostics.map(\.message) == ["fleet.yaml no longer names the watch \"room-2\""], "\(problem)")
  }
}
