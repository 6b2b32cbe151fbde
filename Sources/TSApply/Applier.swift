import Foundation
import TSDevice
import TSModel
import TSPlan

/// What the applier reports while it works, for progress lines.
public enum ApplyProgress: Sendable {
  /// A step is about to run.
  case stepStarted(ApplyStep)
  /// One device call finished, `seconds` after the apply started.
  case deviceCall(name: String, seconds: Double)
  /// A step finished, `seconds` after the apply started.
  case stepFinished(ApplyStep, seconds: Double)
}

/// A failure part-way through an apply: which changes reached the watch and which did not.
public struct PartialApplyFailure: Error, Sendable, CustomStringConvertible {
  /// Resources fully changed before the failure.
  public var applied: [ResourceAddress]
  /// Resources of the step that failed (not changed: steps are atomic on the watch).
  public var failed: [ResourceAddress]
  /// Resources whose steps never ran.
  public var notApplied: [ResourceAddress]
  /// The device's error.
  public var error: DeviceError

  public var description: String {
    "apply stopped: \(error)"
  }
}

/// Runs apply steps against a device, one at a time, stopping at the first failure.
public struct Applier: Sendable {
  /// The watch.
  public var device: any Device

  public init(device: any Device) { self.device = device }

  /// Executes `steps` in order.
  ///
  /// - Parameter progress: Called before and after each step and after each device call.
  /// - Returns: The addresses changed, in order.
  /// - Throws: `PartialApplyFailure` with what was and was not applied.
  public func execute(_ steps: [ApplyStep], progress: @Sendable (ApplyProgress) -> Void = { _ in }) async throws(PartialApplyFailure) -> [ResourceAddress] {
    let start = DispatchTime.now().uptimeNanoseconds
    let elapsed = { Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 }
    var applied: [ResourceAddress] = []
    for (index, step) in steps.enumerated() {
      progress(.stepStarted(step))
      do {
        try await perform(step) { name in progress(.deviceCall(name: name, seconds: elapsed())) }
      } catch {
        throw PartialApplyFailure(applied: applied, failed: step.addresses,
                                  notApplied: steps[(index + 1)...].flatMap(\.addresses), error: error)
      }
      applied += step.addresses
      progress(.stepFinished(step, seconds: elapsed()))
    }
    return applied
  }

  private func perform(_ step: ApplyStep, called: (String) -> Void) async throws(DeviceError) {
    switch step {
    case .replaceAllReminders(let reminders, _):
      try await device.replaceAllReminders(reminders)
      called("replaceAllReminders")
    case .setReminder(let reminder, _):
      try await device.setReminder(reminder)
      called("setReminder")
    case .deleteReminder(let id, _):
      try await device.deleteReminder(id: id)
      called("deleteReminder")
    case .createCustomReminder(let patch, _):
      let template = try await device.createCustomReminderTemplate()
      called("createCustomReminderTemplate")
      try await device.setReminder(patch.applying(to: template))
      called("setReminder")
    case .replaceAllCreating(let base, let patch, _, _):
      let template = try await device.createCustomReminderTemplate()
      called("createCustomReminderTemplate")
      try await device.replaceAllReminders(base + [patch.applying(to: template)])
      called("replaceAllReminders")
    case .setAllContacts(let contacts):
      try await device.setAllContacts(contacts)
      called("setAllContacts")
    case .setEmergencyContacts(let emergency):
      try await device.setEmergencyContacts(emergency.contacts, sosOn: emergency.isSosOn)
      called("setEmergencyContacts")
    }
  }
}
