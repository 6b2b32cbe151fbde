import Foundation
import Testing
import TSTestSupport

/// examples/fleet as docs/fleet.md walks through it, applied with the built binary.
@Suite struct FleetExampleTests {
  @Test func room12GetsTheMergedCustomRemindersInTheirOrder() throws {
    let dir = try TSApplyBinary.temporaryDirectory().appendingPathComponent("fleet")
    try FileManager.default.copyItem(at: TSApplyBinary.packageRoot.appendingPathComponent("examples/fleet"), to: dir)
    #expect(try TSApplyBinary.run(["device", "init", "--device", "sim:watches/room-12.json"], in: dir).status == 0)
    let applied = try TSApplyBinary.run(["apply", "--fleet", "fleet.yaml", "--watch", "room-12", "--auto-approve"], in: dir)
    #expect(applied.status == 0, "\(applied.stdout)\(applied.stderr)")
    // "the custom reminders Medicine round (hers) and Lunch (the ward's), in that order":
    // the watch numbers new reminders in the order they are made.
    let shown = try TSApplyBinary.run(["device", "show", "--device", "sim:watches/room-12.json"], in: dir).stdout
    let medicine = try #require(shown.range(of: "Medicine round"), "\(shown)")
    let lunch = try #require(shown.range(of: "Lunch"), "\(shown)")
    #expect(medicine.lowerBound < lunch.lowerBound, "\(shown)")
  }
}
