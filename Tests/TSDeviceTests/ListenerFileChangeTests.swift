import Foundation
import Testing
@testable import TSDevice
import TSModel
import TSTestSupport

/// A listener hears a watch-side change another process made (its state file replaced by a
/// rename, as `SecureFile.write` does), whether the process watches the file (`FileChanges`,
/// inotify on Linux) or polls it (the fallback where files cannot be watched).
@Suite struct ListenerFileChangeTests {
  /// A snapshot of the journal read before the last press but delivered after it (the file
  /// watcher's read, then the wearer's own delivery) leaves a listener where it was: it took the
  /// position back to the older numbering, and the next delivery gave the press again — one
  /// press, two SOS deliveries under two ids (found by `everyPressMadeOnAWatchReset…`, 1 in ~20).
  @Test func aStaleSnapshotOfTheJournalDoesNotTakeAListenerBack() {
    let first = WatchEvent(sequence: 1, kind: .sosRequested, time: "2026-12-07T22:42:46.990Z")
    let second = WatchEvent(sequence: 2, kind: .sosRequested, time: "2026-12-07T22:42:46.993Z")
    let (both, heard) = ListenerHub.Position(sequence: 0, time: nil).fresh(in: [first, second])
    #expect(both.map(\.sequence) == [1, 2])
    let (none, after) = heard.fresh(in: [first])
    #expect(none.isEmpty && after.sequence == 2, "\(after)")
    #expect(after.fresh(in: [first, second]).events.isEmpty)
    // A journal numbered anew (a reset watch) is still heard from its own numbering on.
    let reset = WatchEvent(sequence: 1, kind: .sosRequested, time: "2026-12-07T22:43:00.000Z")
    #expect(after.fresh(in: [reset]).events.map(\.sequence) == [1])
  }

  @Test(arguments: ["file changes", "polling"])
  func aChangeWrittenByAnotherProcessReachesTheListener(_ how: String) async throws {
    #if os(Linux)
    #expect(FileChanges.shared != nil, "Linux has inotify")
    #endif
    let directory = try temporaryDirectory()
    let path = SimulatedDevice.canonical(directory + "/watch.json")
    try SimulatedDevice.create(path: path, profile: .default, force: false)
    let hub = ListenerHub(lastDelivered: ListenerHub.Position(sequence: 0, time: nil))
    let heard = Collector<DeviceError?>()
    hub.addSOS { heard.append($0) }
    hub.startWatching(FileStore(file: path), changes: how == "polling" ? nil : FileChanges.shared)
    #if os(Linux)
    #expect(hub.watchesFile == (how == "file changes"))
    #endif
    // Another process: the same watch pressed SOS, written to a file of its own and renamed
    // over the state file, twice.
    for presses in 1...2 {
      try FileManager.default.copyItem(atPath: path, toPath: directory + "/other-\(presses).json")
      try SimulatedDevice(path: directory + "/other-\(presses).json").simulateSOSPress()
      #expect(rename(directory + "/other-\(presses).json", path) == 0)
      #expect(await waitFor { heard.values.count == presses }, "\(how): press \(presses) heard once, and nothing twice")
    }
    #expect(heard.values.count == 2)
  }

  /// Waits (up to 30 s on a loaded machine) until `condition` holds.
  func waitFor(_ condition: () -> Bool) async -> Bool {
    for _ in 0..<3000 {
      if condition() { return true }
      try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
  }
}
