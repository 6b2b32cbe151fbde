import Foundation
import Testing
import TSDevice
import TSModel

/// The file-backed watch: atomic writes, 0600 files, locking, refusal of corrupted files, and
/// device selection (docs/device.md "State file").
@Suite struct PersistenceTests {
  func mode(_ path: String) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return try #require(attributes[.posixPermissions] as? Int)
  }

  @Test func writesAreAtomicPrivateAndLeaveNoTemporaryFile() async throws {
    let directory = try temporaryDirectory()
    let path = directory + "/watch.json"
    let device = try SimulatedDevice.create(path: path, profile: .npk, force: false)
    try await device.setReminder(customReminder("32"))
    try await device.setEmergencyContacts([Contact(name: "Sam", phoneNum: "+15550101")], sosOn: true)
    #expect(try mode(path) == 0o600)
    #expect(try mode(path + ".lock") == 0o600)
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == ["watch.json", "watch.json.lock"])
    let reopened = try SimulatedDevice(path: path)
    #expect(try await reopened.fetchAllReminders().map(\.reminderId) == ["0", "1", "2", "32"])
    #expect(try reopened.snapshot().profile == "npk")
    #expect(try await reopened.getEmergencyContacts().isSosOn)
  }

  /// A device keeps the state it last read, but a change through another device (or process),
  /// or an edit of the file in place, is always seen.
  @Test func aChangeByAnotherWriterIsSeenThroughTheKeptState() async throws {
    let path = try temporaryDirectory() + "/watch.json"
    let reader = try SimulatedDevice.create(path: path, profile: .default, force: false)
    #expect(try await reader.getAllContacts().isEmpty)
    let writer = try SimulatedDevice(path: path)
    try await writer.setAllContacts([Contact(name: "Zed", phoneNum: "+15550199")])
    #expect(try await reader.getAllContacts().map(\.name) == ["Zed"])
    let text = try String(contentsOfFile: path, encoding: .utf8).replacingOccurrences(of: "Zed", with: "Zoe")
    let handle = try #require(FileHandle(forWritingAtPath: path))
    try handle.write(contentsOf: Data(text.utf8))
    try handle.close()
    #expect(try await reader.getAllContacts().map(\.name) == ["Zoe"])
  }

  /// The read calls of a plan on a state already read take no lock (docs/device.md "State
  /// file"): they answer while another process holds the lock for a write.
  @Test func readsOfTheKeptStateTakeNoLock() async throws {
    let path = try temporaryDirectory() + "/watch.json"
    let device = try SimulatedDevice.create(path: path, profile: .default, force: false)
    let holder = open(path + ".lock", O_RDWR)
    #expect(holder >= 0)
    defer { close(holder) }
    #expect(flock(holder, LOCK_EX) == 0)
    // The lock is let go by a thread of its own after 2 s, so that a read that waits for it
    // fails the test instead of hanging it.
    let released = Locked(false)
    let releaser = Thread {
      Thread.sleep(forTimeInterval: 2)
      released.mutate { $0 = true }
      flock(holder, LOCK_UN)
    }
    releaser.start()
    #expect(try await device.fetchAllReminders().count == 3)
    #expect(try await device.getAllContacts().isEmpty)
    #expect(try await device.getEmergencyContacts().contacts.isEmpty)
    #expect(!released.value, "a read of the kept state waited for the lock")
    while !released.value { try await Task.sleep(nanoseconds: 50_000_000) }
    try await device.setAllContacts([Contact(name: "Zed", phoneNum: "+15550199")])
    #expect(try await device.getAllContacts().map(\.name) == ["Zed"])
  }

  @Test func createRefusesAnExistingWatchUnlessForced() throws {
    let path = try temporaryDirectory() + "/watch.json"
    try SimulatedDevice.create(path: path, profile: .fit, force: false)
    #expect(throws: DeviceError(.simulator, .invalidParam, "a simulated watch already exists at \(path); use --force to reset it")) {
      try SimulatedDevice.create(path: path, profile: .npk, force: false)
    }
    #expect(try SimulatedDevice(path: path).snapshot().profile == "fit")
    try SimulatedDevice.create(path: path, profile: .npk, force: true)
    #expect(try SimulatedDevice(path: path).snapshot().profile == "npk")
  }

  static let corrupted: [(String, String)] = [
    ("not json at all", "is not a tsapply simulated-watch state file"),
    ("{}", "is not a tsapply simulated-watch state file"),
    (#"{"format": "tsapply-simulated-watch", "version": 2}"#, "has state format version 2; this tsapply reads version 1"),
    (#"{"format": "tsapply-simulated-watch", "version": 1, "profile": "npk"}"#, "is corrupted: "),
  ]

  @Test(arguments: corrupted)
  func aCorruptedFileIsAClearErrorAndIsLeftUntouched(content: String, message: String) async throws {
    let path = try temporaryDirectory() + "/watch.json"
    let device = try SimulatedDevice.create(path: path, profile: .default, force: false)
    try content.write(toFile: path, atomically: false, encoding: .utf8)
    do {
      _ = try SimulatedDevice(path: path)
      Issue.record("opening a corrupted file succeeded")
    } catch {
      #expect(error.domain == .simulator && error.code == .dataFormatError)
      #expect(error.message.contains(message), "\(error.message)")
      #expect(error.message.contains("tsapply device init --force"))
    }
    await #expect(throws: DeviceError.self) { try await device.setAllContacts([]) }
    #expect(try String(contentsOfFile: path, encoding: .utf8) == content)
  }

  @Test func anUnknownProfileInTheFileIsRefused() throws {
    let path = try temporaryDirectory() + "/watch.json"
    try SimulatedDevice.create(path: path, profile: .default, force: false)
    let text = try String(contentsOfFile: path, encoding: .utf8).replacingOccurrences(of: "\"default\"", with: "\"galaxy\"")
    try text.write(toFile: path, atomically: false, encoding: .utf8)
    #expect(throws: DeviceError.self) { try SimulatedDevice(path: path) }
  }

  @Test func aMissingFileIsAClearError() throws {
    let path = try temporaryDirectory() + "/none.json"
    #expect(throws: DeviceError(.simulator, .dataGetFailed, "no simulated watch at \(path); create one with 'tsapply device init'")) {
      try SimulatedDevice(path: path)
    }
  }

  /// A watch whose state file was there when it was opened and is gone now (moved away) is out
  /// of reach — transient, with no advice to create a blank watch where the wearer's was — and
  /// is reached again once the file is back; one missing at open stays final (above).
  @Test func aFileMovedAwayAfterOpeningIsAWatchOutOfReachUntilItIsBack() async throws {
    let path = try temporaryDirectory() + "/watch.json"
    try SimulatedDevice.create(path: path, profile: .default, force: false)
    let device = try SimulatedDevice(path: path)
    try device.simulateContactAdd(Contact(name: "Ann", phoneNum: "+15550101"))
    #expect(rename(path, path + ".away") == 0)
    do {
      _ = try await device.getAllContacts()
      Issue.record("read a watch whose file is gone")
    } catch {
      #expect(error.domain == .simulator && error.code == .unConnected, "\(error)")
      #expect(error.isTransient)
      #expect(error.message.contains("is out of reach") && !error.message.contains("create one"), "\(error.message)")
    }
    #expect(!FileManager.default.fileExists(atPath: path))
    #expect(rename(path + ".away", path) == 0)
    #expect(try await device.getAllContacts().map(\.name) == ["Ann"])
    #expect(throws: DeviceError.self) { try SimulatedDevice(path: path + ".none") }
    #expect(DeviceError(.simulator, .dataGetFailed, "no simulated watch").isTransient == false)
  }

  @Test func concurrentWritersOnOneFileLoseNothing() async throws {
    let path = try temporaryDirectory() + "/watch.json"
    try SimulatedDevice.create(path: path, profile: .default, force: false)
    let devices = [try SimulatedDevice(path: path), try SimulatedDevice(path: path)]
    try await withThrowingTaskGroup(of: Void.self) { group in
      for (index, device) in devices.enumerated() {
        group.addTask {
          for n in 0..<40 { try device.simulateContactAdd(Contact(name: "W\(index)-\(n)", phoneNum: "\(n + 1)")) }
        }
      }
      try await group.waitForAll()
    }
    let watch = try SimulatedDevice(path: path).snapshot()
    #expect(watch.contacts.count == 80)
    #expect(watch.lastSequence == 80)
  }

  static let selection: [(String?, String?, String)] = [
    (nil, nil, "/work/here/.tsapply/device.json"),
    (nil, "sim:other.json", "/work/here/other.json"),
    ("sim:/tmp/x.json", "sim:other.json", "/tmp/x.json"),
    (nil, "", "/work/here/.tsapply/device.json"),
  ]

  @Test(arguments: selection)
  func deviceSpecComesFromTheOptionThenTheEnvironmentThenTheDefault(spec: String?, environment: String?, expected: String) throws {
    let env = environment.map { [DeviceSelector.environmentVariable: $0] } ?? [:]
    #expect(try DeviceSelector.simulatorPath(spec: spec, environment: env, currentDirectory: "/work/here") == expected)
  }

  static let unknownSpecs: [(String, String)] = [
    ("bridge:watch", "unknown device --device 'bridge:watch': expected sim:PATH, the path of a simulated watch's state file"),
    ("sim:", "unknown device --device 'sim:': expected sim:PATH, the path of a simulated watch's state file, with the part after 'sim:' (e.g. sim:.tsapply/device.json)"),
    ("device.json", "unknown device --device 'device.json': expected sim:PATH, the path of a simulated watch's state file; did you mean 'sim:device.json'?"),
    ("watches/alice.json", "unknown device --device 'watches/alice.json': expected sim:PATH, the path of a simulated watch's state file; did you mean 'sim:watches/alice.json'?"),
    ("SIM:w.json", "unknown device --device 'SIM:w.json': expected sim:PATH, the path of a simulated watch's state file; did you mean 'sim:w.json'?"),
  ]

  @Test(arguments: unknownSpecs)
  func anUnknownDeviceSpecIsRefusedWithWhatWasMeant(spec: String, message: String) {
    #expect(throws: DeviceError(.simulator, .sdkConfigError, message)) {
      try DeviceSelector.simulatorPath(spec: spec, environment: [:], currentDirectory: "/")
    }
  }

  @Test func anUnknownSpecFromTheEnvironmentNamesTheVariable() {
    #expect(throws: DeviceError(.simulator, .sdkConfigError,
      "unknown device TSAPPLY_DEVICE='w.json': expected sim:PATH, the path of a simulated watch's state file; did you mean 'sim:w.json'?")) {
      try DeviceSelector.simulatorPath(spec: nil, environment: [DeviceSelector.environmentVariable: "w.json"], currentDirectory: "/")
    }
  }

  @Test func theDefaultWatchIsCreatedOnFirstUseInAPrivateDirectory() async throws {
    let directory = try temporaryDirectory()
    let device = try DeviceSelector.open(spec: nil, environment: [:], currentDirectory: directory)
    #expect(try await device.capabilities().profile == "default")
    #expect(try mode(directory + "/.tsapply") == 0o700)
    #expect(try mode(directory + "/.tsapply/device.json") == 0o600)
  }

  static let namedSpecs: [(String?, String?)] = [("sim:SUB/x.json", nil), (nil, "sim:SUB/x.json"), ("sim:SUB/x.json", "sim:other.json")]

  @Test(arguments: namedSpecs)
  func aNamedWatchThatDoesNotExistIsAnErrorAndNothingIsCreated(spec: String?, environment: String?) throws {
    let directory = try temporaryDirectory()
    let env = environment.map { [DeviceSelector.environmentVariable: $0] } ?? [:]
    let path = directory + "/SUB/x.json"
    let named = spec ?? environment ?? ""
    let expected = DeviceError(.simulator, .dataGetFailed,
      "no simulated watch at \(path); create one with 'tsapply device init --device sim:\(path)'")
    #expect(named.hasPrefix("sim:SUB/"))
    #expect(throws: expected) { try DeviceSelector.open(spec: spec, environment: env, currentDirectory: directory) }
    #expect(!FileManager.default.fileExists(atPath: directory + "/SUB"))
    #expect(!FileManager.default.fileExists(atPath: directory + "/.tsapply"))
  }

  @Test func aNamedWatchThatExistsIsOpened() async throws {
    let directory = try temporaryDirectory()
    try SimulatedDevice.create(path: directory + "/w.json", profile: .fw, force: false)
    let device = try DeviceSelector.open(spec: "sim:w.json", environment: [:], currentDirectory: directory)
    #expect(try await device.capabilities().profile == "fw")
  }
}
