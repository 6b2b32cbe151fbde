import Foundation
import Testing
import TSApply
import TSDevice
import TSEngine
import TSModel
import TSTestSupport

/// What no output file may overwrite (the watch's own state file and lock, tsapply's records),
/// one records folder and lock for every spelling of a watch, and a state root that is a file.
@Suite struct OwnFilesTests {
  /// Output paths relative to the workspace, and whether `refuseOutput` refuses them.
  static let outputs: [(String, String?)] = [
    ("current.yaml", nil),
    ("watch.json", "it is the state file of the watch"),
    ("./watch.json", "it is the state file of the watch"),
    ("link.json", "it is the state file of the watch"),
    ("watch.json.lock", "it is the state file of the watch"),
    ("state/watches/x/last-applied.json", "it is inside tsapply's own records"),
    ("state", "it is inside tsapply's own records"),
    ("statelink/new.yaml", "it is inside tsapply's own records"),
    ("stately.yaml", nil),
  ]

  @Test(arguments: outputs)
  func anOutputNeverOverwritesTheWatchOrTheRecords(_ written: String, _ refusal: String?) async throws {
    let space = try Workspace()
    try FileManager.default.createSymbolicLink(atPath: space.directory + "/link.json", withDestinationPath: "watch.json")
    try FileManager.default.createDirectory(atPath: space.directory + "/state", withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(atPath: space.directory + "/statelink", withDestinationPath: "state")
    let watch = try await space.open()
    do {
      try watch.refuseOutput(at: space.directory + "/" + written)
      #expect(refusal == nil, "\(written) was allowed")
    } catch {
      #expect(refusal.map { error.reason.hasPrefix($0) } == true, "\(written): \(error)")
      #expect(error.path == space.directory + "/" + written)
    }
  }

  @Test func aSavedPlanIsNeverWrittenOverTheStateFile() async throws {
    let space = try Workspace()
    let watch = try await space.open()
    let document = try space.document("contacts:\n  - {name: Zed, phone: \"+15550199\"}\n")
    let planned = try await watch.plan(document)
    let before = try String(contentsOfFile: space.directory + "/watch.json", encoding: .utf8)
    #expect(throws: SecureFileError.self) { try watch.save(planned, document: document, to: space.directory + "/watch.json") }
    #expect(try String(contentsOfFile: space.directory + "/watch.json", encoding: .utf8) == before)
  }

  /// A link to the state file is the same watch: one identity, one records folder, one lock.
  @Test func aLinkToTheStateFileSharesTheLock() async throws {
    let space = try Workspace()
    try FileManager.default.createSymbolicLink(atPath: space.directory + "/link.json", withDestinationPath: "watch.json")
    let direct = try await space.open()
    let linked = try await space.engine.open("sim:link.json")
    #expect(linked.identity == direct.identity)
    #expect(linked.home == direct.home)
    try direct.home.prepare(profile: direct.capabilities.profile)
    let held = try await WatchLock.acquire(at: direct.home.lockPath, holder: WatchLock.currentHolder(command: "first"), timeout: .zero)
    defer { held.release() }
    let document = try space.document("contacts:\n  - {name: Zed, phone: \"+15550199\"}\n")
    do {
      _ = try await linked.apply(document, options: Workspace.automatic())
      Issue.record("applied through the link while the watch was locked")
    } catch {
      guard case .locked = error else { Issue.record("\(error)"); return }
    }
  }

  /// State roots that cannot hold records, relative to the workspace, and the reason given.
  static let roots: [(String, String)] = [
    ("file", "it is a file, not a directory"),
    ("file/sub", "its parent <DIR>/file is a file, not a directory"),
  ]

  @Test(arguments: roots)
  func aStateRootThatIsAFileIsNamedBeforeAnythingIsOpened(_ root: String, _ reason: String) async throws {
    let space = try Workspace()
    try "x".write(toFile: space.directory + "/file", atomically: false, encoding: .utf8)
    let engine = Engine(registry: space.engine.registry, environment: ["TSAPPLY_STATE_DIR": root], currentDirectory: space.directory)
    do {
      _ = try await engine.open(space.spec)
      Issue.record("opened with a state root that is a file")
    } catch {
      guard case .records(let problem) = error else { Issue.record("\(error)"); return }
      #expect(problem.path == space.directory + "/" + root)
      #expect(problem.reason.hasPrefix(reason.replacingOccurrences(of: "<DIR>", with: space.directory)))
      #expect(!"\(error)".contains("NSCocoaErrorDomain"))
    }
  }

  @Test func aRecordsFolderUnderAFileSaysSo() throws {
    let directory = try TSApplyBinary.temporaryDirectory().path
    try "x".write(toFile: directory + "/file", atomically: false, encoding: .utf8)
    #expect(throws: SecureFileError(path: directory + "/file/watches/a", reason: "its parent \(directory)/file is a file, not a directory")) {
      try SecureFile.createDirectory(directory + "/file/watches/a")
    }
  }
}
