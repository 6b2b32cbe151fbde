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

  /// A contact the wearer adds while the apply writes, which the watch announces and the
  /// read-back also shows: said once, by the announcement (who, and that the watch still holds
  /// it), not a second time as a change the read-back found (fresh-eyes finding: two warnings
  /// saying nearly the same). A reminder switched in the same window, which no listener
  /// announces, is still said by the read-back.
  @Test func aContactAnnouncedAndReadBackIsSaidOnce() async throws {
    let workspace = try Workspace()
    let first = try workspace.document("version: 1\nreminders:\n  sedentary: {enabled: true}\ncontacts:\n  - {name: Ann, phone: \"+15550100\"}\n")
    _ = try await workspace.open().apply(first, options: ApplyOptions(approval: .automatic(allowDestroy: true), command: "test"))
    let drinkingID = try #require(try await workspace.state().reminders.first { $0.kind == .drinking }).reminderId
    let second = try workspace.document("version: 1\nreminders:\n  sedentary: {enabled: false}\ncontacts:\n"
                                          + "  - {name: Ann, phone: \"+15550100\"}\n  - {name: Bob, phone: \"+15550101\"}\n")
    let announcements = WatchAnnouncements()
    let told = Locked<[EngineEvent]>([])
    let changed = Locked(false)
    let path = workspace.directory + "/watch.json"
    var options = ApplyOptions(approval: .automatic(allowDestroy: true), command: "test")
    options.listensWhileWriting = false
    options.announcements = announcements
    options.events = { event in
      told.mutate { $0.append(event) }
      // After the last write, before the read-back: the wearer adds a contact (announced) and
      // switches a reminder (announced by nothing).
      if case .reconcile(.apply(.stepFinished(let step, _))) = event, !step.writesReminders, !changed.value {
        changed.set(true)
        let watch = try? SimulatedDevice(path: path)
        try? watch?.simulateContactAdd(Contact(name: "Cy", phoneNum: "+15550102"))
        _ = try? watch?.simulateReminderToggle(id: drinkingID)
        if let contacts = try? watch?.snapshot().contacts {
          announcements.heard(.event(DeviceEvent(id: nil, kind: .contactsChanged, contacts: contacts)))
        }
      }
    }
    _ = try? await workspace.open().apply(second, options: options)
    #expect(changed.value)
    let readBack = told.value.compactMap { if case .reconcile(.changedWhileWriting(let drift)) = $0 { drift.map(\.address.rawValue) } else { nil } }
    #expect(readBack == [["reminder.drinking"]], "\(told.value)")
    let announced = told.value.compactMap { if case .changedOnWatchDuringApply(let lists, _, let kept) = $0 { (lists.keys.map(\.rawValue), kept) } else { nil } }
    #expect(announced.count == 1 && announced.first?.0 == [DeviceEvent.Kind.contactsChanged.rawValue]
              && announced.first?.1[.contactsChanged] == true, "\(told.value)")
  }
}
