import Foundation
import Testing
@testable import TSDevice
import TSEngine
import TSModel

/// What an apply says was changed on the watch while it wrote (`changedOnWatchDuringApply`,
/// from the announcements of its caller's listener): a list the watch already held when the
/// plan was read is drift the plan saw, never such a change — a listener registered as the
/// apply begins (an agent or a monitor started again) replays the change it missed (fresh-eyes
/// finding: "while it wrote, the watch's contacts were changed on the watch itself … 'tsapply
/// restore …' brings it back", of the very contact the heal removed on purpose).
@Suite struct AnnouncedDuringApplyTests {
  /// (announced list: the one the plan was read from, or another; whether the apply reports it)
  @Test(arguments: [("the list the plan was read from", false), ("another list", true)])
  func anAnnouncementDuringTheApply(_ announced: String, _ reported: Bool) async throws {
    let workspace = try Workspace()
    let manifest = try workspace.document("version: 1\ncontacts:\n  - {name: Ann, phone: \"+15550100\"}\n")
    _ = try await workspace.open().apply(manifest, options: ApplyOptions(approval: .automatic(allowDestroy: true), command: "test"))
    // The wearer adds a contact; the next apply (a heal) takes it off again.
    try SimulatedDevice(path: workspace.directory + "/watch.json").simulateContactAdd(Contact(name: "Zed", phoneNum: "+15550199"))
    let drifted = try await workspace.state().contacts
    let list = announced == "another list" ? drifted + [Contact(name: "Yan", phoneNum: "+15550188")] : drifted
    let announcements = WatchAnnouncements()
    let told = Locked<[EngineEvent]>([])
    var options = ApplyOptions(approval: .automatic(allowDestroy: true), command: "test")
    options.listensWhileWriting = false
    options.announcements = announcements
    // Every engine event after the apply began stands for the listener hearing the list then.
    options.events = { event in
      told.mutate { $0.append(event) }
      announcements.heard(.event(DeviceEvent(id: nil, kind: .contactsChanged, contacts: list)))
    }
    _ = try await workspace.open().apply(manifest, options: options)
    let said = told.value.contains { if case .changedOnWatchDuringApply = $0 { true } else { false } }
    #expect(said == reported, "\(announced): \(told.value)")
  }
}
