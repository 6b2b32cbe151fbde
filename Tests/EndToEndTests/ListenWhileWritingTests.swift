import Foundation
import Testing
@testable import TSDevice
import TSModel
import TSTestSupport

/// A contact added on the watch in the instant between the apply's read of the contact list and
/// its write is overwritten (the SDK has no conditional write), but the apply hears the watch
/// announce it: it says so by name and keeps the announced list in a backup that `restore`
/// brings back.
@Suite struct ListenWhileWritingTests {
  @Test func aContactAddedOnTheWatchDuringTheWriteIsReportedAndKept() throws {
    let dir = try TSApplyBinary.temporaryDirectory()
    #expect(try TSApplyBinary.run(["device", "init"], in: dir).status == 0)
    try "version: 1\ncontacts:\n  - {name: Ann Lee, phone: \"+15550100\"}\n"
      .write(to: dir.appendingPathComponent("watch.yaml"), atomically: true, encoding: .utf8)
    // Each call takes 2 s: the contacts step reads the list (the check before writing),
    // then writes it; the wearer adds a contact 400 ms into that read (a wide window, for a
    // loaded machine).
    let run = try TSApplyBinary.startInteractive(["apply", "--auto-approve"], in: dir, environment: ["TSAPPLY_SIM_LATENCY": "2000,0"])
    _ = run.read(until: "contacts: Modifying...")
    Thread.sleep(forTimeInterval: 0.4)
    let watch = try SimulatedDevice(path: dir.path + "/.tsapply/device.json")
    try watch.simulateContactAdd(Contact(name: "Zed Roe", phoneNum: "+15550199", shortName: "Z"))
    let result = run.wait(limit: 60)
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    #expect(try watch.snapshot().contacts.map(\.name) == ["Ann Lee"], "the write did not land after the wearer's change")
    #expect(result.stderr.contains("Warning: while this apply was writing, the watch's contacts were changed on the watch itself"),
            "\(result.stderr)")
    #expect(result.stderr.contains("Zed Roe (+15550199)"), "\(result.stderr)")
    let line = try #require(result.stderr.split(separator: "\n").first { $0.contains("bring it back with 'tsapply restore ") })
    let quoted = try #require(line.split(separator: "'").last { $0.hasPrefix("tsapply restore ") })
    let backup = String(quoted.dropFirst("tsapply restore ".count))
    let restore = try TSApplyBinary.run(["restore", "--auto-approve", "--allow-destroy", backup], in: dir)
    #expect(restore.status == 0, "\(restore.stderr)")
    #expect(try watch.snapshot().contacts.map(\.name).contains("Zed Roe"))
  }
}
