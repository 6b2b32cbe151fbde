import Foundation
import Testing
@testable import TSDevice
import TSEngine
import TSModel

/// A reminder the wearer switches while an apply writes — after the apply wrote its reminders,
/// before its read-back — has no listener to announce it (the SDK has none for reminders). The
/// read-back shows it: the record keeps the reminder as the apply left it, so `drift` reports
/// the change, and the apply says so (fresh-eyes finding: the record took the wearer's switch
/// as tsapply's own write — `drift` and `monitor --once` exited 0, and a manifest that switches
/// it back planned that as an ordinary change, undoing the wearer's with no word).
@Suite struct ChangedWhileWritingTests {
  /// `managed`: the manifest sets the switched reminder (`drinking: {enabled: false}`, as the
  /// watch holds it: not written), so the read-back does not verify; otherwise it leaves it out.
  @Test(arguments: [false, true])
  func aReminderSwitchedOnTheWatchWhileTheApplyWritesIsDrift(managed: Bool) async throws {
    let workspace = try Workspace()
    let drinking = "  drinking: {enabled: false}\n"
    let first = try workspace.document("version: 1\nreminders:\n  sedentary: {enabled: true}\n\(managed ? drinking : "")"
                                         + "contacts:\n  - {name: Ann, phone: \"+15550100\"}\n")
    _ = try await workspace.open().apply(first, options: Workspace.automatic(true))
    let drinkingID = try #require(try await workspace.state().reminders.first { $0.kind == .drinking }).reminderId
    #expect(try await workspace.state().reminders.first { $0.kind == .drinking }?.isEnabled == false)
    // Sedentary switched off, then a contact added: the wearer switches drinking on as the
    // reminders are written, before the contacts are.
    let second = try workspace.document("version: 1\nreminders:\n  sedentary: {enabled: false}\n\(managed ? drinking : "")"
                                          + "contacts:\n  - {name: Ann, phone: \"+15550100\"}\n  - {name: Bob, phone: \"+15550101\"}\n")
    let told = Locked<[EngineEvent]>([])
    let switched = Locked(false)
    var options = Workspace.automatic(true)
    let path = workspace.directory + "/watch.json"
    options.events = { event in
      told.mutate { $0.append(event) }
      if case .reconcile(.apply(.stepFinished(let step, _))) = event, step.writesReminders, !switched.value {
        switched.set(true)
        _ = try? SimulatedDevice(path: path).simulateReminderToggle(id: drinkingID)
      }
    }
    _ = try? await workspace.open().apply(second, options: options)
    #expect(switched.value)
    #expect(try await workspace.state().reminders.first { $0.kind == .drinking }?.isEnabled == true)
    // Drift: the wearer's switch, against what the apply left.
    let report = try await workspace.open().drift(second)
    let changed = report.drift.map { "\($0.address.rawValue) \($0.fields.map(\.field))" }
    #expect(changed == ["reminder.drinking [\"isEnabled\"]"], "\(changed)")
    // Said by the apply, not only found later — also when its verification then fails on it.
    let said = told.value.compactMap { if case .reconcile(.changedWhileWriting(let drift)) = $0 { drift.map(\.address.rawValue) } else { nil } }
    #expect(said == [["reminder.drinking"]], "\(told.value)")
  }

  /// A reminder switched on the watch while the apply fetches a new custom reminder's template:
  /// the read-before-write check comes after that call, just before the write, so the switch is
  /// seen and nothing is written over it (fresh-eyes finding: the template call sat between the
  /// check and the write, and the switch was written over in silence).
  @Test func aReminderSwitchedDuringTheTemplateCallIsNotWrittenOver() async throws {
    let workspace = try Workspace()
    let first = try workspace.document("version: 1\nreminders:\n  sedentary: {enabled: true}\n")
    _ = try await workspace.open().apply(first, options: Workspace.automatic(true))
    let drinking = try #require(try await workspace.state().reminders.first { $0.kind == .drinking })
    let second = try workspace.document("version: 1\nreminders:\n  sedentary: {enabled: false}\n  custom:\n    - {name: Walk, at: [\"15:30\"]}\n")
    let switched = Locked(false)
    var options = Workspace.automatic(true)
    let path = workspace.directory + "/watch.json"
    options.events = { event in
      if case .reconcile(.apply(.deviceCall(name: "createCustomReminderTemplate", _))) = event, !switched.value {
        switched.set(true)
        _ = try? SimulatedDevice(path: path).simulateReminderToggle(id: drinking.reminderId)
      }
    }
    await #expect(throws: EngineError.self) { try await workspace.open().apply(second, options: options) }
    #expect(switched.value)
    #expect(try await workspace.state().reminders.first { $0.kind == .drinking }?.isEnabled == !drinking.isEnabled)
  }

