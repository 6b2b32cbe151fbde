import Foundation
import Testing
import TSApply
import TSDevice
import TSEngine
import TSModel
import TSTestSupport

/// The whole-apply lock, the per-watch state folder and atomically claimed backup names.
@Suite struct LockAndRecordTests {
  static func holder(_ command: String) -> LockHolder {
    WatchLock.currentHolder(command: command, now: Date(timeIntervalSince1970: 1_800_000_000))
  }

  /// A lease holder is said to have ended only when it is a process of this host that no longer
  /// runs: exited and not yet collected (a zombie, as right after `kill -9`), or gone.
  @Test func aHolderHasEndedOnlyWhenItsProcessOnThisHostIsGone() async throws {
    var child: pid_t = 0
    let words: [String] = ["/bin/sh", "-c", "exit 0"]
    let argv = words.map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    #expect(posix_spawn(&child, "/bin/sh", nil, nil, argv, environ) == 0)
    func holder(_ pid: Int32, host: String = ProcessInfo.processInfo.hostName) -> LockHolder {
      LockHolder(pid: pid, host: host, command: "tsapply apply", since: "2026-12-01T09:30:00Z")
    }
    for _ in 0..<200 where !WatchLock.hasEnded(holder(child)) { try await Task.sleep(for: .milliseconds(10)) }
    #expect(WatchLock.hasEnded(holder(child)), "an exited child not yet collected (a zombie) runs no more")
    #expect(!WatchLock.hasEnded(holder(child, host: "another-" + ProcessInfo.processInfo.hostName)),
            "a pid of another host says nothing about this one")
    var status: Int32 = 0
    #expect(waitpid(child, &status, 0) == child)
    #expect(WatchLock.hasEnded(holder(child)), "a collected child is gone")
    let alive: [(Int32, String)] = [(getpid(), "this process runs"), (0, "pid 0 is no process"), (-1, "pid -1 is no process")]
    for (pid, why) in alive {
      #expect(!WatchLock.hasEnded(holder(pid)), "\(why)")
    }
  }

  @Test func aSecondHolderIsRefusedWithTheFirstHoldersRecord() async throws {
    let path = try TSApplyBinary.temporaryDirectory().path + "/lock"
    let first = try await WatchLock.acquire(at: path, holder: Self.holder("tsapply apply a.yaml"), timeout: .zero)
    do {
      _ = try await WatchLock.acquire(at: path, holder: Self.holder("tsapply apply b.yaml"), timeout: .zero)
      Issue.record("a second holder took the lock")
    } catch {
      guard case .held(let holder?, _, _) = error else { Issue.record("\(error)"); return }
      #expect(holder.command == "tsapply apply a.yaml")
      #expect(holder.pid == getpid())
      #expect(holder.since == "2027-01-15T08:00:00Z")
      #expect(error.description.hasPrefix("the watch is locked: another tsapply holds it: pid \(getpid()) on host "))
    }
    first.release()
    let again = try await WatchLock.acquire(at: path, holder: Self.holder("tsapply apply b.yaml"), timeout: .zero)
    again.release()
  }

  @Test func aWaiterGetsTheLockWhenItIsReleasedWithinTheTimeout() async throws {
    let path = try TSApplyBinary.temporaryDirectory().path + "/lock"
    let first = try await WatchLock.acquire(at: path, holder: Self.holder("first"), timeout: .zero)
    // A Dispatch thread, not a task: other suites may block the cooperative pool meanwhile.
    DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) { first.release() }
    let second = try await WatchLock.acquire(at: path, holder: Self.holder("second"), timeout: .seconds(10),
                                             pollInterval: .milliseconds(20))
    second.release()
  }

  @Test func aWaiterGivesUpAfterTheTimeout() async throws {
    let path = try TSApplyBinary.temporaryDirectory().path + "/lock"
    let first = try await WatchLock.acquire(at: path, holder: Self.holder("first"), timeout: .zero)
    defer { first.release() }
    let clock = ContinuousClock()
    let start = clock.now
    await #expect(throws: LockFailure.self) {
      _ = try await WatchLock.acquire(at: path, holder: Self.holder("second"), timeout: .milliseconds(300),
                                      pollInterval: .milliseconds(20))
    }
    #expect(clock.now - start >= .milliseconds(300))
  }

  /// Another apply holds the watch: through this state folder's lock, or (`onDevice`) from
  /// another state folder (`TSAPPLY_STATE_DIR`), through the simulated watch's own apply lock
  /// beside its state file (`Device.applyLockPath`). Either way this apply is refused, names the
  /// holder and writes nothing, and gives back the lock it took (fresh-eyes finding: two applies
  /// from two state folders both said "Apply complete!" and the watch held a mix); once the
  /// holder is done it applies.
  @Test(arguments: [false, true])
  func applyRefusesWhileAnotherApplyHoldsTheWatch(onDevice: Bool) async throws {
    let space = try Workspace()
    let watch = try await space.open()
    try watch.home.prepare(profile: watch.capabilities.profile)
    let path = onDevice ? try #require(watch.device.applyLockPath) : watch.home.lockPath
    if onDevice { #expect(path == space.directory + "/watch.json.apply-lock") }
    let held = try await WatchLock.acquire(at: path, holder: Self.holder("tsapply apply other.yaml"), timeout: .zero)
    let before = try await space.state()
    let document = try space.document("contacts:\n  - {name: Zed, phone: \"+15550199\"}\n")
    do {
      _ = try await watch.apply(document, options: Workspace.automatic())
      Issue.record("applied while locked")
    } catch {
      guard case .locked(.held(let holder?, _, _)) = error else { Issue.record("\(error)"); return }
      #expect(holder.command == "tsapply apply other.yaml")
    }
    #expect(try await space.state() == before)
    if onDevice { #expect(!WatchLock.isHeld(at: watch.home.lockPath), "the state folder's lock is given back") }
    held.release()
    _ = try await watch.apply(document, options: Workspace.automatic())
    #expect(try await space.state().contacts.map(\.name) == ["Zed"])
  }

  /// The state folder depends only on the watch's identity, not on the working directory.
  @Test func theStateFolderFollowsTheIdentityFromAnyDirectory() async throws {
    let space = try Workspace()
    let elsewhere = try TSApplyBinary.temporaryDirectory().path
    let other = Engine(registry: space.engine.registry, environment: space.engine.environment, currentDirectory: elsewhere)
    #expect(try await other.open(space.spec).home == space.open().home)
    // A relative TSAPPLY_STATE_DIR is resolved against the working directory.
    let relative = Engine(registry: space.engine.registry, environment: ["TSAPPLY_STATE_DIR": "state"],
                          currentDirectory: space.directory)
    #expect(try await relative.open(space.spec).home == space.open().home)
  }

  @Test(arguments: [
    (["TSAPPLY_STATE_DIR": "/s", "XDG_STATE_HOME": "/x", "HOME": "/h"], "/s"),
    (["XDG_STATE_HOME": "/x", "HOME": "/h"], "/x/tsapply"),
    (["HOME": "/h"], "/h/.local/state/tsapply"),
    (["TSAPPLY_STATE_DIR": "", "XDG_STATE_HOME": "", "HOME": "/h"], "/h/.local/state/tsapply"),
  ])
  func theStateRootFollowsTheXDGConvention(_ environment: [String: String], _ root: String) {
    #expect(WatchHome.root(environment: environment, currentDirectory: "/cwd") == root)
  }

  /// Backups taken in the same millisecond by concurrent applies never share a file.
  @Test func concurrentBackupsInOneMillisecondGetDistinctFiles() async throws {
    let directory = try TSApplyBinary.temporaryDirectory().path + "/backups"
    let date = Date(timeIntervalSince1970: 1_800_000_000.123)
    let paths = await withTaskGroup(of: String?.self) { group in
      for index in 0..<24 {
        group.addTask {
          let backup = Backup(createdAt: date, profile: "default", device: "sim:/w\(index)",
                              state: DeviceState(contacts: [Contact(name: "N\(index)", phoneNum: "+1555010\(index)")]))
          return try? backup.write(into: directory, at: date)
        }
      }
      return await group.reduce(into: [String]()) { if let path = $1 { $0.append(path) } }
    }
    #expect(paths.count == 24)
    #expect(Set(paths).count == 24)
    let devices = try paths.map { try Backup.read(path: $0).device ?? "" }
    #expect(Set(devices).count == 24, "a backup was overwritten")
  }
}
