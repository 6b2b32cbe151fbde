import Foundation
import Testing
import TSDevice
import TSModel

/// One simulated watch however its state file is spelt: one identity, one lock file, writes
/// through a symbolic link to the real file (the link stays a link), and the scheme's canonical
/// spec equal to the identity the opened device has.
@Suite struct IdentityTests {
  /// A directory (symbolic links resolved) with the watch `real/w.json` and links to it.
  static func space() throws -> String {
    let directory = SimulatedDevice.canonical(try temporaryDirectory())
    try FileManager.default.createDirectory(atPath: directory + "/real", withIntermediateDirectories: true)
    try SimulatedDevice.create(path: directory + "/real/w.json", profile: .default, force: false)
    try FileManager.default.createSymbolicLink(atPath: directory + "/l.json", withDestinationPath: "real/w.json")
    try FileManager.default.createSymbolicLink(atPath: directory + "/dir", withDestinationPath: "real")
    try FileManager.default.createSymbolicLink(atPath: directory + "/chain.json", withDestinationPath: directory + "/l.json")
    return directory
  }

  static let spellings = ["real/w.json", "./real/w.json", "real/../real/w.json", "l.json", "dir/w.json", "chain.json"]

  @Test(arguments: spellings)
  func everySpellingIsOneWatch(_ written: String) async throws {
    let directory = try Self.space()
    let device = try SimulatedDevice(path: directory + "/" + written)
    #expect(device.identity == "sim:" + directory + "/real/w.json")
    #expect(device.path == directory + "/real/w.json")
    #expect(device.storageFiles == [directory + "/real/w.json", directory + "/real/w.json.lock", directory + "/real/w.json.apply-lock"])
    let context = DeviceOpenContext(environment: [:], currentDirectory: directory)
    #expect(SimulatorScheme().canonicalSpec(written, context: context) == device.identity)
    #expect(DeviceRegistry.simulated.canonicalSpec("sim:" + written, context: context) == device.identity)
  }

  @Test func aWriteThroughALinkKeepsTheLinkAndChangesTheRealFile() async throws {
    let directory = try Self.space()
    let device = try SimulatedDevice(path: directory + "/l.json")
    try await device.setAllContacts([Contact(name: "A", phoneNum: "12345")])
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: directory + "/l.json") == "real/w.json")
    #expect(try SimulatedDevice(path: directory + "/real/w.json").snapshot().contacts.map(\.name) == ["A"])
    #expect(!FileManager.default.fileExists(atPath: directory + "/l.json.lock"))
  }

  @Test func initThroughADanglingLinkCreatesItsTarget() throws {
    let directory = try Self.space()
    try FileManager.default.createSymbolicLink(atPath: directory + "/new.json", withDestinationPath: "real/new.json")
    let device = try SimulatedDevice.create(path: directory + "/new.json", profile: .fit, force: false)
    #expect(device.identity == "sim:" + directory + "/real/new.json")
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: directory + "/new.json") == "real/new.json")
  }

  @Test func aSchemeWithoutACanonicalFormIsComparedAsWritten() {
    let registry = DeviceRegistry(schemes: [SimulatorScheme(), MemoryScheme()], defaultSpec: "memory:x")
    let context = DeviceOpenContext(environment: [:], currentDirectory: "/")
    #expect(registry.canonicalSpec("memory:room-1", context: context) == "memory:room-1")
    #expect(registry.canonicalSpec("nonsense", context: context) == "nonsense")
  }

  /// The 4003 advice promises only what `device init --force` does: reset a file carrying the
  /// format marker, and for any other file, removing it and `device init`.
  static let advice: [(String, Bool)] = [
    ("version: 1\ncontacts: []\n", false),
    ("", false),
    (#"{"format": "other"}"#, false),
    (#"{"format": "tsapply-simulated-watch", "version": 1, "profile": "default", "reminders": ["#, true),
    (#"{"format": "tsapply-simulated-watch", "version": 7}"#, true),
  ]

  @Test(arguments: advice)
  func theAdviceOfACorruptedFileIsWhatInitForceDoes(_ content: String, _ forceReplaces: Bool) throws {
    let path = try temporaryDirectory() + "/w.json"
    try content.write(toFile: path, atomically: false, encoding: .utf8)
    var message = ""
    do { _ = try SimulatedDevice(path: path, spec: "sim:" + path) } catch { message = error.message }
    #expect(message.contains("'tsapply device init --force --device sim:\(path)'") == forceReplaces, "\(message)")
    #expect(message.contains("remove it yourself and create the watch again with 'tsapply device init --device sim:\(path)'") == !forceReplaces, "\(message)")
    let replaced = (try? SimulatedDevice.create(path: path, profile: .default, force: true)) != nil
    #expect(replaced == forceReplaces)
  }

  @Test func aStateDirectoryThatIsAFileIsNamed() throws {
    let file = try temporaryDirectory() + "/file"
    try "x".write(toFile: file, atomically: false, encoding: .utf8)
    #expect(throws: DeviceError(.simulator, .dataSetFailed, "cannot create the directory \(file): it is a file, not a directory")) {
      try SimulatedDevice.create(path: file + "/w.json", profile: .default, force: false)
    }
  }
}