  /// On fit, which writes reminders one at a time: a reminder the wearer switches after the
  /// apply's first reminder write and before the apply reaches it is seen by the check before
  /// that write, and not written over (fresh-eyes fe93 D1: the check came only before the first
  /// reminder write; the switch was written over, exit 0, `drift` 0, 4 of 4 runs).
  @Test func onFitAReminderSwitchedBetweenTwoReminderWritesIsNotWrittenOver() async throws {
    let workspace = try Workspace(profile: .fit)
    let first = try workspace.document("version: 1\nreminders:\n  sedentary: {enabled: true}\n  medicine: {enabled: true, at: [\"08:00\"]}\n")
    _ = try await workspace.open().apply(first, options: Workspace.automatic(true))
    let before = try await workspace.state().reminders
    let second = try workspace.document("version: 1\nreminders:\n  sedentary: {enabled: false}\n  medicine: {enabled: false, at: [\"09:00\"]}\n")
    // After the first reminder write, the wearer switches the other reminder (the one the apply
    // writes next).
    let switched = Locked<Reminder?>(nil)
    var options = Workspace.automatic(true)
    let path = workspace.directory + "/watch.json"
    options.events = { event in
      if case .reconcile(.apply(.stepFinished(let step, _))) = event, step.writesReminders, switched.value == nil {
        let written = step.addresses.map(\.rawValue)
        let next = written.contains("reminder.medicine") ? ReminderKind.sedentary : .medicine
        guard let other = before.first(where: { $0.kind == next }) else { return }
        switched.set(other)
        _ = try? SimulatedDevice(path: path).simulateReminderToggle(id: other.reminderId)
      }
    }
    await #expect(throws: EngineError.self) { try await workspace.open().apply(second, options: options) }
    let other = try #require(switched.value, "a reminder was switched between two reminder writes")
    let held = try #require(try await workspace.state().reminders.first { $0.reminderId == other.reminderId })
    // The wearer's switch is kept and nothing of the manifest written over it.
    #expect(held.isEnabled == !other.isEnabled && held.timePoints == other.timePoints, "\(held)")
  }

  /// An apply that keeps drift out of its record (an agent's, a monitor's heal) of a reminder
  /// whose drift it changes back only in part — another tool moved its time, the wearer
  /// switched it off; the manifest's time is written back, `enabled` stays as the watch has it
  /// (`Plan.leaves`): the wearer's switch stays drift, not recorded as what tsapply left.
  @Test func aDriftUndoneOnlyInPartStaysDriftInTheRecord() async throws {
    let workspace = try Workspace()
    let manifest = try workspace.document("version: 1\nreminders:\n  custom:\n    - {name: Church, repeat: [sun], at: [\"09:00\"]}\n")
    _ = try await workspace.open().apply(manifest, options: Workspace.automatic(true))
    let device = try SimulatedDevice(path: workspace.directory + "/watch.json")
    var church = try #require(try device.snapshot().deviceState.reminders.first { $0.reminderName == "Church" })
    church.timePoints = [600]
    try await device.setReminder(church)
    _ = try device.simulateReminderToggle(id: church.reminderId)
    var options = Workspace.automatic(true)
    options.keepsDriftInRecord = true
    _ = try await workspace.open().apply(manifest, options: options)
    let now = try #require(try await workspace.state().reminders.first { $0.reminderName == "Church" })
    #expect(now.timePoints == [540] && !now.isEnabled, "\(now)")
    let report = try await workspace.open().drift(manifest)
    #expect(report.drift.map { "\($0.address.rawValue) \($0.fields.map(\.field))" } == ["reminder.custom[\"Church\"] [\"isEnabled\"]"],
            "\(report.drift)")
  }
}
